"""``Ledger``: what a generic vector store cannot say (record order, state, the journal),
kept in a ``ByteStore``."""

from __future__ import annotations

from langchain_core.stores import InMemoryByteStore

from langchain_episodic.stores.base import JournalEntry
from langchain_episodic.stores.ledger import Ledger


def test_ids_are_kept_in_order_and_the_count_as_set() -> None:
    ledger = Ledger(InMemoryByteStore())
    ledger.append("default", 0, ["a", "b"])
    ledger.append("default", 2, ["c"])
    assert ledger.ids("default", 1, 3) == ["b", "c"]
    assert ledger.ids("default", 0, 3) == ["a", "b", "c"]
    ledger.set_count("default", 3)
    assert ledger.count("default") == 3
    assert ledger.count("other") == 0


def test_state_and_journal_survive_a_new_ledger_on_the_same_bytes() -> None:
    data = InMemoryByteStore()
    ledger = Ledger(data)
    ledger.add_namespace("team-a")
    ledger.write_state("team-a", "summary", '{"count": 1}')
    entry = JournalEntry("outcome:r1", "r1", '{"reward": 1.0}')
    ledger.append_journal("team-a", [entry])
    again = Ledger(data)
    assert "team-a" in again.namespaces()
    assert again.read_state("team-a", "summary") == '{"count": 1}'
    assert again.read_state("team-a", "missing") is None
    assert again.read_journal("team-a") == [entry]
    assert again.read_journal("team-a", run_id="r2") == []


def test_a_runs_entries_are_read_by_key() -> None:
    ledger = Ledger(InMemoryByteStore())
    outcome = JournalEntry("outcome:r1", "r1", '{"reward": 1.0}')
    shown = JournalEntry("injection:r1:abc", "r1", '{"ids": ["a"]}')
    other = JournalEntry("outcome:r2", "r2", '{"reward": 0.0}')
    ledger.append_journal("default", [outcome, shown, other])
    assert ledger.read_journal_keys("default", "r1", ["outcome:r1"]) == [outcome]
    found = ledger.read_journal_keys("default", "r1", ["injection:r1:abc", "outcome:r1", "x"])
    assert {entry.entry_id for entry in found} == {"outcome:r1", "injection:r1:abc"}
    # An entry is found under its own run only.
    assert ledger.read_journal_keys("default", "r1", ["outcome:r2"]) == []
    assert ledger.read_journal_keys("other", "r1", ["outcome:r1"]) == []
