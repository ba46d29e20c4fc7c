"""A namespace's journal, read once for credit and lessons, and copied whole by migrations.

The journal (:meth:`~langchain_episodic.stores.EpisodeStore.read_journal`) holds the
credit loop's injections and outcomes (:mod:`~langchain_episodic.service.credit_log`)
and the lessons (:mod:`~langchain_episodic.service.lesson_log`). Opening a memory reads
it once and hands the same entries to both.
"""

from __future__ import annotations

from collections.abc import Sequence

from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import CreditLog
from langchain_episodic.service.lesson_log import LessonLog
from langchain_episodic.stores.base import JournalEntry

__all__ = ["Journal"]


class Journal:
    """The credit log and the lesson log of one namespace, over one read of its journal.

    Args:
        context: The namespace.
        half_life: How fast credit evidence is forgotten, in seconds.
    """

    def __init__(self, context: NamespaceContext, half_life: float) -> None:
        self._context = context
        entries = self.entries()
        self.credit = CreditLog(context.store, context.namespace, half_life, entries)
        self.lessons = LessonLog(context.store, context.namespace, entries)

    def entries(self) -> list[JournalEntry]:
        """Every entry as stored, any order."""
        return self._context.store.read_journal(self._context.namespace)

    def reload(self, entries: Sequence[JournalEntry] | None = None) -> None:
        """Read the journal afresh: other writers' injections, outcomes and lessons."""
        fresh = self.entries() if entries is None else entries
        self.credit.reload(fresh)
        self.lessons.reload(fresh)

    def merge(self, entries: Sequence[JournalEntry]) -> list[str]:
        """Append another namespace's entries; the ids held here under other entries.

        An id this journal already holds keeps its entry (the store keeps the first),
        so merging the same entries twice writes nothing new. Both logs re-read
        what is stored afterwards.

        Returns:
            The sorted ids of ``entries`` whose stored entry differs (a run credited
            in both namespaces, say): those were not copied.
        """
        if not entries:
            return []
        with self._context.lock:
            self._context.store.append_journal(self._context.namespace, list(entries))
            stored = {entry.entry_id: entry for entry in self.entries()}
            self.reload(list(stored.values()))
        return sorted(entry.entry_id for entry in entries if stored.get(entry.entry_id) != entry)
