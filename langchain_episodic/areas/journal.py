"""``memory.journal``: the append-only log of injections, outcomes and lessons."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from langchain_episodic._async import async_twin
from langchain_episodic.stores.base import JournalEntry

if TYPE_CHECKING:
    from langchain_episodic.service.opening import Services

__all__ = ["MemoryJournal"]


class MemoryJournal:
    """The journal as stored: for copying between namespaces and planned shutdowns.

    Examples:
        >>> from langchain_episodic import EpisodicMemory, episode_from_tests
        >>> memory = EpisodicMemory()
        >>> _ = memory.record(episode_from_tests("Add a login form", "def login(): ...", 10, 10,
        ...                                      episode_id="ep-1", timestamp=1.0))
        >>> _ = memory.runs.note("run-1", ["ep-1"], "Add a signup form")
        >>> memory.journal.checkpoint()
        >>> EpisodicMemory(store=memory.store).runs.pending().keys()
        dict_keys(['run-1'])
    """

    def __init__(self, services: Services) -> None:
        self._s = services

    def __repr__(self) -> str:
        return f"<journal of namespace {self._s.context.namespace!r}>"

    def entries(self) -> list[JournalEntry]:
        """Every journal entry (injections, outcomes, lessons) as stored: for copying."""
        return self._s.journal.entries()

    def merge(self, entries: Sequence[JournalEntry]) -> list[str]:
        """Append another namespace's journal entries; the ids held here under others.

        What names an episode erased here is redacted first, as the erasure did here.
        """
        with self._s.context.lock:
            return self._s.journal.merge(self._s.eraser.redact_incoming(entries))

    def checkpoint(self) -> None:
        """Save the journal checkpoint now: the next open reads only what is written after it.

        The memory saves one by itself every
        `CHECKPOINT_EVERY` journal entries;
        call this before a planned shutdown to make the next open read nothing more.
        Stores that do not keep their journal in order (see
        `OrderedJournal`) have no checkpoint: a no-op.
        """
        self._s.journal.checkpoint()

    acheckpoint = async_twin(checkpoint)
