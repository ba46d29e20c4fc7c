"""The ``lessons`` command: list, show, reflect, quarantine and release lessons.

Lessons are distilled from episodes (`langchain_episodic.model.lesson`); these
subcommands show them with their lineage and credit, write new ones with a chat model
the user names (``reflect --model MODULE:ATTR``: nothing calls a model otherwise), and
quarantine or release them.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_episodic.cli._shared import (
    CliError,
    _add_now,
    _add_store_options,
    _format_time,
    _int_at_least,
    _one_line,
    _open_memory,
    _progress,
    format_table,
)
from langchain_episodic.errors import EpisodicValueError

# LangChain, numpy and the memory load when an action runs, not for --help.
if TYPE_CHECKING:
    from langchain_core.language_models import BaseChatModel

    from langchain_episodic.memory import EpisodicMemory
    from langchain_episodic.model.lesson import Lesson

_STATUSES = ("active", "archived", "quarantined", "all")


def _configure_lessons(parser: argparse.ArgumentParser) -> None:
    actions = parser.add_subparsers(dest="lesson_action", metavar="ACTION", required=True)

    def action(
        name: str, help_text: str, run: Callable[[argparse.Namespace], int]
    ) -> argparse.ArgumentParser:
        sub = actions.add_parser(name, help=help_text, description=help_text)
        sub.set_defaults(lesson_run=run)
        return sub

    listing = action("list", "each lesson with its status, sources, utility and counts", _run_list)
    listing.add_argument(
        "--status",
        choices=_STATUSES,
        default="active",
        help="which lessons: active (recalled), archived (superseded), quarantined, or all "
        "(default: active)",
    )
    listing.add_argument("--json", action="store_true", help="print JSON instead of a table")

    show = action("show", "every field of one lesson, its lineage and its status", _run_show)
    show.add_argument("lesson_id", metavar="LESSON_ID")
    show.add_argument("--json", action="store_true", help="print JSON instead of text")
    for sub in (listing, show):
        _add_now(sub, "the time utility is read at (evidence fades with age)")

    reflection = action(
        "reflect",
        "distil lessons from the namespace's episodes with a chat model you name",
        _run_reflect,
    )
    reflection.add_argument(
        "--model",
        required=True,
        metavar="MODULE:ATTR",
        help="a LangChain chat model, or a callable without arguments returning one, "
        "e.g. my_models:reflector (MODULE is imported; the current directory is searched)",
    )
    reflection.add_argument(
        "--limit",
        type=_int_at_least(1),
        default=None,
        metavar="N",
        help="reflect on at most N episodes, newest first: at most N model calls "
        "(default: every episode no lesson cites yet)",
    )
    reflection.add_argument(
        "--batch-size",
        type=_int_at_least(1),
        default=6,
        metavar="N",
        help="episodes shown to the model per call: the episode and its nearest "
        "same-category neighbours (default: 6)",
    )
    reflection.add_argument(
        "--max-lessons",
        type=_int_at_least(1),
        default=3,
        metavar="N",
        help="lessons asked for per call, at most (default: 3)",
    )
    reflection.add_argument("--quiet", action="store_true", help="no progress bar")

    for name, verb in (("quarantine", "hide"), ("release", "restore")):
        sub = action(
            name,
            f"{verb} lessons {'from' if name == 'quarantine' else 'to'} recall "
            "(logged in the audit trail)",
            _run_quarantine,
        )
        sub.add_argument("lesson_ids", nargs="+", metavar="LESSON_ID")
        sub.add_argument("--reason", required=True, help="why, for the audit trail")
        sub.add_argument("--by", default=None, metavar="WHO", help="who (a person, a tool)")

    for sub in actions.choices.values():
        _add_store_options(sub)


def _run_lessons(args: argparse.Namespace) -> int:
    """Run the chosen action."""
    run: Callable[[argparse.Namespace], int] = args.lesson_run
    return run(args)


def _counters(memory: EpisodicMemory, lesson: Lesson, now: float | None) -> dict[str, Any]:
    row = memory.runs.utility(lesson.lesson_id)
    return {
        "utility": memory.lessons.utility(lesson.lesson_id, now),
        "shown": row.injections,
        "credited": row.credited_runs,
    }


def _run_list(args: argparse.Namespace) -> int:
    """Every lesson of one status (or all), oldest first."""
    memory = _open_memory(args, create=False)
    lessons = memory.lessons.list(None if args.status == "all" else args.status)
    listed = [
        {
            "lesson_id": lesson.lesson_id,
            "status": memory.lessons.status(lesson.lesson_id),
            "title": lesson.title,
            "sources": list(lesson.source_ids),
            **_counters(memory, lesson, args.now),
        }
        for lesson in lessons
    ]
    if args.json:
        payload = {"namespace": memory.namespace, "status": args.status, "lessons": listed}
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    which = "" if args.status == "all" else f"{args.status} "
    print(f"{len(lessons)} {which}lessons in namespace {memory.namespace!r}")
    if not lessons:
        total = len(memory.lessons.list(None))
        if total:
            print(f"({total} lessons in all: --status all lists them)")
        else:
            print("(none yet: 'lessons reflect --model MODULE:ATTR' distils some)")
        return 0
    rows = [
        [
            row["lesson_id"],
            row["status"],
            f"{row['utility']:.3f}",
            str(row["shown"]),
            str(row["credited"]),
            _one_line(", ".join(row["sources"]), 40),
            _one_line(row["title"], 60),
        ]
        for row in listed
    ]
    headers = ["lesson", "status", "utility", "shown", "credited", "sources", "title"]
    print(format_table(headers, rows, right=[2, 3, 4]))
    print()
    print(
        "utility: how much runs shown the lesson beat runs without it (0.5 = never "
        "credited); shown: runs it was injected into; credited: those that got a reward"
    )
    return 0


def _lesson(memory: EpisodicMemory, lesson_id: str) -> Lesson:
    from langchain_episodic.model.lesson import is_lesson_id  # noqa: PLC0415

    if not is_lesson_id(lesson_id):
        msg = (
            f"{lesson_id!r} is not a lesson id (they start with 'lesson-'; "
            "'lessons list --status all' lists them)"
        )
        raise CliError(msg)
    try:
        return memory.lessons.get(lesson_id)
    except EpisodicValueError as exc:
        msg = f"{exc} ('lessons list --status all' lists the lessons)"
        raise CliError(msg) from exc


def _why(memory: EpisodicMemory, lesson: Lesson) -> tuple[str, list[dict[str, Any]]]:
    """The lesson's status and the reasons for it (quarantine events, superseders)."""
    status = memory.lessons.status(lesson.lesson_id)
    quarantined = memory.quarantine.list()
    reasons: list[dict[str, Any]] = [
        {
            "quarantined": identifier,
            "as": "the lesson itself" if identifier == lesson.lesson_id else "a source",
            "reason": event.reason,
            "by": event.by,
            "at": event.at,
        }
        for identifier in (lesson.lesson_id, *lesson.source_ids)
        if (event := quarantined.get(identifier)) is not None
    ]
    reasons += [
        {"superseded_by": later.lesson_id, "by": later.by, "at": later.created_at}
        for later in memory.lessons.list(None)
        if lesson.lesson_id in later.supersedes
    ]
    return status, reasons


