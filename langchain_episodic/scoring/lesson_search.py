"""The k lessons most worth showing for a query, found without scoring them all.

`top_lessons` is the rule: a lesson qualifies
when its similarity to the query reaches the floor, and those that do are ordered by
similarity times the utility factor (ties: by id). Scoring every lesson costs one
product of the query with every lesson vector, and with thousands of lessons that
product is most of what lessons add to a replay: 10,000 lessons of 384 floats are 15 MB,
read again for every query.

`LessonMatrix` keeps the rule and reads less. A cheap approximation bounds every
lesson's similarity from above; a few lessons of the highest bounds are scored, and the
k-th best of their scores is a bar no lesson outside the k best can pass: a lesson
whose bound (times its utility factor) stays below the bar is skipped, and the few
that reach it are scored. The choice is the rule's on `similarities_of` every
lesson; only the work differs.

The approximation: with many lessons, their coordinates along the principal directions
of the lesson vectors (a third of the floats) plus Cauchy-Schwarz on what those
directions miss; with fewer lessons, or vectors no few directions describe, the
float32 product itself. Both bounds allow for every rounding on either side.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.scoring.credit import utility_factor
from langchain_episodic.scoring.ranking import (
    PLAIN_FLOATS_UP_TO,
    scored_lessons,
    top_scored,
    utility_factors,
)

__all__ = ["CreditFactors", "LessonMatrix", "similarities_of"]

# Below this many lessons the float32 product reads little enough; above, the
# coordinates along a third as many principal directions, when they describe the
# lessons well: fewer directions leave bounds too loose to skip many lessons.
PROJECT_FROM = 4_096
_DIRECTIONS_SHARE = 1 / 3
# The share of the lessons' squared norms the directions must capture, on average.
_CAPTURED = 0.99
# Lessons per block when the directions are fitted (bounds the float64 copies).
_BLOCK = 2_048
# Rows scored first to set the bar (at least k), those of the highest bounds: the
# best of them is usually among the k best, and their scores a bar few others reach.
SHORTLIST = 4
# Up to this many, the rows of the highest bounds are found one scan each.
_ONE_BY_ONE_UP_TO = 8
# Up to this many rows that reach the bar are scored at once; when more do, the
# _REFINE of the highest bounds are scored first, to raise it.
_AT_ONCE = 128
_REFINE = 32
# The lowest finite float32: every row not excluded has a bound at least this.
_LOWEST = float(np.finfo(np.float32).min)
# float32 rounding, per summed product, with room: error bounds say ``n * 2**-24``.
_ROUNDING = 2.0**-22


def similarities_of(rows: NDArray[np.float32], query: NDArray[np.float32]) -> NDArray[np.float32]:
    """Each row's dot product with ``query``: the similarity the rule ranks by.

    Every row is summed the same way wherever it sits (not so a BLAS product, whose
    blocks treat rows unevenly), so equal rows get equal similarities.

    Examples:
        >>> import numpy as np
        >>> rows = np.array([[0.6, 0.8], [1.0, 0.0]], dtype=np.float32)
        >>> similarities_of(rows, np.array([1.0, 0.0], dtype=np.float32)).tolist()
        [0.6000000238418579, 1.0]
    """
    similarities: NDArray[np.float32] = np.einsum("ij,j->i", rows, query)
    return similarities


@dataclass(frozen=True)
class CreditFactors:
    """The utility factors of the lessons credit touched; every other lesson's is 1.

    Bounds suffice to skip a lesson; only the lessons scored need their exact factor,
    so a caller whose factors cost something to compute (they fade with time) gives
    bounds that hold now and computes the exact ones on demand.

    Attributes:
        rows: The credited rows.
        lowest: For each, at most its factor now.
        highest: For each, at least its factor now.
        exact: The exact factors now of any rows, in their order (1 for the others).

    Examples:
        >>> import numpy as np
        >>> credit = CreditFactors.known(3, np.array([2]), np.array([0.9]))
        >>> credit.exact([0, 2])
        [1.0, 10.4976]
    """

    rows: NDArray[np.intp]
    lowest: Sequence[float]
    highest: Sequence[float]
    exact: Callable[[list[int]], list[float]]

    @classmethod
    def known(
        cls, count: int, rows: NDArray[np.intp], utilities: NDArray[np.float64]
    ) -> CreditFactors:
        """The factors of ``rows`` from their utilities, exactly (of ``count`` lessons)."""
        if len(rows) <= PLAIN_FLOATS_UP_TO:  # a few: a dict costs less than an array
            factors = [utility_factor(utility) for utility in utilities.tolist()]
            of = dict(zip(rows.tolist(), factors, strict=True))
            return cls(rows, factors, factors, lambda named: [of.get(r, 1.0) for r in named])
        every = np.ones(count)
        every[rows] = utility_factors(utilities)
        factors = every[rows].tolist()
        return cls(rows, factors, factors, lambda named: every[named].tolist())


class _Directions:
    """The lessons' coordinates along orthonormal directions, and what they miss.

    For a lesson ``m`` with float32 coordinates ``a`` along the rows of ``basis``,
    ``m = basis.T @ a + e`` exactly (``e`` computed in float64), so a query ``q`` has
    ``q @ m = (basis @ q) @ a + q_perp @ e + (basis @ q) @ (basis @ e)``: the first term
    is the approximation, the others at most ``|q_perp| |e|`` plus a rounding term.
    """

    def __init__(
        self, rows: NDArray[np.float32], basis: NDArray[np.float64], scale: float = 1.0
    ) -> None:
        count = len(rows)
        self.basis = basis
        # One column per lesson (a query times this layout reads memory in order):
        # the coordinates, then what they miss (rounded up, so that the bound holds
        # for the float32 copy), then 1 for the rounding term: one product is the bound.
        self.terms = np.empty((basis.shape[0] + 2, count), dtype=np.float32)
        self.terms[-1] = 1.0
        squared = 0.0
        for start in range(0, count, _BLOCK):  # in blocks: no lessons-sized float64 copy
            block = rows[start : start + _BLOCK].astype(np.float64)
            along = block @ basis.T
            coordinates = along.astype(np.float32)
            rounded = along - coordinates
            # |e|^2 = |m|^2 - |Bm|^2 + |Bm - a|^2, the basis orthonormal: float64
            # rounding is ~1e-15 of it, and 1e-14 more keeps it a bound near 0.
            missed = (
                np.einsum("ij,ij->i", block, block)
                - np.einsum("ij,ij->i", along, along)
                + np.einsum("ij,ij->i", rounded, rounded)
                + 1e-14
            )
            squared += float(np.maximum(missed, 0.0).sum())
            self.terms[:-2, start : start + _BLOCK] = coordinates.T
            self.terms[-2, start : start + _BLOCK] = np.nextafter(
                np.sqrt(np.maximum(missed, 0.0)).astype(np.float32), np.float32(np.inf)
            )
        total = float(np.einsum("ij,ij->", rows, rows, dtype=np.float64))
        # The share of the lessons' squared norms the directions capture.
        self.captured = 1.0 - squared / total if total else 1.0
        # The bound's float32 sum, the coordinates' rounding seen through ``basis @ e``
        # and the similarity's own float32 sum (``d`` products): all within this, for
        # unit vectors (``scale``: the longest row's length, when longer).
        self.rounding = (basis.shape[0] + basis.shape[1] + 8) * _ROUNDING * scale

    @classmethod
    def fitted(
        cls, rows: NDArray[np.float32], scale: float = 1.0, basis: NDArray[np.float64] | None = None
    ) -> _Directions | None:
        """Directions for ``rows``: ``basis`` if it still captures enough, else fitted anew.

        Fitted: the principal directions, a third as many as the dimensions; ``None``
        if they capture too little (the bounds would skip too few lessons).
        """
        if basis is not None and basis.shape[1] == rows.shape[1]:
            kept = cls(rows, basis, scale)
            if kept.captured >= _CAPTURED:
                return kept
        # float32 is precise enough to choose directions; eigh makes them orthonormal.
        _, vectors = np.linalg.eigh((rows.T @ rows).astype(np.float64))  # ascending
        count = max(1, int(rows.shape[1] * _DIRECTIONS_SHARE))
        fitted = cls(rows, np.ascontiguousarray(vectors[:, ::-1][:, :count].T), scale)
        return fitted if fitted.captured >= _CAPTURED else None

    def bounds(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        """An upper bound of every lesson's similarity to the unit ``query``."""
        exact = query.astype(np.float64)
        along = self.basis @ exact
        # Accurate to ~1e-8 for a unit query; widened, and the rounding term covers it.
        across = math.sqrt(max(0.0, float(exact @ exact) - float(along @ along)))
        weights = np.empty(len(along) + 2, dtype=np.float32)
        weights[:-2] = along
        weights[-2:] = (across * (1 + 2.0**-20), self.rounding)
        upper: NDArray[np.float32] = weights @ self.terms
        return upper


