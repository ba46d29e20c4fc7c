"""``memory.forgetting``: erasure of episodes and what derives from them, with a receipt.

`Eraser.forget` (what ``memory.forget`` calls) follows lineage. For the erased
episodes (and any lesson ids asked for) it removes:

* the episode records with their vectors (`delete`);
* the lessons derived from them (a lesson may repeat its sources' content, so it is
  removed, not re-derived from what remains: re-deriving needs a model, and a lesson
  that is gone can be distilled again), and, transitively, the lessons revising or
  merging a removed one;
* in the journal, the injection records and run outcomes that name an erased episode
  or a removed lesson: each is rewritten without the erased ids, and an injection
  without its task text (`ERASED_TASK`), so
  the rest of the run's credit stands; the utility book is then rebuilt from the
  journal, so no row of an erased id remains;
* the quarantine- and pin-log events naming an erased id;
* the episodes from the per-category summary and the short-term window.

Order, so that a process killed at any point leaves either the episode or its
tombstone, and running ``forget`` again finishes the job: the erasure record (what
the journal will lose and gain) first, then the tombstones, then the removals, then the
receipt. ``langchain-episodic verify`` reports an erasure record without a receipt.
Last, the store purges what deletion left in its files
(`purge_deleted`) and says what it
guarantees; the receipt carries that sentence. A store whose purge costs time in
proportion to all it holds (`BatchesPurge`: an
embedded Chroma folder's ``VACUUM``) purges once per batch instead: the receipt then
says the scrub is pending and when it runs (on close, on `Eraser.compact`, or
once enough was erased), and a process stopped before it leaves it to the next store
opened on the folder. ``verify`` reports a pending scrub.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import uuid
import warnings
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import replace

from langchain_episodic._async import async_twin
from langchain_episodic._validation import as_ids
from langchain_episodic.errors import (
    EpisodeForgottenError,
    EpisodicValueError,
    MalformedRecordWarning,
    StoreConfigurationError,
)
from langchain_episodic.model.credit import (
    Injection,
    decode_entry,
    encode_credit,
    encode_injection,
    redact_credit,
    redact_injection,
)
from langchain_episodic.model.episode import Episode
from langchain_episodic.model.erasure import (
    ERASURE_RUN,
    TOMBSTONE_RUN,
    ErasurePlan,
    ForgetReceipt,
    check_reason,
    decode_erasure,
    decode_receipt,
    encode_erasure,
    encode_receipt,
    encode_tombstone,
    is_erasure_entry,
    receipt_entry_id,
    tombstone_entry_id,
    tombstone_erasure,
)
from langchain_episodic.model.lesson import Lesson, decode_lesson, is_lesson_entry
from langchain_episodic.scoring.retention import PrunePlan, Retention, plan_prune
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.journal import Journal
from langchain_episodic.service.quarantine import Quarantine
from langchain_episodic.service.summary import Summary
from langchain_episodic.service.tracing import id_digest, traced
from langchain_episodic.service.window import ShortTermWindow
from langchain_episodic.stores.base import (
    BatchesPurge,
    EpisodeStore,
    ForgetsRecords,
    JournalEntry,
    JournalHead,
    OrderedJournal,
    read_journal_entries,
)

__all__ = ["Eraser", "erased_but_stored", "pending_scrub", "unfinished_erasures"]


class Eraser:
    """Forgetting beyond ``memory.forget(ids)``: a namespace, a policy, the receipts.

    Erases episodes of one namespace, following lineage, and applies a retention
    policy.

    Examples:
        >>> from langchain_episodic import EpisodicMemory
        >>> from langchain_episodic.scoring.retention import Retention
        >>> memory = EpisodicMemory()
        >>> plan, receipt = memory.forgetting.prune(Retention(max_episodes=100), dry_run=True)
        >>> plan.episode_ids, receipt, memory.forgetting.receipts()
        ((), None, ())

    Args:
        context: The namespace.
        journal: Its journal (credit and lessons).
        quarantine: Its quarantine and pin logs.
        summary: Its per-category summary.
        window: Its short-term window.
        retention: The retention policy, or ``None``.
    """

    def __init__(
        self,
        context: NamespaceContext,
        journal: Journal,
        quarantine: Quarantine,
        summary: Summary,
        window: ShortTermWindow,
        retention: Retention | None = None,
    ) -> None:
        self._context = context
        self._journal = journal
        self._quarantine = quarantine.quarantine_log
        self._pins = quarantine.pin_log
        self._summary = summary
        self._window = window
        self._retention = retention
        self._written_since_prune = 0
        # With an on_write policy: every stored episode's timestamp, in recording order,
        # kept up to date by writes and erasures, so a prune reads no store (None: not
        # read yet). Bounded by the policy: its cap plus the slack, or what max_age keeps.
        self._times: dict[str, float] | None = None

    def __repr__(self) -> str:
        return f"<forgetting of namespace {self._context.namespace!r}>"

    @property
    def retention(self) -> Retention | None:
        """The retention policy `prune` applies (``None``: everything is kept)."""
        return self._retention

    # ------------------------------------------------------------------ tombstones

    def forgotten(self, episode_ids: str | Iterable[str]) -> dict[str, tuple[str, float]]:
        """The ids among ``episode_ids`` an erasure removed, each with ``(erasure_id, at)``."""
        wanted = {tombstone_entry_id(i): i for i in dict.fromkeys(as_ids(episode_ids))}
        context = self._context
        found = read_journal_entries(context.store, context.namespace, list(wanted), TOMBSTONE_RUN)
        return {
            wanted[entry.entry_id]: told
            for entry in found
            if entry.entry_id in wanted and (told := tombstone_erasure(entry.payload)) is not None
        }

    def refuse_forgotten(self, episode_ids: Sequence[str]) -> None:
        """Raise if an erasure removed any of ``episode_ids`` (the writer's guard).

        Raises:
            EpisodeForgottenError: Naming the ids, and when and by which erasure.
        """
        stones = self.forgotten(episode_ids)
        if stones:
            raise EpisodeForgottenError(self._context.namespace, stones)

    def redact_incoming(self, entries: Sequence[JournalEntry]) -> list[JournalEntry]:
        """``entries`` (another namespace's journal) without what this one erased.

        An injection or outcome naming an episode tombstoned here is redacted as an
        erasure here would have (a lesson derived from one is dropped), so merging a
        journal never brings erased content back.
        """
        named: set[str] = set()
        lessons: dict[str, Lesson] = {}
        for entry in entries:
            with contextlib.suppress(EpisodicValueError):  # not the package's: nothing named
                if is_lesson_entry(entry.entry_id):
                    lesson, _ = decode_lesson(entry.entry_id, entry.run_id, entry.payload)
                    lessons[lesson.lesson_id] = lesson
                    named.update(source.episode_id for source in lesson.sources)
                elif not is_erasure_entry(entry.entry_id):
                    item = decode_entry(entry.entry_id, entry.run_id, entry.payload)
                    named.update(item.episode_ids)
        erased = list(self.forgotten(named))
        if not erased:
            return list(entries)
        removed = _lineage(lessons, erased, ())
        subjects = frozenset(erased) | frozenset(removed)
        plan, _, _ = _plan("incoming", entries, subjects, removed, everything=False)
        dropped = set(plan.remove)
        kept = [entry for entry in entries if entry.entry_id not in dropped]
        return kept + [JournalEntry(*entry) for entry in plan.rewrite]

    def remove_late(self, written: Sequence[Episode], late: Collection[str]) -> list[Episode]:
        """Remove again what was just ``written`` under ids an erasure tombstoned meanwhile.

        Another process's erasure may tombstone an id between the writer's check and
        its write: those records are deleted (on a store that can delete) and
        uncounted. Returns the episodes of ``written`` that stay. Called by the writer
        while it holds the shared side of the writes lock, which keeps this memory's
        erasures out; other records hold other ids.
        """
        context = self._context
        store = context.store
        if not isinstance(store, ForgetsRecords):
            return list(written)
        gone = [episode for episode in written if episode.episode_id in late]
        with context.lock:
            store.delete(context.namespace, [episode.episode_id for episode in gone])
            self._summary.remove(gone)
            self._refill_window(set(late), everything=False)
        return [episode for episode in written if episode.episode_id not in late]

    def noted_write(self, episodes: Sequence[Episode]) -> bool:
        """Note ``episodes`` written; whether the retention policy is due to prune."""
        policy = self.retention
        with self._context.lock:
            self._written_since_prune += len(episodes)
            fresh = self._summary.count == len(episodes)  # the namespace held none before
            if self._times is None and policy is not None and policy.on_write and fresh:
                self._times = {}  # (a prune checks it against a count of the store)
            if self._times is not None:
                self._times.update((e.episode_id, e.timestamp) for e in episodes)
        return policy is not None and policy.due(self._summary.count, self._written_since_prune)

    # ------------------------------------------------------------------ erasure

    def forget(
        self,
        episode_ids: Sequence[str],
        reason: str,
        by: str | None,
        *,
        dry_run: bool = False,
    ) -> ForgetReceipt:
        """Erase ``episode_ids`` (episodes, or lesson ids) and what derives from them.

        Raises:
            EpisodicValueError: ``reason`` is empty, an id is not a non-empty string,
                or an id was never stored here (named; nothing is removed).
            StoreConfigurationError: The store cannot delete.
        """
        check_reason(reason)
        _check_by(by)
        ids = _checked_ids(episode_ids)
        context = self._context

        def erase(store: ForgetsRecords) -> ForgetReceipt:
            lessons = self._journal.lessons.book.lessons
            asked_lessons = [i for i in ids if i in lessons]
            asked_episodes = [i for i in ids if i not in lessons]
            stored = context.store.get(context.namespace, asked_episodes)
            stoned = self.forgotten(asked_episodes)  # an erasure cut short: stored too
            stones = {i: stone for i, stone in stoned.items() if i not in stored}
            unknown = [i for i in asked_episodes if i not in stored and i not in stones]
            if unknown:
                msg = (
                    f"episode_ids={unknown!r} were never stored in namespace="
                    f"{context.namespace!r} (nor forgotten: no tombstone names them); "
                    "nothing was removed"
                )
                raise EpisodicValueError(msg)
            erased = [*stored, *stones]
            return self._erase(
                store, stored, erased, asked_lessons, reason, by, dry_run=dry_run, stoned=stoned
            )

        return self._erasing({"count": len(ids), "dry_run": dry_run}, erase)

    def forget_all(
        self, *, reason: str, by: str | None = None, dry_run: bool = False
    ) -> ForgetReceipt:
        """Erase this whole namespace (one user's memory); a receipt of what went.

        Every episode, lesson, injection, outcome, quarantine and pin event goes; the
        tombstones, the receipts and the embedding model's fingerprint stay, and the
        memory stays usable. Other namespaces are untouched.

        Raises:
            EpisodicValueError: ``reason`` is empty.
            StoreConfigurationError: The store cannot delete.
        """
        check_reason(reason)
        _check_by(by)
        context = self._context

        def erase(store: ForgetsRecords) -> ForgetReceipt:
            stored = {e.episode_id: e for e in context.store.iter_episodes(context.namespace)}
            if not stored and not self._journal.entries() and not self._quarantine.events:
                msg = (
                    f"namespace={context.namespace!r} holds nothing to erase: no episode, "
                    "lesson, journal entry or log event (a mistyped namespace?)"
                )
                raise EpisodicValueError(msg)
            lessons = list(self._journal.lessons.book.lessons)
            return self._erase(
                store, stored, list(stored), lessons, reason, by, everything=True, dry_run=dry_run
            )

        return self._erasing({"all": True, "dry_run": dry_run}, erase)

    def _erasing(
        self, inputs: Mapping[str, object], erase: Callable[[ForgetsRecords], ForgetReceipt]
    ) -> ForgetReceipt:
        """Run ``erase`` traced, under the writes lock, once other writers' work is in."""
        with traced("forget", self._context.namespace, inputs) as trace:
            store = self._deleting_store()
            with self._context.writes, self._context.lock:
                self._journal.sync()  # lessons and runs other writers added since
                self._finish_pending()
                receipt = erase(store)
            if trace.active:
                trace.done(*_forget_trace(receipt))
            return receipt

    def plan_prune(self, retention: Retention | None = None, now: float | None = None) -> PrunePlan:
        """What ``retention`` (the memory's policy when ``None``) removes now."""
        policy = retention if retention is not None else self.retention
        if policy is None:
            msg = (
                "no retention policy: pass retention=Retention(max_age=..., max_episodes=...) "
                "to EpisodicMemory or to prune()"
            )
            raise EpisodicValueError(msg)
        at = self._context.now() if now is None else now
        with self._context.lock:
            episodes = self._episode_times()
        protected = set(self._pins.active) | set(self._quarantine.active)
        return plan_prune(episodes, self._journal.credit.book.rows, protected, policy, at)

    def _episode_times(self) -> list[tuple[str, float]]:
        """``(episode_id, timestamp)`` of every stored episode, in recording order.

        With an ``on_write`` policy, from the timestamps kept as episodes are written and
        erased, once a count of the store says they are all there (another writer's
        episodes, or erasures, make it read the store again); else read from the store.
        """
        context = self._context
        keep = self.retention is not None and self.retention.on_write
        if not keep:
            self._times = None
        elif self._times is not None and len(self._times) == context.store.count(context.namespace):
            return list(self._times.items())
        episodes = [
            (e.episode_id, e.timestamp) for e in context.store.iter_episodes(context.namespace)
        ]
        if keep:
            self._times = dict(episodes)
        return episodes

    def prune(
        self,
        retention: Retention | None = None,
        *,
        current_time: float | None = None,
        by: str | None = None,
        dry_run: bool = False,
    ) -> tuple[PrunePlan, ForgetReceipt | None]:
        """Apply a retention policy (the memory's when ``None``): the plan and its receipt.

        Expired episodes go, then, beyond ``max_episodes``, the least valuable ones
        (never helpful, then low utility, then old); pinned and quarantined ones stay
        (listed in ``plan.protected``). The receipt is ``None`` when nothing goes.

        Raises:
            EpisodicValueError: No policy is given or set.
        """
        with self._context.writes, self._context.lock:
            plan = self.plan_prune(retention, current_time)
            self._written_since_prune = 0
            if not plan.episode_ids:
                return plan, None
            policy = retention if retention is not None else self.retention
            parts = []
            if policy is not None and policy.max_age is not None:
                parts.append(f"{len(plan.expired)} older than max_age={policy.max_age:g}s")
            if policy is not None and policy.max_episodes is not None:
                parts.append(f"{len(plan.over_cap)} beyond max_episodes={policy.max_episodes}")
            reason = "retention policy: " + ", ".join(parts)
            return plan, self.forget(plan.episode_ids, reason, by or "retention", dry_run=dry_run)

    def receipts(self) -> tuple[ForgetReceipt, ...]:
        """The receipt of every finished erasure in this namespace, oldest first.

        A receipt written while its scrub was pending says so until the store has no
        scrub pending; then it says what the store guarantees now.
        """
        store = self._context.store
        entries = store.read_journal(self._context.namespace, ERASURE_RUN)
        found = [decode_receipt(entry.entry_id, entry.payload) for entry in entries]
        receipts = sorted((r for r in found if r is not None), key=lambda r: (r.at, r.erasure_id))
        if any(r.scrub_pending for r in receipts) and isinstance(store, BatchesPurge):
            pending, storage = store.purge_status()
            if not pending:
                receipts = [
                    replace(r, scrub_pending=False, storage=storage) if r.scrub_pending else r
                    for r in receipts
                ]
        return tuple(receipts)

    def compact(self) -> str:
        """Scrub what erasures left in the store's files now; what the store guarantees.

        An embedded Chroma folder is scrubbed once per batch of erasures (and on
        close), as a scrub rewrites the whole database: a receipt with
        ``scrub_pending`` says the erased bytes are still in its files. ``compact``
        scrubs now, in time proportional to the folder's size.

        Raises:
            StoreConfigurationError: The store cannot delete.
        """
        store = self._deleting_store()
        with self._context.writes, self._context.lock:
            return store.purge_deleted()

    def unfinished(self) -> list[str]:
        """Erasures begun and never finished (a killed process): run ``forget`` again."""
        return unfinished_erasures(self._context.store, self._context.namespace)

    aforget, aforget_all = async_twin(forget), async_twin(forget_all)
    aprune, areceipts, acompact = async_twin(prune), async_twin(receipts), async_twin(compact)

    # ------------------------------------------------------------------ internals

    def _deleting_store(self) -> ForgetsRecords:
        store = self._context.store
        if not isinstance(store, ForgetsRecords):
            msg = (
                f"store={store!r} cannot delete (it does not implement ForgetsRecords: "
                "delete, delete_journal, purge_deleted); nothing was removed"
            )
            raise StoreConfigurationError(msg)
        return store

    def _finish_pending(self) -> None:
        """Finish the journal part of erasures a killed process left half done.

        The erasure records are read only when one may be unfinished: on the first
        erasure of this memory, after an erasure here was cut short, or once the
        journal read since holds a record without its receipt (another writer's).
        """
        if not self._journal.erasures_unchecked:
            return
        store = self._deleting_store()
        namespace = self._context.namespace
        for plan in _pending(self._context.store, namespace):
            # Idempotent: an entry already rewritten (its stored payload is the redacted
            # one) is left alone, and the store keeps the first entry under an id.
            self._remove_stale(store, plan)
            stub = ForgetReceipt(plan.erasure_id, namespace, "finished after an interruption", 0.0)
            closing = [JournalEntry(*e) for e in (*plan.rewrite, encode_receipt(stub))]
            self._context.store.append_journal(namespace, closing)
            self._journal.reload()
        self._journal.erasures_unchecked = False

    def _remove_stale(
        self,
        store: ForgetsRecords,
        plan: ErasurePlan,
        entries: Sequence[JournalEntry] | None = None,
    ) -> list[str]:
        """Remove the plan's entries not yet rewritten; the ids removed.

        ``entries``: the journal as the caller read it under the lock, its checkpoint
        already dropped (else the checkpoint is dropped and the entries read by id).
        """
        context = self._context
        wanted = set(plan.remove)
        if entries is None:
            self._drop_checkpoint()
            if plan.everything:  # the record lists no ids: every entry but the erasures' goes
                entries = self._journal.entries()
                wanted = {e.entry_id for e in entries if not is_erasure_entry(e.entry_id)}
            else:
                entries = read_journal_entries(context.store, context.namespace, plan.remove)
        rewrite = {entry_id: payload for entry_id, _, payload in plan.rewrite}
        stale = [
            entry.entry_id
            for entry in entries
            if entry.entry_id in wanted and rewrite.get(entry.entry_id) != entry.payload
        ]
        store.delete_journal(context.namespace, stale)
        return stale

    def _erase(
        self,
        store: ForgetsRecords,
        stored: dict[str, Episode],
        erased_ids: Sequence[str],
        asked_lessons: Sequence[str],
        reason: str,
        by: str | None,
        *,
        everything: bool = False,
        dry_run: bool,
        stoned: Collection[str] | None = None,
    ) -> ForgetReceipt:
        context = self._context
        namespace, at = context.namespace, context.now()
        erasure_id = uuid.uuid4().hex[:16]
        removed_lessons = _lineage(self._journal.lessons.book.lessons, erased_ids, asked_lessons)
        subjects = frozenset(erased_ids) | frozenset(removed_lessons)
        # The journal (synced just before) names an episode only in runs that showed
        # it, and each of those gave it a row in the utility book: without a row, a
        # removed lesson or an erasure of everything, no entry names a subject and the
        # journal is not read (the erasure grows with what it erases, not the journal).
        rows = self._journal.credit.book.rows
        named = everything or bool(removed_lessons) or any(i in rows for i in subjects)
        entries = self._journal.entries() if named else []
        plan, injections, outcomes = _plan(
            erasure_id, entries, subjects, removed_lessons, everything
        )
        quarantine = self._quarantine.events_naming(subjects, everything=everything)
        pins = self._pins.events_naming(subjects, everything=everything)
        receipt = ForgetReceipt(
            erasure_id,
            namespace,
            reason,
            at,
            by,
            episodes=len(stored),
            already_forgotten=len(erased_ids) - len(stored),  # tombstoned before
            injections_redacted=injections,
            outcomes_redacted=outcomes,
            journal_entries_removed=len(set(plan.remove) - _ids(plan.rewrite)),
            lessons_removed=tuple(sorted(removed_lessons)),
            quarantine_entries=quarantine,
            pin_entries=pins,
            dry_run=dry_run,
            episode_ids=tuple(erased_ids),
        )
        if dry_run or not (stored or plan.remove or removed_lessons or quarantine or pins):
            return receipt  # an id forgotten before is a no-op its tombstone explains
        # Intent first, then tombstones, then removals: see the module docstring. The
        # record leads the tombstones in one write, and the redacted entries the receipt
        # in another (a journal write costs about what recording an episode does).
        stones = self.forgotten(erased_ids) if stoned is None else stoned
        tombstones = [encode_tombstone(i, erasure_id, at) for i in erased_ids if i not in stones]
        opening = [JournalEntry(*e) for e in (encode_erasure(plan, at), *tombstones)]
        # The journal's head (where the store keeps one) says "writing" from the
        # record to the receipt: renewed once, not after each of the three writes.
        self._journal.erasures_unchecked = True  # until its receipt is written
        head = context.store if isinstance(context.store, JournalHead) else None
        with head.journal_writes(namespace) if head else contextlib.nullcontext():
            context.store.append_journal(namespace, opening)
            # A checkpoint that sums up an entry to be removed goes first; one that stops
            # before them all (the usual case: an episode shown lately) stays valid.
            first = _first_index(entries, plan.remove) if named and not everything else 0
            kept_checkpoint = not named or (
                not removed_lessons and self._journal.checkpoint_precedes(first)
            )
            if not kept_checkpoint:
                self._drop_checkpoint()
            store.delete(namespace, list(stored))
            self._forget_times(stored, everything=everything)
            # A log that names none of them (read just above) is not read again.
            if quarantine:
                self._quarantine.remove_naming(subjects, everything=everything)
            if pins:
                self._pins.remove_naming(subjects, everything=everything)
            # The entries just read, under the lock, say which are there and which rewritten.
            read = None if everything else entries
            deleted = self._remove_stale(store, plan, read) if named else []
            removed = len(set(deleted) - _ids(plan.rewrite))
            # Every deletion is done: a purge due now leaves none of them behind.
            pending, storage = _purge(store)
            receipt = replace(
                receipt, journal_entries_removed=removed, storage=storage, scrub_pending=pending
            )
            closing = [JournalEntry(*e) for e in (*plan.rewrite, encode_receipt(receipt))]
            context.store.append_journal(namespace, closing)
        self._journal.erasures_unchecked = False
        self._summary.remove(list(stored.values()))
        self._refill_window(set(erased_ids), everything=everything)
        appended = [entry.entry_id for entry in [*opening, *closing]]
        if everything or removed_lessons:  # the lesson log too: fold the journal afresh
            self._journal.reload()
            self._journal.checkpoint()
        elif named:  # entries were removed (positions moved): what the logs counted goes
            self._journal.fold_erasure(entries, deleted, appended, subjects)
            if not kept_checkpoint:
                self._journal.checkpoint()
        else:  # only appended: the erasure's own entries, which no log counts
            self._journal.position.wrote(appended)
        # Other writers' entries written meanwhile are folded in by the next sync, as
        # after any write of this memory's own.
        return receipt

    def _forget_times(self, erased: Iterable[str], *, everything: bool) -> None:
        if self._times is None:
            return
        if everything:
            self._times.clear()
            return
        for episode_id in erased:
            self._times.pop(episode_id, None)

    def _drop_checkpoint(self) -> None:
        # Positions count stored entries: once one is removed, a checkpoint's position
        # means another entry (and its book holds the erased ids' rows).
        store = self._context.store
        if isinstance(store, OrderedJournal) and store.read_checkpoint(self._context.namespace):
            store.write_checkpoint(self._context.namespace, "")

    def _refill_window(self, erased: Collection[str], *, everything: bool) -> None:
        if everything:
            self._window.clear()
            return
        context = self._context
        self._window.drop(erased, context.store, context.namespace, max(self._summary.next_seq, 1))


def _ids(entries: Iterable[tuple[str, str, str]]) -> set[str]:
    return {entry[0] for entry in entries}


def _check_by(by: object) -> None:
    if by is not None and (not isinstance(by, str) or not by.strip()):
        msg = f"by={by!r} is invalid: must be a non-empty string or None"
        raise EpisodicValueError(msg)


def _checked_ids(episode_ids: Sequence[str]) -> list[str]:
    ids = list(episode_ids)
    if not ids:
        msg = "episode_ids=[] is invalid: name at least one episode (forget_all erases all)"
        raise EpisodicValueError(msg)
    for index, episode_id in enumerate(ids):
        if not isinstance(episode_id, str) or not episode_id:
            msg = f"episode_ids[{index}]={episode_id!r} is invalid: must be a non-empty string"
            raise EpisodicValueError(msg)
    return list(dict.fromkeys(ids))


def _lineage(lessons: dict[str, Lesson], erased: Sequence[str], asked: Sequence[str]) -> set[str]:
    """The lessons to remove: asked for, derived from an erased episode, and their heirs."""
    erased_set = set(erased)
    removed = set(asked) | {
        lesson_id
        for lesson_id, lesson in lessons.items()
        if any(source.episode_id in erased_set for source in lesson.sources)
    }
    # A revision or merge of a removed lesson may repeat its text.
    while heirs := {
        lesson_id
        for lesson_id, lesson in lessons.items()
        if lesson_id not in removed and removed.intersection(lesson.supersedes)
    }:
        removed |= heirs
    return removed


_FEW_SUBJECTS = 8


def _first_index(entries: Sequence[JournalEntry], entry_ids: Collection[str]) -> int:
    """The position of the first of ``entry_ids`` in ``entries`` (their count if none)."""
    wanted = set(entry_ids)
    return next((i for i, entry in enumerate(entries) if entry.entry_id in wanted), len(entries))


def _plan(
    erasure_id: str,
    entries: Sequence[JournalEntry],
    subjects: frozenset[str],
    lessons: Collection[str],
    everything: bool,
) -> tuple[ErasurePlan, int, int]:
    """The journal part of an erasure: entries to remove, redacted ones to write; counts."""
    remove: list[str] = []
    rewrite: list[tuple[str, str, str]] = []
    injections = outcomes = 0
    lesson_entries = {f"lesson:{lesson_id}" for lesson_id in lessons}
    # An entry names an episode as a JSON string (escaped or not, by the package's
    # version): a payload holding neither spelling of any subject is not decoded (a
    # search cheaper than a decode while the subjects are few).
    few = len(subjects) <= _FEW_SUBJECTS
    spellings = {json.dumps(i, ensure_ascii=ascii) for i in subjects for ascii in (True, False)}
    for entry in entries:
        if is_erasure_entry(entry.entry_id):
            continue
        if everything or entry.entry_id in lesson_entries:
            remove.append(entry.entry_id)
            continue
        if is_lesson_entry(entry.entry_id):
            continue
        if few and not any(spelling in entry.payload for spelling in spellings):
            continue
        try:
            item = decode_entry(entry.entry_id, entry.run_id, entry.payload)
        except EpisodicValueError:
            continue  # not the package's entry: nothing of an episode to find in it
        if not subjects.intersection(item.episode_ids):
            continue
        remove.append(entry.entry_id)
        if isinstance(item, Injection):
            injections += 1
            rewrite.append(encode_injection(redact_injection(item, subjects)))
        else:
            outcomes += 1
            rewrite.append(encode_credit(redact_credit(item, subjects)))
    plan = ErasurePlan(erasure_id, tuple(remove), tuple(rewrite), everything)
    return plan, injections, outcomes


def _pending(store: EpisodeStore, namespace: str) -> list[ErasurePlan]:
    """The erasures of ``namespace`` whose record is written and whose receipt is not."""
    entries = store.read_journal(namespace, ERASURE_RUN)
    done = {entry.entry_id for entry in entries}
    plans = (decode_erasure(entry.entry_id, entry.payload) for entry in entries)
    found = [p for p in plans if p is not None and receipt_entry_id(p.erasure_id) not in done]
    return sorted(found, key=lambda plan: plan.erasure_id)


def _purge(store: ForgetsRecords) -> tuple[bool, str]:
    """Purge after an erasure: at once, or batched where the store batches it."""
    if isinstance(store, BatchesPurge):
        return store.purge_when_due()
    return False, store.purge_deleted()


def pending_scrub(store: EpisodeStore) -> str | None:
    """What a pending scrub of the store's files says (for ``verify``); ``None``: none."""
    pending, sentence = store.purge_status() if isinstance(store, BatchesPurge) else (False, "")
    return sentence if pending else None


def unfinished_erasures(store: EpisodeStore, namespace: str) -> list[str]:
    """The ids of the erasures begun in ``namespace`` and never finished (for ``verify``)."""
    return [plan.erasure_id for plan in _pending(store, namespace)]


def erased_but_stored(store: EpisodeStore, namespace: str, page_size: int = 1000) -> list[str]:
    """Stored episodes whose id has a tombstone: an erasure stopped before removing them.

    Reads every episode id once, and the tombstones of a page of them at a time.
    """
    found: list[str] = []
    with warnings.catch_warnings():  # verify lists unreadable records itself
        warnings.simplefilter("ignore", MalformedRecordWarning)
        ids = (episode.episode_id for episode in store.iter_episodes(namespace, page_size))
        while page := list(itertools.islice(ids, page_size)):
            wanted = {tombstone_entry_id(i): i for i in page}
            stones = read_journal_entries(store, namespace, list(wanted), TOMBSTONE_RUN)
            found.extend(sorted(wanted[entry.entry_id] for entry in stones))
    return found


def _forget_trace(receipt: ForgetReceipt) -> tuple[dict[str, object], dict[str, object]]:
    """An erasure's trace outputs and span attributes: counts and digests, never an id."""
    erased = sorted(id_digest(i) for i in (*receipt.episode_ids, *receipt.lessons_removed))
    outputs: dict[str, object] = {
        "erasure_id": receipt.erasure_id,
        "dry_run": receipt.dry_run,
        "episodes": receipt.episodes,
        "already_forgotten": receipt.already_forgotten,
        "lessons_removed": len(receipt.lessons_removed),
        "journal_entries_removed": receipt.journal_entries_removed,
        "injections_redacted": receipt.injections_redacted,
        "outcomes_redacted": receipt.outcomes_redacted,
        "scrub_pending": receipt.scrub_pending,
        "erased_digests": erased,
    }
    attributes: dict[str, object] = {
        "episodic.erased.count": receipt.episodes,
        "episodic.erased.digests": erased,
    }
    return outputs, attributes
