"""What every command shares: errors, argument parsing, tables, opening the store."""

from __future__ import annotations

import argparse
import math
import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory
    from langchain_episodic.scoring.credit import EpisodeUtility
    from langchain_episodic.stores.chroma.store import ChromaEpisodeStore

# Building the parser and printing --help import nothing heavy (numpy, Chroma,
# LangChain, the memory): each command imports what it needs when it runs. The library
# defaults the help states are restated here; tests/unit_tests/cli/test_app.py checks
# each against its source.
DEFAULT_NAMESPACE = "default"
"""``langchain_episodic.stores.base.DEFAULT_NAMESPACE``."""
DEFAULT_RANKING = "relevance"
"""``langchain_episodic.scoring.relevance.DEFAULT_RANKING``."""
RELEVANCE_HALF_LIFE = 30 * 86_400.0
"""``langchain_episodic.scoring.relevance.RELEVANCE_HALF_LIFE``."""
DEFAULT_HALF_LIFE = 86_400.0
"""``langchain_episodic.scoring.priority.DEFAULT_HALF_LIFE`` (the article's ranking)."""

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
_T = TypeVar("_T")


class CliError(Exception):
    """A user mistake: reported as one ``error: ...`` line on stderr, exit code 2."""


# --------------------------------------------------------------------------- parsing


