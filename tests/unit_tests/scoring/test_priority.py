"""Unit tests for cosine similarity, temporal decay and prioritized replay (sections 3, 5, 6)."""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Iterable
from typing import Any

import pytest

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import OutcomeStatus
from langchain_episodic.scoring.priority import (
    DEFAULT_HALF_LIFE,
    PrioritizedResult,
    ReplayWeights,
    SearchResult,
    compute_priority,
    cosine_similarity,
    outcome_score,
    rank_by_priority,
    temporal_decay,
)
from tests.unit_tests.factories import make_episode

HOUR = 3600.0
DAY = 86_400.0
NAN = float("nan")
INF = float("inf")


# ------------------------------------------------------------------- cosine similarity


def test_identical_direction_is_one() -> None:
    assert cosine_similarity([1.0, 2.0, 3.0], [2.0, 4.0, 6.0]) == pytest.approx(1.0, abs=1e-12)


def test_orthogonal_is_zero() -> None:
    assert cosine_similarity([1.0, 0.0], [0.0, 1.0]) == 0.0
    assert cosine_similarity([1.0, 1.0, 0.0], [1.0, -1.0, 5.0]) == pytest.approx(0.0, abs=1e-12)


def test_opposite_is_minus_one() -> None:
    assert cosine_similarity([1.0, -2.0], [-3.0, 6.0]) == pytest.approx(-1.0, abs=1e-12)


def test_known_angle() -> None:
    assert cosine_similarity([1.0, 0.0], [1.0, 1.0]) == pytest.approx(1 / math.sqrt(2))
    assert cosine_similarity([3.0, 4.0], [4.0, 3.0]) == pytest.approx(24 / 25)


def test_magnitude_does_not_matter() -> None:
    a, b = [0.2, -0.5, 0.9], [0.7, 0.1, -0.3]
    scaled = [x * 1000.0 for x in a]
    assert cosine_similarity(scaled, b) == pytest.approx(cosine_similarity(a, b))


@pytest.mark.parametrize(
    ("a", "b"),
    [([0.0, 0.0], [1.0, 1.0]), ([1.0, 1.0], [0.0, 0.0]), ([0.0, 0.0, 0.0], [0.0, 0.0, 0.0])],
)
def test_zero_vectors_give_zero(a: list[float], b: list[float]) -> None:
    result = cosine_similarity(a, b)
    assert result == 0.0
    assert type(result) is float


def test_accepts_tuples_and_returns_python_float() -> None:
    result = cosine_similarity((1.0, 2.0), (2.0, 1.0))
    assert type(result) is float
    assert result == pytest.approx(0.8)


@pytest.mark.parametrize(("a", "b"), [([1.0, 2.0], [1.0, 2.0, 3.0]), ([1.0], []), ([], [0.5])])
def test_length_mismatch_raises(a: list[float], b: list[float]) -> None:
    with pytest.raises(EpisodicValueError, match="differ") as error:
        cosine_similarity(a, b)
    assert isinstance(error.value, ValueError)
    assert f"len(a)={len(a)}" in str(error.value)
    assert f"len(b)={len(b)}" in str(error.value)


# ---------------------------------------------------------------------- temporal decay


@pytest.mark.parametrize(
    ("age", "digits", "expected"),
    [
        (0.0, 2, 1.00),
        (12 * HOUR, 2, 0.71),
        (DAY, 2, 0.50),
        (2 * DAY, 2, 0.25),
        (7 * DAY, 3, 0.008),
    ],
    ids=["0h", "12h", "1day", "2days", "1week"],
)
def test_decay_table_from_article(age: float, digits: int, expected: float) -> None:
    now = 1_700_000_000.0
    assert round(temporal_decay(1.0, now - age, now), digits) == expected


def test_decay_is_exact_powers_of_two() -> None:
    assert temporal_decay(1.0, 0.0, DAY) == pytest.approx(0.5, rel=1e-12)
    assert temporal_decay(1.0, 0.0, 7 * DAY) == pytest.approx(2**-7, rel=1e-12)
    assert temporal_decay(1.0, 0.0, 12 * HOUR) == pytest.approx(2**-0.5, rel=1e-12)


def test_default_half_life_is_one_day() -> None:
    assert DEFAULT_HALF_LIFE == DAY
    assert temporal_decay(1.0, 0.0, 5 * HOUR) == temporal_decay(1.0, 0.0, 5 * HOUR, DAY)


def test_decay_scales_the_similarity() -> None:
    assert temporal_decay(0.6, 0.0, DAY) == pytest.approx(0.3)
    assert temporal_decay(0.0, 0.0, DAY) == 0.0
    assert temporal_decay(-0.8, 0.0, 2 * DAY) == pytest.approx(-0.2)


