"""The two small rules every score shares: half-life decay and the Beta posterior mean.

Recency (the article's and the relevance ranking's), credit evidence and a lesson's
carried evidence all fade by :func:`half_life_decay`; an episode's and a lesson's
utility are both :func:`beta_mean` of their evidence over the same prior.

Example:
    >>> half_life_decay(86_400.0, 86_400.0)
    0.5
    >>> half_life_decay(-5.0, 10.0)  # from the future (clock skew): no boost
    1.0
    >>> beta_mean(3.0, 1.0)
    0.6666666666666666
"""

from __future__ import annotations

import math

__all__ = ["PRIOR_HELPED", "PRIOR_HURT", "beta_mean", "half_life_decay"]

PRIOR_HELPED = 1.0
"""Beta prior's "helped" count: one pseudo-run each way, so the prior mean is 0.5."""

PRIOR_HURT = 1.0
"""Beta prior's "hurt" count."""


def half_life_decay(age: float, half_life: float) -> float:
    """What is left of a weight after ``age`` seconds: it halves every ``half_life``.

    A negative age (a time in the future) counts as 0. The caller checks that
    ``half_life`` is positive and the times finite.
    """
    return math.exp(-math.log(2) * max(0.0, age) / half_life)


def beta_mean(helped: float, hurt: float) -> float:
    """The posterior mean of Beta(:data:`PRIOR_HELPED` + helped, :data:`PRIOR_HURT` + hurt)."""
    return (PRIOR_HELPED + helped) / (PRIOR_HELPED + PRIOR_HURT + helped + hurt)
