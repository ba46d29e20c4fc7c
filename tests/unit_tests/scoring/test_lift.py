"""Holdout runs (shown no memory by chance) and the lift report measured against them."""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np
import pytest

from langchain_episodic import (
    EpisodicMemory,
    HashingEmbeddings,
    RecallOptions,
    TaskDescription,
    build_replay,
)
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.credit import (
    CreditEvent,
    Injection,
    decode_entry,
    encode_credit,
    encode_injection,
)
from langchain_episodic.scoring.credit import HOLDOUT_BASELINE_RUNS, book_from
from langchain_episodic.scoring.lift import lift_report, welch_interval
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import make_episode

NOW = 1_700_000_000.0
TASK = TaskDescription("Implement a login form with validation", "code_generation")


def memory_with(holdout: float, seed: int = 0) -> EpisodicMemory:
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(),
        embeddings=HashingEmbeddings(),
        clock=lambda: NOW,
        holdout=holdout,
        rng=np.random.default_rng(seed),
    )
    memory.record(make_episode(episode_id="login-1", description="Implement a login form"))
    return memory


# ------------------------------------------------------------------ the journal


def test_a_holdout_injection_round_trips_and_others_keep_their_old_bytes() -> None:
    held = Injection("run-1", (), "task", "debugging", 1.0, holdout=True)
    assert decode_entry(*encode_injection(held)) == held
    shown = Injection("run-2", ("e1",), "task", "debugging", 1.0)
    assert "holdout" not in encode_injection(shown)[2]
    event = CreditEvent("run-1", 0.4, (), "debugging", 2.0, holdout=True)
    assert decode_entry(*encode_credit(event)) == event


def test_a_holdout_run_shows_nothing_and_holdout_is_a_bool() -> None:
    with pytest.raises(EpisodicValueError, match="holdout run is shown no memory"):
        Injection("run", ("e1",), "task", "debugging", 1.0, holdout=True)
    with pytest.raises(EpisodicValueError, match="holdout=1"):
        Injection("run", (), "task", "debugging", 1.0, holdout=1)  # type: ignore[arg-type]


# ------------------------------------------------------------------ the draw


@pytest.mark.parametrize("holdout", [-0.1, 1.0, 1.5, float("nan")])
def test_a_holdout_fraction_outside_0_1_is_refused(holdout: float) -> None:
    with pytest.raises(EpisodicValueError, match="holdout="):
        EpisodicMemory(store=InMemoryEpisodeStore(), holdout=holdout)


def test_an_rng_of_another_type_is_refused() -> None:
    with pytest.raises(TypeError, match="rng="):
        EpisodicMemory(store=InMemoryEpisodeStore(), holdout=0.1, rng=42)  # type: ignore[arg-type]


def test_the_draw_is_seeded_kept_per_run_and_near_its_fraction() -> None:
    first, again = memory_with(0.3, seed=5), memory_with(0.3, seed=5)
    runs = [f"run-{i}" for i in range(400)]
    drawn = [first.runs.is_holdout(run) for run in runs]
    assert drawn == [again.runs.is_holdout(run) for run in runs]  # reproducible
    assert drawn == [first.runs.is_holdout(run) for run in runs]  # kept per run
    assert 0.22 < sum(drawn) / len(drawn) < 0.38
    assert not any(memory_with(0.0).runs.is_holdout(run) for run in runs)


def test_a_holdout_replay_recalls_nothing_and_notes_a_holdout_run() -> None:
    memory = memory_with(0.5, seed=1)
    held = next(f"run-{i}" for i in range(50) if memory.runs.is_holdout(f"run-{i}"))
    shown = next(f"run-{i}" for i in range(50) if not memory.runs.is_holdout(f"run-{i}"))
    replay = build_replay(memory, TASK, run_id=held, include_strategy=True)
    assert replay.holdout
    assert (replay.prompt, replay.results, replay.lessons) == ("", (), ())
    assert replay.strategy is not None
    assert replay.strategy.reason == "holdout"
    assert memory.runs.pending()[held][0].holdout
    # The same run asked again (a tool called twice) stays a holdout run.
    assert build_replay(memory, TASK, run_id=held).holdout
    normal = build_replay(memory, TASK, run_id=shown)
    assert not normal.holdout
    assert [r.episode.episode_id for r in normal.results] == ["login-1"]
    # Without a run id nothing can be credited: no holdout.
    assert not build_replay(memory, TASK).holdout


