"""The ``forget`` and ``prune`` commands: erasure on request, and retention by policy.

Both print the erasure's receipt (counts per kind, never the content), or it as JSON
with ``--json``; ``--dry-run`` removes nothing and says what would go. ``forget --all``
erases a whole namespace and asks first, unless ``--yes``.
"""

from __future__ import annotations

import argparse
import json
import sys

from langchain_episodic.cli._shared import (
    CliError,
    _add_now,
    _int_at_least,
    _open_memory,
    parse_duration,
)
from langchain_episodic.model.erasure import ForgetReceipt
from langchain_episodic.scoring.retention import PrunePlan, Retention

__all__ = ["_configure_forget", "_configure_prune", "_run_forget", "_run_prune"]


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--by", default=None, metavar="WHO", help="who asked (kept in the receipt)")
    parser.add_argument(
        "--dry-run", action="store_true", help="remove nothing; print what would go"
    )
    parser.add_argument("--json", action="store_true", help="print the receipt as JSON")


def _configure_forget(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "episode_ids",
        nargs="*",
        metavar="ID",
        help="episode (or lesson) ids to erase, with what derives from them",
    )
    parser.add_argument(
        "--all", action="store_true", help="erase the whole namespace (one user's memory)"
    )
    parser.add_argument("--reason", required=True, help="why (required; kept in the receipt)")
    parser.add_argument(
        "--yes", action="store_true", help="do not ask before erasing a whole namespace"
    )
    _common(parser)


def _configure_prune(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--max-age",
        type=parse_duration,
        default=None,
        metavar="DURATION",
        help="remove episodes older than this (seconds, or 30d, 12h, ...)",
    )
    parser.add_argument(
        "--max-episodes",
        type=_int_at_least(1),
        default=None,
        metavar="N",
        help="keep at most N episodes, the least valuable going first",
    )
    _add_now(parser, "'now' for --max-age")
    _common(parser)


def _print_receipt(receipt: ForgetReceipt, as_json: bool, extra: dict[str, object]) -> None:
    if as_json:
        print(json.dumps({**receipt.to_dict(), **extra}, indent=2, ensure_ascii=False))
    else:
        print(receipt.summary())


def _confirm(namespace: str, episodes: int) -> None:
    if not sys.stdin.isatty():
        msg = (
            f"forget --all erases namespace {namespace!r} ({episodes} episodes) for good: "
            "pass --yes to confirm"
        )
        raise CliError(msg)
    answer = input(f"erase namespace {namespace!r} ({episodes} episodes) for good? [y/N] ")
    if answer.strip().lower() not in ("y", "yes"):
        msg = "nothing was erased"
        raise CliError(msg)


def _run_forget(args: argparse.Namespace) -> int:
    """Erase the given ids, or the whole namespace; print the receipt."""
    if args.all == bool(args.episode_ids):
        msg = "give episode ids to erase, or --all for the whole namespace (not both)"
        raise CliError(msg)
    memory = _open_memory(args, create=False)
    if args.all:
        if not args.yes and not args.dry_run:
            _confirm(memory.namespace, len(memory))
        receipt = memory.forgetting.forget_all(reason=args.reason, by=args.by, dry_run=args.dry_run)
    else:
        receipt = memory.forget(
            args.episode_ids, reason=args.reason, by=args.by, dry_run=args.dry_run
        )
    _print_receipt(receipt, args.json, {})
    return 0


def _plan_lines(plan: PrunePlan) -> list[str]:
    lines = [f"  would remove: {', '.join(plan.episode_ids) or 'nothing'}"]
    if plan.protected:
        lines.append(
            f"  kept although the policy names them (pinned or quarantined): "
            f"{', '.join(plan.protected)}"
        )
    lines.append(f"  episodes left: {plan.kept}")
    return lines


def _run_prune(args: argparse.Namespace) -> int:
    """Apply a retention policy; print the plan (``--dry-run``) or the receipt."""
    if args.max_age is None and args.max_episodes is None:
        msg = "give --max-age, --max-episodes, or both"
        raise CliError(msg)
    policy = Retention(max_age=args.max_age, max_episodes=args.max_episodes)
    memory = _open_memory(args, create=False)
    plan, receipt = memory.forgetting.prune(
        policy, current_time=args.now, by=args.by, dry_run=args.dry_run
    )
    extra: dict[str, object] = {
        "plan": {
            "expired": list(plan.expired),
            "over_cap": list(plan.over_cap),
            "protected": list(plan.protected),
            "kept": plan.kept,
        }
    }
    if receipt is None:
        if args.json:
            print(json.dumps({"removed": 0, **extra}, indent=2))
        else:
            print(f"nothing to prune in namespace {memory.namespace!r}: {plan.kept} episodes kept")
            print("\n".join(_plan_lines(plan)[1:]))
        return 0
    _print_receipt(receipt, args.json, extra)
    if args.dry_run and not args.json:
        print("\n".join(_plan_lines(plan)))
    return 0
