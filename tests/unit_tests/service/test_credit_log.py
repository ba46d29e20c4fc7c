"""``CreditLog``: a namespace's open runs, and the utility its outcomes give each episode."""

from __future__ import annotations

from typing import Any

import pytest

from langchain_episodic import EpisodicMemory
from langchain_episodic.errors import CreditError
from tests.unit_tests.factories import make_episode


def test_a_noted_run_is_open_until_its_outcome_is_in(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    log = memory._s.journal.credit
    memory.runs.note("r1", ["a"], "Fix the login bug")
    ((run_id, (injection,)),) = log.open_runs()
    assert (run_id, injection.episode_ids) == ("r1", ("a",))
    memory.runs.credit("r1", 1.0)
    assert log.open_runs() == []
    (event,) = log.credits()
    assert (event.run_id, event.reward, event.episode_ids) == ("r1", 1.0, ("a",))


def test_outcomes_give_the_shown_episodes_their_utility(memory: EpisodicMemory) -> None:
    memory.record_many([make_episode(episode_id="a"), make_episode(episode_id="b")])
    log = memory._s.journal.credit
    memory.runs.note("good", ["a"], "task")
    memory.runs.credit("good", 1.0)
    memory.runs.note("bad", ["b"], "task")
    memory.runs.credit("bad", 0.0)
    assert log.utility("a").helped > 0
    assert log.utility("b").hurt > 0
    assert log.utility("never-shown").credited_runs == 0


def test_a_fresh_log_read_from_the_journal_agrees(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    memory.runs.note("r1", ["a"], "task")
    memory.runs.credit("r1", 0.5)
    reopened = EpisodicMemory(store=memory.store, clock=lambda: 100.0)
    assert reopened._s.journal.credit.credits() == memory._s.journal.credit.credits()


def test_a_run_closed_here_is_closed_again_without_reading_the_journal(
    memory: EpisodicMemory,
) -> None:
    memory.record(make_episode(episode_id="a"))
    memory.runs.note("r1", ["a"], "task")
    first = memory.runs.close("r1", 1.0)
    store = memory.store
    reads: list[str] = []
    for name in ("read_journal", "read_journal_ids", "read_journal_from"):
        original = getattr(store, name)

        def counted(*args: object, _name: str = name, _original: Any = original) -> Any:
            reads.append(_name)
            return _original(*args)

        setattr(store, name, counted)
    assert memory.runs.close("r1", 0.0) == first  # the first outcome is kept
    with pytest.raises(CreditError, match="already credited"):
        memory.runs.credit("r1", 0.0)
    assert reads == []
    assert memory._s.journal.credit.credits() == [first]


def test_an_erasure_forgets_the_outcomes_closed_here(memory: EpisodicMemory) -> None:
    memory.record_many([make_episode(episode_id="a"), make_episode(episode_id="b")])
    memory.runs.note("r1", ["a", "b"], "task")
    memory.runs.close("r1", 1.0)
    memory.forget(["a"], reason="the user asked")
    # The outcome as stored now (redacted), not the one this memory wrote.
    closed = memory.runs.close("r1", 0.0)
    assert closed is not None
    assert closed.episode_ids == ("b",)
