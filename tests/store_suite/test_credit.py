"""The credit loop on every store (see ``harness`` in conftest.py).

The journal keeps the first entry under an id and reads per run; through
:class:`EpisodicMemory`, a noted run is credited once, bad rewards and unknown or
settled runs write nothing, credit survives reopening the store, stale open runs are
closed without credit, ``record`` credits the run an episode came from, namespaces
keep their own journals, and a recall that ignores utility is the plain recall.
"""

from __future__ import annotations

import asyncio
import dataclasses
import math

import pytest

from langchain_episodic import EpisodicMemory, EpisodicValueError, RecallOptions
from langchain_episodic.errors import CreditError
from langchain_episodic.model.episode import EpisodeSource, TaskCategory, TaskDescription
from langchain_episodic.stores import EpisodeStore
from langchain_episodic.stores.base import JournalEntry
from tests.helpers.episodes import DAY, QUERIES, corpus
from tests.helpers.stores import StoreHarness

NOW = 3 * DAY
TASK = TaskDescription("Fix the login bug where sessions expire too early", TaskCategory.DEBUGGING)


class Clock:
    """A clock a test moves by hand."""

    def __init__(self, now: float = NOW) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def memory_on(
    harness: StoreHarness,
    clock: Clock | None = None,
    store: EpisodeStore | None = None,
    **kwargs: object,
) -> EpisodicMemory:
    return EpisodicMemory(
        store=store if store is not None else harness.open(),
        clock=clock if clock is not None else Clock(),
        **kwargs,  # type: ignore[arg-type]
    )


def journal(memory: EpisodicMemory, run_id: str | None = None) -> set[JournalEntry]:
    return set(memory.store.read_journal(memory.namespace, run_id))


def snapshot(memory: EpisodicMemory) -> tuple[object, ...]:
    """Everything credit says, to compare before and after a refused call."""
    return (
        memory.runs.log(),
        memory.runs.pending(),
        {k: dataclasses.astuple(v) for k, v in memory.runs.utilities().items()},
        journal(memory),
    )


def test_journal_entries_round_trip_and_the_first_under_an_id_is_kept(
    harness: StoreHarness,
) -> None:
    store = harness.open()
    EpisodicMemory(store=store, namespace="log").record_many(corpus(2))
    assert store.read_journal("log") == []
    entries = [
        JournalEntry("injection:run-1:a", "run-1", '{"shown": ["ep-0"]}'),
        JournalEntry("injection:run-1:b", "run-1", '{"shown": []}'),
        JournalEntry("outcome:run ü/2", "run ü/2", 'Ünïcode "quotes" \\ and\nnewlines 🙂'),
        JournalEntry("outcome:run-3", "run-3", "x" * 5_000),
    ]
    store.append_journal("log", entries)
    store.append_journal("log", [])  # nothing to add: nothing happens
    assert sorted(store.read_journal("log"), key=lambda e: e.entry_id) == sorted(
        entries, key=lambda e: e.entry_id
    )
    # A second entry under a stored id (a second outcome for run 3) is not written.
    store.append_journal(
        "log",
        [
            JournalEntry("outcome:run-3", "run-3", "the second outcome"),
            JournalEntry("outcome:run-4", "run-4", "new"),
        ],
    )
    assert len(store.read_journal("log")) == 5
    assert store.read_journal("log", "run-3") == [entries[3]]
    assert store.read_journal("log", "run-4") == [JournalEntry("outcome:run-4", "run-4", "new")]
    assert set(store.read_journal("log", "run-1")) == set(entries[:2])
    assert store.read_journal("log", "run ü/2") == [entries[2]]
    assert store.read_journal("log", "run") == []  # a prefix of a run id is another run
    assert store.read_journal("log", "nobody") == []
    # The journal is not made of episodes.
    assert store.count("log") == 2
    reopened = harness.open()
    assert set(reopened.read_journal("log")) == set(store.read_journal("log"))
    assert reopened.read_journal("log", "run-3") == [entries[3]]


