"""The lesson search: the rule's choice on exact similarities, found without scoring all.

The reference is :func:`top_lessons` over every row's exact similarity (the rows never
picked left out); the search must return the same rows, in the same order, whichever
bound it uses (the float32 product for few lessons, principal directions for many).
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_episodic.scoring import lesson_search
from langchain_episodic.scoring.lesson_search import (
    CreditFactors,
    LessonMatrix,
    similarities_of,
)
from langchain_episodic.scoring.ranking import top_lessons
from tests.unit_tests.fuzzing import fuzz_settings

DIMENSION = 24


def lesson_rows(seed: int, count: int, rank: int, noise: float) -> np.ndarray:
    """Unit rows near a ``rank``-dimensional subspace (lessons of a few kinds)."""
    rng = np.random.default_rng(seed)
    rows = rng.standard_normal((count, rank)) @ rng.standard_normal((rank, DIMENSION))
    rows += noise * rng.standard_normal((count, DIMENSION))
    rows /= np.linalg.norm(rows, axis=1, keepdims=True)
    return rows.astype(np.float32)


def reference(
    rows: np.ndarray,
    query: np.ndarray,
    utilities: np.ndarray,
    excluded: list[int],
    ids: list[str],
    floor: float,
    k: int,
) -> list[int]:
    kept = np.setdiff1d(np.arange(len(rows)), excluded)
    picked = top_lessons(
        similarities_of(rows[kept], query),
        utilities[kept],
        [ids[row] for row in kept],
        floor,
        k,
    )
    return [int(kept[row]) for row in picked]


def known(rows: np.ndarray, utilities: np.ndarray) -> CreditFactors:
    """The factors of the credited ``rows``, exactly, from every row's ``utilities``."""
    return CreditFactors.known(len(utilities), rows, utilities[rows])


def unit(vector: np.ndarray) -> np.ndarray:
    return (vector / (np.linalg.norm(vector) or 1.0)).astype(np.float32)


# Principal directions from 32 lessons on, so that small examples use them.
FEW = 32


@fuzz_settings(400)
@given(
    seed=st.integers(0, 2**16),
    count=st.integers(1, 300),
    rank=st.sampled_from([2, 4, 8, 24]),
    duplicates=st.integers(0, 6),
    credited=st.lists(
        st.tuples(st.integers(0, 299), st.sampled_from([0.0, 0.1, 0.2, 0.3, 0.4, 0.6, 0.9, 1.0])),
        max_size=100,
    ),
    excluded=st.lists(st.integers(0, 299), max_size=5),
    floor=st.sampled_from([-1.0, -0.2, 0.0, 0.2, 0.5, 0.9, 1.5]),
    k=st.integers(0, 40),
    query_from_row=st.booleans(),
    shortlist=st.sampled_from([1, 2, 4, 9, 32]),
)
def test_the_search_picks_what_scoring_every_lesson_picks(
    seed: int,
    count: int,
    rank: int,
    duplicates: int,
    credited: list[tuple[int, float]],
    excluded: list[int],
    floor: float,
    k: int,
    query_from_row: bool,
    shortlist: int,
) -> None:
    rows = lesson_rows(seed, count, rank, noise=0.02)
    rng = np.random.default_rng(seed + 1)
    for _ in range(duplicates):  # equal vectors under other ids: ties go by id
        rows[rng.integers(count)] = rows[rng.integers(count)]
    ids = [f"lesson-{rng.integers(10**6):06d}-{row}" for row in range(count)]
    utilities = np.full(count, 0.5)
    for row, utility in credited:
        if row < count:
            utilities[row] = utility
    off_prior = np.array(sorted({row for row, _ in credited if row < count}), dtype=np.intp)
    query = rows[rng.integers(count)] if query_from_row else unit(rng.standard_normal(DIMENSION))
    out = sorted({row for row in excluded if row < count})

    matrix = LessonMatrix(rows, project_from=FEW, shortlist=shortlist)
    expected = reference(rows, query, utilities, out, ids, floor, k)
    assert matrix.best(query, known(off_prior, utilities), out, ids, floor, k) == expected


@pytest.mark.parametrize("credited", [5, 60])  # lifted in plain floats, and vectorised
def test_credited_lessons_far_below_the_best_bounds_are_still_found(credited: int) -> None:
    rows = lesson_rows(21, 300, 6, noise=0.02)
    rng = np.random.default_rng(4)
    ids = [f"lesson-{row:03d}" for row in range(len(rows))]
    utilities = np.full(len(rows), 0.5)
    off_prior = np.sort(rng.choice(len(rows), credited, replace=False))
    utilities[off_prior] = rng.choice([0.95, 1.0, 0.2], credited)  # factors 13-16, or 0.4
    for shortlist in (1, 32):
        matrix = LessonMatrix(rows, project_from=FEW, shortlist=shortlist)
        lifted = 0
        for _ in range(30):
            query = unit(rng.standard_normal(DIMENSION))
            got = matrix.best(query, known(off_prior, utilities), (), ids, 0.05, 3)
            assert got == reference(rows, query, utilities, [], ids, 0.05, 3)
            lifted += sum(row in off_prior for row in got)
        assert lifted  # credit, not similarity alone, put some of them there


