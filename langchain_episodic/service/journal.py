"""``memory.journal``: the append-only log of injections, outcomes and lessons.

A namespace's journal is read once for credit and lessons, checkpointed, and copied
by migrations.

The journal (`read_journal`) holds the
credit loop's injections and outcomes (`credit_log`)
and the lessons (`lesson_log`). Opening a memory
folds it into both logs. On a store that keeps its journal in order
(`OrderedJournal`) it starts from the last
`Checkpoint` and reads only the entries
written after it; elsewhere it reads every entry. Where the store also keeps a head
(`JournalHead`) and it equals the checkpoint's,
open reads nothing of the journal (but the lessons' entries, by id).
"""

from __future__ import annotations

import logging
import weakref
from collections.abc import Callable, Collection, Sequence

from langchain_episodic._async import async_twin
from langchain_episodic.embeddings.fingerprint import RefusingEmbeddings
from langchain_episodic.model.erasure import is_erasure_entry, leaves_an_erasure_unfinished
from langchain_episodic.scoring.credit import UtilityBook
from langchain_episodic.service.checkpoint import (
    Checkpoint,
    JournalPosition,
    decode_checkpoint,
)
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import CreditLog
from langchain_episodic.service.lesson_log import LessonLog
from langchain_episodic.stores.base import (
    EpisodeStore,
    JournalEntry,
    JournalHead,
    OrderedJournal,
)

__all__ = ["Journal", "replayed_checkpoint"]

_log = logging.getLogger(__name__)


