"""Pure scoring: cosine similarity, temporal decay and prioritized replay.

These are the article's formulas (sections 3, 5 and 6), with no I/O:

* ``cosine_similarity(a, b) = a·b / (|a| |b|)``, 0.0 when either vector is zero.
* ``temporal_decay(s, t_episode, t_now, h) = s · exp(-ln 2 · max(0, t_now - t_episode) / h)``
  (an episode dated more than a day ahead counts as old as it is far ahead: ``episode_age``)
* ``priority = w_sim · max(0, similarity) + w_rec · decay(1, t) + w_rew · reward
  + w_out · outcome`` with outcome 1.0 for success, 0.5 for partial, 0.0 for failure.

Examples:
    ```python
    from langchain_episodic import ReplayWeights
    from langchain_episodic.scoring.priority import temporal_decay

    assert round(temporal_decay(1.0, 0.0, 86_400.0), 2) == 0.5
    assert ReplayWeights.for_phase("early").similarity == 0.6
    ```
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, fields
from typing import Literal, Protocol, TypeVar

import numpy as np

from langchain_episodic._validation import check_int, finite_float
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import Episode, OutcomeStatus
from langchain_episodic.scoring.decay import episode_age, half_life_decay

__all__ = [
    "DEFAULT_HALF_LIFE",
    "Phase",
    "PrioritizedResult",
    "PriorityBreakdown",
    "Rankable",
    "ReplayWeights",
    "SearchResult",
    "compute_priority",
    "cosine_similarity",
    "explain_priority",
    "outcome_score",
    "phase_for_experience",
    "priority_score",
    "rank_by_priority",
    "temporal_decay",
]

DEFAULT_HALF_LIFE = 86_400.0
"""One day, in seconds: the article's default half-life."""

Phase = Literal["early", "normal", "late"]

_OUTCOME_SCORES = {
    OutcomeStatus.SUCCESS: 1.0,
    OutcomeStatus.PARTIAL: 0.5,
    OutcomeStatus.FAILURE: 0.0,
}


def check_half_life(half_life: float) -> float:
    """Return ``half_life`` as a float, or raise if it is not a positive finite number."""
    number = finite_float(half_life)
    if number is None or number <= 0:
        msg = f"half_life={half_life!r} is invalid: must be a positive finite number of seconds"
        raise EpisodicValueError(msg)
    return number


def check_time(name: str, value: float) -> float:
    """Return "now" as a float, or raise naming ``name`` if it is not finite or before 1970.

    A negative time would put every episode in the future, where recency exceeds 1.
    """
    number = finite_float(value)
    if number is None or number < 0:
        msg = f"{name}={value!r} is invalid: must be a finite number of seconds since 1970 (>= 0)"
        raise EpisodicValueError(msg)
    return number


def cosine_similarity(a: Sequence[float], b: Sequence[float]) -> float:
    """Cosine of the angle between two vectors of equal length.

    Args:
        a: First vector.
        b: Second vector, same length as ``a``.

    Returns:
        A value in [-1, 1]; 0.0 when either vector has zero magnitude.

    Raises:
        EpisodicValueError: The vectors differ in length.

    Examples:
        >>> cosine_similarity([1.0, 0.0], [1.0, 1.0])  # doctest: +ELLIPSIS
        0.7071...
        >>> cosine_similarity([0.0, 0.0], [1.0, 1.0])
        0.0
    """
    va, vb = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if va.shape != vb.shape:
        msg = f"vectors differ in shape: len(a)={va.size}, len(b)={vb.size}"
        raise EpisodicValueError(msg)
    mag_a, mag_b = float(np.linalg.norm(va)), float(np.linalg.norm(vb))
    return 0.0 if mag_a == 0.0 or mag_b == 0.0 else float(np.dot(va, vb) / (mag_a * mag_b))


