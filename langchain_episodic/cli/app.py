"""The parser and entry point of the command line: one subcommand per ``COMMANDS`` entry."""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import NoReturn

from langchain_episodic import __version__
from langchain_episodic.cli._shared import CliError, _add_store_options, _one_line
from langchain_episodic.cli._terminal import SafeStream, terminal_safe
from langchain_episodic.cli.forget_commands import (
    _configure_forget,
    _configure_prune,
    _run_forget,
    _run_prune,
)
from langchain_episodic.cli.inspect_commands import (
    _configure_curve,
    _configure_harmful,
    _configure_skills,
    _configure_stats,
    _run_curve,
    _run_harmful,
    _run_skills,
    _run_stats,
)
from langchain_episodic.cli.lesson_commands import _configure_lessons, _run_lessons
from langchain_episodic.cli.lift_command import _configure_lift, _run_lift
from langchain_episodic.cli.recall_command import _configure_recall, _run_recall
from langchain_episodic.cli.salvage_command import _configure_salvage, _run_salvage
from langchain_episodic.cli.transfer_commands import (
    _configure_export,
    _configure_import,
    _configure_migrate,
    _run_export,
    _run_import,
    _run_migrate,
)
from langchain_episodic.cli.verify_command import _configure_verify, _run_verify
from langchain_episodic.errors import (
    EmbeddingMismatchError,
    EpisodicValueError,
    MigrationError,
    ReadOnlyMemoryError,
    StoreConfigurationError,
    StoreLockedError,
)

__all__ = ["COMMANDS", "Command", "build_parser", "main"]


@dataclass(frozen=True)
class Command:
    """One subcommand.

    Building the parser calls every ``configure``, so a command module imports nothing
    heavy (numpy, Chroma, LangChain, the memory) at its top: ``run`` imports what it
    needs.

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
    Command(
        "harmful",
        "episodes whose recall keeps preceding worse outcomes (quarantine candidates)",
        _configure_harmful,
        _run_harmful,
    ),
    Command(
        "lift",
        "does memory help? reward with memory against holdout runs, with intervals",
        _configure_lift,
        _run_lift,
    ),
    Command(
        "lessons",
        "lessons distilled from episodes: list, show, reflect (with a model), quarantine, release",
        _configure_lessons,
        _run_lessons,
    ),
    Command("skills", "skill profile per task category", _configure_skills, _run_skills),
    Command("curve", "learning curve (and optionally a plot)", _configure_curve, _run_curve),
    Command("export", "write every episode as JSON lines", _configure_export, _run_export),
    Command("import", "record episodes from JSON lines", _configure_import, _run_import),
    Command(
        "migrate",
        "copy the namespace into another store (disk or server), verified",
        _configure_migrate,
        _run_migrate,
    ),
    Command(
        "forget",
        "erase episodes (or --all of a namespace) and what derives from them, with a receipt",
        _configure_forget,
        _run_forget,
    ),
    Command(
        "prune",
        "apply a retention policy (--max-age, --max-episodes); --dry-run lists what would go",
        _configure_prune,
        _run_prune,
    ),
    Command(
        "verify",
        "find stored records that recall would skip (malformed, foreign, misnumbered)",
        _configure_verify,
        _run_verify,
    ),
    Command(
        "salvage",
        "recover a damaged on-disk memory into a new folder (salvage [PATH] --to NEW; PATH "
        "defaults to --path), read from its database, not its index",
        _configure_salvage,
        _run_salvage,
    ),
)

_EPILOG = """\
Store options may also follow the command: langchain-episodic stats --path PATH

exit codes:
  0    success
  1    import rejected some lines (every good line was imported);
       verify found malformed records or a half-finished erasure;
       salvage could not recover everything (the report says what)
  2    error: bad arguments, missing file, invalid value, unknown namespace,
       --path held by another process (wait with --lock-timeout SECONDS)
  130  interrupted
  141  stdout closed early (export - | head)
