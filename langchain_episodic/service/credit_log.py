"""A namespace's credit journal, as the memory sees it: runs, outcomes, utilities.

`langchain_episodic.scoring.credit` is the pure statistic; this module keeps it fed
from the store's journal (`read_journal`)
and writes new entries through the store. The stored journal is the truth: an
outcome is written once per run (the store keeps the first entry under an id), and
every credit reads its run's outcome by id after writing it, so memories in several
processes never credit one run twice. A run noted by another process is read
from the journal when this memory closes it; a run noted here and also by another
process counts the other's injections once this memory next reads the journal
(`reload`, or a checkpoint).
"""

from __future__ import annotations

import threading
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Callable, Collection, Iterable, Sequence

from langchain_episodic.errors import (
    CreditError,
    EpisodicValueError,
    MalformedRecordWarning,
    describe_moment,
)
from langchain_episodic.model.credit import (
    CreditEvent,
    Injection,
    decode_entry,
    encode_credit,
    encode_injection,
    outcome_entry_id,
    redact_injection,
)
from langchain_episodic.model.erasure import is_erasure_entry
from langchain_episodic.model.lesson import is_lesson_entry
from langchain_episodic.scoring.credit import EpisodeUtility, UtilityBook, book_from
from langchain_episodic.service.checkpoint import Checkpoint, JournalPosition
from langchain_episodic.stores.base import EpisodeStore, JournalEntry, read_journal_entries

__all__ = ["CLOSED_HERE", "CreditLog", "describe_outcome"]

CLOSED_HERE = 1024
"""Runs whose outcome a credit log remembers after closing them (the most recent)."""


def _decoded(entries: Iterable[JournalEntry]) -> tuple[list[Injection], list[CreditEvent]]:
    injections: list[Injection] = []
    credits: list[CreditEvent] = []
    for entry in entries:
        if is_lesson_entry(entry.entry_id) or is_erasure_entry(entry.entry_id):
            continue  # the lesson log's, or an erasure's (tombstones, receipts)
        try:
            item = decode_entry(entry.entry_id, entry.run_id, entry.payload)
        except EpisodicValueError as error:
            warnings.warn(MalformedRecordWarning(entry.entry_id, str(error)), stacklevel=4)
            continue
        (injections if isinstance(item, Injection) else credits).append(item)  # type: ignore[arg-type]
    injections.sort(key=lambda i: (i.at, i.run_id))
    return injections, credits