def test_custom_half_life() -> None:
    assert temporal_decay(1.0, 0.0, 2 * HOUR, half_life=HOUR) == pytest.approx(0.25)
    assert temporal_decay(1.0, 0.0, DAY, half_life=2 * DAY) == pytest.approx(2**-0.5)
    assert temporal_decay(1.0, 0, 10, half_life=10) == pytest.approx(0.5)


def test_decay_is_monotonic_in_age() -> None:
    factors = [temporal_decay(1.0, 0.0, hours * HOUR) for hours in range(0, 24 * 8, 6)]
    assert all(a > b for a, b in itertools.pairwise(factors))
    assert all(0.0 < f <= 1.0 for f in factors)


@pytest.mark.parametrize("ahead", [1.0, HOUR, 23 * HOUR])
def test_future_timestamps_never_boost(ahead: float) -> None:
    now = 1_700_000_000.0
    assert temporal_decay(1.0, now + ahead, now) == 1.0
    assert temporal_decay(0.4, now + ahead, now) == 0.4


@pytest.mark.parametrize("ahead", [2 * DAY, 30 * DAY, 176 * 365 * DAY])
def test_a_date_no_clock_skew_explains_counts_as_old_as_it_is_far_ahead(ahead: float) -> None:
    now = 1_700_000_000.0
    assert temporal_decay(1.0, now + ahead, now) == temporal_decay(1.0, now - ahead, now)
    assert temporal_decay(1.0, now + ahead, now) < temporal_decay(1.0, now - DAY, now)


@pytest.mark.parametrize(
    ("half_life", "shown"),
    [(0, "0"), (0.0, "0.0"), (-DAY, "-86400.0"), (NAN, "nan"), (INF, "inf"), (-INF, "-inf")],
)
def test_invalid_half_life_raises(half_life: float, shown: str) -> None:
    with pytest.raises(EpisodicValueError) as error:
        temporal_decay(1.0, 0.0, DAY, half_life=half_life)
    assert isinstance(error.value, ValueError)
    assert "half_life" in str(error.value)
    assert f"={shown}" in str(error.value)


@pytest.mark.parametrize(
    ("half_life", "shown"), [(True, "True"), ("86400", "'86400'"), (None, "None")]
)
def test_half_life_must_be_a_number(half_life: object, shown: str) -> None:
    with pytest.raises(EpisodicValueError) as error:
        temporal_decay(1.0, 0.0, DAY, half_life=half_life)  # type: ignore[arg-type]
    assert "half_life" in str(error.value)
    assert shown in str(error.value)


# ---------------------------------------------------------------------- replay weights


def test_weight_defaults_match_article() -> None:
    w = ReplayWeights()
    assert (w.similarity, w.recency, w.reward, w.outcome_bonus) == (0.4, 0.3, 0.2, 0.1)


@pytest.mark.parametrize(
    ("phase", "expected"),
    [
        ("early", (0.6, 0.1, 0.2, 0.1)),
        ("normal", (0.4, 0.3, 0.2, 0.1)),
        ("late", (0.3, 0.4, 0.2, 0.1)),
    ],
)
def test_for_phase_table(phase: str, expected: tuple[float, float, float, float]) -> None:
    w = ReplayWeights.for_phase(phase)  # type: ignore[arg-type]
    assert isinstance(w, ReplayWeights)
    assert (w.similarity, w.recency, w.reward, w.outcome_bonus) == expected


def test_normal_phase_is_the_default() -> None:
    assert ReplayWeights.for_phase("normal") == ReplayWeights()


@pytest.mark.parametrize("phase", ["middle", "Early", "", None, 1, ["early"]])
def test_invalid_phase_raises(phase: object) -> None:
    with pytest.raises(EpisodicValueError) as error:
        ReplayWeights.for_phase(phase)  # type: ignore[arg-type]
    assert isinstance(error.value, ValueError)
    assert f"phase={phase!r}" in str(error.value)


@pytest.mark.parametrize("field", ["similarity", "recency", "reward", "outcome_bonus"])
@pytest.mark.parametrize(
    ("value", "shown"),
    [(-0.1, "-0.1"), (-1, "-1"), (NAN, "nan"), (INF, "inf"), (True, "True"), ("0.4", "'0.4'")],
)
def test_invalid_weight_raises(field: str, value: object, shown: str) -> None:
    with pytest.raises(EpisodicValueError) as error:
        ReplayWeights(**{field: value})  # type: ignore[arg-type]
    assert isinstance(error.value, ValueError)
    assert field in str(error.value)
    assert f"={shown}" in str(error.value)


