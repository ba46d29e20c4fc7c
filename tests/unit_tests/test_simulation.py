"""The simulated coding-task benchmark, its variants, and opt-in Thompson exploration."""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from langchain_episodic import (
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    OutcomeStatus,
    ReplayWeights,
    TaskCategory,
    TaskDescription,
    choose_strategy,
)
from langchain_episodic.model.feedback import feedback_from_tests
from langchain_episodic.pipeline import select_strategy, select_strategy_thompson
from langchain_episodic.scoring.priority import Phase, phase_for_experience
from langchain_episodic.scoring.strategy import (
    STRATEGY_POOL,
    StrategyEvidence,
    complexity_strategy,
    strategy_evidence,
    thompson_sample,
)
from simulation import (
    EVIDENCE_VARIANTS,
    START_TIME,
    SUBTOPICS,
    TASK_INTERVAL,
    TESTS_PER_TASK,
    VARIANT_DESCRIPTIONS,
    VARIANTS,
    BenchmarkReport,
    CodingTaskEnvironment,
    SimulatedTask,
    compare_variants,
    format_report,
    plot_report,
    run_variant,
)
from tests.unit_tests.factories import make_episode

N = 40  # tasks per agent run in these tests: small, fast, still past the first lessons


# ------------------------------------------------------------------ the environment


def test_tasks_are_deterministic_per_seed() -> None:
    first = CodingTaskEnvironment(seed=3).tasks(50)
    again = CodingTaskEnvironment(seed=3).tasks(50)
    other = CodingTaskEnvironment(seed=4).tasks(50)
    assert first == again
    assert [t.task for t in first] != [t.task for t in other]
    assert [t.index for t in first] == list(range(50))


def test_sample_task_walks_the_same_sequence() -> None:
    env = CodingTaskEnvironment(seed=1)
    sampled = tuple(env.sample_task() for _ in range(20))
    assert sampled == CodingTaskEnvironment(seed=1).tasks(20)
    assert env.sample_task() == env.task_at(20)


def test_tasks_span_categories_subtopics_and_their_complexity() -> None:
    env = CodingTaskEnvironment(seed=0)
    tasks = env.tasks(300)
    by_name = {s.name: s for s in SUBTOPICS}
    assert {t.subtopic for t in tasks} == set(by_name)
    assert len({t.task.category for t in tasks}) >= 5
    assert len({t.task.description for t in tasks}) > 150  # varied text, not one per topic
    for simulated in tasks:
        subtopic = by_name[simulated.subtopic]
        assert simulated.task.category is subtopic.category
        assert simulated.subtopic.startswith(subtopic.category.value + "/")
        low, high = subtopic.complexity
        assert low <= simulated.task.complexity <= high


def test_tasks_of_one_subtopic_share_words() -> None:
    tasks = CodingTaskEnvironment(seed=0).tasks(200)
    vectors = np.asarray(HashingEmbeddings().embed_documents([t.task.description for t in tasks]))
    similarity = vectors @ vectors.T
    names = np.array([t.subtopic for t in tasks])
    same = names[:, None] == names[None, :]
    np.fill_diagonal(same, False)
    different = names[:, None] != names[None, :]
    assert similarity[same].mean() > similarity[different].mean() + 0.2


def test_attempt_is_deterministic_and_follows_feedback_from_tests() -> None:
    env = CodingTaskEnvironment(seed=2)
    for simulated in env.tasks(30):
        for strategy in STRATEGY_POOL:
            feedback, outcome = env.attempt(simulated, strategy)
            assert (feedback, outcome) == CodingTaskEnvironment(seed=2).attempt(simulated, strategy)
            assert feedback.tests_total == TESTS_PER_TASK
            expected = feedback_from_tests(feedback.tests_passed, feedback.tests_total)
            assert (feedback.reward, outcome) == (expected[0].reward, expected[1])
            assert (outcome is OutcomeStatus.SUCCESS) == (feedback.tests_passed == TESTS_PER_TASK)