def test_a_holdout_run_is_credited_once_credits_no_episode_and_is_the_baseline() -> None:
    memory = memory_with(0.5, seed=3)
    rewards = {}
    for index in range(40):
        run = f"run-{index}"
        replay = build_replay(memory, TASK, run_id=run)
        rewards[run] = 0.3 if replay.holdout else 0.8
        memory.runs.credit(run, rewards[run])
    held = [e for e in memory.runs.log() if e.holdout]
    assert held
    assert all(e.episode_ids == () for e in held)
    assert memory.runs.close(held[0].run_id, 1.0) == held[0]  # once: nothing double-counted
    row = memory.runs.utility("login-1")
    assert row.credited_runs == 40 - len(held)
    # Against the holdout runs (0.3) every run with memory (0.8) has a clear advantage.
    assert row.mean_advantage is not None
    assert row.mean_advantage > 0.3
    assert memory.runs.utility("login-1").estimate(NOW) > 0.9


def test_the_middleware_state_says_whether_the_run_was_held_out() -> None:
    from langchain_episodic.integrations._run_state import run_state  # noqa: PLC0415

    memory = memory_with(0.5, seed=2)
    held = next(f"run-{i}" for i in range(50) if memory.runs.is_holdout(f"run-{i}"))
    replay = build_replay(memory, TASK, run_id=held)
    state = run_state(replay, memory, replay.task, 1)
    assert state["holdout"] is True
    assert state["prompt"] == ""


def test_the_baseline_switches_to_holdout_runs_once_a_category_has_enough() -> None:
    def shown(i: int, reward: float) -> CreditEvent:
        return CreditEvent(f"s{i}", reward, ("e1",), "debugging", float(i))

    # Without holdout runs: the category's runs that did not show e1 (none: the prior).
    plain = book_from([shown(i, 0.9) for i in range(10)])
    held = [
        CreditEvent(f"h{i}", 0.1, (), "debugging", float(i), holdout=True)
        for i in range(HOLDOUT_BASELINE_RUNS)
    ]
    later = [shown(100 + i, 0.9) for i in range(10)]
    causal = book_from(held + later)
    assert causal.rows["e1"].mean_advantage == pytest.approx(0.9 - (0.5 + 0.1 * 5) / 6, abs=0.1)
    assert causal.rows["e1"].mean_advantage > plain.rows["e1"].mean_advantage  # type: ignore[operator]


# ------------------------------------------------------------------ the report


def test_lift_says_not_enough_until_there_are_holdout_runs() -> None:
    memory = memory_with(0.0)
    report = memory.runs.lift()
    assert not report.enough
    assert report.note == "not enough holdout runs yet: 0 of the 10 needed"
    assert report.overall.reward_lift is None


def test_lift_reports_overall_per_category_over_time_and_per_item() -> None:
    memory = memory_with(0.4, seed=9)
    rng = np.random.default_rng(0)
    for index in range(120):
        run = f"run-{index}"
        replay = build_replay(memory, TASK, run_id=run)
        memory.runs.credit(
            run, float(np.clip(rng.normal(0.45 if replay.holdout else 0.7, 0.1), 0, 1))
        )
    report = memory.runs.lift(periods=3)
    assert report.enough
    assert report.note == ""
    assert report.overall.with_memory.runs + report.overall.holdout.runs == 120
    assert report.overall.reward_lift == pytest.approx(0.25, abs=0.06)
    low, high = report.overall.reward_interval  # type: ignore[misc]
    assert low < 0.25 < high
    assert report.overall.significant
    assert [lift.label for lift in report.by_category] == ["code_generation"]
    assert len(report.over_time) == 3
    assert [(item.item_id, item.kind) for item in report.items] == [("login-1", "episode")]


def test_the_reported_interval_covers_the_true_lift_in_at_least_90_percent_of_seeds() -> None:
    # Simulated: rewards with memory ~ N(0.6 + effect, 0.15), holdout runs ~ N(0.6, 0.15).
    effect, covered = 0.08, 0
    for seed in range(200):
        rng = np.random.default_rng(seed)
        events = []
        for index in range(200):
            holdout = bool(rng.random() < 0.1)
            mean = 0.6 + (0.0 if holdout else effect)
            reward = float(np.clip(rng.normal(mean, 0.15), 0.0, 1.0))
            ids = () if holdout else ("e1",)
            events.append(CreditEvent(f"r{index}", reward, ids, "x", float(index), holdout=holdout))
        interval = lift_report(events).overall.reward_interval
        assert interval is not None
        covered += interval[0] <= effect <= interval[1]
    assert covered / 200 >= 0.9