def test_zero_and_large_weights_are_allowed() -> None:
    w = ReplayWeights(similarity=0.0, recency=0, reward=2.5, outcome_bonus=10)
    assert (w.similarity, w.recency, w.reward, w.outcome_bonus) == (0.0, 0, 2.5, 10)


def test_weights_are_frozen() -> None:
    w = ReplayWeights.for_phase("early")
    with pytest.raises(dataclasses.FrozenInstanceError):
        w.similarity = 1.0  # type: ignore[misc]
    assert ReplayWeights.for_phase("early").similarity == 0.6


def test_huge_integer_half_life_raises_a_value_error() -> None:
    with pytest.raises(EpisodicValueError, match="half_life"):
        temporal_decay(1.0, 0.0, 1.0, half_life=10**400)


@pytest.mark.parametrize("field", ["similarity", "recency", "reward", "outcome_bonus"])
def test_huge_integer_weight_raises_a_value_error(field: str) -> None:
    with pytest.raises(EpisodicValueError, match=field):
        ReplayWeights(**{field: 10**400})


# --------------------------------------------------------------------- compute_priority


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [(OutcomeStatus.SUCCESS, 1.0), (OutcomeStatus.PARTIAL, 0.5), (OutcomeStatus.FAILURE, 0.0)],
)
def test_outcome_score(outcome: OutcomeStatus, expected: float) -> None:
    assert outcome_score(outcome) == expected


def test_priority_perfect_episode_is_one() -> None:
    episode = make_episode(reward=1.0, outcome=OutcomeStatus.SUCCESS, timestamp=0.0)
    result = compute_priority(SearchResult(episode, 1.0), current_time=0.0)
    assert result.priority == pytest.approx(1.0)


def test_priority_default_weights_hand_computed() -> None:
    # 0.4 * 0.5 + 0.3 * decay(1 day) + 0.2 * 0.8 + 0.1 * 1.0 = 0.2 + 0.15 + 0.16 + 0.1
    episode = make_episode(reward=0.8, outcome=OutcomeStatus.SUCCESS, timestamp=1000.0)
    result = compute_priority(SearchResult(episode, 0.5), current_time=1000.0 + DAY)
    assert isinstance(result, PrioritizedResult)
    assert result.priority == pytest.approx(0.61, abs=1e-12)
    assert result.episode is episode
    assert result.similarity == 0.5


def test_priority_negative_similarity_is_clipped_but_reported() -> None:
    # max(0, -0.7) = 0 -> 0 + 0.3 * 0.25 + 0.2 * 0.4 + 0.1 * 0.5 = 0.205
    episode = make_episode(reward=0.4, outcome=OutcomeStatus.PARTIAL, timestamp=0.0)
    result = compute_priority(SearchResult(episode, -0.7), current_time=2 * DAY)
    assert result.priority == pytest.approx(0.205, abs=1e-12)
    assert result.similarity == -0.7
    zero = compute_priority(SearchResult(episode, 0.0), current_time=2 * DAY)
    assert result.priority == zero.priority


def test_priority_failure_scores_no_outcome_bonus() -> None:
    # 0.4 * 1.0 + 0.3 * 1.0 + 0.2 * 0.0 + 0.1 * 0.0 = 0.7
    episode = make_episode(reward=0.0, outcome=OutcomeStatus.FAILURE, timestamp=50.0)
    assert compute_priority(SearchResult(episode, 1.0), 50.0).priority == pytest.approx(0.7)


@pytest.mark.parametrize(
    ("outcome", "expected"),
    [("success", 0.1), ("partial", 0.05), ("failure", 0.0)],
)
def test_priority_outcome_signal_alone(outcome: str, expected: float) -> None:
    weights = ReplayWeights(similarity=0, recency=0, reward=0, outcome_bonus=0.1)
    episode = make_episode(outcome=outcome)
    result = compute_priority(SearchResult(episode, 0.9), 0.0, weights)
    assert result.priority == pytest.approx(expected, abs=1e-15)


def test_priority_custom_weights() -> None:
    # early phase: 0.6 * 0.9 + 0.1 * 2**-0.5 + 0.2 * 0.5 + 0.1 * 1.0
    episode = make_episode(reward=0.5, outcome=OutcomeStatus.SUCCESS, timestamp=0.0)
    result = compute_priority(
        SearchResult(episode, 0.9), 12 * HOUR, weights=ReplayWeights.for_phase("early")
    )
    assert result.priority == pytest.approx(0.54 + 0.1 * 2**-0.5 + 0.1 + 0.1, abs=1e-12)
    custom = ReplayWeights(similarity=2.0, recency=0.0, reward=1.0, outcome_bonus=0.0)
    assert compute_priority(SearchResult(episode, 0.25), 0.0, custom).priority == pytest.approx(1.0)


