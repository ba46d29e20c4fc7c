"""Relevance-first ranking, the default: only episodes about the task compete on value.

The article's priority adds recency, reward and outcome to similarity, so "recorded
today" (0.3) outweighs three quarters of a perfect match (0.4): over two weeks of
episodes it cut MiniLM's hit@1 from 76% to 31% (``benchmarks/retrieval_quality.py``).
This ranking keeps the article's signals but puts relevance first:

1. **Relevance test, calibrated.** A candidate is relevant when its cosine similarity
   reaches the embedder's floor (`calibration_for`) *and* the task's
   **background similarity** plus the embedder's offset: the mean similarity of the
   task to its `BACKGROUND_TOP` nearest background texts, everyday requests
   known not to be about the memory's work
   (`langchain_episodic.embeddings.background`). An off-topic task sits close to
   its own background ("Schedule a dentist appointment" to "Book a check-up with the
   dentist"), so a stored episode that merely shares a word with it falls below; a
   coding task is far from everyday text, so its paraphrases clear the bar even
   where the model's similarities are low. No margin below the best candidate
   (unless ``relevance_margin`` asks for one): every candidate about the task
   competes on value; recall may return fewer than ``top_k`` episodes, or none.
2. **Value scales relevance.** Each relevant episode gets a value in [0, 1]: the
   article's recency, reward and outcome signals mixed by the recency / reward /
   outcome weights of `ReplayWeights`, where recency
   decays with a half-life of `RELEVANCE_HALF_LIFE` (30 days, for agents that
   run for weeks) down to a floor of `RECENCY_FLOOR` rather than to zero. The
   priority is ``similarity * (1 - VALUE_SHARE + VALUE_SHARE * value)``: among
   equally similar episodes a recent success beats an old failure, but value never
   lifts a clearly less similar episode above a closer one. (The replay goes further:
   its compact renderer shows what worked among *every* relevant candidate first,
   `select`. A stronger
   value share here cost the exact task its first place on the labelled paraphrases,
   ``benchmarks/relevance.py``: hit@1 52% -> 47% with the static model.)

The constants were chosen by measurement (``benchmarks/relevance.py`` and
``benchmarks/retrieval_quality.py``, see ``benchmarks/results/``). The article's
ranking stays available, exact, as ``ranking="article"``.

Examples:
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
    >>> calibrated = rank_by_relevance(candidates, current_time=86_400.0, background=0.85)
    >>> calibrated.rejected[0][1]
    "similarity 0.80 is below the task's background 0.85 (its nearest everyday texts)"
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Generic, Literal, TypeVar

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.model.episode import OutcomeStatus
from langchain_episodic.scoring.decay import episode_age, half_life_decay
from langchain_episodic.scoring.priority import (
    DEFAULT_WEIGHTS,
    Rankable,
    ReplayWeights,
    outcome_score,
)

__all__ = [
    "BACKGROUND_TOP",
    "DEFAULT_CALIBRATION",
    "DEFAULT_RANKING",
    "RECENCY_FLOOR",
    "RELEVANCE_FLOOR",
    "RELEVANCE_HALF_LIFE",
    "RELEVANCE_MARGIN",
    "VALUE_SHARE",
    "Calibration",
    "Ranking",
    "RelevanceRanking",
    "background_similarity",
    "calibration_for",
    "episode_value",
    "rank_by_relevance",
    "rejection_reason",
    "relevance_floor_for",
    "relevance_priority",
    "relevance_threshold",
]

Ranking = Literal["relevance", "article"]
"""``"relevance"`` (the default): relevance test, then value and credit; ``"article"``:
the article's additive priority, exactly."""

DEFAULT_RANKING: Ranking = "relevance"

RELEVANCE_FLOOR = 0.2
"""Cosine similarity a candidate needs to count as relevant at all, for an embedder
that `calibration_for` knows nothing about (and for ``HashingEmbeddings``)."""

BACKGROUND_TOP = 5
"""How many of the task's nearest background texts its background similarity averages.

An off-topic task has several close everyday neighbours; a coding task may share a
word with one ("Memoize account fetches" with "memorise the times tables"). Averaging
five lets one coincidence count for a fifth: measured against 3 (which turned away two
paraphrases similarity alone ranks first) and against the 2nd to 4th nearest alone."""


@dataclass(frozen=True)
class Calibration:
    """How one embedding model's similarities are read by the relevance test.

    Attributes:
        floor: The similarity a candidate needs at least, whatever the task.
        offset: Added to the task's background similarity to give the bar a
            candidate must reach: negative for a model whose true matches often sit
            just below the background (a static model's paraphrases), zero for a
            model that separates them cleanly.
    """

    floor: float = RELEVANCE_FLOOR
    offset: float = 0.0