def test_a_noted_run_is_credited_once_and_moves_utility(harness: StoreHarness) -> None:
    clock = Clock()
    memory = memory_on(harness, clock)
    memory.record_many(corpus(12))
    assert memory.runs.log() == ()
    assert memory.runs.utilities() == {}
    assert memory.runs.pending() == {}
    # A baseline: runs of the same category, shown only "ep-5", that fail.
    for i in range(3):
        memory.runs.note(f"base-{i}", ["ep-5"], TASK)
        clock.now += 1
        memory.runs.credit(f"base-{i}", 0.0)
    shown = memory.runs.note("run-1", ["ep-1", "ep-10"], TASK, thread_id="t-1")
    assert (shown.run_id, shown.episode_ids, shown.category) == (
        "run-1",
        ("ep-1", "ep-10"),
        "debugging",
    )
    assert (shown.at, shown.thread_id) == (clock.now, "t-1")
    assert memory.runs.pending() == {"run-1": (shown,)}
    assert memory.runs.utility("ep-1").injections == 1
    assert memory.runs.utility("ep-1").estimate(clock.now) == 0.5  # shown, not yet credited
    clock.now += 10
    event = memory.runs.credit("run-1", 0.9, by="ci")
    assert (event.run_id, event.reward, event.episode_ids, event.by, event.at) == (
        "run-1",
        0.9,
        ("ep-1", "ep-10"),
        "ci",
        clock.now,
    )
    assert memory.runs.log()[-1] == event
    assert len(memory.runs.log()) == 4
    assert memory.runs.pending() == {}
    for episode_id in ("ep-1", "ep-10"):
        row = memory.runs.utility(episode_id)
        assert (row.injections, row.credited_runs, row.reward_sum) == (1, 1, 0.9)
        assert row.mean_advantage is not None
        assert row.mean_advantage > 0.5
        assert row.estimate(clock.now) == pytest.approx(2 / 3)  # one full "helped" run
    assert memory.runs.utility("ep-5").estimate(clock.now) < 0.5
    assert memory.runs.utility("ep-2").credited_runs == 0
    assert set(memory.runs.utilities()) == {"ep-1", "ep-10", "ep-5"}
    # Written to the store: one injection record and one outcome for the run.
    assert len(journal(memory, "run-1")) == 2
    assert len(journal(memory)) == 8

    before = snapshot(memory)
    clock.now += 10
    with pytest.raises(CreditError, match=r"run_id='run-1'.*already credited.*0\.900"):
        memory.runs.credit("run-1", 0.1)
    with pytest.raises(CreditError, match="already credited"):
        memory.runs.credit("run-1", 0.9, by="ci")  # the same outcome again counts nothing either
    with pytest.raises(CreditError, match=r"run_id='run-404'.*no injection record") as caught:
        memory.runs.credit("run-404", 0.5)
    assert (caught.value.run_id, caught.value.namespace) == ("run-404", "default")
    assert snapshot(memory) == before


@pytest.mark.parametrize("reward", [1.5, -0.1, math.nan])
def test_a_reward_outside_zero_to_one_writes_nothing(harness: StoreHarness, reward: float) -> None:
    memory = memory_on(harness)
    memory.record_many(corpus(3))
    memory.runs.note("run-1", ["ep-0"], TASK)
    before = snapshot(memory)
    with pytest.raises(EpisodicValueError, match=r"^reward=") as caught:
        memory.runs.credit("run-1", reward)
    assert not isinstance(caught.value, CreditError)
    with pytest.raises(EpisodicValueError, match=r"^reward="):
        memory.runs.credit("run-404", reward)  # checked before the run is looked up
    assert snapshot(memory) == before
    assert set(memory.runs.pending()) == {"run-1"}
    assert memory.runs.credit("run-1", 1.0).reward == 1.0  # the run is still open


