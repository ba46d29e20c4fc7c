"""The ``langchain-episodic`` command: inspect, query and move an episodic memory.

A thin shell over the public API. Every number it prints comes from the package's own
functions (``EpisodicMemory.recall``, ``temporal_decay``, ``compute_learning_curve``,
...), so the command line and the library never disagree.

Usage::

    langchain-episodic [--path PATH | --host HOST [--port PORT]]
                       [--collection NAME] [--namespace NS] COMMAND ...

    langchain-episodic stats
    langchain-episodic recall "Fix the login session bug" -k 3 --phase late
    langchain-episodic skills --threshold 0.6
    langchain-episodic curve --window 10 --plot curve.png
    langchain-episodic export episodes.jsonl
    langchain-episodic --path ./other-memory import episodes.jsonl

The store options may also follow the command (``langchain-episodic stats --path P``).
The memory lives in an embedded on-disk Chroma at ``--path`` (default: the
``LANGCHAIN_EPISODIC_PATH`` environment variable, else ``./episodic-memory``), or on a
Chroma server given by ``--host`` / ``--port``.

Exit codes:
    0: Success.
    1: ``import`` rejected some lines; every good line was still imported.
    2: A usage error (bad arguments, missing file, invalid value, unknown namespace,
       unreachable server): one ``error: ...`` line on stderr, no traceback.
    130: Interrupted (Ctrl-C); batches already imported stay imported.
    141: Standard output was closed early (``export - | head``), as for SIGPIPE.

Adding a command takes a ``configure`` function (its arguments), a ``run`` function
(``argparse.Namespace -> exit code``) and one :class:`Command` entry in ``COMMANDS``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import IO, Any, NoReturn, TextIO

import chromadb
import chromadb.errors
from tqdm import tqdm

from langchain_episodic import __version__
from langchain_episodic.diagnostics import LearningSnapshot, compute_learning_curve
from langchain_episodic.episode import Episode, OutcomeStatus, TaskCategory
from langchain_episodic.errors import (
    EpisodeConflictError,
    EpisodicValueError,
    StoreConfigurationError,
)
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.scoring import (
    DEFAULT_HALF_LIFE,
    PrioritizedResult,
    PriorityBreakdown,
    ReplayWeights,
    explain_priority,
)
from langchain_episodic.skills import identify_weak_skills
from langchain_episodic.store import DEFAULT_NAMESPACE, ChromaEpisodeStore

__all__ = [
    "COMMANDS",
    "CliError",
    "Command",
    "build_parser",
    "format_duration",
    "format_table",
    "main",
    "parse_duration",
    "parse_time",
]

PATH_ENV = "LANGCHAIN_EPISODIC_PATH"
"""Environment variable naming the default on-disk memory."""

DEFAULT_PATH = "./episodic-memory"
DEFAULT_COLLECTION = "episodes"
DEFAULT_PORT = 8000
PLOT_HINT = 'pip install "langchain-episodic[plot]"'

# Present in every embedded Chroma folder (chromadb >= 0.4); read commands refuse a
# folder without it rather than silently creating an empty database there.
_CHROMA_DB_FILE = "chroma.sqlite3"
_UTF8_BOM = b"\xef\xbb\xbf"
_WHITESPACE = re.compile(r"\s+")
_DURATION_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86_400.0, "w": 604_800.0}


class CliError(Exception):
    """A user mistake: reported as one ``error: ...`` line on stderr, exit code 2."""


# --------------------------------------------------------------------------- parsing


def parse_duration(text: str) -> float:
    """Seconds in ``text``: a number of seconds, or a number with a unit s, m, h, d, w.

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a positive, finite duration.

    Example:
        >>> parse_duration("86400"), parse_duration("12h"), parse_duration("1.5d")
        (86400.0, 43200.0, 129600.0)
    """
    cleaned = text.strip().lower()
    unit = _DURATION_UNITS.get(cleaned[-1:])
    number = cleaned[:-1] if unit is not None else cleaned
    try:
        seconds = float(number) * (unit or 1.0)
    except ValueError:
        msg = f"{text!r} is not a duration: give seconds, or a number with s, m, h, d or w"
        raise argparse.ArgumentTypeError(msg) from None
    if not math.isfinite(seconds) or seconds <= 0:
        msg = f"{text!r} is not a duration: must be positive and finite"
        raise argparse.ArgumentTypeError(msg)
    return seconds


def parse_time(text: str) -> float:
    """A point in time as Unix seconds: a number, or an ISO 8601 date-time (UTC if naive).

    Raises:
        argparse.ArgumentTypeError: ``text`` is neither.

    Example:
        >>> parse_time("86400"), parse_time("1970-01-02T00:00:00Z")
        (86400.0, 86400.0)
    """
    try:
        seconds = float(text)
    except ValueError:
        iso = text.strip()
        if iso[-1:] in ("Z", "z"):
            iso = iso[:-1] + "+00:00"
        try:
            moment = datetime.fromisoformat(iso)
        except ValueError:
            msg = f"{text!r} is not a time: give Unix seconds or an ISO 8601 date-time"
            raise argparse.ArgumentTypeError(msg) from None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=timezone.utc)
        seconds = moment.timestamp()
    if not math.isfinite(seconds):
        msg = f"{text!r} is not a time: must be finite"
        raise argparse.ArgumentTypeError(msg)
    return seconds


def _int_at_least(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            value = minimum - 1
        if value < minimum:
            msg = f"{text!r} is invalid: must be an integer >= {minimum}"
            raise argparse.ArgumentTypeError(msg)
        return value

    return parse


def _port(text: str) -> int:
    port = _int_at_least(1)(text)
    if port > 65_535:
        msg = f"{text!r} is invalid: a port is at most 65535"
        raise argparse.ArgumentTypeError(msg)
    return port


def _finite_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        msg = f"{text!r} is invalid: must be a finite number"
        raise argparse.ArgumentTypeError(msg)
    return value


# --------------------------------------------------------------------------- formatting


def format_table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, right: Iterable[int] = ()
) -> str:
    """Align ``rows`` under ``headers``; columns in ``right`` are right-aligned.

    Example:
        >>> print(format_table(["name", "n"], [["a", "1"], ["bb", "10"]], right=[1]))
        name   n
        ----  --
        a      1
        bb    10
    """
    table = [list(headers), *(list(row) for row in rows)]
    widths = [max(len(row[i]) for row in table) for i in range(len(headers))]
    right_aligned = set(right)

    def line(cells: Sequence[str]) -> str:
        padded = (
            cell.rjust(width) if i in right_aligned else cell.ljust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        )
        return "  ".join(padded).rstrip()

    separator = "  ".join("-" * width for width in widths)
    return "\n".join([line(table[0]), separator, *(line(row) for row in table[1:])])


def format_duration(seconds: float) -> str:
    """A compact, human reading of a duration.

    Example:
        >>> format_duration(86_400), format_duration(93_780), format_duration(0.5)
        ('1d', '1d 2h 3m', '0.5s')
    """
    if seconds < 60:
        return f"{seconds:g}s"
    if seconds >= 100 * 365.25 * 86_400:
        return f"{seconds / (365.25 * 86_400):.3g} years"
    remaining = round(seconds)
    parts = []
    for unit, size in (("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)):
        count, remaining = divmod(remaining, size)
        if count:
            parts.append(f"{count}{unit}")
    return " ".join(parts[:3])


def _format_time(seconds: float) -> str:
    try:
        moment = datetime.fromtimestamp(seconds, tz=timezone.utc)
    except (OverflowError, OSError, ValueError):
        return f"{seconds:g} s"
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _one_line(text: str, limit: int) -> str:
    flat = _WHITESPACE.sub(" ", text).strip()
    return flat if len(flat) <= limit else flat[: limit - 3] + "..."


def _percent(part: int, whole: int) -> str:
    return f"{100 * part / whole:.1f}%" if whole else "-"


def _progress(total: float | None, description: str, *, quiet: bool, **options: Any) -> Any:
    """A tqdm bar on stderr, shown only on a terminal and never with ``--quiet``."""
    stream = sys.stderr
    shown = not quiet and stream is not None and stream.isatty()
    return tqdm(total=total, desc=description, file=stream, disable=not shown, **options)


# --------------------------------------------------------------------------- the store


@dataclass(frozen=True)
class _Target:
    """Where the memory lives, resolved from the global options."""

    path: str | None
    host: str | None
    port: int
    collection: str
    namespace: str

    def describe(self) -> str:
        where = (
            f"path {self.path!r}" if self.path is not None else f"server {self.host}:{self.port}"
        )
        return f"{where}, collection {self.collection!r}"


def _target(args: argparse.Namespace) -> _Target:
    """Resolve the store options: ``--path`` or ``--host``/``--port``, never both."""
    path: str | None = getattr(args, "path", None)
    host: str | None = getattr(args, "host", None)
    port: int | None = getattr(args, "port", None)
    if path is not None and (host is not None or port is not None):
        msg = "give --path (an on-disk memory) or --host/--port (a Chroma server), not both"
        raise CliError(msg)
    if host is None and port is not None:
        host = "localhost"
    if host is None and path is None:
        path = os.environ.get(PATH_ENV) or DEFAULT_PATH
    return _Target(
        path=path,
        host=host,
        port=DEFAULT_PORT if port is None else port,
        collection=getattr(args, "collection", DEFAULT_COLLECTION),
        namespace=getattr(args, "namespace", DEFAULT_NAMESPACE),
    )


def _open_store(target: _Target, *, create: bool) -> ChromaEpisodeStore:
    """Open the Chroma store; with ``create=False`` a missing on-disk memory is an error."""
    # Offline by default: Chroma reads this when its first client is created.
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    if target.path is not None:
        folder = Path(target.path)
        if folder.exists() and not folder.is_dir():
            msg = f"--path {target.path!r} is not a directory"
            raise CliError(msg)
        if not create and not (folder / _CHROMA_DB_FILE).is_file():
            msg = (
                f"no episodic memory at {target.path!r}: give --path (or set {PATH_ENV}) "
                "to an existing memory, or create one with 'import'"
            )
            raise CliError(msg)
        return ChromaEpisodeStore(path=folder, collection_name=target.collection)
    try:
        client = chromadb.HttpClient(host=target.host, port=target.port)
    except Exception as exc:  # chromadb raises ValueError, httpx errors, ...
        msg = f"cannot reach the Chroma server at {target.host}:{target.port}: {exc}"
        raise CliError(msg) from exc
    return ChromaEpisodeStore(client=client, collection_name=target.collection)


def _open_memory(args: argparse.Namespace, *, create: bool) -> EpisodicMemory:
    """The memory the global options name.

    Args:
        args: Parsed arguments carrying the store options.
        create: Whether the memory and namespace may be created. Read-only commands
            pass ``False`` and get a clear error for a missing memory or namespace
            (never a new, empty one).
    """
    target = _target(args)
    store = _open_store(target, create=create)
    if not create:
        available = store.namespaces()
        if target.namespace not in available:
            msg = (
                f"namespace {target.namespace!r} not found at {target.describe()}; "
                f"namespaces there: {', '.join(map(repr, available)) or 'none'}"
            )
            raise CliError(msg)
    return EpisodicMemory(store=store, namespace=target.namespace)


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
        ("namespaces", ", ".join(memory.store.namespaces())),
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
    ]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {value}")
    return 0


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
        "--half-life",
        type=parse_duration,
        default=DEFAULT_HALF_LIFE,
        metavar="S",
        help="recency half-life: seconds or e.g. 12h, 3d (default: 1d)",
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
        "--min-similarity", type=_finite_float, default=None, help="similarity floor in [-1, 1]"
    )
    parser.add_argument("--json", action="store_true", help="print JSON instead of a table")


def _run_recall(args: argparse.Namespace) -> int:
    """Recall for a query and print each signal, its weighted share and the priority."""
    memory = _open_memory(args, create=False)
    now = time.time() if args.now is None else float(args.now)
    weights = ReplayWeights.for_phase(args.phase)
    half_life = float(args.half_life)
    results = memory.recall(
        args.query,
        top_k=args.top_k,
        current_time=now,
        weights=weights,
        half_life=half_life,
        fetch_k=args.fetch_k,
        min_similarity=args.min_similarity,
        category=args.category,
        outcome=args.outcome,
    )
    fetch_k = int(args.fetch_k or 2 * args.top_k)
    explained = [explain_priority(result, now, weights, half_life) for result in results]
    if args.json:
        _print_recall_json(args, memory, results, explained, now, half_life, weights, fetch_k)
        return 0
    print(f"query      {args.query!r} (namespace {memory.namespace!r})")
    print(f"ranking    top {args.top_k} of {fetch_k} candidates fetched by similarity")
    print(
        f"recency    now {_format_time(now)}, half-life {format_duration(half_life)}"
        f" ({half_life:g} s)"
    )
    print(
        f"priority   {weights.similarity:g}*max(0, similarity) + {weights.recency:g}*recency"
        f" + {weights.reward:g}*reward + {weights.outcome_bonus:g}*outcome  (phase {args.phase})"
    )
    print("outcome    success 1, partial 0.5, failure 0")
    print()
    if not results:
        print("no episodes recalled (the namespace is empty or every candidate was filtered)")
        return 0
    rows = [
        [
            str(rank),
            _one_line(result.episode.episode_id, 32),
            result.episode.outcome.value,
            f"{why.similarity:.4f}",
            f"{why.recency:.4f}",
            f"{why.reward:.4f}",
            f"{why.outcome:.4f}",
            f"{why.similarity_part:.4f}",
            f"{why.recency_part:.4f}",
            f"{why.reward_part:.4f}",
            f"{why.outcome_part:.4f}",
            f"{why.priority:.4f}",
            _one_line(result.episode.task.description, 60),
        ]
        for rank, (result, why) in enumerate(zip(results, explained, strict=True), start=1)
    ]
    headers = [
        "#",
        "episode",
        "status",
        "similarity",
        "recency",
        "reward",
        "outcome",
        "w*sim",
        "w*rec",
        "w*rew",
        "w*out",
        "priority",
        "task",
    ]
    print(format_table(headers, rows, right=[0, *range(3, 12)]))
    print()
    print("signals: similarity, recency, reward, outcome; w*X: weight times signal (its share)")
    return 0


def _print_recall_json(
    args: argparse.Namespace,
    memory: EpisodicMemory,
    results: Sequence[PrioritizedResult],
    explained: Sequence[PriorityBreakdown],
    now: float,
    half_life: float,
    weights: ReplayWeights,
    fetch_k: int,
) -> None:
    payload = {
        "query": args.query,
        "namespace": memory.namespace,
        "current_time": now,
        "half_life": half_life,
        "phase": args.phase,
        "weights": {
            "similarity": weights.similarity,
            "recency": weights.recency,
            "reward": weights.reward,
            "outcome_bonus": weights.outcome_bonus,
        },
        "top_k": args.top_k,
        "fetch_k": fetch_k,
        "results": [
            {
                "rank": rank,
                "episode_id": result.episode.episode_id,
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
                "episode": result.episode.to_dict(),
            }
            for rank, (result, why) in enumerate(zip(results, explained, strict=True), start=1)
        ],
    }
    print(json.dumps(payload, ensure_ascii=False, indent=2))


# --------------------------------------------------------------------------- skills


def _configure_skills(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--threshold",
        type=_finite_float,
        default=0.5,
        help="success rate below which a skill is weak, in [0, 1] (default: 0.5)",
    )


def _run_skills(args: argparse.Namespace) -> int:
    """Print the skill profile per category, flagging the weak ones."""
    memory = _open_memory(args, create=False)
    profiles = memory.skill_profiles()
    weak = identify_weak_skills(profiles, float(args.threshold))
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
    if weak:
        names = ", ".join(profile.category.value for profile in weak)
        print(f"{len(weak)} weak skill(s), success rate below {threshold}: {names}")
    else:
        print(f"no weak skills (every success rate is at least {threshold})")
    return 0


# --------------------------------------------------------------------------- curve


def _configure_curve(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--window", type=_int_at_least(1), default=5, help="rolling window in episodes"
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


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401, PLC0415  (optional extra)
    except ImportError as exc:
        msg = f"curve --plot needs matplotlib: {PLOT_HINT}"
        raise CliError(msg) from exc


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


# --------------------------------------------------------------------------- export


def _configure_export(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", metavar="FILE.jsonl", help="output file, or '-' for stdout")
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")


def _write_episodes(memory: EpisodicMemory, out: TextIO, total: int, *, quiet: bool) -> int:
    """Write one ``Episode.to_dict()`` JSON object per line; return how many."""
    written = 0
    with _progress(total, "exporting", quiet=quiet, unit="ep") as bar:
        for episode in memory.episodes():
            out.write(json.dumps(episode.to_dict(), ensure_ascii=False) + "\n")
            written += 1
            bar.update(1)
    return written


def _run_export(args: argparse.Namespace) -> int:
    """Stream every episode of the namespace as JSON lines to a file or stdout."""
    memory = _open_memory(args, create=False)
    total = len(memory)
    quiet = bool(args.quiet)
    if args.file == "-":
        written = _write_episodes(memory, sys.stdout, total, quiet=quiet)
        sys.stdout.flush()
        report = sys.stderr
    else:
        # Write beside the destination, then rename: a failed export leaves no half file.
        destination = Path(args.file)
        partial = destination.with_name(f".{destination.name}.{os.getpid()}.partial")
        try:
            with partial.open("w", encoding="utf-8", newline="\n") as out:
                written = _write_episodes(memory, out, total, quiet=quiet)
            partial.replace(destination)
        except OSError as exc:
            msg = f"cannot write {args.file!r}: {exc.strerror or exc}"
            raise CliError(msg) from exc
        finally:
            partial.unlink(missing_ok=True)
        report = sys.stdout
    if not quiet:
        print(
            f"exported {written} episodes from namespace {memory.namespace!r} to "
            f"{'stdout' if args.file == '-' else args.file}",
            file=report,
        )
    return 0


# --------------------------------------------------------------------------- import


def _configure_import(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE.jsonl",
        help="one Episode.to_dict() JSON object per line, or '-' for stdin",
    )
    parser.add_argument(
        "--batch-size",
        type=_int_at_least(1),
        default=1000,
        help="episodes recorded per record_many call (default: 1000)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")


class _LineError(Exception):
    """A line that cannot become an episode; the message says why."""


def _episode_from_line(raw: bytes) -> Episode:
    """Decode, parse and validate one line, or raise :class:`_LineError` saying why."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"not valid UTF-8: {exc.reason} at byte {exc.start}"
        raise _LineError(msg) from None
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        msg = f"invalid JSON: {exc.msg} (column {exc.colno})"
        raise _LineError(msg) from None
    except RecursionError:
        msg = "invalid JSON: nested too deeply"
        raise _LineError(msg) from None
    try:
        return Episode.from_dict(data)
    except (ValueError, TypeError) as exc:  # EpisodeValidationError names field and value
        raise _LineError(str(exc)) from None


