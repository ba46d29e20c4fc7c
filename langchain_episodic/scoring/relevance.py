"""Relevance-first ranking, the default: only episodes about the task compete on value.

The article's priority adds recency, reward and outcome to similarity, so "recorded
today" (0.3) outweighs three quarters of a perfect match (0.4): over two weeks of
episodes it cut MiniLM's hit@1 from 76% to 31% (``benchmarks/retrieval_quality.py``).
This ranking keeps the article's signals but puts relevance first:

1. **Relevance test.** A candidate is relevant when its cosine similarity reaches the
   floor (``min_similarity``, :data:`RELEVANCE_FLOOR` by default) *and* lies within
   ``relevance_margin`` (:data:`RELEVANCE_MARGIN`) of the most similar candidate.
   The rest are rejected, with the reason; recall may return fewer than ``top_k``
   episodes, or none.
2. **Value scales relevance.** Each relevant episode gets a value in [0, 1]: the
   article's recency, reward and outcome signals mixed by the recency / reward /
   outcome weights of :class:`~langchain_episodic.ReplayWeights`, where recency
   decays with a half-life of :data:`RELEVANCE_HALF_LIFE` (30 days, for agents that
   run for weeks) down to a floor of :data:`RECENCY_FLOOR` rather than to zero. The
   priority is ``similarity * (1 - VALUE_SHARE + VALUE_SHARE * value)``: among
   equally similar episodes a recent success beats an old failure, but value never
   lifts a clearly less similar episode above a closer one.

The constants were chosen by measurement (``benchmarks/retrieval_quality.py``, see
``benchmarks/results/retrieval_quality.md``). The article's ranking stays available,
exact, as ``ranking="article"``.

Example:
    >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
    >>> from langchain_episodic.scoring.priority import SearchResult
    >>> def episode(name, outcome, timestamp):
    ...     return Episode(name, TaskDescription("Fix the login form"), "...",
    ...                    Feedback(reward=1.0 if outcome == "success" else 0.0),
    ...                    OutcomeStatus(outcome), timestamp=timestamp)
    >>> candidates = [
    ...     SearchResult(episode("old-failure", "failure", 0.0), 0.80),
    ...     SearchResult(episode("new-success", "success", 86_400.0), 0.80),
    ...     SearchResult(episode("unrelated", "success", 86_400.0), 0.05),
    ... ]
    >>> ranking = rank_by_relevance(candidates, current_time=86_400.0)
    >>> [c.episode.episode_id for _, c in ranking.ranked]
    ['new-success', 'old-failure']
    >>> [(c.episode.episode_id, reason) for c, reason in ranking.rejected]
    [('unrelated', 'similarity 0.05 is below the floor 0.20')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

from langchain_episodic.model.episode import OutcomeStatus
from langchain_episodic.scoring.decay import half_life_decay
from langchain_episodic.scoring.priority import (
    DEFAULT_WEIGHTS,
    Rankable,
    ReplayWeights,
    outcome_score,
)

__all__ = [
    "DEFAULT_RANKING",
    "RECENCY_FLOOR",
    "RELEVANCE_FLOOR",
    "RELEVANCE_HALF_LIFE",
    "RELEVANCE_MARGIN",
    "UTILITY_SIMILARITY_POWER",
    "VALUE_SHARE",
    "Ranking",
    "RelevanceRanking",
    "episode_value",
    "rank_by_relevance",
    "rank_by_utility",
    "rejection_reason",
    "relevance_priority",
]

Ranking = Literal["relevance", "article", "utility"]
"""``"relevance"`` (the default): relevance test, then value; ``"article"``: the
article's additive priority, exactly; ``"utility"``: every candidate above the floor,
ordered by what credit learnt of it (:func:`rank_by_utility`)."""

DEFAULT_RANKING: Ranking = "relevance"

RELEVANCE_FLOOR = 0.2
"""Cosine similarity a candidate needs to count as relevant at all, for an embedder
that :func:`relevance_floor_for` knows nothing about (and for ``HashingEmbeddings``)."""

_KNOWN_FLOORS = (
    # The packaged static model (the default embedder): a floor of 0.3 keeps 97% of its
    # similarity-only hit@1 on the paraphrase benchmark (0.35: 89%, 0.4: 71%); unrelated
    # tasks sit at 0.2-0.4, so some off-topic ones pass it (benchmarks/relevance.py).
    # Before "minilm-l6", which its name also contains.
    ("static-minilm-l6", 0.3),
    # all-MiniLM-L6-v2 puts unrelated coding tasks at 0.2-0.3: a floor of 0.3 keeps 99%
    # of similarity-only hit@1 on the paraphrase benchmark (0.2 keeps 101% but lets
    # through twice as many near misses).
    ("minilm-l6", 0.3),
    ("minilm_l6", 0.3),
)

RELEVANCE_MARGIN = 0.15
"""How far below the most similar candidate a relevant one may lie."""

RELEVANCE_HALF_LIFE = 30 * 86_400.0
"""Thirty days, in seconds: recency's half-life in the relevance ranking."""