def _run_show(args: argparse.Namespace) -> int:
    """One lesson: every field, its sources' provenance, lineage, status and why."""
    memory = _open_memory(args, create=False)
    lesson = _lesson(memory, args.lesson_id)
    status, reasons = _why(memory, lesson)
    stored = memory.get_episodes(lesson.source_ids)
    quarantined = memory.quarantine.list()
    sources: list[dict[str, Any]] = []
    for source in lesson.sources:
        episode = stored.get(source.episode_id)
        # The lesson's record of its sources, completed by the episodes' provenance.
        recorded = {} if episode is None or episode.source is None else episode.source.to_dict()
        sources.append(
            {
                "episode_id": source.episode_id,
                "agent": source.agent or recorded.get("agent"),
                "run_id": source.run_id or recorded.get("run_id"),
                "thread_id": recorded.get("thread_id"),
                "turn": recorded.get("turn"),
                "namespace": recorded.get("namespace"),
                "task": None if episode is None else episode.task.description,
                "outcome": None if episode is None else episode.outcome.value,
                "quarantined": source.episode_id in quarantined,
            }
        )
    superseded_by = [reason["superseded_by"] for reason in reasons if "superseded_by" in reason]
    counters = _counters(memory, lesson, args.now)
    if args.json:
        payload = {
            "lesson_id": lesson.lesson_id,
            "status": status,
            "why": reasons,
            "title": lesson.title,
            "applies_when": lesson.applies_when,
            "do": lesson.do,
            "avoid": lesson.avoid,
            "by": lesson.by,
            "created_at": lesson.created_at,
            "sources": sources,
            "supersedes": list(lesson.supersedes),
            "superseded_by": superseded_by,
            "carried_helped": lesson.helped,
            "carried_hurt": lesson.hurt,
            **counters,
        }
        print(json.dumps(payload, ensure_ascii=False, indent=2))
        return 0
    rows = [
        ("lesson", lesson.lesson_id),
        ("status", status),
        ("title", lesson.title),
        ("applies when", lesson.applies_when),
        ("do", lesson.do),
        ("avoid", lesson.avoid or "-"),
        ("by", lesson.by or "-"),
        ("created", _format_time(lesson.created_at)),
        ("supersedes", ", ".join(lesson.supersedes) or "-"),
        ("superseded by", ", ".join(superseded_by) or "-"),
        ("utility", f"{counters['utility']:.3f}"),
        ("shown", f"{counters['shown']} runs, {counters['credited']} credited"),
        ("carried over", f"helped {lesson.helped:g}, hurt {lesson.hurt:g} (from merged lessons)"),
    ]
    width = max(len(key) for key, _ in rows)
    for key, value in rows:
        print(f"{key.ljust(width)}  {_one_line(value, 10_000)}")
    print()
    print(f"why {status}:")
    if not reasons:
        print("  recalled: neither it nor a source is quarantined, and nothing supersedes it")
    for reason in reasons:
        if "quarantined" in reason:
            who = f" by {reason['by']}" if reason["by"] else ""
            print(
                f"  {reason['as']} {reason['quarantined']} is quarantined{who} at "
                f"{_format_time(reason['at'])}: {_one_line(reason['reason'], 200)}"
            )
        else:
            print(f"  superseded by {reason['superseded_by']} ({reason['by'] or 'a revision'})")
    print()
    print(f"sources ({len(sources)}):")
    table = [
        [
            source["episode_id"],
            source["outcome"] or "(not stored)",
            "yes" if source["quarantined"] else "",
            source["agent"] or "-",
            source["run_id"] or "-",
            _thread_text(source["thread_id"], source["turn"]),
            _one_line(source["task"] or "-", 60),
        ]
        for source in sources
    ]
    headers = ["episode", "outcome", "quarantined", "agent", "run", "thread", "task"]
    print(format_table(headers, table))
    return 0


