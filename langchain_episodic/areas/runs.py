"""``memory.runs``: the runs a memory was shown in, their outcomes, credit and lift."""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterable
from typing import TYPE_CHECKING

from langchain_episodic._async import async_twin
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.credit import CreditEvent, Injection
from langchain_episodic.model.episode import TaskCategory, TaskDescription, as_task
from langchain_episodic.scoring.credit import EpisodeUtility, SubjectKind
from langchain_episodic.scoring.lift import (
    DEFAULT_MIN_HOLDOUT,
    DEFAULT_SUCCESS_AT,
    LiftReport,
    lift_report,
)
from langchain_episodic.scoring.presentation import PresentationChoice

if TYPE_CHECKING:
    from langchain_episodic.service.opening import Services

__all__ = ["MemoryRuns"]


class MemoryRuns:
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
    """

    def __init__(self, services: Services) -> None:
        self._s = services

    def __repr__(self) -> str:
        return f"<runs of namespace {self._s.context.namespace!r}>"

    @property
    def holdout(self) -> float:
        """The fraction of runs shown no memory, by chance: the baseline of credit and lift."""
        return self._s.runs.holdout

    @property
    def shared(self) -> bool:
        """Whether principals share the namespace (``EpisodicMemory(shared=True)``).

        Then a principal's runs give no evidence for its own episodes and count a few
        times at most for any other, and recall bounds what one principal can show
        (`sharing`).
        """
        return self._s.recall.shared

    @property
    def open_run_ttl(self) -> float | None:
        """Seconds a run may stay open before it is closed without credit."""
        return self._s.runs.open_run_ttl

    def is_holdout(self, run_id: str) -> bool:
        """Whether run ``run_id`` is a holdout run (shown no memory); drawn once, then kept."""
        return self._s.runs.is_holdout(run_id)

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
        """
        return self._s.runs.note(
            run_id,
            episode_ids,
            as_task(task),
            thread_id,
            holdout,
            known_stored=known_stored,
            policy=policy,
        )

    def credit(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent:
        """Credit run ``run_id``'s reward, once, to every episode and lesson it was shown.

        Each one's utility moves by the run's advantage over runs of the same
        category without it (`langchain_episodic.scoring.credit`).

        Raises:
            EpisodicValueError: ``reward`` not in [0, 1], or ``run_id`` / ``by`` empty.
            CreditError: No injection names the run, or its outcome is written (by
                any memory or process). Nothing is written.
        """
        return self._s.runs.credit(run_id, reward, by)

    def close(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent | None:
        """Close a run with its reward if open: its outcome, or ``None`` if shown nothing.

        Idempotent (a closed run keeps and returns its outcome) and quiet (a journal
        failure is logged): what ``memory.record``, the middleware and the classic
        memory use. Raises `EpisodicValueError` only for a bad argument.
        """
        return self._s.runs.close(run_id, reward, by)

    def expire(self, older_than: float | None = None) -> int:
        """Close without credit every run open longer than ``older_than`` (``open_run_ttl``)."""
        return self._s.runs.expire(older_than)

    def reload(self) -> None:
        """Read what other processes added to the journal: injections, credits and lessons.

        On a store that keeps its journal in order (Chroma, in-memory) only the
        entries written since this memory last read it are read.
        """
        with self._s.context.lock:
            self._s.journal.sync()

    anote, acredit = async_twin(note), async_twin(credit)
    aclose, aexpire, areload = async_twin(close), async_twin(expire), async_twin(reload)

    def pending(self) -> dict[str, tuple[Injection, ...]]:
        """Runs shown something whose outcome is not in yet, with their injections."""
        return self._s.runs.open_runs()

    def log(self) -> tuple[CreditEvent, ...]:
        """Every run's outcome (credit, or closing without one), oldest first."""
        return self._s.runs.outcomes()

    def utility(self, episode_id: str) -> EpisodeUtility:
        """What credit says of an episode or lesson (never shown: the prior, 0.5).

        Raises:
            EpisodicValueError: ``episode_id`` names no stored episode or lesson, and
                no credit names it.
        """
        context = self._s.context
        known = self._s.runs.has_row(episode_id) or episode_id in self._s.lessons.ids()
        if not known and episode_id not in context.store.get(context.namespace, [episode_id]):
            msg = (
                f"episode_id={episode_id!r} is not stored in namespace={context.namespace!r} "
                "(no episode, lesson or credit names it)"
            )
            raise EpisodicValueError(msg)
        return self._s.runs.utility(episode_id)

    def utilities(self, kind: SubjectKind | None = None) -> dict[str, EpisodeUtility]:
        """Every episode and lesson shown in a run (``kind="episode"``: episodes only)."""
        return self._s.runs.utilities(kind)

    def harmful(
        self, min_runs: int = 3, max_utility: float = 0.4, *, kind: SubjectKind | None = None
    ) -> list[EpisodeUtility]:
        """Quarantine candidates: credited in ``min_runs`` runs, utility <= ``max_utility``.

        Worst first; each row's ``kind`` says episode or lesson. A person decides.
        """
        return self._s.runs.harmful(min_runs, max_utility, kind)

    def demoted(self) -> tuple[str, ...]:
        """The episodes and lessons on probation now (confidently harmful, not pinned).

        Credited in `PROBATION_MIN_RUNS` runs
        with a utility confidently below 0.5, recall stops showing one (it stays
        stored, and returns when its evidence fades or improves, or when pinned:
        ``memory.quarantine.pin``).
        """
        return tuple(sorted(self._s.runs.demoted(self._s.pins.active.keys())))

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
        return self._s.runs.choose_presentation(key, run_id)

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
            self._s.runs.outcomes(),
            min_holdout=min_holdout,
            success_at=success_at,
            periods=periods,
            top=top,
        )
        return dataclasses.replace(report, presentation=self.presentation())
