"""``memory.quarantine``: hide episodes or lessons from recall, pin them past probation."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from langchain_episodic._async import async_twin
from langchain_episodic._validation import as_ids
from langchain_episodic.model.quarantine import QuarantineAction, QuarantineEvent

if TYPE_CHECKING:
    from langchain_episodic.service.opening import Services
    from langchain_episodic.service.quarantine import QuarantineLog

__all__ = ["MemoryQuarantine"]


class MemoryQuarantine:
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
    """

    def __init__(self, services: Services) -> None:
        self._s = services

    def __repr__(self) -> str:
        return f"<quarantine of namespace {self._s.context.namespace!r}>"

    def add(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Hide stored episodes (or lessons) from recall without deleting them.

        They keep their place in ``memory.episodes()`` and the skill profiles, but no
        recall (so no retriever, prompt or strategy) nor the short-term window returns
        them, nor the lessons derived from them. Returns how many were newly quarantined.

        Raises:
            EpisodicValueError: An id is not stored here, or ``reason`` is empty.
        """
        return self._change(self._s.quarantine, "quarantine", episode_ids, reason, by)

    def release(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Undo `add`; how many were released (others are skipped)."""
        return self._change(self._s.quarantine, "release", episode_ids, reason, by)

    def pin(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Keep episodes (or lessons) shown whatever credit says: never on probation.

        One credited in `PROBATION_MIN_RUNS`
        runs whose utility is confidently below 0.5 is put on probation
        (``memory.runs.demoted()``); a person who knows better pins it. Returns how
        many were newly pinned.
        """
        return self._change(self._s.pins, "pin", episode_ids, reason, by)

    def unpin(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Undo `pin`; how many were unpinned."""
        return self._change(self._s.pins, "unpin", episode_ids, reason, by)

    aadd, arelease = async_twin(add), async_twin(release)
    apin, aunpin = async_twin(pin), async_twin(unpin)

    def list(self) -> dict[str, QuarantineEvent]:
        """The ids quarantined now, each with the event that quarantined it."""
        return dict(self._s.quarantine.active)

    def pinned(self) -> dict[str, QuarantineEvent]:
        """The ids pinned now, each with the event that pinned it."""
        return dict(self._s.pins.active)

    def log(self) -> tuple[QuarantineEvent, ...]:
        """Every quarantine and release in this namespace, oldest first: the audit trail."""
        return self._s.quarantine.events

    def merge_log(self, events: Sequence[QuarantineEvent]) -> int:
        """Append the events of another namespace's log that this one lacks; how many."""
        with self._s.context.lock:
            return self._s.quarantine.merge(events)

    def _change(
        self,
        log: QuarantineLog,
        action: QuarantineAction,
        ids: str | Iterable[str],
        reason: str,
        by: str | None,
    ) -> int:
        with self._s.context.lock:
            known = self._s.lessons.ids()
            return log.change(action, as_ids(ids), reason, by, self._s.context.now(), known)
