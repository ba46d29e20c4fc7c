"""Quarantine: an auditable soft delete that recall honours, without rewriting history.

Episodes are immutable, so forgetting one never edits or deletes its record. Instead
the memory keeps an append-only log of :class:`QuarantineEvent` per namespace: an
episode is quarantined while its latest event is a ``"quarantine"``. The log is the
audit trail: who quarantined or released what, when and why.

Example:
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
from collections import Counter
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from langchain_episodic._validation import finite_float
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.stores.base import EpisodeStore

__all__ = [
    "QUARANTINE_STATE_KEY",
    "QuarantineAction",
    "QuarantineEvent",
    "QuarantineLog",
    "active_quarantine",
    "decode_log",
    "encode_log",
]

QUARANTINE_STATE_KEY = "quarantine"
"""The store state key under which a namespace's log is kept."""

QuarantineAction = Literal["quarantine", "release"]
_ACTIONS = ("quarantine", "release")


@dataclass(frozen=True)
class QuarantineEvent:
    """One entry of a namespace's quarantine log.

    Attributes:
        episode_id: The episode concerned.
        action: ``"quarantine"`` hides the episode from recall; ``"release"`` restores it.
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
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                msg = f"QuarantineEvent.{name}={value!r} is invalid: must be a non-empty string"
                raise EpisodicValueError(msg)
        if self.action not in _ACTIONS:
            msg = f"QuarantineEvent.action={self.action!r} is invalid: must be one of {_ACTIONS}"
            raise EpisodicValueError(msg)
        if finite_float(self.at) is None:
            msg = f"QuarantineEvent.at={self.at!r} is invalid: must be a finite number"
            raise EpisodicValueError(msg)
        if self.by is not None and (not isinstance(self.by, str) or not self.by.strip()):
            msg = f"QuarantineEvent.by={self.by!r} is invalid: must be a non-empty string or None"
            raise EpisodicValueError(msg)


def active_quarantine(log: Iterable[QuarantineEvent]) -> dict[str, QuarantineEvent]:
    """The episodes quarantined now, each with the event that quarantined it."""
    active: dict[str, QuarantineEvent] = {}
    for event in log:
        if event.action == "quarantine":
            active[event.episode_id] = event
        else:
            active.pop(event.episode_id, None)
    return active


def encode_log(log: Iterable[QuarantineEvent]) -> str:
    """The log as compact JSON, the form the store keeps."""
    return json.dumps([asdict(event) for event in log], ensure_ascii=False, separators=(",", ":"))


def decode_log(packed: str | None) -> tuple[QuarantineEvent, ...]:
    """Read a log written by :func:`encode_log`; ``()`` for ``None``.

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
        return tuple(QuarantineEvent(**_row(row)) for row in rows)
    except (TypeError, ValueError) as error:
        msg = f"the stored quarantine log is damaged ({error}); it was not written by this package"
        raise EpisodicValueError(msg) from None


def _row(row: object) -> Mapping[str, Any]:
    if not isinstance(row, Mapping):
        raise TypeError(f"log entry {row!r} is not an object")
    return row


class QuarantineLog:
    """A namespace's quarantine log, kept in its store as one state string.

    The stored log is the truth: every change re-reads it and appends to what it
    finds, so memories (and processes) that share a namespace never undo each
    other's events.

    Args:
        store: The namespace's store.
        namespace: Whose log this is.
    """

    def __init__(self, store: EpisodeStore, namespace: str) -> None:
        self._store = store
        self._namespace = namespace
        self.events: tuple[QuarantineEvent, ...] = ()
        self.active: dict[str, QuarantineEvent] = {}
        self.reload()

    def reload(self) -> None:
        """Read the log back from the store."""
        self._set(decode_log(self._store.read_state(self._namespace, QUARANTINE_STATE_KEY)))

    def _set(self, events: tuple[QuarantineEvent, ...]) -> None:
        self.events = events
        self.active = active_quarantine(events)

    def _save(self, events: tuple[QuarantineEvent, ...]) -> None:
        self._store.write_state(self._namespace, QUARANTINE_STATE_KEY, encode_log(events))
        self._set(events)

    def change(
        self,
        action: QuarantineAction,
        episode_ids: Sequence[str],
        reason: str,
        by: str | None,
        now: float,
        known: Collection[str] = (),
    ) -> int:
        """Log ``action`` for each stored id whose state it changes; how many it changed.

        ``known`` ids (the namespace's lessons) need no stored episode.

        Raises:
            EpisodicValueError: An id is not a non-empty string or not stored in the
                namespace, or ``reason`` is empty. Nothing is changed.
        """
        for index, episode_id in enumerate(episode_ids):
            if not isinstance(episode_id, str) or not episode_id:
                msg = f"episode_ids[{index}]={episode_id!r} is invalid: must be a non-empty string"
                raise EpisodicValueError(msg)
        self.reload()  # another memory (or process) may have logged events since
        events = [QuarantineEvent(i, action, reason, now, by) for i in dict.fromkeys(episode_ids)]
        looked_up = [event.episode_id for event in events if event.episode_id not in known]
        stored = self._store.get(self._namespace, looked_up) if looked_up else {}
        missing = [i for i in looked_up if i not in stored]
        if missing:
            msg = (
                f"episode_ids={missing!r} are not stored in namespace={self._namespace!r}; "
                "nothing was changed"
            )
            raise EpisodicValueError(msg)
        changed = [
            event
            for event in events
            if (event.episode_id in self.active) != (action == "quarantine")
        ]
        if changed:
            self._save((*self.events, *changed))
        return len(changed)

    def merge(self, events: Sequence[QuarantineEvent]) -> int:
        """Append the events of another log that this one lacks, in their order.

        An event this log already holds as often is not repeated, so merging the same
        log twice changes nothing (migrations rely on it).

        Returns:
            How many events were appended.
        """
        self.reload()
        missing = Counter(events) - Counter(self.events)
        extra = []
        for event in events:
            if missing[event] > 0:
                missing[event] -= 1
                extra.append(event)
        if extra:
            self._save((*self.events, *extra))
        return len(extra)
