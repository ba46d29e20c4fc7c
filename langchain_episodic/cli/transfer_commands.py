"""Commands that move episodes: export and import as JSON Lines, migrate between stores."""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, TYPE_CHECKING, TextIO

from langchain_episodic.cli._shared import (
    _UTF8_BOM,
    DEFAULT_PORT,
    CliError,
    _int_at_least,
    _open_memory,
    _open_store,
    _port,
    _progress,
    _Target,
    _target,
)
from langchain_episodic.errors import EpisodeConflictError
from langchain_episodic.model.episode import Episode

if TYPE_CHECKING:  # the memory (numpy, Chroma) loads when a command runs, not for --help
    from langchain_episodic.memory import EpisodicMemory


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
    if args.file == "-":
        written = _write_episodes(memory, sys.stdout, total, quiet=args.quiet)
        sys.stdout.flush()
        report = sys.stderr
    else:
        # Write beside the destination, then rename: a failed export leaves no half file.
        destination = Path(args.file)
        partial = destination.with_name(f".{destination.name}.{os.getpid()}.partial")
        try:
            with partial.open("w", encoding="utf-8", newline="\n") as out:
                written = _write_episodes(memory, out, total, quiet=args.quiet)
            partial.replace(destination)
        except OSError as exc:
            msg = f"cannot write {args.file!r}: {exc.strerror or exc}"
            raise CliError(msg) from exc
        finally:
            partial.unlink(missing_ok=True)
        report = sys.stdout
    if not args.quiet:
        print(
            f"exported {written} episodes from namespace {memory.namespace!r} to "
            f"{'stdout' if args.file == '-' else args.file}",
            file=report,
        )
    return 0


def _configure_import(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "file",
        metavar="FILE.jsonl",
        help=(
            "one Episode.to_dict() JSON object per line, or '-' for stdin; a line "
            "without a timestamp is dated now (seconds; milliseconds are refused)"
        ),
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
    """Decode, parse and validate one line, or raise `_LineError` saying why."""
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
            stored = self.memory.get_episodes(ids)
            fresh: dict[str, Episode] = {}
            for number, episode in batch:
                episode_id = episode.episode_id
                reference = fresh.get(episode_id) or stored.get(episode_id)
                if reference is None:
                    fresh[episode_id] = episode
                    self.first_line[episode_id] = number
                elif reference == episode:
                    self.present += 1
                    self.first_line.setdefault(episode_id, number)
                else:
                    self._reject(number, self._conflict(episode, reference))
            self._record([(self.first_line[i], episode) for i, episode in fresh.items()])
        from tqdm import tqdm  # noqa: PLC0415

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
        differences = reference.differences(episode)
        fields = "; ".join(f"{name} {held} vs {new}" for name, held, new in differences)
        # A line without a timestamp is dated at import, so a second import differs.
        hint = (
            "; a line without a timestamp is dated now: give it a fixed timestamp"
            if any(name == "timestamp" for name, _, _ in differences)
            else ""
        )
        return (
            f"episode_id={episode_id!r} conflicts with {where}: same id, different {fields} "
            f"(episodes are immutable; use a new episode_id{hint})"
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


def _run_import(args: argparse.Namespace) -> int:
    """Import JSON lines; bad lines are reported and skipped, good ones all recorded."""
    stream, size = _open_input(str(args.file))
    label = "<stdin>" if args.file == "-" else str(args.file)
    try:
        memory = _open_memory(args, create=True)
        importer = _Importer(memory=memory, label=label, batch_size=int(args.batch_size))
        options = {"unit": "B", "unit_scale": True, "unit_divisor": 1024}
        with _progress(size, "importing", quiet=args.quiet, **options) as bar:
            for number, raw in enumerate(stream, start=1):
                bar.update(len(raw))
                importer.feed(number, raw)
            importer.flush()
        memory.flush()  # save the skill summary now, not at interpreter exit
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
    if not args.quiet:
        print(
            f"imported {importer.imported}, already present {importer.present}, "
            f"rejected {importer.rejected} (of {importer.lines} lines in {label}, "
            f"namespace {memory.namespace!r})"
        )
    return 1 if importer.rejected else 0


def _configure_migrate(parser: argparse.ArgumentParser) -> None:
    to = parser.add_argument_group("target (the store options above name the source)")
    to.add_argument("--to-path", help="embedded on-disk Chroma folder to copy into")
    to.add_argument("--to-host", help="Chroma server host to copy into (instead of --to-path)")
    to.add_argument("--to-port", type=_port, help=f"its port (default: {DEFAULT_PORT})")
    to.add_argument("--to-collection", help="target collection (default: the source's)")
    to.add_argument("--to-namespace", help="target namespace (default: the source's)")
    parser.add_argument(
        "--batch-size",
        type=_int_at_least(1),
        default=1000,
        help="episodes read, embedded and written per step (default: 1000)",
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar and no summary")


def _run_migrate(args: argparse.Namespace) -> int:
    """Copy the namespace into another store, verified by ids and count afterwards."""
    from langchain_episodic.memory import EpisodicMemory  # noqa: PLC0415
    from langchain_episodic.migration import migrate_namespace  # noqa: PLC0415

    source_target = _target(args)
    if args.to_path is None and args.to_host is None and args.to_port is None:
        msg = "give the target: --to-path PATH or --to-host HOST [--to-port PORT]"
        raise CliError(msg)
    if args.to_path is not None and (args.to_host is not None or args.to_port is not None):
        msg = "give --to-path or --to-host/--to-port, not both"
        raise CliError(msg)
    destination = _Target(
        path=args.to_path,
        host=None if args.to_path is not None else args.to_host or "localhost",
        port=args.to_port or DEFAULT_PORT,
        collection=args.to_collection or source_target.collection,
        namespace=args.to_namespace or source_target.namespace,
    )
    source = _open_memory(args, create=False)
    target = EpisodicMemory(
        store=_open_store(destination, create=True), namespace=destination.namespace
    )
    # A bar only on a terminal, as export and import: in a log or a pipe it would leave
    # its carriage returns and a half-drawn line before the summary.
    shown = not args.quiet and sys.stderr is not None and sys.stderr.isatty()
    report = migrate_namespace(source, target, batch_size=args.batch_size, progress=shown)
    if not args.quiet:
        print(
            f"migrated namespace {source.namespace!r} from {source_target.describe()} to "
            f"namespace {target.namespace!r} at {destination.describe()}: "
            f"{report.copied} copied, {report.already_present} already there, "
            f"{report.target_count} in the target; every id verified"
        )
    return 0