def _thread_text(thread_id: str | None, turn: int | None) -> str:
    """``a-1 turn 2``, ``a-1``, ``turn 2`` or ``-``."""
    parts = [part for part in (thread_id, None if turn is None else f"turn {turn}") if part]
    return " ".join(parts) or "-"


def _load_model(spec: str) -> BaseChatModel:
    """The chat model ``MODULE:ATTR`` names (called first when it is not a model)."""
    from langchain_core.language_models import BaseChatModel  # noqa: PLC0415

    module_name, colon, attribute = spec.partition(":")
    if not colon or not module_name or not attribute:
        msg = f"--model {spec!r} is invalid: give MODULE:ATTR, e.g. my_models:reflector"
        raise CliError(msg)
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # like 'python -m': modules of the current directory
    try:
        module = importlib.import_module(module_name)
    except Exception as exc:
        msg = f"--model {spec!r}: cannot import {module_name!r}: {type(exc).__name__}: {exc}"
        raise CliError(msg) from exc
    found: Any = module
    for part in attribute.split("."):
        if not hasattr(found, part):
            msg = f"--model {spec!r}: module {module_name!r} has no attribute {attribute!r}"
            raise CliError(msg)
        found = getattr(found, part)
    if not isinstance(found, BaseChatModel) and callable(found):
        try:
            found = found()
        except Exception as exc:
            msg = f"--model {spec!r}: calling {attribute}() failed: {type(exc).__name__}: {exc}"
            raise CliError(msg) from exc
    if not isinstance(found, BaseChatModel):
        msg = (
            f"--model {spec!r} gave {type(found).__name__}, not a LangChain chat model "
            "(a BaseChatModel, or a callable without arguments returning one)"
        )
        raise CliError(msg)
    return found