RECENCY_FLOOR = 0.5
"""The recency signal never falls below this: old knowledge loses value, not relevance."""

VALUE_SHARE = 0.2
"""Share of the priority that value (recency, reward, outcome) can move."""

UTILITY_SIMILARITY_POWER = 0.25
"""How much similarity still orders the candidates of ``ranking="utility"``: their
priority is ``similarity ** 0.25 * value * utility``, so among candidates credit knows
nothing of (utility 0.5 each) the more similar comes first, while a clearly better
utility outranks a closer look-alike. Measured in the credit simulation
(``benchmarks/learning_value.py``): 0.25 beat 0, 0.5, 1 and 2 there."""

_C = TypeVar("_C", bound=Rankable)


@dataclass(frozen=True)
class RelevanceRanking(Generic[_C]):
    """The outcome of :func:`rank_by_relevance`.

    Attributes:
        ranked: The relevant candidates with their priority, highest first.
        rejected: The other candidates with the reason each failed the test, most
            similar first.
        threshold: The similarity a candidate needed (floor or best minus margin).
    """

    ranked: list[tuple[float, _C]]
    rejected: list[tuple[_C, str]]
    threshold: float


def relevance_floor_for(embeddings: object) -> float:
    """The relevance floor suited to an embedding model.

    An embedder may declare its own with a ``relevance_floor`` attribute; otherwise
    known models are recognised by their ``model_name`` / ``model`` (all-MiniLM-L6-v2:
    0.3), and anything else gets :data:`RELEVANCE_FLOOR`.

    Example:
        >>> from langchain_episodic import HashingEmbeddings
        >>> relevance_floor_for(HashingEmbeddings())
        0.2
    """
    declared = getattr(embeddings, "relevance_floor", None)
    if isinstance(declared, (int, float)) and not isinstance(declared, bool):
        return float(declared)
    name = str(getattr(embeddings, "model_name", "") or getattr(embeddings, "model", "")).lower()
    for needle, floor in _KNOWN_FLOORS:
        if needle in name:
            return floor
    return RELEVANCE_FLOOR


def rejection_reason(similarity: float, best: float, floor: float, margin: float) -> str | None:
    """Why a candidate of ``similarity`` fails the relevance test, or ``None`` if it passes.

    Example:
        >>> rejection_reason(0.5, best=0.9, floor=0.2, margin=0.15)
        'similarity 0.50 is more than 0.15 below the best candidate (0.90)'
        >>> rejection_reason(0.8, best=0.9, floor=0.2, margin=0.15) is None
        True
    """
    if not similarity >= floor:
        return f"similarity {similarity:.2f} is below the floor {floor:.2f}"
    if similarity < best - margin:
        return (
            f"similarity {similarity:.2f} is more than {margin:.2f} below the best "
            f"candidate ({best:.2f})"
        )
    return None


def episode_value(
    timestamp: float,
    reward: float,
    outcome: OutcomeStatus,
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = RELEVANCE_HALF_LIFE,
) -> float:
    """How much a relevant episode is worth replaying, in [0, 1].

    The recency (decaying to :data:`RECENCY_FLOOR`), reward and outcome signals,
    mixed in proportion to the weights' ``recency``, ``reward`` and ``outcome_bonus``
    (the article's 0.3 / 0.2 / 0.1 by default). With all three weights zero the
    value is 1: nothing but relevance counts.

    Example:
        >>> round(episode_value(0.0, 1.0, OutcomeStatus.SUCCESS, current_time=0.0), 3)
        1.0
        >>> round(episode_value(0.0, 0.0, OutcomeStatus.FAILURE, current_time=1e12), 3)
        0.25
    """
    w = weights or DEFAULT_WEIGHTS
    total = w.recency + w.reward + w.outcome_bonus
    if total == 0:
        return 1.0
    decay = half_life_decay(current_time - timestamp, half_life)
    recency = RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * decay
    mixed = w.recency * recency + w.reward * reward + w.outcome_bonus * outcome_score(outcome)
    return mixed / total