def test_hidden_success_probabilities_are_respected() -> None:
    env = CodingTaskEnvironment(seed=5)
    tasks = env.tasks(3000)
    by_subtopic: dict[str, list[SimulatedTask]] = {}
    for simulated in tasks:
        by_subtopic.setdefault(simulated.subtopic, []).append(simulated)
    for name, group in by_subtopic.items():
        rates = {}
        for strategy in STRATEGY_POOL:
            wins = sum(env.attempt(t, strategy)[1] is OutcomeStatus.SUCCESS for t in group)
            rates[strategy] = wins / len(group)
            p = env.success_probability(name, strategy)
            sigma = (p * (1 - p) / len(group)) ** 0.5
            assert abs(rates[strategy] - p) < 4 * sigma + 1e-9, (name, strategy)
        best = env.best_strategy(name)
        runner_up = max(rate for strategy, rate in rates.items() if strategy != best)
        assert rates[best] > runner_up + 0.1, name


def test_a_better_strategy_never_does_worse_on_the_same_task() -> None:
    env = CodingTaskEnvironment(seed=0)
    for simulated in env.tasks(100):
        ranked = sorted(STRATEGY_POOL, key=lambda s: env.success_probability(simulated.subtopic, s))
        passed = [env.attempt(simulated, s)[0].tests_passed for s in ranked]
        assert passed == sorted(passed)


def test_the_complexity_fallback_misses_the_best_strategy_of_several_subtopics() -> None:
    missed = [
        s.name
        for s in SUBTOPICS
        if all(
            complexity_strategy(TaskDescription("t", s.category, c)) != s.best_strategy
            for c in s.complexity
        )
    ]
    assert len(missed) >= 5
    assert {s.best_strategy for s in SUBTOPICS} == set(STRATEGY_POOL)


def test_attempt_rejects_bad_input() -> None:
    env = CodingTaskEnvironment()
    simulated = env.task_at(0)
    with pytest.raises(EpisodicValueError, match="strategy='yolo'"):
        env.attempt(simulated, "yolo")
    with pytest.raises(TypeError, match="SimulatedTask"):
        env.attempt(simulated.task, "iterative")  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="seed=-1"):
        CodingTaskEnvironment(seed=-1)


# ------------------------------------------------------------------- agent runs


def _memory() -> EpisodicMemory:
    # run_variant's own memories embed with HashingEmbeddings (its documented default).
    return EpisodicMemory(embeddings=HashingEmbeddings(), clock=lambda: START_TIME)


def test_run_variant_records_n_episodes_in_memory_order() -> None:
    memory = _memory()
    episodes = run_variant("prioritized", N, seed=1, memory=memory)
    assert len(episodes) == N
    assert len(memory) == N
    assert tuple(memory.episodes()) == episodes
    assert [e.task for e in episodes] == [t.task for t in CodingTaskEnvironment(1).tasks(N)]
    assert [e.timestamp for e in episodes] == [START_TIME + i * TASK_INTERVAL for i in range(N)]
    assert all(e.strategy_used in STRATEGY_POOL for e in episodes)


def test_variants_share_tasks_and_attempt_luck() -> None:
    baseline = run_variant("no_memory", N, seed=2)
    for variant in ("prioritized", "prioritized_explore"):
        other = run_variant(variant, N, seed=2)
        assert [e.task for e in other] == [e.task for e in baseline]
        same_choice = [
            (a, b)
            for a, b in zip(baseline, other, strict=True)
            if a.strategy_used == b.strategy_used
        ]
        assert same_choice
        for a, b in same_choice:
            assert (a.feedback, a.outcome) == (b.feedback, b.outcome)


@pytest.mark.parametrize("variant", ["prioritized", "prioritized_explore"])
def test_run_variant_is_reproducible(variant: str) -> None:
    assert run_variant(variant, N, seed=4) == run_variant(variant, N, seed=4)


def test_no_memory_is_select_strategy_with_an_empty_memory() -> None:
    episodes = run_variant("no_memory", N, seed=0)
    empty = _memory()
    for episode in episodes:
        assert episode.strategy_used == select_strategy(episode.task, empty, episode.timestamp)


def test_prioritized_is_select_strategy_at_every_step() -> None:
    episodes = run_variant("prioritized", N, seed=3)
    replay = _memory()
    for episode in episodes:
        assert episode.strategy_used == select_strategy(episode.task, replay, episode.timestamp)
        replay.record(episode)
    reasons = {choose_strategy(e.task, replay, e.timestamp).reason for e in episodes}
    assert "evidence" in reasons  # memory decided, not only the fallback


