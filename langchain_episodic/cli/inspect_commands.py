"""Commands that look inside a memory: stats, recall, harmful, skills, curve, verify."""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from langchain_episodic.cli._shared import (
    DEFAULT_HALF_LIFE,
    DEFAULT_RANKING,
    PLOT_HINT,
    RELEVANCE_HALF_LIFE,
    CliError,
    _finite_float,
    _format_time,
    _int_at_least,
    _one_line,
    _open_memory,
    _open_store,
    _percent,
    _progress,
    _require_matplotlib,
    _require_namespace,
    _Target,
    _target,
    format_duration,
    format_table,
    parse_duration,
    parse_time,
)
from langchain_episodic.model.episode import OutcomeStatus, TaskCategory
from langchain_episodic.scoring.credit import UTILITY_POWER, EpisodeUtility
from langchain_episodic.scoring.skills import (
    MIN_WEAK_EPISODES,
    WEAK_THRESHOLD,
    LearningSnapshot,
    compute_learning_curve,
    identify_weak_skills,
)

# numpy, Chroma and the memory load when a command runs, not for --help (see cli/app.py).
if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory
    from langchain_episodic.scoring.options import RecallOptions
    from langchain_episodic.scoring.priority import PrioritizedResult, ReplayWeights
    from langchain_episodic.scoring.ranking import RecallReport, Rejected

# --------------------------------------------------------------------------- stats


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
    window = memory.short_term
    rows = [
        ("store", target.describe()),
        ("namespace", memory.namespace),
        ("namespaces", ", ".join(memory.namespaces())),
        ("episodes", str(total)),
        (
            "time span",
            f"{_format_time(first)} .. {_format_time(last)} ({format_duration(last - first)})"
            if counted
            else "-",
        ),
        (
            "outcomes",
            ", ".join(
                f"{status.value} {outcomes[status]} ({_percent(outcomes[status], counted)})"
                for status in OutcomeStatus
            ),
        ),
        ("avg reward", f"{reward_sum / counted:.3f}" if counted else "-"),
        (
            "short-term",
            f"{', '.join(e.episode_id for e in window)} (last {len(window)}, oldest first)"
            if window
            else "-",
        ),
        ("runs", _runs_line(memory)),
    ]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}")
    return 0


def _runs_line(memory: EpisodicMemory) -> str:
    """The credit loop in one line: credited and holdout runs, open ones, probation, pins."""
    outcomes = memory.runs.log()
    credited = [event for event in outcomes if event.reward is not None]
    holdout = sum(event.holdout for event in credited)
    return (
        f"{len(credited)} credited ({holdout} holdout: shown no memory), "
        f"{len(memory.runs.pending())} open; {len(memory.runs.demoted())} on probation, "
        f"{len(memory.quarantine.pinned())} pinned"
    )


# --------------------------------------------------------------------------- recall


