"""The simulated credit world: hidden effects, determinism, and a tiny comparison."""

from __future__ import annotations

import math

import pytest

from langchain_episodic import EpisodicValueError, OutcomeStatus
from simulation import (
    CREDIT_VARIANTS,
    DIFFERENTIATED_WORLD,
    EPISODE_KINDS,
    EQUAL_WORLD,
    ORACLE_VARIANT,
    CreditWorld,
    CreditWorldEnvironment,
    HiddenEffect,
    HiddenEpisode,
    compare_credit_variants,
    format_credit_report,
    run_credit_variant,
    t_interval,
)

N = 40  # tasks per run in these tests: small and fast


def _task_pair(env: CreditWorldEnvironment) -> tuple[int, int]:
    """Two task indexes of one sub-topic with different hidden variants."""
    first = env.task_at(0)
    for index in range(1, 500):
        other = env.task_at(index)
        if other.subtopic == first.subtopic and env.hidden_variant(other) != env.hidden_variant(
            first
        ):
            return 0, index
    raise AssertionError("no look-alike task in the first 500")


def _hidden(env: CreditWorldEnvironment, index: int, kind: str) -> HiddenEpisode:
    task = env.task_at(index)
    return HiddenEpisode(f"ep-{index}", task.subtopic, env.hidden_variant(task), kind)


# ---------------------------------------------------------------------- the world


def test_worlds_are_valid_and_cover_every_kind() -> None:
    for world in (DIFFERENTIATED_WORLD, EQUAL_WORLD):
        assert set(world.effects) == set(EPISODE_KINDS)
    assert len({e for e in EQUAL_WORLD.effects.values()}) == 1


def test_a_world_with_bad_probabilities_is_refused() -> None:
    with pytest.raises(EpisodicValueError, match="summing to 1"):
        CreditWorld(
            "bad",
            "",
            {"transferable_fix": 0.5},
            {"warning": 1.0},
            DIFFERENTIATED_WORLD.effects,
        )
    with pytest.raises(EpisodicValueError, match=r"HiddenEffect\.own"):
        HiddenEffect(2.0, 0.0)


def test_a_transferable_fix_shown_raises_the_success_probability() -> None:
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=1)
    own, lookalike = _task_pair(env)
    fix = _hidden(env, own, "transferable_fix")
    for index in (own, lookalike):  # it transfers to every task of its sub-topic
        task = env.task_at(index)
        assert env.success_probability(task, [fix]) > env.success_probability(task, [])


def test_lucky_successes_and_plain_failures_change_nothing() -> None:
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=1)
    own, _ = _task_pair(env)
    task = env.task_at(own)
    for kind in ("lucky_success", "plain_failure"):
        shown = [_hidden(env, own, kind)]
        assert env.success_probability(task, shown) == env.success_probability(task, [])


def test_a_misleading_episode_helps_its_variant_and_hurts_look_alikes() -> None:
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=1)
    own, lookalike = _task_pair(env)
    misleading = _hidden(env, own, "misleading")
    own_task, other_task = env.task_at(own), env.task_at(lookalike)
    assert env.success_probability(own_task, [misleading]) > env.success_probability(own_task, [])
    assert env.success_probability(other_task, [misleading]) < env.success_probability(
        other_task, []
    )


def test_episodes_of_another_subtopic_have_no_effect() -> None:
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=1)
    first = env.task_at(0)
    index = next(i for i in range(1, 200) if env.task_at(i).subtopic != first.subtopic)
    stranger = _hidden(env, index, "transferable_fix")
    assert env.effect(stranger, first) == 0.0


def test_in_the_equal_world_every_kind_helps_alike() -> None:
    env = CreditWorldEnvironment(EQUAL_WORLD, seed=1)
    own, lookalike = _task_pair(env)
    task = env.task_at(lookalike)
    effects = {env.effect(_hidden(env, own, kind), task) for kind in EPISODE_KINDS}
    assert len(effects) == 1
    assert effects.pop() > 0


def test_success_probability_is_clipped() -> None:
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=1)
    own, _ = _task_pair(env)
    task = env.task_at(own)
    fixes = [_hidden(env, own, "transferable_fix")] * 10
    assert env.success_probability(task, fixes) == pytest.approx(0.98)


def test_a_higher_probability_never_does_worse_on_the_same_task() -> None:
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=2)
    for index in range(30):
        task = env.task_at(index)
        plain = env.attempt(task, [])
        helped = env.attempt(task, [_hidden(env, index, "transferable_fix")])
        assert helped.probability >= plain.probability
        assert helped.feedback.reward >= plain.feedback.reward


