"""``CreditLog``: a namespace's open runs, and the utility its outcomes give each episode."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
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