class Journal:
    """The credit log and the lesson log of one namespace, folded from its journal.

    The journal as stored is for copying between namespaces (`entries`, `merge`)
    and planned shutdowns (`checkpoint`).

    Examples:
        >>> from langchain_episodic import EpisodicMemory, episode_from_tests
        >>> memory = EpisodicMemory()
        >>> _ = memory.record(episode_from_tests("Add a login form", "def login(): ...", 10, 10,
        ...                                      episode_id="ep-1", timestamp=1.0))
        >>> _ = memory.runs.note("run-1", ["ep-1"], "Add a signup form")
        >>> memory.journal.checkpoint()
        >>> EpisodicMemory(store=memory.store).runs.pending().keys()
        dict_keys(['run-1'])

    Args:
        context: The namespace.
        half_life: How fast credit evidence is forgotten, in seconds.
        principal_runs: A shared memory's cap on one principal's runs counted for one
            episode; ``None``: no cap.
    """

    def __init__(
        self, context: NamespaceContext, half_life: float, principal_runs: int | None = None
    ) -> None:
        self._context = context
        store = context.store
        self._ordered: OrderedJournal | None = store if isinstance(store, OrderedJournal) else None
        self._head: JournalHead | None = (
            store if self._ordered is not None and isinstance(store, JournalHead) else None
        )
        self.position = JournalPosition(ordered=self._ordered is not None)
        self.position.due = _weakly(self.checkpoint)
        # The checkpoint this memory last wrote or resumed from, as stored, and how many
        # entries it covers: whether the stored one is still it is a string comparison.
        self._saved: tuple[str, int] | None = None
        # Whether an erasure begun by another writer (or cut short here) may be waiting
        # to be finished: true until the erasure service has looked, and again once an
        # erasure record without its receipt is folded in (or the journal is read anew).
        self.erasures_unchecked = True
        self.credit = CreditLog(
            store,
            context.namespace,
            half_life,
            self.position,
            _weakly(self.sync),
            turn=context.turn,
            principal_runs=principal_runs,
        )
        self.lessons = LessonLog(store, context.namespace, self.position)
        # What `merge` passes incoming entries through: the erasure service's
        # redaction, set when it is wired (it is built over this journal).
        self.redact: Callable[[Sequence[JournalEntry]], list[JournalEntry]] = list
        if not self._resume():
            self.reload()

    def __repr__(self) -> str:
        return f"<journal of namespace {self._context.namespace!r}>"

    def entries(self) -> list[JournalEntry]:
        """Every journal entry (injections, outcomes, lessons) as stored: for copying.

        In stored order where the store keeps one.
        """
        if self._ordered is not None:
            return self._ordered.read_journal_from(self._context.namespace, 0)
        return self._context.store.read_journal(self._context.namespace)

    def reload(self, entries: Sequence[JournalEntry] | None = None) -> None:
        """Fold the whole journal in afresh: other writers' injections, outcomes and lessons."""
        self.credit.settle()
        head = self._read_head() if entries is None else None  # read before the journal
        fresh = self.entries() if entries is None else list(entries)
        self.erasures_unchecked = True
        self.credit.reload(fresh)
        self.lessons.reload(fresh)
        self._moved_to(len(fresh), fresh[-1].entry_id if fresh else None)
        self.position.pending = len(fresh)
        self._checkpoint_if_due(head)

    def fold_erasure(
        self,
        read: Sequence[JournalEntry],
        removed: Collection[str],
        appended: Sequence[str],
        subjects: frozenset[str],
    ) -> None:
        """Fold in an erasure of ``subjects`` made here, without reading the journal again.

        Args:
            read: The journal as read under the lock before the erasure.
            removed: The ids of the entries the erasure removed.
            appended: The ids of the entries it appended (its record, tombstones,
                redacted entries, receipt).
            subjects: The erased episode ids (no lesson: a removed lesson's entries
                need the lesson log read afresh).

        When ``read`` is not exactly what the logs hold (another writer's entries in
        it), or the store does not keep its journal in order, the whole journal is
        folded in afresh instead. Other writers' entries written since are folded in
        by the next `sync` (or `checkpoint`).
        """
        self.credit.settle()
        if self._ordered is None or not self._holds_exactly(read):
            self.reload()
            return
        self.credit.forget(subjects)
        kept = [entry.entry_id for entry in read if entry.entry_id not in removed]
        self._moved_to(len(kept), kept[-1] if kept else None)
        self.position.written = set(appended)  # skipped when the journal is next read
        self.position.pending += len(appended)

    def _holds_exactly(self, read: Sequence[JournalEntry]) -> bool:
        """Whether the logs hold exactly the entries of ``read`` (read in stored order)."""
        position, written = self.position.position, self.position.written
        if position > len(read):
            return False
        last = read[position - 1].entry_id if position else None
        return last == self.position.last_id and all(
            entry.entry_id in written for entry in read[position:]
        )

    def sync(self) -> None:
        """Fold in what other writers added since this memory last read the journal.

        Only the entries after the position are read (stores that keep the journal in
        order); elsewhere the whole journal is read again.
        """
        if self._ordered is None:
            self.reload()
            return
        self.credit.settle()
        position, last_id = self.position.position, self.position.last_id
        tail = self._ordered.read_journal_from(self._context.namespace, max(position - 1, 0))
        if position > 0:
            if not tail or tail[0].entry_id != last_id:
                # Entries were removed before the position (an erasure, here or in
                # another process): positions moved, so fold the whole journal again.
                self.reload()
                return
            tail = tail[1:]
        self._fold_tail(tail)

    def checkpoint(self, *, only_if_behind: bool = False) -> None:
        """Save the journal checkpoint now: the next open reads only what is written after it.

        Other writers' entries are folded in first. The memory saves one by itself
        every `CHECKPOINT_EVERY` journal entries; call this before a planned shutdown
        to make the next open read nothing more. Stores that do not keep their journal
        in order (see `OrderedJournal`) have no checkpoint: a no-op.
        ``only_if_behind``: only when entries were folded in since the last one.
        """
        if self._ordered is None or not self._writable():
            return
        if only_if_behind and not self.position.pending:
            return
        with self._context.lock:
            self.credit.settle()
            head = self._read_head()  # before the journal: what it vouches for is read
            self.sync()
            self._write_checkpoint(head)

    acheckpoint = async_twin(checkpoint)

    def merge(self, entries: Sequence[JournalEntry]) -> list[str]:
        """Append another namespace's journal entries; the ids held here under others.

        What names an episode erased here is redacted first, as the erasure did here.
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
            entries = self.redact(entries)
            self.credit.settle()
            self._context.store.append_journal(self._context.namespace, list(entries))
            stored = self.entries()
            self.reload(stored)
        held = {entry.entry_id: entry for entry in stored}
        # Two namespaces that each erased an id hold a tombstone each: both say "erased".
        return sorted(
            entry.entry_id
            for entry in entries
            if held.get(entry.entry_id) != entry and not is_erasure_entry(entry.entry_id)
        )

    # ------------------------------------------------------------------ internals

    def _resume(self) -> bool:
        """Start from the stored checkpoint and the entries after it; ``False``: replay."""
        if self._ordered is None:
            return False
        namespace = self._context.namespace
        head = self._read_head()
        raw = self._ordered.read_checkpoint(namespace)
        saved = decode_checkpoint(raw)
        if saved is None or saved.book.get("half_life") != self.credit.half_life:
            return False
        if head is not None and head == saved.head:
            # Nothing appended nor deleted since the checkpoint's entries were read:
            # every write renews the head. The journal itself is not touched.
            tail: list[JournalEntry] = []
        elif self._ordered.journal_size(namespace) == saved.position:
            # Nothing written since: the journal only grows, so its last covered entry
            # being there is enough (a count and a read by id, whatever its length).
            last = [saved.last_id] if saved.last_id is not None else []
            if len(self._ordered.read_journal_ids(namespace, last)) != len(last):
                return False
            tail = []
        else:
            start = max(saved.position - 1, 0)
            tail = self._ordered.read_journal_from(namespace, start)
            if saved.position > 0:
                if not tail or tail[0].entry_id != saved.last_id:
                    return False  # the journal is not the one the checkpoint summed up
                tail = tail[1:]
        lessons = (
            self._ordered.read_journal_ids(namespace, saved.lesson_ids) if saved.lesson_ids else []
        )
        if len(lessons) != len(set(saved.lesson_ids)):
            return False
        order = {entry_id: i for i, entry_id in enumerate(saved.lesson_ids)}
        try:
            self.credit.restore(saved)  # the book is read here, once
        except (KeyError, TypeError, ValueError):
            return False
        self.lessons.reload(sorted(lessons, key=lambda entry: order[entry.entry_id]))
        self._moved_to(saved.position, saved.last_id)
        if raw:
            self._saved = (raw, saved.position)
        self._fold_tail(tail)
        self._checkpoint_if_due(head)
        return True

    def _fold_tail(self, tail: Sequence[JournalEntry]) -> None:
        if not tail:
            return
        written = self.position.written
        fresh = [entry for entry in tail if entry.entry_id not in written]
        if leaves_an_erasure_unfinished(entry.entry_id for entry in fresh):
            self.erasures_unchecked = True
        if not self.credit.apply(fresh):
            self.reload()  # an outcome older than one folded in: fold all in time order
            return
        self.lessons.apply(fresh)
        self.position.pending += len(fresh)
        self._moved_to(self.position.position + len(tail), tail[-1].entry_id)

    def _moved_to(self, position: int, last_id: str | None) -> None:
        self.position.position, self.position.last_id = position, last_id
        self.position.written = set()

    def _read_head(self) -> str | None:
        """The journal's head now (``None``: unknown); read it *before* the journal."""
        return None if self._head is None else self._head.journal_head(self._context.namespace)

    def _checkpoint_if_due(self, head: str | None) -> None:
        if self.position.is_due() and self._writable():
            self._write_checkpoint(head)

    def _writable(self) -> bool:
        # A memory opened read-only (another embedding model) writes nothing.
        return not isinstance(self._context.embeddings, RefusingEmbeddings)

    def _write_checkpoint(self, head: str | None) -> None:
        """Save what the journal adds up to, with the ``head`` read before it was read."""
        assert self._ordered is not None
        credit, position = self.credit, self.position.position
        raw = Checkpoint(
            position=position,
            last_id=self.position.last_id,
            book=credit.book.to_state(),
            open_runs=tuple(i for _, shown in credit.open_runs() for i in shown),
            latest=credit.latest,
            closed=credit.closed,
            lesson_ids=tuple(self.lessons.entry_ids),
            head=head,
        ).encode()
        try:
            self._ordered.write_checkpoint(self._context.namespace, raw)
        except Exception:  # a cache that could not be saved: the next open replays more
            _log.warning("could not save the journal checkpoint", exc_info=True)
            return
        self._saved = (raw, position)
        self.position.pending = 0

    def checkpoint_precedes(self, index: int) -> bool:
        """Whether the stored checkpoint sums up none of the entries from ``index`` on.

        True when there is none, or it is the one this memory last wrote or resumed
        from and covers fewer than ``index`` entries (read in stored order): removing
        entries at ``index`` or later leaves what it sums up as it was. False when it
        cannot tell (another writer's checkpoint, say).
        """
        if self._ordered is None:
            return True
        raw = self._ordered.read_checkpoint(self._context.namespace)
        if not raw:
            return True
        return self._saved is not None and raw == self._saved[0] and self._saved[1] <= index