@pytest.mark.parametrize(
    ("variant", "weights_at"),
    [
        ("similarity_only", lambda n: ReplayWeights(1.0, 0.0, 0.0, 0.0)),
        ("phase_early", lambda n: ReplayWeights.for_phase("early")),
        ("phase_late", lambda n: ReplayWeights.for_phase("late")),
        ("phase_auto", lambda n: ReplayWeights.for_experience(n, early_below=20)),
    ],
)
def test_weighted_variants_are_choose_strategy_with_their_weights(
    variant: str, weights_at: Callable[[int], ReplayWeights]
) -> None:
    episodes = run_variant(variant, N, seed=3)
    replay = _memory()
    for number, episode in enumerate(episodes):
        weights = weights_at(number)
        # These variants measure the article's weights: they rank as the article does.
        choice = choose_strategy(
            episode.task, replay, episode.timestamp, weights=weights, ranking="article"
        )
        assert episode.strategy_used == choice.strategy
        replay.record(episode)


def test_the_article_hierarchy_never_tries_strategies_it_has_no_evidence_for() -> None:
    used = {e.strategy_used for e in run_variant("prioritized_article", 60, seed=0)}
    assert used <= {"iterative", "exploratory", "defensive"}


def test_the_default_replaces_a_fallback_that_fails_on_similar_tasks() -> None:
    episodes = run_variant("prioritized", 120, seed=1)
    # The hierarchy proposes only three strategies; evidence tries others. (Counting a
    # partial success as a failed trial, it tried all five in these 120 tasks; graded,
    # a strategy that mostly passes keeps its place, and example_driven, last in pool
    # order, is reached later.)
    used = {e.strategy_used for e in episodes}
    assert "conservative" in used
    binary = {e.strategy_used for e in run_variant("prioritized_binary", 120, seed=1)}
    assert binary == set(STRATEGY_POOL)


def test_the_evidence_variants_run_and_are_described() -> None:
    # benchmarks/learning_evidence.py: the rule before graded evidence and the
    # alternatives not taken, beside the default, on the same tasks.
    assert {"prioritized", "prioritized_binary", "explore_binary"} <= set(EVIDENCE_VARIANTS)
    assert not set(EVIDENCE_VARIANTS) - set(VARIANT_DESCRIPTIONS)
    report = compare_variants(20, (0,), EVIDENCE_VARIANTS, 10)
    assert report.variants == EVIDENCE_VARIANTS
    # Nothing has been learnt after the first task: every variant starts alike.
    first = {report.curves[name][0][0].cumulative_reward for name in EVIDENCE_VARIANTS}
    assert len(first) == 1


def test_thompson_exploration_tries_strategies_beyond_the_fallback() -> None:
    env = CodingTaskEnvironment(seed=0)
    episodes = run_variant("prioritized_explore", 60, seed=0, environment=env)
    fallback = {complexity_strategy(t.task) for t in env.tasks(60)}
    used = Counter(e.strategy_used for e in episodes)
    assert set(used) == set(STRATEGY_POOL)
    assert sum(count for name, count in used.items() if name not in fallback) >= 15


def test_run_variant_rejects_bad_input() -> None:
    with pytest.raises(EpisodicValueError, match="variant='greedy'"):
        run_variant("greedy", 1)
    memory = _memory()
    run_variant("no_memory", 2, memory=memory)
    with pytest.raises(EpisodicValueError, match="already holds 2"):
        run_variant("no_memory", 2, memory=memory)
    with pytest.raises(EpisodicValueError, match="task_interval=0"):
        run_variant("no_memory", 2, task_interval=0)


# ------------------------------------------------------------- Thompson sampling


def test_thompson_is_reproducible_with_a_seeded_rng() -> None:
    memory = _memory()
    run_variant("no_memory", 20, seed=0, memory=memory)
    task = CodingTaskEnvironment(seed=0).task_at(25).task
    picks = [
        select_strategy_thompson(task, memory, np.random.default_rng(seed)) for seed in range(30)
    ]
    again = [
        select_strategy_thompson(task, memory, np.random.default_rng(seed)) for seed in range(30)
    ]
    assert picks == again
    assert len(set(picks)) > 1