DEFAULT_CALIBRATION = Calibration()
"""For an embedder `calibration_for` knows nothing about: floor 0.2, offset 0."""

_KNOWN_CALIBRATIONS = (
    # Measured with benchmarks/relevance.py (paraphrases, near misses and two off-topic
    # sets, one written apart from the background): the floor no longer has to keep
    # off-topic tasks out, so it sits low enough to keep every paraphrase similarity
    # alone ranks first.
    # The packaged static model (the default embedder): its paraphrases often sit
    # a little below the background, hence the negative offset. Before "minilm-l6",
    # which its name also contains.
    ("static-minilm-l6", Calibration(floor=0.2, offset=-0.04)),
    # all-MiniLM-L6-v2 separates true matches from background cleanly.
    ("minilm-l6", Calibration(floor=0.25, offset=0.0)),
    ("minilm_l6", Calibration(floor=0.25, offset=0.0)),
)

RELEVANCE_MARGIN = 0.15
"""The margin below the most similar candidate that ``relevance_margin`` used to
default to (before the calibrated test); still accepted, no longer applied unless asked."""

RELEVANCE_HALF_LIFE = 30 * 86_400.0
"""Thirty days, in seconds: recency's half-life in the relevance ranking."""

RECENCY_FLOOR = 0.5
"""The recency signal never falls below this: old knowledge loses value, not relevance."""

VALUE_SHARE = 0.2
"""Share of the priority that value (recency, reward, outcome) can move."""

_C = TypeVar("_C", bound=Rankable)


@dataclass(frozen=True)
class RelevanceRanking(Generic[_C]):
    """The outcome of `rank_by_relevance`.

    Attributes:
        ranked: The relevant candidates with their priority, highest first.
        rejected: The other candidates with the reason each failed the test, most
            similar first.
        threshold: The similarity a candidate needed (`relevance_threshold`).
    """

    ranked: list[tuple[float, _C]]
    rejected: list[tuple[_C, str]]
    threshold: float


def calibration_for(embeddings: object) -> Calibration:
    """The relevance test's calibration for an embedding model.

    An embedder may declare its own with ``relevance_floor`` and ``relevance_offset``
    attributes; otherwise known models are recognised by their ``model_name`` /
    ``model`` (the packaged static model, all-MiniLM-L6-v2), and anything else gets
    `DEFAULT_CALIBRATION`.

    Examples:
        >>> from langchain_episodic import HashingEmbeddings, StaticEmbeddings
        >>> calibration_for(HashingEmbeddings())
        Calibration(floor=0.2, offset=0.0)
        >>> calibration_for(StaticEmbeddings())
        Calibration(floor=0.2, offset=-0.04)
    """
    name = str(getattr(embeddings, "model_name", "") or getattr(embeddings, "model", "")).lower()
    known = next((c for needle, c in _KNOWN_CALIBRATIONS if needle in name), DEFAULT_CALIBRATION)
    return Calibration(
        _declared(embeddings, "relevance_floor", known.floor),
        _declared(embeddings, "relevance_offset", known.offset),
    )


def _declared(embeddings: object, name: str, default: float) -> float:
    value = getattr(embeddings, name, None)
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return float(value)
    return default


def relevance_floor_for(embeddings: object) -> float:
    """The relevance floor suited to an embedding model (`calibration_for`'s floor).

    Examples:
        >>> from langchain_episodic import HashingEmbeddings
        >>> relevance_floor_for(HashingEmbeddings())
        0.2
    """
    return calibration_for(embeddings).floor


def background_similarity(
    query: NDArray[np.floating], background: NDArray[np.floating], top: int = BACKGROUND_TOP
) -> float:
    """How similar a task is to its ``top`` nearest background texts (their mean cosine).

    Args:
        query: The task's vector (any length but zero).
        background: The background texts' vectors, one unit row each.
        top: How many of the nearest to average.

    Examples:
        >>> import numpy as np
        >>> background = np.array([[1.0, 0.0], [0.0, 1.0], [0.6, 0.8]])
        >>> round(background_similarity(np.array([2.0, 0.0]), background, top=2), 2)
        0.8
    """
    if len(background) == 0:
        return -1.0
    unit = np.asarray(query, dtype=np.float32)
    similarities = np.asarray(background, dtype=np.float32) @ unit
    if len(similarities) > top:
        similarities = np.partition(similarities, len(similarities) - top)[-top:]
    return float(similarities.sum()) / len(similarities) / float(np.linalg.norm(unit))