def _differing_fields(
    old: Mapping[str, Any], new: Mapping[str, Any], prefix: str = ""
) -> list[str]:
    differing = []
    for key in old.keys() | new.keys():
        a, b = old.get(key), new.get(key)
        if isinstance(a, Mapping) and isinstance(b, Mapping):
            differing.extend(_differing_fields(a, b, f"{prefix}{key}."))
        elif a != b:
            differing.append(f"{prefix}{key}")
    return sorted(differing)


@dataclass
class _Importer:
    """Validates lines, finds conflicts per line, records the good ones in batches.

    ``record_many`` refuses a whole batch if one episode conflicts, so conflicts are
    found here first (against the store and against earlier lines) and only episodes
    known to be new reach it. ``first_line`` maps each accepted ``episode_id`` to its
    first line, for precise messages: it grows with the file's distinct ids (strings
    and ints, never episodes); the store itself is never loaded.
    """

    memory: EpisodicMemory
    label: str
    batch_size: int
    imported: int = 0
    present: int = 0
    rejected: int = 0
    lines: int = 0
    first_line: dict[str, int] = field(default_factory=dict)
    pending: list[tuple[int, Episode]] = field(default_factory=list)
    errors: list[tuple[int, str]] = field(default_factory=list)

    def feed(self, number: int, raw: bytes) -> None:
        """Take line ``number`` (1-based) of the file."""
        raw = raw.rstrip(b"\r\n")  # so JSON errors point into this line, not the next
        if number == 1 and raw.startswith(_UTF8_BOM):
            raw = raw[len(_UTF8_BOM) :]
        if not raw.strip():
            return  # blank lines are allowed and ignored
        self.lines += 1
        try:
            self.pending.append((number, _episode_from_line(raw)))
        except _LineError as exc:
            self._reject(number, str(exc))
        if len(self.pending) >= self.batch_size:
            self.flush()

    def flush(self) -> None:
        """Record the pending episodes that are new; report this batch's rejected lines."""
        batch, self.pending = self.pending, []
        if batch:
            ids = list(dict.fromkeys(episode.episode_id for _, episode in batch))
            stored = self.memory.store.get(self.memory.namespace, ids)
            fresh: dict[str, Episode] = {}
            new: list[tuple[int, Episode]] = []
            for number, episode in batch:
                episode_id = episode.episode_id
                reference = fresh.get(episode_id) or stored.get(episode_id)
                if reference is None:
                    fresh[episode_id] = episode
                    self.first_line[episode_id] = number
                    new.append((number, episode))
                elif reference == episode:
                    self.present += 1
                    self.first_line.setdefault(episode_id, number)
                else:
                    self._reject(number, self._conflict(episode, reference))
            self._record(new)
        for number, message in sorted(self.errors):
            # tqdm.write keeps a progress bar on the same terminal intact.
            tqdm.write(f"{self.label}:{number}: {message}", file=sys.stderr)
        self.errors.clear()

    def _record(self, new: Sequence[tuple[int, Episode]]) -> None:
        if not new:
            return
        try:
            added = self.memory.record_many(episode for _, episode in new)
        except EpisodeConflictError:
            # Another writer stored one of these ids since the check: go one by one.
            for number, episode in new:
                try:
                    if self.memory.record(episode):
                        self.imported += 1
                    else:
                        self.present += 1
                except EpisodeConflictError as exc:
                    self._reject(number, str(exc))
            return
        self.imported += added
        self.present += len(new) - added

    def _conflict(self, episode: Episode, reference: Episode) -> str:
        episode_id = episode.episode_id
        earlier = self.first_line.get(episode_id)
        where = (
            f"line {earlier}"
            if earlier is not None
            else f"the episode already stored in namespace {self.memory.namespace!r}"
        )
        fields = ", ".join(_differing_fields(reference.to_dict(), episode.to_dict()))
        return (
            f"episode_id={episode_id!r} conflicts with {where}: same id, different {fields} "
            "(episodes are immutable; use a new episode_id)"
        )

    def _reject(self, number: int, message: str) -> None:
        self.rejected += 1
        self.errors.append((number, message))


