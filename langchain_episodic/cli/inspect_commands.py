"""Commands that look inside a memory: stats, harmful, skills, curve."""

from __future__ import annotations

import argparse
import json
import math
import time
from collections import Counter
from collections.abc import Sequence

from langchain_episodic.cli._shared import (
    PLOT_HINT,
    CliError,
    _add_now,
    _finite_float,
    _format_time,
    _int_at_least,
    _one_line,
    _open_memory,
    _percent,
    _progress,
    _require_matplotlib,
    _target,
    _utility_json,
    format_duration,
    format_table,
)
from langchain_episodic.model.episode import OutcomeStatus
from langchain_episodic.scoring.skills import (
    MIN_WEAK_EPISODES,
    WEAK_THRESHOLD,
    LearningSnapshot,
    compute_learning_curve,
    identify_weak_skills,
)


def _configure_stats(parser: argparse.ArgumentParser) -> None:
    del parser  # no options of its own


def _run_stats(args: argparse.Namespace) -> int:
    """Print count, namespaces, time span, outcomes and the short-term window."""
    memory = _open_memory(args, create=False)
    target = _target(args)
    total = len(memory)
    outcomes: Counter[OutcomeStatus] = Counter()
    first, last = math.inf, -math.inf
    reward_sum = 0.0
    with _progress(total, "reading", quiet=False, unit="ep", leave=False) as scan:
        for episode in memory.episodes():  # streamed in pages: O(1) memory
            outcomes[episode.outcome] += 1
            reward_sum += episode.feedback.reward
            first, last = min(first, episode.timestamp), max(last, episode.timestamp)
            scan.update(1)
    counted = sum(outcomes.values())
    span = f"{_format_time(first)} .. {_format_time(last)} ({format_duration(last - first)})"
    shares = ", ".join(
        f"{status.value} {outcomes[status]} ({_percent(outcomes[status], counted)})"
        for status in OutcomeStatus
    )
    window = memory.short_term
    recent = f"{', '.join(e.episode_id for e in window)} (last {len(window)}, oldest first)"
    # The credit loop in one line: credited and holdout runs, open ones, probation, pins.
    credited = [event for event in memory.runs.log() if event.reward is not None]
    runs = (
        f"{len(credited)} credited ({sum(e.holdout for e in credited)} holdout: shown no memory), "
        f"{len(memory.runs.pending())} open; {len(memory.runs.demoted())} on probation, "
        f"{len(memory.quarantine.pinned())} pinned"
    )
    rows = [
        ("store", target.describe()),
        ("namespace", memory.namespace),
        ("namespaces", ", ".join(memory.namespaces())),
        ("episodes", str(total)),
        ("time span", span if counted else "-"),
        ("outcomes", shares),
        ("avg reward", f"{reward_sum / counted:.3f}" if counted else "-"),
        ("short-term", recent if window else "-"),
        ("runs", runs),
    ]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}")
    return 0