def test_kinds_follow_the_outcome() -> None:
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=3)
    for index in range(50):
        task = env.task_at(index)
        success = env.hidden_episode("s", task, OutcomeStatus.SUCCESS).kind
        failure = env.hidden_episode("f", task, OutcomeStatus.FAILURE).kind
        assert success in DIFFERENTIATED_WORLD.success_kinds
        assert failure in DIFFERENTIATED_WORLD.failure_kinds


def test_the_world_is_deterministic_per_seed() -> None:
    def draw(seed: int) -> list[tuple[int, str, float]]:
        env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=seed)
        out = []
        for index in range(30):
            task = env.task_at(index)
            attempt = env.attempt(task, [])
            kind = env.hidden_episode("e", task, attempt.outcome).kind
            out.append((env.hidden_variant(task), kind, attempt.feedback.reward))
        return out

    assert draw(5) == draw(5)
    assert draw(5) != draw(6)


# ---------------------------------------------------------------------- the runs


def test_same_seed_gives_the_same_run() -> None:
    first = run_credit_variant("relevance_utility", DIFFERENTIATED_WORLD, N, seed=4)
    again = run_credit_variant("relevance_utility", DIFFERENTIATED_WORLD, N, seed=4)
    assert first.rewards == again.rewards
    assert first.shown == again.shown
    assert len(first.rewards) == N
    assert first.recorded == N


def test_no_memory_shows_nothing_and_records_nothing() -> None:
    run = run_credit_variant("no_memory", DIFFERENTIATED_WORLD, N, seed=0)
    assert sum(run.shown.values()) == 0
    assert run.recorded == 0
    env = CreditWorldEnvironment(DIFFERENTIATED_WORLD, seed=0)
    assert run.probabilities == tuple(env.base_probability(env.task_at(i)) for i in range(N))


def test_invalid_arguments_are_refused() -> None:
    with pytest.raises(EpisodicValueError, match="variant"):
        run_credit_variant("telepathy", n_tasks=1)
    with pytest.raises(EpisodicValueError, match="task_interval"):
        run_credit_variant("relevance", n_tasks=1, task_interval=0.0)
    with pytest.raises(EpisodicValueError, match="non-empty"):
        compare_credit_variants(seeds=())


def test_a_tiny_comparison_returns_every_variant() -> None:
    variants = (*CREDIT_VARIANTS, ORACLE_VARIANT)
    comparisons = compare_credit_variants(n_tasks=N, seeds=(0,), variants=variants)
    assert [c.world for c in comparisons] == ["differentiated", "equal"]
    for comparison in comparisons:
        assert tuple(s.variant for s in comparison.summaries) == variants
        assert comparison.summary("no_memory").gain is not None
        assert comparison.utility_gain is not None
        assert comparison.utility_relative_gain is not None
        for summary in comparison.summaries:
            assert 0.0 <= summary.reward.mean <= 1.0
            assert summary.reward.low <= summary.reward.mean <= summary.reward.high
        for name in variants:
            assert [run.seed for run in comparison.runs[name]] == [0]
    # The same tasks and luck: with nothing shown, both worlds are the same.
    first, second = (c.summary("no_memory").reward for c in comparisons)
    assert first == second
    text = format_credit_report(comparisons)
    assert "relevance_utility" in text
    assert "utility vs no utility" in text
    assert "| variant |" in format_credit_report(comparisons, markdown=True)


def test_t_interval() -> None:
    single = t_interval([0.5])
    assert (single.low, single.mean, single.high) == (0.5, 0.5, 0.5)
    spread = t_interval([1.0, 2.0, 3.0, 4.0, 5.0])
    assert spread.mean == 3.0
    # 2.776 is Student's t for 4 degrees of freedom; the standard error is sqrt(2.5 / 5).
    assert spread.half_width == pytest.approx(2.776 * math.sqrt(2.5 / 5))
    with pytest.raises(EpisodicValueError):
        t_interval([])


# ------------------------------------------------------------- what to show, learned


def _success(variant: str, world: CreditWorld, seeds: range = range(3)) -> float:
    runs = [run_credit_variant(variant, world, 150, seed) for seed in seeds]
    return sum(sum(run.probabilities) for run in runs) / sum(len(r.probabilities) for r in runs)