class CreditLog:
    """A namespace's open runs, and the utility its outcomes give each episode.

    What it holds stays the same size however long the journal grows: the utility
    book, the runs still open, and the key of the latest outcome. Outcomes are read
    from the store when asked for (`credits`, `outcome`: a run's by its
    id); only the last `CLOSED_HERE` runs this log closed keep theirs
    (`closed_here`), so that closing one again (``memory.record`` of the
    episode the middleware just credited) reads nothing.

    Args:
        store: The namespace's store.
        namespace: Whose journal this is.
        half_life: How fast credit evidence is forgotten, in seconds.
        position: How far the journal has been read (shared with the lesson log).
        sync: Folds into every log what the journal holds beyond ``position`` (the
            journal's `sync`): called
            when another writer's outcome is found, and for an outcome older than the
            latest folded in (the book folds outcomes in time order: a replay).
        turn: A condition on the memory's lock, which guards this log: outcomes
            written concurrently (`close_concurrently`) wait on it for their
            turn to be folded in (a fresh one when not given).
        principal_runs: A shared memory's cap on one principal's runs counted for
            one episode (`UtilityBook`);
            ``None``: no cap.

    In a shared memory ``own_episodes`` is set (`recorded_by`): an outcome
    credited ``by`` a principal leaves out the episodes that principal recorded, so
    that no principal's runs raise (or lower) its own episodes.
    """

    def __init__(
        self,
        store: EpisodeStore,
        namespace: str,
        half_life: float,
        position: JournalPosition,
        sync: Callable[[], None],
        *,
        turn: threading.Condition | None = None,
        principal_runs: int | None = None,
    ) -> None:
        self._store = store
        self.principal_runs = principal_runs
        self._turn = turn if turn is not None else threading.Condition(threading.RLock())
        self._settling = 0  # callers waiting for the outcomes in flight to end
        self._namespace = namespace
        self._position = position
        self._sync = sync
        self.half_life = half_life
        self.injections: dict[str, list[Injection]] = defaultdict(list)  # open runs only
        self.book = UtilityBook(half_life, principal_runs)
        self.latest: tuple[float, str] | None = None
        self.closed = 0
        self._closed_here: OrderedDict[str, CreditEvent] = OrderedDict()
        # (at, run_id) of the outcomes begun here and not yet folded in: written
        # without the memory's lock, folded in this order once the earlier ones are.
        self._in_flight: dict[tuple[float, str], CreditEvent | None] = {}
        self._unfolded = False  # an ended outcome could not be folded in its turn
        # A shared memory's: (by, ids) -> the ids among them that principal recorded.
        self.own_episodes: Callable[[str, Sequence[str]], Collection[str]] | None = None

    def closed_here(self, run_id: str) -> CreditEvent | None:
        """The outcome this log wrote (or found stored) for ``run_id`` lately, or ``None``.

        An outcome is stored once per run and never replaced; only an erasure rewrites
        the journal, and it reloads this log, which forgets them.
        """
        return self._closed_here.get(run_id)

    def _remember_closed(self, event: CreditEvent) -> None:
        self._closed_here[event.run_id] = event
        self._closed_here.move_to_end(event.run_id)
        while len(self._closed_here) > CLOSED_HERE:
            self._closed_here.popitem(last=False)

    def reload(self, entries: Sequence[JournalEntry]) -> None:
        """Fold the whole journal (``entries``, just read) in from scratch."""
        self._closed_here.clear()  # an erasure may have redacted them
        injections, credits = _decoded(entries)
        outcomes = _first_outcomes(credits)
        self.injections = defaultdict(list)
        for injection in injections:
            if injection.run_id not in outcomes:
                self.injections[injection.run_id].append(injection)
        self.book = book_from(
            outcomes.values(),
            injections,
            half_life=self.half_life,
            principal_runs=self.principal_runs,
        )
        self.latest = max(((e.at, e.run_id) for e in outcomes.values()), default=None)
        self.closed = len(outcomes)

    def forget(self, subjects: frozenset[str]) -> None:
        """Drop ``subjects`` (erased episodes) as if the redacted journal were read afresh.

        Their rows leave the book, the open runs' injections lose their ids and task
        text (as the erasure rewrote them), and the outcomes this log remembers
        closing are forgotten (an erasure may have redacted them).
        """
        self._closed_here.clear()
        self.book.forget(subjects)
        for run_id, shown in self.injections.items():
            if any(subjects.intersection(injection.episode_ids) for injection in shown):
                redacted = (
                    redact_injection(injection, subjects)
                    if subjects.intersection(injection.episode_ids)
                    else injection
                    for injection in shown
                )
                # Two prompts alike once redacted are one stored entry (one id).
                self.injections[run_id] = list(dict.fromkeys(redacted))

    def restore(self, checkpoint: Checkpoint) -> None:
        """Take the state a checkpoint saved (the journal up to its position)."""
        self._closed_here.clear()
        self.book = UtilityBook.from_state(checkpoint.book)
        self.book.principal_runs = self.principal_runs  # the memory's setting, as opened
        self.injections = defaultdict(list)
        for injection in checkpoint.open_runs:
            self.injections[injection.run_id].append(injection)
        self.latest, self.closed = checkpoint.latest, checkpoint.closed

    def apply(self, entries: Sequence[JournalEntry]) -> bool:
        """Fold in entries written since (by others); ``False`` when a replay is needed.

        An outcome older than the latest folded in cannot be added one event at a
        time (the book folds outcomes in time order): the caller then replays.
        """
        injections, credits = _decoded(entries)
        for injection in injections:
            self._add_injection(injection)
        in_order = sorted(credits, key=lambda e: (e.at, e.run_id))
        return all(self._fold(event) for event in in_order)  # stops at the first refused

    def _add_injection(self, injection: Injection) -> None:
        known = self.injections[injection.run_id]
        if injection in known:
            return
        self.book.add_injection(injection, (i for noted in known for i in noted.episode_ids))
        known.append(injection)

    def _fold(self, event: CreditEvent) -> bool:
        key = (event.at, event.run_id)
        if self.latest is not None and key < self.latest:
            return False
        self.book.add_credit(event)
        self.latest = key
        self.closed += 1
        self.injections.pop(event.run_id, None)
        return True

    def note(self, injection: Injection) -> None:
        """Write an injection record and count it."""
        if self.write_injection(injection):
            self.count_injection(injection)

    def write_injection(self, injection: Injection) -> bool:
        """Write an injection record, unless it is counted already; whether it was written.

        Touches only the store, so the caller need not hold the memory's lock: a
        record written twice is kept once (the store keeps the first entry under an id).
        """
        if injection in self.injections.get(injection.run_id, ()):
            return False
        self._store.append_journal(self._namespace, [JournalEntry(*encode_injection(injection))])
        return True

    def count_injection(self, injection: Injection) -> None:
        """Count a written injection record (once, however often it is counted)."""
        self._add_injection(injection)
        self._position.wrote([encode_injection(injection)[0]])

    def outcome(self, run_id: str) -> CreditEvent | None:
        """The run's outcome as stored, read by its id (``None``: still open, or unknown)."""
        entry_id = outcome_entry_id(run_id)
        found = read_journal_entries(self._store, self._namespace, [entry_id], run_id)
        _, credits = _decoded(e for e in found if e.entry_id == entry_id)
        return credits[0] if credits else None

    def _shown(self, run_id: str) -> list[Injection]:
        shown = self.injections.get(run_id)
        if shown:
            return shown
        # Noted by another memory (or process) since this one last read the journal:
        # read the run's entries (a filtered read, only for runs unknown here).
        injections, _ = _decoded(self._store.read_journal(self._namespace, run_id))
        for injection in injections:
            self.count_injection(injection)
        return self.injections.get(run_id) or []

    def settle(self) -> None:
        """Under the memory's lock: fold in every outcome written concurrently, once ended.

        What reads the journal, folds it or saves what it adds up to calls this first:
        an outcome in flight is stored but not folded in yet. It waits for those still
        being written; new ones wait meanwhile.
        """
        self._fold_ready()
        if not self._in_flight:
            return
        self._settling += 1
        try:
            while self._in_flight:  # the first is being written: its writer wakes us
                self._turn.wait()
                self._fold_ready()
        finally:
            self._settling -= 1
            self._turn.notify_all()

    def close_concurrently(
        self, run_id: str, reward: float, clock: Callable[[], float], by: str | None
    ) -> CreditEvent:
        """`close` (``read_open``) with the store's round trips outside the lock.

        The outcome is timed (``clock``) and built under the memory's lock, written and
        read back without it, then folded in under it in ``(at, run_id)`` order: now if
        every outcome begun before it here is folded in, else by whichever call ends the
        last of those. Runs credited at once wait neither on each other's round trips
        nor for their turn, and the book still folds outcomes in time order. Call
        without holding the lock.

        Raises:
            CreditError: As `close`.
        """
        with self._turn:
            self._turn.wait_for(lambda: not self._settling)
            event = self._begin(run_id, reward, clock(), by, read_open=True)
        return self._write_and_end(event)

    def close(
        self,
        run_id: str,
        reward: float | None,
        at: float,
        by: str | None,
        *,
        read_open: bool = False,
    ) -> CreditEvent:
        """Write the run's outcome: its reward, or ``None`` to close it without credit.

        ``read_open``: the outcome is not read before writing (the caller read it as
        missing, or most runs are open): an outcome already stored is still found, as
        it is read again after writing, and the store keeps the first under an id.
        All in one go under the memory's lock, once no outcome is in flight.

        Raises:
            CreditError: No injection record names the run, or its outcome is
                already written (by this memory or any other).
        """
        self.settle()
        return self._write_and_end(self._begin(run_id, reward, at, by, read_open=read_open))

    def _begin(
        self, run_id: str, reward: float | None, at: float, by: str | None, *, read_open: bool
    ) -> CreditEvent:
        """The run's outcome, in flight from now until `_end`; under the lock."""
        done = None if read_open else self.outcome(run_id)
        if done is not None:
            self._sync()  # another writer's outcome: fold it in (and what came with it)
            self.injections.pop(run_id, None)
            raise CreditError(run_id, self._namespace, describe_outcome(done))
        shown = self._shown(run_id)
        if not shown:
            self.injections.pop(run_id, None)
            raise CreditError(run_id, self._namespace, "has no injection record")
        episode_ids = tuple(dict.fromkeys(i for injection in shown for i in injection.episode_ids))
        if self.own_episodes is not None and by is not None and episode_ids:
            # A shared memory: a principal's runs are no evidence for what it recorded.
            own = self.own_episodes(by, episode_ids)
            episode_ids = tuple(i for i in episode_ids if i not in own)
        # A holdout run is one every prompt of which was held out (a run shown
        # something by any of its prompts saw memory).
        holdout = all(injection.holdout for injection in shown)
        # The reward is evidence for the policy of the run's first prompt that had one.
        policy = next((i.policy for i in shown if i.policy is not None), None)
        event = CreditEvent(run_id, reward, episode_ids, shown[0].category, at, by, holdout, policy)
        self._in_flight[event.at, event.run_id] = None
        return event

    def _write_and_end(self, event: CreditEvent) -> CreditEvent:
        """Store ``event`` and read the run's outcome back (no lock needed), then `_end` it."""
        try:
            self._store.append_journal(self._namespace, [JournalEntry(*encode_credit(event))])
            stored = self.outcome(event.run_id)
        except BaseException:
            with self._turn:
                self._end(event, None, written=False)
            raise
        with self._turn:
            self._end(event, stored)
        return event

    def _end(self, event: CreditEvent, stored: CreditEvent | None, *, written: bool = True) -> None:
        """Under the lock: ``event``'s write is over, the store holding ``stored``.

        Folds in the outcomes whose turn it is (this one, once the earlier ones are);
        raises `CreditError` when another writer's outcome reached the store first.
        """
        key = (event.at, event.run_id)
        try:
            if written and stored == event:
                self._remember_closed(event)
                self._in_flight[key] = event  # to be folded in its turn
                return
            del self._in_flight[key]
        finally:
            try:
                self._fold_ready()
            finally:
                self._turn.notify_all()
        if written:  # another writer's outcome reached the store first
            self._sync()
            self.injections.pop(event.run_id, None)
            if stored is not None:
                self._remember_closed(stored)
            raise CreditError(event.run_id, self._namespace, describe_outcome(stored))

    def _fold_ready(self) -> None:
        """Fold in the ended outcomes that no outcome begun before them still holds up."""
        while self._in_flight:
            first = min(self._in_flight)
            event = self._in_flight[first]
            if event is None:  # still being written
                return
            del self._in_flight[first]
            if self._fold(event):
                self._position.wrote([outcome_entry_id(event.run_id)])
            else:
                # Older than an outcome folded in already (another writer's, read
                # since): left unread, so the next read of the journal replays in order.
                self._unfolded = True
        if self._unfolded:
            self._unfolded = False
            self._sync()

    def open_runs(self) -> list[tuple[str, list[Injection]]]:
        """Runs with an injection record and no outcome, oldest first."""
        return sorted(
            ((run, shown) for run, shown in self.injections.items() if shown),
            key=lambda pair: (pair[1][0].at, pair[0]),
        )

    def credits(self) -> list[CreditEvent]:
        """Every outcome, oldest first: read from the journal (a report's cost, not a run's)."""
        _, credits = _decoded(self._store.read_journal(self._namespace))
        return list(_first_outcomes(credits).values())

    def utility(self, episode_id: str) -> EpisodeUtility:
        """The episode's utility row (an empty one, the prior, when never shown)."""
        return self.book.rows.get(episode_id) or EpisodeUtility(
            episode_id, half_life=self.half_life
        )


def _first_outcomes(credits: Iterable[CreditEvent]) -> dict[str, CreditEvent]:
    """Each run's outcome (the earliest, should a journal hold two), in time order."""
    outcomes: dict[str, CreditEvent] = {}
    for event in sorted(credits, key=lambda e: (e.at, e.run_id)):
        outcomes.setdefault(event.run_id, event)
    return outcomes


def describe_outcome(event: CreditEvent | None) -> str:
    """How a `CreditError` says a run's outcome is in."""
    if event is None:
        return "could not be credited: its outcome entry is unreadable"
    if event.reward is None:
        return f"was closed without credit {describe_moment(event.at)} (it stayed open too long)"
    return f"was already credited {describe_moment(event.at)} with reward {event.reward:.3f}"


def recorded_by(
    store: EpisodeStore, namespace: str, principal: str, episode_ids: Sequence[str]
) -> set[str]:
    """The ids among ``episode_ids`` whose episode ``principal`` recorded (its source says)."""
    found = store.get(namespace, list(episode_ids))
    return {
        episode_id
        for episode_id, episode in found.items()
        if episode.source is not None and episode.source.principal == principal
    }
