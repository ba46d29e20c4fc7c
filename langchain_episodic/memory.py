"""EpisodicMemory: a short-term window over a long-term store (article, section 7).

A façade: the constructor wires one namespace's services (`langchain_episodic.service`)
and every method delegates to the one that owns the job.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal, overload

import numpy as np
from langchain_core.embeddings import Embeddings
from typing_extensions import Unpack

from langchain_episodic._async import async_twin
from langchain_episodic._validation import as_ids, check_bool, check_int
from langchain_episodic.embeddings.background import default_background_texts
from langchain_episodic.embeddings.builtin import default_embeddings
from langchain_episodic.model.episode import Episode, TaskDescription, as_task
from langchain_episodic.model.erasure import ForgetReceipt
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from langchain_episodic.prompting.renderers import RendererArg
from langchain_episodic.scoring.credit import (
    UTILITY_HALF_LIFE,
)
from langchain_episodic.scoring.options import RecallKeywords, RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult, ReplayWeights
from langchain_episodic.scoring.ranking import RecallReport
from langchain_episodic.scoring.relevance import Calibration, calibration_for
from langchain_episodic.scoring.retention import Retention
from langchain_episodic.scoring.skills import SkillProfile, profiles_from_tallies
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.credit import Runs
from langchain_episodic.service.erasure import Eraser
from langchain_episodic.service.journal import Journal
from langchain_episodic.service.lessons import Lessons
from langchain_episodic.service.opening import (
    MismatchPolicy,
    check_background,
    check_holdout,
    check_settings,
    checked_embeddings,
    open_services,
    require_namespace,
)
from langchain_episodic.service.quarantine import Quarantine
from langchain_episodic.service.replay import Replays
from langchain_episodic.stores.base import DEFAULT_NAMESPACE, EpisodeStore
from langchain_episodic.stores.chroma.store import ChromaEpisodeStore

if TYPE_CHECKING:  # LangChain's retrievers and runnables: imported where they are made
    from langchain_core.runnables import Runnable

    from langchain_episodic.retriever import EpisodicRetriever

__all__ = ["OPEN_RUN_TTL", "EpisodicMemory"]

OPEN_RUN_TTL = 7 * 86_400.0
"""Seven days, in seconds: how long a run may wait for its outcome before it is closed."""


class EpisodicMemory:
    """Two-tier episodic memory with prioritized experience replay.

    The short-term tier is a sliding window of the last ``short_term_limit`` recorded
    episodes; the long-term tier is a `ChromaEpisodeStore` holding every
    episode with the embedding of its task description. `recall` fetches
    ``fetch_k`` candidates by cosine similarity, then ranks them by replay priority
    (similarity, recency, reward, outcome).

    Instantiate:
        ```python
        from langchain_episodic import ChromaEpisodeStore, EpisodicMemory

        memory = EpisodicMemory(store=ChromaEpisodeStore(path="./episodic-memory"))
        ```

    Record:
        ```python
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
        ```

    Recall:
        ```python
        for hit in memory.recall("Build a signup form", top_k=3):
            print(hit.episode.episode_id, round(hit.priority, 3))
        ```

    Async:
        ```python
        hits = await memory.arecall("Build a signup form")
        ```

    Args:
        store: The long-term tier; a private in-process store when ``None``.
        embeddings: Any LangChain ``Embeddings``; when ``None``, the packaged
            `StaticEmbeddings` (semantic,
            offline, no torch). Before 0.2 the default was `HashingEmbeddings`:
            a namespace built with it needs ``embeddings=HashingEmbeddings()`` (the
            mismatch error says so).
        short_term_limit: Size of the short-term window (the article's N = 5).
        namespace: Episodes of one namespace are invisible to every other.
        clock: Returns "now" in seconds when ``current_time`` is not given.
        open_run_ttl: Seconds a run may stay open (shown episodes, no outcome yet)
            before ``memory.runs.expire()`` closes it without credit; ``None``:
            never. Stale runs are closed when the memory opens.
        utility_half_life: How fast credit evidence is forgotten, in seconds.
        on_embedding_mismatch: ``"raise"`` (default) refuses a namespace built with
            another embedding model; ``"read-only"`` opens it anyway without the
            stored model, to read it (`episodes`, `skill_profiles`, or as
            the source of `migrate_namespace`),
            and `record` and `recall` then raise the mismatch error.
        create_namespace: ``True`` (default) creates ``namespace`` on first open;
            ``False`` opens only a namespace the store already lists and raises
            `NamespaceNotFoundError` otherwise,
            listing the namespaces there (and, on Chroma, the other
            ``collection_name`` values), before anything is written: a reader's
            guard against a mistyped ``namespace=`` or ``collection_name=``.
        holdout: The fraction of runs, in [0, 1), shown no memory by chance
            (`build_replay` with a ``run_id`` shows them
            nothing and notes them as holdout runs): the causal baseline that credit
            compares shown episodes with and ``memory.runs.lift()`` reports against. ``0``
            (default): none.
        rng: Draws the holdout runs (``np.random.default_rng(seed)`` to reproduce).
        background: Texts the agent's tasks are *not* about, which the relevance
            test compares each task against (a stored episode must be about as
            similar to the task as the task's nearest background texts;
            `langchain_episodic.scoring.relevance`). ``None`` (default): the
            packaged everyday requests, right for agents that do technical work;
            ``()``: no background test (the similarity floor only). An agent whose
            own tasks are everyday ones passes texts of what it does not do.
        retention: How much the namespace keeps
            (`Retention`: a maximum age
            and/or number of episodes), applied by ``memory.forgetting.prune()`` and, with
            ``on_write=True``, after writes. ``None`` (default): everything is kept.
        shared: The namespace is shared by principals who may not trust each other
            (one memory for many users, open to whoever can submit a task): recall
            normalises similarity by task length, collapses near-duplicates and lets
            one principal (``EpisodeSource.principal``) fill at most a third of a
            replay (`sharing`); ``memory.runs.shared``
            says so. ``False`` (default): one user's memory, recalled as is.
        infer_categories: An episode recorded with no category (``unknown``) is
            stored with the one its task's text says (`task`), so that
            `skill_profiles` and per-category credit mean something for episodes
            recorded by hand. ``False``: stored as given. One call opts out with
            ``record(..., infer_category=False)`` (``unknown`` on purpose).
        trace_content: Each recall, replay, credit and forget is a LangChain run under
            the caller's (LangSmith, any callback handler) and, with an OpenTelemetry
            SDK, a span (`langchain_episodic.service.tracing`): ids, scores, what was
            shown and withheld and why. ``True`` lets them carry the text the memory
            stores too (tasks, the replay prompt); traces leave the machine, so
            ``False`` (default) keeps it out. An erasure's trace never names an id.

    The embedding model is part of the namespace: opening embeds one probe text and
    compares the model's fingerprint with the one recorded when the namespace was
    created; another model raises `EmbeddingMismatchError`, naming both and how
    to move on (`langchain_episodic.service.opening`).

    Episodes are immutable: recording an identical episode again is a no-op; recording
    a different one under a stored ``episode_id`` raises `EpisodeConflictError`.
    One process should write to a namespace at a time; readers may be many.

    The memory is a façade: its core verbs (record, recall, episodes, skill profiles,
    namespaces, forget, the LangChain adapters) and one sub-object per other area:

    - ``memory.runs`` (`Runs`): runs, credit,
      utilities, probation, holdout and lift;
    - ``memory.lessons`` (`Lessons`);
    - ``memory.quarantine`` (`Quarantine`):
      quarantine and pins;
    - ``memory.forgetting`` (`Eraser`):
      a whole namespace, retention, erasure receipts;
    - ``memory.journal`` (`Journal`);
    - ``memory.replay`` (`Replays`): the replay prompt (`build_replay` calls it).

    Each sub-object is the service of `langchain_episodic.service` that owns the
    job, over one `NamespaceContext`. Every method that
    embeds or reads or writes the store has an ``a``-prefixed async twin (one executor
    hop); what the memory already holds (utilities, lessons, the quarantine log, skill
    profiles) is returned at once and has none.
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
        shared: bool = False,
        infer_categories: bool = True,
        trace_content: bool = False,
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
        self._scoped_lock = threading.Lock()
        self._s = open_services(
            NamespaceContext(
                self.store,
                namespace,
                self.embeddings,
                clock,
                check_bool("trace_content", trace_content),
            ),
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
            shared=check_bool("shared", shared),
            infer_categories=check_bool("infer_categories", infer_categories),
        )

    @property
    def runs(self) -> Runs:
        """Runs, their outcomes and credit: utilities, probation, holdout and lift."""
        return self._s.runs

    @property
    def replay(self) -> Replays:
        """The replay prompt of a task: `build` (what `build_replay` calls), `report`.

        Examples:
            >>> replay = EpisodicMemory().replay.build("Add a signup form")
            >>> replay.text
            ''
        """
        return self._s.replay

    @property
    def lessons(self) -> Lessons:
        """The namespace's lessons: add, list, revise, consolidate, recall."""
        return self._s.lessons

    @property
    def quarantine(self) -> Quarantine:
        """Quarantine (hidden from recall, kept) and pins (shown whatever credit says)."""
        return self._s.quarantine

    @property
    def forgetting(self) -> Eraser:
        """Forgetting a whole namespace, retention, and the receipts of every erasure."""
        return self._s.eraser

    @property
    def journal(self) -> Journal:
        """The journal of injections, outcomes and lessons: copy, merge, checkpoint."""
        return self._s.journal

    def __repr__(self) -> str:
        return (
            f"EpisodicMemory(store={self.store!r}, namespace={self.namespace!r}, "
            f"short_term_limit={self.short_term_limit})"
        )

    def __len__(self) -> int:
        """Number of episodes in this namespace's long-term tier."""
        return self.store.count(self.namespace)

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
        (``memory.journal.checkpoint()``).
        """
        self._s.summary.save(force=True)
        self._s.journal.checkpoint(only_if_behind=True)

    # ------------------------------------------------------------------ episodes

    def record(self, episode: Episode, *, infer_category: bool = True) -> bool:
        """Store one episode in both tiers; ``False`` if the identical one was stored.

        An episode whose task names no category is stored with the one its text says
        (`task`; the memory's ``infer_categories``); ``infer_category=False`` keeps
        ``unknown``. Recording it again, with or without that category, is a no-op.

        Examples:
            >>> from langchain_episodic import episode_from_tests
            >>> memory = EpisodicMemory()
            >>> crash = episode_from_tests("Fix the crash in the login handler", "...", 10, 10,
            ...                            episode_id="crash-1", timestamp=1.0)
            >>> memory.record(crash), memory.record(crash)
            (True, False)
            >>> memory.get_episodes("crash-1")["crash-1"].task.category.value
            'debugging'

        Raises:
            TypeError: ``episode`` is not an `Episode`.
            EpisodeConflictError: A different episode holds the same ``episode_id``.
        """
        return self.record_many([episode], infer_category=infer_category) == 1

    def record_many(
        self,
        episodes: Iterable[Episode],
        *,
        in_time_order: bool = True,
        infer_category: bool = True,
    ) -> int:
        """Store many episodes, all validated before any is written; how many were new.

        Written in time order unless ``in_time_order=False`` (a migration keeps the
        source's); a new episode whose ``source.run_id`` names a run closes it. A
        category is inferred as in `record`. See `write` for errors.
        """
        batch = check_bool("infer_category", infer_category)
        return self._s.writer.write(
            list(episodes), in_time_order=in_time_order, infer_category=batch
        )

    def get_episodes(self, episode_ids: str | Iterable[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id (missing ones left out)."""
        return self.store.get(self.namespace, as_ids(episode_ids))

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
        quarantined = self._s.quarantine.quarantine_log.active
        return tuple(e for e in self._s.window if e.episode_id not in quarantined)

    def skill_profiles(self) -> tuple[SkillProfile, ...]:
        """Per-category skill profiles: ``compute_skill_profiles(memory.episodes())``, kept."""
        return profiles_from_tallies(self._s.summary.tallies)

    # ------------------------------------------------------------------ recall

    @overload
    def recall(
        self,
        query: str | TaskDescription,
        top_k: int | None = None,
        current_time: float | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        fetch_k: int | None = None,
        *,
        options: RecallOptions | None = None,
        explain: Literal[False] = False,
        **fields: Unpack[RecallKeywords],
    ) -> tuple[PrioritizedResult, ...]: ...

    @overload
    def recall(
        self,
        query: str | TaskDescription,
        top_k: int | None = None,
        current_time: float | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        fetch_k: int | None = None,
        *,
        options: RecallOptions | None = None,
        explain: Literal[True],
        **fields: Unpack[RecallKeywords],
    ) -> RecallReport: ...

    def recall(
        self,
        query: str | TaskDescription,
        top_k: int | None = None,
        current_time: float | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        fetch_k: int | None = None,
        *,
        options: RecallOptions | None = None,
        explain: bool = False,
        **fields: Unpack[RecallKeywords],
    ) -> tuple[PrioritizedResult, ...] | RecallReport:
        """At most ``top_k`` (3) past episodes worth replaying for ``query``, best first.

        Fetches ``fetch_k`` candidates by similarity (default ``2 * top_k``, as in the
        article), then ranks them. By default (``ranking="relevance"``) only relevant
        candidates come back, ordered by similarity scaled by value (recency, reward,
        outcome, utility): fewer than ``top_k``, or none, when fewer are relevant.
        ``ranking="article"`` is the article's additive priority, exactly. Every
        argument is the `RecallOptions` field of its name
        (``min_similarity``, ``filters``, ``category``, ``outcome``, ``ranking``,
        ``relevance_margin``, ``use_utility`` by keyword), checked by building one;
        ``options=`` gives them as one ``RecallOptions`` (the others apply on top).

        ``explain=True`` returns the `RecallReport`
        instead: the same results, each with its scores and why it was kept, and the
        candidates turned away with the reason.

        Examples:
            >>> memory = EpisodicMemory()
            >>> memory.recall("Fix the login crash", top_k=2)
            ()
            >>> report = memory.recall("Fix the login crash", explain=True)
            >>> report.results, report.rejected
            ((), ())

        Raises:
            EpisodicValueError: An argument is out of range; the message names it.
            TypeError: An unknown option, or ``weights`` / ``filters`` of another type.
        """
        given = _given(
            top_k=top_k,
            current_time=current_time,
            weights=weights,
            half_life=half_life,
            fetch_k=fetch_k,
        )
        chosen = RecallOptions.from_mapping(options, {**given, **fields})
        report = self._s.recall.report(as_task(query, "query"), chosen)
        return report if explain else report.results

    def task(self, task: str | TaskDescription) -> TaskDescription:
        """``task`` as the memory reads it: text gets its category inferred.

        A task without a category (text, or ``TaskCategory.UNKNOWN``) gets the one its
        nearest labelled example tasks vote for (code generation, debugging,
        refactoring, testing, architecture; measured in ``benchmarks/categories.py``),
        or stays ``unknown`` when it is not about software work. A task that names its
        category keeps it. The middleware reads every agent run's task this way.

        Examples:
            >>> EpisodicMemory().task("Fix the crash when the cart is empty").category.value
            'debugging'
        """
        return self._s.recall.with_category(as_task(task, "task"))

    arecall, atask = async_twin(recall), async_twin(task)

    # ------------------------------------------------------------------ forgetting

    def forget(
        self,
        episode_ids: str | Iterable[str],
        *,
        reason: str,
        by: str | None = None,
        dry_run: bool = False,
    ) -> ForgetReceipt:
        """Erase episodes and everything derived from them; a receipt of what went.

        Follows lineage (`erasure`): the records and
        their vectors; the lessons derived from them (removed, not re-derived); the
        injection records and run outcomes naming them, rewritten without them (an
        injection also loses its task text); the quarantine- and pin-log events
        naming them; the summary and the short-term window. Each erased id leaves a
        tombstone (a digest, not the id), so it is never stored again. An embedded
        Chroma store then purges its files (see ``receipt.storage``). A lesson id
        may be given too: it goes with the lessons revising or merging it.

        Examples:
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
        return self._s.eraser.forget(as_ids(episode_ids), reason, by, dry_run=dry_run)

    aforget = async_twin(forget)

    # ------------------------------------------------------------ namespaces

    def for_namespace(self, namespace: str) -> EpisodicMemory:
        """This memory's twin for another namespace: same store, embeddings and settings.

        One twin per namespace is kept and reused (a multi-user agent opens each
        user's once); it checks the embeddings against its namespace's fingerprint.
        """
        if namespace == self.namespace:
            return self
        with self._scoped_lock:  # opening one reads its store: this memory's runs go on
            if namespace not in self._scoped:
                self._scoped[namespace] = EpisodicMemory(
                    self.store,
                    self.embeddings,
                    self.short_term_limit,
                    namespace,
                    clock=self._s.context.clock,
                    open_run_ttl=self._s.runs.open_run_ttl,
                    utility_half_life=self._s.journal.credit.half_life,
                    holdout=self._s.runs.holdout,
                    rng=self._s.runs.rng,
                    background=self.background,
                    retention=self._s.eraser.retention,
                    shared=self._s.runs.shared,
                    infer_categories=self._s.writer.categorize is not None,
                    trace_content=self._s.context.trace_content,
                )
            return self._scoped[namespace]

    # ------------------------------------------------------------ integrations

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
    ) -> EpisodicRetriever:
        """This memory as an `EpisodicRetriever`.

        Takes what LangChain's ``VectorStore.as_retriever`` takes: ``search_type``
        (``"similarity"``, ``"similarity_score_threshold"``; ``"mmr"`` is refused by
        name) and ``search_kwargs`` (``k``, ``fetch_k``, ``filter``,
        ``score_threshold``, any recall option by name); or the recall options flat
        (``k=2``, ``category="debugging"``). An option it does not know is refused,
        naming it.

        Examples:
            >>> from langchain_episodic import EpisodicMemory
            >>> memory = EpisodicMemory()
            >>> memory.as_retriever(search_kwargs={"k": 2, "filter": {"outcome": "success"}}).k
            2
        """
        given = _given(
            k=k,
            options=options,
            fetch_k=fetch_k,
            weights=weights,
            half_life=half_life,
            current_time=current_time,
        )
        if search_type != "similarity" or search_kwargs is not None:
            given.update(search_type=search_type, search_kwargs=search_kwargs)
        # Loaded on first use: a memory that is never a retriever never imports LangChain's.
        from langchain_episodic.retriever import retriever_for  # noqa: PLC0415

        return retriever_for(self, **given, **recall_options)

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

        Examples:
            >>> from langchain_episodic import EpisodicMemory
            >>> EpisodicMemory().as_runnable(top_k=2).invoke("Add a signup form")
            ''
        """
        flat = _given(
            top_k=top_k,
            fetch_k=fetch_k,
            weights=weights,
            half_life=half_life,
            current_time=current_time,
        )
        from langchain_episodic.runnable import create_replay_runnable  # noqa: PLC0415

        return create_replay_runnable(
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


def _given(**values: Any) -> dict[str, Any]:
    """The arguments given, in order: those that are not ``None``."""
    return {name: value for name, value in values.items() if value is not None}
