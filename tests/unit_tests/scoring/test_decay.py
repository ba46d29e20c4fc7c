"""Decay and the Beta means that credit evidence is ranked by."""

from __future__ import annotations

import math

import pytest

from langchain_episodic.scoring.decay import (
    PRIOR_HELPED,
    PRIOR_HURT,
    RANKING_PRIOR,
    beta_mean,
    half_life_decay,
    ranking_mean,
)


def test_a_weight_halves_every_half_life() -> None:
    assert half_life_decay(0.0, 10.0) == 1.0
    assert half_life_decay(10.0, 10.0) == pytest.approx(0.5)
    assert half_life_decay(30.0, 10.0) == pytest.approx(0.125)


def test_with_no_evidence_the_means_are_their_priors() -> None:
    assert beta_mean(0.0, 0.0) == pytest.approx(PRIOR_HELPED / (PRIOR_HELPED + PRIOR_HURT))
    assert ranking_mean(0.0, 0.0) == pytest.approx(0.5)


def test_evidence_moves_the_means_towards_it() -> None:
    assert beta_mean(5.0, 0.0) > beta_mean(0.0, 0.0) > beta_mean(0.0, 5.0)
    helped = ranking_mean(3.0, 1.0)
    assert helped == pytest.approx((RANKING_PRIOR + 3.0) / (2 * RANKING_PRIOR + 4.0))
    assert math.isclose(ranking_mean(1.0, 3.0), 1.0 - helped)