def _open_input(name: str) -> tuple[IO[bytes], int | None]:
    """The input as a binary stream and its size in bytes (``None`` for stdin)."""
    if name == "-":
        return sys.stdin.buffer, None
    try:
        stream = Path(name).open("rb")  # noqa: SIM115  (closed by the caller)
    except OSError as exc:
        msg = f"cannot read {name!r}: {exc.strerror or exc}"
        raise CliError(msg) from exc
    return stream, os.fstat(stream.fileno()).st_size


def _lines(stream: IO[bytes], bar: Any) -> Iterator[tuple[int, bytes]]:
    for number, raw in enumerate(stream, start=1):
        bar.update(len(raw))
        yield number, raw


def _run_import(args: argparse.Namespace) -> int:
    """Import JSON lines; bad lines are reported and skipped, good ones all recorded."""
    stream, size = _open_input(str(args.file))
    label = "<stdin>" if args.file == "-" else str(args.file)
    quiet = bool(args.quiet)
    try:
        memory = _open_memory(args, create=True)
        importer = _Importer(memory=memory, label=label, batch_size=int(args.batch_size))
        options = {"unit": "B", "unit_scale": True, "unit_divisor": 1024}
        with _progress(size, "importing", quiet=quiet, **options) as bar:
            for number, raw in _lines(stream, bar):
                importer.feed(number, raw)
            importer.flush()
        memory.flush()  # save the skill summary now, not at interpreter exit
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if not quiet:
        print(
            f"imported {importer.imported}, already present {importer.present}, "
            f"rejected {importer.rejected} (of {importer.lines} lines in {label}, "
            f"namespace {memory.namespace!r})"
        )
    return 1 if importer.rejected else 0