def test_credit_survives_reopening_the_store(harness: StoreHarness) -> None:
    clock = Clock()
    memory = memory_on(harness, clock)
    memory.record_many(corpus(12))
    for i in range(6):
        memory.runs.note(f"run-{i}", [f"ep-{i}", f"ep-{i + 1}"], TASK)
        clock.now += 60
    for i, reward in enumerate([0.2, 1.0, 0.0, 0.7, 0.5]):
        memory.runs.credit(f"run-{i}", reward, by=f"judge-{i % 2}")
        clock.now += 60
    memory.flush()
    reopened = memory_on(harness, clock)
    assert reopened.runs.log() == memory.runs.log()
    assert [e.reward for e in reopened.runs.log()] == [0.2, 1.0, 0.0, 0.7, 0.5]
    assert reopened.runs.pending() == memory.runs.pending()
    assert set(reopened.runs.pending()) == {"run-5"}
    assert set(reopened.runs.utilities()) == {f"ep-{i}" for i in range(7)}
    for episode_id, row in memory.runs.utilities().items():
        again = reopened.runs.utility(episode_id)
        assert (again.injections, again.credited_runs) == (row.injections, row.credited_runs)
        assert again.estimate(clock.now) == pytest.approx(row.estimate(clock.now), rel=1e-12)
    # The reopened memory knows the settled runs and can credit the open one.
    with pytest.raises(CreditError, match="already credited"):
        reopened.runs.credit("run-3", 0.1)
    reopened.runs.credit("run-5", 0.8)
    # ... which the first memory sees as soon as it looks at that run (or reloads).
    with pytest.raises(CreditError, match="already credited"):
        memory.runs.credit("run-5", 0.3)
    assert memory.runs.log() == reopened.runs.log()
    fresh = memory_on(harness, clock)
    assert [e.run_id for e in fresh.runs.log()] == [f"run-{i}" for i in range(6)]


def test_stale_open_runs_are_closed_without_credit(harness: StoreHarness) -> None:
    clock = Clock()
    memory = memory_on(harness, clock, open_run_ttl=3_600.0)
    memory.record_many(corpus(4))
    memory.runs.note("crashed", ["ep-0", "ep-1"], TASK)
    clock.now += 3_000
    memory.runs.note("recent", ["ep-1"], TASK)
    clock.now += 1_000  # "crashed" is 4,000 s old, "recent" 1,000 s
    memory.flush()
    reopened = memory_on(harness, clock, open_run_ttl=3_600.0)
    assert set(reopened.runs.pending()) == {"recent"}
    [closed] = reopened.runs.log()
    assert (closed.run_id, closed.reward, closed.by) == ("crashed", None, "open_run_ttl")
    assert closed.closed_without_credit
    assert closed.at == clock.now
    assert closed.episode_ids == ("ep-0", "ep-1")
    for episode_id in ("ep-0", "ep-1"):
        row = reopened.runs.utility(episode_id)
        assert row.credited_runs == 0
        assert row.estimate(clock.now) == 0.5
    with pytest.raises(CreditError, match=r"'crashed'.*closed without credit"):
        reopened.runs.credit("crashed", 1.0)
    with pytest.raises(CreditError, match="closed without credit"):
        memory.runs.credit("crashed", 1.0)  # the first memory reads the outcome, too
    assert reopened.runs.credit("recent", 1.0).reward == 1.0
    assert reopened.runs.utility("ep-0").credited_runs == 0
    assert reopened.runs.utility("ep-1").credited_runs == 1
    # Closing is idempotent: a third memory closes nothing more.
    clock.now += 10 * 3_600
    third = memory_on(harness, clock, open_run_ttl=3_600.0)
    assert third.runs.expire() == 0
    assert [(e.run_id, e.reward) for e in third.runs.log()] == [
        ("crashed", None),
        ("recent", 1.0),
    ]
    # With no time to live, nothing is ever closed; by hand, with an age, it is.
    never = memory_on(harness, clock, open_run_ttl=None)
    never.runs.note("slow", ["ep-2"], TASK)
    clock.now += 365 * DAY
    assert set(memory_on(harness, clock, open_run_ttl=None).runs.pending()) == {"slow"}
    assert never.runs.expire(older_than=30 * DAY) == 1
    assert never.runs.pending() == {}