def parse_duration(text: str) -> float:
    """Seconds in ``text``: a number of seconds, or a number with a unit s, m, h, d, w.

    Raises:
        argparse.ArgumentTypeError: ``text`` is not a positive, finite duration.

    Examples:
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

    Examples:
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


def _checked(
    convert: Callable[[str], _T], ok: Callable[[_T], bool], must: str
) -> Callable[[str], _T]:
    """An argparse type: ``convert`` the text, refused unless ``ok``, saying what it ``must`` be."""

    def parse(text: str) -> _T:
        try:
            value = convert(text)
            valid = ok(value)
        except ValueError:
            valid = False
        if not valid:
            msg = f"{text!r} is invalid: must be {must}"
            raise argparse.ArgumentTypeError(msg)
        return value

    return parse


def _int_at_least(minimum: int) -> Callable[[str], int]:
    return _checked(int, lambda value: value >= minimum, f"an integer >= {minimum}")


def _port(text: str) -> int:
    port = _int_at_least(1)(text)
    if port > 65_535:
        msg = f"{text!r} is invalid: a port is at most 65535"
        raise argparse.ArgumentTypeError(msg)
    return port


# --lock-timeout
_seconds = _checked(
    float, lambda value: math.isfinite(value) and value >= 0, "a number of seconds >= 0"
)
_finite_float = _checked(float, math.isfinite, "a finite number")


_STORE_OPTIONS: tuple[tuple[str, dict[str, Any]], ...] = (
    (
        "--path",
        {"help": f"embedded on-disk Chroma folder (default: ${PATH_ENV}, else {DEFAULT_PATH})"},
    ),
    ("--host", {"help": "Chroma server host (instead of --path)"}),
    ("--port", {"type": _port, "help": f"Chroma server port (default: {DEFAULT_PORT})"}),
    ("--collection", {"help": f"collection name (default: {DEFAULT_COLLECTION})"}),
    ("--namespace", {"help": f"namespace within the collection (default: {DEFAULT_NAMESPACE})"}),
    (
        "--lock-timeout",
        {
            "type": _seconds,
            "metavar": "SECONDS",
            "help": "wait up to SECONDS while another process holds --path "
            "(default: 0, fail at once)",
        },
    ),
)


def _add_store_options(parser: argparse.ArgumentParser) -> None:
    # SUPPRESS: an option given before the command is not reset by the command's parser;
    # defaults are resolved in _target().
    group = parser.add_argument_group("store options")
    for flag, options in _STORE_OPTIONS:
        group.add_argument(flag, default=argparse.SUPPRESS, **options)


# --------------------------------------------------------------------------- formatting


def format_table(
    headers: Sequence[str], rows: Iterable[Sequence[str]], *, right: Iterable[int] = ()
) -> str:
    """Align ``rows`` under ``headers``; columns in ``right`` are right-aligned.

    Examples:
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

    Examples:
        >>> format_duration(86_400), format_duration(93_780), format_duration(0.444244)
        ('1d', '1d 2h 3m', '0.444s')
    """
    if seconds < 60:
        return f"{seconds:.3g}s"  # 0.444s, not 0.444244s
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
    from tqdm import tqdm  # noqa: PLC0415  (commands import what they use when they run)

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
    lock_timeout: float = 0.0

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
        lock_timeout=getattr(args, "lock_timeout", 0.0),
    )


def _open_store(target: _Target, *, create: bool) -> ChromaEpisodeStore:
    """Open the Chroma store; with ``create=False`` a missing on-disk memory is an error."""
    import chromadb  # noqa: PLC0415

    from langchain_episodic.stores.chroma.store import (  # noqa: PLC0415
        HOLDS_A_MEMORY,
        ChromaEpisodeStore,
    )

    # Offline by default: Chroma reads this when its first client is created.
    os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
    if target.path is not None:
        folder = Path(target.path)
        if folder.exists() and not folder.is_dir():
            msg = f"--path {target.path!r} is not a directory"
            raise CliError(msg)
        held_one = (folder / HOLDS_A_MEMORY).is_file()  # the store explains a lost database
        if not create and not held_one and not (folder / _CHROMA_DB_FILE).is_file():
            msg = (
                f"no episodic memory at {target.path!r}: give --path (or set {PATH_ENV}) "
                "to an existing memory, or create one with 'import'"
            )
            raise CliError(msg)
        return ChromaEpisodeStore(
            path=folder, collection_name=target.collection, lock_timeout=target.lock_timeout
        )
    try:
        client = chromadb.HttpClient(host=target.host, port=target.port)
    except Exception as exc:  # chromadb raises ValueError, httpx errors, ...
        msg = f"cannot reach the Chroma server at {target.host}:{target.port}: {exc}"
        raise CliError(msg) from exc
    return ChromaEpisodeStore(client=client, collection_name=target.collection)


def _open_memory(args: argparse.Namespace, *, create: bool) -> EpisodicMemory:
    """The memory the store options name; ``create=False``: a missing one is an error.

    It embeds with the model that built the namespace when it is one of the package's
    own (the default, or `HashingEmbeddings` with its parameters), else with the
    default; one built with another model opens read-only.
    """
    from langchain_episodic.embeddings.builtin import builtin_embeddings_for  # noqa: PLC0415
    from langchain_episodic.embeddings.fingerprint import EmbedderFingerprint  # noqa: PLC0415
    from langchain_episodic.memory import EpisodicMemory  # noqa: PLC0415
    from langchain_episodic.service.opening import EMBEDDER_STATE_KEY  # noqa: PLC0415

    target = _target(args)
    store = _open_store(target, create=create)
    if not create:
        _require_namespace(store, target)
    packed = store.read_state(target.namespace, EMBEDDER_STATE_KEY)
    stored = EmbedderFingerprint.from_json(packed) if packed is not None else None
    # Commands that only read (stats, export, ...) work whatever model built the
    # memory; recall and import raise EmbeddingMismatchError, which main() reports.
    return EpisodicMemory(
        store=store,
        namespace=target.namespace,
        embeddings=builtin_embeddings_for(stored) if stored is not None else None,
        on_embedding_mismatch="read-only",
        open_run_ttl=None,  # reading never writes: stale runs are the agent's to close
    )


def _require_namespace(store: ChromaEpisodeStore, target: _Target) -> None:
    """Raise a `CliError` unless the target's namespace exists in ``store``.

    The message lists the namespaces there, and the other collections (``--collection``
    values) with theirs, so a mistyped name is seen at once.
    """
    available = store.namespaces()
    if target.namespace not in available:
        elsewhere = {
            name: spaces
            for name, spaces in store.collection_names().items()
            if name != store.collection_name
        }
        others = "; ".join(
            f"collection {name!r} holds {', '.join(map(repr, spaces[:5]))}"
            + (", ..." if len(spaces) > 5 else "")
            for name, spaces in list(elsewhere.items())[:5]
        )
        msg = (
            f"namespace {target.namespace!r} not found at {target.describe()}; "
            f"namespaces there: {', '.join(map(repr, available)) or 'none'}"
            + (f"; other collections there: {others}" if others else "")
        )
        raise CliError(msg)


def _add_now(parser: argparse.ArgumentParser, what: str) -> None:
    parser.add_argument(
        "--now",
        type=parse_time,
        default=None,
        metavar="TS",
        help=f"{what}: Unix seconds or ISO 8601 (default: the current time)",
    )


def _require_matplotlib() -> None:
    try:
        import matplotlib  # noqa: F401, PLC0415  (optional extra)
    except ImportError as exc:
        msg = f"--plot needs matplotlib: {PLOT_HINT}"
        raise CliError(msg) from exc


def _utility_json(row: EpisodeUtility, now: float) -> dict[str, object]:
    """What credit says of an episode, as the JSON of ``recall`` and ``harmful``."""
    return {
        "estimate": row.estimate(now),
        "injections": row.injections,
        "credited_runs": row.credited_runs,
        "mean_reward": row.mean_reward,
        "mean_advantage": row.mean_advantage,
    }
