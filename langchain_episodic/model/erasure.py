"""Erasure: the tombstone an erased episode leaves, the record of an erasure, its receipt.

Episodes are immutable: an erasure does not edit one, it removes it and everything
derived from it (`langchain_episodic.service.erasure`), and leaves in the journal:

* a **tombstone** per erased episode, under ``forgotten:`` and a digest of its id (the
  id itself is not kept): the memory refuses to store that id again, a migration
  carries the tombstone and never the content;
* an **erasure record** under ``erasure:<erasure_id>``, written *before* anything is
  removed: the journal entries it will remove and the redacted ones it will write in
  their place, so that an erasure cut short (a killed process) is finished by the
  next ``forget`` and reported by ``langchain-episodic verify``;
* its **receipt** under ``erasure:<erasure_id>:done``, written last: what was removed,
  counted per kind, when, why and by whom. Never the content.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from typing import Any

from langchain_episodic.errors import EpisodicValueError

__all__ = [
    "ERASED_TASK",
    "ERASURE_RUN",
    "TOMBSTONE_RUN",
    "ErasurePlan",
    "ForgetReceipt",
    "check_reason",
    "decode_erasure",
    "decode_receipt",
    "encode_erasure",
    "encode_receipt",
    "encode_tombstone",
    "is_erasure_entry",
    "leaves_an_erasure_unfinished",
    "receipt_entry_id",
    "redact_ids",
    "tombstone_entry_id",
    "tombstone_erasure",
]

_TOMBSTONE_PREFIX = "forgotten:"
_ERASURE_PREFIX = "erasure:"
_DONE_SUFFIX = ":done"
TOMBSTONE_RUN = "langchain_episodic:forgotten"
"""The ``run_id`` of every tombstone (a store without ordered reads reads them as one run)."""
ERASURE_RUN = "langchain_episodic:erasure"
"""The ``run_id`` of every erasure record and receipt."""
ERASED_TASK = "[erased]"
"""The task text of an injection record that showed an erased episode, once redacted."""


def check_reason(reason: object, name: str = "reason") -> str:
    """``reason``, checked: a non-empty string (an erasure is always explained).

    Raises:
        EpisodicValueError: ``reason`` is not a string, or empty or blank.
    """
    if not isinstance(reason, str) or not reason.strip():
        msg = f"{name}={reason!r} is invalid: must be a non-empty string saying why"
        raise EpisodicValueError(msg)
    return reason


def tombstone_entry_id(episode_id: str) -> str:
    """The journal id of ``episode_id``'s tombstone: a digest, so the id is not kept.

    Examples:
        >>> tombstone_entry_id("login-1")
        'forgotten:9055b0b547c61f8ee25b0e3412f8df48'
    """
    return _TOMBSTONE_PREFIX + hashlib.sha256(episode_id.encode("utf-8")).hexdigest()[:32]


def is_erasure_entry(entry_id: str) -> bool:
    """Whether a journal entry id holds a tombstone, an erasure record or a receipt."""
    return entry_id.startswith((_TOMBSTONE_PREFIX, _ERASURE_PREFIX))


def encode_tombstone(episode_id: str, erasure_id: str, at: float) -> tuple[str, str, str]:
    """``(entry_id, run_id, payload)``: the tombstone of ``episode_id`` (not naming it)."""
    payload = json.dumps({"kind": "tombstone", "erasure": erasure_id, "at": at})
    return tombstone_entry_id(episode_id), TOMBSTONE_RUN, payload


def tombstone_erasure(payload: str) -> tuple[str, float] | None:
    """``(erasure_id, at)`` of a tombstone's payload; ``None`` when it is not one."""
    try:
        data = json.loads(payload)
        return str(data["erasure"]), float(data["at"])
    except (TypeError, ValueError, KeyError):
        return None


