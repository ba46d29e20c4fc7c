"""The verify command: find stored records that recall would skip, and damage."""

from __future__ import annotations

import argparse
import json
import os

from langchain_episodic.cli._shared import (
    _int_at_least,
    _one_line,
    _open_store,
    _require_namespace,
    _Target,
    _target,
)


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
    from langchain_episodic.stores.chroma.health import (  # noqa: PLC0415
        RECOVERY,
        diagnose_folder,
        interrupted_write,
    )

    if target.path is None or not os.path.isdir(target.path):
        return False
    if interrupted_write(target.path) and not as_json:
        print(
            "a write to chroma.sqlite3 was interrupted (its rollback journal, "
            "chroma.sqlite3-journal, is left): the next open of the memory rolls it back, "
            "undoing only that write; checked as rolled back"
        )
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
    from langchain_episodic.service.erasure import (  # noqa: PLC0415
        erased_but_stored,
        pending_scrub,
        unfinished_erasures,
    )
    from langchain_episodic.service.journal import replayed_checkpoint  # noqa: PLC0415
    from langchain_episodic.stores.base import OrderedJournal  # noqa: PLC0415

    target = _target(args)
    if _reported_damage(target, as_json=args.json):
        return 1
    store = _open_store(target, create=False)
    _require_namespace(store, target)
    reasons: dict[str, list[str]] = {}
    for finding in store.verify(target.namespace, page_size=args.page_size):
        reasons.setdefault(finding.record_id, []).append(finding.reason)
    total = store.count(target.namespace)
    problems = replayed_checkpoint(store, target.namespace)
    unfinished = unfinished_erasures(store, target.namespace)
    still_stored = erased_but_stored(store, target.namespace)
    # Not a fault: erased bytes wait for the batched scrub (run when the folder closes).
    scrub = pending_scrub(store)
    checkpoint_agrees = (
        not problems
        and isinstance(store, OrderedJournal)
        and bool(store.read_checkpoint(target.namespace))
    )
    if args.json:
        payload = {
            "namespace": target.namespace,
            "records": total,
            "malformed": reasons,
            "checkpoint_problems": problems,
            "unfinished_erasures": unfinished,
            "erased_but_stored": still_stored,
            "scrub_pending": scrub,
        }
        print(json.dumps(payload, indent=2, ensure_ascii=False))
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
        if scrub is not None:
            print(f"scrub pending: {scrub}")
        if still_stored:
            print(
                f"{len(still_stored)} erased episode(s) are still stored (half-finished "
                f"erasure), e.g. {still_stored[:3]}: run 'langchain-episodic forget' on them"
            )
    return 1 if reasons or problems or unfinished or still_stored else 0
