"""``memory.runs``: the runs a memory was shown in, their outcomes, credit and lift.

A prompt built for a run notes its episodes and lessons (`Runs.note`); the run's
outcome credits them (`Runs.credit`, strict) or closes the run quietly
(`Runs.close`, the one place every integration and `record` close a run).
The statistic is `langchain_episodic.scoring.credit`; the stored journal is
`langchain_episodic.service.credit_log`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import zlib
from collections.abc import Callable, Collection, Iterable

import numpy as np

from langchain_episodic._async import async_twin
from langchain_episodic._validation import check_int, check_number
from langchain_episodic.errors import CreditError, EpisodicValueError
from langchain_episodic.model.credit import CreditEvent, Injection, check_credit
from langchain_episodic.model.episode import (
    LESSON_ID_PREFIX,
    TaskCategory,
    TaskDescription,
    as_task,
)
from langchain_episodic.scoring.credit import ALL_CATEGORIES, EpisodeUtility, SubjectKind
from langchain_episodic.scoring.intervals import BACK_OFF_MIN_HOLDOUT
from langchain_episodic.scoring.lift import (
    DEFAULT_MIN_HOLDOUT,
    DEFAULT_SUCCESS_AT,
    LiftReport,
    lift_report,
)
from langchain_episodic.scoring.presentation import (
    DEFAULT_PRESENTATION,
    MIN_CREDITED_RUNS,
    PRESENTATIONS,
    PresentationChoice,
    check_presentation,
    choose_presentation,
)
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit_log import describe_outcome
from langchain_episodic.service.journal import Journal
from langchain_episodic.service.tracing import traced
from langchain_episodic.stores.base import require_stored

__all__ = ["Runs"]

_log = logging.getLogger(__name__)


def _spawned(rng: np.random.Generator) -> np.random.Generator:
    """A child of ``rng`` that leaves its stream as it was (a fresh one if it cannot)."""
    try:
        return rng.spawn(1)[0]
    except (AttributeError, TypeError, ValueError):  # a generator with no seed sequence
        return np.random.default_rng()


class Runs:
    """Credit from outcomes: which recalled episodes and lessons helped, and does memory help.

    Every prompt built under a run id notes what it showed (`note`); the run's
    outcome (`credit`) credits each with the run's advantage over runs of the
    same category without it. `utility` is what credit says of one, `lift`
    compares runs with memory against holdout runs (``EpisodicMemory(holdout=...)``).

    Examples:
        >>> from langchain_episodic import EpisodicMemory, episode_from_tests
        >>> memory = EpisodicMemory()
        >>> _ = memory.record(episode_from_tests("Add a login form", "def login(): ...", 10, 10,
        ...                                      episode_id="login-1", timestamp=1.0))
        >>> _ = memory.runs.note("run-1", ["login-1"], "Add a signup form")
        >>> memory.runs.credit("run-1", reward=1.0).episode_ids
        ('login-1',)
        >>> memory.runs.utility("login-1").credited_runs
        1

    Args:
        context: The namespace.
        journal: Its journal (the credit log; the lesson log names the lessons).
        pinned: Returns the ids pinned now (never put on probation).
        open_run_ttl: Seconds a run may stay open before `expire` closes it;
            ``None``: never.
        holdout: The fraction of runs shown no memory, by chance.
        rng: Draws the holdout runs; a fresh unseeded generator when ``None``.
        shared: Several principals record into the namespace.
    """

    def __init__(
        self,
        context: NamespaceContext,
        journal: Journal,
        pinned: Callable[[], Collection[str]],
        open_run_ttl: float | None,
        holdout: float = 0.0,
        rng: np.random.Generator | None = None,
        *,
        shared: bool = False,
    ) -> None:
        self._context = context
        self._journal = journal
        self._log = journal.credit
        self._pinned = pinned
        self._open_run_ttl = open_run_ttl
        self._holdout = holdout
        self._shared = shared
        self.rng = rng if rng is not None else np.random.default_rng()
        self._drawn: dict[str, bool] = {}
        # The presentation draws' seed: spawned from the memory's generator when it was
        # given (spawning leaves its stream, so the holdout draws, as they were), fixed
        # otherwise; each run's draw is a function of it and the run id.
        self._presentation_seed = 0 if rng is None else int(_spawned(self.rng).integers(2**32))
        self._demoted: tuple[object, frozenset[str]] | None = None

    def __repr__(self) -> str:
        return f"<runs of namespace {self._context.namespace!r}>"

    @property
    def open_run_ttl(self) -> float | None:
        """Seconds a run may stay open before it is closed without credit."""
        return self._open_run_ttl

    @property
    def holdout(self) -> float:
        """The fraction of runs shown no memory, by chance: the baseline of credit and lift."""
        return self._holdout

    @property
    def shared(self) -> bool:
        """Whether principals share the namespace (``EpisodicMemory(shared=True)``).

        Then a principal's runs give no evidence for its own episodes and count a few
        times at most for any other, and recall bounds what one principal can show
        (`sharing`).
        """
        return self._shared

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
        episode_ids: Iterable[str],
        task: str | TaskDescription,
        *,
        thread_id: str | None = None,
        holdout: bool = False,
        policy: str | None = None,
        known_stored: Collection[str] = (),
    ) -> Injection:
        """Note that a prompt showing ``episode_ids`` reached a model in run ``run_id``.

        `build_replay` calls it for every prompt built with
        a ``run_id``; a run may be noted several times, and its outcome
        (`credit`) credits everything it was shown. ``holdout=True`` notes a
        holdout run (shown nothing by chance). ``policy``: the presentation policy the
        prompt was rendered with (its outcome is evidence for it). ``known_stored``:
        ids the caller has just read from the store (a replay's recall), not checked
        again.

        Raises:
            EpisodicValueError: ``run_id`` or an id is empty, ``episode_ids`` is a
                single string (a sequence of ids is expected), an id is not stored,
                or a holdout run is noted with ids.
        """
        task = as_task(task)
        if isinstance(episode_ids, str):
            msg = (
                f"episode_ids={episode_ids!r} is invalid: must be a sequence of ids, "
                f"not one string (write [{episode_ids!r}])"
            )
            raise EpisodicValueError(msg)
        shown, now = tuple(episode_ids), self._context.now()
        injection = Injection(
            run_id, shown, task.description, task.category.value, now, thread_id, holdout, policy
        )
        unread = [i for i in injection.episode_ids if i not in known_stored]
        require_stored(
            self._context.store,
            self._context.namespace,
            [i for i in unread if not i.startswith(LESSON_ID_PREFIX)],  # lessons: the lessons'
            "a run can only be shown stored episodes; nothing was noted",
        )
        # The journal write needs no lock (its entry id is the injection's own); the
        # lock guards only the counting, so concurrent runs do not wait on each
        # other's round trips.
        self._log.write_injection(injection)
        with self._context.lock:
            self._log.count_injection(injection)
            self._drawn.pop(run_id, None)  # the journal now says what the run is
        return injection

    def presentation(
        self, category: TaskCategory | str | None = None, *, run_id: str | None = None
    ) -> PresentationChoice:
        """The presentation policy a replay shows with now, and the evidence behind it.

        What `build_replay` with ``renderer="auto"`` uses
        for a task of ``category`` (``None``: the namespace as a whole)
        (`presentation`). Without a ``run_id``: the
        policy with the best estimate. With one (a run whose outcome will be
        credited): the policy an earlier prompt of the run used, else a Thompson
        draw from the evidence, so that its outcome keeps teaching the memory; the
        draw depends only on the run id and the memory's generator
        (``EpisodicMemory(rng=...)``), so a seeded memory reproduces it. Until
        credited runs say otherwise it is ``"compact"``, the prior, and nothing is
        drawn.

        Raises:
            EpisodicValueError: ``category`` names no task category.

        Examples:
            >>> from langchain_episodic import EpisodicMemory
            >>> EpisodicMemory().runs.presentation("debugging")
            PresentationChoice(policy='compact', reason='prior', estimates=())
        """
        key = None
        if category is not None:
            try:
                key = TaskCategory(category).value
            except ValueError:
                allowed = [c.value for c in TaskCategory]
                msg = f"category={category!r} is invalid: must be one of {allowed}"
                raise EpisodicValueError(msg) from None
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
            local = None if key is None else book.presented(key)
            held = [] if key is None else book.lift_window(key)[1]
            if len(held) < BACK_OFF_MIN_HOLDOUT:
                held = book.lift_window(ALL_CATEGORIES)[1]
            draws = None
            if run_id is not None:
                run = zlib.crc32(run_id.encode("utf-8", "surrogatepass"))
                draws = np.random.default_rng([self._presentation_seed, run])
            return choose_presentation(namespace, local, held, draws, recent=recent)

    def credit(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent:
        """Credit run ``run_id``'s reward, once, to every episode and lesson it was shown.

        Each one's utility moves by the run's advantage over runs of the same
        category without it (`langchain_episodic.scoring.credit`).

        Raises:
            EpisodicValueError: ``reward`` not in [0, 1], or ``run_id`` / ``by`` empty;
                checked before anything is read.
            CreditError: No injection names the run, or its outcome is written (by
                any memory or process). Nothing is written.
        """
        reward = check_credit(run_id, reward, by)
        inputs = {"run_id": run_id, "reward": reward}
        with traced("credit", self._context.namespace, inputs) as trace:
            event = self._credit(run_id, reward, by)
            if trace.active:
                trace.done(*_credit_trace(event, "credited"))
            return event

    def _credit(self, run_id: str, reward: float, by: str | None) -> CreditEvent:
        """`credit`, its arguments checked, untraced."""
        known = self._log.closed_here(run_id)
        if known is not None:  # closed by this memory lately: nothing to read
            raise CreditError(run_id, self._context.namespace, describe_outcome(known))
        # Most runs are open when credited, so the outcome is not read first: the store
        # keeps the first outcome under the run's id, and the read after writing finds
        # another writer's (then this one was not stored, and CreditError says whose).
        # Its write and read-back hold no lock: runs credited at once overlap them.
        return self._log.close_concurrently(run_id, reward, self._context.now, by)

    def close(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent | None:
        """Close a run with its reward if open: its outcome, or ``None`` if shown nothing.

        Idempotent: a run already closed (by this or another memory or process)
        keeps its outcome, which is returned. Quiet: the caller's episode or answer
        already exists, so a journal that fails is logged, never raised. What
        ``memory.record``, the middleware and the classic memory use.

        Raises:
            EpisodicValueError: ``reward`` or ``by`` is invalid (a caller's bug).
        """
        reward = check_credit(run_id, reward, by)
        inputs = {"run_id": run_id, "reward": reward}
        with traced("credit", self._context.namespace, inputs) as trace:
            event, what = self._close(run_id, reward, by)
            if trace.active:
                trace.done(*_credit_trace(event, what))
            return event

    def _close(self, run_id: str, reward: float, by: str | None) -> tuple[CreditEvent | None, str]:
        """`close`, its arguments checked, untraced; and what happened, for the trace."""
        # A run this memory closed a moment ago (the middleware credits its run, then
        # records the episode naming it, which closes it again) keeps that outcome:
        # no read of the store, and no journal read-through for "another writer's".
        known = self._log.closed_here(run_id)
        if known is not None:
            return known, "already closed"
        try:
            return self._credit(run_id, reward, by), "credited"
        except CreditError:
            found = self._log.outcome(run_id)
            return found, "already closed" if found is not None else "shown nothing"
        except Exception:  # credit must never break the run it observes
            _log.warning("could not credit run_id=%r", run_id, exc_info=True)
            return None, "journal failed (logged)"

    def expire(self, older_than: float | None = None) -> int:
        """Close without credit every run open longer than ``older_than`` (``open_run_ttl``).

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
                if now - max(i.at for i in shown) > ttl:
                    with contextlib.suppress(CreditError):  # another writer closed it meanwhile
                        self._log.close(run_id, None, now, "open_run_ttl")
                        closed += 1
        return closed

    def reload(self) -> None:
        """Read what other processes added to the journal: injections, credits and lessons.

        On a store that keeps its journal in order (Chroma, in-memory) only the
        entries written since this memory last read it are read.
        """
        with self._context.lock:
            self._journal.sync()

    anote, acredit = async_twin(note), async_twin(credit)
    aclose, aexpire, areload = async_twin(close), async_twin(expire), async_twin(reload)

    def demoted(self) -> tuple[str, ...]:
        """The episodes and lessons on probation now (confidently harmful, not pinned).

        Credited in `PROBATION_MIN_RUNS` runs with a utility confidently below 0.5,
        recall stops showing one (it stays stored, and returns when its evidence
        fades or improves, or when pinned: ``memory.quarantine.pin``).
        """
        return tuple(sorted(self.on_probation()))

    def on_probation(self) -> frozenset[str]:
        """`demoted` as a set, derived once per credit and per hour of the clock.

        Evidence fades slowly, so not per recall: what recall and the lessons hide.
        """
        pinned = frozenset(self._pinned())
        book, now = self._log.book, self._context.now()
        key = (id(book), book.version, int(now // 3600.0), pinned)
        if self._demoted is None or self._demoted[0] != key:
            found = frozenset(
                subject
                for subject, row in book.rows.items()
                if subject not in pinned and row.demoted(now)
            )
            self._demoted = (key, found)
        return self._demoted[1]

    def pending(self) -> dict[str, tuple[Injection, ...]]:
        """Runs shown something whose outcome is not in yet, with their injections."""
        return {run_id: tuple(shown) for run_id, shown in self._log.open_runs()}

    def log(self) -> tuple[CreditEvent, ...]:
        """Every run's outcome (credit, or closing without one), oldest first."""
        return tuple(self._log.credits())

    def utility(self, episode_id: str) -> EpisodeUtility:
        """What credit says of an episode or lesson (never shown: the prior, 0.5).

        Raises:
            EpisodicValueError: ``episode_id`` names no stored episode or lesson, and
                no credit names it.
        """
        context = self._context
        known = (
            episode_id in self._log.book.rows or episode_id in self._journal.lessons.book.lessons
        )
        if not known and episode_id not in context.store.get(context.namespace, [episode_id]):
            msg = (
                f"episode_id={episode_id!r} is not stored in namespace={context.namespace!r} "
                "(no episode, lesson or credit names it)"
            )
            raise EpisodicValueError(msg)
        return self._log.utility(episode_id)

    def utilities(self, kind: SubjectKind | None = None) -> dict[str, EpisodeUtility]:
        """Every episode and lesson shown in a run (``kind="episode"``: episodes only)."""
        if kind not in (None, "episode", "lesson"):
            msg = f"kind={kind!r} is invalid: must be 'episode', 'lesson' or None"
            raise EpisodicValueError(msg)
        rows = self._log.book.rows
        return {i: row for i, row in rows.items() if kind is None or row.kind == kind}

    def harmful(
        self, min_runs: int = 3, max_utility: float = 0.4, *, kind: SubjectKind | None = None
    ) -> list[EpisodeUtility]:
        """Quarantine candidates: credited in ``min_runs`` runs, utility <= ``max_utility``.

        Worst first (then by id); each row's ``kind`` says episode or lesson. A person
        decides.
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

    def lift(
        self,
        *,
        min_holdout: int = DEFAULT_MIN_HOLDOUT,
        success_at: float = DEFAULT_SUCCESS_AT,
        periods: int = 4,
        top: int = 5,
    ) -> LiftReport:
        """Does memory help this agent? Runs shown memory against holdout runs.

        From the journal (`lift_report`: holdout
        runs needed, the reward that counts as a success, periods, most-shown episodes):
        mean reward and success with memory and without (holdout runs), overall, per
        category, over time, and for each lesson and the most-shown episodes, with 95%
        intervals. Without enough holdout runs, ``report.note`` says so;
        ``report.backing_off`` names where recall shows less because memory hurts.
        ``report.by_presentation`` compares the presentation policies' runs with
        holdout runs and with the default's; ``report.presentation`` is the policy
        the memory shows with now (`presentation`).
        """
        report = lift_report(
            self.log(), min_holdout=min_holdout, success_at=success_at, periods=periods, top=top
        )
        return dataclasses.replace(report, presentation=self.presentation())


def _credit_trace(
    event: CreditEvent | None, what: str
) -> tuple[dict[str, object], dict[str, object]]:
    """A credit's trace outputs and span attributes: the outcome and what it moved."""
    if event is None:
        return {"outcome": what, "credited": []}, {}
    outputs: dict[str, object] = {
        "outcome": what,
        "run_id": event.run_id,
        "reward": event.reward,
        "credited": list(event.episode_ids),
        "holdout": event.holdout,
        "policy": event.policy,
        "category": event.category,
    }
    attributes: dict[str, object] = {
        "episodic.run_id": event.run_id,
        "episodic.reward": event.reward,
        "episodic.credited.ids": list(event.episode_ids),
        "episodic.holdout": event.holdout,
    }
    return outputs, attributes