class LessonMatrix:
    """Unit lesson vectors, one row each, searched for the k best exactly.

    Args:
        rows: The lessons' unit vectors, one row each (float32).
        previous: A matrix whose directions to try first (of earlier lessons).
        project_from: From how many lessons on principal directions are tried.
        shortlist: How many rows of the highest bounds set the first bar (at least k).

    Examples:
        >>> import numpy as np
        >>> rows = np.array([[1.0, 0.0], [0.6, 0.8], [0.0, 1.0]], dtype=np.float32)
        >>> matrix = LessonMatrix(rows)
        >>> query = np.array([0.8, 0.6], dtype=np.float32)
        >>> credit = CreditFactors.known(3, np.array([2]), np.array([0.9]))  # row 2 helped
        >>> matrix.best(query, credit, (), ["a", "b", "c"], 0.3, 2)
        [2, 1]
    """

    def __init__(
        self,
        rows: NDArray[np.float32],
        previous: LessonMatrix | None = None,
        *,
        project_from: int = PROJECT_FROM,
        shortlist: int = SHORTLIST,
    ) -> None:
        self.rows = np.ascontiguousarray(rows, dtype=np.float32)
        self._project_from = project_from
        self._shortlist = shortlist
        # The directions another matrix found: kept while they capture these rows.
        self._basis = None if previous is None else previous.basis
        # The rounding bounds hold for unit vectors: scaled for any longer row.
        longest = float(np.sqrt(np.einsum("ij,ij->i", self.rows, self.rows).max(initial=1.0)))
        self._rounding_scale = max(1.0, longest) * (1 + 2.0**-10)

    @functools.cached_property
    def _directions(self) -> _Directions | None:
        """Fitted on first use, only for many lessons."""
        if len(self.rows) < self._project_from:
            return None
        return _Directions.fitted(self.rows, self._rounding_scale, self._basis)

    @property
    def basis(self) -> NDArray[np.float64] | None:
        """The directions the bounds use, once fitted (``None`` before, or without)."""
        directions = self.__dict__.get("_directions")
        return self._basis if directions is None else directions.basis

    def renewed(self, rows: NDArray[np.float32]) -> LessonMatrix:
        """A matrix of ``rows``: this one if they are its rows, else one keeping its basis."""
        if rows.shape == self.rows.shape and np.array_equal(rows, self.rows):
            return self
        return LessonMatrix(rows, self, project_from=self._project_from, shortlist=self._shortlist)

    def upper_bounds(self, query: NDArray[np.float32]) -> NDArray[np.float32]:
        """An upper bound of each lesson's similarity to the unit ``query``."""
        directions = self._directions
        if directions is not None:
            return directions.bounds(query)
        upper = self.rows @ query
        # Two float32 sums of ``d`` products: this one and the similarity's.
        upper += np.float32((2 * self.rows.shape[1] + 8) * _ROUNDING * self._rounding_scale)
        return upper

    def best(
        self,
        query: NDArray[np.float32],
        credit: CreditFactors,
        excluded: Sequence[int],
        ids: Sequence[str],
        floor: float,
        k: int,
    ) -> list[int]:
        """The rows `top_lessons` picks, best first.

        Without scoring every row.

        Args:
            query: The unit query vector (float32).
            credit: The utility factors of the rows credit touched.
            excluded: Rows never picked.
            ids: Every row's id (ties go to the smaller).
            floor: The similarity a lesson must reach.
            k: How many rows at most.
        """
        if k <= 0 or not len(self.rows):
            return []
        upper = self.upper_bounds(query)
        self._lift(upper, credit, floor)
        if len(excluded):
            upper[list(excluded)] = -np.inf

        def score(rows: NDArray[np.intp]) -> list[tuple[float, str, int]]:
            """``rows`` that reach ``floor``, scored, best first, as sort keys."""
            named = rows.tolist()
            similar = similarities_of(self.rows[rows], query).tolist()
            return scored_lessons(
                similar, credit.exact(named), [ids[r] for r in named], floor, named
            )

        # Score the rows of the highest bounds first. The k-th best of their scores is
        # a bar: a row whose bound is below it cannot be among the k best.
        scored = score(_take_highest(upper, max(k, self._shortlist)))
        bar = _bar([-key for key, _, _ in scored], k, floor)
        rest = np.flatnonzero(upper >= bar)  # the rows taken are at -inf now
        if len(rest) > _AT_ONCE:  # bounds loose next to the bar: raise it first
            top = rest[np.argpartition(upper[rest], len(rest) - _REFINE)[len(rest) - _REFINE :]]
            scored = sorted(scored + score(top))
            bar = _bar([-key for key, _, _ in scored], k, floor)
            upper[top] = -np.inf
            rest = rest[upper[rest] >= bar]
        if len(rest) > PLAIN_FLOATS_UP_TO:  # many still: ranked vectorised
            rows = np.concatenate([np.array([row for *_, row in scored], dtype=np.intp), rest])
            named = rows.tolist()
            picked = top_scored(
                similarities_of(self.rows[rows], query),
                np.array(credit.exact(named)),
                [ids[row] for row in named],
                floor,
                k,
            )
            return [named[row] for row in picked]
        if len(rest):
            scored = sorted(scored + score(rest))
        return [row for _, _, row in scored[:k]]

    @staticmethod
    def _lift(upper: NDArray[np.float32], credit: CreditFactors, floor: float) -> None:
        """Scale the bounds of the credited rows by their factors' bounds, in place.

        A row whose bound is below the floor cannot qualify whatever its factor: its
        bound stays, below any bar. One that may qualify keeps a bound of at least the
        floor: a factor below 1 can score it below the floor, and it still fills a
        place that fewer than k better lessons leave. A score ``s * f`` is at most the
        bound times the highest factor, or the lowest when the bound is negative.
        """
        rows = credit.rows
        if len(rows) <= PLAIN_FLOATS_UP_TO:
            for row, lowest, highest in zip(
                rows.tolist(), credit.lowest, credit.highest, strict=True
            ):
                reach = float(upper[row])
                if reach >= floor and (highest != 1.0 or (reach < 0 and lowest != 1.0)):
                    lifted = max(reach * (highest if reach >= 0 else lowest), floor)
                    # Up by more than float32's rounding, so the bound stays a bound.
                    upper[row] = lifted + abs(lifted) * 2.0**-20 + 1e-30
            return
        reaches = upper[rows]
        scaled = reaches * np.where(reaches >= 0, credit.highest, credit.lowest)
        raised = np.maximum(np.nextafter(scaled.astype(np.float32), np.inf), floor)
        upper[rows] = np.where(
            reaches >= floor, np.nextafter(raised.astype(np.float32), np.inf), reaches
        )


def _take_highest(upper: NDArray[np.float32], count: int) -> NDArray[np.intp]:
    """The ``count`` rows of the highest finite bounds (or fewer), set to ``-inf`` once taken."""
    if count <= _ONE_BY_ONE_UP_TO:  # a few: one scan each costs less than a partition
        taken = []
        for _ in range(count):
            row = int(upper.argmax())
            if upper[row] == -np.inf:
                break
            taken.append(row)
            upper[row] = -np.inf
        return np.array(taken, dtype=np.intp)
    finite = np.flatnonzero(upper > -np.inf)
    if len(finite) > count:
        finite = finite[np.argpartition(upper[finite], len(finite) - count)[len(finite) - count :]]
    upper[finite] = -np.inf
    return finite


def _bar(scores: list[float], k: int, floor: float) -> float:
    """The bound a row needs to be scored: the k-th best score, or the floor; never -inf."""
    bar = floor if len(scores) < k else max(floor, scores[k - 1])
    return max(bar, _LOWEST)