def test_thompson_with_no_evidence_picks_every_strategy() -> None:
    rng = np.random.default_rng(0)
    picks = Counter(thompson_sample({}, rng) for _ in range(500))
    assert set(picks) == set(STRATEGY_POOL)
    assert min(picks.values()) > 60  # about 100 each


def test_thompson_follows_strong_evidence() -> None:
    memory = _memory()
    for i in range(12):
        strategy = "conservative" if i % 2 == 0 else "iterative"
        memory.record(
            make_episode(
                episode_id=f"e{i}",
                description=f"Refactor the legacy billing module, part {i}",
                category=TaskCategory.REFACTORING,
                outcome=OutcomeStatus.SUCCESS if strategy == "conservative" else "failure",
                reward=1.0 if strategy == "conservative" else 0.2,
                strategy=strategy,
                timestamp=START_TIME,
            )
        )
    task = TaskDescription("Refactor the legacy billing module", TaskCategory.REFACTORING, 0.6)
    picks = Counter(
        select_strategy_thompson(task, memory, np.random.default_rng(seed)) for seed in range(50)
    )
    # P(Beta(7, 1) beats three untried Beta(1, 1) and a Beta(1, 7)) is about 0.7.
    assert picks.most_common(1)[0][0] == "conservative"
    assert picks["conservative"] >= 30
    assert picks["iterative"] <= 2
    choice = choose_strategy(task, memory, exploration="thompson", rng=np.random.default_rng(1))
    assert choice.reason == "thompson"
    assert select_strategy(task, memory) == "conservative"  # the default is unchanged


def test_strategy_evidence_counts_pool_strategies_only() -> None:
    episodes = [
        make_episode(episode_id="a", strategy="defensive", outcome="success"),
        make_episode(episode_id="b", strategy="defensive", outcome="partial"),
        make_episode(episode_id="c", strategy="iterative", outcome="failure"),
        make_episode(episode_id="d", strategy="custom", outcome="success"),
    ]
    evidence = strategy_evidence(episodes)
    assert set(evidence) == set(STRATEGY_POOL)
    # The partial passed 4 of 5 tests (the factory's default): 0.8 of a success.
    assert evidence["defensive"].successes == pytest.approx(1.8)
    assert evidence["defensive"].failures == pytest.approx(0.2)
    assert evidence["iterative"] == StrategyEvidence(successes=0, failures=1)
    assert evidence["example_driven"].trials == 0


def test_exploration_rejects_bad_input() -> None:
    memory = _memory()
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        thompson_sample({}, 42)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match=r"numpy\.random\.Generator"):
        select_strategy_thompson("task", memory, None)  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="exploration='ucb'"):
        choose_strategy("task", memory, exploration="ucb")  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="evidence_k=0"):
        choose_strategy("task", memory, exploration="thompson", evidence_k=0)


# ------------------------------------------------------------------ phase choice


@pytest.mark.parametrize(
    ("n", "phase"),
    [(0, "early"), (19, "early"), (20, "normal"), (199, "normal"), (200, "late"), (10**6, "late")],
)
def test_for_experience_thresholds(n: int, phase: Phase) -> None:
    assert phase_for_experience(n) == phase
    assert ReplayWeights.for_experience(n) == ReplayWeights.for_phase(phase)


def test_for_experience_custom_thresholds() -> None:
    assert ReplayWeights.for_experience(4, early_below=5, late_from=10).similarity == 0.6
    assert ReplayWeights.for_experience(5, early_below=5, late_from=10).similarity == 0.4
    assert ReplayWeights.for_experience(10, early_below=5, late_from=10).similarity == 0.3
    assert ReplayWeights.for_experience(0, early_below=0, late_from=0).similarity == 0.3


@pytest.mark.parametrize(
    ("kwargs", "shown"),
    [
        ({"n_episodes": -1}, "n_episodes=-1"),
        ({"n_episodes": 1.5}, "n_episodes=1.5"),
        ({"n_episodes": 5, "early_below": 30, "late_from": 10}, "late_from=10"),
    ],
)
def test_for_experience_rejects_bad_counts(kwargs: dict[str, float], shown: str) -> None:
    with pytest.raises(EpisodicValueError, match=shown):
        ReplayWeights.for_experience(**kwargs)  # type: ignore[arg-type]


# ---------------------------------------------------------------------- reports