def _configure_harmful(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--min-runs",
        type=_int_at_least(1),
        default=3,
        help="credited runs an episode needs before it can be judged (default: 3)",
    )
    parser.add_argument(
        "--max-utility",
        type=_finite_float,
        default=0.4,
        help="utility at or below which an episode is listed, in [0, 1] (default: 0.4)",
    )
    _add_now(parser, "the time utility is read at")
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _run_harmful(args: argparse.Namespace) -> int:
    """Episodes whose injections keep preceding worse outcomes: candidates for quarantine."""
    memory = _open_memory(args, create=False)
    if not 0.0 <= args.max_utility <= 1.0:
        msg = f"--max-utility {args.max_utility:g} is invalid: must be in [0, 1]"
        raise CliError(msg)
    now = time.time() if args.now is None else float(args.now)
    rows = [
        row
        for row in memory.runs.utilities().values()
        if row.credited_runs >= args.min_runs and row.estimate(now) <= args.max_utility
    ]
    rows.sort(key=lambda row: (row.estimate(now), row.episode_id))
    wanted = {row.episode_id for row in rows}
    tasks = {
        episode.episode_id: episode.task.description
        for episode in memory.episodes()
        if episode.episode_id in wanted
    }
    # Lessons get credit too: show what the lesson is in place of a task.
    tasks |= {
        lesson.lesson_id: f"lesson: {lesson.title}"
        for lesson in memory.lessons.list(None)
        if lesson.lesson_id in wanted
    }
    if args.json:
        listed = [
            {
                "episode_id": row.episode_id,
                "task": tasks.get(row.episode_id),
                **_utility_json(row, now),
            }
            for row in rows
        ]
        print(json.dumps({"namespace": memory.namespace, "harmful": listed}, indent=2))
        return 0
    credited = sum(1 for row in memory.runs.utilities().values() if row.credited_runs)
    print(
        f"{len(rows)} of {credited} credited episodes in namespace {memory.namespace!r} have "
        f"utility <= {args.max_utility:g} after >= {args.min_runs} credited runs"
    )
    if not rows:
        return 0
    table = [
        [
            _one_line(row.episode_id, 32),
            f"{row.estimate(now):.3f}",
            str(row.injections),
            str(row.credited_runs),
            f"{row.mean_reward or 0.0:.3f}",
            f"{row.mean_advantage or 0.0:+.3f}",
            str(row.failing_streak),
            _one_line(tasks.get(row.episode_id, "(not stored)"), 60),
        ]
        for row in rows
    ]
    headers = ["episode", "utility", "shown", "credited", "mean reward", "advantage", "streak"]
    print(format_table([*headers, "task"], table, right=[1, 2, 3, 4, 5, 6]))
    print()
    print(
        "advantage: mean reward of the runs shown it minus runs of the same category without "
        "it; streak: latest credited runs in a row below that baseline. Nothing is "
        "quarantined: to hide one from recall, memory.quarantine.add(episode_id, reason)."
    )
    return 0


def _configure_skills(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threshold",
        type=_finite_float,
        default=WEAK_THRESHOLD,
        help=f"success rate below which a skill is weak, in [0, 1] (default: {WEAK_THRESHOLD})",
    )
    parser.add_argument(
        "--min-episodes",
        type=_int_at_least(1),
        default=MIN_WEAK_EPISODES,
        help=f"episodes a skill needs before it can be weak (default: {MIN_WEAK_EPISODES})",
    )


def _run_skills(args: argparse.Namespace) -> int:
    """Print the skill profile per category, flagging the weak ones (``is_weak``)."""
    memory = _open_memory(args, create=False)
    profiles = memory.skill_profiles()
    weak = identify_weak_skills(profiles, float(args.threshold), int(args.min_episodes))
    weak_categories = {profile.category for profile in weak}
    if not profiles:
        print(f"no episodes in namespace {memory.namespace!r}")
        return 0
    rows = [
        [
            profile.category.value,
            str(profile.total_episodes),
            str(profile.successes),
            f"{100 * profile.success_rate:.1f}%",
            f"{profile.avg_reward:.3f}",
            f"{profile.avg_iterations:.2f}",
            "WEAK" if profile.category in weak_categories else "",
        ]
        for profile in profiles
    ]
    headers = ["category", "episodes", "successes", "success rate", "avg reward", "avg iter"]
    print(format_table([*headers, "flag"], rows, right=[1, 2, 3, 4, 5]))
    print()
    threshold = f"{100 * float(args.threshold):g}%"
    rule = f"success rate below {threshold} over at least {args.min_episodes} episode(s)"
    if weak:
        names = ", ".join(profile.category.value for profile in weak)
        print(f"{len(weak)} weak skill(s), {rule}: {names}")
    else:
        print(f"no weak skills ({rule}: none)")
    return 0


def _configure_curve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--window", type=_int_at_least(1), default=5, help="rolling window in episodes (default: 5)"
    )
    parser.add_argument(
        "--rows",
        type=_int_at_least(0),
        default=20,
        help="table rows at most; longer histories are sampled evenly (0: every episode)",
    )
    parser.add_argument(
        "--plot",
        metavar="FILE",
        default=None,
        help=f"also save a plot, e.g. curve.png ({PLOT_HINT})",
    )