def temporal_decay(
    similarity: float,
    episode_time: float,
    current_time: float,
    half_life: float = DEFAULT_HALF_LIFE,
) -> float:
    """Scale ``similarity`` down exponentially with the episode's age.

    An episode from the future counts as age 0 up to a day ahead (clock skew): it never
    gets a boost. Dated further ahead, it counts as old as it is far ahead
    (`episode_age`).

    Args:
        similarity: The value to decay (use 1.0 for the bare decay factor).
        episode_time: When the episode happened, in seconds.
        current_time: Now, in seconds.
        half_life: Age, in seconds, at which the weight halves (default one day).

    Examples:
        >>> round(temporal_decay(1.0, 0.0, 12 * 3600.0), 2)
        0.71
        >>> temporal_decay(1.0, 100.0, 0.0)
        1.0
        >>> temporal_decay(1.0, 10 * 86_400.0, 0.0) < 0.001  # ten days ahead: stale
        True
    """
    check_half_life(half_life)
    if not (math.isfinite(current_time) and math.isfinite(episode_time)):
        # max(0, nan) is 0: a NaN time would silently count as brand new.
        msg = f"times must be finite: episode_time={episode_time!r}, current_time={current_time!r}"
        raise EpisodicValueError(msg)
    return similarity * half_life_decay(episode_age(current_time, episode_time), half_life)


@dataclass(frozen=True)
class ReplayWeights:
    """Weights of the four signals in an episode's replay priority.

    Attributes:
        similarity: Weight of cosine similarity to the query (negative clipped to 0).
        recency: Weight of the temporal-decay factor.
        reward: Weight of the episode's reward.
        outcome_bonus: Weight of the outcome (success 1, partial 0.5, failure 0).
    """

    similarity: float = 0.4
    recency: float = 0.3
    reward: float = 0.2
    outcome_bonus: float = 0.1

    def __post_init__(self) -> None:
        values = {field.name: getattr(self, field.name) for field in fields(self)}
        for name, value in values.items():
            number = finite_float(value)
            if number is None or number < 0:
                msg = f"ReplayWeights.{name}={value!r} is invalid: must be finite and >= 0"
                raise EpisodicValueError(msg)
        if not any(values.values()):
            msg = (
                "ReplayWeights(0, 0, 0, 0) is invalid: at least one weight must be positive "
                "(with none, every episode's priority is 0 and the order means nothing)"
            )
            raise EpisodicValueError(msg)

    @classmethod
    def for_phase(cls, phase: Phase) -> ReplayWeights:
        """Return the article's weights for a learning phase.

        ============  ==========  =======  ======  =======
        phase         similarity  recency  reward  outcome
        ============  ==========  =======  ======  =======
        ``early``     0.6         0.1      0.2     0.1
        ``normal``    0.4         0.3      0.2     0.1
        ``late``      0.3         0.4      0.2     0.1
        ============  ==========  =======  ======  =======

        Raises:
            EpisodicValueError: ``phase`` is not one of the three names.
        """
        try:
            return _PHASES[phase]
        except (KeyError, TypeError):
            msg = f"phase={phase!r} is invalid: must be 'early', 'normal' or 'late'"
            raise EpisodicValueError(msg) from None

    @classmethod
    def for_experience(
        cls, n_episodes: int, early_below: int = 20, late_from: int = 200
    ) -> ReplayWeights:
        """Return the article's phase weights for a memory holding ``n_episodes``.

        The phase follows the amount of experience: ``"early"`` below
        ``early_below`` episodes, ``"late"`` from ``late_from`` on, ``"normal"``
        in between (see `for_phase`).

        Args:
            n_episodes: Episodes recorded so far (e.g. ``len(memory)``).
            early_below: First episode count that is no longer early.
            late_from: First episode count that is late; at least ``early_below``.

        Raises:
            EpisodicValueError: A count is not a non-negative integer, or
                ``late_from < early_below``.

        Examples:
            >>> ReplayWeights.for_experience(5) == ReplayWeights.for_phase("early")
            True
            >>> ReplayWeights.for_experience(20).similarity
            0.4
            >>> ReplayWeights.for_experience(200).recency
            0.4
        """
        return cls.for_phase(phase_for_experience(n_episodes, early_below, late_from))


