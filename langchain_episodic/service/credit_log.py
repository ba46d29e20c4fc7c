"""A namespace's credit journal, as the memory sees it: runs, outcomes, utilities.

:mod:`langchain_episodic.scoring.credit` is the pure statistic; this module keeps it fed
from the store's journal (:meth:`~langchain_episodic.stores.EpisodeStore.read_journal`)
and writes new entries through the store. The stored journal is the truth: an
outcome is written once per run (the store keeps the first entry under an id), and
every credit re-reads its run's entries, so memories in several processes never
credit one run twice.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Iterable, Sequence

from langchain_episodic.errors import CreditError, EpisodicValueError, MalformedRecordWarning
from langchain_episodic.model.lesson import is_lesson_entry
from langchain_episodic.scoring.credit import (
    UTILITY_HALF_LIFE,
    CreditEvent,
    EpisodeUtility,
    Injection,
    UtilityBook,
    book_from,
    decode_entry,
    encode_credit,
    encode_injection,
)
from langchain_episodic.stores.base import EpisodeStore, JournalEntry

__all__ = ["CreditLog"]


def _decoded(entries: Iterable[JournalEntry]) -> tuple[list[Injection], list[CreditEvent]]:
    injections: list[Injection] = []
    credits: list[CreditEvent] = []
    for entry in entries:
        if is_lesson_entry(entry.entry_id):
            continue  # the lesson log's (langchain_episodic.service.lesson_log)
        try:
            item = decode_entry(entry.entry_id, entry.run_id, entry.payload)
        except EpisodicValueError as error:
            warnings.warn(MalformedRecordWarning(entry.entry_id, str(error)), stacklevel=4)
            continue
        (injections if isinstance(item, Injection) else credits).append(item)  # type: ignore[arg-type]
    injections.sort(key=lambda i: (i.at, i.run_id))
    return injections, credits


class CreditLog:
    """A namespace's injections and outcomes, and the utility they give each episode.

    Args:
        store: The namespace's store.
        namespace: Whose journal this is.
        half_life: How fast credit evidence is forgotten, in seconds.
        entries: The journal, when the caller has just read it (else it is read).
    """

    def __init__(
        self,
        store: EpisodeStore,
        namespace: str,
        half_life: float = UTILITY_HALF_LIFE,
        entries: Sequence[JournalEntry] | None = None,
    ) -> None:
        self._store = store
        self._namespace = namespace
        self.half_life = half_life
        self.injections: dict[str, list[Injection]] = defaultdict(list)
        self.outcomes: dict[str, CreditEvent] = {}
        self.book = UtilityBook(half_life)
        self.reload(entries)

    def reload(self, entries: Sequence[JournalEntry] | None = None) -> None:
        """Read the whole journal back from the store (or take ``entries``, just read)."""
        if entries is None:
            entries = self._store.read_journal(self._namespace)
        injections, credits = _decoded(entries)
        self.injections = defaultdict(list)
        for injection in injections:
            self.injections[injection.run_id].append(injection)
        self.outcomes = {}
        for event in sorted(credits, key=lambda e: (e.at, e.run_id)):
            self.outcomes.setdefault(event.run_id, event)
        self.book = book_from(self.outcomes.values(), injections, half_life=self.half_life)

    def note(self, injection: Injection) -> None:
        """Write an injection record and count it."""
        self._store.append_journal(self._namespace, [JournalEntry(*encode_injection(injection))])
        known = self.injections[injection.run_id]
        if injection not in known:
            known.append(injection)
            self.book.add_injection(injection)

    def _refresh_run(self, run_id: str) -> None:
        # Another memory (or process) may have noted or credited this run.
        injections, credits = _decoded(self._store.read_journal(self._namespace, run_id))
        known = self.injections[run_id]
        for injection in injections:
            if injection not in known:
                known.append(injection)
                self.book.add_injection(injection)
        for event in credits:
            self._count(event)
        if not known:
            del self.injections[run_id]

    def _count(self, event: CreditEvent) -> None:
        if event.run_id in self.outcomes:
            return
        # The book's order is (time, run id), as book_from replays it: ties included.
        key = (event.at, event.run_id)
        latest = max(((e.at, e.run_id) for e in self.outcomes.values()), default=key)
        self.outcomes[event.run_id] = event
        if key >= latest:
            self.book.add_credit(event)
        else:  # out of time order: replay everything so the table stays order-independent
            injections = [i for runs in self.injections.values() for i in runs]
            self.book = book_from(self.outcomes.values(), injections, half_life=self.half_life)

    def close(self, run_id: str, reward: float | None, at: float, by: str | None) -> CreditEvent:
        """Write the run's outcome: its reward, or ``None`` to close it without credit.

        Raises:
            CreditError: No injection record names the run, or its outcome is
                already written (by this memory or any other).
        """
        self._refresh_run(run_id)
        shown = self.injections.get(run_id)
        if not shown:
            raise CreditError(run_id, self._namespace, "has no injection record")
        done = self.outcomes.get(run_id)
        if done is not None:
            raise CreditError(run_id, self._namespace, _describe_outcome(done))
        episode_ids = tuple(dict.fromkeys(i for injection in shown for i in injection.episode_ids))
        # A holdout run is one every prompt of which was held out (a run shown
        # something by any of its prompts saw memory).
        holdout = all(injection.holdout for injection in shown)
        event = CreditEvent(run_id, reward, episode_ids, shown[0].category, at, by, holdout)
        self._store.append_journal(self._namespace, [JournalEntry(*encode_credit(event))])
        self._refresh_run(run_id)
        stored = self.outcomes.get(run_id)
        if stored != event:  # another writer's outcome reached the store first
            raise CreditError(run_id, self._namespace, _describe_outcome(stored))
        return event

    def open_runs(self) -> list[tuple[str, list[Injection]]]:
        """Runs with an injection record and no outcome, oldest first."""
        return sorted(
            ((run, shown) for run, shown in self.injections.items() if run not in self.outcomes),
            key=lambda pair: (pair[1][0].at, pair[0]),
        )

    def credits(self) -> list[CreditEvent]:
        """Every outcome, oldest first."""
        return sorted(self.outcomes.values(), key=lambda e: (e.at, e.run_id))

    def utility(self, episode_id: str) -> EpisodeUtility:
        """The episode's utility row (an empty one, the prior, when never shown)."""
        return self.book.rows.get(episode_id) or EpisodeUtility(
            episode_id, half_life=self.half_life
        )

    def merge(self, entries: Sequence[JournalEntry]) -> None:
        """Append another journal's entries (a migration); ids already held are kept."""
        self._store.append_journal(self._namespace, list(entries))
        self.reload()


def _describe_outcome(event: CreditEvent | None) -> str:
    if event is None:
        return "could not be credited: its outcome entry is unreadable"
    if event.reward is None:
        return f"was closed without credit at {event.at:.0f} (it stayed open too long)"
    return f"was already credited at {event.at:.0f} with reward {event.reward:.3f}"
