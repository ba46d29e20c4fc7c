"""What a replay shows, as a choice the memory learns from its runs' outcomes (pure logic).

A model that copies what it is shown (a small completion model) does best when shown
only what worked; a model that reads a failure's feedback does better when shown the
warnings too. No fixed rule serves both, so the ways of showing experience are named
policies (`PRESENTATIONS`) and the memory chooses among them from the outcomes it
already collects: every credited run says which policy its prompt used and what it
earned.

* ``"compact"`` (the default and the prior): what worked first, a failed attempt only
  beside the solution that fixed it.
* ``"feedback"``: what worked first, then each unfixed failure's feedback line.
* ``"ranked"``: the best-ranked relevant episodes whatever their outcome (relevance,
  value and credit's utility decide), each failure as its feedback line.

The chooser (`choose_presentation`) is Thompson sampling with an honest prior:

* **Nothing changes without outcomes.** Until `MIN_CREDITED_RUNS` runs of the
  namespace shown memory are credited, the choice is ``"compact"`` and nothing random
  is drawn (a newcomer's first runs show what the docs show). Those runs are no evidence
  for ``"compact"``: nothing chose it by chance, and the memory held less then, so
  counting them would credit every later policy with the memory's growth.
* **The prior favours the default.** Every policy starts at the mean reward of the
  namespace's credited runs, worth `PRIOR_RUNS` runs; the others start
  `HEAD_START` below it, so evidence has to say they are better.
* **Categories borrow from the namespace.** A category's estimate is its own runs
  shrunk towards the namespace's estimate (worth `CATEGORY_PRIOR_RUNS` runs, or
  the namespace's own runs if fewer), so a category with few runs follows the namespace
  and one with many follows its own.
* **The lift guard's conservatism.** A policy whose recent runs did credibly worse than
  the holdout runs (shown no memory by chance;
  `memory_hurts`) is dropped until that stops
  holding.

Examples:
    >>> import numpy as np
    >>> choose_presentation({}).policy  # no outcomes: the default, nothing drawn
    'compact'
    >>> runs = {"compact": [0.2, 0.3, 0.2, 0.1] * 10, "ranked": [0.8, 0.7, 0.9, 0.8] * 10}
    >>> choice = choose_presentation(runs, rng=np.random.default_rng(0))
    >>> choice.policy, choice.reason
    ('ranked', 'sampled')
    >>> choose_presentation(runs).reason  # no generator: the best estimate
    'learned'
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.scoring.credit import PRESENTATION_WINDOW
from langchain_episodic.scoring.intervals import memory_hurts

if TYPE_CHECKING:  # the chooser only calls the generator it is given (a CLI need not load numpy)
    import numpy as np

__all__ = [
    "CATEGORY_PRIOR_RUNS",
    "DEFAULT_PRESENTATION",
    "HEAD_START",
    "MIN_CREDITED_RUNS",
    "PRESENTATIONS",
    "PRESENTATION_WINDOW",
    "PRIOR_RUNS",
    "Presentation",
    "PresentationChoice",
    "PresentationEstimate",
    "check_presentation",
    "choose_presentation",
]

Presentation = Literal["compact", "feedback", "ranked"]
"""The name of a presentation policy."""

PRESENTATIONS: tuple[Presentation, ...] = ("compact", "feedback", "ranked")
"""Every presentation policy, the default first."""

DEFAULT_PRESENTATION: Presentation = "compact"
"""The policy with no evidence: measured best on a real model that copies what it sees."""

PRIOR_RUNS = 10.0
"""How many runs each policy's prior (the namespace's mean reward) is worth."""

CATEGORY_PRIOR_RUNS = 30.0
"""How many runs the namespace's estimate is worth as a category's prior (at most as
many as the namespace's own evidence). Chosen in ``benchmarks/presentation_learning.py``
(10, 30 and 100 against the two worlds; 30 and 100 alike, 10 explored more)."""

MIN_CREDITED_RUNS = 10
"""Credited runs shown memory the namespace needs before the chooser draws."""

HEAD_START = 0.2
"""How far below the default's prior the other policies start (in mean reward).

With `PRIOR_RUNS`, chosen in ``benchmarks/presentation_learning.py`` against the
reader and copier worlds (10 seeds; head start / prior runs 0.05/4, 0.05/10, 0.1/4,
0.1/10, 0.2/4, 0.2/10, 0.3/10): 0.2/10 lost least where showing failures hurts and
still learned where it helps. The real model, a copier, agrees: with 0.05/4 its few,
noisy runs led the memory to show failures' feedback, which it copies."""

_FALLBACK_VARIANCE = 0.25  # a reward in [0, 1] varies at most this much
_VARIANCE_FLOOR = 0.01
_UNTRIED_VARIANCE = 0.1

Reason = Literal["prior", "learned", "sampled", "pinned", "run"]


def check_presentation(value: object, name: str = "presentation") -> Presentation:
    """``value`` as a policy name.

    Raises:
        EpisodicValueError: It names no policy of `PRESENTATIONS`.
    """
    for policy in PRESENTATIONS:
        if value == policy:
            return policy
    msg = f"{name}={value!r} is invalid: must be one of {list(PRESENTATIONS)}"
    raise EpisodicValueError(msg)


@dataclass(frozen=True)
class PresentationEstimate:
    """What the credited runs say about one policy.

    Attributes:
        policy: The policy.
        runs: Its credited runs the estimate reads (the namespace's, or the
            category's when one was asked for).
        mean_reward: Their mean reward, ``None`` without runs.
        estimate: The posterior mean reward (prior and evidence).
        spread: The posterior standard deviation.
        dropped: Its recent runs did credibly worse than holdout runs: not chosen.
    """

    policy: Presentation
    runs: int
    mean_reward: float | None
    estimate: float
    spread: float
    dropped: bool = False


@dataclass(frozen=True)
class PresentationChoice:
    """The policy a replay uses, and why.

    Attributes:
        policy: The chosen policy.
        reason: ``"prior"`` (no credited run yet: the default), ``"learned"`` (the
            best estimate), ``"sampled"`` (a Thompson draw, for a run whose outcome
            will be credited), ``"pinned"`` (the caller named it), ``"run"`` (an
            earlier prompt of the same run used it: a run is shown one way).
        estimates: The evidence, one per policy in `PRESENTATIONS` order (empty
            for ``"prior"``, ``"pinned"`` and ``"run"``).
    """

    policy: Presentation
    reason: Reason
    estimates: tuple[PresentationEstimate, ...] = ()


def _variance(values: Sequence[float]) -> float:
    if len(values) < 2:
        return _FALLBACK_VARIANCE
    mean = sum(values) / len(values)
    spread = sum((v - mean) ** 2 for v in values) / (len(values) - 1)
    return max(_VARIANCE_FLOOR, spread)


def _shrunk(prior: float, weight: float, values: Sequence[float]) -> float:
    return (prior * weight + sum(values)) / (weight + len(values))


def choose_presentation(
    namespace: Mapping[str, Sequence[float]],
    category: Mapping[str, Sequence[float]] | None = None,
    holdout: Sequence[float] = (),
    rng: np.random.Generator | None = None,
    *,
    recent: Sequence[float] | None = None,
) -> PresentationChoice:
    """The policy to show a replay with, from the rewards of runs that used each.

    Args:
        namespace: Recent rewards of the namespace's credited runs, per policy name.
        category: The same for the task's category, or ``None`` to choose for the
            namespace as a whole.
        holdout: Recent rewards of holdout runs (shown no memory) of the same scope.
        rng: Draw from each policy's posterior (Thompson sampling; for a run whose
            outcome will be credited); ``None``: the best posterior mean among the
            policies some run used.
        recent: Recent rewards of every credited run of the namespace shown memory,
            whatever its policy: the priors' centre and spread, and what
            `MIN_CREDITED_RUNS` counts; ``None``: the policies' runs pooled.

    Returns:
        The `PresentationChoice`.

    Examples:
        >>> runs = {"compact": [1.0, 0.0] * 20, "feedback": [0.0] * 40}
        >>> choice = choose_presentation(runs, holdout=[1.0, 0.0] * 10)
        >>> choice.policy, [e.dropped for e in choice.estimates]
        ('compact', [False, True, False])
    """
    own = {p: list(namespace.get(p, ())) for p in PRESENTATIONS}
    pooled = list(recent) if recent is not None else [r for rs in own.values() for r in rs]
    if len(pooled) < MIN_CREDITED_RUNS:
        return PresentationChoice(DEFAULT_PRESENTATION, "prior")
    base = sum(pooled) / len(pooled)
    pooled_variance = _variance(pooled)
    estimates = []
    for policy in PRESENTATIONS:
        # What is unknown of a policy few runs used is its mean, not the spread of other
        # policies' rewards (which may agree exactly): at least _UNTRIED_VARIANCE.
        read = own[policy]
        variance = _variance(read) if len(read) >= 2 else max(pooled_variance, _UNTRIED_VARIANCE)
        prior = base if policy == DEFAULT_PRESENTATION else base - HEAD_START
        estimate = _shrunk(prior, PRIOR_RUNS, read)
        weight = PRIOR_RUNS + len(read)
        if category is not None:
            # The namespace's estimate is the category's prior, worth no more runs than
            # the namespace has: a category is never surer than the evidence behind it.
            prior_weight = min(CATEGORY_PRIOR_RUNS, weight)
            read = list(category.get(policy, ()))
            estimate = _shrunk(estimate, prior_weight, read)
            weight = prior_weight + len(read)
        mean = sum(read) / len(read) if read else None
        spread, dropped = math.sqrt(variance / weight), bool(read) and memory_hurts(read, holdout)
        estimates.append(PresentationEstimate(policy, len(read), mean, estimate, spread, dropped))
    kept = [e for e in estimates if not e.dropped] or [
        e for e in estimates if e.policy == DEFAULT_PRESENTATION
    ]
    if rng is None:
        # Learned means tried: a policy no run used is never the best estimate.
        tried = [e for e in kept if own[e.policy] or e.policy == DEFAULT_PRESENTATION]
        best = max(tried, key=lambda e: (e.estimate, e.policy == DEFAULT_PRESENTATION))
        return PresentationChoice(best.policy, "learned", tuple(estimates))
    draws = rng.normal([e.estimate for e in kept], [e.spread for e in kept])
    best = kept[max(range(len(kept)), key=lambda i: float(draws[i]))]
    return PresentationChoice(best.policy, "sampled", tuple(estimates))
