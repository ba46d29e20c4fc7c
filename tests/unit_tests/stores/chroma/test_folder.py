"""Safe handles, tried as a new user would (issue 14).

Two stores on one folder in one process (a re-run notebook cell) share their record
numbering and their Chroma system; a path that cannot name a folder is a one-line
error naming ``path=``; a reader that says a namespace must exist
(``create_namespace=False``) is told what exists instead of creating an empty one; the
command line can wait for a folder another process holds (``--lock-timeout``; the wait
itself is tested across processes in ``tests/integration_tests/test_concurrency.py``).
"""

from __future__ import annotations

import gc
import os
import subprocess
import sys
from pathlib import Path

import chromadb
import numpy as np
import pytest

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    StoreConfigurationError,
    episode_from_tests,
)
from langchain_episodic.errors import NamespaceNotFoundError, StoreResourceError
from langchain_episodic.stores.chroma._path_lock import LOCK_FILE_NAME, _registry
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore
from tests.helpers.cli import assert_one_line_error, filled, run
from tests.helpers.database import database_rows
from tests.helpers.episodes import diverse_corpus
from tests.unit_tests.factories import assert_same_profiles

EPISODES = diverse_corpus(8)


def held(path: Path) -> bool:
    """Whether this process holds the lock on ``path`` (stores of other tests may too)."""
    return os.path.join(os.path.realpath(path), LOCK_FILE_NAME) in _registry


def seqs(store: ChromaEpisodeStore, namespace: str = "default") -> list[int]:
    metadatas = store.collection(namespace).get(include=["metadatas"])["metadatas"] or []
    return sorted(int(metadata["seq"]) for metadata in metadatas)


# ------------------------------------------------------------- two handles, one folder


