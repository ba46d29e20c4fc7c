"""A folder that held a memory never opens as an empty one; damage is named, not suffered.

Chroma opens a zero-length or missing ``chroma.sqlite3`` as a new, empty database and
writes into it: the user's history would be gone without a word. A marker written once
the folder holds a database makes the store refuse such a folder, naming it, before
Chroma touches it; the CLI says the same in one line. ``verify`` names each kind of
damage (sqlite truncated, garbled or with a bad header; a vector index header or its
pickle garbled) in one line and exits 1, reading Chroma in a child process so that a
crash inside Chroma is reported rather than suffered.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StoreConfigurationError
from langchain_episodic.stores.chroma import health as chroma_health
from tests.helpers.cli import assert_one_line_error, run
from tests.helpers.episodes import corpus

MARKER = ".langchain-episodic-store"


def filled(path: Path) -> Path:
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(4))
    return path


@pytest.mark.parametrize("damage", ["truncate", "delete"])
def test_a_lost_database_is_refused_not_opened_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path = filled(tmp_path / "memory")
    database = path / "chroma.sqlite3"
    if damage == "truncate":
        database.write_bytes(b"")
    else:
        database.unlink()
    with pytest.raises(StoreConfigurationError, match="held a memory, but its database"):
        ChromaEpisodeStore(path=path)
    assert not database.exists() or database.stat().st_size == 0  # nothing was written
    code, _, err = run(capsys, "stats", "--path", str(path))
    assert code == 2
    assert_one_line_error(err, "held a memory", "Restore the folder from a backup")
    # The lock was given back: a later store (after a restore) may open the folder.
    with pytest.raises(StoreConfigurationError):
        ChromaEpisodeStore(path=path)


def test_a_folder_from_before_the_marker_is_adopted(tmp_path: Path) -> None:
    path = filled(tmp_path / "memory")
    (path / MARKER).unlink()
    with ChromaEpisodeStore(path=path) as store:
        assert len(EpisodicMemory(store=store)) == 4
    assert (path / MARKER).is_file()


def test_a_new_folder_is_marked_once_chroma_created_its_database(tmp_path: Path) -> None:
    path = tmp_path / "fresh"
    with ChromaEpisodeStore(path=path):
        pass
    assert (path / "chroma.sqlite3").is_file()
    assert (path / MARKER).is_file()


# ------------------------------------------------------------------ verify on damage


@pytest.fixture(scope="module")
def sound_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,200 episodes: past Chroma's flush threshold, so the index has all its files."""
    path = tmp_path_factory.mktemp("sound") / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(1_200))
    return path


