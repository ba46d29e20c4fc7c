"""``memory.journal``: entries merged into another namespace, conflicts named."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
from langchain_episodic.stores.base import JournalEntry


def test_journal_entries_merge_into_another_namespace_and_conflicts_are_named(
    memory: EpisodicMemory,
) -> None:
    memory.runs.note("run-1", ["login-1"], "Implement a login form")
    memory.runs.credit("run-1", 0.8)
    other = memory.for_namespace("other")
    other.record_many(memory.episodes())
    entries = memory.journal.entries()
    assert other.journal.merge(entries) == []
    assert [e.run_id for e in other.runs.log()] == ["run-1"]
    assert other.journal.merge(entries) == []  # again: nothing new, nothing wrong
    clash = JournalEntry("outcome:run-1", "run-1", '{"reward": 0.1}')
    assert other.journal.merge([clash]) == ["outcome:run-1"]
    assert other.runs.log()[0].reward == 0.8