def phase_for_experience(n_episodes: int, early_below: int = 20, late_from: int = 200) -> Phase:
    """The learning phase for ``n_episodes`` of experience (see ``ReplayWeights.for_experience``).

    Raises:
        EpisodicValueError: A count is not a non-negative integer, or
            ``late_from < early_below``.

    Examples:
        >>> [phase_for_experience(n) for n in (0, 19, 20, 199, 200)]
        ['early', 'early', 'normal', 'normal', 'late']
    """
    check_int("n_episodes", n_episodes, 0)
    check_int("early_below", early_below, 0)
    check_int("late_from", late_from, early_below)
    if n_episodes < early_below:
        return "early"
    if n_episodes >= late_from:
        return "late"
    return "normal"


DEFAULT_WEIGHTS = ReplayWeights()
"""The article's default weights (0.4, 0.3, 0.2, 0.1)."""

_PHASES: dict[str, ReplayWeights] = {
    "early": ReplayWeights(similarity=0.6, recency=0.1, reward=0.2, outcome_bonus=0.1),
    "normal": ReplayWeights(similarity=0.4, recency=0.3, reward=0.2, outcome_bonus=0.1),
    "late": ReplayWeights(similarity=0.3, recency=0.4, reward=0.2, outcome_bonus=0.1),
}


@dataclass(frozen=True)
class SearchResult:
    """A candidate episode found by similarity search.

    Attributes:
        episode: The stored episode.
        similarity: Cosine similarity between the query and the episode's task.
    """

    episode: Episode
    similarity: float

    @property
    def timestamp(self) -> float:
        """The episode's timestamp."""
        return self.episode.timestamp

    @property
    def reward(self) -> float:
        """The episode's reward."""
        return self.episode.feedback.reward

    @property
    def outcome(self) -> OutcomeStatus:
        """The episode's outcome."""
        return self.episode.outcome


@dataclass(frozen=True)
class PrioritizedResult:
    """An episode ranked for replay.

    Attributes:
        episode: The stored episode.
        similarity: Cosine similarity between the query and the episode's task.
        priority: The ranking's score: the article's weighted sum of similarity,
            recency, reward and outcome, or the relevance ranking's similarity
            scaled by value.
        relevant: Whether it passed the relevance test (always true for what the
            default ranking returns; ``ranking="article"`` returns candidates
            regardless and flags them).
    """

    episode: Episode
    similarity: float
    priority: float
    relevant: bool = True


def outcome_score(outcome: OutcomeStatus) -> float:
    """The outcome signal of the priority: 1.0 success, 0.5 partial, 0.0 failure."""
    return _OUTCOME_SCORES[outcome]


def compute_priority(
    result: SearchResult,
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = DEFAULT_HALF_LIFE,
) -> PrioritizedResult:
    """Score a candidate exactly as the article's prioritized replay does.

    Args:
        result: The candidate and its similarity to the query.
        current_time: Now, in seconds.
        weights: Signal weights; the article's defaults when ``None``.
        half_life: Recency half-life in seconds.

    Returns:
        The candidate with its priority.

    Examples:
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> ep = Episode("e1", TaskDescription("sort a list"), "sorted(xs)",
        ...              Feedback(reward=1.0), OutcomeStatus.SUCCESS, timestamp=0.0)
        >>> round(compute_priority(SearchResult(ep, 1.0), current_time=0.0).priority, 6)
        1.0
    """
    episode = result.episode
    stored = (episode.timestamp, episode.feedback.reward, episode.outcome)
    priority = priority_score(result.similarity, *stored, current_time, weights, half_life)
    return PrioritizedResult(episode, result.similarity, priority)


def priority_score(
    similarity: float,
    timestamp: float,
    reward: float,
    outcome: OutcomeStatus,
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = DEFAULT_HALF_LIFE,
) -> float:
    """The article's priority from its four signals; `compute_priority` uses it.

    Lets a caller rank candidates before building their episodes.
    """
    _, parts = _weighted(similarity, timestamp, reward, outcome, current_time, weights, half_life)
    return parts[0] + parts[1] + parts[2] + parts[3]