"""


class _Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` whose errors become `CliError` (one line, exit 2)."""

    def error(self, message: str) -> NoReturn:
        """Raise instead of printing the usage and exiting."""
        msg = f"{message} (see '{self.prog} --help')"
        raise CliError(msg)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``langchain-episodic``, one subparser per `COMMANDS`."""
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
    print(f"error: {terminal_safe(_one_line(str(message), 10_000))}", file=sys.stderr)


def _message(exc: Exception, args: argparse.Namespace) -> str | None:
    """The one line an error (Chroma's own too) is reported as; ``None``: an unexpected one."""
    if isinstance(exc, ReadOnlyMemoryError):
        return (
            f"cannot {exc.operation}: namespace {exc.namespace!r} is open read-only because it "
            f"was embedded with {exc.stored}, not with the {exc.given} the command line embeds "
            f"with ({exc.reason}). To {exc.operation}, use Python with the stored model, or "
            "copy it into a new memory the command line can write ('migrate --to-path NEW' "
            "re-embeds it), or use another --collection or --namespace"
        )
    if isinstance(exc, EmbeddingMismatchError):  # a memory opened to write (migrate's target)
        return (
            f"namespace {exc.namespace!r} was embedded with {exc.stored}, not with the "
            f"{exc.given} the command line embeds with ({exc.reason}): write to another "
            "namespace or collection (--to-namespace, --to-collection), or use Python with "
            "the stored model"
        )
    if isinstance(exc, StoreLockedError):
        waited = f" after waiting {exc.timeout:g} s" if exc.timeout > 0 else ""
        return (
            f"path={exc.path!r} is locked by another process ({exc.holder}){waited}: an "
            "embedded Chroma store takes one process at a time, even to read. Wait for it "
            "with --lock-timeout SECONDS, stop the other process, or share the memory "
            "through a Chroma server (--host/--port)"
        )
    if isinstance(exc, (CliError, EpisodicValueError, StoreConfigurationError, MigrationError)):
        return str(exc)
    if "chromadb" not in sys.modules:  # the command never touched Chroma
        return None
    import chromadb.errors  # noqa: PLC0415

    if isinstance(exc, chromadb.errors.InvalidArgumentError):
        hint = (
            " (the collection holds vectors of another embedding model; this command embeds "
            "with the package's default model: use another --collection)"
            if "dimension" in str(exc)
            else ""
        )
        return f"Chroma refused the request: {exc}{hint}"
    if not isinstance(exc, chromadb.errors.ChromaError):
        return None
    # Chroma's own failures (a damaged database or index, a full disk), in one line.
    from langchain_episodic.stores.chroma.health import LOW_SPACE, free_bytes  # noqa: PLC0415

    path = getattr(args, "path", None)
    if isinstance(path, str) and os.path.isdir(path) and free_bytes(path) < LOW_SPACE:
        return (
            f"no space left on device at {path!r} ({free_bytes(path)} bytes free): Chroma "
            f"cannot apply its log ({exc}); nothing acknowledged was lost. Free space, "
            "then retry"
        )
    return (
        f"Chroma failed: {type(exc).__name__}: {exc} (run 'langchain-episodic verify' to "
        "diagnose the folder)"
    )


def main(argv: list[str] | None = None) -> int:
    """Run ``langchain-episodic`` with ``argv`` (default: ``sys.argv[1:]``).

    Returns:
        The exit code: 0 success, 1 ``import`` rejected lines or ``verify`` found
        malformed records, 2 usage error, 130 interrupted, 141 standard output closed early.
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
    stdout = sys.stdout
    sys.stdout = SafeStream(stdout)
    try:
        return run(args)
    except BrokenPipeError:
        # The reader went away (``export - | head``): stop quietly, as Python advises.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 141
    except KeyboardInterrupt:
        _error("interrupted")
        return 130
    except Exception as exc:
        message = _message(exc, args)
        if message is None:
            raise
        _error(message)
        return 2
    finally:
        sys.stdout = stdout
