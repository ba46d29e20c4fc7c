"""The credit loop of one namespace: what each run was shown, how it ended, what it taught.

A prompt built for a run notes its episodes and lessons (:meth:`Runs.note`); the run's
outcome credits them (:meth:`Runs.credit`, strict) or closes the run quietly
(:meth:`Runs.close`, the one place every integration and :meth:`record` close a run).
The statistic is :mod:`langchain_episodic.scoring.credit`; the stored journal is
:mod:`langchain_episodic.service.credit_log`.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable

import numpy as np

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.errors import CreditError, EpisodicValueError
from langchain_episodic.model.episode import LESSON_ID_PREFIX, TaskDescription
from langchain_episodic.scoring.credit import (
    CreditEvent,
    EpisodeUtility,
    Injection,
    SubjectKind,
    check_credit,
)
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import CreditLog, describe_outcome
from langchain_episodic.stores.base import require_stored

__all__ = ["Runs"]

_log = logging.getLogger(__name__)
_KINDS = ("episode", "lesson")


def _check_kind(kind: object) -> None:
    if kind is not None and kind not in _KINDS:
        msg = f"kind={kind!r} is invalid: must be 'episode', 'lesson' or None"
        raise EpisodicValueError(msg)


class Runs:
    """Runs of one namespace: injections noted, outcomes written, utilities read.

    Args:
        context: The namespace.
        log: Its credit journal.
        open_run_ttl: Seconds a run may stay open before :meth:`expire` closes it;
            ``None``: never.
    """

    def __init__(
        self,
        context: NamespaceContext,
        log: CreditLog,
        open_run_ttl: float | None,
        holdout: float = 0.0,
        rng: np.random.Generator | None = None,
    ) -> None:
        self._context = context
        self._log = log
        self.open_run_ttl = open_run_ttl
        self.holdout = holdout
        self.rng = rng if rng is not None else np.random.default_rng()
        self._drawn: dict[str, bool] = {}
        self._demoted: tuple[object, frozenset[str]] | None = None

    def is_holdout(self, run_id: str) -> bool:
        """Whether run ``run_id`` is shown no memory: drawn once per run, then kept.

        A run already noted keeps what its injections say (in this process or, after
        :meth:`~langchain_episodic.areas.MemoryRuns.reload`, another's); a new
        run is a holdout run with probability ``holdout``, drawn from the memory's
        random generator (seeded, reproducible).
        """
        noted = self._log.injections.get(run_id)
        if noted:
            return all(injection.holdout for injection in noted)
        if self.holdout == 0.0:
            return False  # this memory holds nothing back (a closed run's prompt is moot)
        closed = self._log.outcome(run_id)  # one read by id: runs closed are not kept
        if closed is not None:
            return closed.holdout
        with self._context.lock:
            if run_id not in self._drawn:
                self._drawn[run_id] = bool(self.rng.random() < self.holdout)
            return self._drawn[run_id]

    def note(
        self,
        run_id: str,
        shown_ids: Iterable[str],
        task: TaskDescription,
        thread_id: str | None = None,
        holdout: bool = False,
        *,
        known_stored: Collection[str] = (),
    ) -> Injection:
        """Write that run ``run_id`` was shown ``shown_ids`` (episodes and lessons).

        ``holdout=True`` notes a holdout run: shown nothing, by chance.
        ``known_stored``: ids the caller just read from the store (a replay's recall),
        not checked again.

        Raises:
            EpisodicValueError: ``run_id`` or an id is empty, ``shown_ids`` is a
                single string (a sequence of ids is expected), or a holdout run is
                noted with ids.
        """
        if isinstance(shown_ids, str):
            msg = (
                f"episode_ids={shown_ids!r} is invalid: must be a sequence of ids, "
                f"not one string (write [{shown_ids!r}])"
            )
            raise EpisodicValueError(msg)
        injection = Injection(
            run_id,
            tuple(shown_ids),
            task.description,
            task.category.value,
            self._context.now(),
            thread_id,
            holdout,
        )
        self._require_stored(tuple(i for i in injection.episode_ids if i not in known_stored))
        # The journal write needs no lock (its entry id is the injection's own); the
        # lock guards only the counting, so concurrent runs do not wait on each
        # other's round trips.
        self._log.write_injection(injection)
        with self._context.lock:
            self._log.count_injection(injection)
            self._drawn.pop(run_id, None)  # the journal now says what the run is
        return injection

    def _require_stored(self, shown_ids: tuple[str, ...]) -> None:
        """Refuse episode ids the namespace does not hold (lesson ids are the lessons')."""
        context = self._context
        require_stored(
            context.store,
            context.namespace,
            [i for i in shown_ids if not i.startswith(LESSON_ID_PREFIX)],
            "a run can only be shown stored episodes; nothing was noted",
        )

    def credit(self, run_id: str, reward: float, by: str | None = None) -> CreditEvent:
        """Credit the run's reward to everything it was shown; strict.

        Raises:
            EpisodicValueError: ``reward`` is not in [0, 1], or ``by`` is empty;
                checked before anything is read.
            CreditError: The run has no injection record, or its outcome is written.
        """
        reward = check_credit(run_id, reward, by)
        known = self._log.closed_here(run_id)
        if known is not None:  # closed by this memory lately: nothing to read
            raise CreditError(run_id, self._context.namespace, describe_outcome(known))
        # Most runs are open when credited, so the outcome is not read first: the store
        # keeps the first outcome under the run's id, and the read after writing finds
        # another writer's (then this one was not stored, and CreditError says whose).
        # Its write and read-back hold no lock: runs credited at once overlap them.
        return self._log.close_concurrently(run_id, reward, self._context.now, by)

    def close(self, run_id: str, reward: float, by: str | None = None) -> CreditEvent | None:
        """Close the run with its reward, once, whoever asks: the run's outcome, or ``None``.

        Idempotent: a run already closed (by this or another memory or process)
        keeps its outcome, which is returned; a run that was shown nothing has no
        outcome (``None``). The caller's episode or answer already exists, so a
        journal that fails is logged, never raised.

        Raises:
            EpisodicValueError: ``reward`` or ``by`` is invalid (a caller's bug).
        """
        reward = check_credit(run_id, reward, by)
        # A run this memory closed a moment ago (the middleware credits its run, then
        # records the episode naming it, which closes it again) keeps that outcome:
        # no read of the store, and no journal read-through for "another writer's".
        known = self._log.closed_here(run_id)
        if known is not None:
            return known
        try:
            return self.credit(run_id, reward, by)
        except CreditError:
            return self._log.outcome(run_id)
        except Exception:  # credit must never break the run it observes
            _log.warning("could not credit run_id=%r", run_id, exc_info=True)
            return None

    def expire(self, older_than: float | None = None) -> int:
        """Close without credit every run open longer than ``older_than`` seconds.

        Returns:
            How many runs were closed.
        """
        ttl = self.open_run_ttl if older_than is None else check_number("older_than", older_than, 0)
        if ttl is None:
            return 0
        now = self._context.now()
        closed = 0
        with self._context.lock:
            for run_id, shown in self._log.open_runs():
                if now - max(i.at for i in shown) <= ttl:
                    continue
                try:
                    self._log.close(run_id, None, now, "open_run_ttl")
                    closed += 1
                except CreditError:
                    continue  # another writer closed it meanwhile
        return closed

    def demoted(self, pinned: Collection[str]) -> frozenset[str]:
        """The episodes and lessons on probation now (confidently harmful), less pinned ones.

        Derived once per credit and per hour of the clock (evidence fades slowly),
        not per recall.
        """
        book, now = self._log.book, self._context.now()
        key = (id(book), book.version, int(now // 3600.0), frozenset(pinned))
        if self._demoted is None or self._demoted[0] != key:
            found = frozenset(
                subject
                for subject, row in book.rows.items()
                if subject not in pinned and row.demoted(now)
            )
            self._demoted = (key, found)
        return self._demoted[1]

    def open_runs(self) -> dict[str, tuple[Injection, ...]]:
        """Runs shown something whose outcome is not in yet, oldest first."""
        return {run_id: tuple(shown) for run_id, shown in self._log.open_runs()}

    def outcomes(self) -> tuple[CreditEvent, ...]:
        """Every run's outcome, oldest first."""
        return tuple(self._log.credits())

    def utility(self, subject_id: str) -> EpisodeUtility:
        """What credit says of one episode or lesson (the prior when never shown)."""
        return self._log.utility(subject_id)

    def has_row(self, subject_id: str) -> bool:
        """Whether a credited or noted run names ``subject_id``."""
        return subject_id in self._log.book.rows

    def utilities(self, kind: SubjectKind | None = None) -> dict[str, EpisodeUtility]:
        """Every episode (and lesson) shown in a run; ``kind`` keeps one kind."""
        _check_kind(kind)
        rows = self._log.book.rows
        return {i: row for i, row in rows.items() if kind is None or row.kind == kind}

    def harmful(
        self, min_runs: int, max_utility: float, kind: SubjectKind | None = None
    ) -> list[EpisodeUtility]:
        """Rows credited in at least ``min_runs`` runs whose utility is at most ``max_utility``.

        Worst first (then by id).
        """
        check_int("min_runs", min_runs, 1)
        check_number("max_utility", max_utility, 0.0, 1.0)
        now = self._context.now()
        found = [
            row
            for row in self.utilities(kind).values()
            if row.credited_runs >= min_runs and row.estimate(now) <= max_utility
        ]
        return sorted(found, key=lambda row: (row.estimate(now), row.episode_id))