def test_welch_interval_needs_two_values_a_side() -> None:
    assert welch_interval([1.0], [0.0, 1.0]) is None
    assert welch_interval([1.0, 1.0], [0.0, 0.0]) == (1.0, 1.0, 1.0)


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"min_holdout": 0}, "min_holdout"),
        ({"success_at": 2}, "success_at"),
        ({"periods": 0}, "periods"),
    ],
)
def test_bad_report_options_are_refused_by_name(options: dict[str, float], named: str) -> None:
    with pytest.raises(EpisodicValueError, match=named):
        memory_with(0.1).runs.lift(**options)


# ------------------------------------------------------------------ the command line


def test_the_cli_lift_command_prints_and_writes_json(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from langchain_episodic import ChromaEpisodeStore  # noqa: PLC0415
    from langchain_episodic.cli import main  # noqa: PLC0415

    store = ChromaEpisodeStore(path=tmp_path / "memory")
    memory = EpisodicMemory(store=store, holdout=0.3, rng=np.random.default_rng(4))
    memory.record(make_episode(episode_id="login-1", description="Implement a login form"))
    for index in range(60):
        run = f"run-{index}"
        replay = build_replay(memory, TASK, run_id=run)
        memory.runs.credit(run, 0.4 if replay.holdout else 0.9)
    store.close()
    assert main(["--path", str(tmp_path / "memory"), "lift"]) == 0
    out = capsys.readouterr().out
    assert "holdout runs (shown no memory)" in out
    assert "+0.500" in out
    assert main(["--path", str(tmp_path / "memory"), "lift", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)
    assert payload["enough"] is True
    assert payload["overall"]["reward_lift"] == pytest.approx(0.5)
    assert main(["--path", str(tmp_path / "memory"), "lift", "--min-holdout", "1000"]) == 0
    assert "not enough holdout runs yet" in capsys.readouterr().out
    assert main(["--path", str(tmp_path / "memory"), "stats"]) == 0
    held = payload["overall"]["holdout"]["runs"]
    assert f"60 credited ({held} holdout: shown no memory), 0 open" in capsys.readouterr().out


# ------------------------------------------------------------------ the value stage


def test_the_default_lets_an_episode_that_keeps_helping_beat_a_closer_look_alike() -> None:
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: NOW
    )
    memory.record_many(
        [
            make_episode(
                episode_id="look-alike", description="Implement a login form with validation"
            ),
            make_episode(
                episode_id="keeps-helping", description="Validate the fields of a login form"
            ),
        ]
    )
    first = memory.recall(TASK, top_k=1)
    assert [r.episode.episode_id for r in first] == ["look-alike"]  # nothing learnt: similarity
    for index in range(6):
        memory.runs.note(f"a{index}", ["look-alike"], TASK)
        memory.runs.credit(f"a{index}", 0.1)
        memory.runs.note(f"b{index}", ["keeps-helping"], TASK)
        memory.runs.credit(f"b{index}", 0.9)
    learnt = memory.recall(TASK, top_k=1)
    assert [r.episode.episode_id for r in learnt] == ["keeps-helping"]
    # Without credit the closer one comes first again.
    assert memory.recall(TASK, top_k=1, use_utility=False)[0].episode.episode_id == "look-alike"


def test_credit_evidence_widens_the_candidates_and_the_report_says_how_many() -> None:
    from langchain_episodic import RecallOptions  # noqa: PLC0415

    assert RecallOptions().fetch_count == 6
    assert RecallOptions().candidate_count(learning=True) == 12
    assert RecallOptions(fetch_k=5).candidate_count(learning=True) == 5
    assert RecallOptions(use_utility=False).candidate_count(learning=True) == 6
    memory = memory_with(0.0)
    report = memory.recall("Bake a sourdough loaf", options=RecallOptions(), explain=True)
    assert report.results == ()
    assert report.candidates == 6  # no credit evidence yet
    assert [r.episode_id for r in report.rejected] == ["login-1"]
    memory.runs.note("r1", ["login-1"], TASK)
    memory.runs.credit("r1", 0.9)
    assert memory.recall(TASK, options=RecallOptions(), explain=True).candidates == 12


def test_the_simulated_default_and_its_oracle_run() -> None:
    from simulation import run_credit_variant  # noqa: PLC0415

    runs = {
        variant: run_credit_variant(variant, n_tasks=40, seed=0)
        for variant in (
            "relevance_utility",
            "previous_default",
            "relevance_holdout",
            "relevance_explore",
            "relevance_oracle",
        )
    }
    assert all(len(run.rewards) == 40 for run in runs.values())
    # The oracle shows the truly best of the same candidates: never worse on average.
    assert runs["relevance_oracle"].mean_reward >= runs["relevance_utility"].mean_reward
    with pytest.raises(EpisodicValueError, match="relevance_oracle"):
        run_credit_variant("nope", n_tasks=1)


# ------------------------------------------------------------------ probation


def harmful_memory() -> EpisodicMemory:
    # A clock that moves a second per reading: credit replays runs in time order.
    ticks = itertools.count(NOW)
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: next(ticks)
    )
    memory.record_many(
        [
            make_episode(episode_id="bad", description="Implement a login form with validation"),
            make_episode(episode_id="good", description="Validate the fields of a login form"),
        ]
    )
    return memory


