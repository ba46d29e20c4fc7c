"""Welch's interval and the rule that says runs did credibly worse than holdout runs."""

from __future__ import annotations

import pytest

from langchain_episodic.scoring.intervals import memory_hurts, t95, welch_interval


def test_the_interval_holds_the_difference_and_narrows_with_more_runs() -> None:
    few = welch_interval([1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 0.0])
    many = welch_interval([1.0, 0.0, 1.0, 1.0] * 25, [0.0, 1.0, 0.0, 0.0] * 25)
    assert few is not None
    assert many is not None
    assert few[1] == pytest.approx(0.5) == many[1]
    assert few[0] < 0 < few[2]  # four runs a side cannot tell
    assert many[0] > 0  # a hundred can
    assert many[2] - many[0] < few[2] - few[0]


def test_below_two_runs_a_side_there_is_no_interval() -> None:
    assert welch_interval([1.0], [0.0, 1.0]) is None
    assert welch_interval([0.5, 0.5], [0.2, 0.2]) == (0.3, 0.3, 0.3)  # no spread: exact


def test_memory_hurts_only_beyond_noise_and_with_enough_holdout_runs() -> None:
    worse, better = [0.1, 0.2, 0.0] * 10, [0.9, 0.8, 1.0] * 5
    assert memory_hurts(worse, better)
    assert not memory_hurts(worse, better[:9])  # fewer than the 10 holdout runs needed
    assert not memory_hurts(better, worse)
    assert not memory_hurts([1.0, 0.0] * 10, [0.0, 1.0] * 10)


def test_t95_is_wide_for_few_degrees_of_freedom() -> None:
    assert t95(1) > t95(5) > t95(30) > t95(10_000) == 1.96