@dataclass(frozen=True)
class ErasurePlan:
    """What one erasure will change in the journal, written before any of it is done.

    Attributes:
        erasure_id: The erasure's id.
        remove: Journal entry ids to remove (injections, outcomes and lessons that
            name an erased episode or a removed lesson).
        rewrite: The redacted entries written in place of some of them, as
            ``(entry_id, run_id, payload)``: the erased ids left out, an injection's
            task replaced by `ERASED_TASK`.
        everything: Remove every entry but the erasures' own (``forget_all``): the
            record then lists no entry id (a run id may say who the user was).
    """

    erasure_id: str
    remove: tuple[str, ...] = ()
    rewrite: tuple[tuple[str, str, str], ...] = ()
    everything: bool = False


def encode_erasure(plan: ErasurePlan, at: float) -> tuple[str, str, str]:
    """``(entry_id, run_id, payload)``: the erasure record of ``plan``."""
    remove = [] if plan.everything else list(plan.remove)
    record = {"kind": "erasure", "at": at, "everything": plan.everything, "remove": remove}
    record["rewrite"] = [list(entry) for entry in plan.rewrite]
    payload = json.dumps(record, ensure_ascii=False, separators=(",", ":"))
    return _ERASURE_PREFIX + plan.erasure_id, ERASURE_RUN, payload


def decode_erasure(entry_id: str, payload: str) -> ErasurePlan | None:
    """The plan of an erasure record; ``None`` for any other entry (or a damaged one)."""
    if not entry_id.startswith(_ERASURE_PREFIX) or entry_id.endswith(_DONE_SUFFIX):
        return None
    try:
        data = json.loads(payload)
        if data.get("kind") != "erasure":
            return None
        rewrite = tuple((str(a), str(b), str(c)) for a, b, c in data["rewrite"])
        remove = tuple(str(i) for i in data["remove"])
        everything = data.get("everything") is True
    except (TypeError, ValueError, KeyError, AttributeError):
        return None
    return ErasurePlan(entry_id[len(_ERASURE_PREFIX) :], remove, rewrite, everything)


def receipt_entry_id(erasure_id: str) -> str:
    """The journal id of an erasure's receipt (written when it is finished)."""
    return _ERASURE_PREFIX + erasure_id + _DONE_SUFFIX


def leaves_an_erasure_unfinished(entry_ids: Iterable[str]) -> bool:
    """Whether ``entry_ids`` (entries read in a row) hold an erasure record without its receipt.

    Examples:
        >>> leaves_an_erasure_unfinished(["erasure:a", "forgotten:x", "erasure:a:done"])
        False
        >>> leaves_an_erasure_unfinished(["erasure:a", "forgotten:x"])
        True
    """
    erasures = {entry_id for entry_id in entry_ids if entry_id.startswith(_ERASURE_PREFIX)}
    records = (entry_id for entry_id in erasures if not entry_id.endswith(_DONE_SUFFIX))
    return any(record + _DONE_SUFFIX not in erasures for record in records)