def runs_until_demoted(memory: EpisodicMemory, shown: str, reward: float, baseline: float) -> int:
    for index in range(40):
        memory.runs.note(f"base-{index}", ["good"], TASK)
        memory.runs.credit(f"base-{index}", baseline)
        memory.runs.note(f"bad-{index}", [shown], TASK)
        memory.runs.credit(f"bad-{index}", reward)
        if shown in memory.runs.demoted():
            return index + 1
    return -1


def test_a_confidently_harmful_episode_goes_on_probation_and_a_pin_brings_it_back() -> None:
    memory = harmful_memory()
    assert runs_until_demoted(memory, "bad", 0.0, 0.9) == 5  # PROBATION_MIN_RUNS
    ids = [r.episode.episode_id for r in memory.recall(TASK, top_k=2)]
    assert "bad" not in ids
    assert "bad" in [row.episode_id for row in memory.runs.harmful()]
    assert len(memory) == 2  # never deleted
    # Probation is credit's: a recall without credit, and the article's, are the plain ones.
    for plain in ({"use_utility": False}, {"ranking": "article"}):
        assert "bad" in [r.episode.episode_id for r in memory.recall(TASK, top_k=2, **plain)]  # type: ignore[arg-type]
    assert memory.quarantine.pin("bad", "a person checked it", by="ops") == 1
    assert memory.runs.demoted() == ()
    assert "bad" in [r.episode.episode_id for r in memory.recall(TASK, top_k=2)]
    # Quarantine still wins over a pin.
    memory.quarantine.add("bad", "poisoned")
    assert "bad" not in [r.episode.episode_id for r in memory.recall(TASK, top_k=2)]
    memory.quarantine.release("bad", "not poisoned")
    assert memory.quarantine.unpin("bad", "back to the rule") == 1
    assert memory.runs.demoted() == ("bad",)
    assert list(memory.quarantine.pinned()) == []


def test_a_mildly_harmful_episode_needs_more_runs_and_a_mixed_one_is_never_demoted() -> None:
    assert runs_until_demoted(harmful_memory(), "bad", 0.6, 0.9) == 13
    assert runs_until_demoted(harmful_memory(), "bad", 0.85, 0.9) == -1


def test_a_demoted_lesson_is_not_shown() -> None:
    from langchain_episodic.model.lesson import Lesson, LessonSource  # noqa: PLC0415

    memory = harmful_memory()
    lesson = Lesson.create(
        title="Skip validation",
        applies_when="a login form",
        do="accept empty passwords",
        sources=(LessonSource("bad"),),
        created_at=NOW,
    )
    memory.lessons.add([lesson])
    assert memory.lessons.recall(TASK, 1) == (lesson,)
    assert runs_until_demoted(memory, lesson.lesson_id, 0.0, 0.9) == 5
    assert memory.lessons.recall(TASK, 1) == ()
    assert memory.lessons.status(lesson.lesson_id) == "active"  # stored and listed, not shown


def test_pins_survive_reopening_and_unknown_ids_are_refused() -> None:
    store = InMemoryEpisodeStore()
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings(), clock=lambda: NOW)
    memory.record(make_episode(episode_id="e1"))
    memory.quarantine.pin("e1", "keep")
    assert list(
        EpisodicMemory(store=store, embeddings=HashingEmbeddings()).quarantine.pinned()
    ) == ["e1"]
    with pytest.raises(EpisodicValueError, match="nope"):
        memory.quarantine.pin("nope", "keep")
    with pytest.raises(EpisodicValueError, match="reason"):
        memory.quarantine.pin("e1", "")


