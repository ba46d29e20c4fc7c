"""Properties of prioritized replay, fuzzed (GitHub issue 5).

Pure properties run against ``priority_score`` / ``compute_priority`` /
``rank_by_priority``; the last one checks ``EpisodicMemory.recall`` on a random small
in-process Chroma store against the brute-force reference of ``test_memory``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

from hypothesis import assume, given
from hypothesis import strategies as st

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, OutcomeStatus, ReplayWeights
from langchain_episodic.scoring.decay import FUTURE_SKEW
from langchain_episodic.scoring.priority import (
    PrioritizedResult,
    SearchResult,
    compute_priority,
    priority_score,
    rank_by_priority,
)
from tests.helpers.episodes import article_recall
from tests.unit_tests.factories import make_episode
from tests.unit_tests.fuzzing import DESCRIPTIONS, TIMESTAMPS, fuzz_settings

DAY = 86_400.0
ORDERED_OUTCOMES = [OutcomeStatus.FAILURE, OutcomeStatus.PARTIAL, OutcomeStatus.SUCCESS]

unit = st.floats(0.0, 1.0)
similarities = st.floats(-1.0, 1.0)
times = st.floats(-1e10, 1e10)
half_lives = st.floats(1e-3, 1e9)
# At least one weight positive: all-zero weights are refused (every priority would be 0).
weights = (
    st.tuples(unit, unit, unit, unit).filter(any).map(lambda four: ReplayWeights(*four)) | st.none()
)
outcomes = st.sampled_from(OutcomeStatus)


def score(
    similarity: float = 0.5,
    timestamp: float = 0.0,
    reward: float = 0.5,
    outcome: OutcomeStatus = OutcomeStatus.PARTIAL,
    now: float = DAY,
    w: ReplayWeights | None = None,
    half_life: float = DAY,
) -> float:
    return priority_score(similarity, timestamp, reward, outcome, now, w, half_life)


# --------------------------------------------------------------------------- monotone


@given(
    similarities,
    st.lists(times, min_size=2, max_size=2),
    unit,
    outcomes,
    times,
    weights,
    half_lives,
)
@fuzz_settings(300)
def test_priority_rises_with_recency_at_equal_similarity(
    similarity: float,
    stamps: list[float],
    reward: float,
    outcome: OutcomeStatus,
    now: float,
    w: ReplayWeights | None,
    half_life: float,
) -> None:
    older, newer = sorted(stamps)
    assume(newer <= now + FUTURE_SKEW)  # further ahead a date is stale: the next test
    assert score(similarity, newer, reward, outcome, now, w, half_life) >= score(
        similarity, older, reward, outcome, now, w, half_life
    )


@given(similarities, st.lists(st.floats(0.0, 1e10), min_size=2, max_size=2), unit, outcomes, times)
@fuzz_settings(300)
def test_a_date_past_the_skew_ranks_lower_the_further_ahead_it_is(
    similarity: float, aheads: list[float], reward: float, outcome: OutcomeStatus, now: float
) -> None:
    near, far = sorted(FUTURE_SKEW + 1.0 + ahead for ahead in aheads)
    assert score(similarity, now + far, reward, outcome, now, None, DAY) <= score(
        similarity, now + near, reward, outcome, now, None, DAY
    )
    # and never above the same episode recorded now
    assert score(similarity, now + near, reward, outcome, now, None, DAY) <= score(
        similarity, now, reward, outcome, now, None, DAY
    )


@given(similarities, times, st.lists(unit, min_size=2, max_size=2), outcomes, times, weights)
@fuzz_settings(300)
def test_priority_rises_with_reward_at_equal_similarity(
    similarity: float,
    stamp: float,
    rewards: list[float],
    outcome: OutcomeStatus,
    now: float,
    w: ReplayWeights | None,
) -> None:
    low, high = sorted(rewards)
    assert score(similarity, stamp, high, outcome, now, w) >= score(
        similarity, stamp, low, outcome, now, w
    )


@given(similarities, times, unit, times, weights, st.integers(0, 1))
@fuzz_settings(200)
def test_priority_rises_with_outcome_at_equal_similarity(
    similarity: float, stamp: float, reward: float, now: float, w: ReplayWeights | None, step: int
) -> None:
    worse, better = ORDERED_OUTCOMES[step], ORDERED_OUTCOMES[step + 1]
    assert score(similarity, stamp, reward, better, now, w) >= score(
        similarity, stamp, reward, worse, now, w
    )


@given(
    similarities,
    st.floats(60.0, 30 * DAY),
    st.floats(0.05, 1.0),
    st.sampled_from(ORDERED_OUTCOMES[:2]),
)
@fuzz_settings(200)
def test_with_the_default_weights_each_signal_strictly_matters(
    similarity: float, age: float, reward: float, outcome: OutcomeStatus
) -> None:
    now = 100 * DAY
    base = score(similarity, now - age, reward, outcome, now)
    better = ORDERED_OUTCOMES[ORDERED_OUTCOMES.index(outcome) + 1]
    assert score(similarity, now - age / 2, reward, outcome, now) > base
    assert score(similarity, now - age, reward / 2, outcome, now) < base
    assert score(similarity, now - age, reward, better, now) > base


# --------------------------------------------------------------------------- similarity order


@st.composite
def candidates(draw: st.DrawFn, max_size: int = 8) -> list[SearchResult]:
    """Search results as a store returns them: most similar first."""
    n = draw(st.integers(0, max_size))
    sims = sorted(draw(st.lists(similarities, min_size=n, max_size=n)), reverse=True)
    return [
        SearchResult(
            make_episode(
                episode_id=f"c{i}",
                reward=draw(unit),
                outcome=draw(outcomes),
                timestamp=draw(TIMESTAMPS),  # an episode's: 1970 to 2200
            ),
            sim,
        )
        for i, sim in enumerate(sims)
    ]


def top(
    found: list[SearchResult],
    now: float,
    top_k: int,
    w: ReplayWeights | None,
    half_life: float,
) -> tuple[PrioritizedResult, ...]:
    """The ``top_k`` first of ``rank_by_priority``, as the results recall returns."""
    ranked = rank_by_priority(found, now, w, half_life)[:top_k]
    return tuple(PrioritizedResult(c.episode, c.similarity, priority) for priority, c in ranked)


@given(candidates(), times, half_lives, st.floats(0.01, 5.0), st.integers(0, 10))
@fuzz_settings(200)
def test_only_similarity_weighted_gives_the_similarity_order(
    found: list[SearchResult], now: float, half_life: float, w_sim: float, top_k: int
) -> None:
    w = ReplayWeights(similarity=w_sim, recency=0.0, reward=0.0, outcome_bonus=0.0)
    ranked = top(found, now, top_k, w, half_life)
    assert [r.episode.episode_id for r in ranked] == [c.episode.episode_id for c in found[:top_k]]


@given(candidates(), times, times, half_lives, half_lives, unit, unit, unit, st.integers(0, 10))
@fuzz_settings(200)
def test_zero_recency_weight_makes_time_irrelevant(
    found: list[SearchResult],
    now: float,
    other_now: float,
    half_life: float,
    other_half_life: float,
    w_sim: float,
    w_rew: float,
    w_out: float,
    top_k: int,
) -> None:
    assume(w_sim or w_rew or w_out)
    w = ReplayWeights(similarity=w_sim, recency=0.0, reward=w_rew, outcome_bonus=w_out)
    assert top(found, now, top_k, w, half_life) == top(found, other_now, top_k, w, other_half_life)


@given(candidates(), times, weights, half_lives, st.integers(0, 10))
@fuzz_settings(300)
def test_rank_by_priority_is_sorted_and_a_prefix_of_the_full_ranking(
    found: list[SearchResult],
    now: float,
    w: ReplayWeights | None,
    half_life: float,
    top_k: int,
) -> None:
    ranked = top(found, now, top_k, w, half_life)
    everything = top(found, now, len(found), w, half_life)
    assert ranked == everything[:top_k]
    priorities = [r.priority for r in everything]
    assert priorities == sorted(priorities, reverse=True)
    assert all(math.isfinite(p) and p >= 0.0 for p in priorities)
    for result in everything:
        episode = result.episode
        assert result == compute_priority(
            SearchResult(episode, result.similarity), now, w, half_life
        )
        assert result.priority == priority_score(
            result.similarity,
            episode.timestamp,
            episode.feedback.reward,
            episode.outcome,
            now,
            w,
            half_life,
        )
    # Ties keep the similarity order (a stable sort), as the article's does.
    order = {c.episode.episode_id: i for i, c in enumerate(found)}
    for a, b in itertools.pairwise(everything):
        if a.priority == b.priority:
            assert order[a.episode.episode_id] < order[b.episode.episode_id]


# --------------------------------------------------------------------------- recall


@st.composite
def small_stores(draw: st.DrawFn) -> dict[str, Any]:
    top_k = draw(st.integers(1, 4))
    n = draw(st.integers(0, 2 * top_k))  # never more than fetch_k = 2 * top_k
    descriptions = draw(st.lists(DESCRIPTIONS, min_size=n, max_size=n, unique=True))
    episodes = [
        make_episode(
            episode_id=f"ep-{i}",
            description=description,
            reward=draw(unit),
            outcome=draw(outcomes),
            timestamp=draw(st.floats(0.0, 10 * DAY)),
        )
        for i, description in enumerate(descriptions)
    ]
    return {
        "episodes": episodes,
        "top_k": top_k,
        "query": draw(DESCRIPTIONS),
        "now": draw(st.floats(0.0, 20 * DAY)),
        "weights": draw(weights),
        "half_life": draw(st.floats(60.0, 30 * DAY)),
    }


@given(small_stores())
@fuzz_settings(50)
def test_recall_equals_the_brute_force_reference_when_the_store_fits_in_fetch_k(
    case: dict[str, Any],
) -> None:
    episodes, top_k, query = case["episodes"], case["top_k"], case["query"]
    now, w, half_life = case["now"], case["weights"], case["half_life"]
    memory = EpisodicMemory(store=ChromaEpisodeStore())
    memory.record_many(episodes)
    got = memory.recall(
        query, top_k=top_k, current_time=now, weights=w, half_life=half_life, ranking="article"
    )
    expected = article_recall(episodes, memory.embeddings, query, top_k, now, w, half_life)
    # Every episode's reference priority (2 * n candidates: all of them).
    reference = dict(
        article_recall(episodes, memory.embeddings, query, len(episodes) or 1, now, w, half_life)
    )
    assert len(got) == len(expected) == min(top_k, len(episodes))
    priorities = [r.priority for r in got]
    assert priorities == sorted(priorities, reverse=True)
    # Chroma computes similarity in float32: equal up to that, and the same episodes
    # except where two priorities tie within that precision.
    for result, (_, priority) in zip(got, expected, strict=True):
        assert math.isclose(result.priority, priority, abs_tol=1e-5)
        assert math.isclose(result.priority, reference[result.episode.episode_id], abs_tol=1e-5)
    cutoff = expected[-1][1] if expected else math.inf
    clear = {episode_id for episode_id, p in expected if p > cutoff + 1e-5}
    assert clear <= {r.episode.episode_id for r in got}


@fuzz_settings(300)
@given(
    rows=st.lists(
        st.tuples(
            st.sampled_from([-0.2, 0.1, 0.3, 0.3, 0.45, 0.6, 0.6, 0.9]),
            st.sampled_from([0.0, 0.2, 0.5, 0.5, 0.8, 1.0]),
        ),
        max_size=40,
    ),
    floor=st.sampled_from([0.0, 0.3, 0.5]),
    k=st.integers(0, 5),
)
def test_top_lessons_is_the_brute_force_order(
    rows: list[tuple[float, float]], floor: float, k: int
) -> None:
    import numpy as np  # noqa: PLC0415

    from langchain_episodic.scoring.credit import utility_factor  # noqa: PLC0415
    from langchain_episodic.scoring.ranking import top_lessons  # noqa: PLC0415

    ids = [f"lesson-{i:03d}" for i in range(len(rows))]
    similarities = np.array([s for s, _ in rows], dtype=np.float32)
    utilities = np.array([u for _, u in rows])
    expected = sorted(
        (i for i, (s, _) in enumerate(rows) if similarities[i] >= floor),
        key=lambda i: (-(float(similarities[i]) * utility_factor(rows[i][1])), ids[i]),
    )[:k]

    assert top_lessons(similarities, utilities, ids, floor, k) == expected
