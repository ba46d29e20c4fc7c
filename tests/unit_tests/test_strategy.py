"""The default strategy rule: the best-supported strategy among relevant neighbours."""

from __future__ import annotations

import pytest

from langchain_episodic import (
    EpisodicError,
    OutcomeStatus,
    RecallOptions,
    TaskCategory,
    TaskDescription,
    build_replay,
    choose_strategy,
)
from langchain_episodic.scoring.ranking import Neighbour
from langchain_episodic.scoring.skills import SkillProfile
from langchain_episodic.scoring.strategy import (
    DEFAULT_EVIDENCE_K,
    StrategyChoice,
    StrategyEvidence,
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


def test_partial_counts_as_not_succeeded_and_unknown_strategies_are_ignored() -> None:
    evidence = seen(("defensive", OutcomeStatus.PARTIAL), ("my_own", WON), ("my_own", WON))
    # defensive 0/1: worse than the untried fallback, which stands without evidence.
    assert strategy_from_evidence(TASK, evidence, []) == StrategyChoice("iterative", "complexity")


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
    # The prompt shows only the twin (top_k=1).
    assert [r.episode.episode_id for r in replay.results] == ["twin"]
    # The strategy counts the cousins too, but never the strangers below the floor.
    assert replay.strategy == StrategyChoice("example_driven", "evidence")
    report = memory.recall_report(TASK, RecallOptions(), evidence_k=DEFAULT_EVIDENCE_K)
    assert [n.episode_id for n in report.neighbours] == ["twin", "cousin-a", "cousin-b"]
    assert report.results == memory.recall(TASK)  # evidence never changes the results
    # Quarantined episodes are evidence no more.
    memory.quarantine(["cousin-a", "cousin-b"], "poisoned run")
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
        memory.recall_report(TASK, RecallOptions(), evidence_k=-1)