# ------------------------------------------------------------------ backing off


_TICKS = itertools.count()


def _hurting_memory(store: Any = None, *, hashing: bool = True) -> EpisodicMemory:
    """A memory whose clock moves on at every reading, across reopens (runs in order)."""
    memory = EpisodicMemory(
        store=store if store is not None else InMemoryEpisodeStore(),
        embeddings=HashingEmbeddings() if hashing else None,
        clock=lambda: NOW + next(_TICKS),
        holdout=0.3,
        rng=np.random.default_rng(3),
    )
    memory.record_many(
        [
            make_episode(episode_id="won", description=TASK.description, timestamp=NOW),
            make_episode(
                episode_id="lost", description=TASK.description, timestamp=NOW,
                outcome="failure", reward=0.0,
            ),
            make_episode(
                episode_id="half", description=TASK.description + " again", timestamp=NOW,
                outcome="partial", reward=0.5,
            ),
        ]
    )  # fmt: skip
    return memory


def _credit_runs(memory: EpisodicMemory, count: int, shown: float, held: float) -> None:
    """``count`` runs earning about ``shown`` with memory and ``held`` without."""
    start = len(memory.runs.log())
    for i in range(start, start + count):
        replay = build_replay(memory, TASK, run_id=f"run-{i}", use_lift=False)
        memory.runs.credit(f"run-{i}", (held if replay.holdout else shown) - 0.1 * (i % 2))


def test_where_the_holdout_says_memory_hurts_recall_shows_only_one_success() -> None:
    memory = _hurting_memory()
    assert len(memory.recall(TASK, top_k=3)) == 3
    _credit_runs(memory, 60, shown=0.2, held=0.9)
    report = memory.runs.lift(min_holdout=5)
    assert report.overall.reward_interval is not None
    assert report.overall.reward_interval[1] < 0
    assert report.backing_off == ("all", "code_generation")
    # (use_utility=False: credit has put the episodes shown in those runs on probation.)
    backed = memory.recall(TASK, options=RecallOptions(top_k=3, use_utility=False), explain=True)
    assert backed.backed_off
    assert [r.episode.episode_id for r in backed.results] == ["won"]
    # One option turns it off; the article's ranking never backs off.
    assert len(memory.recall(TASK, top_k=3, use_lift=False, use_utility=False)) == 3
    assert len(memory.recall(TASK, top_k=3, ranking="article")) == 3
    # Another category's tasks back off too, because every category together says so.
    other = TaskDescription(TASK.description, "debugging")
    assert memory.recall(other, options=RecallOptions(top_k=3), explain=True).backed_off


def test_backing_off_lets_go_once_memory_stops_hurting_and_survives_a_reopen() -> None:
    store = InMemoryEpisodeStore()
    memory = _hurting_memory(store)
    _credit_runs(memory, 60, shown=0.2, held=0.9)
    assert memory.recall(TASK, options=RecallOptions(), explain=True).backed_off
    memory.journal.checkpoint()
    reopened = _hurting_memory(store)
    assert reopened.recall(TASK, options=RecallOptions(), explain=True).backed_off
    # Better runs with memory push the old ones out of the window: the rule lets go.
    _credit_runs(reopened, 150, shown=0.95, held=0.9)
    assert not reopened.recall(TASK, options=RecallOptions(), explain=True).backed_off
    assert reopened.runs.lift().backing_off == ()


def test_no_holdout_runs_means_no_backing_off() -> None:
    memory = _hurting_memory()
    for i in range(30):
        run = f"plain-{i}"
        memory.runs.note(run, ["lost"], TASK)
        memory.runs.credit(run, 0.0)
    assert not memory.recall(TASK, options=RecallOptions(), explain=True).backed_off


def test_the_cli_lift_command_says_where_memory_backs_off(tmp_path, capsys) -> None:  # type: ignore[no-untyped-def]
    from langchain_episodic.cli import main  # noqa: PLC0415
    from langchain_episodic.stores import ChromaEpisodeStore  # noqa: PLC0415

    folder = str(tmp_path / "memory")
    store = ChromaEpisodeStore(path=folder)
    _credit_runs(_hurting_memory(store, hashing=False), 60, shown=0.2, held=0.9)
    store.close()
    assert main(["--path", folder, "lift"]) == 0
    out = capsys.readouterr().out
    assert "memory hurts recent runs in: all, code_generation; recall there shows only" in out
    assert main(["--path", folder, "lift", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["backing_off"] == ["all", "code_generation"]
