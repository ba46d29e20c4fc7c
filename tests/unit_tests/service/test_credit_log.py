"""``CreditLog``: a namespace's open runs, and the utility its outcomes give each episode."""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from langchain_episodic import EpisodicMemory
from langchain_episodic.errors import CreditError
from langchain_episodic.model.credit import outcome_entry_id
from langchain_episodic.service.journal import replayed_checkpoint
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import JournalEntry
from tests.helpers.credit import log_state, replayed_log
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode


def test_a_noted_run_is_open_until_its_outcome_is_in(memory: EpisodicMemory) -> None:
    memory.record(make_episode(episode_id="a"))
    log = memory.journal.credit
    memory.runs.note("r1", ["a"], "Fix the login bug")
    ((run_id, (injection,)),) = log.open_runs()
    assert (run_id, injection.episode_ids) == ("r1", ("a",))
    memory.runs.credit("r1", 1.0)
    assert log.open_runs() == []
    (event,) = log.credits()
    assert (event.run_id, event.reward, event.episode_ids) == ("r1", 1.0, ("a",))


def test_outcomes_give_the_shown_episodes_their_utility(memory: EpisodicMemory) -> None:
    memory.record_many([make_episode(episode_id="a"), make_episode(episode_id="b")])
    log = memory.journal.credit
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
    assert reopened.journal.credit.credits() == memory.journal.credit.credits()


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
    assert memory.journal.credit.credits() == [first]


def test_an_erasure_forgets_the_outcomes_closed_here(memory: EpisodicMemory) -> None:
    memory.record_many([make_episode(episode_id="a"), make_episode(episode_id="b")])
    memory.runs.note("r1", ["a", "b"], "task")
    memory.runs.close("r1", 1.0)
    memory.forget(["a"], reason="the user asked")
    # The outcome as stored now (redacted), not the one this memory wrote.
    closed = memory.runs.close("r1", 0.0)
    assert closed is not None
    assert closed.episode_ids == ("b",)


# ------------------------------------------------------------------ outcomes written at once
# A run's outcome is written and read back without the memory's lock (runs credited at
# once would otherwise wait on each other's round trips); it is folded in under the lock
# once every outcome begun before it is. What reads or sums up the journal waits for the
# outcomes in flight.

RUNS = 6
WAIT = 10.0  # seconds a blocked step may wait before the test calls it stuck


class OutcomeGate(InMemoryEpisodeStore):
    """Runs ``before_outcome(run_id)`` before storing a run's outcome; counts full reads."""

    def __init__(self) -> None:
        super().__init__()
        self.before_outcome: Callable[[str], None] = lambda run_id: None
        self.whole_reads = 0

    def append_journal(self, namespace: str, entries: Sequence[JournalEntry]) -> None:
        for entry in entries:
            if entry.entry_id == outcome_entry_id(entry.run_id):
                self.before_outcome(entry.run_id)
        super().append_journal(namespace, entries)

    def read_journal_from(self, namespace: str, start: int) -> list[JournalEntry]:
        if start == 0:
            self.whole_reads += 1
        return super().read_journal_from(namespace, start)


def _memory(store: OutcomeGate) -> EpisodicMemory:
    ticks = itertools.count(1_000_000)
    memory = EpisodicMemory(store=store, clock=lambda: float(next(ticks)))
    memory.record_many(corpus(RUNS))
    for index in range(RUNS):
        memory.runs.note(f"r{index}", [f"ep-{index}", f"ep-{(index + 1) % RUNS}"], "a task")
    return memory


def _credit_at_once(memory: EpisodicMemory, run_ids: Sequence[str]) -> list[BaseException]:
    """Credit ``run_ids`` from one thread each; the errors raised."""
    errors: list[BaseException] = []

    def credit(index: int, run_id: str) -> None:
        try:
            memory.runs.credit(run_id, (index % 3) / 2)
        except BaseException as error:  # reported by the test
            errors.append(error)

    threads = [threading.Thread(target=credit, args=pair) for pair in enumerate(run_ids)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT * 2)
        assert not thread.is_alive(), "a credit never returned"
    return errors


def _crediting_r0_held(
    memory: EpisodicMemory, store: OutcomeGate
) -> tuple[threading.Thread, threading.Event]:
    """A thread crediting run r0, its outcome held at the store until the event is set."""
    arrived, release = threading.Event(), threading.Event()

    def r0_held(run_id: str) -> None:
        if run_id == "r0":
            arrived.set()
            assert release.wait(WAIT)

    store.before_outcome = r0_held
    crediting = threading.Thread(target=memory.runs.credit, args=("r0", 1.0))
    crediting.start()
    assert arrived.wait(WAIT)
    return crediting, release


def test_runs_credited_at_once_write_their_outcomes_side_by_side() -> None:
    store = OutcomeGate()
    memory = _memory(store)
    # Every outcome waits at the store until all are being written: were one write
    # made under the memory's lock, the others could not arrive and the barrier breaks.
    together = threading.Barrier(RUNS, timeout=WAIT)
    store.before_outcome = lambda run_id: together.wait()
    errors = _credit_at_once(memory, [f"r{i}" for i in range(RUNS)])
    assert errors == []
    assert memory.runs.pending() == {}
    assert log_state(memory.journal.credit) == log_state(replayed_log(memory))


