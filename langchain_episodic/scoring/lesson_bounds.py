"""An exact shortcut past most lessons: bounds on similarity from a few principal directions.

:func:`~langchain_episodic.scoring.ranking.top_lessons` picks the ``k`` lessons of
highest ``similarity x utility factor`` among those whose similarity reaches a floor.
With thousands of lessons, computing every similarity (a query times a lessons x
dimension matrix) costs more than the rest of a replay. :class:`LessonBounds` keeps each
lesson's coordinates along the lessons' principal directions (the top eigenvectors of
their second-moment matrix) and what is left of it (the norm outside them). For a unit
query ``q`` and a lesson ``l``, split along those directions:

    q . l = q_head . l_head + q_rest . l_rest,   |q_rest . l_rest| <= |q_rest| |l_rest|

(Cauchy-Schwarz), so a product over the first few directions bounds every similarity
from both sides. A lesson whose upper bound misses the floor, or whose best possible
score is below the ``k``-th best *guaranteed* score, cannot be shown: it is skipped
exactly. The survivors of a first bound (128 directions) are bounded again with 256,
and only those left are scored exactly. How many survive depends on the lessons: many
lessons about a few subjects (what a long-lived agent accumulates) leave a few dozen
of ten thousand; lessons spread evenly over every direction leave most, and then
:meth:`LessonBounds.candidates` says so (``None``) and the caller scores them all.

The bounds widen every interval by :data:`MARGIN`, far above float32 rounding (about
``dimension x 2**-24``), so a lesson the exact scan would choose is never skipped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.scoring.credit import UTILITY_POWER

__all__ = ["MARGIN", "MIN_LESSONS", "LessonBounds", "utility_factors"]

MIN_LESSONS = 2_048
"""Below this many lessons one exact product is cheap: no bounds are built."""

MARGIN = 1e-3
"""How much wider than proved each similarity interval is (rounding, several times over)."""

_HEAD = 128  # directions of the first bound
_MID = 256  # directions of the second, for the first one's survivors
_REFINE_ABOVE = 256  # fewer survivors than this are scored exactly at once
_WORTH = 0.5  # more survivors than this share of the lessons: scan them all instead
_BASIS_SAMPLE = 4_096  # rows the principal directions are estimated from


def utility_factors(utilities: NDArray[np.float64]) -> NDArray[np.float64]:
    """:func:`~langchain_episodic.scoring.credit.utility_factor` of many utilities at once.

    The factor :func:`~langchain_episodic.scoring.ranking.top_lessons` scales a
    lesson's similarity by: ``(2 x utility) ** UTILITY_POWER``, utility clipped to [0, 1].
    """
    factors: NDArray[np.float64] = (2.0 * np.clip(utilities, 0.0, 1.0)) ** UTILITY_POWER
    return factors


@dataclass(frozen=True)
class LessonBounds:
    """What bounds every lesson's similarity to a query, for a few products.

    Attributes:
        basis: The first principal directions of the lessons, one per row (``_MID`` x
            dimension, float32: orthonormal up to its rounding, which the query's
            rests and :data:`MARGIN` absorb).
        head: The lessons' coordinates along the first ``_HEAD`` directions, one lesson
            per *column* (``_HEAD`` x lessons, float32: read in order by the product).
        mid: Their coordinates along the next ones, one lesson per row (lessons x
            ``_MID - _HEAD``: the few that need them are gathered).
        head_rest: The norm of each lesson outside the first ``_HEAD`` directions.
        mid_rest: The norm of each lesson outside all ``_MID`` directions.
        rows: The lessons' vectors, one per row (lessons x dimension, float32), for the
            exact scores of the survivors.
    """

    basis: NDArray[np.float32]
    head: NDArray[np.float32]
    mid: NDArray[np.float32]
    head_rest: NDArray[np.float32]
    mid_rest: NDArray[np.float32]
    rows: NDArray[np.float32]

    @classmethod
    def build(cls, vectors: NDArray[np.float32]) -> LessonBounds | None:
        """Bounds for ``vectors`` (lessons x dimension); ``None`` when too few to pay.

        Any orthonormal basis gives valid bounds; the principal directions give tight
        ones. They are estimated on an even sample of at most 4,096 lessons.
        """
        count, dimension = vectors.shape
        if count < MIN_LESSONS or dimension <= _MID:
            return None
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        exact = rows.astype(np.float64)
        sample = exact[:: max(1, count // _BASIS_SAMPLE)]
        _, eigenvectors = np.linalg.eigh(sample.T @ sample)
        basis = np.ascontiguousarray(eigenvectors[:, ::-1][:, :_MID].T)
        coordinates = exact @ basis.T
        squared = np.einsum("ij,ij->i", exact, exact)
        head_left = squared - np.einsum("ij,ij->i", coordinates[:, :_HEAD], coordinates[:, :_HEAD])
        mid_left = head_left - np.einsum("ij,ij->i", coordinates[:, _HEAD:], coordinates[:, _HEAD:])
        return cls(
            basis=basis.astype(np.float32),
            head=np.ascontiguousarray(coordinates[:, :_HEAD].T, dtype=np.float32),
            mid=np.ascontiguousarray(coordinates[:, _HEAD:], dtype=np.float32),
            head_rest=np.sqrt(np.maximum(head_left, 0.0)).astype(np.float32),
            mid_rest=np.sqrt(np.maximum(mid_left, 0.0)).astype(np.float32),
            rows=rows,
        )

    def candidates(
        self,
        query: NDArray[np.float32],
        factors: NDArray[np.float64] | None,
        floor: float,
        k: int,
        excluded: NDArray[np.intp] | None = None,
    ) -> NDArray[np.intp] | None:
        """The rows that may be among the ``k`` best for ``query``; ``None``: scan them all.

        Every row :func:`~langchain_episodic.scoring.ranking.top_lessons` would return
        for the exact similarities is among them.

        Args:
            query: The unit query vector.
            factors: Each row's utility factor (:func:`utility_factors`); ``None``:
                all 1 (no lesson has evidence).
            floor: The similarity a lesson must reach.
            k: How many lessons are wanted.
            excluded: Rows that never qualify (their similarity counts as ``-inf``).
        """
        if k <= 0:
            return np.empty(0, dtype=np.intp)
        unit = np.asarray(query, dtype=np.float32)
        along = self.basis @ unit
        squared = float(unit.astype(np.float64) @ unit)
        # The float32 basis moves |along|^2 by < 1e-4: the rests stay upper bounds.
        head_rest = np.sqrt(max(squared - float(along[:_HEAD] @ along[:_HEAD]), 0.0) + 1e-4)
        mid_rest = np.sqrt(max(squared - float(along @ along), 0.0) + 1e-4)
        # float32 from here: its rounding (~1e-5 at most) is far inside MARGIN.
        estimate = along[:_HEAD] @ self.head
        if excluded is not None and len(excluded):
            estimate[excluded] = -np.inf
        slack = self.head_rest * np.float32(head_rest)
        slack += np.float32(MARGIN)
        survivors = _survivors(estimate, slack, factors, floor, k)
        if len(survivors) > _WORTH * len(estimate):
            return None
        if len(survivors) > _REFINE_ABOVE:
            finer = estimate[survivors]
            finer += self.mid[survivors] @ along[_HEAD:]
            slack = self.mid_rest[survivors] * np.float32(mid_rest)
            slack += np.float32(MARGIN)
            kept = _survivors(
                finer, slack, None if factors is None else factors[survivors], floor, k
            )
            survivors = survivors[kept]
        return survivors

    def similarities(
        self, query: NDArray[np.float32], rows: NDArray[np.intp]
    ) -> NDArray[np.float32]:
        """The exact similarities of ``rows`` to ``query``, each summed alone.

        Each lesson's product is computed the same way whichever rows are asked for
        (no blocking across rows), so pruning never changes a lesson's similarity.
        """
        chosen = self.rows[rows]
        similarities: NDArray[np.float32] = np.einsum(
            "ij,j->i", chosen, np.asarray(query, dtype=np.float32)
        )
        return similarities


def _survivors(
    estimate: NDArray[np.floating[Any]],
    slack: NDArray[np.floating[Any]],
    factors: NDArray[np.float64] | None,
    floor: float,
    k: int,
) -> NDArray[np.intp]:
    """Rows whose similarity interval ``estimate +- slack`` may put them in the top ``k``."""
    low, high = estimate - slack, estimate + slack
    sure = low >= floor  # reaches the floor whatever the exact value
    guaranteed = low[sure] if factors is None else low[sure] * factors[sure]
    # The k-th best guaranteed score: at least k lessons qualify and score this much,
    # so a lesson whose best possible score is below it cannot be among the k best.
    if len(guaranteed) < k:
        return np.flatnonzero(high >= floor)
    bar = float(np.partition(guaranteed, len(guaranteed) - k)[len(guaranteed) - k])
    if factors is None:
        return np.flatnonzero(high >= max(bar, floor))
    return np.flatnonzero((high >= floor) & (high * factors >= bar))
