"""Does memory help *this* agent? Runs shown memory against holdout runs, from the journal.

A memory opened with ``holdout=0.1`` shows no memory to a random tenth of the runs
built with a ``run_id`` (`build_replay`); their outcomes
are the baseline. Chance decided which runs went without, so the difference in mean
reward (and in success rate) between runs with memory and holdout runs estimates what
memory does for this agent's traffic: its lift. `lift_report` gives it overall,
per category, over time and for the lessons and most-shown episodes, each with a 95%
interval (Welch's t), and says plainly when there are not enough holdout runs yet.

Pure: it reads outcome events (`CreditEvent`).

Examples:
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
from langchain_episodic.model.credit import CreditEvent
from langchain_episodic.model.episode import LESSON_ID_PREFIX
from langchain_episodic.scoring.credit import (
    ALL_CATEGORIES,
    LIFT_WINDOW_HOLDOUT,
    LIFT_WINDOW_WITH_MEMORY,
)
from langchain_episodic.scoring.intervals import (
    BACK_OFF_MIN_HOLDOUT,
    memory_hurts,
    t95,
    welch_interval,
)
from langchain_episodic.scoring.presentation import (
    DEFAULT_PRESENTATION,
    PRESENTATIONS,
    PresentationChoice,
)

__all__ = [
    "BACK_OFF_MIN_HOLDOUT",
    "DEFAULT_MIN_HOLDOUT",
    "DEFAULT_SUCCESS_AT",
    "Arm",
    "ItemLift",
    "Lift",
    "LiftReport",
    "PresentationLift",
    "lift_report",
    "memory_hurts",
    "t95",
    "welch_interval",
]

DEFAULT_MIN_HOLDOUT = 10
"""Holdout runs the report needs before it states a lift (fewer: "not enough yet")."""

DEFAULT_SUCCESS_AT = 1.0
"""A run succeeded when its reward reaches this (a pass rate of 1: every test passed)."""


def _when(seconds: float) -> str:
    """A run's time as UTC date and minute (the periods' labels)."""
    try:
        return datetime.fromtimestamp(seconds, tz=timezone.utc).strftime("%Y-%m-%d %H:%M")
    except (OverflowError, OSError, ValueError):  # a clock far outside the calendar
        return f"{seconds:.0f}"


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
    succeeded = sum(1 for r in rewards if r >= success_at)
    return Arm(len(rewards), sum(rewards) / len(rewards), succeeded / len(rewards))


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
    won, held_won = ([float(r >= success_at) for r in rewards] for rewards in (shown, held))
    reward_lift = _minus(with_memory.mean_reward, holdout.mean_reward)
    success_lift = _minus(with_memory.success_rate, holdout.success_rate)
    reward, success = _ends(welch_interval(shown, held)), _ends(welch_interval(won, held_won))
    return Lift(label, with_memory, holdout, reward_lift, reward, success_lift, success)


def _minus(a: float | None, b: float | None) -> float | None:
    return None if a is None or b is None else a - b


def _ends(interval: tuple[float, float, float] | None) -> tuple[float, float] | None:
    return None if interval is None else (interval[0], interval[2])


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
class PresentationLift:
    """Runs shown with one presentation policy, against holdout runs and the default's.

    Attributes:
        policy: The policy (`presentation`).
        lift: Its runs against every holdout run (its ``label`` is the policy).
        versus_default: Its mean reward minus that of the default policy's runs
            (``"compact"``) with the 95% Welch interval, ``(low, difference, high)``;
            ``None`` for the default itself or below 2 runs a side.
    """

    policy: str
    lift: Lift
    versus_default: tuple[float, float, float] | None

    @property
    def sentence(self) -> str:
        """The comparison in words, e.g. ``"ranked: +0.120 [+0.031, +0.209] against compact"``."""
        if self.versus_default is None:
            return f"{self.policy}: {self.lift.with_memory.runs} runs"
        low, diff, high = self.versus_default
        interval = f"[{low:+.3f}, {high:+.3f}]"
        return f"{self.policy}: {diff:+.3f} {interval} against {DEFAULT_PRESENTATION}"


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
        backing_off: Where the memory shows less now (`memory_hurts` on the
            latest runs): categories, and ``"all"`` when every category's runs
            together say memory hurts. Recall there returns only what worked, at
            most one episode, until it stops hurting (``use_lift=False``: never).
        by_presentation: Per presentation policy that credited runs used, in
            `PRESENTATIONS` order.
        presentation: The policy the memory shows with now and its evidence
            (``memory.runs.lift()`` fills it in; ``None`` from the pure function).
    """

    overall: Lift
    by_category: tuple[Lift, ...]
    over_time: tuple[Lift, ...]
    items: tuple[ItemLift, ...]
    min_holdout: int
    success_at: float
    backing_off: tuple[str, ...] = ()
    by_presentation: tuple[PresentationLift, ...] = ()
    presentation: PresentationChoice | None = None

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
        return "" if self.overall.with_memory.runs else "no credited run was shown memory yet"


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
    counts, however few its runs; read `LiftReport.enough` (and each
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
        sides: tuple[list[float], list[float]] = ([], [])  # with memory, holdout
        for event in events:
            sides[1 if event.holdout else 0].append(float(event.reward or 0.0))
        return sides

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
    shown_in: dict[str, list[CreditEvent]] = defaultdict(list)
    for event in credited:
        if event.holdout:
            held_by_category[event.category].append(float(event.reward or 0.0))
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
        _by_presentation(credited, success_at),
    )


def _by_presentation(
    credited: Sequence[CreditEvent], success_at: float
) -> tuple[PresentationLift, ...]:
    """Each policy's runs against every holdout run and against the default's runs."""
    held = [float(e.reward or 0.0) for e in credited if e.holdout]
    rewards: dict[str, list[float]] = defaultdict(list)
    for event in credited:
        if event.policy is not None and not event.holdout:
            rewards[event.policy].append(float(event.reward or 0.0))
    default = rewards.get(DEFAULT_PRESENTATION, [])
    order = [p for p in PRESENTATIONS if p in rewards] + sorted(set(rewards) - set(PRESENTATIONS))
    return tuple(
        PresentationLift(
            policy,
            _lift(policy, rewards[policy], held, success_at),
            None if policy == DEFAULT_PRESENTATION else welch_interval(rewards[policy], default),
        )
        for policy in order
    )


def _backing_off(credited: Sequence[CreditEvent]) -> tuple[str, ...]:
    """Where `memory_hurts` holds on the latest runs, as the credit book keeps them."""
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
