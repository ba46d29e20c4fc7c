"""``Journal``: the credit and lesson logs of a namespace, folded from its journal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.model.credit import CreditEvent, Injection, encode_credit, encode_injection
from langchain_episodic.service.journal import replayed_checkpoint
from langchain_episodic.stores.base import JournalEntry
from langchain_episodic.stores.chroma.journal_head import HEAD_PREFIX
from tests.unit_tests.factories import logins_memory, make_episode

NOW = 1_750_000_000.0
NAMESPACE = "default"


def test_entries_are_what_the_runs_wrote(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    assert memory.journal.entries() == []
    memory.runs.note("r1", ["a"], "task")
    memory.runs.credit("r1", 1.0)
    entries = memory.journal.entries()
    assert len(entries) == 2
    assert {entry.run_id for entry in entries} == {"r1"}


def test_merging_the_same_entries_again_changes_nothing(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    memory.runs.note("r1", ["a"], "task")
    memory.runs.credit("r1", 1.0)
    journal = memory.journal
    before = journal.entries()
    assert journal.merge(before) == []
    assert journal.entries() == before
    clash = JournalEntry(before[-1].entry_id, "r1", '{"reward": 0.0}')
    assert journal.merge([clash]) == [clash.entry_id]  # a conflict is named, not applied


def test_a_checkpoint_agrees_with_a_replay_of_the_journal(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    memory.runs.note("r1", ["a"], "task")
    memory.runs.credit("r1", 1.0)
    memory.journal.checkpoint()
    assert replayed_checkpoint(memory.store, memory.namespace) == []


# ---------------------------------------------------------------- the journal's head


def _spy_journal_reads(monkeypatch: pytest.MonkeyPatch, store: ChromaEpisodeStore) -> list[str]:
    """Names of the journal reads ``store`` makes from now on (the head is not one)."""
    reads: list[str] = []
    for name in ("journal_size", "read_journal_from", "read_journal_ids", "read_journal"):
        original = getattr(store, name)

        def spy(*args: Any, _name: str = name, _original: Any = original) -> Any:
            reads.append(_name)
            return _original(*args)

        monkeypatch.setattr(store, name, spy)
    return reads


def _credited(memory: EpisodicMemory, runs: range) -> None:
    for run in runs:
        memory.runs.note(f"run-{run}", ["a"], "task")
        memory.runs.credit(f"run-{run}", (run % 5) / 4)


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    """A memory folder with a credited episode, closed after its checkpoint was saved."""
    store = ChromaEpisodeStore(path=tmp_path / "m")
    memory = EpisodicMemory(store=store, clock=lambda: NOW, open_run_ttl=None)
    memory.record(make_episode(episode_id="a"))
    _credited(memory, range(12))
    _close(memory)
    return tmp_path / "m"


def _close(memory: EpisodicMemory) -> None:
    memory.flush()  # saves the checkpoint when entries were folded in since the last
    memory.store.close()  # type: ignore[attr-defined]


def _reopen(folder: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[EpisodicMemory, list[str]]:
    store = ChromaEpisodeStore(path=folder)
    reads = _spy_journal_reads(monkeypatch, store)
    return EpisodicMemory(store=store, clock=lambda: NOW, open_run_ttl=None), reads


def _replayed(folder: Path) -> dict[str, Any]:
    """The utilities a memory gets by replaying the whole journal (no checkpoint)."""
    store = ChromaEpisodeStore(path=folder)
    try:
        entries = store.read_journal_from(NAMESPACE, 0)
        memory = EpisodicMemory(store=store, clock=lambda: NOW, open_run_ttl=None)
        memory.journal.reload(entries)
        return memory.runs.utilities()
    finally:
        store.close()


def test_an_open_whose_head_matches_the_checkpoint_reads_nothing_of_the_journal(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = _replayed(folder)
    memory, reads = _reopen(folder, monkeypatch)
    assert reads == []
    assert memory.runs.utilities() == expected
    _close(memory)


def test_another_writers_entries_after_the_checkpoint_are_seen_on_open(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ChromaEpisodeStore(path=folder)
    other = EpisodicMemory(store=store, clock=lambda: NOW, open_run_ttl=None)
    before = other.runs.utilities()
    _credited(other, range(12, 15))  # written after the checkpoint, not checkpointed
    store.close()
    expected = _replayed(folder)
    assert expected != before
    memory, reads = _reopen(folder, monkeypatch)
    assert "journal_size" in reads  # the head differed: the journal was read
    assert memory.runs.utilities() == expected
    _close(memory)


def test_a_head_a_crash_left_behind_is_detected_and_then_trusted_again(
    folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A writer killed after adding its entries, before renewing the head: its
    # head still says "writing".
    before = _replayed(folder)
    store = ChromaEpisodeStore(path=folder)
    journal_name = store.collection_name_for(NAMESPACE) + "-journal"
    head = folder / f"{HEAD_PREFIX}{journal_name}"
    checkpointed = head.read_text()
    head.write_text("writing\n")  # as the killed writer left it
    journal = store._journal(NAMESPACE, create=True)
    assert journal is not None
    extra = [
        JournalEntry(*encode_injection(Injection("run-99", ("a",), "task", "other", NOW))),
        JournalEntry(*encode_credit(CreditEvent("run-99", 1.0, ("a",), "other", NOW + 1))),
    ]
    journal.add(
        ids=[entry.entry_id for entry in extra],
        embeddings=[[1.0]] * len(extra),
        metadatas=[{"run": entry.run_id, "entry": entry.payload} for entry in extra],
    )
    store.close()
    memory, reads = _reopen(folder, monkeypatch)
    assert "journal_size" in reads  # not trusted: the killed write was read
    assert head.read_text() not in ("writing\n", checkpointed)  # renewed
    got = memory.runs.utilities()
    _close(memory)  # a checkpoint saved, with the renewed head
    expected = _replayed(folder)
    assert got == expected
    assert expected != before
    memory, reads = _reopen(folder, monkeypatch)
    assert reads == []
    assert memory.runs.utilities() == expected
    _close(memory)


# ------------------------------------------------------------------ memory.journal
# ``memory.journal``: entries merged into another namespace, conflicts named.


@pytest.fixture
def logins() -> EpisodicMemory:
    """Two login episodes, the clock standing still."""
    return logins_memory()


def test_journal_entries_merge_into_another_namespace_and_conflicts_are_named(
    logins: EpisodicMemory,
) -> None:
    logins.runs.note("run-1", ["login-1"], "Implement a login form")
    logins.runs.credit("run-1", 0.8)
    other = logins.for_namespace("other")
    other.record_many(logins.episodes())
    entries = logins.journal.entries()
    assert other.journal.merge(entries) == []
    assert [e.run_id for e in other.runs.log()] == ["run-1"]
    assert other.journal.merge(entries) == []  # again: nothing new, nothing wrong
    clash = JournalEntry("outcome:run-1", "run-1", '{"reward": 0.1}')
    assert other.journal.merge([clash]) == ["outcome:run-1"]
    assert other.runs.log()[0].reward == 0.8
