"""The credit loop of one namespace: what each run was shown, how it ended, what it taught.

A prompt built for a run notes its episodes and lessons (`Runs.note`); the run's
outcome credits them (`Runs.credit`, strict) or closes the run quietly
(`Runs.close`, the one place every integration and `record` close a run).
The statistic is `langchain_episodic.scoring.credit`; the stored journal is
`langchain_episodic.service.credit_log`.
"""

from __future__ import annotations

import logging
import zlib
from collections.abc import Collection, Iterable

import numpy as np

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.errors import CreditError, EpisodicValueError
from langchain_episodic.model.credit import CreditEvent, Injection, check_credit
from langchain_episodic.model.episode import LESSON_ID_PREFIX, TaskDescription
from langchain_episodic.scoring.credit import ALL_CATEGORIES, EpisodeUtility, SubjectKind
from langchain_episodic.scoring.intervals import BACK_OFF_MIN_HOLDOUT
from langchain_episodic.scoring.presentation import (
    DEFAULT_PRESENTATION,
    MIN_CREDITED_RUNS,
    PRESENTATIONS,
    PresentationChoice,
    check_presentation,
    choose_presentation,
)
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import CreditLog, describe_outcome
from langchain_episodic.stores.base import require_stored

__all__ = ["Runs"]

_log = logging.getLogger(__name__)
_KINDS = ("episode", "lesson")


def _spawned(rng: np.random.Generator) -> np.random.Generator:
    """A child of ``rng`` that leaves its stream as it was (a fresh one if it cannot)."""
    try:
        return rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a generator with no seed sequence
        return np.random.default_rng()


def _check_kind(kind: object) -> None:
    if kind is not None and kind not in _KINDS:
        msg = f"kind={kind!r} is invalid: must be 'episode', 'lesson' or None"
        raise EpisodicValueError(msg)


class Runs:
    """Runs of one namespace: injections noted, outcomes written, utilities read.

    Args:
        context: The namespace.
        log: Its credit journal.
        open_run_ttl: Seconds a run may stay open before `expire` closes it;
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
        # The presentation draws' seed: spawned from the memory's generator when it was
        # given (spawning leaves its stream, so the holdout draws, as they were), fixed
        # otherwise; each run's draw is a function of it and the run id.
        self._presentation_seed = 0 if rng is None else int(_spawned(self.rng).integers(2**32))
        self._demoted: tuple[object, frozenset[str]] | None = None

    def is_holdout(self, run_id: str) -> bool:
        """Whether run ``run_id`` is shown no memory: drawn once per run, then kept.

        A run already noted keeps what its injections say (in this process or, after
        `reload`, another's); a new
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
        policy: str | None = None,
    ) -> Injection:
        """Write that run ``run_id`` was shown ``shown_ids`` (episodes and lessons).

        ``holdout=True`` notes a holdout run: shown nothing, by chance. ``policy``: the
        presentation policy the prompt used (its outcome is evidence for it).
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
            policy,
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

    def choose_presentation(
        self, category: str | None, run_id: str | None = None
    ) -> PresentationChoice:
        """The presentation policy for a replay, from the credited runs' rewards.

        `choose_presentation` over the
        book's latest rewards per policy (the namespace's, and ``category``'s when
        given) and the holdout runs of the same scope. With ``run_id`` (a run whose
        outcome will be credited): the policy an earlier prompt of the run used, else
        a Thompson draw that depends only on the memory's seed and the run id;
        without: the best estimate. Without credited runs: the default, nothing drawn.
        """
        book = self._log.book
        with self._context.lock:
            noted = self._log.injections.get(run_id) if run_id is not None else None
            # A policy this version does not know (a newer writer's) is not followed.
            policy = next((i.policy for i in noted or () if i.policy in PRESENTATIONS), None)
            if policy is not None:
                return PresentationChoice(check_presentation(policy), "run")
            recent = book.lift_window(ALL_CATEGORIES)[0]
            if len(recent) < MIN_CREDITED_RUNS:
                return PresentationChoice(DEFAULT_PRESENTATION, "prior")
            namespace = book.presented(ALL_CATEGORIES)
            local = None if category is None else book.presented(category)
            held = [] if category is None else book.lift_window(category)[1]
            if len(held) < BACK_OFF_MIN_HOLDOUT:
                held = book.lift_window(ALL_CATEGORIES)[1]
            draws = None
            if run_id is not None:
                run = zlib.crc32(run_id.encode("utf-8", "surrogatepass"))
                draws = np.random.default_rng([self._presentation_seed, run])
            return choose_presentation(namespace, local, held, draws, recent=recent)

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
