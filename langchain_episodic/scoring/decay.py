"""The two small rules every score shares: half-life decay and the Beta posterior mean.

Recency (the article's and the relevance ranking's), credit evidence and a lesson's
carried evidence all fade by `half_life_decay`; an episode's and a lesson's
utility are both `beta_mean` of their evidence over the same prior. An episode's
age, for recency and retention, is `episode_age`: a date far in the future is not
forever new.

Examples:
    >>> half_life_decay(86_400.0, 86_400.0)
    0.5
    >>> half_life_decay(-5.0, 10.0)  # from the future (clock skew): no boost
    1.0
    >>> beta_mean(3.0, 1.0)
    0.6666666666666666
    >>> episode_age(now=100.0, timestamp=40.0), episode_age(now=100.0, timestamp=160.0)
    (60.0, 0.0)
    >>> episode_age(now=0.0, timestamp=FUTURE_SKEW + 5.0)  # past the skew: as old as far
    86405.0
"""

from __future__ import annotations

import math

__all__ = [
    "FUTURE_SKEW",
    "PRIOR_HELPED",
    "PRIOR_HURT",
    "RANKING_PRIOR",
    "beta_mean",
    "episode_age",
    "half_life_decay",
    "ranking_mean",
]

FUTURE_SKEW = 86_400.0
"""Seconds an episode may be dated ahead of the memory's clock and still count as new.

Clocks of two machines disagree by seconds, a local time written as UTC by up to 14
hours: within a day ahead, an episode counts as age 0 (no boost). Further ahead no clock
is merely skewed: the date is wrong or chosen, and such an episode counts as old as it is
far ahead (`episode_age`), so one dated in 2198 is not the freshest episode for
ever, and retention by age prunes it. Recording does not refuse it (a simulation may run
its own calendar); it is ranked and retained by this rule."""

PRIOR_HELPED = 1.0
"""Beta prior's "helped" count: one pseudo-run each way, so the prior mean is 0.5."""

PRIOR_HURT = 1.0
"""Beta prior's "hurt" count."""

RANKING_PRIOR = 8.0
"""Pseudo-runs a side that the utility recall *ranks* by starts from (`ranking_mean`).

What credit knows of an episode (its utility, ``harmful``, probation) keeps the prior of
one run a side. What it may do to the ranking is shrunk harder: one run's advantage is
noisy, and utility scales priority by its fourth power. With one pseudo-run a side, one
credited run at reward 0.4 dropped an episode at similarity 0.89 below one at 0.69 (a
factor of 0.39); with eight it moves rank a little (about 0.82), and runs that agree move
it a lot. In the credit simulation (``benchmarks/learning_value.py``, 20 seeds) priors of
1, 2, 3, 4, 6 and 8 earned the same reward within noise."""


def episode_age(now: float, timestamp: float) -> float:
    """Seconds an episode dated ``timestamp`` counts as old at ``now``; never negative.

    Up to `FUTURE_SKEW` ahead of ``now`` it is 0 (clock skew); further ahead it
    is the distance ahead: a date that no skew explains earns no freshness.
    """
    ahead = timestamp - now
    return ahead if ahead > FUTURE_SKEW else max(0.0, -ahead)


def half_life_decay(age: float, half_life: float) -> float:
    """What is left of a weight after ``age`` seconds: it halves every ``half_life``.

    A negative age (a time in the future) counts as 0. The caller checks that
    ``half_life`` is positive and the times finite.
    """
    return math.exp(-math.log(2) * max(0.0, age) / half_life)


def beta_mean(helped: float, hurt: float) -> float:
    """The posterior mean of Beta(`PRIOR_HELPED` + helped, `PRIOR_HURT` + hurt)."""
    return (PRIOR_HELPED + helped) / (PRIOR_HELPED + PRIOR_HURT + helped + hurt)


def ranking_mean(helped: float, hurt: float) -> float:
    """The utility recall ranks by: the posterior mean over `RANKING_PRIOR` a side.

    Examples:
        >>> round(beta_mean(0.1, 0.9), 3), round(ranking_mean(0.1, 0.9), 3)
        (0.367, 0.476)
    """
    return (RANKING_PRIOR + helped) / (2.0 * RANKING_PRIOR + helped + hurt)