def _weighted(
    similarity: float,
    timestamp: float,
    reward: float,
    outcome: OutcomeStatus,
    current_time: float,
    weights: ReplayWeights | None,
    half_life: float,
) -> tuple[tuple[float, float, float], tuple[float, float, float, float]]:
    """The unweighted recency, reward and outcome signals, and the four weighted parts."""
    w = weights or DEFAULT_WEIGHTS
    recency = temporal_decay(1.0, timestamp, current_time, half_life)
    value = outcome_score(outcome)
    return (recency, reward, value), (
        w.similarity * max(0.0, similarity),
        w.recency * recency,
        w.reward * reward,
        w.outcome_bonus * value,
    )


@dataclass(frozen=True)
class PriorityBreakdown:
    """Why an episode ranked where it did: each signal and its weighted share.

    Attributes:
        similarity: Cosine similarity to the query (may be negative).
        recency: ``temporal_decay(1, episode time, now, half_life)``, in (0, 1].
        reward: The episode's reward, in [0, 1].
        outcome: Outcome score: 1 success, 0.5 partial, 0 failure.
        similarity_part: ``weights.similarity * max(0, similarity)``.
        recency_part: ``weights.recency * recency``.
        reward_part: ``weights.reward * reward``.
        outcome_part: ``weights.outcome_bonus * outcome``.
        priority: The sum of the four parts, equal to `compute_priority`'s.
    """

    similarity: float
    recency: float
    reward: float
    outcome: float
    similarity_part: float
    recency_part: float
    reward_part: float
    outcome_part: float
    priority: float


def explain_priority(
    result: SearchResult | PrioritizedResult,
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = DEFAULT_HALF_LIFE,
) -> PriorityBreakdown:
    """Split an episode's priority into its four signals and their weighted parts.

    Examples:
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> ep = Episode("e1", TaskDescription("sort a list"), "sorted(xs)",
        ...              Feedback(reward=0.5), OutcomeStatus.PARTIAL, timestamp=0.0)
        >>> parts = explain_priority(SearchResult(ep, 0.8), current_time=86_400.0)
        >>> round(parts.recency, 2), round(parts.similarity_part, 2), round(parts.priority, 2)
        (0.5, 0.32, 0.62)
    """
    episode = result.episode
    stored = (episode.timestamp, episode.feedback.reward, episode.outcome)
    signals, parts = _weighted(result.similarity, *stored, current_time, weights, half_life)
    priority = parts[0] + parts[1] + parts[2] + parts[3]
    return PriorityBreakdown(result.similarity, *signals, *parts, priority)


class Rankable(Protocol):
    """What ranking reads of a candidate: its similarity and the three stored signals."""

    @property
    def similarity(self) -> float:
        """Cosine similarity to the query."""
        ...

    @property
    def timestamp(self) -> float:
        """When the episode happened, in seconds."""
        ...

    @property
    def reward(self) -> float:
        """The episode's reward."""
        ...

    @property
    def outcome(self) -> OutcomeStatus:
        """The episode's outcome."""
        ...


_C = TypeVar("_C", bound=Rankable)


def rank_by_priority(
    candidates: Iterable[_C],
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = DEFAULT_HALF_LIFE,
) -> list[tuple[float, _C]]:
    """Every candidate with its priority, highest priority first: the article's ranking.

    Candidates are anything with ``similarity``, ``timestamp``, ``reward`` and
    ``outcome`` (a `SearchResult`, or a store's hit before its episode is
    built). Ties keep the candidates' order (most similar first), as the article's
    stable sort does.

    Examples:
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> def episode(name, reward):
        ...     return Episode(name, TaskDescription("sort a list"), "sorted(xs)",
        ...                    Feedback(reward=reward), OutcomeStatus.SUCCESS, timestamp=0.0)
        >>> ranked = rank_by_priority(
        ...     [SearchResult(episode("a", 0.1), 0.9), SearchResult(episode("b", 1.0), 0.8)], 0.0
        ... )
        >>> [(round(priority, 2), c.episode.episode_id) for priority, c in ranked]
        [(0.92, 'b'), (0.78, 'a')]
    """
    setting = (current_time, weights, half_life)
    scored = [
        (priority_score(c.similarity, c.timestamp, c.reward, c.outcome, *setting), c)
        for c in candidates
    ]
    scored.sort(key=lambda pair: pair[0], reverse=True)
    return scored
