"""The ``lift`` command: does memory help this agent, measured against holdout runs."""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterable
from dataclasses import asdict
from typing import Any

from langchain_episodic.cli._shared import (
    PLOT_HINT,
    CliError,
    _int_at_least,
    _one_line,
    _open_memory,
    _require_matplotlib,
    format_table,
)
from langchain_episodic.scoring.lift import (
    DEFAULT_MIN_HOLDOUT,
    DEFAULT_SUCCESS_AT,
    Lift,
    LiftReport,
)

__all__ = ["_configure_lift", "_run_lift"]


def _configure_lift(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-holdout",
        type=_int_at_least(1),
        default=DEFAULT_MIN_HOLDOUT,
        help=f"holdout runs needed before a lift is stated (default: {DEFAULT_MIN_HOLDOUT})",
    )
    parser.add_argument(
        "--success-at",
        type=float,
        default=DEFAULT_SUCCESS_AT,
        help=f"reward a run needs to count as a success (default: {DEFAULT_SUCCESS_AT:g})",
    )
    parser.add_argument(
        "--periods",
        type=_int_at_least(1),
        default=4,
        help="equal-count periods of the run history (default: 4)",
    )
    parser.add_argument(
        "--top",
        type=_int_at_least(0),
        default=5,
        help="most-shown episodes listed (default: 5; every lesson is listed)",
    )
    parser.add_argument(
        "--plot", metavar="FILE", default=None, help=f"also save a plot ({PLOT_HINT})"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")


def _number(value: float | None, spec: str = ".3f") -> str:
    return "-" if value is None else f"{value:{spec}}"


def _table(lifts: Iterable[Lift]) -> str:
    rows = [
        [
            _one_line(lift.label, 32),
            str(lift.with_memory.runs),
            str(lift.holdout.runs),
            _number(lift.with_memory.mean_reward),
            _number(lift.holdout.mean_reward),
            _number(lift.reward_lift, "+.3f"),
            "-" if (span := lift.reward_interval) is None else f"[{span[0]:+.3f}, {span[1]:+.3f}]",
            _number(lift.success_lift, "+.1%"),
        ]
        for lift in lifts
    ]
    return format_table(_HEADERS, rows, right=range(1, len(_HEADERS)))


_HEADERS = [
    "slice",
    "with memory",
    "holdout",
    "reward (memory)",
    "reward (holdout)",
    "lift",
    "95% interval",
    "success lift",
]


def _report_json(report: LiftReport, namespace: str) -> dict[str, Any]:
    choice = report.presentation
    return {
        "namespace": namespace,
        "enough": report.enough,
        "note": report.note,
        "min_holdout": report.min_holdout,
        "success_at": report.success_at,
        "backing_off": list(report.backing_off),
        "overall": asdict(report.overall),
        "by_category": [asdict(lift) for lift in report.by_category],
        "over_time": [asdict(lift) for lift in report.over_time],
        "items": [
            {"id": item.item_id, "kind": item.kind, **asdict(item.lift)} for item in report.items
        ],
        "presentation": {
            "policy": None if choice is None else choice.policy,
            "reason": None if choice is None else choice.reason,
            "estimates": [] if choice is None else [vars(e) for e in choice.estimates],
            "policies": [
                {"policy": item.policy, "versus_default": item.versus_default, **asdict(item.lift)}
                for item in report.by_presentation
            ],
        },
    }


def _run_lift(args: argparse.Namespace) -> int:
    """Reward and success of runs with memory against holdout runs, from the journal."""
    if not 0.0 <= args.success_at <= 1.0:
        msg = f"--success-at {args.success_at:g} is invalid: must be in [0, 1]"
        raise CliError(msg)
    if args.plot is not None:
        _require_matplotlib()
    memory = _open_memory(args, create=False)
    report = memory.runs.lift(
        min_holdout=args.min_holdout, success_at=args.success_at, periods=args.periods, top=args.top
    )
    if args.json:
        print(json.dumps(_report_json(report, memory.namespace), indent=2))
        return 0
    overall = report.overall
    print(
        f"lift of memory in namespace {memory.namespace!r}: {overall.with_memory.runs} "
        f"credited runs with memory, {overall.holdout.runs} holdout runs (shown no memory)"
    )
    if report.note:
        print(report.note)
        if not overall.holdout.runs:
            print("open the memory with holdout=0.1 (EpisodicMemory(holdout=...)) to get some")
    if report.backing_off:
        print(
            f"memory hurts recent runs in: {', '.join(report.backing_off)}; recall there shows "
            "only what worked, one episode at most, until it stops hurting (use_lift=False: off)"
        )
    for title, lifts in (
        ("overall", (overall,)),
        ("per category", report.by_category),
        ("over time (run timestamps, equal-count periods)", report.over_time),
        ("per lesson and most-shown episode", tuple(item.lift for item in report.items)),
    ):
        if lifts:
            print(f"\n{title}")
            print(_table(lifts))
    _print_presentation(report)
    if args.plot is not None and report.over_time:
        _plot(report, str(args.plot), memory.namespace)
        print(f"\nplot saved to {args.plot}")
    return 0


def _print_presentation(report: LiftReport) -> None:
    """What the memory learned about showing experience, and the policy it uses now."""
    if report.presentation is not None:
        choice = report.presentation
        why = {
            "prior": "no credited run says otherwise yet",
            "learned": "learned from the credited runs",
        }.get(choice.reason, choice.reason)
        print(f"\npresentation shown now: {choice.policy} ({why})")
    if report.by_presentation:
        print("per presentation policy (its runs against holdout runs; against compact below)")
        print(_table(item.lift for item in report.by_presentation))
        for item in report.by_presentation:
            if item.versus_default is not None:
                print(f"  {item.sentence}")


def _plot(report: LiftReport, destination: str, namespace: str) -> None:
    """Reward with memory and without, per period (Agg canvas: no display)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    figure = Figure(figsize=(8.0, 4.5), layout="constrained")
    FigureCanvasAgg(figure)
    axes = figure.subplots()
    periods = range(1, len(report.over_time) + 1)
    for name, arm in (("with memory", "with_memory"), ("holdout (no memory)", "holdout")):
        axes.plot(
            periods,
            [getattr(lift, arm).mean_reward for lift in report.over_time],
            marker="o",
            label=name,
        )
    axes.set_xticks(list(periods))
    axes.set_xlabel("period of the run history (equal run counts)")
    axes.set_ylabel("mean reward")
    axes.set_ylim(-0.02, 1.02)
    axes.set_title(f"lift of memory, namespace {namespace!r}")
    axes.legend(loc="lower right")
    axes.grid(alpha=0.3)
    try:
        figure.savefig(destination)
    except OSError as error:
        msg = f"could not save the plot to {destination!r}: {error.strerror or error}"
        raise CliError(msg) from None