def test_two_handles_on_one_folder_number_records_once(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    first, second = ChromaEpisodeStore(path=path), ChromaEpisodeStore(path=path)
    through_first, through_second = EpisodicMemory(store=first), EpisodicMemory(store=second)
    for index, episode in enumerate(EPISODES):  # alternately, as two notebook cells would
        (through_first if index % 2 == 0 else through_second).record(episode)
    assert first.verify("default") == []
    assert seqs(first) == list(range(len(EPISODES)))
    first.close()
    second.close()
    del through_first, through_second
    gc.collect()
    with ChromaEpisodeStore(path=path) as reopened:
        assert [e.episode_id for e in reopened.iter_episodes("default")] == [
            e.episode_id for e in EPISODES
        ]
        memory = EpisodicMemory(store=reopened)
        assert len(memory) == len(EPISODES)
        assert [e.episode_id for e in memory.short_term] == [e.episode_id for e in EPISODES[-5:]]
        # Numbering goes on from the count once every earlier handle is closed.
        more = diverse_corpus(10)[len(EPISODES) :]
        memory.record_many(more)
        assert seqs(reopened) == list(range(10))
        assert reopened.verify("default") == []


def test_a_batch_through_one_handle_continues_after_the_other(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    first, second = ChromaEpisodeStore(path=path), ChromaEpisodeStore(path=path)
    EpisodicMemory(store=first).record_many(EPISODES[:3])
    EpisodicMemory(store=first).record_many(EPISODES[3:5])  # a memory opened later: count 3
    stale = EpisodicMemory(store=second, namespace="default")
    EpisodicMemory(store=first).record_many(EPISODES[5:6])
    stale.record_many(EPISODES[6:])  # its own count is 6, the folder's next number 6
    assert seqs(second) == list(range(len(EPISODES)))
    assert second.verify("default") == []
    first.close()
    second.close()


def test_handles_spelling_one_folder_differently_share_one_chroma_system(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    relative = ChromaEpisodeStore(path="memory")
    absolute = ChromaEpisodeStore(path=tmp_path / "memory" / ".." / "memory")
    (tmp_path / "link").symlink_to(tmp_path / "memory", target_is_directory=True)
    linked = ChromaEpisodeStore(path=tmp_path / "link")
    writer, reader = EpisodicMemory(store=relative), EpisodicMemory(store=absolute)
    writer.record_many(EPISODES[:4])
    writer.record_many(EPISODES[4:])
    # Two Chroma systems on one folder would search a stale index here.
    last = EPISODES[-1].task.description
    vector = np.asarray(reader.embeddings.embed_query(last), dtype=np.float32)
    for store in (absolute, linked):
        assert store.search_hits("default", vector, 1)[0].episode_id == EPISODES[-1].episode_id
    EpisodicMemory(store=linked).record_many(diverse_corpus(10)[8:])
    assert seqs(relative) == list(range(10))
    for store in (relative, absolute, linked):
        store.close()


def test_the_shared_numbering_goes_with_the_last_handle(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    first, second = ChromaEpisodeStore(path=path), ChromaEpisodeStore(path=path)
    assert held(path)
    first.close()
    assert held(path)
    second.close()
    assert not held(path)
    with ChromaEpisodeStore(path=path) as third:
        assert third._share is not first._share


def test_handles_on_one_client_share_the_numbering(tmp_path: Path) -> None:
    client = chromadb.PersistentClient(path=str(tmp_path / "memory"))
    first = ChromaEpisodeStore(client=client)
    second = ChromaEpisodeStore(client=client)
    for index, episode in enumerate(EPISODES[:4]):
        EpisodicMemory(store=first if index % 2 == 0 else second).record(episode)
    assert seqs(first) == [0, 1, 2, 3]
    assert first.verify("default") == []


# ------------------------------------------------------------------ path= mistakes


@pytest.mark.parametrize(
    ("path", "error", "message"),
    [
        ("", EpisodicValueError, "path='' is invalid: must name a folder"),
        ("  ", EpisodicValueError, "path='  ' is invalid: must name a folder"),
        (123, EpisodicValueError, "path=123 is invalid: must be a folder, as a str or os.PathLike"),
        (b"memory", EpisodicValueError, "path=b'memory' is invalid"),
    ],
)
def test_a_path_that_names_no_folder_is_one_line_naming_path(
    path: object,
    error: type[Exception],
    message: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    with pytest.raises(error) as raised:
        ChromaEpisodeStore(path=path)  # type: ignore[arg-type]
    assert str(raised.value).startswith(message)
    assert "\n" not in str(raised.value)
    assert list(tmp_path.iterdir()) == []  # nothing created


def test_a_file_as_the_path_is_a_configuration_error(tmp_path: Path) -> None:
    file = tmp_path / "notes.txt"
    file.write_text("not a memory", "utf-8")
    with pytest.raises(
        StoreConfigurationError, match=r"^path='.*notes\.txt' is a file, not a folder"
    ):
        ChromaEpisodeStore(path=file)
    with pytest.raises(
        StoreConfigurationError, match=r"^path='.*notes\.txt/inner' cannot hold a store: Not a dir"
    ):
        ChromaEpisodeStore(path=file / "inner")
    assert file.read_text("utf-8") == "not a memory"
    assert not held(file)


def test_a_folder_that_cannot_be_created_is_a_configuration_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    def refuse(name: str, *args: object, **kwargs: object) -> None:
        raise PermissionError(13, "Permission denied", name)

    # Simulated: the tests may run as root, who may write anywhere.
    monkeypatch.setattr(os, "makedirs", refuse)
    path = tmp_path / "read-only" / "memory"
    with pytest.raises(
        StoreConfigurationError, match=r"^path='.*memory' cannot hold a store: Permission denied$"
    ):
        ChromaEpisodeStore(path=path)


# -------------------------------------------------------- a namespace that must exist


@pytest.fixture
def agent_memory(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store, namespace="agent-a").record_many(EPISODES[:3])
        EpisodicMemory(store=store, namespace="agent-b").record_many(EPISODES[3:4])
    gc.collect()
    return path


def test_a_mistyped_namespace_that_must_exist_lists_what_exists(agent_memory: Path) -> None:
    with ChromaEpisodeStore(path=agent_memory) as store:
        before = sorted(c.name for c in store.client.list_collections())
        with pytest.raises(NamespaceNotFoundError) as raised:
            EpisodicMemory(store=store, namespace="agent_a", create_namespace=False)
        assert str(raised.value) == (
            f"namespace='agent_a' does not exist in {store!r} (create_namespace=False "
            "creates nothing); namespaces there: 'agent-a', 'agent-b'"
        )
        assert isinstance(raised.value, EpisodicValueError)
        assert raised.value.available == ("agent-a", "agent-b")
        assert sorted(c.name for c in store.client.list_collections()) == before
        opened = EpisodicMemory(store=store, namespace="agent-a", create_namespace=False)
        assert len(opened) == 3


def test_a_mistyped_collection_name_lists_the_collections_there(agent_memory: Path) -> None:
    with ChromaEpisodeStore(path=agent_memory, collection_name="episdoes") as store:
        with pytest.raises(NamespaceNotFoundError) as raised:
            EpisodicMemory(store=store, namespace="agent-a", create_namespace=False)
        message = str(raised.value)
        assert "collection_name='episdoes'" in message
        assert message.endswith(
            "namespaces there: none; other collections there: collection_name='episodes' "
            "holds 'agent-a', 'agent-b'"
        )
        assert raised.value.elsewhere == {"episodes": ("agent-a", "agent-b")}
        assert store.namespaces() == ()
        assert store.collection_names() == {"episodes": ("agent-a", "agent-b")}


def test_create_namespace_is_checked_and_works_on_any_store() -> None:
    store = InMemoryEpisodeStore()
    for index in range(25):
        EpisodicMemory(store=store, namespace=f"user-{index:02d}")
    with pytest.raises(NamespaceNotFoundError, match=r"'user-19', \.\.\. \(5 more\)$"):
        EpisodicMemory(store=store, namespace="user-25", create_namespace=False)
    assert "user-25" not in store.namespaces()
    with pytest.raises(EpisodicValueError, match="create_namespace='no' is invalid"):
        EpisodicMemory(store=store, create_namespace="no")  # type: ignore[arg-type]
    memory = EpisodicMemory(store=store, namespace="user-03", create_namespace=False)
    memory.record_many(EPISODES[:2])
    assert_same_profiles(
        EpisodicMemory(store=store, namespace="user-03", create_namespace=False).skill_profiles(),
        memory.skill_profiles(),
    )


# ---------------------------------------------------------------------- the command line


def test_the_cli_names_other_collections_for_a_mistyped_collection(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = filled(tmp_path / "memory", EPISODES[:2])
    gc.collect()
    code, _, err = run(capsys, "--path", str(path), "--collection", "episdoes", "stats")
    assert code == 2
    assert_one_line_error(
        err,
        "namespace 'default' not found at path",
        "namespaces there: none; other collections there: collection 'episodes' holds 'default'",
    )


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "soon"])
def test_lock_timeout_must_be_seconds(
    value: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(capsys, "--path", str(tmp_path), "--lock-timeout", value, "stats")
    assert code == 2
    assert_one_line_error(err, "argument --lock-timeout", "must be a number of seconds >= 0")


def test_lock_timeout_is_a_store_option_before_or_after_the_command(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = filled(tmp_path / "memory", EPISODES[:2])
    gc.collect()
    for argv in (
        ("--lock-timeout", "2.5", "--path", str(path), "stats"),
        ("stats", "--path", str(path), "--lock-timeout", "0"),
    ):
        code, out, _ = run(capsys, *argv)
        assert code == 0
        assert "episodes    2\n" in out
    _, out, _ = run(capsys, "stats", "--help")
    assert "--lock-timeout SECONDS" in out


_OUT_OF_DESCRIPTORS = r"""
import resource, sys
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (128, hard))
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, HashingEmbeddings
from langchain_episodic import episode_from_tests
from langchain_episodic.errors import StoreDamagedError, StoreResourceError
# A cap far above what the limit allows (the default would stay within it).
cap = int(sys.argv[2]) if len(sys.argv) > 2 else None
store = ChromaEpisodeStore(path=sys.argv[1], max_open_namespaces=cap)
memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings())
try:
    for i in range(100):
        memory.for_namespace(f"user-{i}").record(
            episode_from_tests(f"task {i}", "x", 1, 1, episode_id=f"e{i}")
        )
except StoreResourceError as error:
    assert error.resource == "file descriptors", error
    assert "ulimit -n" in str(error) and "damaged" not in str(error).split("Nothing is")[0]
    print("resource", i)
except StoreDamagedError as error:
    print("damaged", error)
else:
    print("recorded", i + 1, store.open_namespaces.reopens)
resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
store.close()
"""


def test_running_out_of_file_descriptors_is_not_called_damage(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    done = subprocess.run(
        [sys.executable, "-c", _OUT_OF_DESCRIPTORS, str(folder), "100000"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.startswith("resource "), done.stdout + done.stderr[-2000:]
    # Nothing was damaged: the folder verifies, and every recorded namespace reads back
    # once reopened (a write cut short leaves an index that was never saved: Chroma
    # starts it afresh from its log).
    from langchain_episodic.cli import main  # noqa: PLC0415

    assert main(["--path", str(folder), "verify"]) == 0
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings())
    users = sorted(set(memory.namespaces()) - {"default"})
    assert len(users) > 10
    for user in users:
        assert memory.for_namespace(user).recall(user.replace("user-", "task "))
    store.close()


def test_at_the_same_limit_the_default_cap_records_every_namespace(tmp_path: Path) -> None:
    # The default cap fits the descriptor limit: the store closes idle namespaces
    # instead of running out (see tests/integration_tests/test_many_namespaces.py).
    done = subprocess.run(
        [sys.executable, "-c", _OUT_OF_DESCRIPTORS, str(tmp_path / "memory")],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    word, recorded, reopens = done.stdout.split()
    # The same store without the cap runs out at about 40 namespaces (the test above).
    assert (word, recorded) == ("recorded", "100")
    assert int(reopens) >= 50


def test_running_out_of_memory_is_a_resource_error_not_damage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated: the allocation failing inside a store call (Chroma's Rust code aborts on
    # out of memory; what reaches Python is a MemoryError).
    store = ChromaEpisodeStore(path=tmp_path / "memory")
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings())
    memory.record(episode_from_tests("Parse the yaml config", "x", 1, 1, episode_id="kept"))

    def no_memory(*args: object, **kwargs: object) -> object:
        raise MemoryError

    monkeypatch.setattr(store.collection("default"), "query", no_memory)
    with pytest.raises(StoreResourceError) as caught:
        memory.recall("Parse the yaml config")
    assert caught.value.resource == "memory"
    assert "Nothing is damaged" in str(caught.value)
    assert "give the process more" in str(caught.value)
    monkeypatch.undo()
    assert [hit.episode.episode_id for hit in memory.recall("Parse the yaml config")] == ["kept"]
    store.close()


_SERVER_SAID = (
    "Query error: Database error: error returned from database: (code: 14) unable to "
    "open database file"
)


def test_a_server_out_of_descriptors_is_named_not_passed_on_raw(
    chroma_server_client: chromadb.api.ClientAPI,
    chroma_server_address: tuple[str, int],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Simulated answer, as a real `chroma run` under `ulimit -n 1024` gave it from its
    # 250th namespace on (docs/reliability.md, Known limits).
    store = ChromaEpisodeStore(client=chroma_server_client, collection_name="fd-check")
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings())
    memory.record(episode_from_tests("Parse the yaml config", "x", 1, 1, episode_id="kept"))

    def out_of_descriptors(*args: object, **kwargs: object) -> object:
        raise chromadb.errors.InternalError(_SERVER_SAID)

    monkeypatch.setattr(store.collection("default"), "query", out_of_descriptors)
    with pytest.raises(StoreResourceError) as caught:
        memory.recall("Parse the yaml config")
    host, port = chroma_server_address
    assert caught.value.holder == "the Chroma server"
    assert f"chroma server {host}:{port}" in str(caught.value)
    assert "Nothing is damaged" in str(caught.value)
    monkeypatch.undo()
    assert memory.recall("Parse the yaml config")


def test_the_same_answer_to_an_in_process_client_names_this_process(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = ChromaEpisodeStore(client=chromadb.EphemeralClient(), collection_name="fd-local")
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings())
    memory.record(episode_from_tests("Parse the yaml config", "x", 1, 1, episode_id="kept"))

    def out_of_descriptors(*args: object, **kwargs: object) -> object:
        raise chromadb.errors.InternalError(_SERVER_SAID)

    monkeypatch.setattr(store.collection("default"), "query", out_of_descriptors)
    with pytest.raises(StoreResourceError, match="this process ran out of file descriptors") as e:
        memory.recall("Parse the yaml config")
    assert "path='in memory'" in str(e.value)


def test_the_log_and_segments_are_indexed_on_open_and_read_the_same(tmp_path: Path) -> None:
    import sqlite3  # noqa: PLC0415

    from langchain_episodic.stores.chroma.folder import FOLDER_INDEXES  # noqa: PLC0415

    def indexes(folder: Path) -> set[str]:
        rows = database_rows(folder, "SELECT name FROM sqlite_master WHERE type = 'index'")
        return {name for (name,) in rows}

    assert len(FOLDER_INDEXES) == 2  # the log by topic, the segments by collection
    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings())
    memory.record_many(list(diverse_corpus(20)))
    before = [hit.episode.episode_id for hit in memory.recall("parse the config", top_k=5)]
    store.close()
    assert set(FOLDER_INDEXES) <= indexes(folder)  # a new folder gets them
    connection = sqlite3.connect(folder / "chroma.sqlite3")
    for index in FOLDER_INDEXES:  # as a folder of an earlier release
        connection.execute(f"DROP INDEX {index}")
    connection.commit()
    connection.close()
    assert not set(FOLDER_INDEXES) & indexes(folder)

    again = ChromaEpisodeStore(path=folder)
    reopened = EpisodicMemory(store=again, embeddings=HashingEmbeddings())
    assert set(FOLDER_INDEXES) <= indexes(folder)
    assert [
        hit.episode.episode_id for hit in reopened.recall("parse the config", top_k=5)
    ] == before
    assert len(reopened) == 20
    again.close()
    from langchain_episodic.cli import main  # noqa: PLC0415

    assert main(["--path", str(folder), "verify"]) == 0