def test_priority_custom_half_life() -> None:
    # recency after two half-lives of one hour is 0.25: 0.4 * 0 + 0.3 * 0.25 + 0.2 * 1 + 0.1 * 1
    episode = make_episode(reward=1.0, outcome=OutcomeStatus.SUCCESS, timestamp=0.0)
    result = compute_priority(SearchResult(episode, 0.0), 2 * HOUR, half_life=HOUR)
    assert result.priority == pytest.approx(0.375, abs=1e-12)
    default = compute_priority(SearchResult(episode, 0.0), 2 * HOUR)
    assert default.priority == pytest.approx(0.3 * 2 ** (-2 / 24) + 0.3, abs=1e-12)


def test_priority_future_episode_gets_full_recency() -> None:
    episode = make_episode(reward=0.0, outcome=OutcomeStatus.FAILURE, timestamp=DAY)
    assert compute_priority(SearchResult(episode, 0.0), 0.0).priority == pytest.approx(0.3)


def test_priority_invalid_half_life_raises() -> None:
    with pytest.raises(EpisodicValueError, match="half_life"):
        compute_priority(SearchResult(make_episode(), 0.5), 0.0, half_life=0.0)


def test_recent_beats_old_all_else_equal() -> None:
    old = make_episode(episode_id="old", timestamp=0.0)
    new = make_episode(episode_id="new", timestamp=6 * DAY)
    now = 7 * DAY
    assert (
        compute_priority(SearchResult(new, 0.5), now).priority
        > compute_priority(SearchResult(old, 0.5), now).priority
    )


# --------------------------------------------------------------------- rank_by_priority


def candidate(name: str, similarity: float, reward: float = 0.5) -> SearchResult:
    return SearchResult(make_episode(episode_id=name, reward=reward), similarity)


def ranked_ids(candidates: Iterable[SearchResult], *args: Any, **kwargs: Any) -> list[str]:
    return [c.episode.episode_id for _, c in rank_by_priority(candidates, *args, **kwargs)]


def test_rank_orders_by_priority_descending() -> None:
    candidates = [candidate("low", 0.1), candidate("high", 0.9), candidate("mid", 0.5)]
    ranked = rank_by_priority(candidates, current_time=0.0)
    assert [c.episode.episode_id for _, c in ranked] == ["high", "mid", "low"]
    priorities = [priority for priority, _ in ranked]
    assert priorities == sorted(priorities, reverse=True)
    for priority, c in ranked:
        assert priority == compute_priority(c, 0.0).priority


def test_rank_ties_keep_input_order() -> None:
    candidates = [
        candidate("a", 0.5),
        candidate("b", 0.7),
        candidate("c", 0.5),
        candidate("d", 0.7),
        candidate("e", 0.5),
    ]
    assert ranked_ids(candidates, current_time=0.0) == ["b", "d", "a", "c", "e"]


def test_rank_all_tied_is_identity() -> None:
    names = [f"t{i}" for i in range(8)]
    assert ranked_ids((candidate(n, 0.3) for n in names), current_time=0.0) == names


def test_rank_keeps_every_candidate_and_an_empty_input_is_empty() -> None:
    candidates = [candidate("a", 0.1), candidate("b", 0.9), candidate("c", 0.5)]
    assert ranked_ids(candidates, current_time=0.0) == ["b", "c", "a"]
    assert rank_by_priority([], current_time=0.0) == []


def test_rank_passes_weights_and_half_life_through() -> None:
    similar_old = SearchResult(make_episode(episode_id="similar", timestamp=0.0), 0.9)
    recent = SearchResult(make_episode(episode_id="recent", timestamp=10 * DAY), 0.2)
    now = 10 * DAY
    early = ranked_ids([recent, similar_old], now, ReplayWeights.for_phase("early"))
    assert early == ["similar", "recent"]
    late = ranked_ids([similar_old, recent], now, ReplayWeights.for_phase("late"))
    assert late == ["recent", "similar"]
    # With a half-life of 100 days, ten days barely matter and similarity wins again.
    slow = rank_by_priority([recent, similar_old], now, half_life=100 * DAY)
    assert [c.episode.episode_id for _, c in slow] == ["similar", "recent"]
    expected = compute_priority(recent, now, half_life=100 * DAY).priority
    assert slow[1][0] == expected


@pytest.mark.parametrize(
    ("episode_time", "now"), [(0.0, math.nan), (math.nan, 0.0), (0.0, math.inf)]
)
def test_non_finite_times_never_count_as_recent(episode_time: float, now: float) -> None:
    with pytest.raises(EpisodicValueError, match="times must be finite"):
        temporal_decay(1.0, episode_time, now)