@pytest.mark.parametrize("project_from", [FEW, 10_000])  # directions, and the product
@pytest.mark.parametrize(("utility", "k"), [(0.0, 35), (0.2, 35), (0.2, 34), (0.3, 2)])
def test_a_lesson_that_hurt_still_fills_a_place_no_better_lesson_takes(
    project_from: int, utility: float, k: int
) -> None:
    # 33 lessons well above the floor, 60 below it, and one just above it that hurt:
    # its score (similarity times a factor below 1) is below the floor, its bound far
    # below every other qualifying lesson's, and the rule still shows it when fewer
    # than k others qualify (k = 2: it is not shown; the others outrank it).
    angles = [np.arccos(0.9)] * 33 + [np.arccos(0.1)] * 60 + [np.arccos(0.3)]
    rows = np.array([[np.cos(a), np.sin(a)] for a in angles], dtype=np.float32)
    rows = np.hstack([rows, np.zeros((len(rows), DIMENSION - 2), dtype=np.float32)])
    query = unit(np.eye(DIMENSION)[0])
    ids = [f"lesson-{row:03d}" for row in range(len(rows))]
    utilities = np.full(len(rows), 0.5)
    utilities[-1] = utility
    hurt = np.array([len(rows) - 1])
    for shortlist in (1, 4, 32):
        matrix = LessonMatrix(rows, project_from=project_from, shortlist=shortlist)
        got = matrix.best(query, known(hurt, utilities), (), ids, 0.2, k)
        assert got == reference(rows, query, utilities, [], ids, 0.2, k)
        assert (len(rows) - 1 in got) == (k > 33)


def test_the_bounds_hold_for_every_lesson_and_query() -> None:
    rng = np.random.default_rng(7)
    for rank, noise in ((4, 0.0), (6, 0.01), (8, 0.05), (24, 1.0)):
        rows = lesson_rows(rank, 200, rank, noise)
        rows[:3] *= 1.7  # longer rows too: the rounding term scales with them
        matrix = LessonMatrix(rows, project_from=FEW)
        for _ in range(20):
            query = unit(rng.standard_normal(DIMENSION))
            exact = similarities_of(rows, query)
            assert (matrix.upper_bounds(query) >= exact).all()


def test_many_lessons_of_a_few_kinds_are_mostly_skipped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    rows = lesson_rows(3, 2_000, 6, noise=0.01)
    scored: list[int] = []
    exact = lesson_search.similarities_of

    def counting(some: np.ndarray, query: np.ndarray) -> np.ndarray:
        scored.append(len(some))
        return exact(some, query)

    monkeypatch.setattr(lesson_search, "similarities_of", counting)
    matrix = LessonMatrix(rows, project_from=FEW)
    ids = [f"lesson-{row:05d}" for row in range(len(rows))]
    none = np.array([], dtype=np.intp)
    rng = np.random.default_rng(0)
    for _ in range(10):
        query = unit(rows[rng.integers(len(rows))] + 0.1 * rng.standard_normal(DIMENSION))
        matrix.best(query, known(none, np.full(len(rows), 0.5)), (), ids, 0.2, 2)
    assert matrix.basis is not None
    assert matrix.basis.shape == (DIMENSION // 3, DIMENSION)
    # Every lesson scored would be 2,000 a search.
    assert sum(scored) / 10 < 200


def test_lessons_no_few_directions_describe_are_scored_by_the_product() -> None:
    rows = lesson_rows(5, 300, DIMENSION, noise=1.0)  # no low-dimensional structure
    matrix = LessonMatrix(rows, project_from=FEW)
    ids = [f"lesson-{row:03d}" for row in range(len(rows))]
    utilities = np.full(len(rows), 0.5)
    query = unit(rows[0] + rows[1])
    none = np.array([], dtype=np.intp)
    got = matrix.best(query, known(none, utilities), (), ids, 0.1, 3)
    assert matrix.basis is None
    assert got == reference(rows, query, utilities, [], ids, 0.1, 3)


def test_a_renewed_matrix_is_the_same_for_the_same_rows_and_keeps_its_directions() -> None:
    rows = lesson_rows(11, 400, 5, noise=0.005)
    matrix = LessonMatrix(rows, project_from=FEW)
    assert matrix.renewed(rows.copy()) is matrix  # a reload brought the same lessons
    matrix.upper_bounds(rows[0])  # fits the directions
    assert matrix.basis is not None
    more = np.vstack([rows, lesson_rows(12, 40, 5, noise=0.005)])
    renewed = matrix.renewed(more)
    assert renewed is not matrix
    renewed.upper_bounds(more[0])
    assert renewed.basis is matrix.basis  # still capture the lessons: not fitted again
    # Lessons the old directions miss: fitted anew, and the bounds still hold.
    other = lesson_rows(13, 400, 5, noise=0.005)
    refitted = matrix.renewed(other)
    query = other[3]
    assert (refitted.upper_bounds(query) >= similarities_of(other, query)).all()
    assert refitted.basis is not None
    assert refitted.basis is not matrix.basis


def test_equal_rows_get_equal_similarities_wherever_they_sit() -> None:
    rng = np.random.default_rng(2)
    rows = rng.standard_normal((1_000, 384)).astype(np.float32)
    rows[[3, 500, 999]] = rows[77]
    query = rng.standard_normal(384).astype(np.float32)
    similar = similarities_of(rows, query)
    assert similar[3] == similar[500] == similar[999] == similar[77]
    assert similarities_of(rows[[999, 5]], query)[0] == similar[77]


def test_nothing_is_picked_for_no_lessons_or_k_zero() -> None:
    empty = LessonMatrix(np.zeros((0, 4), dtype=np.float32))
    query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    none = np.array([], dtype=np.intp)
    nothing = known(none, np.array([0.5]))
    assert empty.best(query, nothing, (), [], 0.0, 3) == []
    one = LessonMatrix(query[None, :])
    assert one.best(query, nothing, (), ["a"], 0.0, 0) == []
    assert one.best(query, nothing, [0], ["a"], -np.inf, 1) == []
