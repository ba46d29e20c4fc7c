"""How far a namespace's journal has been read, and the checkpoint that spares reading it again.

The journal only grows (`append_journal`
keeps an id's first entry), so what the credit and lesson logs derive from it is a fold:
the state after the first ``position`` entries plus the entries after them. On a store
that keeps its journal in order (`OrderedJournal`)
the memory saves that state beside the journal, a `Checkpoint`, and the next
open reads the checkpoint and the few entries written since instead of every entry
ever written: open time and resident memory stay flat however long the journal grows.

A checkpoint is only ever a cache: it names the id of the last entry it covers, and one
whose entry is not found there (a journal rewritten or copied) is ignored and the whole
journal replayed; ``langchain-episodic verify`` replays the journal and compares. On a
store that keeps a head beside its journal (`JournalHead`)
it also keeps the head read before the journal it sums up: an open that finds the same
head reads nothing of the journal at all.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.credit import Injection, decode_entry, encode_injection

__all__ = ["CHECKPOINT_EVERY", "Checkpoint", "JournalPosition", "decode_checkpoint"]

CHECKPOINT_EVERY = 1_000
"""Journal entries read or written past the checkpoint before the memory writes a new
one: at most this many entries are replayed on open (a few milliseconds), and writing a
checkpoint (the utility book as JSON) costs less than the runs it follows."""

_FORMAT = 1


@dataclass
class JournalPosition:
    """How far into its journal a memory has read, and what it wrote past that.

    ``position`` counts the journal's entries the logs have folded in, in stored
    order; entries this memory wrote since (``written``) are folded in already and
    are skipped when the journal is next read from ``position``.

    Attributes:
        ordered: Whether the store reads its journal in order (positions mean anything).
        position: Entries folded in, counted from the journal's start.
        last_id: The id of the entry at ``position - 1`` (``None`` at 0).
        written: Ids this memory wrote after ``position``, already folded in.
        pending: Entries folded in since the last checkpoint.
        due: Called when ``pending`` reaches `CHECKPOINT_EVERY` (set by the journal).
    """

    ordered: bool
    position: int = 0
    last_id: str | None = None
    written: set[str] = field(default_factory=set)
    pending: int = 0
    due: Callable[[], None] = field(default=lambda: None, repr=False)

    def wrote(self, entry_ids: Iterable[str]) -> None:
        """Note entries this memory stored and folded in itself."""
        fresh = [i for i in entry_ids if i not in self.written]
        self.written.update(fresh)
        self.pending += len(fresh)
        if self.is_due():
            self.due()

    def is_due(self) -> bool:
        """Whether enough entries were folded in since the last checkpoint to save one."""
        return self.ordered and self.pending >= CHECKPOINT_EVERY


@dataclass(frozen=True)
class Checkpoint:
    """What the first ``position`` entries of a journal add up to.

    Attributes:
        position: How many entries (in stored order) it covers.
        last_id: The id of the last of them, checked on open (``None`` when 0).
        book: The utility book (`to_state`).
        open_runs: The injections of runs without an outcome, in the order noted.
        latest: ``(at, run_id)`` of the latest outcome (credits fold in this order).
        closed: How many runs have an outcome.
        lesson_ids: The journal ids of the lessons, read back by id on open.
        head: The journal's head (`journal_head`)
            read before the entries it covers were; ``None``: unknown.
    """

    position: int
    last_id: str | None
    book: dict[str, Any]
    open_runs: tuple[Injection, ...]
    latest: tuple[float, str] | None
    closed: int
    lesson_ids: tuple[str, ...]
    head: str | None = None

    def encode(self) -> str:
        """The checkpoint as one JSON string (what the store keeps)."""
        return json.dumps(
            {
                "format": _FORMAT,
                "position": self.position,
                "last_id": self.last_id,
                "book": self.book,
                "open_runs": [list(encode_injection(i)[1:]) for i in self.open_runs],
                "latest": None if self.latest is None else list(self.latest),
                "closed": self.closed,
                "lesson_ids": list(self.lesson_ids),
                "head": self.head,
            },
            separators=(",", ":"),
        )


def decode_checkpoint(value: str | None) -> Checkpoint | None:
    """The checkpoint ``value`` holds; ``None`` when there is none or it is not readable.

    An unreadable checkpoint (another format, damaged) is not an error: the journal
    it summarises is replayed instead.
    """
    if not value:
        return None
    try:
        data = json.loads(value)
        if data.get("format") != _FORMAT:
            return None
        injections = []
        for run_id, payload in data["open_runs"]:
            item = decode_entry("checkpoint", run_id, payload)
            if not isinstance(item, Injection):
                return None
            injections.append(item)
        latest = data["latest"]
        if not isinstance(data["book"], dict):
            return None  # what the book holds is checked once, when it is restored
        return Checkpoint(
            position=int(data["position"]),
            last_id=None if data["last_id"] is None else str(data["last_id"]),
            book=data["book"],
            open_runs=tuple(injections),
            latest=None if latest is None else (float(latest[0]), str(latest[1])),
            closed=int(data["closed"]),
            lesson_ids=tuple(str(i) for i in data["lesson_ids"]),
            head=data["head"] if isinstance(data.get("head"), str) else None,
        )
    except (KeyError, TypeError, ValueError, AttributeError, EpisodicValueError):
        return None