# --------------------------------------------------------------------------- demo


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    from langchain_episodic.simulation import VARIANTS  # noqa: PLC0415

    parser.add_argument(
        "--tasks", type=_int_at_least(1), default=150, help="simulated tasks per run"
    )
    parser.add_argument(
        "--seeds", type=_int_at_least(1), default=2, help="runs per variant (seeds 0..N-1)"
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=VARIANTS,
        default=["no_memory", "similarity_only", "prioritized", "prioritized_explore"],
        help="memory variants to compare",
    )
    parser.add_argument(
        "--window", type=_int_at_least(1), default=20, help="rolling window in tasks"
    )
    parser.add_argument(
        "--plot", metavar="FILE", default=None, help=f"save the learning curves ({PLOT_HINT})"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _run_demo(args: argparse.Namespace) -> int:
    """Run the simulated coding-task environment per memory variant; print and plot."""
    from tqdm import tqdm  # noqa: PLC0415

    from langchain_episodic.simulation import (  # noqa: PLC0415
        VARIANT_DESCRIPTIONS,
        compare_variants,
        format_report,
        plot_report,
    )

    if args.plot is not None:
        _require_matplotlib()
    variants = list(dict.fromkeys(args.variants))
    runs = len(variants) * int(args.seeds)
    with tqdm(
        total=runs, desc="demo", unit="run", disable=args.quiet or not sys.stderr.isatty()
    ) as bar:
        report = compare_variants(
            n_tasks=int(args.tasks),
            seeds=range(int(args.seeds)),
            variants=variants,
            window=int(args.window),
            progress=lambda variant, seed, seconds: bar.update(1),
        )
    print(
        f"simulated coding tasks: {args.tasks} per run, {args.seeds} seed(s), "
        f"rolling window {args.window}"
    )
    for name in variants:
        print(f"  {name:<20} {VARIANT_DESCRIPTIONS[name]}")
    print()
    print(format_report(report))
    if args.plot is not None:
        plot_report(report, str(args.plot))
        print(f"plot saved to {args.plot}")
    return 0


# --------------------------------------------------------------------------- the parser


@dataclass(frozen=True)
class Command:
    """One subcommand.

    Attributes:
        name: What the user types.
        help: One line for ``--help``.
        configure: Adds the command's own arguments to its parser.
        run: Does the work; returns the exit code.
    """

    name: str
    help: str
    configure: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


COMMANDS: tuple[Command, ...] = (
    Command(
        "stats", "episode count, namespaces, time span, outcomes", _configure_stats, _run_stats
    ),
    Command(
        "recall",
        "rank past episodes for a task and show why each ranked",
        _configure_recall,
        _run_recall,
    ),
    Command("skills", "skill profile per task category", _configure_skills, _run_skills),
    Command("curve", "learning curve (and optionally a plot)", _configure_curve, _run_curve),
    Command("export", "write every episode as JSON lines", _configure_export, _run_export),
    Command("import", "record episodes from JSON lines", _configure_import, _run_import),
    Command(
        "demo",
        "compare memory variants on simulated coding tasks (learning curves)",
        _configure_demo,
        _run_demo,
    ),
)

_EPILOG = """\
Store options may also follow the command: langchain-episodic stats --path PATH

exit codes:
  0    success
  1    import rejected some lines (every good line was imported)
  2    error: bad arguments, missing file, invalid value, unknown namespace
  130  interrupted
  141  stdout closed early (export - | head)
"""


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors become :class:`CliError` (one line, exit 2)."""

    def error(self, message: str) -> NoReturn:
        """Raise instead of printing the usage and exiting."""
        msg = f"{message} (see '{self.prog} --help')"
        raise CliError(msg)


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: an option given before the command is not reset by the command's parser;
    # defaults are resolved in _target().
    group = parser.add_argument_group("store options")
    group.add_argument(
        "--path",
        default=argparse.SUPPRESS,
        help=f"embedded on-disk Chroma folder (default: ${PATH_ENV}, else {DEFAULT_PATH})",
    )
    group.add_argument(
        "--host", default=argparse.SUPPRESS, help="Chroma server host (instead of --path)"
    )
    group.add_argument(
        "--port",
        type=_port,
        default=argparse.SUPPRESS,
        help=f"Chroma server port (default: {DEFAULT_PORT})",
    )
    group.add_argument(
        "--collection",
        default=argparse.SUPPRESS,
        help=f"collection name (default: {DEFAULT_COLLECTION})",
    )
    group.add_argument(
        "--namespace",
        default=argparse.SUPPRESS,
        help=f"namespace within the collection (default: {DEFAULT_NAMESPACE})",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``langchain-episodic``, one subparser per :data:`COMMANDS`."""
    parser = _Parser(
        prog="langchain-episodic",
        description="Inspect, query, export and import an episodic memory.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    _add_store_options(parser)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        sub = commands.add_parser(command.name, help=command.help, description=command.help)
        command.configure(sub)
        _add_store_options(sub)
        sub.set_defaults(run=command.run)
    return parser


def _error(message: object) -> None:
    print(f"error: {_one_line(str(message), 10_000)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    """Run ``langchain-episodic`` with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit code: 0 success, 1 ``import`` rejected lines, 2 usage error,
        130 interrupted, 141 standard output closed early.
    """
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except CliError as exc:
        _error(exc)
        return 2
    except SystemExit as exc:  # --help, --version
        return exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 2
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    run: Callable[[argparse.Namespace], int] = args.run
    try:
        return run(args)
    except (CliError, EpisodicValueError, StoreConfigurationError) as exc:
        _error(exc)
        return 2
    except chromadb.errors.InvalidArgumentError as exc:
        hint = (
            " (the collection holds vectors of another embedding model; this command embeds "
            "with HashingEmbeddings: use another --collection)"
            if "dimension" in str(exc)
            else ""
        )
        _error(f"Chroma refused the request: {exc}{hint}")
        return 2
    except BrokenPipeError:
        # The reader went away (``export - | head``): stop quietly, as Python advises.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
