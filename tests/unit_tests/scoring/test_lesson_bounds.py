"""``LessonBounds``: lessons skipped by bounds are exactly those the full scan would not show."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.typing import NDArray

from langchain_episodic.scoring.lesson_bounds import MIN_LESSONS, LessonBounds, utility_factors
from langchain_episodic.scoring.ranking import top_lessons


def _unit(rows: NDArray[np.float64]) -> NDArray[np.float32]:
    unit: NDArray[np.float32] = (rows / np.linalg.norm(rows, axis=-1, keepdims=True)).astype(
        np.float32
    )
    return unit


def _few_subjects(
    rng: np.random.Generator, count: int, dimension: int = 384
) -> NDArray[np.float32]:
    """Lessons about a few subjects: most of each vector in a 40-direction subspace."""
    subspace = rng.standard_normal((40, dimension))
    mixed = rng.standard_normal((count, 40)) @ subspace
    return _unit(mixed + 0.6 * rng.standard_normal((count, dimension)))


def _full_scan(
    vectors: NDArray[np.float32],
    query: NDArray[np.float32],
    utilities: NDArray[np.float64],
    excluded: NDArray[np.intp],
    floor: float,
    k: int,
) -> list[int]:
    similarities = (query @ np.ascontiguousarray(vectors.T)).astype(np.float64)
    similarities[excluded] = -np.inf
    return top_lessons(
        similarities, utilities, [f"l{i:05d}" for i in range(len(vectors))], floor, k
    )


def _pruned(
    bounds: LessonBounds,
    query: NDArray[np.float32],
    utilities: NDArray[np.float64],
    excluded: NDArray[np.intp],
    floor: float,
    k: int,
) -> list[int] | None:
    found = bounds.candidates(query, utility_factors(utilities), floor, k, excluded)
    if found is None:
        return None
    picked = top_lessons(
        bounds.similarities(query, found),
        utilities[found],
        [f"l{i:05d}" for i in found],
        floor,
        k,
    )
    return [int(found[j]) for j in picked]


def test_the_lessons_chosen_are_those_of_a_full_scan_on_random_data() -> None:
    rng = np.random.default_rng(7)
    vectors = _few_subjects(rng, 3_000)
    bounds = LessonBounds.build(vectors)
    assert bounds is not None
    pruned_some = 0
    for trial in range(60):
        # Queries near a lesson, and queries about something else.
        near = vectors[rng.integers(len(vectors))] + 0.5 * _few_subjects(rng, 1)[0]
        query = _unit(near if trial % 2 else rng.standard_normal(384))
        utilities = np.full(len(vectors), 0.5)
        credited = rng.choice(len(vectors), 300, replace=False)
        utilities[credited] = rng.uniform(0.0, 1.0, 300)
        excluded = rng.choice(len(vectors), 20, replace=False).astype(np.intp)
        floor = float(rng.choice([-1.0, 0.0, 0.1, 0.3, 0.6]))
        k = int(rng.integers(1, 6))
        chosen = _pruned(bounds, query, utilities, excluded, floor, k)
        if chosen is not None:
            pruned_some += 1
            assert chosen == _full_scan(vectors, query, utilities, excluded, floor, k)
    assert pruned_some > 30  # the bounds did skip lessons, and chose the same ones


def test_tied_lessons_are_told_apart_by_id_whichever_are_skipped() -> None:
    rng = np.random.default_rng(3)
    vectors = _few_subjects(rng, 2_500)
    vectors[2_000:2_010] = vectors[17]  # ten copies of one lesson under other ids
    bounds = LessonBounds.build(vectors)
    assert bounds is not None
    query = _unit(vectors[17].astype(np.float64) + 0.01)
    utilities = np.full(len(vectors), 0.5)
    excluded = np.empty(0, dtype=np.intp)
    chosen = _pruned(bounds, query, utilities, excluded, 0.2, 3)
    assert chosen == [17, 2_000, 2_001]


def test_bounds_that_cannot_prune_say_so() -> None:
    rng = np.random.default_rng(1)
    vectors = _unit(rng.standard_normal((MIN_LESSONS, 384)))  # spread over every direction
    bounds = LessonBounds.build(vectors)
    assert bounds is not None
    query = _unit(rng.standard_normal(384))
    assert bounds.candidates(query, None, -1.0, 2) is None


@pytest.mark.parametrize(("count", "dimension"), [(MIN_LESSONS - 1, 384), (MIN_LESSONS, 64)])
def test_no_bounds_for_few_lessons_or_few_dimensions(count: int, dimension: int) -> None:
    vectors = _unit(np.random.default_rng(0).standard_normal((count, dimension)))
    assert LessonBounds.build(vectors) is None