def test_recording_an_episode_credits_the_run_it_came_from(harness: StoreHarness) -> None:
    clock = Clock()
    memory = memory_on(harness, clock)
    episodes = corpus(6)
    memory.record_many(episodes[:4])
    memory.runs.note("run-7", ["ep-0", "ep-2"], TASK)
    clock.now += 5
    produced = dataclasses.replace(episodes[4], source=EpisodeSource(agent="coder", run_id="run-7"))
    assert memory.record(produced) is True
    [event] = memory.runs.log()
    assert (event.run_id, event.reward, event.episode_ids) == (
        "run-7",
        produced.feedback.reward,
        ("ep-0", "ep-2"),
    )
    assert memory.runs.pending() == {}
    # Recording it again is a no-op, and credits nothing twice.
    assert memory.record(produced) is False
    assert memory.runs.log() == (event,)
    # An episode from a run no injection names (or one already credited) is recorded,
    # and credit is left alone.
    stranger = dataclasses.replace(episodes[5], source=EpisodeSource(run_id="run-unknown"))
    before = journal(memory)
    assert memory.record(stranger) is True
    assert len(memory) == 6
    assert memory.runs.log() == (event,)
    assert journal(memory) == before
    late = dataclasses.replace(
        corpus(7)[6], source=EpisodeSource(run_id="run-7")
    )  # a second episode of the credited run
    assert memory.record(late) is True
    assert memory.runs.log() == (event,)


def test_namespaces_keep_separate_journals(harness: StoreHarness) -> None:
    store = harness.open()
    clock = Clock()
    ours = memory_on(harness, clock, store=store, namespace="ours")
    theirs = memory_on(harness, clock, store=store, namespace="$or")
    ours.record_many(corpus(3))
    theirs.record_many(corpus(3))
    ours.runs.note("run-1", ["ep-0"], TASK)
    assert theirs.runs.pending() == {}
    with pytest.raises(CreditError, match=r"namespace='\$or'.*no injection record"):
        theirs.runs.credit("run-1", 1.0)
    theirs.runs.note("run-1", ["ep-1"], TASK)
    ours.runs.credit("run-1", 1.0)
    assert set(theirs.runs.pending()) == {"run-1"}  # the same run id, another journal
    assert theirs.runs.credit("run-1", 0.0).episode_ids == ("ep-1",)
    assert [(e.reward, e.episode_ids) for e in ours.runs.log()] == [(1.0, ("ep-0",))]
    assert [(e.reward, e.episode_ids) for e in theirs.runs.log()] == [(0.0, ("ep-1",))]
    assert set(ours.runs.utilities()) == {"ep-0"}
    assert set(theirs.runs.utilities()) == {"ep-1"}
    assert len(store.read_journal("ours")) == len(store.read_journal("$or")) == 2
    assert store.read_journal("nobody") == []
    names = set(store.namespaces())
    assert {"ours", "$or"} <= names  # a journal is not a namespace of its own
    assert not any("journal" in name for name in names)
    reopened = harness.open()
    assert memory_on(harness, clock, store=reopened, namespace="ours").runs.log() == (
        ours.runs.log()
    )
    assert memory_on(harness, clock, store=reopened, namespace="nobody").runs.log() == ()