def _configure_recall(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("query", help="the new task, in words")
    parser.add_argument(
        "-k", "--top-k", dest="top_k", type=_int_at_least(1), default=3, help="episodes to show"
    )
    parser.add_argument(
        "--fetch-k",
        type=_int_at_least(1),
        default=None,
        help="candidates fetched by similarity before ranking (default: 2 * k)",
    )
    parser.add_argument(
        "--ranking",
        choices=("relevance", "article"),
        default=DEFAULT_RANKING,
        help="relevance: only relevant candidates, ordered by similarity scaled by value; "
        f"article: the article's additive priority (default: {DEFAULT_RANKING})",
    )
    parser.add_argument(
        "--half-life",
        type=parse_duration,
        default=None,
        metavar="S",
        help="recency half-life: seconds or e.g. 12h, 3d (default: the ranking's own, "
        f"{format_duration(RELEVANCE_HALF_LIFE)} for relevance, "
        f"{format_duration(DEFAULT_HALF_LIFE)} for article)",
    )
    parser.add_argument(
        "--phase",
        choices=("early", "normal", "late"),
        default="normal",
        help="priority weights preset (default: normal)",
    )
    parser.add_argument(
        "--now",
        type=parse_time,
        default=None,
        metavar="TS",
        help="'now' for recency: Unix seconds or ISO 8601 (default: the current time)",
    )
    parser.add_argument(
        "--category",
        action="append",
        choices=[c.value for c in TaskCategory],
        help="only episodes of this category (repeatable)",
    )
    parser.add_argument(
        "--outcome",
        action="append",
        choices=[o.value for o in OutcomeStatus],
        help="only episodes with this outcome (repeatable)",
    )
    parser.add_argument(
        "--min-similarity",
        type=_finite_float,
        default=None,
        help="similarity floor in [-1, 1] (default: the embedder's relevance floor for "
        "relevance, none for article)",
    )
    parser.add_argument(
        "--no-utility",
        dest="use_utility",
        action="store_false",
        help="rank without credit (how much recalling each episode has helped runs)",
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


@dataclass(frozen=True)
class _Recall:
    """One recall of the ``recall`` command: what was asked, what came back, and why."""

    args: argparse.Namespace
    memory: EpisodicMemory
    options: RecallOptions
    report: RecallReport
    now: float
    weights: ReplayWeights

    @property
    def half_life(self) -> float:
        return self.options.recency_half_life

    @property
    def floor(self) -> float:
        return self.options.relevance_floor(self.memory.calibration.floor)

    def article_cells(self, result: PrioritizedResult) -> tuple[float, ...]:
        """The article's four signals, their weighted parts and the priority of a result."""
        from langchain_episodic.scoring.priority import explain_priority  # noqa: PLC0415

        why = explain_priority(result, self.now, self.weights, self.half_life)
        return (
            *(why.similarity, why.recency, why.reward, why.outcome),
            *(why.similarity_part, why.recency_part, why.reward_part, why.outcome_part),
            why.priority,
        )

    def relevance_cells(self, result: PrioritizedResult) -> tuple[float, ...]:
        """Similarity, recency, reward, outcome, value, utility and priority of a result."""
        from langchain_episodic.scoring.priority import outcome_score  # noqa: PLC0415

        episode = result.episode
        recency, value = self.value_signals(result)
        return (
            *(result.similarity, recency, episode.feedback.reward),
            *(
                outcome_score(episode.outcome),
                value,
                self.utility_estimate(result),
                result.priority,
            ),
        )

    def utility_estimate(self, result: PrioritizedResult) -> float:
        """The utility the recall ranked a result with (0.5, the prior, when never credited).

        Near-duplicates share their evidence, so it may differ from the episode's own.
        """
        episode_id = result.episode.episode_id
        ranked = self.report.estimates.get(episode_id)
        return self.memory.runs.utility(episode_id).estimate(self.now) if ranked is None else ranked

    def value_signals(self, result: PrioritizedResult) -> tuple[float, float]:
        """The relevance ranking's recency signal and value of a result."""
        from langchain_episodic.scoring.priority import temporal_decay  # noqa: PLC0415
        from langchain_episodic.scoring.relevance import RECENCY_FLOOR, episode_value  # noqa: PLC0415

        episode = result.episode
        decay = temporal_decay(1.0, episode.timestamp, self.now, self.half_life)
        value = episode_value(
            episode.timestamp,
            episode.feedback.reward,
            episode.outcome,
            self.now,
            self.weights,
            self.half_life,
        )
        return RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * decay, value


def _run_recall(args: argparse.Namespace) -> int:
    """Recall for a query and print why each episode ranked (and why others did not)."""
    from langchain_episodic.scoring.options import RecallOptions  # noqa: PLC0415
    from langchain_episodic.scoring.priority import ReplayWeights  # noqa: PLC0415

    memory = _open_memory(args, create=False)
    now = time.time() if args.now is None else float(args.now)
    weights = ReplayWeights.for_phase(args.phase)
    options = RecallOptions(
        top_k=args.top_k,
        fetch_k=args.fetch_k,
        weights=weights,
        half_life=None if args.half_life is None else float(args.half_life),
        min_similarity=args.min_similarity,
        current_time=now,
        category=args.category,
        outcome=args.outcome,
        ranking=args.ranking,
        use_utility=args.use_utility,
    )
    recall = _Recall(
        args,
        memory,
        options,
        memory.recall(args.query, options=options, explain=True),
        now,
        weights,
    )
    if args.json:
        _print_recall_json(recall)
    elif options.ranking == "article":
        _print_article_recall(recall)
    else:
        _print_relevance_recall(recall)
    return 0


def _recall_table(
    results: Sequence[PrioritizedResult],
    headers: Sequence[str],
    cells: Callable[[PrioritizedResult], Sequence[float]],
) -> str:
    """Rank, episode, status, the four signals, ``headers`` (the ``cells``), task."""
    signals = ("similarity", "recency", "reward", "outcome")
    rows = [
        [
            str(rank),
            _one_line(result.episode.episode_id, 32),
            result.episode.outcome.value,
            *(f"{number:.4f}" for number in cells(result)),
            _one_line(result.episode.task.description, 60),
        ]
        for rank, result in enumerate(results, start=1)
    ]
    numbers = range(3, 3 + len(signals) + len(headers))
    return format_table(
        ["#", "episode", "status", *signals, *headers, "task"], rows, right=[0, *numbers]
    )


def _half_life_text(half_life: float) -> str:
    """E.g. ``30d (2592000 s)``."""
    seconds = f"{half_life:.0f}" if half_life >= 1e6 else f"{half_life:g}"
    return f"{format_duration(half_life)} ({seconds} s)"


def _print_article_recall(recall: _Recall) -> None:
    """The article's ranking: each signal, its weighted share and the priority."""
    args, weights, half_life = recall.args, recall.weights, recall.half_life
    results = recall.report.results
    print(f"query      {args.query!r} (namespace {recall.memory.namespace!r})")
    print(
        f"ranking    article: top {args.top_k} of {recall.report.candidates} candidates "
        "fetched by similarity"
    )
    print(f"recency    now {_format_time(recall.now)}, half-life {_half_life_text(half_life)}")
    print(
        f"priority   {weights.similarity:g}*max(0, similarity) + {weights.recency:g}*recency"
        f" + {weights.reward:g}*reward + {weights.outcome_bonus:g}*outcome  (phase {args.phase})"
    )
    print("outcome    success 1, partial 0.5, failure 0")
    print()
    if not results:
        print("no episodes recalled (no episode matches the filters and --min-similarity)")
        return
    parts = ("w*sim", "w*rec", "w*rew", "w*out", "priority")
    print(_recall_table(results, parts, recall.article_cells))
    print()
    print("signals: similarity, recency, reward, outcome; w*X: weight times signal (its share)")
    _print_provenance(results)
    below = [str(rank) for rank, result in enumerate(results, start=1) if not result.relevant]
    if below and recall.report.threshold is not None:
        print(
            f"not relevant (similarity below {recall.report.threshold:.4f}, the relevance "
            f"ranking's threshold), returned by the article's ranking anyway: #{', #'.join(below)}"
        )


def _print_provenance(results: Sequence[PrioritizedResult]) -> None:
    """Where each recalled episode was recorded (agent, run, thread and turn, namespace)."""
    sourced = [(rank, r.episode) for rank, r in enumerate(results, start=1) if r.episode.source]
    if not sourced:
        return
    print("recorded by:")
    for rank, episode in sourced:
        assert episode.source is not None
        print(f"  #{rank} {episode.episode_id}: {_one_line(episode.source.describe(), 200)}")


def _print_relevance_recall(recall: _Recall) -> None:
    """The relevance ranking: the rule, each episode's value, why it made it, the nearest miss."""
    from langchain_episodic.scoring.ranking import why_recalled  # noqa: PLC0415
    from langchain_episodic.scoring.relevance import (  # noqa: PLC0415
        BACKGROUND_TOP,
        RECENCY_FLOOR,
        VALUE_SHARE,
    )

    args, weights, half_life, report = recall.args, recall.weights, recall.half_life, recall.report
    mix = weights.recency + weights.reward + weights.outcome_bonus
    print(f"query      {args.query!r} (namespace {recall.memory.namespace!r})")
    print(
        f"ranking    relevance: the relevant ones of {recall.report.candidates} candidates "
        f"fetched by similarity, at most {args.top_k}"
    )
    bars = [f"floor {recall.floor:.4f}"]
    if report.background is not None:
        bars.append(f"background {report.background:.4f}")
    if recall.options.margin is not None:
        bars.append(f"best similarity - margin {recall.options.margin:.4f}")
    print(
        f"relevant   similarity >= threshold = max({', '.join(bars)})"
        + ("" if report.threshold is None else f" = {report.threshold:.4f}")
    )
    if report.background is not None:
        print(
            f"background the task's mean similarity to its {BACKGROUND_TOP} nearest everyday texts "
            "(the memory's "
            f"background), {recall.memory.calibration.offset:+g} for this embedder"
        )
    print(
        f"recency    now {_format_time(recall.now)}, half-life {_half_life_text(half_life)},"
        f" never below {RECENCY_FLOOR:g}"
    )
    print(
        f"value      ({weights.recency:g}*recency + {weights.reward:g}*reward"
        f" + {weights.outcome_bonus:g}*outcome) / {mix:g}  (phase {args.phase})"
        if mix
        else f"value      1 (recency, reward and outcome weigh nothing; phase {args.phase})"
    )
    by_utility = f" * (2*utility)^{UTILITY_POWER:g}" if recall.options.use_utility else ""
    print(
        f"priority   similarity * ({1 - VALUE_SHARE:g} + {VALUE_SHARE:g}*value){by_utility}"
        "; outcome: success 1, partial 0.5, failure 0"
    )
    print(
        "utility    how much runs shown the episode (or a near-duplicate) beat runs without it "
        "(credit); 0.5 = never credited"
        + ("" if recall.options.use_utility else " (not used: --no-utility)")
    )
    print()
    if report.results:
        headers = ("value", "utility", "priority")
        print(_recall_table(report.results, headers, recall.relevance_cells))
        print()
        print("why each made it:")
        for rank, result in enumerate(report.results, start=1):
            print(f"  #{rank} {result.episode.episode_id}: {why_recalled(result, report)}")
        _print_provenance(report.results)
    elif report.threshold is None:
        print("nothing relevant: no episode matches the filters, so there were no candidates")
    else:
        count = len(report.rejected)
        print(
            "nothing relevant: "
            + ("the only candidate" if count == 1 else f"none of the {count} candidates")
            + f" reached the threshold {report.threshold:.4f}"
        )
    nearest = report.nearest_rejected
    if nearest is None:
        if report.results:
            print("nearest rejected: none, every candidate fetched was relevant")
        return
    print(f"why the nearest rejected one did not ({len(report.rejected)} rejected):")
    print(f"  {nearest.episode_id}: {nearest.reason}  ({_one_line(nearest.task, 60)})")


def _rejected_json(rejected: Rejected) -> dict[str, object]:
    return {
        "episode_id": rejected.episode_id,
        "task": rejected.task,
        "similarity": rejected.similarity,
        "reason": rejected.reason,
    }


def _result_json(recall: _Recall, rank: int, result: PrioritizedResult) -> dict[str, object]:
    """One result's facts; the signals and weighted parts of the ranking that ordered it."""
    from langchain_episodic.scoring.priority import explain_priority, outcome_score  # noqa: PLC0415
    from langchain_episodic.scoring.ranking import why_recalled  # noqa: PLC0415

    row: dict[str, object] = {"rank": rank, "episode_id": result.episode.episode_id}
    if recall.options.ranking == "article":
        why = explain_priority(result, recall.now, recall.weights, recall.half_life)
        row |= {
            "similarity": why.similarity,
            "recency": why.recency,
            "reward": why.reward,
            "outcome_score": why.outcome,
            "contributions": {
                "similarity": why.similarity_part,
                "recency": why.recency_part,
                "reward": why.reward_part,
                "outcome": why.outcome_part,
            },
            "priority": why.priority,
        }
    else:
        recency, value = recall.value_signals(result)
        row |= {
            "similarity": result.similarity,
            "recency": recency,
            "reward": result.episode.feedback.reward,
            "outcome_score": outcome_score(result.episode.outcome),
            "value": value,
            "utility": _utility_json(
                recall.memory.runs.utility(result.episode.episode_id), recall.now
            ),
            "priority": result.priority,
        }
    row |= {
        "relevant": result.relevant,
        "why": why_recalled(result, recall.report),
        "episode": result.episode.to_dict(),
    }
    return row


def _utility_json(row: EpisodeUtility, now: float) -> dict[str, object]:
    return {
        "estimate": row.estimate(now),
        "injections": row.injections,
        "credited_runs": row.credited_runs,
        "mean_reward": row.mean_reward,
        "mean_advantage": row.mean_advantage,
    }


def _print_recall_json(recall: _Recall) -> None:
    weights, report = recall.weights, recall.report
    nearest = report.nearest_rejected
    payload = {
        "query": recall.args.query,
        "namespace": recall.memory.namespace,
        "ranking": report.ranking,
        "current_time": recall.now,
        "half_life": recall.half_life,
        "phase": recall.args.phase,
        "weights": {
            "similarity": weights.similarity,
            "recency": weights.recency,
            "reward": weights.reward,
            "outcome_bonus": weights.outcome_bonus,
        },
        "top_k": recall.options.top_k,
        "fetch_k": recall.report.candidates,
        "floor": recall.floor,
        "margin": recall.options.margin,
        "background": report.background,
        "threshold": report.threshold,
        "use_utility": recall.options.use_utility,
        "results": [
            _result_json(recall, rank, result) for rank, result in enumerate(report.results, 1)
        ],
        "nearest_rejected": None if nearest is None else _rejected_json(nearest),
        "rejected": [_rejected_json(rejected) for rejected in report.rejected],
    }
    print(json.dumps(payload, ensure_ascii=False, indent=2))


# --------------------------------------------------------------------------- harmful


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
    parser.add_argument(
        "--now",
        type=parse_time,
        default=None,
        metavar="TS",
        help="the time utility is read at: Unix seconds or ISO 8601 (default: the current time)",
    )
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


# --------------------------------------------------------------------------- skills


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
    headers = [
        "category",
        "episodes",
        "successes",
        "success rate",
        "avg reward",
        "avg iter",
        "flag",
    ]
    print(format_table(headers, rows, right=[1, 2, 3, 4, 5]))
    print()
    threshold = f"{100 * float(args.threshold):g}%"
    rule = f"success rate below {threshold} over at least {args.min_episodes} episode(s)"
    if weak:
        names = ", ".join(profile.category.value for profile in weak)
        print(f"{len(weak)} weak skill(s), {rule}: {names}")
    else:
        print(f"no weak skills ({rule}: none)")
    return 0


# --------------------------------------------------------------------------- curve


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


# --------------------------------------------------------------------------- verify


def _configure_verify(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--page-size",
        type=_int_at_least(1),
        default=1000,
        help="records read per Chroma call (default: 1000)",
    )
    parser.add_argument("--json", action="store_true", help="print the findings as JSON")


def _reported_damage(target: _Target, *, as_json: bool) -> bool:
    """Diagnose an on-disk folder before Chroma opens it; print and say if it is damaged.

    A damaged folder can make Chroma raise internal errors or crash the process that
    reads it: the diagnosis runs Chroma in a child process.
    """
    from langchain_episodic.stores.chroma_health import RECOVERY, diagnose_folder  # noqa: PLC0415

    if target.path is None or not os.path.isdir(target.path):
        return False
    damage = diagnose_folder(target.path, lock_timeout=target.lock_timeout)
    if not damage:
        return False
    full = all(line.startswith("no space left on device") for line in damage)
    recovery = "what to do: free space on its device, then verify again" if full else RECOVERY
    if as_json:
        print(json.dumps({"damaged": damage, "recovery": recovery}, indent=2))
    else:
        print(f"the folder at {target.path!r} {'cannot be read' if full else 'is damaged'}:")
        for line in damage:
            print(f"  {line}")
        print(recovery)
    return True


def _run_verify(args: argparse.Namespace) -> int:
    """Scan every record of the namespace; list those recall would skip or misorder."""
    from langchain_episodic.service.erasure import erased_but_stored, unfinished_erasures  # noqa: PLC0415
    from langchain_episodic.service.journal import replayed_checkpoint  # noqa: PLC0415
    from langchain_episodic.stores.base import OrderedJournal  # noqa: PLC0415

    target = _target(args)
    if _reported_damage(target, as_json=args.json):
        return 1
    store = _open_store(target, create=False)
    _require_namespace(store, target)
    findings = store.verify(target.namespace, page_size=int(args.page_size))
    reasons: dict[str, list[str]] = {}
    for finding in findings:
        reasons.setdefault(finding.record_id, []).append(finding.reason)
    total = store.count(target.namespace)
    problems = replayed_checkpoint(store, target.namespace)
    unfinished = unfinished_erasures(store, target.namespace)
    still_stored = erased_but_stored(store, target.namespace)
    checkpoint_agrees = (
        not problems
        and isinstance(store, OrderedJournal)
        and bool(store.read_checkpoint(target.namespace))
    )
    if args.json:
        print(
            json.dumps(
                {
                    "namespace": target.namespace,
                    "records": total,
                    "malformed": reasons,
                    "checkpoint_problems": problems,
                    "unfinished_erasures": unfinished,
                    "erased_but_stored": still_stored,
                },
                indent=2,
                ensure_ascii=False,
            )
        )
    else:
        print(
            f"verified {total} records of namespace {target.namespace!r} at "
            f"{target.describe()}: " + (f"{len(reasons)} malformed" if reasons else "all readable")
        )
        for record_id, why in reasons.items():
            print(f"id={record_id!r}: {_one_line('; '.join(why), 10_000)}")
        for problem in problems:
            print(problem)
        if checkpoint_agrees:
            print("the journal checkpoint agrees with a replay of the journal it covers")
        for erasure_id in unfinished:
            print(
                f"erasure {erasure_id} was begun and never finished (a process was stopped): "
                "run 'langchain-episodic forget' again with the same ids (or --all)"
            )
        if still_stored:
            print(
                f"{len(still_stored)} erased episode(s) are still stored (half-finished "
                f"erasure), e.g. {still_stored[:3]}: run 'langchain-episodic forget' on them"
            )
    return 1 if reasons or problems or unfinished or still_stored else 0
