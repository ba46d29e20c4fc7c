"""Which candidates a recall returns, in which order, and why (the rule the options pick).

Pure: the memory fetches candidates (a store's hits) and hands them here with the
options; `rank_candidates` applies ``options.ranking`` —
`rank_by_relevance` (the default) or the
article's `rank_by_priority` — and says which
candidates were rejected and why, so recall can explain itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.model.episode import OutcomeStatus
from langchain_episodic.model.lesson import Lesson
from langchain_episodic.scoring.credit import UTILITY_POWER, EpisodeUtility, utility_factor
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult, Rankable, rank_by_priority
from langchain_episodic.scoring.relevance import (
    RELEVANCE_FLOOR,
    rank_by_relevance,
    rejection_reason,
    relevance_threshold,
)

__all__ = [
    "PLAIN_FLOATS_UP_TO",
    "Neighbour",
    "Ranked",
    "RecallReport",
    "Rejected",
    "rank_candidates",
    "rank_lessons",
    "scored_lessons",
    "top_lessons",
    "top_scored",
    "utility_factors",
    "why_recalled",
]

_C = TypeVar("_C", bound=Rankable)


@dataclass(frozen=True)
class Rejected:
    """A candidate recall did not return, and why.

    Attributes:
        episode_id: The candidate's id.
        task: Its task description.
        similarity: Its cosine similarity to the query.
        reason: Why it failed the relevance test.
    """

    episode_id: str
    task: str
    similarity: float
    reason: str


@dataclass(frozen=True)
class Neighbour:
    """A relevant past episode counted as evidence for strategy selection.

    Attributes:
        episode_id: The episode's id.
        similarity: Its cosine similarity to the query.
        strategy_used: The strategy it used (``""`` when none was recorded).
        outcome: How it ended.
        grade: How much of a success it was
            (`success_grade`: a partial
            success counts its pass rate); ``None`` grades by ``outcome`` alone.
    """

    episode_id: str
    similarity: float
    strategy_used: str
    outcome: OutcomeStatus
    grade: float | None = None


@dataclass(frozen=True)
class RecallReport:
    """A recall with its explanation.

    Attributes:
        results: What recall returns, best first.
        rejected: Candidates that failed the relevance test, most similar first
            (empty for ``ranking="article"``, which has no such test).
        threshold: The similarity a candidate needed to be relevant (``None`` when
            there were no candidates).
        ranking: The ranking that ordered the results.
        neighbours: The most similar candidates at or above the similarity floor
            (no margin), most similar first: the evidence strategy selection counts.
            Empty unless the recall asked for it (``evidence_k``).
        utility: What credit says of each returned episode, by id (only episodes
            ever shown in a run appear), when the ranking used it.
        now: The time the recall ranked at.
        lessons: The lessons recalled for the task (``lesson_k``), best first.
        background: The task's background similarity plus the embedder's offset:
            the calibrated part of the threshold (``None``: no background test, or
            no candidates).
        estimates: The utility each returned episode was ranked with, by id, when
            the ranking used credit: its near-duplicate group's pooled evidence
            (`evidence`), a posterior draw when
            exploring.
        candidates: How many candidates were fetched by similarity
            (`candidate_count`).
        backed_off: The lift says memory hurts here
            (`memory_hurts`): only what worked
            was returned, at most one episode (``use_lift``).
    """

    results: tuple[PrioritizedResult, ...]
    rejected: tuple[Rejected, ...]
    threshold: float | None
    ranking: str
    neighbours: tuple[Neighbour, ...] = ()
    utility: Mapping[str, EpisodeUtility] = field(default_factory=dict)
    now: float | None = None
    lessons: tuple[Lesson, ...] = ()
    background: float | None = None
    estimates: Mapping[str, float] = field(default_factory=dict)
    candidates: int = 0
    backed_off: bool = False

    @property
    def nearest_rejected(self) -> Rejected | None:
        """The most similar candidate that was not returned for lack of relevance."""
        return self.rejected[0] if self.rejected else None


@dataclass(frozen=True)
class Ranked(Generic[_C]):
    """Candidates in recall order, each with its priority and relevance, and the rejected.

    Attributes:
        ordered: ``(priority, candidate, relevant)``, best first.
        rejected: ``(candidate, reason)``, most similar first; dropped from ``ordered``.
        threshold: The relevance threshold, or ``None`` without candidates.
    """

    ordered: list[tuple[float, _C, bool]]
    rejected: list[tuple[_C, str]]
    threshold: float | None


def rank_candidates(
    candidates: Sequence[_C],
    now: float,
    options: RecallOptions,
    default_floor: float = RELEVANCE_FLOOR,
    utility: Callable[[_C], float] | None = None,
    background: float | None = None,
    matched: Callable[[_C], float] | None = None,
) -> Ranked[_C]:
    """Order ``candidates`` (most similar first) as ``options.ranking`` says.

    ``"relevance"`` drops the candidates that fail the relevance test (they come back
    in ``rejected`` with the reason) and orders the rest by similarity scaled by
    value. ``"article"`` is the article's priority, exactly: it keeps every
    candidate above ``min_similarity`` (when given), and flags, without dropping,
    those that fail the relevance test, so a prompt can say which are relevant.
    ``default_floor`` is the floor when ``options.min_similarity`` is ``None``;
    ``background`` is the task's background similarity plus the embedder's offset
    (the calibrated bar of `rank_by_relevance`;
    none when ``None``).
    ``utility`` gives a candidate's utility (credit's estimate, 0.5 never credited):
    it scales the relevance ranking's priorities by
    `utility_factor` when
    ``options.use_utility`` is true. ``matched`` gives the similarity the relevance
    ranking's priority reads (a task's kind similarity,
    `kind`); the article's ranking ignores it.
    """
    floor, margin = options.relevance_floor(default_floor), options.margin
    weights, half_life = options.weights, options.recency_half_life
    best = max((c.similarity for c in candidates), default=None)
    threshold = None if best is None else relevance_threshold(floor, best, margin, background)
    if options.ranking == "relevance":
        estimate = utility if options.use_utility else None
        factor = None if estimate is None else lambda c: utility_factor(estimate(c))
        ranking = rank_by_relevance(
            candidates, now, weights, half_life, floor, margin, factor, background, matched
        )
        ordered = [(priority, c, True) for priority, c in ranking.ranked]
        return Ranked(ordered, ranking.rejected, threshold)
    bar = options.min_similarity
    kept = [c for c in candidates if bar is None or c.similarity >= bar]
    scored = rank_by_priority(kept, now, weights, half_life)  # empty when best is None
    reasons = [rejection_reason(c.similarity, best, floor, margin, background) for _, c in scored]
    article = [(p, c, reason is None) for (p, c), reason in zip(scored, reasons, strict=True)]
    return Ranked(article, [], threshold)


# Up to this many values, plain Python floats cost less than the numpy calls that would
# handle them (each call's fixed cost dominates once the caches are cold).
PLAIN_FLOATS_UP_TO = 32


def utility_factors(estimates: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
    """`utility_factor` of many estimates at once.

    Exactly 1 at the prior (0.5).

    Examples:
        >>> import numpy as np
        >>> utility_factors(np.array([0.5, 1.0, 0.0, 1.5])).tolist()
        [1.0, 16.0, 0.0, 16.0]
    """
    useful = np.clip(np.asarray(estimates, dtype=np.float64), 0.0, 1.0)
    factors: NDArray[np.float64] = (2.0 * useful) ** UTILITY_POWER
    return factors


def scored_lessons(
    similarities: Sequence[float],
    factors: Sequence[float],
    ids: Sequence[str],
    floor: float,
    rows: Iterable[int],
) -> list[tuple[float, str, int]]:
    """`top_lessons`'s rule in plain floats: ``(-score, id, row)``, best first.

    Only the lessons whose similarity reaches ``floor``, scored by similarity times
    their `utility_factor`; ``rows`` names
    each lesson.

    Examples:
        >>> scored_lessons([0.6, 0.7, 0.1], [2.0, 1.0, 16.0], ["a", "b", "c"], 0.3, [4, 5, 6])
        [(-1.2, 'a', 4), (-0.7, 'b', 5)]
    """
    return sorted(
        (-(similarity * factor), lesson_id, row)
        for similarity, factor, lesson_id, row in zip(similarities, factors, ids, rows, strict=True)
        if similarity >= floor
    )


def top_lessons(
    similarities: NDArray[np.floating[Any]],
    utilities: NDArray[np.floating[Any]],
    ids: Sequence[str],
    floor: float,
    k: int,
) -> list[int]:
    """The rows of the ``k`` lessons most worth showing, best first (vectorised).

    A lesson qualifies when its similarity reaches ``floor``; those that do are
    ordered by similarity times `utility_factor` of their utility, the factor
    credit scales a relevant episode's priority by (ties: by id).

    Examples:
        >>> import numpy as np
        >>> top_lessons(np.array([0.6, 0.7, 0.1]), np.array([0.9, 0.5, 1.0]),
        ...             ["a", "b", "c"], 0.3, 2)
        [0, 1]
    """
    similar = np.asarray(similarities, dtype=np.float64)
    if k <= 0 or not len(similar):
        return []
    if len(similar) <= PLAIN_FLOATS_UP_TO:
        factors = [utility_factor(utility) for utility in np.asarray(utilities).tolist()]
        scored = scored_lessons(similar.tolist(), factors, ids, floor, range(len(similar)))
        return [row for _, _, row in scored[:k]]
    # utility_factor, for many at once: exactly 1 at the prior (0.5), where most
    # lessons sit, so only the others are raised to the power.
    useful = np.asarray(utilities, dtype=np.float64)
    every = np.ones(len(similar))
    off_prior = np.flatnonzero((useful != 0.5) & (similar >= floor))
    if len(off_prior):
        every[off_prior] = utility_factors(useful[off_prior])
    return top_scored(similar, every, ids, floor, k)


def top_scored(
    similarities: NDArray[np.floating[Any]],
    factors: NDArray[np.floating[Any]],
    ids: Sequence[str],
    floor: float,
    k: int,
) -> list[int]:
    """`top_lessons` with every lesson's utility factor given, not its utility.

    Examples:
        >>> import numpy as np
        >>> top_scored(np.array([0.6, 0.7, 0.1]), np.array([2.0, 1.0, 16.0]),
        ...            ["a", "b", "c"], 0.3, 2)
        [0, 1]
    """
    similar = np.asarray(similarities, dtype=np.float64)
    # Only the lessons that reach the floor are scored: usually a few of thousands.
    rows = np.flatnonzero(similar >= floor)
    if k <= 0 or not len(rows):
        return []
    scores = similar[rows] * np.asarray(factors, dtype=np.float64)[rows]
    if k < len(scores):  # only the k best (and whatever ties the k-th) need sorting
        kth = np.partition(scores, len(scores) - k)[len(scores) - k]
        keep = scores >= kth
        rows, scores = rows[keep], scores[keep]
    found = rows.tolist()
    order = sorted(range(len(found)), key=lambda j: (-scores[j], ids[found[j]]))
    return [found[j] for j in order[:k]]


def rank_lessons(
    lessons: Sequence[Lesson],
    similarities: Sequence[float],
    utility: Callable[[Lesson], float],
    floor: float,
    k: int,
) -> tuple[Lesson, ...]:
    """The ``k`` lessons most worth showing, best first (`top_lessons`'s rule).

    Examples:
        >>> from langchain_episodic.model.lesson import LessonSource
        >>> a, b = (Lesson.create(title=t, applies_when="forms", do="strip",
        ...                       sources=(LessonSource("e1"),), created_at=0.0)
        ...         for t in ("A", "B"))
        >>> utility = {a.lesson_id: 0.9, b.lesson_id: 0.5}
        >>> ranked = rank_lessons([a, b], [0.6, 0.7], lambda one: utility[one.lesson_id], 0.3, 2)
        >>> [one.title for one in ranked]
        ['A', 'B']
    """
    similar = np.asarray(similarities, dtype=np.float64)
    utilities = np.array(
        [
            utility(lesson) if sim >= floor else 0.5
            for lesson, sim in zip(lessons, similar, strict=True)
        ]
    )
    rows = top_lessons(similar, utilities, [lesson.lesson_id for lesson in lessons], floor, k)
    return tuple(lessons[row] for row in rows)


def why_recalled(result: PrioritizedResult, report: RecallReport) -> str:
    """Why ``report`` returned ``result``, in one short sentence.

    The relevance ranking returns only candidates that reached the threshold; the
    article's ranking has no relevance test, so it may return one below it, and says so.

    Examples:
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> ep = Episode("e1", TaskDescription("Fix the login form"), "...",
        ...              Feedback(reward=1.0), OutcomeStatus.SUCCESS, timestamp=0.0)
        >>> report = RecallReport((PrioritizedResult(ep, 0.62, 0.58),), (), 0.47, "relevance")
        >>> why_recalled(report.results[0], report)
        'similarity 0.62 >= threshold 0.47; priority 0.58 (similarity scaled by value)'
    """
    similarity, priority, threshold = result.similarity, result.priority, report.threshold
    passed = (
        "relevant"
        if threshold is None  # no candidates: never with a result
        else f"similarity {similarity:.2f} >= threshold {threshold:.2f}"
    )
    if report.ranking == "relevance":
        episode_id = result.episode.episode_id
        row = report.utility.get(episode_id)
        estimate = report.estimates.get(episode_id)
        if estimate is None or report.now is None:
            return f"{passed}; priority {priority:.2f} (similarity scaled by value)"
        own = (
            "never shown in a run"
            if row is None
            else f"shown in {row.injections} run(s), {row.credited_runs} credited"
        )
        shared = (
            ""
            if row is not None and math.isclose(row.ranking_estimate(report.now), estimate)
            else ", evidence shared with near-duplicates"
        )
        return (
            f"{passed}; priority {priority:.2f} (similarity scaled by value and by utility "
            f"{estimate:.2f}: {own}{shared})"
        )
    if threshold is None or result.relevant:
        return f"{passed}; article priority {priority:.2f}"
    return (
        f"not relevant (similarity {similarity:.2f} < threshold {threshold:.2f}), kept by "
        f"the article's ranking, which has no relevance test; priority {priority:.2f}"
    )
