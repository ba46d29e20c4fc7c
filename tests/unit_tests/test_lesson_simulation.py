"""The simulated lesson world: hidden lesson effects, the scripted reflector, a tiny run."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory, EpisodicValueError, HashingEmbeddings
from langchain_episodic.model.episode import Episode
from langchain_episodic.reflection import LessonDrafts, LessonWriter, reflect
from langchain_episodic.scoring.strategy import complexity_strategy
from langchain_episodic.stores import InMemoryEpisodeStore
from simulation import (
    BASELINE_LESSON_VARIANT,
    DIFFERENTIATED_WORLD,
    LESSON_VARIANTS,
    HiddenEpisode,
    HiddenLesson,
    LessonVariant,
    LessonWorld,
    LessonWorldEnvironment,
    ScriptedReflector,
    SimulatedTask,
    compare_lesson_variants,
    format_lesson_report,
    run_lesson_variant,
)

N = 30  # tasks per run in these tests: small and fast


def _other_subtopic_task(env: LessonWorldEnvironment) -> SimulatedTask:
    first = env.task_at(0)
    return next(env.task_at(i) for i in range(1, 200) if env.task_at(i).subtopic != first.subtopic)


# ---------------------------------------------------------------------- the world


def test_a_good_lesson_raises_the_success_probability_and_a_bad_one_lowers_it() -> None:
    env = LessonWorldEnvironment(seed=3)
    task = env.task_at(0)
    base = env.success_probability(task, ())
    good = HiddenLesson.of("lesson-good", task.subtopic, good=True)
    bad = HiddenLesson.of("lesson-bad", task.subtopic, good=False)
    assert env.success_probability(task, [good]) > base
    assert env.success_probability(task, [bad]) < base
    assert env.effect(good, task) == pytest.approx(0.35)
    assert env.effect(bad, task) == pytest.approx(-0.30)
    # A good lesson helps more than the best raw episode does.
    fix = HiddenEpisode("ep-x", task.subtopic, env.hidden_variant(task), "transferable_fix")
    assert env.effect(good, task) > env.effect(fix, task)
    assert env.effect(good, task) > DIFFERENTIATED_WORLD.mean_effect(
        DIFFERENTIATED_WORLD.success_kinds
    )
    # Off its sub-topic a lesson does nothing, good or bad.
    other = _other_subtopic_task(env)
    assert env.effect(good, other) == 0.0
    assert env.effect(bad, other) == 0.0


def test_lesson_effects_and_episode_effects_add_up() -> None:
    env = LessonWorldEnvironment(LessonWorld(good=0.2, bad=-0.1), seed=0)
    task = env.task_at(0)
    fix = HiddenEpisode("ep-x", task.subtopic, env.hidden_variant(task), "transferable_fix")
    good = HiddenLesson.of("lesson-g", task.subtopic, good=True)
    base = env.base_probability(task)
    expected = min(0.98, max(0.02, base + 0.30 + 0.2))
    assert env.success_probability(task, [fix, good]) == pytest.approx(expected)


def test_a_world_with_bad_effects_is_refused() -> None:
    with pytest.raises(EpisodicValueError, match=r"LessonWorld\.good"):
        LessonWorld(good=1.5)
    with pytest.raises(EpisodicValueError, match="quality"):
        LessonVariant("x", quality=1.2)


def test_lesson_quality_is_monotone_in_quality() -> None:
    env = LessonWorldEnvironment(seed=1)
    tasks = [env.task_at(i) for i in range(50)]
    for task in tasks:
        if env.lesson_is_good(task, 0.2):
            assert env.lesson_is_good(task, 0.9)
    assert not any(env.lesson_is_good(t, 0.0) for t in tasks)
    assert all(env.lesson_is_good(t, 1.0) for t in tasks)


# ---------------------------------------------------------------------- the reflector


def _memory_with_episodes(env: LessonWorldEnvironment, count: int) -> tuple[EpisodicMemory, dict]:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings())
    known: dict[str, tuple[HiddenEpisode, SimulatedTask]] = {}
    for index in range(count):
        task = env.task_at(index)
        attempt = env.attempt(task, ())
        episode_id = f"ep-{index}"
        memory.record(
            Episode(
                episode_id=episode_id,
                task=task.task,
                solution="# solution",
                feedback=attempt.feedback,
                outcome=attempt.outcome,
                timestamp=1_000.0 + index,
                strategy_used=complexity_strategy(task.task),
            )
        )
        known[episode_id] = (env.hidden_episode(episode_id, task, attempt.outcome), task)
    return memory, known


@pytest.mark.parametrize("good", [True, False])
def test_the_reflector_writes_through_reflect_and_its_calls_are_counted(good: bool) -> None:
    env = LessonWorldEnvironment(seed=0)
    memory, known = _memory_with_episodes(env, 20)
    reflector = ScriptedReflector(lookup=known.get, decide=lambda task: good)
    writer = LessonWriter(reflector, max_lessons=1)
    reflection = reflect(memory, writer, "ep-10")
    assert reflector.calls == reflection.model_calls == 1
    assert reflection.rejected == []
    assert len(reflection.stored) == 1
    lesson = reflection.stored[0]
    assert memory.lessons.list() == (lesson,)
    reflected = known["ep-10"]
    assert lesson.title == reflected[1].task.description
    subtopics = {known[i][0].subtopic for i in lesson.source_ids}
    assert "ep-10" in lesson.source_ids
    if good:
        assert subtopics == {reflected[0].subtopic}
    # The draft written is remembered with its hidden truth.
    title, sources, subtopic, was_good = reflector.written[-1]
    assert (title, sources, subtopic, was_good) == (
        lesson.title,
        tuple(sorted(lesson.source_ids)),
        reflected[0].subtopic,
        good,
    )
    reflect(memory, writer, "ep-11")
    assert reflector.calls == 2


def test_the_reflector_answers_only_lesson_drafts() -> None:
    reflector = ScriptedReflector(lookup=lambda _: None, decide=lambda _: True)
    with pytest.raises(ValueError, match="LessonDrafts"):
        reflector.with_structured_output(dict)
    assert reflector.with_structured_output(LessonDrafts).invoke([]) == LessonDrafts()
    assert reflector.calls == 1


# ---------------------------------------------------------------------- runs


def test_a_run_is_deterministic() -> None:
    variant = LessonVariant("q", 0.5, reflect_every=3)
    first = run_lesson_variant(variant, n_tasks=N, seed=2)
    second = run_lesson_variant(variant, n_tasks=N, seed=2)
    assert first.rewards == second.rewards
    assert first.probabilities == second.probabilities
    assert (first.lessons_shown, first.good_shown, first.model_calls) == (
        second.lessons_shown,
        second.good_shown,
        second.model_calls,
    )


def test_model_calls_follow_the_reflection_schedule() -> None:
    every = run_lesson_variant(LessonVariant("each", 0.9, reflect_every=1), n_tasks=N, seed=0)
    fifth = run_lesson_variant(LessonVariant("fifth", 0.9, reflect_every=5), n_tasks=N, seed=0)
    none = run_lesson_variant(BASELINE_LESSON_VARIANT, n_tasks=N, seed=0)
    assert every.model_calls == N
    assert every.calls_per_100 == pytest.approx(100.0)
    assert fifth.model_calls == N // 5
    assert fifth.calls_per_100 == pytest.approx(20.0)
    assert none.model_calls == 0
    assert none.lessons_shown == 0
    assert every.lessons_shown > 0
    assert every.lessons_written > 0


def test_perfect_lessons_help_and_useless_ones_hurt_on_the_same_tasks() -> None:
    none = run_lesson_variant(BASELINE_LESSON_VARIANT, n_tasks=N, seed=1)
    good = run_lesson_variant(LessonVariant("good", 1.0, reflect_every=1), n_tasks=N, seed=1)
    bad = run_lesson_variant(LessonVariant("bad", 0.0, reflect_every=1), n_tasks=N, seed=1)
    assert good.good_shown == good.lessons_shown > 0
    assert bad.good_shown == 0 < bad.lessons_shown
    # Paired: the same tasks and luck; only what is shown differs.
    assert sum(good.probabilities) > sum(none.probabilities) > sum(bad.probabilities)


def test_a_tiny_comparison_returns_every_variant_and_reports() -> None:
    comparison = compare_lesson_variants(LESSON_VARIANTS, n_tasks=N, seeds=(0,))
    names = [s.variant for s in comparison.summaries]
    assert names == [v.name for v in LESSON_VARIANTS]
    base = comparison.summary(BASELINE_LESSON_VARIANT.name)
    assert base.gain is None
    assert base.calls_per_100 == 0.0
    for summary in comparison.summaries[1:]:
        assert summary.gain is not None
        assert summary.relative_gain is not None
        assert summary.calls_per_100 > 0
        assert 0.0 <= summary.reward.mean <= 1.0
    text = format_lesson_report(comparison)
    assert "simulated" in text
    assert all(name in text for name in names)
    assert "| lessons_q0.9 |" in format_lesson_report(comparison, markdown=True)
    with pytest.raises(EpisodicValueError):
        comparison.summary("nope")


def test_the_baseline_is_added_when_missing_and_names_must_differ() -> None:
    comparison = compare_lesson_variants((LessonVariant("q", 0.9),), n_tasks=10, seeds=(0,))
    assert [s.variant for s in comparison.summaries] == [BASELINE_LESSON_VARIANT.name, "q"]
    with pytest.raises(EpisodicValueError, match="distinct"):
        compare_lesson_variants((LessonVariant("q"), LessonVariant("q")), n_tasks=10, seeds=(0,))