def _run_reflect(args: argparse.Namespace) -> int:
    """Reflect on the namespace's episodes, newest first, and store the lessons that pass.

    An episode some lesson already cites (one stored earlier, or in this run) is
    skipped, and so is a quarantined one; each other episode is reflected on with its
    nearest same-category neighbours, one model call each, until ``--limit``.
    """
    from langchain_episodic.reflection import LessonWriter, reflect  # noqa: PLC0415

    writer = LessonWriter(_load_model(args.model), max_lessons=args.max_lessons)
    memory = _open_memory(args, create=False)
    newest_first = sorted(
        ((episode.timestamp, episode.episode_id) for episode in memory.episodes()), reverse=True
    )
    quarantined = memory.quarantine.list()
    cited = {i for lesson in memory.lessons.list(None) for i in lesson.source_ids}
    pending = [i for _, i in newest_first if i not in quarantined and i not in cited]
    skipped = len(newest_first) - len(pending)
    if args.limit is not None:
        pending = pending[: args.limit]
    stored: list[Lesson] = []
    rejected: list[str] = []
    calls = reflected = 0
    with _progress(len(pending), "reflecting", quiet=args.quiet, unit="ep") as bar:
        for episode_id in pending:
            bar.update(1)
            if episode_id in cited:  # a lesson written in this run cites it
                continue
            result = reflect(memory, writer, episode_id, batch_size=args.batch_size)
            reflected += 1
            calls += result.model_calls
            stored += result.stored
            rejected += [f"{episode_id}: {reason}" for reason in result.rejected]
            cited.update(i for lesson in result.lessons for i in lesson.source_ids)
    print(
        f"reflected on {reflected} of {len(newest_first)} episodes in namespace "
        f"{memory.namespace!r} with {writer.name}, newest first ({skipped} already cited "
        f"by a lesson or quarantined): {calls} model calls, {len(stored)} lessons stored, "
        f"{len(rejected)} rejected"
    )
    for lesson in stored:
        print(f"  stored {lesson.lesson_id}: {_one_line(lesson.title, 80)}")
        print(f"    sources: {', '.join(lesson.source_ids)}")
    if rejected:
        print("rejected:")
        for reason in rejected:
            print(f"  {_one_line(reason, 300)}")
    return 0


def _run_quarantine(args: argparse.Namespace) -> int:
    """Quarantine or release lessons; print each one's status afterwards."""
    memory = _open_memory(args, create=False)
    lessons = [_lesson(memory, lesson_id) for lesson_id in dict.fromkeys(args.lesson_ids)]
    ids = [lesson.lesson_id for lesson in lessons]
    if args.lesson_action == "quarantine":
        changed = memory.quarantine.add(ids, args.reason, by=args.by)
        print(f"quarantined {changed} of {len(ids)} lessons ({len(ids) - changed} already were)")
    else:
        changed = memory.quarantine.release(ids, args.reason, by=args.by)
        print(f"released {changed} of {len(ids)} lessons ({len(ids) - changed} were not)")
    for lesson in lessons:
        status, reasons = _why(memory, lesson)
        sources = [r["quarantined"] for r in reasons if r.get("as") == "a source"]
        note = f" (quarantined sources: {', '.join(sources)})" if sources else ""
        print(f"  {lesson.lesson_id}: {status}{note}")
    return 0
