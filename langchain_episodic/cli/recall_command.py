"""The recall command: rank past episodes for a task and show why each ranked."""

from __future__ import annotations

import argparse
import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING

from langchain_episodic.cli._shared import (
    DEFAULT_HALF_LIFE,
    DEFAULT_RANKING,
    RELEVANCE_HALF_LIFE,
    _add_now,
    _finite_float,
    _format_time,
    _int_at_least,
    _one_line,
    _open_memory,
    _utility_json,
    format_duration,
    format_table,
    parse_duration,
)
from langchain_episodic.model.episode import OutcomeStatus, TaskCategory
from langchain_episodic.scoring.credit import UTILITY_POWER

# numpy, Chroma and the memory load when a command runs, not for --help (see cli/app.py).
if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory
    from langchain_episodic.scoring.options import RecallOptions
    from langchain_episodic.scoring.priority import PrioritizedResult, ReplayWeights
    from langchain_episodic.scoring.ranking import RecallReport


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
    _add_now(parser, "'now' for recency")
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
        from langchain_episodic.scoring.priority import outcome_score, temporal_decay  # noqa: PLC0415
        from langchain_episodic.scoring.relevance import RECENCY_FLOOR, episode_value  # noqa: PLC0415

        episode = result.episode
        reward = episode.feedback.reward
        decay = temporal_decay(1.0, episode.timestamp, self.now, self.half_life)
        value = episode_value(
            episode.timestamp, reward, episode.outcome, self.now, self.weights, self.half_life
        )
        # The utility the recall ranked with (0.5, the prior, when never credited):
        # near-duplicates share their evidence, so it may differ from the episode's own.
        utility = self.report.estimates.get(episode.episode_id)
        if utility is None:
            utility = self.memory.runs.utility(episode.episode_id).estimate(self.now)
        return (
            *(result.similarity, RECENCY_FLOOR + (1.0 - RECENCY_FLOOR) * decay, reward),
            *(outcome_score(episode.outcome), value, utility),
            result.priority,
        )


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
    report = memory.recall(args.query, options=options, explain=True)
    recall = _Recall(args, memory, options, report, now, weights)
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


def _result_json(recall: _Recall, rank: int, result: PrioritizedResult) -> dict[str, object]:
    """One result's facts; the signals and weighted parts of the ranking that ordered it."""
    from langchain_episodic.scoring.ranking import why_recalled  # noqa: PLC0415

    episode_id = result.episode.episode_id
    article = recall.options.ranking == "article"
    cells = recall.article_cells(result) if article else recall.relevance_cells(result)
    row: dict[str, object] = {"rank": rank, "episode_id": episode_id}
    row |= dict(zip(("similarity", "recency", "reward", "outcome_score"), cells[:4], strict=True))
    if article:
        parts = ("similarity", "recency", "reward", "outcome")
        row["contributions"] = dict(zip(parts, cells[4:8], strict=True))
    else:
        row["value"] = cells[4]
        row["utility"] = _utility_json(recall.memory.runs.utility(episode_id), recall.now)
    return row | {
        "priority": cells[-1],
        "relevant": result.relevant,
        "why": why_recalled(result, recall.report),
        "episode": result.episode.to_dict(),
    }


def _print_recall_json(recall: _Recall) -> None:
    report = recall.report
    nearest = report.nearest_rejected
    payload = {
        "query": recall.args.query,
        "namespace": recall.memory.namespace,
        "ranking": report.ranking,
        "current_time": recall.now,
        "half_life": recall.half_life,
        "phase": recall.args.phase,
        "weights": asdict(recall.weights),
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
        "nearest_rejected": None if nearest is None else asdict(nearest),
        "rejected": [asdict(rejected) for rejected in report.rejected],
    }
    print(json.dumps(payload, ensure_ascii=False, indent=2))
