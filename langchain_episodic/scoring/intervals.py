"""The intervals the lift report and the memory's guards decide by (pure logic).

Welch's t-interval of a difference in mean reward, and the rule built on it that says
recent runs did credibly worse than holdout runs (`memory_hurts`): what the lift
guard backs off by and what drops a presentation policy.

Examples:
    >>> low, diff, high = welch_interval([1.0, 0.8, 0.9], [0.5, 0.4, 0.6])
    >>> round(diff, 2), low > 0
    (0.4, True)
"""

from __future__ import annotations

import math
from collections.abc import Sequence

__all__ = ["BACK_OFF_MIN_HOLDOUT", "memory_hurts", "t95", "welch_interval"]

BACK_OFF_MIN_HOLDOUT = 10
"""Recent holdout runs a category needs before the memory may back off in it."""

_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def t95(df: float) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom.

    Tabulated to 30 (a fractional Welch ``df`` rounds down, so the interval errs
    wide), 1.96 past it.

    Examples:
        >>> t95(1), t95(29.5), t95(1000)
        (12.706, 2.045, 1.96)
    """
    whole = max(1, math.floor(df))
    return _T95[whole - 1] if whole <= len(_T95) else 1.96


def welch_interval(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float] | None:
    """``mean(a) - mean(b)`` with its 95% Welch interval; ``None`` below 2 values a side.

    Examples:
        >>> low, diff, high = welch_interval([1.0, 0.8, 0.9], [0.5, 0.4, 0.6])
        >>> round(diff, 2), low < diff < high
        (0.4, True)
    """
    if len(a) < 2 or len(b) < 2:
        return None
    mean_a, mean_b = sum(a) / len(a), sum(b) / len(b)
    var_a = sum((x - mean_a) ** 2 for x in a) / (len(a) - 1)
    var_b = sum((x - mean_b) ** 2 for x in b) / (len(b) - 1)
    va, vb = var_a / len(a), var_b / len(b)
    diff = mean_a - mean_b
    if va + vb == 0:
        return diff, diff, diff
    df = (
        (va + vb) ** 2 / (va**2 / (len(a) - 1) + vb**2 / (len(b) - 1))
        if va * vb
        else min(len(a), len(b)) - 1
    )
    half = t95(df) * math.sqrt(va + vb)
    return diff - half, diff, diff + half


def memory_hurts(
    with_memory: Sequence[float], holdout: Sequence[float], min_holdout: int = BACK_OFF_MIN_HOLDOUT
) -> bool:
    """Whether recent runs shown memory did confidently worse than recent holdout runs.

    The rule the memory backs off by (``RecallOptions(use_lift=True)``, the default):
    at least ``min_holdout`` holdout runs, and the 95% Welch interval of the mean
    reward with memory minus without lies wholly below 0. Callers pass the latest
    `LIFT_WINDOW_WITH_MEMORY` and
    `LIFT_WINDOW_HOLDOUT` rewards, so that
    once memory shows less and stops hurting, the rule lets go.

    Examples:
        >>> memory_hurts([0.1, 0.2, 0.0, 0.1] * 5, [0.9, 0.8, 1.0, 0.7] * 3)
        True
        >>> memory_hurts([0.1, 0.2] * 5, [0.9, 0.8] * 4)  # 8 holdout runs: too few
        False
        >>> memory_hurts([0.8, 0.9] * 10, [0.9, 0.8] * 6)
        False
    """
    if len(holdout) < min_holdout:
        return False
    interval = welch_interval(with_memory, holdout)
    return interval is not None and interval[2] < 0