def test_the_reader_and_copier_worlds_disagree_on_what_to_show() -> None:
    from simulation.credit_world import COPIER_WORLD, READER_WORLD  # noqa: PLC0415

    assert _success("policy_ranked", READER_WORLD) > _success("policy_compact", READER_WORLD)
    assert _success("policy_compact", COPIER_WORLD) > _success("policy_ranked", COPIER_WORLD) + 0.1


def test_the_learning_memory_starts_compact_and_leaves_it_where_failures_help() -> None:
    from simulation.credit_world import COPIER_WORLD, READER_WORLD  # noqa: PLC0415

    reader = run_credit_variant("learned", READER_WORLD, 150, 0)
    assert len(reader.policies) == 150
    assert set(reader.policies[:10]) == {"compact"}  # no outcomes yet: the prior
    late = reader.policies[100:]
    assert sum(p != "compact" for p in late) > 0.3 * len(late)
    copier = run_credit_variant("learned", COPIER_WORLD, 150, 0).policies[100:]
    assert sum(p == "compact" for p in copier) > 0.8 * len(copier)
    pinned = run_credit_variant("policy_feedback", READER_WORLD, 20, 0)
    assert set(pinned.policies) == {"feedback"}


def test_the_noiseless_diagnostic_differs_from_learned_only_in_what_it_credits() -> None:
    from simulation.credit_world import NOISELESS_VARIANT, READER_WORLD  # noqa: PLC0415

    learned = run_credit_variant("learned", READER_WORLD, 60, 1)
    noiseless = run_credit_variant(NOISELESS_VARIANT, READER_WORLD, 60, 1)
    # The same tasks and luck, and the same first prompt (nothing credited yet) ...
    assert noiseless.probabilities[:2] == learned.probabilities[:2]
    # ... but credit reads the attempts' chances, not their rewards, so choices part.
    assert noiseless.probabilities != learned.probabilities
    again = run_credit_variant(NOISELESS_VARIANT, READER_WORLD, 60, 1)
    assert (again.probabilities, again.policies) == (noiseless.probabilities, noiseless.policies)


# ----------------------------------------------------- the ceiling of any credit rule


def test_the_ideal_learner_reads_a_kind_from_outcomes() -> None:
    from langchain_episodic.model.feedback import feedback_from_tests  # noqa: PLC0415
    from simulation.credit_world import READER_WORLD, CreditAttempt  # noqa: PLC0415
    from simulation.ideal_learner import IdealLearner  # noqa: PLC0415

    learner = IdealLearner(READER_WORLD)
    learner.add("fix", OutcomeStatus.SUCCESS)
    learner.add("lucky", OutcomeStatus.SUCCESS)
    prior = learner.kind_probabilities("fix")
    assert prior == pytest.approx(dict(READER_WORLD.success_kinds))
    passed = CreditAttempt(*feedback_from_tests(10, 10, "all pass"), probability=0.8)
    failed = CreditAttempt(*feedback_from_tests(1, 10, "9 fail"), probability=0.2)
    for _ in range(4):  # from a low base: a pass says "this helped", a failure "it did not"
        learner.update(["fix"], 0.3, passed)
        learner.update(["lucky"], 0.3, failed)
    fix, lucky = learner.kind_probabilities("fix"), learner.kind_probabilities("lucky")
    assert fix["transferable_fix"] > 0.9 > prior["transferable_fix"]
    assert lucky["transferable_fix"] < 0.05
    assert learner.expected_effect("fix") > 0.25 > learner.expected_effect("lucky")
    assert learner.choose(["lucky", "fix"], 3) == ["fix"]  # nothing expected to hurt or idle


def test_the_ideal_learner_runs_the_worlds_tasks_and_beats_no_memory() -> None:
    from simulation.credit_world import READER_WORLD  # noqa: PLC0415
    from simulation.ideal_learner import IDEAL_LEARNER, run_ideal_learner  # noqa: PLC0415

    ideal = run_ideal_learner(READER_WORLD, 120, 0)
    none = run_credit_variant("no_memory", READER_WORLD, 120, 0)
    assert (ideal.variant, ideal.recorded, len(ideal.probabilities)) == (IDEAL_LEARNER, 120, 120)
    assert ideal.probabilities[0] == none.probabilities[0]  # nothing to show yet: same task
    assert sum(ideal.probabilities) > sum(none.probabilities) + 5
    assert set(ideal.shown) <= {
        "transferable_fix",
        "warning",
        "misleading",
        "lucky_success",
        "plain_failure",
    }
    assert run_ideal_learner(READER_WORLD, 120, 0).probabilities == ideal.probabilities