@pytest.fixture(scope="module")
def small_report() -> BenchmarkReport:
    return compare_variants(
        n_tasks=30, seeds=(0, 1), variants=("no_memory", "prioritized_explore"), window=10
    )


def test_compare_variants_summarises_the_curves(small_report: BenchmarkReport) -> None:
    report = small_report
    assert report.variants == ("no_memory", "prioritized_explore")
    assert report.seeds == (0, 1)
    baseline = run_variant("no_memory", 30, seed=1)
    for name in report.variants:
        curves = report.curves[name]
        assert len(curves) == 2
        assert all(len(curve) == 30 for curve in curves)
        summary = report.summary(name)
        finals = [curve[-1].rolling_success_rate for curve in curves]
        assert summary.final_success_mean == pytest.approx(np.mean(finals))
        assert summary.final_success_std == pytest.approx(np.std(finals, ddof=1))
        cumulative = [curve[-1].cumulative_reward for curve in curves]
        assert summary.cumulative_reward_mean == pytest.approx(np.mean(cumulative))
        assert 0.0 <= summary.best_choice_rate <= 1.0
    assert report.curves["no_memory"][1][-1].cumulative_reward == pytest.approx(
        sum(e.feedback.reward for e in baseline)
    )
    with pytest.raises(EpisodicValueError, match="variant='oracle'"):
        report.summary("oracle")


def test_compare_variants_rejects_unknown_variants() -> None:
    with pytest.raises(EpisodicValueError, match="variant='oracle'"):
        compare_variants(n_tasks=5, seeds=(0,), variants=("oracle",))
    assert "prioritized" in VARIANTS
    assert {"no_memory", "similarity_only", "prioritized_explore", "phase_auto"} <= set(VARIANTS)


def test_format_report_is_an_aligned_table(small_report: BenchmarkReport) -> None:
    text = format_report(small_report)
    lines = text.splitlines()
    table = lines[1:]
    assert len(table) == 2 + 2  # header, rule, one row per variant
    assert len({len(line) for line in table}) == 1
    assert table[2].startswith("no_memory ")
    assert table[3].startswith("prioritized_explore ")
    assert "±" in table[2]
    markdown = format_report(small_report, markdown=True).splitlines()
    rows = [line for line in markdown if line.startswith("|")]
    assert len(rows) == 4
    assert all(line.endswith("|") for line in rows)
    assert rows[2].startswith("| no_memory ")


def test_plot_report_writes_a_png(small_report: BenchmarkReport, tmp_path: Path) -> None:
    target = tmp_path / "curves.png"
    plot_report(small_report, target)
    data = target.read_bytes()
    assert data.startswith(b"\x89PNG\r\n\x1a\n")
    assert len(data) > 10_000


def test_plot_report_without_matplotlib_says_how_to_install(
    small_report: BenchmarkReport, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.figure", None)
    with pytest.raises(ImportError, match=r"langchain-episodic\[plot\]"):
        plot_report(small_report, tmp_path / "never.png")
    assert not (tmp_path / "never.png").exists()


# --------------------------------------------------------------------------- the demo script


def test_the_demo_script_compares_variants_and_plots(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    import demo  # noqa: PLC0415  (benchmarks/demo.py)

    png = tmp_path / "demo.png"
    argv = ["--tasks", "30", "--seeds", "1", "--variants", "no_memory", "prioritized"]
    assert demo.main([*argv, "--plot", str(png)]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("no_memory ", "prioritized "))]
    assert [row.split()[0] for row in rows] == ["no_memory", "prioritized"]
    assert "+0.0 ± 0.0" in rows[0]  # the baseline gains nothing over itself
    assert png.read_bytes().startswith(b"\x89PNG\r\n\x1a\n")


def test_the_demo_script_refuses_unknown_variants(capsys: pytest.CaptureFixture[str]) -> None:
    import demo  # noqa: PLC0415

    with pytest.raises(SystemExit) as exited:
        demo.main(["--variants", "telepathy"])
    assert exited.value.code == 2
    assert "telepathy" in capsys.readouterr().err


def test_no_simulation_ships_in_the_package() -> None:
    import langchain_episodic  # noqa: PLC0415

    package = Path(langchain_episodic.__file__).parent
    assert not (package / "simulation").exists()
    assert "langchain_episodic.simulation" not in sys.modules
