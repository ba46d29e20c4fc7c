"""Migration between stores: in memory -> Chroma on disk -> Chroma server -> FAISS.

Episodes, the quarantine log and the credit journal travel; a second run copies nothing twice.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import chromadb
import pytest
from chromadb.api import ClientAPI

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodeConflictError,
    EpisodicMemory,
    EpisodicValueError,
)
from langchain_episodic.cli import main
from langchain_episodic.errors import CreditError, MalformedRecordWarning, MigrationError
from langchain_episodic.migration import migrate_namespace
from langchain_episodic.model.episode import EpisodeSource
from langchain_episodic.stores import EpisodeStore
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore
from tests.helpers.episodes import QUERIES, corpus
from tests.helpers.stores import faiss_harness
from tests.unit_tests.factories import make_episode

NOW = 1_000_000.0


def test_a_namespace_travels_through_four_stores_intact(
    tmp_path: Path,
    chroma_server_client: ClientAPI,
    unique_name: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # Recorded out of time order on purpose: the copy keeps recording order, not time.
    episodes = corpus(2_500, spacing=1.0)
    episodes = episodes[1_000:] + episodes[:1_000]
    # Provenance as the agent middleware records it travels with its episode.
    sourced = EpisodeSource("coder", "run-9", thread_id="a-1", turn=2, namespace="agent-1")
    episodes[:50] = [dataclasses.replace(e, source=sourced) for e in episodes[:50]]
    notebook = EpisodicMemory(store=InMemoryEpisodeStore(), namespace="agent-1")
    for start in range(0, 2_500, 500):
        notebook.record_many(episodes[start : start + 500])
    notebook.quarantine.add(["ep-7", "ep-8"], "bad tool run", by="ops")
    notebook.quarantine.release("ep-8", "fine after all", by="ops")
    recorded = list(notebook.episodes())

    on_disk = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path / "disk"), namespace="agent-1")
    report = migrate_namespace(notebook, on_disk, batch_size=400, progress=True)
    assert (report.source_count, report.copied, report.already_present) == (2_500, 2_500, 0)
    assert "migrating" in capsys.readouterr().err

    server = EpisodicMemory(
        store=ChromaEpisodeStore(client=chroma_server_client, collection_name=unique_name),
        namespace="agent-1",
    )
    assert migrate_namespace(on_disk, server).target_count == 2_500

    faiss_copy = EpisodicMemory(store=faiss_harness(tmp_path).open(), namespace="agent-1")
    assert migrate_namespace(server, faiss_copy, batch_size=1_000).copied == 2_500

    for copy in (on_disk, server, faiss_copy):
        assert list(copy.episodes()) == recorded
        assert [e.source for e in copy.episodes()][:50] == [sourced] * 50
        assert copy.short_term == notebook.short_term
        assert copy.skill_profiles() == notebook.skill_profiles()
        assert copy.quarantine.log() == notebook.quarantine.log()
        assert set(copy.quarantine.list()) == {"ep-7"}
        for query in QUERIES[:2]:
            got = copy.recall(query, top_k=3, current_time=NOW)
            assert "ep-7" not in {hit.episode.episode_id for hit in got}


def test_running_a_migration_again_copies_nothing_twice(tmp_path: Path) -> None:
    source = EpisodicMemory(store=InMemoryEpisodeStore())
    source.record_many(corpus(30))
    target = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    target.record_many(corpus(10))
    report = migrate_namespace(source, target, batch_size=7)
    assert (report.copied, report.already_present, report.target_count) == (20, 10, 30)
    again = migrate_namespace(source, target)
    assert (again.copied, again.already_present) == (0, 30)
    assert target.quarantine.log() == ()


def test_a_conflicting_target_is_refused_and_keeps_its_episode(tmp_path: Path) -> None:
    source = EpisodicMemory(store=InMemoryEpisodeStore())
    source.record_many(corpus(5))
    target = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    other = make_episode(episode_id="ep-3", description="Not the same episode")
    target.record(other)
    with pytest.raises(EpisodeConflictError, match="ep-3"):
        migrate_namespace(source, target, batch_size=2)
    assert target.store.get("default", ["ep-3"]) == {"ep-3": other}
    assert len(target) == 3  # the first batch (ep-0, ep-1) was copied before the conflict


def test_bad_arguments_are_named() -> None:
    memory = EpisodicMemory()
    with pytest.raises(EpisodicValueError, match="same namespace"):
        migrate_namespace(memory, memory)
    with pytest.raises(EpisodicValueError, match="batch_size=0"):
        migrate_namespace(memory, EpisodicMemory(), batch_size=0)
    with pytest.raises(TypeError, match="target="):
        migrate_namespace(memory, "memory")  # type: ignore[arg-type]


def test_cli_migrate_copies_a_disk_namespace_to_a_server(
    tmp_path: Path,
    chroma_server_address: tuple[str, int],
    unique_name: str,
    capsys: pytest.CaptureFixture[str],
) -> None:
    source = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path / "disk"), namespace="bob")
    source.record_many(corpus(40))
    host, port = chroma_server_address
    argv = ["--path", str(tmp_path / "disk"), "--namespace", "bob", "migrate"]
    target_args = ["--to-host", host, "--to-port", str(port), "--to-collection", unique_name]
    assert main([*argv, *target_args, "--batch-size", "15"]) == 0
    out = capsys.readouterr().out
    assert "40 copied, 0 already there, 40 in the target; every id verified" in out
    copy = EpisodicMemory(
        store=ChromaEpisodeStore(
            client=chromadb.HttpClient(host=host, port=port), collection_name=unique_name
        ),
        namespace="bob",
    )
    assert list(copy.episodes()) == list(source.episodes())
    assert main([*argv, *target_args, "-q"]) == 0
    assert capsys.readouterr().out == ""
    assert main([*argv]) == 2
    assert "give the target" in capsys.readouterr().err
    assert main(["--path", str(tmp_path / "nothing-here"), "migrate", "--to-path", "x"]) == 2
    assert "no episodic memory" in capsys.readouterr().err


def test_unreadable_source_records_are_named_after_every_readable_one_is_copied(
    tmp_path: Path,
) -> None:
    source = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path / "source"))
    source.record_many(corpus(4))
    source.store.collection("default").add(  # type: ignore[attr-defined]
        ids=["foreign"],
        embeddings=[source.embeddings.embed_query("x")],
        metadatas=[{"episode": "not json", "seq": 4}],
    )
    target = EpisodicMemory(store=InMemoryEpisodeStore())
    with (
        pytest.warns(MalformedRecordWarning, match="foreign"),
        pytest.raises(MigrationError, match=r"1 of the 5 records .* not readable"),
    ):
        migrate_namespace(source, target)
    assert list(target.episodes()) == corpus(4)


def test_the_credit_journal_travels_with_the_namespace(
    tmp_path: Path, chroma_server_client: ClientAPI, unique_name: str
) -> None:
    task = "Fix the login bug where sessions expire too early"
    clock = [NOW]
    notebook = EpisodicMemory(
        store=InMemoryEpisodeStore(), namespace="agent-1", clock=lambda: clock[0]
    )
    notebook.record_many(corpus(12))
    for i in range(8):
        notebook.runs.note(f"run-{i}", [f"ep-{i}", f"ep-{i + 3}"], task, thread_id="t")
        clock[0] += 60
    for i, reward in enumerate([0.9, 0.1, 1.0, 0.0, 0.6]):
        notebook.runs.credit(f"run-{i}", reward, by="ci")
        clock[0] += 60
    clock[0] += 8 * 86_400.0  # runs 5 to 7 are now older than the default time to live
    notebook.runs.note("run-8", ["ep-11"], task)
    assert notebook.runs.expire() == 3
    credits, open_runs = notebook.runs.log(), notebook.runs.pending()
    assert len(credits) == 8
    assert set(open_runs) == {"run-8"}
    journal = set(notebook.store.read_journal("agent-1"))
    assert len(journal) == 9 + 8  # nine injection records, eight outcomes

    def estimates(memory: EpisodicMemory) -> dict[str, tuple[int, int, float]]:
        return {
            episode_id: (row.injections, row.credited_runs, round(row.estimate(clock[0]), 12))
            for episode_id, row in memory.runs.utilities().items()
        }

    expected = estimates(notebook)
    assert len(expected) == 12
    assert any(v[2] > 0.5 for v in expected.values())

    def opened(store: EpisodeStore) -> EpisodicMemory:
        return EpisodicMemory(store=store, namespace="agent-1", clock=lambda: clock[0])

    on_disk = opened(ChromaEpisodeStore(path=tmp_path / "disk"))
    migrate_namespace(notebook, on_disk)
    server = opened(ChromaEpisodeStore(client=chroma_server_client, collection_name=unique_name))
    migrate_namespace(on_disk, server)
    faiss_copy = opened(faiss_harness(tmp_path).open())
    migrate_namespace(server, faiss_copy)
    for copy in (on_disk, server, faiss_copy):
        assert copy.runs.log() == credits
        assert copy.runs.pending() == open_runs
        assert estimates(copy) == expected
        assert set(copy.store.read_journal("agent-1")) == journal
        # ... and reopened, from the store alone.
        assert opened(copy.store).runs.log() == credits
        with pytest.raises(CreditError, match="already credited"):
            copy.runs.credit("run-2", 0.5)
    # Migrating again copies nothing twice.
    migrate_namespace(notebook, on_disk)
    migrate_namespace(server, faiss_copy)
    for copy in (on_disk, faiss_copy):
        assert len(copy.store.read_journal("agent-1")) == len(journal)
        assert copy.runs.log() == credits
        assert estimates(copy) == expected
    # The open run can be credited once, in the copy, after the move.
    assert faiss_copy.runs.credit("run-8", 1.0).episode_ids == ("ep-11",)
    assert faiss_copy.runs.utility("ep-11").credited_runs == 1


def test_a_run_credited_differently_in_the_target_is_named_and_kept(tmp_path: Path) -> None:
    task = "Fix the login bug where sessions expire too early"
    source = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW)
    target = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path), clock=lambda: NOW)
    for memory, reward in ((source, 1.0), (target, 0.0)):
        memory.record_many(corpus(3))
        memory.runs.note("run-1", ["ep-0"], task)
        memory.runs.credit("run-1", reward)
    source.runs.note("run-2", ["ep-1"], task)
    source.runs.credit("run-2", 0.5)
    with pytest.raises(MigrationError, match=r"entry_ids=\['outcome:run-1'\]"):
        migrate_namespace(source, target)
    # The target's outcome is kept, not doubled; every other entry was copied.
    assert [(e.run_id, e.reward) for e in target.runs.log()] == [("run-1", 0.0), ("run-2", 0.5)]
    assert target.runs.utility("ep-0").credited_runs == 1