@dataclass(frozen=True)
class ForgetReceipt:
    """What one erasure removed: counts per kind, when, why, by whom. Never the content.

    Attributes:
        erasure_id: The erasure's id (its record and receipt are kept in the journal).
        namespace: The namespace erased from.
        reason: Why, as given.
        by: Who asked, when given.
        at: When, in seconds (the memory's clock).
        episodes: Episode records removed (each with its vector).
        already_forgotten: Ids asked for that an earlier erasure had removed (their
            tombstones say so; nothing more to remove for them).
        injections_redacted: Injection records that showed an erased episode or a
            removed lesson, rewritten without it and without their task text.
        outcomes_redacted: Run outcomes (credit) rewritten without the erased ids.
        journal_entries_removed: Journal entries removed outright (the originals of
            the redacted ones, the removed lessons, and, for ``forget_all``, every
            injection and outcome).
        lessons_removed: The ids of the lessons removed: derived from an erased
            episode, or revising or merging a removed lesson.
        quarantine_entries: Quarantine-log events naming an erased id, removed.
        pin_entries: Pin-log events naming an erased id, removed.
        storage: What the store guarantees about the bytes on its disk, and when.
        scrub_pending: The records are deleted (no read returns them) but their bytes
            are still in the store's files, until a scrub the ``storage`` sentence
            names (an embedded Chroma folder: on close, on
            ``memory.forgetting.compact()``, or once enough was erased).
            `receipts` says ``False``
            once that scrub has run.
        dry_run: Nothing was removed: what would be.
    """

    erasure_id: str
    namespace: str
    reason: str
    at: float
    by: str | None = None
    episodes: int = 0
    already_forgotten: int = 0
    injections_redacted: int = 0
    outcomes_redacted: int = 0
    journal_entries_removed: int = 0
    lessons_removed: tuple[str, ...] = ()
    quarantine_entries: int = 0
    pin_entries: int = 0
    storage: str = ""
    scrub_pending: bool = False
    dry_run: bool = False
    episode_ids: tuple[str, ...] = field(default=(), repr=False)

    @property
    def vectors(self) -> int:
        """Vectors removed: one per episode record."""
        return self.episodes

    def to_dict(self) -> dict[str, Any]:
        """The receipt as JSON-ready data (what ``--json`` prints), without the ids asked for."""
        data = asdict(self)
        data.pop("episode_ids")
        data["lessons_removed"] = list(self.lessons_removed)
        data["vectors"] = self.vectors
        return data

    def summary(self) -> str:
        """One line per kind, for a person."""
        lines = [
            f"erasure {self.erasure_id} in namespace={self.namespace!r} at {self.at:.0f} "
            f"({_utc(self.at)}){f' by {self.by}' if self.by else ''}: {self.reason}",
            f"  episodes {'to remove (dry run)' if self.dry_run else 'removed'}: "
            f"{self.episodes} (and their vectors)",
        ]
        if self.already_forgotten:
            lines.append(f"  already forgotten before: {self.already_forgotten}")
        lines += [
            f"  injection records redacted: {self.injections_redacted}",
            f"  run outcomes redacted: {self.outcomes_redacted}",
            f"  journal entries removed: {self.journal_entries_removed}",
            f"  lessons removed: {len(self.lessons_removed)}"
            + (f" ({', '.join(self.lessons_removed)})" if self.lessons_removed else ""),
            f"  quarantine-log entries removed: {self.quarantine_entries}",
            f"  pin-log entries removed: {self.pin_entries}",
        ]
        if self.storage:
            state = "scrub pending" if self.scrub_pending else "on disk"
            lines.append(f"  {state}: {self.storage}")
        return "\n".join(lines)


def _utc(at: float) -> str:
    try:
        return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        return "an unknown date"


def encode_receipt(receipt: ForgetReceipt) -> tuple[str, str, str]:
    """``(entry_id, run_id, payload)``: the receipt kept in the journal."""
    payload = json.dumps(receipt.to_dict(), ensure_ascii=False, separators=(",", ":"))
    return receipt_entry_id(receipt.erasure_id), ERASURE_RUN, payload


def decode_receipt(entry_id: str, payload: str) -> ForgetReceipt | None:
    """The receipt an entry holds; ``None`` for any other entry (or a damaged one)."""
    if not (entry_id.startswith(_ERASURE_PREFIX) and entry_id.endswith(_DONE_SUFFIX)):
        return None
    try:
        data: Mapping[str, Any] = json.loads(payload)
        fields = {name: data[name] for name in ForgetReceipt.__dataclass_fields__ if name in data}
        fields["lessons_removed"] = tuple(fields.get("lessons_removed", ()))
        return ForgetReceipt(**fields)
    except (TypeError, ValueError, KeyError):
        return None


def redact_ids(ids: Sequence[str], erased: frozenset[str]) -> tuple[str, ...]:
    """``ids`` without the erased ones, in order."""
    return tuple(i for i in ids if i not in erased)