def test_a_recall_without_utility_is_the_plain_recall(
    harness: StoreHarness, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = harness.open()
    clock = Clock()
    plain = memory_on(harness, clock, store=store, namespace="plain")
    credited = memory_on(harness, clock, store=store, namespace="credited")
    episodes = corpus(36)
    plain.record_many(episodes)
    credited.record_many(episodes)
    # A journal that makes some recalled episodes look very good, others very bad.
    tops = [credited.recall(q, top_k=3, current_time=NOW) for q in QUERIES]
    helpful = {hits[0].episode.episode_id for hits in tops if hits}
    harmful = {hit.episode.episode_id for hits in tops for hit in hits[1:]} - helpful
    assert helpful
    assert harmful
    for i in range(8):
        credited.runs.note(f"good-{i}", sorted(helpful), TASK)
        credited.runs.note(f"bad-{i}", sorted(harmful), TASK)
        clock.now += 1
        credited.runs.credit(f"good-{i}", 1.0)
        credited.runs.credit(f"bad-{i}", 0.0)
    assert all(credited.runs.utility(e).estimate(clock.now) > 0.75 for e in helpful)
    assert all(credited.runs.utility(e).estimate(clock.now) < 0.25 for e in harmful)

    # A recall reads nothing of the journal: the memory holds the table it needs.
    def no_journal(*args: object) -> list[JournalEntry]:
        raise AssertionError("a recall read the journal")

    monkeypatch.setattr(credited.store, "read_journal", no_journal)
    changed = False
    for query in QUERIES:
        options = RecallOptions(top_k=3, current_time=NOW)
        expected = plain.recall(query, options=options)
        ignoring = credited.recall(query, options=options.replace(use_utility=False))
        assert [(r.episode, r.similarity, r.relevant) for r in ignoring] == [
            (r.episode, r.similarity, r.relevant) for r in expected
        ]
        for mine, theirs in zip(ignoring, expected, strict=True):
            assert mine.priority == pytest.approx(theirs.priority, abs=1e-9)
        assert (
            credited.recall(query, options=options.replace(use_utility=False), explain=True).utility
            == {}
        )
        # The journal is there, and used when asked: utility changes the priorities.
        using = credited.recall(query, options=options)
        changed |= [r.priority for r in using] != [r.priority for r in expected]
        # The article's ranking ignores utility altogether.
        article = RecallOptions(top_k=3, current_time=NOW, ranking="article")
        assert credited.recall(query, options=article) == plain.recall(query, options=article)
    assert changed


def test_utilities_do_not_depend_on_the_order_runs_were_credited_in(
    harness: StoreHarness,
) -> None:
    # One instant for every credit (a stopped or coarse clock): the live memory, which
    # counts credits as they come, must agree with one that reads the journal back.
    clock = Clock()
    memory = memory_on(harness, clock)
    memory.record_many(corpus(6))
    for run_id, shown in (("run-c", "ep-0"), ("run-b", "ep-1"), ("run-a", "ep-2")):
        memory.runs.note(run_id, [shown, "ep-5"], TASK)
    for run_id, reward in (("run-c", 0.4), ("run-b", 0.3), ("run-a", 0.7)):
        memory.runs.credit(run_id, reward)
    reopened = memory_on(harness, clock)
    assert {k: dataclasses.astuple(v) for k, v in memory.runs.utilities().items()} == {
        k: dataclasses.astuple(v) for k, v in reopened.runs.utilities().items()
    }


def test_the_async_twins_note_and_credit_once(harness: StoreHarness) -> None:
    memory = memory_on(harness)
    memory.record_many(corpus(3))

    async def run() -> None:
        shown = await memory.runs.anote("run-1", ["ep-0", "ep-1"], TASK)
        assert shown.episode_ids == ("ep-0", "ep-1")
        event = await memory.runs.acredit("run-1", 0.25, by="async")
        assert (event.reward, event.by) == (0.25, "async")
        with pytest.raises(CreditError, match="already credited"):
            await memory.runs.acredit("run-1", 0.25)

    asyncio.run(run())
    assert [(e.run_id, e.reward) for e in memory_on(harness).runs.log()] == [("run-1", 0.25)]


def test_a_credit_learnt_late_from_another_memory_is_counted_in_time_order(
    harness: StoreHarness,
) -> None:
    store = harness.open()
    late_clock, early_clock = Clock(NOW + 100), Clock(NOW + 10)
    first = memory_on(harness, late_clock, store=store)
    second = memory_on(harness, early_clock, store=store)
    first.record_many(corpus(6))
    for run_id, shown in (("run-1", "ep-0"), ("run-2", "ep-1"), ("run-3", "ep-0")):
        first.runs.note(run_id, [shown, "ep-5"], TASK)
    first.runs.credit("run-2", 0.9)  # at NOW + 100
    second.runs.credit("run-1", 0.2)  # earlier, by another memory (its clock is behind)
    with pytest.raises(CreditError, match=r"'run-1'.*already credited.*0\.200"):
        first.runs.credit("run-1", 0.8)  # learns of it here, out of time order
    first.runs.credit("run-3", 0.6)
    reopened = memory_on(harness, late_clock)
    assert first.runs.log() == reopened.runs.log()
    assert [e.run_id for e in first.runs.log()] == ["run-1", "run-2", "run-3"]
    assert {k: dataclasses.astuple(v) for k, v in first.runs.utilities().items()} == {
        k: dataclasses.astuple(v) for k, v in reopened.runs.utilities().items()
    }
    assert first.runs.utility("ep-5").credited_runs == 3


def test_holdout_runs_survive_reopening_and_stay_holdout_runs(harness: StoreHarness) -> None:
    import numpy as np  # noqa: PLC0415

    from langchain_episodic import build_replay  # noqa: PLC0415

    clock = Clock()
    memory = memory_on(harness, clock, holdout=0.5, rng=np.random.default_rng(11))
    memory.record_many(corpus(12))
    held = []
    for i in range(12):
        replay = build_replay(memory, TASK, run_id=f"run-{i}")
        if replay.holdout:
            held.append(f"run-{i}")
            assert replay.prompt == ""
        clock.now += 60
        if i < 10:
            memory.runs.credit(f"run-{i}", 0.3 if replay.holdout else 0.9)
    assert held
    memory.flush()
    reopened = memory_on(harness, clock, holdout=0.5, rng=np.random.default_rng(99))
    assert reopened.runs.log() == memory.runs.log()
    assert {e.run_id for e in reopened.runs.log() if e.holdout} == {
        run for run in held if int(run.split("-")[1]) < 10
    }
    # What the journal says of a run wins over a new draw, in a memory with another seed.
    for i in range(12):
        assert reopened.runs.is_holdout(f"run-{i}") == (f"run-{i}" in held)
    lift = reopened.runs.lift(min_holdout=1)
    assert lift.overall.holdout.runs == sum(1 for run in held if int(run.split("-")[1]) < 10)
    assert lift.overall.reward_lift == pytest.approx(0.6)


def test_probation_and_pins_on_every_store(harness: StoreHarness) -> None:
    clock = Clock()
    memory = memory_on(harness, clock)
    memory.record_many(corpus(4))
    for index in range(6):
        memory.runs.note(f"base-{index}", ["ep-1"], TASK)
        memory.runs.credit(f"base-{index}", 0.9)
        clock.now += 60
        memory.runs.note(f"bad-{index}", ["ep-0"], TASK)
        memory.runs.credit(f"bad-{index}", 0.0)
        clock.now += 60
    assert memory.runs.demoted() == ("ep-0",)
    assert "ep-0" not in [r.episode.episode_id for r in memory.recall(TASK, top_k=4, fetch_k=4)]
    memory.quarantine.pin("ep-0", "checked by a person", by="ops")
    memory.flush()
    reopened = memory_on(harness, clock)
    assert list(reopened.quarantine.pinned()) == ["ep-0"]
    assert reopened.runs.demoted() == ()
    reopened.quarantine.unpin("ep-0", "the rule again")
    assert reopened.runs.demoted() == ("ep-0",)