def relevance_threshold(
    floor: float,
    best: float | None = None,
    margin: float | None = None,
    background: float | None = None,
) -> float:
    """The similarity a candidate needs: the floor, the background bar, the margin's bar.

    Examples:
        >>> relevance_threshold(0.2), relevance_threshold(0.2, background=0.31)
        (0.2, 0.31)
        >>> relevance_threshold(0.2, best=0.9, margin=0.15)
        0.75
    """
    margin_bar = None if best is None or margin is None else best - margin
    return max(bar for bar in (floor, background, margin_bar) if bar is not None)


def rejection_reason(
    similarity: float,
    best: float | None = None,
    floor: float = RELEVANCE_FLOOR,
    margin: float | None = None,
    background: float | None = None,
) -> str | None:
    """Why a candidate of ``similarity`` fails the relevance test, or ``None`` if it passes.

    Args:
        similarity: The candidate's similarity to the task.
        best: The most similar candidate's (for ``margin``).
        floor: The similarity needed at least.
        margin: How far below ``best`` a candidate may lie; no such rule when ``None``.
        background: The task's background similarity plus the model's offset; no
            such rule when ``None``.

    Examples:
        >>> rejection_reason(0.5, best=0.9, floor=0.2, margin=0.15)
        'similarity 0.50 is more than 0.15 below the best candidate (0.90)'
        >>> rejection_reason(0.5, floor=0.2, background=0.55)
        "similarity 0.50 is below the task's background 0.55 (its nearest everyday texts)"
        >>> rejection_reason(0.8, best=0.9, floor=0.2, margin=0.15) is None
        True
    """
    if not similarity >= floor:
        return f"similarity {similarity:.2f} is below the floor {floor:.2f}"
    if background is not None and similarity < background:
        return (
            f"similarity {similarity:.2f} is below the task's background {background:.2f} "
            "(its nearest everyday texts)"
        )
    if best is not None and margin is not None and similarity < best - margin:
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

    The recency (decaying to `RECENCY_FLOOR`), reward and outcome signals,
    mixed in proportion to the weights' ``recency``, ``reward`` and ``outcome_bonus``
    (the article's 0.3 / 0.2 / 0.1 by default). With all three weights zero the
    value is 1: nothing but relevance counts.

    Examples:
        >>> round(episode_value(0.0, 1.0, OutcomeStatus.SUCCESS, current_time=0.0), 3)
        1.0
        >>> round(episode_value(0.0, 0.0, OutcomeStatus.FAILURE, current_time=1e12), 3)
        0.25
    """
    w = weights or DEFAULT_WEIGHTS
    total = w.recency + w.reward + w.outcome_bonus
    if total == 0:
        return 1.0
    decay = half_life_decay(episode_age(current_time, timestamp), half_life)
    recency = RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * decay
    mixed = w.recency * recency + w.reward * reward + w.outcome_bonus * outcome_score(outcome)
    return mixed / total


def relevance_priority(similarity: float, value: float) -> float:
    """The relevance ranking's priority: similarity, scaled by value within `VALUE_SHARE`.

    Examples:
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
    margin: float | None = None,
    utility: Callable[[_C], float] | None = None,
    background: float | None = None,
    matched: Callable[[_C], float] | None = None,
) -> RelevanceRanking[_C]:
    """Drop the candidates that fail the relevance test; order the rest by priority.

    Ties keep the candidates' order (most similar first when they come from a search).

    Args:
        candidates: Anything with ``similarity``, ``timestamp``, ``reward`` and
            ``outcome`` (a store's hits,
            `SearchResult`).
        current_time: Now, in seconds.
        weights: Mix of the value signals; the article's defaults when ``None``.
        half_life: Recency half-life in seconds.
        floor: Minimum similarity.
        margin: Maximum distance below the most similar candidate; none when ``None``.
        utility: A factor per relevant candidate (credit's
            `utility_factor`, 1 for an episode
            never credited) that scales its priority; none when ``None``.
        background: The task's background similarity plus the model's offset
            (`background_similarity`); no background test when ``None``.
        matched: The similarity a relevant candidate's priority reads instead of its
            own (`kind_similarity` for a task
            that names a function); the relevance test always reads ``similarity``.
    """
    pool = list(candidates)
    best = max((c.similarity for c in pool), default=0.0)
    ranked: list[tuple[float, _C]] = []
    rejected: list[tuple[_C, str]] = []
    for c in pool:
        reason = rejection_reason(c.similarity, best, floor, margin, background)
        if reason is not None:
            rejected.append((c, reason))
            continue
        value = episode_value(c.timestamp, c.reward, c.outcome, current_time, weights, half_life)
        priority = relevance_priority(c.similarity if matched is None else matched(c), value)
        ranked.append((priority if utility is None else priority * utility(c), c))
    ranked.sort(key=lambda pair: pair[0], reverse=True)
    rejected.sort(key=lambda pair: pair[0].similarity, reverse=True)
    return RelevanceRanking(ranked, rejected, relevance_threshold(floor, best, margin, background))
