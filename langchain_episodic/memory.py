"""EpisodicMemory: a short-term window over a long-term store (article, section 7).

A façade: the constructor wires one namespace's services (:mod:`langchain_episodic.service`)
and every method delegates to the one that owns the job.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from typing_extensions import Unpack

from langchain_episodic._adapters import ADAPTERS
from langchain_episodic._async import async_twin
from langchain_episodic._validation import check_int, check_number
from langchain_episodic.embeddings.background import default_background_texts
from langchain_episodic.embeddings.builtin import default_embeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import Episode, TaskDescription, as_task
from langchain_episodic.model.erasure import ForgetReceipt
from langchain_episodic.model.lesson import MERGE_SIMILARITY, Lesson, LessonStatus
from langchain_episodic.model.quarantine import QuarantineAction, QuarantineEvent
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from langchain_episodic.prompting.renderers import RendererArg
from langchain_episodic.scoring.credit import (
    UTILITY_HALF_LIFE,
    CreditEvent,
    EpisodeUtility,
    Injection,
    SubjectKind,
)
from langchain_episodic.scoring.lift import (
    DEFAULT_MIN_HOLDOUT,
    DEFAULT_SUCCESS_AT,
    LiftReport,
    lift_report,
)
from langchain_episodic.scoring.options import RecallKeywords, RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult, ReplayWeights, check_time
from langchain_episodic.scoring.ranking import RecallReport
from langchain_episodic.scoring.relevance import Calibration, calibration_for
from langchain_episodic.scoring.retention import PrunePlan, Retention
from langchain_episodic.scoring.skills import SkillProfile, profiles_from_tallies
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.opening import (
    MismatchPolicy,
    check_background,
    check_holdout,
    check_settings,
    checked_embeddings,
    open_services,
    require_namespace,
)
from langchain_episodic.service.quarantine import QuarantineLog
from langchain_episodic.stores.base import DEFAULT_NAMESPACE, EpisodeStore, JournalEntry
from langchain_episodic.stores.chroma import ChromaEpisodeStore

__all__ = ["OPEN_RUN_TTL", "EpisodicMemory"]

OPEN_RUN_TTL = 7 * 86_400.0
"""Seven days, in seconds: how long a run may wait for its outcome before it is closed."""


def _ids(episode_ids: str | Iterable[str]) -> list[str]:
    if isinstance(episode_ids, str):
        return [episode_ids]
    if not isinstance(episode_ids, Iterable):
        msg = f"episode_ids={episode_ids!r} is invalid: must be an id or an iterable of ids"
        raise EpisodicValueError(msg)
    return list(episode_ids)


class EpisodicMemory:
    """Two-tier episodic memory with prioritized experience replay.

    The short-term tier is a sliding window of the last ``short_term_limit`` recorded
    episodes; the long-term tier is a :class:`ChromaEpisodeStore` holding every
    episode with the embedding of its task description. :meth:`recall` fetches
    ``fetch_k`` candidates by cosine similarity, then ranks them by replay priority
    (similarity, recency, reward, outcome).

    Instantiate:
        .. code-block:: python

            from langchain_episodic import ChromaEpisodeStore, EpisodicMemory

            memory = EpisodicMemory(store=ChromaEpisodeStore(path="./episodic-memory"))

    Record:
        .. code-block:: python

            from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription

            memory.record(Episode(
                episode_id="login-1",
                task=TaskDescription("Implement a login form with validation"),
                solution="def login(...): ...",
                feedback=Feedback(reward=0.9, tests_passed=9, tests_total=10),
                outcome=OutcomeStatus.SUCCESS,
                timestamp=1_700_000_000.0,
                strategy_used="iterative",
            ))

    Recall:
        .. code-block:: python

            for hit in memory.recall("Build a signup form", top_k=3):
                print(hit.episode.episode_id, round(hit.priority, 3))

    Async:
        .. code-block:: python

            hits = await memory.arecall("Build a signup form")

    Args:
        store: The long-term tier; a private in-process store when ``None``.
        embeddings: Any LangChain ``Embeddings``; when ``None``, the packaged
            :class:`~langchain_episodic.embeddings.static.StaticEmbeddings` (semantic,
            offline, no torch). Before 0.2 the default was :class:`HashingEmbeddings`:
            a namespace built with it needs ``embeddings=HashingEmbeddings()`` (the
            mismatch error says so).
        short_term_limit: Size of the short-term window (the article's N = 5).
        namespace: Episodes of one namespace are invisible to every other.
        clock: Returns "now" in seconds when ``current_time`` is not given.
        open_run_ttl: Seconds a run may stay open (shown episodes, no outcome yet)
            before :meth:`expire_open_runs` closes it without credit; ``None``:
            never. Stale runs are closed when the memory opens.
        utility_half_life: How fast credit evidence is forgotten, in seconds.
        on_embedding_mismatch: ``"raise"`` (default) refuses a namespace built with
            another embedding model; ``"read-only"`` opens it anyway without the
            stored model, to read it (:meth:`episodes`, :meth:`skill_profiles`, or as
            the source of :func:`~langchain_episodic.migration.migrate_namespace`),
            and :meth:`record` and :meth:`recall` then raise the mismatch error.
        create_namespace: ``True`` (default) creates ``namespace`` on first open;
            ``False`` opens only a namespace the store already lists and raises
            :class:`~langchain_episodic.errors.NamespaceNotFoundError` otherwise,
            listing the namespaces there (and, on Chroma, the other
            ``collection_name`` values), before anything is written: a reader's
            guard against a mistyped ``namespace=`` or ``collection_name=``.
        holdout: The fraction of runs, in [0, 1), shown no memory by chance
            (:func:`~langchain_episodic.build_replay` with a ``run_id`` shows them
            nothing and notes them as holdout runs): the causal baseline that credit
            compares shown episodes with and :meth:`lift` reports against. ``0``
            (default): none.
        rng: Draws the holdout runs (``np.random.default_rng(seed)`` to reproduce).
        background: Texts the agent's tasks are *not* about, which the relevance
            test compares each task against (a stored episode must be about as
            similar to the task as the task's nearest background texts;
            :mod:`langchain_episodic.scoring.relevance`). ``None`` (default): the
            packaged everyday requests, right for agents that do technical work;
            ``()``: no background test (the similarity floor only). An agent whose
            own tasks are everyday ones passes texts of what it does not do.
        retention: How much the namespace keeps
            (:class:`~langchain_episodic.scoring.retention.Retention`: a maximum age
            and/or number of episodes), applied by :meth:`prune` and, with
            ``on_write=True``, after writes. ``None`` (default): everything is kept.

    The embedding model is part of the namespace: opening embeds one probe text and
    compares the model's fingerprint with the one recorded when the namespace was
    created; another model raises :class:`EmbeddingMismatchError`, naming both and how
    to move on (:mod:`langchain_episodic.service.opening`).

    Episodes are immutable: recording an identical episode again is a no-op; recording
    a different one under a stored ``episode_id`` raises :class:`EpisodeConflictError`.
    One process should write to a namespace at a time; readers may be many.

    The memory is a façade: each job lives in a service of
    :mod:`langchain_episodic.service` (writing, recall, quarantine, credit, lessons,
    summary) over one :class:`~langchain_episodic.service.context.NamespaceContext`.
    Every method that embeds or reads or writes the store has an ``a``-prefixed async
    twin (one executor hop); what the memory already holds (utilities, lessons, the
    quarantine log, skill profiles) is returned at once and has none.
    """

    def __init__(
        self,
        store: EpisodeStore | None = None,
        embeddings: Embeddings | None = None,
        short_term_limit: int = 5,
        namespace: str = DEFAULT_NAMESPACE,
        *,
        clock: Callable[[], float] = time.time,
        on_embedding_mismatch: MismatchPolicy = "raise",
        open_run_ttl: float | None = OPEN_RUN_TTL,
        utility_half_life: float = UTILITY_HALF_LIFE,
        create_namespace: bool = True,
        holdout: float = 0.0,
        rng: np.random.Generator | None = None,
        background: Sequence[str] | None = None,
        retention: Retention | None = None,
    ) -> None:
        if retention is not None and not isinstance(retention, Retention):
            msg = f"retention={retention!r} is invalid: must be a Retention or None"
            raise TypeError(msg)
        half_life = check_settings(
            store, embeddings, short_term_limit, namespace, on_embedding_mismatch,
            open_run_ttl, utility_half_life, create_namespace,
        )  # fmt: skip
        holdout = check_holdout(holdout, rng)
        texts = default_background_texts() if background is None else check_background(background)
        self.store: EpisodeStore = store if store is not None else ChromaEpisodeStore()
        if not create_namespace:
            require_namespace(self.store, namespace)
        model = embeddings if embeddings is not None else default_embeddings()
        self.embeddings, fingerprint = checked_embeddings(
            self.store, namespace, model, on_embedding_mismatch
        )
        self.short_term_limit, self.namespace = short_term_limit, namespace
        self._scoped: dict[str, EpisodicMemory] = {}  # for_namespace: one twin each
        self._s = open_services(
            NamespaceContext(self.store, namespace, self.embeddings, clock),
            short_term_limit=short_term_limit,
            open_run_ttl=open_run_ttl,
            half_life=half_life,
            # No reference back to the memory: a cycle would keep the store (and an
            # embedded store's folder lock) alive until the cyclic GC runs.
            calibration=calibration_for(self.embeddings),
            background=texts,
            fingerprint=fingerprint,
            owner=self,
            holdout=holdout,
            rng=rng,
            retention=retention,
        )

    def __repr__(self) -> str:
        return (
            f"EpisodicMemory(store={self.store!r}, namespace={self.namespace!r}, "
            f"short_term_limit={self.short_term_limit})"
        )

    def __len__(self) -> int:
        """Number of episodes in this namespace's long-term tier."""
        return self.store.count(self.namespace)

    @property
    def open_run_ttl(self) -> float | None:
        """Seconds a run may stay open before it is closed without credit."""
        return self._s.runs.open_run_ttl

    @property
    def holdout(self) -> float:
        """The fraction of runs shown no memory, by chance: the baseline of credit and lift."""
        return self._s.runs.holdout

    def is_holdout(self, run_id: str) -> bool:
        """Whether run ``run_id`` is a holdout run (shown no memory); drawn once, then kept."""
        return self._s.runs.is_holdout(run_id)

    @property
    def relevance_floor(self) -> float:
        """The relevance ranking's similarity floor for this embedder (``calibration_for``)."""
        return self._s.recall.calibration.floor

    @property
    def calibration(self) -> Calibration:
        """How the relevance test reads this embedder's similarities (floor and offset)."""
        return self._s.recall.calibration

    @property
    def background(self) -> tuple[str, ...]:
        """The texts the relevance test compares each task against (empty: no such test)."""
        return self._s.recall.background_texts

    def now(self) -> float:
        """The memory's current time in seconds (its ``clock``), used when none is given."""
        return self._s.context.now()

    def flush(self) -> None:
        """Save now what is saved lazily: the per-category summary and the journal checkpoint.

        Both are caught up on open; saved here, the next open reads less (call it
        before a planned shutdown). The checkpoint is saved only when journal entries
        were folded in since the last one, and only on stores that keep one
        (:meth:`checkpoint_journal`).
        """
        self._s.summary.save(force=True)
        self._s.journal.checkpoint(only_if_behind=True)

    # ------------------------------------------------------------------ episodes

    def record(self, episode: Episode) -> bool:
        """Store one episode in both tiers; ``False`` if the identical one was stored.

        Raises:
            TypeError: ``episode`` is not an :class:`Episode`.
            EpisodeConflictError: A different episode holds the same ``episode_id``.
        """
        return self.record_many([episode]) == 1

    def record_many(self, episodes: Iterable[Episode], *, in_time_order: bool = True) -> int:
        """Store many episodes, all validated before any is written; how many were new.

        Written in time order unless ``in_time_order=False`` (a migration keeps the
        source's); a new episode whose ``source.run_id`` names a run closes it.
        See :meth:`~langchain_episodic.service.writing.EpisodeWriter.write` for errors.
        """
        return self._s.writer.write(list(episodes), in_time_order=in_time_order)

    def get_episodes(self, episode_ids: str | Iterable[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id (missing ones left out)."""
        return self.store.get(self.namespace, _ids(episode_ids))

    arecord, arecord_many = async_twin(record), async_twin(record_many)
    aget_episodes = async_twin(get_episodes)

    def episodes(self, page_size: int = 1000) -> Iterator[Episode]:
        """Every episode of this namespace in recording (time) order, streamed in pages."""
        return self.store.iter_episodes(self.namespace, check_int("page_size", page_size, 1))

    def namespaces(self) -> tuple[str, ...]:
        """Every namespace of this memory's store, sorted."""
        return self.store.namespaces()

    @property
    def short_term(self) -> tuple[Episode, ...]:
        """The last ``short_term_limit`` recorded episodes, oldest first, less quarantined ones."""
        quarantined = self._s.quarantine.active
        return tuple(e for e in self._s.window if e.episode_id not in quarantined)

    def skill_profiles(self) -> tuple[SkillProfile, ...]:
        """Per-category skill profiles: ``compute_skill_profiles(memory.episodes())``, kept."""
        return profiles_from_tallies(self._s.summary.tallies)

    # ------------------------------------------------------------------ recall

    def recall(
        self,
        query: str | TaskDescription,
        top_k: int = 3,
        current_time: float | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        fetch_k: int | None = None,
        **options: Unpack[RecallKeywords],
    ) -> tuple[PrioritizedResult, ...]:
        """At most ``top_k`` past episodes worth replaying for ``query``, best first.

        Fetches ``fetch_k`` candidates by similarity (default ``2 * top_k``, as in the
        article), then ranks them. By default (``ranking="relevance"``) only relevant
        candidates come back, ordered by similarity scaled by value (recency, reward,
        outcome, utility): fewer than ``top_k``, or none, when fewer are relevant.
        ``ranking="article"`` is the article's additive priority, exactly. Every
        argument is the :class:`~langchain_episodic.RecallOptions` field of its name
        (``min_similarity``, ``filters``, ``category``, ``outcome``, ``ranking``,
        ``relevance_margin``, ``use_utility`` by keyword), checked by building one.

        Raises:
            EpisodicValueError: An argument is out of range; the message names it.
            TypeError: An unknown option, or ``weights`` / ``filters`` of another type.
        """
        given = RecallOptions(
            top_k=top_k, fetch_k=fetch_k, weights=weights, half_life=half_life,
            current_time=current_time, **options,
        )  # fmt: skip
        return self.recall_with(query, given)

    def recall_with(
        self, query: str | TaskDescription, options: RecallOptions
    ) -> tuple[PrioritizedResult, ...]:
        """:meth:`recall` with its options as one :class:`RecallOptions`."""
        return self.recall_report(query, options).results

    def recall_report(
        self,
        query: str | TaskDescription,
        options: RecallOptions,
        *,
        evidence_k: int = 0,
        lesson_k: int = 0,
        keep: int | None = None,
    ) -> RecallReport:
        """:meth:`recall_with`, explained: the results and the candidates turned away.

        The same search also returns up to ``evidence_k`` most similar episodes at
        or above the floor as ``neighbours`` (a strategy's evidence) and ``lesson_k``
        lessons (:meth:`recall_lessons`); the results are unchanged by either.
        ``keep``: return up to this many ranked results instead of ``options.top_k``
        (the same candidates, ranked the same; the replay lets its renderer choose the
        ``top_k`` it shows among them).

        Example:
            .. code-block:: python

                report = memory.recall_report("Fix the login crash", RecallOptions())
                for rejected in report.rejected:
                    print(rejected.episode_id, rejected.reason)
        """
        task = as_task(query, "query")
        return self._s.recall.report(
            task, options, evidence_k=evidence_k, lesson_k=lesson_k, keep=keep
        )

    def task(self, task: str | TaskDescription) -> TaskDescription:
        """``task`` as the memory reads it: text gets its category inferred.

        A task without a category (text, or ``TaskCategory.UNKNOWN``) gets the one its
        nearest labelled example tasks vote for (code generation, debugging,
        refactoring, testing, architecture; measured in ``benchmarks/categories.py``),
        or stays ``unknown`` when it is not about software work. A task that names its
        category keeps it. The middleware reads every agent run's task this way.

        Example:
            >>> EpisodicMemory().task("Fix the crash when the cart is empty").category.value
            'debugging'
        """
        return self._s.recall.with_category(as_task(task, "task"))

    arecall, arecall_with = async_twin(recall), async_twin(recall_with)
    arecall_report = async_twin(recall_report)
    atask = async_twin(task)

    # -------------------------------------------------------------- quarantine

    def quarantine(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Hide stored episodes (or lessons) from recall without deleting them.

        They keep their place in :meth:`episodes` and :meth:`skill_profiles`, but no
        recall (so no retriever, prompt or strategy) nor :attr:`short_term` returns
        them, nor the lessons derived from them; every call goes to
        :meth:`quarantine_log`. Returns how many were newly quarantined.

        Example:
            .. code-block:: python

                memory.quarantine("login-7", "solution came from a poisoned tool run", by="ops")
                memory.release("login-7", "tool run was fine after all", by="ops")

        Raises:
            EpisodicValueError: An id is not stored here, or ``reason`` is empty.
        """
        return self._change_quarantine("quarantine", episode_ids, reason, by)

    def release(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Undo :meth:`quarantine`; how many were released (others are skipped)."""
        return self._change_quarantine("release", episode_ids, reason, by)

    aquarantine, arelease = async_twin(quarantine), async_twin(release)

    def pin(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Keep episodes (or lessons) shown whatever credit says: never on probation.

        A memory credited in :data:`~langchain_episodic.scoring.credit.PROBATION_MIN_RUNS`
        runs whose utility is confidently below 0.5 is put on probation: recall stops
        showing it (it stays stored, listed by :meth:`demoted` and :meth:`harmful`,
        and returns when its evidence fades or improves). A person who knows better
        pins it. Quarantine still wins over a pin. Returns how many were newly pinned.
        """
        return self._change_log(self._s.pins, "pin", episode_ids, reason, by)

    def unpin(self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None) -> int:
        """Undo :meth:`pin`; how many were unpinned."""
        return self._change_log(self._s.pins, "unpin", episode_ids, reason, by)

    apin, aunpin = async_twin(pin), async_twin(unpin)

    def pinned(self) -> dict[str, QuarantineEvent]:
        """The ids pinned now, each with the event that pinned it."""
        return dict(self._s.pins.active)

    def demoted(self) -> tuple[str, ...]:
        """The episodes and lessons on probation now (confidently harmful, not pinned)."""
        return tuple(sorted(self._s.runs.demoted(self._s.pins.active.keys())))

    def _change_quarantine(
        self, action: QuarantineAction, ids: str | Iterable[str], reason: str, by: str | None
    ) -> int:
        return self._change_log(self._s.quarantine, action, ids, reason, by)

    def _change_log(
        self,
        log: QuarantineLog,
        action: QuarantineAction,
        ids: str | Iterable[str],
        reason: str,
        by: str | None,
    ) -> int:
        with self._s.context.lock:
            known = self._s.lessons.ids()
            return log.change(action, _ids(ids), reason, by, self.now(), known)

    def quarantined(self) -> dict[str, QuarantineEvent]:
        """The ids quarantined now, each with the event that quarantined it."""
        return dict(self._s.quarantine.active)

    def quarantine_log(self) -> tuple[QuarantineEvent, ...]:
        """Every quarantine and release in this namespace, oldest first: the audit trail."""
        return self._s.quarantine.events

    def merge_quarantine_log(self, events: Sequence[QuarantineEvent]) -> int:
        """Append the events of another namespace's log that this one lacks; how many."""
        with self._s.context.lock:
            return self._s.quarantine.merge(events)

    # ------------------------------------------------------------------ credit

    def note_injection(
        self,
        run_id: str,
        episode_ids: Iterable[str],
        task: str | TaskDescription,
        *,
        thread_id: str | None = None,
        holdout: bool = False,
    ) -> Injection:
        """Note that a prompt showing ``episode_ids`` reached a model in run ``run_id``.

        :func:`~langchain_episodic.build_replay` calls it for every prompt built with
        a ``run_id``; a run may be noted several times, and its outcome
        (:meth:`credit`) credits everything it was shown. ``holdout=True`` notes a
        holdout run (shown nothing by chance, see ``holdout=``).

        Example:
            .. code-block:: python

                replay = build_replay(memory, task)
                memory.note_injection("run-7", [r.episode.episode_id for r in replay.results], task)
                memory.credit("run-7", reward=0.9)  # once the tests ran
        """
        return self._s.runs.note(run_id, episode_ids, as_task(task), thread_id, holdout)

    def credit(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent:
        """Credit run ``run_id``'s reward, once, to every episode and lesson it was shown.

        Each one's utility moves by the run's advantage over runs of the same
        category without it (:mod:`langchain_episodic.scoring.credit`).

        Raises:
            EpisodicValueError: ``reward`` not in [0, 1], or ``run_id`` / ``by`` empty.
            CreditError: No injection names the run, or its outcome is written (by
                any memory or process). Nothing is written.
        """
        return self._s.runs.credit(run_id, reward, by)

    def close_run(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent | None:
        """Close a run with its reward if open: its outcome, or ``None`` if shown nothing.

        Idempotent (a closed run keeps and returns its outcome) and quiet (a journal
        failure is logged): what :meth:`record`, the middleware and the classic
        memory use. Raises :class:`EpisodicValueError` only for a bad argument.
        """
        return self._s.runs.close(run_id, reward, by)

    def expire_open_runs(self, older_than: float | None = None) -> int:
        """Close without credit every run open longer than ``older_than`` (``open_run_ttl``)."""
        return self._s.runs.expire(older_than)

    def reload_credit(self) -> None:
        """Read what other processes added to the journal: injections, credits and lessons.

        On a store that keeps its journal in order (Chroma, in-memory) only the
        entries written since this memory last read it are read.
        """
        with self._s.context.lock:
            self._s.journal.sync()

    def checkpoint_journal(self) -> None:
        """Save the journal checkpoint now: the next open reads only what is written after it.

        The memory saves one by itself every
        :data:`~langchain_episodic.service.checkpoint.CHECKPOINT_EVERY` journal entries;
        call this before a planned shutdown to make the next open read nothing more.
        Stores that do not keep their journal in order (see
        :class:`~langchain_episodic.stores.OrderedJournal`) have no checkpoint: a no-op.

        Example:
            >>> from langchain_episodic import Episode, Feedback, OutcomeStatus
            >>> memory = EpisodicMemory()
            >>> _ = memory.record(Episode(
            ...     episode_id="ep-1", task=TaskDescription("Implement login form"),
            ...     solution="...", feedback=Feedback(reward=1.0),
            ...     outcome=OutcomeStatus.SUCCESS, timestamp=1.0))
            >>> _ = memory.note_injection("run-1", ["ep-1"], "Implement login form")
            >>> memory.checkpoint_journal()
            >>> EpisodicMemory(store=memory.store).open_runs().keys()
            dict_keys(['run-1'])
        """
        self._s.journal.checkpoint()

    anote_injection, acredit = async_twin(note_injection), async_twin(credit)
    aclose_run, aexpire_open_runs = async_twin(close_run), async_twin(expire_open_runs)
    areload_credit = async_twin(reload_credit)
    acheckpoint_journal = async_twin(checkpoint_journal)

    def open_runs(self) -> dict[str, tuple[Injection, ...]]:
        """Runs shown something whose outcome is not in yet, with their injections."""
        return self._s.runs.open_runs()

    def credit_log(self) -> tuple[CreditEvent, ...]:
        """Every run's outcome (credit, or closing without one), oldest first."""
        return self._s.runs.outcomes()

    def utility(self, episode_id: str) -> EpisodeUtility:
        """What credit says of an episode or lesson (never shown: the prior, 0.5).

        Raises:
            EpisodicValueError: ``episode_id`` names no stored episode or lesson, and
                no credit names it.
        """
        known = self._s.runs.has_row(episode_id) or episode_id in self._s.lessons.ids()
        if not known and episode_id not in self.store.get(self.namespace, [episode_id]):
            msg = (
                f"episode_id={episode_id!r} is not stored in namespace={self.namespace!r} "
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

    def lift(
        self,
        *,
        min_holdout: int = DEFAULT_MIN_HOLDOUT,
        success_at: float = DEFAULT_SUCCESS_AT,
        periods: int = 4,
        top: int = 5,
    ) -> LiftReport:
        """Does memory help this agent? Runs shown memory against holdout runs.

        From the journal (:func:`~langchain_episodic.scoring.lift.lift_report`: holdout
        runs needed, the reward that counts as a success, periods, most-shown episodes):
        mean reward and success with memory and without (holdout runs, see
        ``holdout=``), overall, per category, over time, and for each lesson and the
        most-shown episodes, with 95% intervals. Without enough holdout runs,
        ``report.note`` says so.

        Example:
            .. code-block:: python

                report = memory.lift()
                print(report.note or f"{report.overall.reward_lift:+.3f} reward with memory")
        """
        return lift_report(
            self._s.runs.outcomes(),
            min_holdout=min_holdout,
            success_at=success_at,
            periods=periods,
            top=top,
        )

    def journal_entries(self) -> list[JournalEntry]:
        """Every journal entry (injections, outcomes, lessons) as stored: for copying."""
        return self._s.journal.entries()

    def merge_journal(self, entries: Sequence[JournalEntry]) -> list[str]:
        """Append another namespace's journal entries; the ids held here under others.

        What names an episode erased here is redacted first, as the erasure did here.
        """
        with self._s.context.lock:
            return self._s.journal.merge(self._s.eraser.redact_incoming(entries))

    # ------------------------------------------------------------------ lessons

    def add_lessons(self, lessons: Iterable[Lesson]) -> int:
        """Store lessons, each embedded for recall, all or nothing; how many were new.

        Every source must be an episode stored here and every superseded lesson
        stored, or nothing is written (:class:`EpisodicValueError`).

        Example:
            .. code-block:: python

                from langchain_episodic.model.lesson import Lesson, LessonSource

                memory.add_lessons([Lesson.create(
                    title="Strip e-mail addresses before validating them",
                    applies_when="a form validates an e-mail address",
                    do="call .strip() first", sources=[LessonSource("login-1")],
                    created_at=memory.now(),
                )])
        """
        return self._s.lessons.add(lessons)

    def lessons(self, status: LessonStatus | None = "active") -> tuple[Lesson, ...]:
        """Lessons of one status (``None``: all), oldest first.

        ``"active"`` ones are recalled; ``"archived"`` ones were superseded;
        ``"quarantined"`` ones are, or derive from a quarantined episode.
        """
        return self._s.lessons.of_status(status)

    def lesson(self, lesson_id: str) -> Lesson:
        """The stored lesson ``lesson_id`` (:class:`EpisodicValueError` if none)."""
        return self._s.lessons.get(lesson_id)

    def lesson_status(self, lesson_id: str) -> LessonStatus:
        """Whether ``lesson_id`` is active, archived or quarantined."""
        return self._s.lessons.status(lesson_id)

    def lesson_utility(self, lesson_id: str, current_time: float | None = None) -> float:
        """The lesson's utility: its credit plus what the lessons it merged carried.

        Read at ``current_time`` (the memory's clock when ``None``): evidence fades with age.
        """
        now = None if current_time is None else check_time("current_time", current_time)
        return self._s.lessons.utility(lesson_id, now)

    def revise_lesson(self, lesson_id: str, /, **changes: Any) -> Lesson:
        """Store a revision of an active lesson (``title``, ``applies_when``, ``do``, ...).

        The new lesson supersedes the old one, which is archived.
        """
        return self._s.lessons.revise(lesson_id, changes)

    def consolidate_lessons(self, threshold: float = MERGE_SIMILARITY) -> tuple[Lesson, ...]:
        """Merge near-duplicate active lessons (cosine >= ``threshold``), keeping evidence.

        The merges supersede them (they are archived); running it again changes nothing.
        """
        return self._s.lessons.consolidate(check_number("threshold", threshold, -1.0, 1.0))

    def recall_lessons(self, query: str | TaskDescription, k: int = 2) -> tuple[Lesson, ...]:
        """The ``k`` active lessons at the relevance floor, by similarity scaled by utility."""
        return self._s.recall.lessons(as_task(query, "query"), k)

    aadd_lessons, arevise_lesson = async_twin(add_lessons), async_twin(revise_lesson)
    aconsolidate_lessons = async_twin(consolidate_lessons)
    arecall_lessons = async_twin(recall_lessons)

    # ------------------------------------------------------------------ forgetting

    @property
    def retention(self) -> Retention | None:
        """The retention policy :meth:`prune` applies (``None``: everything is kept)."""
        return self._s.eraser.retention

    def forget(
        self,
        episode_ids: str | Iterable[str],
        *,
        reason: str,
        by: str | None = None,
        dry_run: bool = False,
    ) -> ForgetReceipt:
        """Erase episodes and everything derived from them; a receipt of what went.

        Follows lineage (:mod:`~langchain_episodic.service.erasure`): the records and
        their vectors; the lessons derived from them (removed, not re-derived); the
        injection records and run outcomes naming them, rewritten without them (an
        injection also loses its task text); the quarantine- and pin-log events
        naming them; the summary and the short-term window. Each erased id leaves a
        tombstone (a digest, not the id), so it is never stored again. An embedded
        Chroma store then purges its files (see ``receipt.storage``). A lesson id
        may be given too: it goes with the lessons revising or merging it.

        Example:
            >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
            >>> memory = EpisodicMemory()
            >>> _ = memory.record(Episode(
            ...     episode_id="e1", task=TaskDescription("Fix the login bug"),
            ...     solution="...", feedback=Feedback(reward=1.0),
            ...     outcome=OutcomeStatus.SUCCESS, timestamp=1.0))
            >>> receipt = memory.forget(["e1"], reason="user asked", by="support")
            >>> receipt.episodes, len(memory), memory.forget("e1", reason="again").already_forgotten
            (1, 0, 1)

        Args:
            episode_ids: One id or several.
            reason: Why (required; kept in the receipt).
            by: Who asked, when known.
            dry_run: Remove nothing; the receipt says what would go.

        Raises:
            EpisodicValueError: ``reason`` is empty, or an id was never stored here
                (named; nothing is removed). An id already forgotten is a no-op,
                counted in ``receipt.already_forgotten``.
            StoreConfigurationError: The store cannot delete.
        """
        return self._s.eraser.forget(_ids(episode_ids), reason, by, dry_run=dry_run)

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
        return self._s.eraser.forget_all(reason, by, dry_run=dry_run)

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

        Example:
            >>> from langchain_episodic.scoring.retention import Retention
            >>> memory = EpisodicMemory()
            >>> plan, receipt = memory.prune(Retention(max_episodes=100), dry_run=True)
            >>> plan.episode_ids, receipt
            ((), None)

        Raises:
            EpisodicValueError: No policy is given or set.
        """
        return self._s.eraser.prune(retention, now=current_time, by=by, dry_run=dry_run)

    def erasures(self) -> tuple[ForgetReceipt, ...]:
        """The receipt of every finished erasure in this namespace, oldest first."""
        return self._s.eraser.receipts()

    def forgotten(self, episode_ids: str | Iterable[str]) -> dict[str, tuple[str, float]]:
        """The ids among ``episode_ids`` an erasure removed, each with ``(erasure_id, at)``."""
        return self._s.eraser.forgotten(_ids(episode_ids))

    def unfinished_erasures(self) -> list[str]:
        """Erasures begun and never finished (a killed process): run ``forget`` again."""
        return self._s.eraser.unfinished()

    aforget, aforget_all, aprune = async_twin(forget), async_twin(forget_all), async_twin(prune)
    aerasures = async_twin(erasures)

    # ------------------------------------------------------------ namespaces

    def for_namespace(self, namespace: str) -> EpisodicMemory:
        """This memory's twin for another namespace: same store, embeddings and settings.

        One twin per namespace is kept and reused (a multi-user agent opens each
        user's once); it checks the embeddings against its namespace's fingerprint.
        """
        if namespace == self.namespace:
            return self
        with self._s.context.lock:
            if namespace not in self._scoped:
                self._scoped[namespace] = EpisodicMemory(
                    self.store,
                    self.embeddings,
                    self.short_term_limit,
                    namespace,
                    clock=self._s.context.clock,
                    open_run_ttl=self.open_run_ttl,
                    utility_half_life=self._s.journal.credit.half_life,
                    holdout=self.holdout,
                    rng=self._s.runs.rng,
                    background=self.background,
                    retention=self.retention,
                )
            return self._scoped[namespace]

    # ------------------------------------------------------------ integrations

    # Registered by the package (its __init__), so this module never imports the
    # integrations above it: the memory names the port, the package wires it.
    _adapters: ClassVar[dict[str, Callable[..., Any]]] = ADAPTERS

    @classmethod
    def register_adapter(
        cls, kind: Literal["retriever", "runnable"], factory: Callable[..., Any]
    ) -> None:
        """Make ``factory(memory, **kwargs)`` what ``as_retriever`` / ``as_runnable`` return."""
        cls._adapters[kind] = factory

    def as_retriever(
        self,
        *,
        k: int | None = None,
        search_type: str = "similarity",
        search_kwargs: Mapping[str, Any] | None = None,
        options: RecallOptions | None = None,
        fetch_k: int | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        current_time: float | None = None,
        **recall_options: Unpack[RecallKeywords],
    ) -> BaseRetriever:
        """This memory as an :class:`~langchain_episodic.EpisodicRetriever`.

        Takes what LangChain's ``VectorStore.as_retriever`` takes: ``search_type``
        (``"similarity"``, ``"similarity_score_threshold"``; ``"mmr"`` is refused by
        name) and ``search_kwargs`` (``k``, ``fetch_k``, ``filter``,
        ``score_threshold``, any recall option by name); or the recall options flat
        (``k=2``, ``category="debugging"``). An option it does not know is refused,
        naming it.

        Example:
            >>> from langchain_episodic import EpisodicMemory
            >>> memory = EpisodicMemory()
            >>> memory.as_retriever(search_kwargs={"k": 2, "filter": {"outcome": "success"}}).k
            2
        """
        given: dict[str, Any] = {
            name: value
            for name, value in (
                ("k", k),
                ("options", options),
                ("fetch_k", fetch_k),
                ("weights", weights),
                ("half_life", half_life),
                ("current_time", current_time),
            )
            if value is not None
        }
        if search_type != "similarity" or search_kwargs is not None:
            given.update(search_type=search_type, search_kwargs=search_kwargs)
        retriever: BaseRetriever = self._adapters["retriever"](self, **given, **recall_options)
        return retriever

    def as_runnable(
        self,
        *,
        input_key: str = "task",
        options: RecallOptions | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        token_counter: Callable[[str], int] = approximate_token_count,
        include_strategy: bool = False,
        renderer: RendererArg = "auto",
        top_k: int | None = None,
        fetch_k: int | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        current_time: float | None = None,
        **recall_options: Unpack[RecallKeywords],
    ) -> Runnable[Any, str]:
        """A runnable mapping a task to its replay prompt (``create_replay_runnable``).

        Example:
            >>> from langchain_episodic import EpisodicMemory
            >>> EpisodicMemory().as_runnable(top_k=2).invoke("Add a signup form")
            ''
        """
        flat = {
            name: value
            for name, value in (
                ("top_k", top_k),
                ("fetch_k", fetch_k),
                ("weights", weights),
                ("half_life", half_life),
                ("current_time", current_time),
            )
            if value is not None
        }
        runnable: Runnable[Any, str] = self._adapters["runnable"](
            self,
            input_key=input_key,
            options=options,
            max_tokens=max_tokens,
            token_counter=token_counter,
            include_strategy=include_strategy,
            renderer=renderer,
            **flat,
            **recall_options,
        )
        return runnable
