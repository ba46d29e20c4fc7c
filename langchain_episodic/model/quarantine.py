"""Quarantine events: an auditable soft delete that recall honours (pure data and rules).

Episodes are immutable, so forgetting one never edits or deletes its record. Instead
the memory keeps an append-only log of `QuarantineEvent` per namespace: an
episode is quarantined while its latest event is a ``"quarantine"``. The log is the
audit trail: who quarantined or released what, when and why.

Examples:
    >>> log = (
    ...     QuarantineEvent("ep-1", "quarantine", "poisoned by a bad tool run", 10.0, "ops"),
    ...     QuarantineEvent("ep-2", "quarantine", "duplicate", 11.0),
    ...     QuarantineEvent("ep-2", "release", "not a duplicate after all", 12.0),
    ... )
    >>> sorted(active_quarantine(log))
    ['ep-1']
    >>> decode_log(encode_log(log)) == log
    True
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass
from typing import Any, Literal

from langchain_episodic._validation import finite_float
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.credit import check_text

__all__ = [
    "PIN_STATE_KEY",
    "QUARANTINE_STATE_KEY",
    "QuarantineAction",
    "QuarantineEvent",
    "active_quarantine",
    "decode_log",
    "encode_log",
]

QUARANTINE_STATE_KEY = "quarantine"
"""The store state key under which a namespace's log is kept."""

PIN_STATE_KEY = "pins"
"""The store state key of a namespace's pin log (the same events, ``pin`` / ``unpin``)."""

QuarantineAction = Literal["quarantine", "release", "pin", "unpin"]
_ACTIONS = ("quarantine", "release", "pin", "unpin")


@dataclass(frozen=True)
class QuarantineEvent:
    """One entry of a namespace's quarantine log.

    Attributes:
        episode_id: The episode (or lesson) concerned.
        action: ``"quarantine"`` hides it from recall; ``"release"`` restores it. In a
            pin log, ``"pin"`` keeps it shown whatever credit says (no probation),
            ``"unpin"`` ends that.
        reason: Why, in words; required, for the audit trail.
        at: When, in seconds (the memory's clock).
        by: Who did it (a person, an agent, a tool), when known.
    """

    episode_id: str
    action: QuarantineAction
    reason: str
    at: float
    by: str | None = None

    def __post_init__(self) -> None:
        for name in ("episode_id", "reason"):
            check_text("QuarantineEvent", name, getattr(self, name))
        if self.action not in _ACTIONS:
            msg = f"QuarantineEvent.action={self.action!r} is invalid: must be one of {_ACTIONS}"
            raise EpisodicValueError(msg)
        if finite_float(self.at) is None:
            msg = f"QuarantineEvent.at={self.at!r} is invalid: must be a finite number"
            raise EpisodicValueError(msg)
        check_text("QuarantineEvent", "by", self.by, optional=True)


def active_quarantine(
    log: Iterable[QuarantineEvent], on: QuarantineAction = "quarantine"
) -> dict[str, QuarantineEvent]:
    """The ids quarantined now (``on="pin"``: pinned), each with the event that did it."""
    active: dict[str, QuarantineEvent] = {}
    for event in log:
        if event.action == on:
            active[event.episode_id] = event
        else:
            active.pop(event.episode_id, None)
    return active


def encode_log(log: Iterable[QuarantineEvent]) -> str:
    """The log as compact JSON, the form the store keeps."""
    return json.dumps([asdict(event) for event in log], ensure_ascii=False, separators=(",", ":"))


def decode_log(packed: str | None) -> tuple[QuarantineEvent, ...]:
    """Read a log written by `encode_log`; ``()`` for ``None``.

    Raises:
        EpisodicValueError: The stored log is not one this package wrote. Recall must
            not silently un-quarantine episodes, so a damaged log is an error.
    """
    if packed is None:
        return ()
    try:
        rows: Any = json.loads(packed)
        if not isinstance(rows, list):
            raise TypeError("not a list")
        events = []
        for row in rows:
            if not isinstance(row, Mapping):
                raise TypeError(f"log entry {row!r} is not an object")
            events.append(QuarantineEvent(**row))
        return tuple(events)
    except (TypeError, ValueError) as error:
        msg = f"the stored quarantine log is damaged ({error}); it was not written by this package"
        raise EpisodicValueError(msg) from None