def _sample(count: int, rows: int) -> list[int]:
    """Up to ``rows`` evenly spread indices into ``count`` items, first and last included."""
    if rows == 0 or count <= rows:
        return list(range(count))
    if rows == 1:
        return [count - 1]
    return sorted({round(i * (count - 1) / (rows - 1)) for i in range(rows)})


def _run_curve(args: argparse.Namespace) -> int:
    """Print the learning curve (sampled when long) and optionally save a plot."""
    if args.plot is not None:
        _require_matplotlib()
    memory = _open_memory(args, create=False)
    window = int(args.window)
    curve = compute_learning_curve(memory.episodes(), window=window)
    if not curve:
        if args.plot is not None:
            msg = f"namespace {memory.namespace!r} has no episodes to plot"
            raise CliError(msg)
        print(f"no episodes in namespace {memory.namespace!r}")
        return 0
    if args.plot is not None:  # first, so a failed save prints nothing but the error
        _plot_curve(curve, str(args.plot), memory.namespace, window)
    shown = _sample(len(curve), int(args.rows))
    rows = [
        [
            str(curve[i].episode_number),
            f"{100 * curve[i].rolling_success_rate:.1f}%",
            f"{curve[i].rolling_avg_reward:.3f}",
            f"{curve[i].cumulative_reward:.3f}",
        ]
        for i in shown
    ]
    headers = ["episode", "success (rolling)", "avg reward (rolling)", "cumulative reward"]
    print(f"learning curve of namespace {memory.namespace!r}, rolling window {window}")
    print(format_table(headers, rows, right=[0, 1, 2, 3]))
    if len(shown) < len(curve):
        print(f"(showing {len(shown)} of {len(curve)} episodes, evenly spaced; --rows 0: all)")
    first = curve[min(window, len(curve)) - 1]
    last = curve[-1]
    # Points before the first full window average fewer episodes: not a fair "best".
    best = max(curve[min(window, len(curve)) - 1 :], key=lambda p: p.rolling_success_rate)
    print()
    print(
        f"success (rolling)     {100 * first.rolling_success_rate:.1f}% after the first "
        f"window -> {100 * last.rolling_success_rate:.1f}% now "
        f"(best {100 * best.rolling_success_rate:.1f}% at episode {best.episode_number})"
    )
    print(f"avg reward (rolling)  {first.rolling_avg_reward:.3f} -> {last.rolling_avg_reward:.3f}")
    print(f"cumulative reward     {last.cumulative_reward:.3f} over {len(curve)} episodes")
    if args.plot is not None:
        print(f"plot saved to {args.plot}")
    return 0


def _plot_curve(
    curve: Sequence[LearningSnapshot], destination: str, namespace: str, window: int
) -> None:
    """Save the learning curve as an image (Agg canvas: no display, no global pyplot state)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
    from matplotlib.figure import Figure  # noqa: PLC0415

    numbers = [point.episode_number for point in curve]
    figure = Figure(figsize=(8.0, 6.0), layout="constrained")
    FigureCanvasAgg(figure)
    rates, totals = figure.subplots(2, 1, sharex=True)
    rates.plot(numbers, [p.rolling_success_rate for p in curve], label="success rate (rolling)")
    rates.plot(numbers, [p.rolling_avg_reward for p in curve], label="avg reward (rolling)")
    rates.set_ylim(-0.02, 1.02)
    rates.set_ylabel(f"rolling, window {window}")
    rates.legend(loc="lower right")
    rates.grid(alpha=0.3)
    totals.plot(numbers, [p.cumulative_reward for p in curve], color="tab:green")
    totals.set_ylabel("cumulative reward")
    totals.set_xlabel("episode")
    totals.grid(alpha=0.3)
    figure.suptitle(f"Learning curve: namespace {namespace!r}, {len(curve)} episodes")
    try:
        figure.savefig(destination, dpi=100)
    except (OSError, ValueError) as exc:
        msg = f"cannot save the plot to {destination!r}: {exc}"
        raise CliError(msg) from exc