def relevance_priority(similarity: float, value: float) -> float:
    """The relevance ranking's priority: similarity, scaled by value within :data:`VALUE_SHARE`.

    Example:
        >>> relevance_priority(0.8, 1.0), round(relevance_priority(0.8, 0.0), 2)
        (0.8, 0.64)
    """
    return max(0.0, similarity) * (1.0 - VALUE_SHARE + VALUE_SHARE * value)


def rank_by_relevance(
    candidates: Iterable[_C],
    current_time: float,
    weights: ReplayWeights | None = None,
    half_life: float = RELEVANCE_HALF_LIFE,
    floor: float = RELEVANCE_FLOOR,
    margin: float = RELEVANCE_MARGIN,
    utility: Callable[[_C], float] | None = None,
) -> RelevanceRanking[_C]:
    """Drop the candidates that fail the relevance test; order the rest by priority.

    Ties keep the candidates' order (most similar first when they come from a search).

    Args:
        candidates: Anything with ``similarity``, ``timestamp``, ``reward`` and
            ``outcome`` (a store's hits,
            :class:`~langchain_episodic.scoring.priority.SearchResult`).
        current_time: Now, in seconds.
        weights: Mix of the value signals; the article's defaults when ``None``.
        half_life: Recency half-life in seconds.
        floor: Minimum similarity.
        margin: Maximum distance below the most similar candidate.
        utility: A factor per relevant candidate (credit's
            :func:`~langchain_episodic.scoring.credit.utility_factor`, 1 for an episode
            never credited) that scales its priority; none when ``None``.
    """
    pool = list(candidates)
    best = max((c.similarity for c in pool), default=0.0)
    ranked: list[tuple[float, _C]] = []
    rejected: list[tuple[_C, str]] = []
    for c in pool:
        reason = rejection_reason(c.similarity, best, floor, margin)
        if reason is not None:
            rejected.append((c, reason))
            continue
        value = episode_value(c.timestamp, c.reward, c.outcome, current_time, weights, half_life)
        priority = relevance_priority(c.similarity, value)
        ranked.append((priority if utility is None else priority * utility(c), c))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    rejected.sort(key=lambda pair: pair[0].similarity, reverse=True)
    return RelevanceRanking(ranked, rejected, max(floor, best - margin))


def rank_by_utility(
    candidates: Iterable[_C],
    current_time: float,
    utility: Callable[[_C], float],
    weights: ReplayWeights | None = None,
    half_life: float = RELEVANCE_HALF_LIFE,
    floor: float = RELEVANCE_FLOOR,
) -> RelevanceRanking[_C]:
    """The value stage with room to learn: every candidate above ``floor``, by utility.

    No margin below the best: among the candidates that reach the floor, an older
    episode that keeps helping outranks a closer look-alike that keeps failing. The
    priority is ``similarity ** UTILITY_SIMILARITY_POWER`` times the value factor of
    :func:`relevance_priority` times ``utility(c)``, the posterior mean of credit (0.5
    for an episode never credited).

    Example:
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> from langchain_episodic.scoring.priority import SearchResult
        >>> def found(name, similarity):
        ...     episode = Episode(name, TaskDescription("Fix the login form"), "...",
        ...                       Feedback(reward=1.0), OutcomeStatus.SUCCESS, timestamp=0.0)
        ...     return SearchResult(episode, similarity)
        >>> helped = {"look-alike": 0.2, "keeps-helping": 0.9}
        >>> ranking = rank_by_utility(
        ...     [found("look-alike", 0.8), found("keeps-helping", 0.5), found("far", 0.1)],
        ...     current_time=0.0, utility=lambda c: helped.get(c.episode.episode_id, 0.5))
        >>> [c.episode.episode_id for _, c in ranking.ranked]
        ['keeps-helping', 'look-alike']
    """
    ranked: list[tuple[float, _C]] = []
    rejected: list[tuple[_C, str]] = []
    for c in candidates:
        if not c.similarity >= floor:
            rejected.append((c, f"similarity {c.similarity:.2f} is below the floor {floor:.2f}"))
            continue
        value = episode_value(c.timestamp, c.reward, c.outcome, current_time, weights, half_life)
        scale = 1.0 - VALUE_SHARE + VALUE_SHARE * value
        priority = max(0.0, c.similarity) ** UTILITY_SIMILARITY_POWER * scale * utility(c)
        ranked.append((priority, c))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    rejected.sort(key=lambda pair: pair[0].similarity, reverse=True)
    return RelevanceRanking(ranked, rejected, floor)