def damaged_copy(sound: Path, tmp_path: Path, damage: str) -> Path:
    path = tmp_path / "damaged"
    shutil.copytree(sound, path)
    (segment,) = {header.parent for header in path.glob("*/header.bin")}
    database = path / "chroma.sqlite3"
    if damage == "sqlite truncated":
        os.truncate(database, database.stat().st_size // 3)
    elif damage == "sqlite bad header":
        with open(database, "r+b") as handle:
            handle.write(b"NOT A DATABASE!!")
    elif damage == "sqlite garbled":
        with open(database, "r+b") as handle:  # the schema's pages: always in use
            handle.seek(4096)
            handle.write(bytes(range(256)) * 64)
    elif damage == "hnsw header":
        with open(segment / "header.bin", "r+b") as handle:
            handle.seek(8)
            handle.write(b"\xff" * 60)
    elif damage == "hnsw pickle":
        with open(segment / "index_metadata.pickle", "r+b") as handle:
            handle.seek(100)
            handle.write(b"\xb2" * 2000)
    return path


@pytest.mark.parametrize(
    ("damage", "diagnosis"),
    [
        ("sqlite truncated", "chroma.sqlite3 is damaged"),
        ("sqlite bad header", "its header is damaged"),
        ("sqlite garbled", "chroma.sqlite3 is damaged"),
        ("hnsw header", "header.bin is damaged"),
        ("hnsw pickle", "index_metadata.pickle is damaged"),
    ],
)
def test_verify_names_each_kind_of_damage_in_one_line_and_exits_1(
    sound_folder: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    damage: str,
    diagnosis: str,
) -> None:
    path = damaged_copy(sound_folder, tmp_path, damage)
    code, out, err = run(capsys, "verify", "--path", str(path))
    assert code == 1
    assert "Traceback" not in out + err
    lines = out.strip().splitlines()
    assert lines[0] == f"the folder at {str(path)!r} is damaged:"
    assert diagnosis in lines[1]
    assert lines[-1].startswith("what to do: restore the folder from a backup")
    code, out, _ = run(capsys, "verify", "--json", "--path", str(path))
    assert code == 1
    assert diagnosis in json.loads(out)["damaged"][0]


def test_a_sound_folder_verifies_clean(
    sound_folder: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "verify", "--path", str(sound_folder))
    assert code == 0
    assert "all readable" in out


def test_a_crash_inside_chroma_is_reported_not_suffered(
    sound_folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated: the child that reads the folder dies as a segmentation fault would end it.
    monkeypatch.setattr(
        chroma_health, "_PROBE", "import os, signal; os.kill(os.getpid(), signal.SIGSEGV)"
    )
    (problem,) = chroma_health.diagnose_folder(str(sound_folder))
    assert problem == (
        "Chroma crashed (SIGSEGV) reading the folder: its vector index files are damaged"
    )


def test_another_commands_damaged_folder_is_one_line_naming_the_file(
    sound_folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = damaged_copy(sound_folder, tmp_path, "hnsw pickle")
    code, _, err = run(capsys, "export", "-", "--path", str(path))
    assert code == 2
    assert_one_line_error(
        err, "is damaged", "index_metadata.pickle is damaged", "langchain-episodic verify"
    )


# ------------------------------------------------------------------ a full disk


def test_a_folder_on_a_full_disk_still_opens_for_reading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Simulated: Chroma writes as it opens a folder, so on a full disk its open fails
    # ("database or disk is full", as seen on a full tmpfs, where this was also checked
    # by hand); the disk has no free bytes. The temporary folder the copy goes to has.
    import chromadb  # noqa: PLC0415
    import chromadb.errors  # noqa: PLC0415

    from langchain_episodic.errors import StoreReadOnlyError  # noqa: PLC0415
    from langchain_episodic.stores.chroma import folder as chroma_folder  # noqa: PLC0415

    path = filled(tmp_path / "memory")
    folder = str(path)
    opening = chromadb.PersistentClient

    def full_disk(path: str, **kwargs: object) -> object:
        if os.path.realpath(path) == os.path.realpath(folder):
            raise chromadb.errors.InternalError(
                "error returned from database: (code: 13) database or disk is full"
            )
        return opening(path=path, **kwargs)

    monkeypatch.setattr(chromadb, "PersistentClient", full_disk)
    monkeypatch.setattr(
        chroma_folder,
        "free_bytes",
        lambda where: 0 if os.path.realpath(where) == os.path.realpath(folder) else 10**12,
    )
    store = ChromaEpisodeStore(path=path)
    memory = EpisodicMemory(store=store)
    assert len(memory) == 4
    assert memory.recall(corpus(4)[1].task.description)
    with pytest.raises(StoreReadOnlyError, match="no space left on device") as caught:
        memory.record(corpus(6)[5])
    assert "free space on its disk, then open the store again" in str(caught.value)
    store.close()
    monkeypatch.undo()
    again = ChromaEpisodeStore(path=path)  # room again: it opens for writing
    EpisodicMemory(store=again).record(corpus(6)[5])
    assert len(EpisodicMemory(store=again)) == 5
    again.close()


def test_a_full_disk_is_said_plainly_on_write_and_in_the_cli(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Simulated: Chroma's error on a full disk (as seen on a 2 MB tmpfs) and no free bytes.
    import chromadb.errors  # noqa: PLC0415

    from langchain_episodic.stores.chroma import folder as chroma_folder  # noqa: PLC0415

    path = filled(tmp_path / "memory")
    store = ChromaEpisodeStore(path=path)
    memory = EpisodicMemory(store=store)
    collection = store.collection("default")

    def full(*args: object, **kwargs: object) -> None:
        raise chromadb.errors.InternalError(
            "Error in compaction: Failed to apply logs to the metadata segment"
        )

    monkeypatch.setattr(collection, "add", full)
    monkeypatch.setattr(chroma_folder, "free_bytes", lambda folder: 4096)
    with pytest.raises(StoreConfigurationError, match="no space left on device at") as caught:
        memory.record_many(corpus(6)[4:])
    assert "everything acknowledged before is kept" in str(caught.value)
    monkeypatch.undo()
    assert len(memory) == 4  # what was acknowledged is there
    store.close()

    def failing(*args: object, **kwargs: object) -> int:
        raise chromadb.errors.InternalError("Error executing plan: Failed to apply logs")

    # The CLI imports it when an error needs it (its --help imports nothing heavy).
    monkeypatch.setattr(chroma_health, "free_bytes", lambda folder: 4096)
    monkeypatch.setattr(ChromaEpisodeStore, "count", failing)
    code, _, err = run(capsys, "stats", "--path", str(path))
    assert code == 2
    assert_one_line_error(err, "no space left on device at", "nothing acknowledged was lost")