def _weakly(method: Callable[[], None]) -> Callable[[], None]:
    # Called back by the logs through a weak reference: no cycle keeps the store
    # (and an embedded store's folder lock) alive once the memory is dropped.
    ref = weakref.WeakMethod(method)

    def call() -> None:
        bound = ref()
        if bound is not None:
            bound()

    return call


def replayed_checkpoint(store: EpisodeStore, namespace: str) -> list[str]:
    """Where the stored checkpoint disagrees with a replay of the journal it covers.

    Replays the first ``position`` entries (those the checkpoint claims to sum up)
    and compares the utility book, the open runs, the latest outcome and the lessons.

    Returns:
        One line per disagreement; empty when there is no checkpoint or it agrees.
    """
    if not isinstance(store, OrderedJournal):
        return []
    raw = store.read_checkpoint(namespace)
    saved = decode_checkpoint(raw)
    if raw and saved is None:
        return ["the journal checkpoint is unreadable (the next open replays the journal)"]
    if saved is None:
        return []
    entries = store.read_journal_from(namespace, 0)[: saved.position]
    if len(entries) < saved.position or (entries and entries[-1].entry_id != saved.last_id):
        return [
            f"the journal checkpoint covers {saved.position} entries ending at "
            f"{saved.last_id!r}, which the journal does not hold (the next open replays it)"
        ]
    position = JournalPosition(ordered=False)
    cap = saved.book.get("principal_runs")  # the checkpointing memory's, shared or not
    half_life, runs = float(saved.book["half_life"]), None if cap is None else int(cap)
    replayed = CreditLog(store, namespace, half_life, position, lambda: None, principal_runs=runs)
    replayed.reload(entries)
    lessons = LessonLog(store, namespace, position)
    lessons.reload(entries)
    problems = []
    try:
        saved_book = UtilityBook.from_state(saved.book)
    except (KeyError, TypeError, ValueError):
        return ["the journal checkpoint is unreadable (the next open replays the journal)"]
    differing = [
        subject
        for subject in set(saved_book.rows) | set(replayed.book.rows)
        if not _same_row(saved_book.rows.get(subject), replayed.book.rows.get(subject))
    ]
    if differing:
        problems.append(
            f"the journal checkpoint's utility differs from a replay for {len(differing)} "
            f"subject(s), e.g. {sorted(differing)[:3]}"
        )
    saved_open = {i.run_id for i in saved.open_runs}
    replayed_open = {run for run, _ in replayed.open_runs()}
    if saved_open != replayed_open:
        problems.append(
            f"the journal checkpoint's open runs differ from a replay: "
            f"{sorted(saved_open ^ replayed_open)[:3]}"
        )
    if saved.latest != replayed.latest or saved.closed != replayed.closed:
        problems.append(
            f"the journal checkpoint counts {saved.closed} outcomes up to {saved.latest}, "
            f"a replay {replayed.closed} up to {replayed.latest}"
        )
    if set(saved.lesson_ids) != set(lessons.entry_ids):
        problems.append(
            f"the journal checkpoint holds {len(saved.lesson_ids)} lessons, "
            f"a replay {len(lessons.entry_ids)}"
        )
    return problems


def _same_row(left: object, right: object) -> bool:
    if left is None or right is None:
        return left is right
    fields = ("helped", "hurt", "reward_sum", "advantage_sum")
    exact = ("injections", "credited_runs", "updated_at", "failing_streak")
    return all(
        abs(getattr(left, name) - getattr(right, name)) <= 1e-9 * max(1.0, abs(getattr(left, name)))
        for name in fields
    ) and all(getattr(left, name) == getattr(right, name) for name in exact)
