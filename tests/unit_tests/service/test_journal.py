"""``Journal``: the credit and lesson logs of a namespace, folded from its journal."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
from langchain_episodic.service.journal import replayed_checkpoint
from langchain_episodic.stores.base import JournalEntry
from tests.unit_tests.factories import make_episode


def test_entries_are_what_the_runs_wrote(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    assert memory._s.journal.entries() == []
    memory.runs.note("r1", ["a"], "task")
    memory.runs.credit("r1", 1.0)
    entries = memory._s.journal.entries()
    assert len(entries) == 2
    assert {entry.run_id for entry in entries} == {"r1"}


def test_merging_the_same_entries_again_changes_nothing(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    memory.runs.note("r1", ["a"], "task")
    memory.runs.credit("r1", 1.0)
    journal = memory._s.journal
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
