"""Does memory help *this* agent? Runs shown memory against holdout runs, from the journal.

A memory opened with ``holdout=0.1`` shows no memory to a random tenth of the runs
built with a ``run_id`` (:func:`~langchain_episodic.build_replay`); their outcomes
are the baseline. Chance decided which runs went without, so the difference in mean
reward (and in success rate) between runs with memory and holdout runs estimates what
memory does for this agent's traffic: its lift. :func:`lift_report` gives it overall,
per category, over time and for the lessons and most-shown episodes, each with a 95%
interval (Welch's t), and says plainly when there are not enough holdout runs yet.

Pure: it reads outcome events (:class:`~langchain_episodic.scoring.credit.CreditEvent`).

Example:
    >>> from langchain_episodic.scoring.credit import CreditEvent
    >>> runs = [CreditEvent(f"m{i}", 0.9, ("e1",), "debugging", float(i)) for i in range(20)]
    >>> runs += [CreditEvent(f"h{i}", 0.5, (), "debugging", float(i), holdout=True)
    ...          for i in range(10)]
    >>> report = lift_report(runs, min_holdout=10)
    >>> round(report.overall.reward_lift, 2), report.enough
    (0.4, True)
    >>> lift_report(runs[:25], min_holdout=10).note
    'not enough holdout runs yet: 5 of the 10 needed'
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.model.episode import LESSON_ID_PREFIX
from langchain_episodic.scoring.credit import (
    ALL_CATEGORIES,
    LIFT_WINDOW_HOLDOUT,
    LIFT_WINDOW_WITH_MEMORY,
    CreditEvent,
)

__all__ = [
    "BACK_OFF_MIN_HOLDOUT",
    "DEFAULT_MIN_HOLDOUT",
    "DEFAULT_SUCCESS_AT",
    "Arm",
    "ItemLift",
    "Lift",
    "LiftReport",
    "lift_report",
    "memory_hurts",
    "t95",
    "welch_interval",
]

DEFAULT_MIN_HOLDOUT = 10
"""Holdout runs the report needs before it states a lift (fewer: "not enough yet")."""

BACK_OFF_MIN_HOLDOUT = 10
"""Recent holdout runs a category needs before the memory may back off in it."""

DEFAULT_SUCCESS_AT = 1.0
"""A run succeeded when its reward reaches this (a pass rate of 1: every test passed)."""

_T95 = (
    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    2.201, 2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
    2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
)  # fmt: skip


def _when(seconds: float) -> str:
    """A run's time as UTC date and minute (the periods' labels)."""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):  # a clock far outside the calendar
        return f"{seconds:.0f}"


def t95(df: float) -> float:
    """The two-sided 95% quantile of Student's t with ``df`` degrees of freedom.

    Tabulated to 30 (a fractional Welch ``df`` rounds down, so the interval errs
    wide), 1.96 past it.

    Example:
        >>> t95(1), t95(29.5), t95(1000)
        (12.706, 2.045, 1.96)
    """
    whole = max(1, math.floor(df))
    return _T95[whole - 1] if whole <= len(_T95) else 1.96


@dataclass(frozen=True)
class Arm:
    """The credited runs of one kind in one slice.

    Attributes:
        runs: How many.
        mean_reward: Their mean reward (``None`` without runs).
        success_rate: Their share of rewards reaching ``success_at`` (``None`` without runs).
    """

    runs: int
    mean_reward: float | None
    success_rate: float | None


def _arm(rewards: Sequence[float], success_at: float) -> Arm:
    if not rewards:
        return Arm(0, None, None)
    return Arm(
        len(rewards),
        sum(rewards) / len(rewards),
        sum(1 for r in rewards if r >= success_at) / len(rewards),
    )


def welch_interval(a: Sequence[float], b: Sequence[float]) -> tuple[float, float, float] | None:
    """``mean(a) - mean(b)`` with its 95% Welch interval; ``None`` below 2 values a side.

    Example:
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
    with_memory: Sequence[float],
    holdout: Sequence[float],
    min_holdout: int = BACK_OFF_MIN_HOLDOUT,
) -> bool:
    """Whether recent runs shown memory did confidently worse than recent holdout runs.

    The rule the memory backs off by (``RecallOptions(use_lift=True)``, the default):
    at least ``min_holdout`` holdout runs, and the 95% Welch interval of the mean
    reward with memory minus without lies wholly below 0. Callers pass the latest
    :data:`~langchain_episodic.scoring.credit.LIFT_WINDOW_WITH_MEMORY` and
    :data:`~langchain_episodic.scoring.credit.LIFT_WINDOW_HOLDOUT` rewards, so that
    once memory shows less and stops hurting, the rule lets go.

    Example:
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


@dataclass(frozen=True)
class Lift:
    """Runs with memory against holdout runs, in one slice (all, a category, a period).

    Attributes:
        label: What the slice is: ``"all"``, a category, a period (its first and
            last run, UTC), or an episode or lesson id.
        with_memory: Credited runs that were not holdout runs.
        holdout: Credited holdout runs (shown no memory by chance).
        reward_lift: Mean reward with memory minus without (``None`` if either is empty).
        reward_interval: Its 95% interval, ``(low, high)``; ``None`` below 2 runs a side.
        success_lift: Success rate with memory minus without.
        success_interval: Its 95% interval (Welch's on 0/1 outcomes).
    """

    label: str
    with_memory: Arm
    holdout: Arm
    reward_lift: float | None
    reward_interval: tuple[float, float] | None
    success_lift: float | None
    success_interval: tuple[float, float] | None

    @property
    def significant(self) -> bool:
        """Whether the reward interval excludes 0 (memory helps, or hurts, beyond noise)."""
        interval = self.reward_interval
        return interval is not None and (interval[0] > 0 or interval[1] < 0)


def _lift(label: str, shown: Sequence[float], held: Sequence[float], success_at: float) -> Lift:
    with_memory, holdout = _arm(shown, success_at), _arm(held, success_at)
    reward = welch_interval(shown, held)
    success = welch_interval(
        [float(r >= success_at) for r in shown], [float(r >= success_at) for r in held]
    )
    lift = (
        None
        if with_memory.mean_reward is None or holdout.mean_reward is None
        else with_memory.mean_reward - holdout.mean_reward
    )
    rate = (
        None
        if with_memory.success_rate is None or holdout.success_rate is None
        else with_memory.success_rate - holdout.success_rate
    )
    return Lift(
        label,
        with_memory,
        holdout,
        lift,
        None if reward is None else (reward[0], reward[2]),
        rate,
        None if success is None else (success[0], success[2]),
    )


@dataclass(frozen=True)
class ItemLift:
    """Runs that showed one episode or lesson against holdout runs of the same categories.

    Attributes:
        item_id: The episode or lesson.
        kind: ``"episode"`` or ``"lesson"``.
        lift: The comparison (its ``label`` is the id).
    """

    item_id: str
    kind: str
    lift: Lift


@dataclass(frozen=True)
class LiftReport:
    """What memory does for an agent's runs, measured against its holdout runs.

    Attributes:
        overall: Every credited run.
        by_category: Per task category, most runs first.
        over_time: Equal-count periods of the run history, oldest first.
        items: Every lesson shown and the ``top`` most-shown episodes, most shown first.
        min_holdout: Holdout runs needed before a lift is stated.
        success_at: The reward a run needs to count as a success.
        backing_off: Where the memory shows less now (:func:`memory_hurts` on the
            latest runs): categories, and ``"all"`` when every category's runs
            together say memory hurts. Recall there returns only what worked, at
            most one episode, until it stops hurting (``use_lift=False``: never).
    """

    overall: Lift
    by_category: tuple[Lift, ...]
    over_time: tuple[Lift, ...]
    items: tuple[ItemLift, ...]
    min_holdout: int
    success_at: float
    backing_off: tuple[str, ...] = ()

    @property
    def enough(self) -> bool:
        """Whether there are at least ``min_holdout`` holdout runs (and any with memory)."""
        return self.overall.holdout.runs >= self.min_holdout and self.overall.with_memory.runs > 0

    @property
    def note(self) -> str:
        """``""``, or in words why no lift is stated yet."""
        if self.overall.holdout.runs < self.min_holdout:
            return (
                f"not enough holdout runs yet: {self.overall.holdout.runs} of the "
                f"{self.min_holdout} needed"
            )
        if not self.overall.with_memory.runs:
            return "no credited run was shown memory yet"
        return ""


def lift_report(
    outcomes: Iterable[CreditEvent],
    *,
    min_holdout: int = DEFAULT_MIN_HOLDOUT,
    success_at: float = DEFAULT_SUCCESS_AT,
    periods: int = 4,
    top: int = 5,
) -> LiftReport:
    """The lift of memory over holdout runs, from a journal's outcomes.

    Runs closed without credit count nothing. Every slice is stated, with its
    counts, however few its runs; read :attr:`LiftReport.enough` (and each
    interval) before a figure.

    Args:
        outcomes: The journal's outcome events (``memory.runs.log()``).
        min_holdout: Holdout runs needed before the report states a lift.
        success_at: The reward a run needs to count as a success.
        periods: How many equal-count periods ``over_time`` splits the runs into.
        top: How many of the most-shown episodes get a row of their own.

    Raises:
        EpisodicValueError: An argument is out of range.
    """
    check_int("min_holdout", min_holdout, 1)
    success_at = check_number("success_at", success_at, 0.0, 1.0)
    check_int("periods", periods, 1)
    check_int("top", top, 0)
    credited = sorted((e for e in outcomes if e.reward is not None), key=lambda e: (e.at, e.run_id))

    def split(events: Iterable[CreditEvent]) -> tuple[list[float], list[float]]:
        shown: list[float] = []
        held: list[float] = []
        for event in events:
            (held if event.holdout else shown).append(float(event.reward or 0.0))
        return shown, held

    overall = _lift("all", *split(credited), success_at)
    categories = Counter(e.category for e in credited)
    by_category = tuple(
        _lift(category, *split(e for e in credited if e.category == category), success_at)
        for category, _ in categories.most_common()
    )
    over_time = []
    size = math.ceil(len(credited) / periods) if credited else 0
    for start in range(0, len(credited), size or 1):
        chunk = credited[start : start + size]
        label = f"{_when(chunk[0].at)} .. {_when(chunk[-1].at)}"
        over_time.append(_lift(label, *split(chunk), success_at))
    held_by_category: dict[str, list[float]] = defaultdict(list)
    for event in credited:
        if event.holdout:
            held_by_category[event.category].append(float(event.reward or 0.0))
    shown_in: dict[str, list[CreditEvent]] = defaultdict(list)
    for event in credited:
        for item in event.episode_ids:
            shown_in[item].append(event)
    ranked = sorted(shown_in, key=lambda item: (-len(shown_in[item]), item))
    lessons = [i for i in ranked if i.startswith(LESSON_ID_PREFIX)]
    episodes = [i for i in ranked if not i.startswith(LESSON_ID_PREFIX)][:top]
    items = []
    for item in sorted(lessons + episodes, key=ranked.index):
        runs = shown_in[item]
        held = [r for c in sorted({e.category for e in runs}) for r in held_by_category[c]]
        shown = [float(e.reward or 0.0) for e in runs]
        kind = "lesson" if item.startswith(LESSON_ID_PREFIX) else "episode"
        items.append(ItemLift(item, kind, _lift(item, shown, held, success_at)))
    return LiftReport(
        overall,
        by_category,
        tuple(over_time),
        tuple(items),
        min_holdout,
        success_at,
        _backing_off(credited),
    )


def _backing_off(credited: Sequence[CreditEvent]) -> tuple[str, ...]:
    """Where :func:`memory_hurts` holds on the latest runs, as the credit book keeps them."""
    windows: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for event in credited:
        for key in (event.category, ALL_CATEGORIES):
            windows[key][1 if event.holdout else 0].append(float(event.reward or 0.0))
    found = [
        "all" if key == ALL_CATEGORIES else key
        for key, (shown, held) in sorted(windows.items())
        if memory_hurts(shown[-LIFT_WINDOW_WITH_MEMORY:], held[-LIFT_WINDOW_HOLDOUT:])
    ]
    return tuple(sorted(found, key=lambda label: label != "all"))
