"""``memory.quarantine``: hide episodes or lessons from recall, pin them past probation.

`Quarantine` owns a namespace's two logs, each a `QuarantineLog` kept in its store.
The events and their rules are `langchain_episodic.model.quarantine`.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Collection, Iterable, Sequence, Set

from langchain_episodic._async import async_twin
from langchain_episodic._validation import as_ids
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.quarantine import (
    PIN_STATE_KEY,
    QUARANTINE_STATE_KEY,
    QuarantineAction,
    QuarantineEvent,
    active_quarantine,
    decode_log,
    encode_log,
)
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.stores.base import EpisodeStore, require_stored

__all__ = ["Quarantine", "QuarantineLog"]


class QuarantineLog:
    """A namespace's quarantine log, kept in its store as one state string.

    The stored log is the truth: every change re-reads it and appends to what it
    finds, so memories (and processes) that share a namespace never undo each
    other's events.

    The same log, under another state key, holds a namespace's pins (``on="pin"``:
    ``pin`` / ``unpin`` events).

    Args:
        store: The namespace's store.
        namespace: Whose log this is.
        key: The store state key it is kept under.
        on: The action that makes an id active (``"quarantine"``, or ``"pin"``).
    """

    def __init__(
        self,
        store: EpisodeStore,
        namespace: str,
        key: str = QUARANTINE_STATE_KEY,
        on: QuarantineAction = "quarantine",
    ) -> None:
        self._store = store
        self._namespace = namespace
        self._key = key
        self._on: QuarantineAction = on
        self.events: tuple[QuarantineEvent, ...] = ()
        self.active: dict[str, QuarantineEvent] = {}
        self.reload()

    def reload(self) -> None:
        """Read the log back from the store."""
        self._set(decode_log(self._store.read_state(self._namespace, self._key)))

    def _set(self, events: tuple[QuarantineEvent, ...]) -> None:
        self.events = events
        self.active = active_quarantine(events, self._on)

    def _save(self, events: tuple[QuarantineEvent, ...]) -> None:
        self._store.write_state(self._namespace, self._key, encode_log(events))
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
        require_stored(self._store, self._namespace, looked_up, "nothing was changed")
        activates = action == self._on
        changed = [event for event in events if (event.episode_id in self.active) != activates]
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

    def events_naming(self, ids: Set[str], *, everything: bool = False) -> int:
        """How many stored events name one of ``ids`` (``everything``: how many there are)."""
        self.reload()
        return sum(1 for event in self.events if everything or event.episode_id in ids)

    def remove_naming(self, ids: Set[str], *, everything: bool = False) -> int:
        """Remove the events naming one of ``ids`` (their reasons go with them); how many.

        An erasure's job, the one change that rewrites the log: the rest of it stays
        as it was, in order. ``everything``: empty the log.
        """
        self.reload()
        kept = () if everything else tuple(e for e in self.events if e.episode_id not in ids)
        removed = len(self.events) - len(kept)
        if removed:
            self._save(kept)
        return removed


class Quarantine:
    """Quarantine (hidden from recall, kept) and pins (shown whatever credit says).

    Every change is an event in an append-only log with its reason and who asked:
    the audit trail (`log`). Quarantine wins over a pin.

    Examples:
        >>> from langchain_episodic import EpisodicMemory, episode_from_tests
        >>> memory = EpisodicMemory()
        >>> _ = memory.record(episode_from_tests("Add a login form", "def login(): ...", 10, 10,
        ...                                      episode_id="login-7", timestamp=1.0))
        >>> memory.quarantine.add("login-7", "came from a poisoned tool run", by="ops")
        1
        >>> list(memory.quarantine.list()), memory.recall("Add a login form")
        (['login-7'], ())
        >>> memory.quarantine.release("login-7", "the tool run was fine", by="ops")
        1

    Args:
        context: The namespace.
        lesson_ids: Returns the namespace's lesson ids (a lesson needs no stored episode).
    """

    def __init__(
        self, context: NamespaceContext, lesson_ids: Callable[[], Collection[str]]
    ) -> None:
        self._context = context
        self._lesson_ids = lesson_ids
        self.quarantine_log = QuarantineLog(context.store, context.namespace)
        """The quarantine log (``quarantine`` / ``release`` events)."""
        self.pin_log = QuarantineLog(context.store, context.namespace, PIN_STATE_KEY, on="pin")
        """The pin log (``pin`` / ``unpin`` events)."""

    def __repr__(self) -> str:
        return f"<quarantine of namespace {self._context.namespace!r}>"

    def add(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Hide stored episodes (or lessons) from recall without deleting them.

        They keep their place in ``memory.episodes()`` and the skill profiles, but no
        recall (so no retriever, prompt or strategy) nor the short-term window returns
        them, nor the lessons derived from them. Returns how many were newly quarantined.

        Raises:
            EpisodicValueError: An id is not stored here, or ``reason`` is empty.
        """
        return self._change(self.quarantine_log, "quarantine", episode_ids, reason, by)

    def release(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Undo `add`; how many were released (others are skipped)."""
        return self._change(self.quarantine_log, "release", episode_ids, reason, by)

    def pin(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Keep episodes (or lessons) shown whatever credit says: never on probation.

        One credited in `PROBATION_MIN_RUNS`
        runs whose utility is confidently below 0.5 is put on probation
        (``memory.runs.demoted()``); a person who knows better pins it. Returns how
        many were newly pinned.
        """
        return self._change(self.pin_log, "pin", episode_ids, reason, by)

    def unpin(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Undo `pin`; how many were unpinned."""
        return self._change(self.pin_log, "unpin", episode_ids, reason, by)

    aadd, arelease = async_twin(add), async_twin(release)
    apin, aunpin = async_twin(pin), async_twin(unpin)

    def list(self) -> dict[str, QuarantineEvent]:
        """The ids quarantined now, each with the event that quarantined it."""
        return dict(self.quarantine_log.active)

    def pinned(self) -> dict[str, QuarantineEvent]:
        """The ids pinned now, each with the event that pinned it."""
        return dict(self.pin_log.active)

    def log(self) -> tuple[QuarantineEvent, ...]:
        """Every quarantine and release in this namespace, oldest first: the audit trail."""
        return self.quarantine_log.events

    def merge_log(self, events: Sequence[QuarantineEvent]) -> int:
        """Append the events of another namespace's log that this one lacks; how many."""
        with self._context.lock:
            return self.quarantine_log.merge(events)

    def _change(
        self,
        log: QuarantineLog,
        action: QuarantineAction,
        ids: str | Iterable[str],
        reason: str,
        by: str | None,
    ) -> int:
        with self._context.lock:
            known = self._lesson_ids()
            return log.change(action, as_ids(ids), reason, by, self._context.now(), known)