def test_outcomes_stored_in_reverse_fold_in_time_order_without_a_replay() -> None:
    store = OutcomeGate()
    memory = _memory(store)
    reads_before = store.whole_reads
    # Each run's outcome is stored only after every later run's: the store receives
    # them newest first, while the book must fold them oldest first.
    stored = {f"r{i}": threading.Event() for i in range(RUNS)}
    order: list[str] = []

    def newest_first(run_id: str) -> None:
        later = [f"r{i}" for i in range(int(run_id[1:]) + 1, RUNS)]
        for other in later:
            assert stored[other].wait(WAIT), f"{other}'s outcome never arrived"
        order.append(run_id)

    store.before_outcome = newest_first
    original = store.append_journal

    def append(namespace: str, entries: Sequence[JournalEntry]) -> None:
        original(namespace, entries)
        for entry in entries:
            if entry.entry_id == outcome_entry_id(entry.run_id):
                stored[entry.run_id].set()

    store.append_journal = append  # type: ignore[method-assign]
    # Started oldest first, so their times are in run order (the clock ticks per call).
    errors = _credit_at_once(memory, [f"r{i}" for i in range(RUNS)])
    assert errors == []
    assert order == [f"r{i}" for i in reversed(range(RUNS))]
    log = memory.journal.credit
    assert store.whole_reads == reads_before  # folded one by one: no replay was needed
    assert [e.run_id for e in log.credits()] == [f"r{i}" for i in range(RUNS)]
    assert log_state(log) == log_state(replayed_log(memory))


def test_a_checkpoint_waits_for_an_outcome_in_flight_and_sums_it_up() -> None:
    store = OutcomeGate()
    memory = _memory(store)
    crediting, release = _crediting_r0_held(memory, store)
    saving = threading.Thread(target=memory.journal.checkpoint)
    saving.start()
    saving.join(0.3)
    assert saving.is_alive()  # the outcome is stored but not folded in: it waits
    store.before_outcome = lambda run_id: None
    release.set()
    crediting.join(WAIT)
    saving.join(WAIT)
    assert not crediting.is_alive()
    assert not saving.is_alive()
    assert replayed_checkpoint(store, memory.namespace) == []
    reopened = EpisodicMemory(store=store, clock=lambda: 1_000_100.0)
    assert [e.run_id for e in reopened.runs.log()] == ["r0"]
    assert reopened.runs.utilities() == memory.runs.utilities()


def test_an_outcome_whose_write_fails_blocks_nothing_after_it() -> None:
    store = OutcomeGate()
    memory = _memory(store)

    def fails(run_id: str) -> None:
        if run_id == "r0":
            msg = "the store went away"
            raise ConnectionError(msg)

    store.before_outcome = fails
    with pytest.raises(ConnectionError):
        memory.runs.credit("r0", 1.0)
    # Nothing is left in flight: later outcomes fold, the journal can be summed up.
    errors = _credit_at_once(memory, ["r1", "r2", "r3"])
    assert errors == []
    memory.journal.checkpoint()
    assert replayed_checkpoint(store, memory.namespace) == []
    assert set(memory.runs.pending()) == {"r0", "r4", "r5"}
    store.before_outcome = lambda run_id: None
    memory.runs.credit("r0", 1.0)  # the run is still open: credited once the store is back
    assert log_state(memory.journal.credit) == log_state(replayed_log(memory))


def test_two_memories_crediting_one_run_at_once_credit_it_once() -> None:
    store = OutcomeGate()
    first = _memory(store)
    second = EpisodicMemory(store=store, clock=lambda: 1_000_050.0)
    together = threading.Barrier(2, timeout=WAIT)
    store.before_outcome = lambda run_id: together.wait()
    results: list[object] = []

    def credit(memory: EpisodicMemory, reward: float) -> None:
        try:
            results.append(memory.runs.credit("r0", reward))
        except CreditError as error:
            results.append(error)

    threads = [
        threading.Thread(target=credit, args=(first, 1.0)),
        threading.Thread(target=credit, args=(second, 0.0)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
    assert sum(isinstance(result, CreditError) for result in results) == 1
    (outcome,) = [e for e in first.runs.log() if e.run_id == "r0"]
    store.before_outcome = lambda run_id: None
    for memory in (first, second):
        memory.runs.reload()
        assert log_state(memory.journal.credit) == log_state(replayed_log(memory))
        assert [e for e in memory.runs.log() if e.run_id == "r0"] == [outcome]


def test_a_later_outcome_returns_at_once_and_is_folded_in_after_the_earlier_one() -> None:
    store = OutcomeGate()
    memory = _memory(store)
    first, release = _crediting_r0_held(memory, store)
    # r1 began after r0: its credit returns without waiting for r0's round trips ...
    later = threading.Thread(target=memory.runs.credit, args=("r1", 0.0))
    later.start()
    later.join(WAIT)
    assert not later.is_alive()
    # ... and waits, written and closed, to be folded in after r0.
    log = memory.journal.credit
    assert log.closed_here("r1") is not None
    assert log.book.rows["ep-2"].credited_runs == 0  # shown to r1 only
    release.set()
    first.join(WAIT)
    assert not first.is_alive()
    assert log.latest is not None
    assert log.latest[1] == "r1"
    assert log.book.rows["ep-2"].credited_runs == 1
    assert log_state(log) == log_state(replayed_log(memory))
