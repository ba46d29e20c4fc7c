"""The default strategy rule: the best-supported strategy among relevant neighbours."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from langchain_episodic import (
    EpisodicError,
    OutcomeStatus,
    RecallOptions,
    TaskCategory,
    TaskDescription,
    build_replay,
    choose_strategy,
    episode_from_tests,
)
from langchain_episodic.scoring.ranking import Neighbour
from langchain_episodic.scoring.skills import SkillProfile
from langchain_episodic.scoring.strategy import (
    DEFAULT_EVIDENCE_K,
    StrategyChoice,
    StrategyEvidence,
    evidence_grade,
    strategy_evidence,
    strategy_from_evidence,
)
from tests.helpers.embeddings import table_memory
from tests.unit_tests.factories import make_episode

NOW = 1_000_000.0
TASK = TaskDescription("query", TaskCategory.CODE_GENERATION, 0.5)  # fallback: iterative

WON, LOST = OutcomeStatus.SUCCESS, OutcomeStatus.FAILURE


def seen(*pairs: tuple[str, OutcomeStatus]) -> list[Neighbour]:
    return [Neighbour(f"n{i}", 0.9, name, outcome) for i, (name, outcome) in enumerate(pairs)]


def weak_profile(category: TaskCategory) -> SkillProfile:
    return SkillProfile(category, total_episodes=4, successes=1, avg_reward=0.3, avg_iterations=2.0)


def test_the_estimate_is_the_smoothed_success_rate() -> None:
    assert StrategyEvidence().estimate == 0.5
    assert StrategyEvidence(successes=2).estimate == 0.75
    assert StrategyEvidence(failures=2).estimate == 0.25
    assert StrategyEvidence(successes=1, failures=1).estimate == 0.5


def test_without_evidence_the_fallback_decides() -> None:
    assert strategy_from_evidence(TASK, [], []) == StrategyChoice("iterative", "complexity")
    simple = TaskDescription("query", complexity=0.1)
    assert strategy_from_evidence(simple, [], []) == StrategyChoice("exploratory", "complexity")
    weak = strategy_from_evidence(TASK, [], [weak_profile(TaskCategory.CODE_GENERATION)])
    assert weak == StrategyChoice("defensive", "weak_category")


def test_a_better_supported_strategy_replaces_the_fallback() -> None:
    evidence = seen(("example_driven", WON), ("example_driven", WON), ("iterative", WON))
    # example_driven 3/4 beats iterative 2/3.
    choice = strategy_from_evidence(TASK, evidence, [])
    assert choice == StrategyChoice("example_driven", "evidence")


def test_the_fallback_keeps_its_place_on_a_tie_and_says_so_when_evidence_backs_it() -> None:
    evidence = seen(("defensive", WON), ("iterative", WON))
    assert strategy_from_evidence(TASK, evidence, []) == StrategyChoice("iterative", "evidence")


def test_a_fallback_that_fails_on_similar_tasks_gives_way_to_an_untried_strategy() -> None:
    evidence = seen(("iterative", LOST), ("iterative", LOST), ("exploratory", LOST))
    # Untried strategies estimate 0.5; pool order breaks the tie.
    choice = strategy_from_evidence(TASK, evidence, [])
    assert choice == StrategyChoice("conservative", "evidence")


def test_a_partial_without_a_grade_is_half_a_success_and_unknown_strategies_are_ignored() -> None:
    evidence = seen(("defensive", OutcomeStatus.PARTIAL), ("my_own", WON), ("my_own", WON))
    # defensive 0.5/1 ties the untried fallback, which stands without evidence.
    assert strategy_from_evidence(TASK, evidence, []) == StrategyChoice("iterative", "complexity")


# ------------------------------------------------------------- graded evidence (issue 25)


def partial(strategy: str, passed: int, total: int = 10) -> Neighbour:
    return Neighbour(f"{strategy}-{passed}", 0.9, strategy, OutcomeStatus.PARTIAL, passed / total)


@pytest.mark.parametrize("passed", [9, 7])
def test_a_partial_success_keeps_its_strategy_when_no_alternative_has_better_evidence(
    passed: int,
) -> None:
    # One iterative attempt passing 9 (or 7) of 10 tests once made the next task switch to
    # the untried "conservative": a partial success counted as a failed trial.
    choice = strategy_from_evidence(TASK, [partial("iterative", passed)], [])
    assert choice == StrategyChoice("iterative", "evidence")
    # The same with a low-complexity task, whose fallback is another strategy: evidence for
    # iterative (0.9 or 0.7 of a success) beats an untried fallback.
    simple = TaskDescription("query", TaskCategory.CODE_GENERATION, 0.1)
    assert strategy_from_evidence(simple, [partial("iterative", passed)], []).strategy == (
        "iterative"
    )


def test_a_failed_attempt_still_gives_way_and_a_better_alternative_still_wins() -> None:
    failed = Neighbour("f", 0.9, "iterative", LOST, 0.0)
    assert strategy_from_evidence(TASK, [failed], []) == StrategyChoice("conservative", "evidence")
    # A 7/10 partial (0.567) loses to a strategy that succeeded (0.667).
    evidence = [partial("iterative", 7), Neighbour("w", 0.9, "defensive", WON, 1.0)]
    assert strategy_from_evidence(TASK, evidence, []) == StrategyChoice("defensive", "evidence")


def test_evidence_is_graded_by_pass_rate() -> None:
    evidence = strategy_evidence([partial("iterative", 9), partial("iterative", 7)])
    assert evidence["iterative"].successes == pytest.approx(1.6)
    assert evidence["iterative"].failures == pytest.approx(0.4)
    assert evidence["iterative"].trials == pytest.approx(2.0)
    assert evidence["iterative"].estimate == pytest.approx(2.6 / 4)
    assert evidence["defensive"] == StrategyEvidence()
    # Episodes are graded from their feedback, as the recall's neighbours are.
    episode = episode_from_tests(TASK, "...", 9, 10, strategy_used="iterative", timestamp=NOW)
    assert evidence_grade(episode) == pytest.approx(0.9)
    assert strategy_evidence([episode])["iterative"].successes == pytest.approx(0.9)


@pytest.mark.parametrize("passed", [9, 7])
def test_through_a_memory_a_partial_success_keeps_iterative_on_the_next_similar_task(
    passed: int,
) -> None:
    memory = table_memory({"first": 0.9}, NOW)
    memory.record(
        episode_from_tests(
            TaskDescription("first", TaskCategory.CODE_GENERATION, 0.5),
            "...",
            passed,
            10,
            strategy_used="iterative",
            episode_id="first",
            timestamp=NOW - 3600.0,
        )
    )
    report = memory.replay.report(TASK, RecallOptions(), evidence_k=DEFAULT_EVIDENCE_K)
    assert [(n.episode_id, n.grade) for n in report.neighbours] == [("first", passed / 10)]
    assert choose_strategy(TASK, memory) == StrategyChoice("iterative", "evidence")
    replay = build_replay(memory, TASK, include_strategy=True)
    assert replay.strategy == StrategyChoice("iterative", "evidence")
    # Thompson sampling draws from the same graded evidence. Counted as a failure, the
    # attempt left iterative Beta(1, 2), drawn above four untried Beta(1, 1) in 1/15 of
    # the draws; graded, Beta(1.9, 1.1) or Beta(1.7, 1.3) is drawn highest in 29% or 22%.
    rng = np.random.default_rng(0)
    draws = Counter(
        choose_strategy(TASK, memory, exploration="thompson", rng=rng).strategy for _ in range(400)
    )
    assert draws["iterative"] > 2 * 400 / 15, draws


def test_the_article_hierarchy_still_counts_a_partial_as_not_a_success() -> None:
    memory = table_memory({"a": 0.9, "b": 0.85}, NOW)
    for name in ("a", "b"):
        memory.record(
            episode_from_tests(
                TaskDescription(name, TaskCategory.CODE_GENERATION, 0.1),
                "...",
                9,
                10,
                strategy_used="iterative",
                episode_id=name,
                timestamp=NOW - 3600.0,
            )
        )
    simple = TaskDescription("query", TaskCategory.CODE_GENERATION, 0.1)
    # Level 1 needs more than 60% successes among the recalled: none (both partial).
    assert choose_strategy(simple, memory, ranking="article") == StrategyChoice(
        "exploratory", "complexity"
    )
    assert choose_strategy(simple, memory) == StrategyChoice("iterative", "evidence")


def record(memory: object, episode_id: str, text: str, strategy: str, outcome: str) -> None:
    memory.record(  # type: ignore[attr-defined]
        make_episode(
            episode_id=episode_id,
            description=text,
            strategy=strategy,
            outcome=outcome,
            reward=1.0 if outcome == "success" else 0.1,
            timestamp=NOW - 3600.0,
        )
    )


def test_the_evidence_is_every_neighbour_above_the_floor_not_only_what_the_prompt_shows() -> None:
    memory = table_memory({"twin": 0.95, "cousin a": 0.6, "cousin b": 0.55, "stranger": 0.1}, NOW)
    record(memory, "twin", "twin", "iterative", "failure")
    record(memory, "cousin-a", "cousin a", "example_driven", "success")
    record(memory, "cousin-b", "cousin b", "example_driven", "success")
    for i in range(3):
        record(memory, f"stranger-{i}", "stranger", "defensive", "success")

    replay = build_replay(memory, TASK, RecallOptions(top_k=1), include_strategy=True)
    # Recall's first is the twin, which failed; the prompt (top_k=1) shows what worked.
    assert [r.episode.episode_id for r in memory.recall(TASK, top_k=1)] == ["twin"]
    assert [r.episode.episode_id for r in replay.results] == ["cousin-a"]
    # The strategy counts the cousins too, but never the strangers below the floor.
    assert replay.strategy == StrategyChoice("example_driven", "evidence")
    report = memory.replay.report(TASK, RecallOptions(), evidence_k=DEFAULT_EVIDENCE_K)
    assert [n.episode_id for n in report.neighbours] == ["twin", "cousin-a", "cousin-b"]
    assert report.results == memory.recall(TASK)  # evidence never changes the results
    # Quarantined episodes are evidence no more.
    memory.quarantine.add(["cousin-a", "cousin-b"], "poisoned run")
    assert choose_strategy(TASK, memory) == StrategyChoice("conservative", "evidence")


def test_the_article_ranking_keeps_the_articles_hierarchy() -> None:
    memory = table_memory({"twin": 0.95, "stranger": 0.05}, NOW)
    record(memory, "twin", "twin", "iterative", "failure")
    for i in range(4):
        record(memory, f"stranger-{i}", "stranger", "defensive", "success")
    # The article reuses the unrelated successes (4 of 5 recalled succeeded).
    assert choose_strategy(TASK, memory, ranking="article") == StrategyChoice(
        "defensive", "experience"
    )
    # The default sees only the failed twin and tries something else.
    assert choose_strategy(TASK, memory) == StrategyChoice("conservative", "evidence")


def test_evidence_k_is_checked() -> None:
    memory = table_memory({}, NOW)
    with pytest.raises(EpisodicError, match="evidence_k"):
        choose_strategy(TASK, memory, evidence_k=0)
    with pytest.raises(EpisodicError, match="evidence_k"):
        memory.replay.report(TASK, RecallOptions(), evidence_k=-1)
