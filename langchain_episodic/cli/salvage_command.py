"""The salvage command: recover a damaged on-disk memory into a new folder."""

from __future__ import annotations

import argparse
import json

from langchain_episodic.cli._shared import CliError, _target


def _configure_salvage(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "folder",
        metavar="PATH",
        nargs="?",
        help="the damaged memory's folder (default: the memory at --path, as for every command)",
    )
    parser.add_argument(
        "--to",
        required=True,
        metavar="NEW",
        help="the new folder to write what is recovered into (must not exist, or be empty)",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")


def _run_salvage(args: argparse.Namespace) -> int:
    """Read what the folder's database holds, write it into NEW, report; 1 if not all."""
    from langchain_episodic.salvage import salvage_folder  # noqa: PLC0415

    given = getattr(args, "path", None)
    if args.folder is not None and given is not None and given != args.folder:
        msg = (
            f"salvage got two folders, PATH {args.folder!r} and --path {given!r}: "
            "give the damaged memory's folder once"
        )
        raise CliError(msg)
    if args.folder is None:
        target = _target(args)
        if target.path is None:
            msg = "salvage reads an on-disk folder: give its PATH (or --path), not --host"
            raise CliError(msg)
        args.folder = target.path
    try:
        report = salvage_folder(
            args.folder, args.to, lock_timeout=getattr(args, "lock_timeout", 0.0)
        )
    except OSError as exc:  # the folder or a file in it cannot be read or written
        msg = f"cannot salvage {args.folder!r} into {args.to!r}: {exc.strerror or exc}"
        raise CliError(msg) from exc
    if args.json:
        print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    else:
        for line in report.lines():
            print(line)
    return 0 if report.complete else 1
