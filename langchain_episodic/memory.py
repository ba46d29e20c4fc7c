"""EpisodicMemory: a short-term window over a long-term Chroma tier (article, section 7)."""

from __future__ import annotations

import functools
import hashlib
import logging
import math
import threading
import time
import warnings
import weakref
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, ClassVar, Literal

import numpy as np
from langchain_core.embeddings import Embeddings
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import Runnable
from langchain_core.runnables.config import run_in_executor
from numpy.typing import NDArray

from langchain_episodic._validation import check_int, check_number, describe, encodes
from langchain_episodic.embeddings.builtin import builtin_expression, default_embeddings
from langchain_episodic.embeddings.fingerprint import (
    SAME_MODEL_SIMILARITY,
    EmbedderFingerprint,
    RefusingEmbeddings,
    fingerprint_embeddings,
)
from langchain_episodic.embeddings.hashing import HashingEmbeddings
from langchain_episodic.errors import (
    CreditError,
    EmbeddingMismatchError,
    EpisodeConflictError,
    EpisodeValidationError,
    EpisodicValueError,
    MalformedRecordWarning,
    NamespaceNotFoundError,
)
from langchain_episodic.model.episode import Episode, OutcomeStatus, TaskCategory, TaskDescription
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.model.lesson import (
    MERGE_SIMILARITY,
    Lesson,
    LessonStatus,
    lesson_status,
    merge_lessons,
    plan_consolidation,
)
from langchain_episodic.model.quarantine import QuarantineAction, QuarantineEvent
from langchain_episodic.scoring.credit import (
    PRIOR_HELPED,
    PRIOR_HURT,
    UTILITY_HALF_LIFE,
    CreditEvent,
    EpisodeUtility,
    Injection,
    utility_factor,
)
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult, ReplayWeights
from langchain_episodic.scoring.ranking import Neighbour, RecallReport, Rejected, rank_candidates
from langchain_episodic.scoring.relevance import Ranking, relevance_floor_for
from langchain_episodic.scoring.skills import SkillProfile, profiles_from_tallies
from langchain_episodic.service.credit_log import CreditLog
from langchain_episodic.service.lesson_log import LessonLog
from langchain_episodic.service.quarantine import QuarantineLog
from langchain_episodic.service.summary import Summary
from langchain_episodic.stores.base import DEFAULT_NAMESPACE, EpisodeStore, StoredHit
from langchain_episodic.stores.chroma import ChromaEpisodeStore
from langchain_episodic.stores.codec import collect_malformed

__all__ = ["EpisodicMemory"]

# More candidates than any store holds; vector databases refuse counts past 32 bits.
_MAX_CANDIDATES = 2**31 - 1

EMBEDDER_STATE_KEY = "embedder"
"""The store state key under which a namespace keeps its embedder's fingerprint."""
_MISMATCH_POLICIES = ("raise", "read-only")
_UNKNOWN_MODEL = "a model whose fingerprint was never recorded (an earlier version wrote it)"
OPEN_RUN_TTL = 7 * 86_400.0
"""Seven days, in seconds: how long a run may wait for its outcome before it is closed."""
_log = logging.getLogger(__name__)


def _query_text(query: str | TaskDescription) -> str:
    if isinstance(query, TaskDescription):
        return query.description
    if not isinstance(query, str) or not query.strip():
        msg = f"query={query!r} is invalid: must be a non-empty string or a TaskDescription"
        raise EpisodicValueError(msg)
    return query


def _task_text(hit: StoredHit) -> str:
    task = hit.data.get("task")
    description = task.get("description") if isinstance(task, dict) else None
    return description if isinstance(description, str) else ""


def _strategy_of(hit: StoredHit) -> str:
    strategy = hit.data.get("strategy_used")
    return strategy if isinstance(strategy, str) else ""


def _check_vectors(vectors: Sequence[Sequence[float]], names: Sequence[str]) -> NDArray[np.float32]:
    """The vectors as one float32 matrix (Chroma's own precision), checked row by row."""
    try:
        matrix = np.asarray(vectors, dtype=np.float32)
    except (TypeError, ValueError):
        matrix = np.empty((0, 0), dtype=np.float32)
    if matrix.ndim != 2 or matrix.shape[0] != len(names) or matrix.shape[1] == 0:
        msg = (
            f"the embeddings model returned {len(vectors)} vectors of unusable shape for "
            f"{len(names)} texts; expected one non-empty vector of equal length per text"
        )
        raise EpisodicValueError(msg)
    finite = np.asarray(np.isfinite(matrix).all(axis=1), dtype=np.bool_)
    nonzero = np.asarray(np.abs(matrix).max(axis=1) > 0, dtype=np.bool_)
    for index in np.flatnonzero(~(finite & nonzero))[:1]:
        rule = (
            "must be a vector of finite numbers"
            if not finite[index]
            else "is the zero vector, which has no cosine similarity"
        )
        msg = f"the embedding of {names[index]} is invalid: it {rule}"
        raise EpisodicValueError(msg)
    return matrix


def _legacy_mismatch(
    store: EpisodeStore, namespace: str, embeddings: Embeddings, total: int
) -> str | None:
    """Why the ``total`` stored records were not embedded by ``embeddings``, or ``None``.

    For a namespace written before fingerprints: re-embed its latest episode's task
    and search for it. Vectors of the same model find it again (similarity ~1);
    another model's do not, and a backend refuses vectors of another dimension.
    """
    latest = store.latest(namespace, 1, total)
    text = latest[0].task.description if latest else "probe"
    vector = _check_vectors(embeddings.embed_documents([text]), [f"the task {text!r}"])[0]
    try:
        hits = store.search_hits(namespace, vector, 1)
    except Exception as exc:  # each backend words a dimension mismatch its own way
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return (
            f"its stored vectors cannot be searched with the given model's "
            f"{len(vector)}-dimensional ones ({detail})"
        )
    if latest and hits and hits[0].similarity < SAME_MODEL_SIMILARITY:
        return (
            f"re-embedding its latest episode's task finds the nearest stored vector at "
            f"similarity {hits[0].similarity:.2f}, where the model that stored it gives ~1"
        )
    return None


def _old_default(store: EpisodeStore, namespace: str, total: int) -> str | None:
    """``"HashingEmbeddings()"`` when the default before 0.2 built this legacy namespace."""
    if _legacy_mismatch(store, namespace, HashingEmbeddings(), total) is None:
        return "HashingEmbeddings()"
    return None


def _checked_embeddings(
    store: EpisodeStore, namespace: str, embeddings: Embeddings, on_mismatch: str
) -> Embeddings:
    """``embeddings`` once they match the namespace's recorded model (see EpisodicMemory)."""
    given = fingerprint_embeddings(embeddings)
    if given is None:
        # No usable vector for the probe: its vectors are refused where they are used.
        return embeddings
    packed = store.read_state(namespace, EMBEDDER_STATE_KEY)
    stored = EmbedderFingerprint.from_json(packed) if packed is not None else None
    if stored is not None:
        reason = stored.mismatch(given)
        if reason is None:
            return embeddings
        error = EmbeddingMismatchError(
            namespace, stored.describe(), given.describe(), reason, builtin_expression(stored)
        )
    else:
        total = store.count(namespace)
        reason = _legacy_mismatch(store, namespace, embeddings, total) if total else None
        if reason is None:
            store.write_state(namespace, EMBEDDER_STATE_KEY, given.to_json())
            return embeddings
        error = EmbeddingMismatchError(
            namespace,
            _UNKNOWN_MODEL,
            given.describe(),
            reason,
            _old_default(store, namespace, total),
        )
    if on_mismatch == "read-only":
        return RefusingEmbeddings(error)
    raise error


class EpisodicMemory:
    """Two-tier episodic memory with prioritized experience replay.

    The short-term tier is a sliding window of the last ``short_term_limit`` recorded
    episodes; the long-term tier is a :class:`ChromaEpisodeStore` holding every
    episode with the embedding of its task description. :meth:`recall` fetches
    ``fetch_k`` candidates by cosine similarity, then ranks them by replay priority
    (similarity, recency, reward, outcome).

    Setup:
        .. code-block:: bash

            pip install langchain-episodic

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

    The embedding model is part of the namespace. Opening a memory embeds one fixed
    probe text (one embedding per open: microseconds for the default model, a few
    milliseconds for a local model like MiniLM, one request for an API; nothing
    on record or recall) and compares the model's
    :class:`~langchain_episodic.embeddings.fingerprint.EmbedderFingerprint` (class,
    model name, dimension, a sketch of the probe vector) with the one recorded when
    the namespace was created. Another model — another dimension, or the same
    dimension with other weights — raises :class:`EmbeddingMismatchError`, naming
    both and how to move on. A namespace that holds episodes but no fingerprint
    (written by an earlier version) is checked once against its data: the model
    must find its latest episode again by re-embedding its task (similarity ~1);
    if it does, its fingerprint is recorded, otherwise the open is refused. A model
    whose vector for the probe is unusable (zero, not finite) is not checked; its
    vectors are refused where they are used.

    Episodes are immutable: recording an identical episode again is a no-op; recording
    a different one under a stored ``episode_id`` raises :class:`EpisodeConflictError`.
    One process should write to a namespace at a time; readers may be many.
    """

    def __init__(
        self,
        store: EpisodeStore | None = None,
        embeddings: Embeddings | None = None,
        short_term_limit: int = 5,
        namespace: str = DEFAULT_NAMESPACE,
        *,
        clock: Callable[[], float] = time.time,
        on_embedding_mismatch: Literal["raise", "read-only"] = "raise",
        open_run_ttl: float | None = OPEN_RUN_TTL,
        utility_half_life: float = UTILITY_HALF_LIFE,
        create_namespace: bool = True,
    ) -> None:
        check_int("short_term_limit", short_term_limit, 0)
        if open_run_ttl is not None:
            check_number("open_run_ttl", open_run_ttl, 0.0)
        utility_half_life = check_number("utility_half_life", utility_half_life, 0.0)
        if utility_half_life <= 0:
            msg = f"utility_half_life={utility_half_life!r} is invalid: must be positive"
            raise EpisodicValueError(msg)
        if on_embedding_mismatch not in _MISMATCH_POLICIES:
            msg = (
                f"on_embedding_mismatch={on_embedding_mismatch!r} is invalid: must be "
                "'raise' or 'read-only'"
            )
            raise EpisodicValueError(msg)
        if not isinstance(namespace, str) or not namespace.strip() or not encodes(namespace):
            msg = (
                f"namespace={describe(namespace)} is invalid: must be a non-empty string "
                "of valid Unicode"
            )
            raise EpisodicValueError(msg)
        if embeddings is not None and not isinstance(embeddings, Embeddings):
            msg = f"embeddings={embeddings!r} is invalid: must be a LangChain Embeddings"
            raise TypeError(msg)
        if store is not None and not isinstance(store, EpisodeStore):
            msg = (
                f"store={store!r} is invalid: must implement EpisodeStore (e.g. a "
                "ChromaEpisodeStore, InMemoryEpisodeStore or VectorStoreEpisodeStore)"
            )
            raise TypeError(msg)
        if not isinstance(create_namespace, bool):
            msg = f"create_namespace={create_namespace!r} is invalid: must be True or False"
            raise EpisodicValueError(msg)
        self.store: EpisodeStore = store if store is not None else ChromaEpisodeStore()
        if not create_namespace:
            # Checked before the fingerprint check below, whose first write creates it.
            available = self.store.namespaces()
            if namespace not in available:
                layout = getattr(self.store, "collection_names", None)
                own = getattr(self.store, "collection_name", None)
                elsewhere = {n: s for n, s in layout().items() if n != own} if layout else {}
                raise NamespaceNotFoundError(namespace, repr(self.store), available, elsewhere)
        self.embeddings: Embeddings = _checked_embeddings(
            self.store,
            namespace,
            embeddings if embeddings is not None else default_embeddings(),
            on_embedding_mismatch,
        )
        self.short_term_limit = short_term_limit
        self.namespace = namespace
        self._clock = clock
        # One writer at a time per memory object: record numbers (seq) come from the
        # running count, and the immutability check must see the previous write.
        self._write_lock = threading.RLock()
        # Memories of other namespaces over the same store (for_namespace), one each.
        self._scoped: dict[str, EpisodicMemory] = {}
        self._quarantine = QuarantineLog(self.store, namespace)
        self.open_run_ttl = open_run_ttl
        journal = self.store.read_journal(namespace)  # read once for credit and lessons
        self._credit = CreditLog(self.store, namespace, utility_half_life, journal)
        self._lessons = LessonLog(self.store, namespace, journal)
        if not isinstance(self.embeddings, RefusingEmbeddings):
            self.expire_open_runs()
        self._summary = Summary.open(self.store, namespace)
        weakref.finalize(self, self._summary.save_quietly)
        self._short_term: deque[Episode] = deque(
            self.store.latest(namespace, short_term_limit, self._summary.count),
            maxlen=short_term_limit,
        )

    def __repr__(self) -> str:
        return (
            f"EpisodicMemory(store={self.store!r}, namespace={self.namespace!r}, "
            f"short_term_limit={self.short_term_limit})"
        )

    def flush(self) -> None:
        """Save the per-category summary now.

        The summary (counts behind :meth:`skill_profiles`) is saved every
        ``SUMMARY_INTERVAL_EPISODES`` episodes or ``SUMMARY_INTERVAL_SECONDS`` seconds,
        and when the memory is garbage-collected; episodes themselves are always
        written at once. A summary that lags behind is caught up on the next open by
        counting only the episodes recorded after it.
        """
        self._summary.save(force=True)

    # ------------------------------------------------------------------ record

    def record(self, episode: Episode) -> bool:
        """Store one episode in both tiers.

        Returns:
            ``True`` if it was new, ``False`` if the identical episode was already stored.

        Raises:
            TypeError: ``episode`` is not an :class:`Episode`.
            EpisodeConflictError: A different episode holds the same ``episode_id``.
        """
        return self.record_many([episode]) == 1

    def record_many(self, episodes: Iterable[Episode], *, in_time_order: bool = True) -> int:
        """Store many episodes, validating all of them before writing any.

        Each batch is written in time order (stable sort by timestamp) so that the
        short-term window and :meth:`episodes` follow time; ``in_time_order=False``
        keeps the given order instead (a migration keeps the source's recording
        order). Embeddings are computed in one ``embed_documents`` call; writes are
        batched under the store's limit.

        Returns:
            How many episodes were new (identical re-records are skipped).

        Raises:
            TypeError: An item is not an :class:`Episode`.
            EpisodeConflictError: Two different episodes share an ``episode_id``, in
                the batch or against the store. Nothing is written.
            EpisodicValueError: The embeddings model returned unusable vectors.
        """
        with self._write_lock:
            return self._write_new(list(episodes), in_time_order=in_time_order)

    def _write_new(self, batch: list[Episode], *, in_time_order: bool) -> int:
        unique: dict[str, Episode] = {}
        for index, episode in enumerate(batch):
            if not isinstance(episode, Episode):
                msg = f"episodes[{index}]={episode!r} is not an Episode"
                raise TypeError(msg)
            seen = unique.setdefault(episode.episode_id, episode)
            if seen != episode:
                raise EpisodeConflictError(
                    episode.episode_id, self.namespace, seen.differences(episode), in_batch=True
                )
        if not unique:
            return 0
        with collect_malformed() as malformed:
            stored = self.store.get(self.namespace, list(unique))
        occupied = [warning for warning in malformed if warning.record_id in unique]
        if occupied:
            # A store keeps the first record under an id: writing would do nothing.
            msg = (
                f"episode_id={occupied[0].record_id!r} is held in namespace="
                f"{self.namespace!r} by a stored record that is not a readable episode "
                f"({occupied[0].reason}); nothing was written. Find such records with "
                "'langchain-episodic verify' and delete them, or use another episode_id"
            )
            raise EpisodicValueError(msg)
        for episode_id, existing in stored.items():
            if existing != unique[episode_id]:
                differences = existing.differences(unique[episode_id])
                raise EpisodeConflictError(episode_id, self.namespace, differences)
        new = [episode for episode_id, episode in unique.items() if episode_id not in stored]
        if in_time_order:
            new.sort(key=lambda episode: episode.timestamp)
        if not new:
            return 0
        vectors = self.embeddings.embed_documents([episode.task.description for episode in new])
        checked = _check_vectors(vectors, [f"episode_id={e.episode_id!r}" for e in new])
        self.store.add(self.namespace, new, checked, first_seq=self._summary.count)
        self._summary.add(new)
        self._short_term.extend(new)
        for episode in new:
            if episode.source is not None and episode.source.run_id is not None:
                self._credit_quietly(episode.source.run_id, episode.feedback.reward, None)
        return len(new)

    async def arecord(self, episode: Episode) -> bool:
        """Async twin of :meth:`record`."""
        return await run_in_executor(None, self.record, episode)

    async def arecord_many(self, episodes: Iterable[Episode], *, in_time_order: bool = True) -> int:
        """Async twin of :meth:`record_many`."""
        batch = list(episodes)
        return await run_in_executor(
            None, lambda: self.record_many(batch, in_time_order=in_time_order)
        )

    # ------------------------------------------------------------------ recall

    def recall(
        self,
        query: str | TaskDescription,
        top_k: int = 3,
        current_time: float | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        fetch_k: int | None = None,
        *,
        min_similarity: float | None = None,
        filters: EpisodeFilter | None = None,
        category: TaskCategory | str | Iterable[TaskCategory | str] | None = None,
        outcome: OutcomeStatus | str | Iterable[OutcomeStatus | str] | None = None,
        ranking: Ranking = "relevance",
        relevance_margin: float | None = None,
        use_utility: bool = True,
    ) -> tuple[PrioritizedResult, ...]:
        """At most ``top_k`` past episodes worth replaying for ``query``, best first.

        Fetches ``fetch_k`` candidates by cosine similarity (default ``2 * top_k``,
        as in the article), then ranks them. By default (``ranking="relevance"``)
        only candidates that pass the relevance test come back — similarity at least
        ``min_similarity`` and within ``relevance_margin`` of the best — ordered by
        similarity scaled by value (recency, reward, outcome): fewer than ``top_k``,
        or none, when fewer are relevant (:mod:`langchain_episodic.scoring.relevance`).
        ``ranking="article"`` is the source article's additive priority, exactly.
        The arguments are checked by building a
        :class:`~langchain_episodic.RecallOptions` (:meth:`recall_with` takes one,
        :meth:`recall_report` also says what was turned away and why).

        Args:
            query: The new task, as text or a :class:`TaskDescription`.
            top_k: How many episodes to return at most.
            current_time: "Now" in seconds for recency; the memory's clock when ``None``.
            weights: Priority weights; the article's defaults when ``None``.
            half_life: Recency half-life in seconds; the ranking's own when ``None``
                (30 days for relevance, one day for the article).
            fetch_k: Candidates fetched by similarity before ranking; at least ``top_k``.
            min_similarity: Similarity floor in [-1, 1]; the relevance ranking's
                default floor when ``None`` (no floor for the article's).
            filters: Restrict candidates (category, outcome, strategy).
            category: Shorthand for ``filters=EpisodeFilter(category=...)``.
            outcome: Shorthand for ``filters=EpisodeFilter(outcome=...)``.
            ranking: ``"relevance"`` (default) or ``"article"``.
            relevance_margin: How far below the best candidate a relevant one may lie.
            use_utility: Let credit scale the relevance ranking's priorities (see
                :meth:`credit`); the article's ranking ignores it.

        Raises:
            EpisodicValueError: An argument is out of range; the message names it.
            TypeError: ``weights`` or ``filters`` is not of its type, or ``filters``
                is given with ``category`` / ``outcome``.
        """
        options = RecallOptions(
            top_k=top_k,
            fetch_k=fetch_k,
            weights=weights,
            half_life=half_life,
            min_similarity=min_similarity,
            filters=filters,
            current_time=current_time,
            category=category,
            outcome=outcome,
            ranking=ranking,
            relevance_margin=relevance_margin,
            use_utility=use_utility,
        )
        return self.recall_with(query, options)

    def recall_with(
        self, query: str | TaskDescription, options: RecallOptions
    ) -> tuple[PrioritizedResult, ...]:
        """:meth:`recall` with its options given as one :class:`RecallOptions`.

        Example:
            .. code-block:: python

                options = RecallOptions(top_k=3, category="debugging")
                hits = memory.recall_with("Fix the login crash", options)

        Raises:
            TypeError: ``options`` is not a :class:`RecallOptions`.
            EpisodicValueError: ``query`` is empty, or the embedding is unusable.
        """
        return self.recall_report(query, options).results

    def recall_report(
        self,
        query: str | TaskDescription,
        options: RecallOptions,
        *,
        evidence_k: int = 0,
        lesson_k: int = 0,
    ) -> RecallReport:
        """:meth:`recall_with`, explained: the results and the candidates turned away.

        With ``evidence_k``, the same search also returns, as ``neighbours``, up to
        ``evidence_k`` most similar episodes at or above the similarity floor: the
        evidence strategy selection counts (the results are unchanged: they are
        ranked from the ``fetch_k`` most similar, as without it).

        Example:
            .. code-block:: python

                report = memory.recall_report("Fix the login crash", RecallOptions())
                for rejected in report.rejected:
                    print(rejected.episode_id, rejected.reason)

        Args:
            query: The new task, or its description.
            options: The recall options.
            evidence_k: Most similar episodes to return as ``neighbours`` (0: none).
            lesson_k: Lessons to return (:meth:`recall_lessons`, from the same query
                vector; 0: none).

        Raises:
            TypeError: ``options`` is not a :class:`RecallOptions`.
            EpisodicValueError: ``query`` is empty, ``evidence_k`` is negative, or
                the embedding is unusable.
        """
        if not isinstance(options, RecallOptions):
            msg = f"options={options!r} is invalid: must be a RecallOptions"
            raise TypeError(msg)
        check_int("evidence_k", evidence_k, 0)
        check_int("lesson_k", lesson_k, 0)
        text = _query_text(query)
        now = self.now() if options.current_time is None else options.current_time
        vector = _check_vectors([self.embeddings.embed_query(text)], [f"query={text!r}"])[0]
        book = self._credit.book
        credited = options.use_utility and options.ranking == "relevance" and bool(book.rows)
        fetch_k = options.fetch_count
        hits = self._search_unquarantined(
            vector, max(fetch_k, evidence_k), options.filters, query_text=text
        )
        floor = options.relevance_floor(self.relevance_floor)
        neighbours = tuple(
            Neighbour(hit.episode_id, hit.similarity, _strategy_of(hit), hit.outcome)
            for hit in hits[:evidence_k]
            if hit.similarity >= floor
        )
        # Rank on the stored scalars, then parse only the winners' episodes.
        ranked = rank_candidates(
            hits[:fetch_k],
            now,
            options,
            self.relevance_floor,
            (lambda hit: utility_factor(book.estimate(hit.episode_id, now))) if credited else None,
        )
        results: list[PrioritizedResult] = []
        for priority, hit, relevant in ranked.ordered:
            if len(results) == options.top_k:
                break
            try:
                episode = hit.episode()
            except EpisodeValidationError as error:
                # Written by something else into our collection: skip it, say which.
                warnings.warn(MalformedRecordWarning(hit.record_id, str(error)), stacklevel=3)
                continue
            results.append(PrioritizedResult(episode, hit.similarity, priority, relevant))
        rejected = tuple(
            Rejected(hit.episode_id, _task_text(hit), hit.similarity, reason)
            for hit, reason in ranked.rejected
        )
        utility = {
            r.episode.episode_id: book.rows[r.episode.episode_id]
            for r in results
            if credited and r.episode.episode_id in book.rows
        }
        lessons = self._lessons_near(vector, lesson_k, floor, now) if lesson_k else ()
        return RecallReport(
            tuple(results),
            rejected,
            ranked.threshold,
            options.ranking,
            neighbours,
            utility,
            now,
            lessons,
        )

    def _search_unquarantined(
        self,
        vector: NDArray[np.float32],
        fetch_k: int,
        filters: EpisodeFilter | None,
        *,
        query_text: str | None = None,
    ) -> list[StoredHit]:
        # Quarantined records stay stored; asking for that many more candidates and
        # dropping them returns exactly the fetch_k nearest of the others.
        quarantined = self._quarantine.active
        wanted = min(fetch_k + len(quarantined), _MAX_CANDIDATES)
        if query_text is not None and getattr(type(self.store), "needs_query_text", False):
            # A store that searches by text (a LangGraph store) also gets the text
            # ``vector`` embeds; the other stores are called as the protocol says.
            search: Callable[..., list[StoredHit]] = self.store.search_hits
            hits = search(self.namespace, vector, wanted, filters, query_text=query_text)
        else:
            hits = self.store.search_hits(self.namespace, vector, wanted, filters)
        if quarantined:
            hits = [hit for hit in hits if hit.episode_id not in quarantined]
        return hits[:fetch_k]

    async def arecall(
        self,
        query: str | TaskDescription,
        top_k: int = 3,
        current_time: float | None = None,
        weights: ReplayWeights | None = None,
        half_life: float | None = None,
        fetch_k: int | None = None,
        **kwargs: Any,
    ) -> tuple[PrioritizedResult, ...]:
        """Async twin of :meth:`recall`, with the same arguments."""
        return await run_in_executor(
            None, self.recall, query, top_k, current_time, weights, half_life, fetch_k, **kwargs
        )

    async def arecall_with(
        self, query: str | TaskDescription, options: RecallOptions
    ) -> tuple[PrioritizedResult, ...]:
        """Async twin of :meth:`recall_with`."""
        return await run_in_executor(None, self.recall_with, query, options)

    # -------------------------------------------------------------- quarantine

    def quarantine(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Hide stored episodes from recall without deleting them (an auditable soft delete).

        Quarantined episodes stay stored and keep their place in :meth:`episodes`
        and :meth:`skill_profiles` (history is never rewritten), but :meth:`recall`,
        and so every retriever, replay prompt and strategy choice built on it, and
        :attr:`short_term` no longer return them. Every call is appended to
        :meth:`quarantine_log`. Other processes see the change when they next open
        the namespace.

        Example:
            .. code-block:: python

                memory.quarantine("login-7", "solution came from a poisoned tool run", by="ops")
                memory.release("login-7", "tool run was fine after all", by="ops")

        Args:
            episode_ids: One id or several.
            reason: Why, for the audit trail; required.
            by: Who did it (a person, agent or tool).

        Returns:
            How many episodes were newly quarantined (already quarantined ones are skipped).

        Raises:
            EpisodicValueError: An id is not stored in this namespace, or ``reason``
                is empty. Nothing is changed.
        """
        return self._log_quarantine("quarantine", episode_ids, reason, by)

    def release(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Undo :meth:`quarantine`: recall returns these episodes again.

        Returns:
            How many episodes were released (ids not quarantined are skipped).

        Raises:
            EpisodicValueError: An id is not stored in this namespace, or ``reason``
                is empty. Nothing is changed.
        """
        return self._log_quarantine("release", episode_ids, reason, by)

    async def aquarantine(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Async twin of :meth:`quarantine`."""
        ids = [episode_ids] if isinstance(episode_ids, str) else list(episode_ids)
        return await run_in_executor(None, lambda: self.quarantine(ids, reason, by=by))

    async def arelease(
        self, episode_ids: str | Iterable[str], reason: str, *, by: str | None = None
    ) -> int:
        """Async twin of :meth:`release`."""
        ids = [episode_ids] if isinstance(episode_ids, str) else list(episode_ids)
        return await run_in_executor(None, lambda: self.release(ids, reason, by=by))

    def quarantined(self) -> dict[str, QuarantineEvent]:
        """The episodes quarantined now, each with the event that quarantined it."""
        return dict(self._quarantine.active)

    def quarantine_log(self) -> tuple[QuarantineEvent, ...]:
        """Every quarantine and release in this namespace, oldest first: the audit trail."""
        return self._quarantine.events

    def merge_quarantine_log(self, events: Sequence[QuarantineEvent]) -> int:
        """Append the events of another namespace's log that this one lacks, in order.

        Migrations call it so the audit trail moves with the episodes; merging the same
        log again appends nothing.

        Returns:
            How many events were appended.
        """
        with self._write_lock:
            return self._quarantine.merge(events)

    def _log_quarantine(
        self,
        action: QuarantineAction,
        episode_ids: str | Iterable[str],
        reason: str,
        by: str | None,
    ) -> int:
        ids = [episode_ids] if isinstance(episode_ids, str) else list(episode_ids)
        with self._write_lock:
            known = self._lessons.book.lessons.keys()
            return self._quarantine.change(action, ids, reason, by, self.now(), known)

    # ------------------------------------------------------------------ credit

    def note_injection(
        self,
        run_id: str,
        episode_ids: Iterable[str],
        task: str | TaskDescription,
        *,
        thread_id: str | None = None,
    ) -> Injection:
        """Note that a prompt showing ``episode_ids`` reached a model in run ``run_id``.

        The replay pipeline calls it for every prompt it builds with a ``run_id``
        (:func:`~langchain_episodic.build_replay`), so the middleware, runnable,
        classic memory and recall tool need nothing else. When the run's outcome is
        known, :meth:`credit` gives each shown episode the run's reward. A run may be
        noted several times (a tool called twice); its outcome credits every
        episode it was shown. One journal entry, written durably.

        Example:
            .. code-block:: python

                replay = build_replay(memory, task)
                memory.note_injection("run-7", [r.episode.episode_id for r in replay.results], task)
                ...  # the model answers, the tests run
                memory.credit("run-7", reward=0.9)

        Args:
            run_id: The run (a LangChain run id, a thread's turn, your own id).
            episode_ids: The episodes shown, in prompt order; may be empty.
            task: The task recalled for (its category groups runs for the baseline).
            thread_id: The conversation thread, when there is one.

        Returns:
            The injection record written.

        Raises:
            EpisodicValueError: ``run_id``, an id or ``task`` is empty.
        """
        task = task if isinstance(task, TaskDescription) else TaskDescription(_query_text(task))
        injection = Injection(
            run_id,
            tuple(episode_ids),
            task.description,
            task.category.value,
            self.now(),
            thread_id,
        )
        with self._write_lock:
            self._credit.note(injection)
        return injection

    async def anote_injection(
        self,
        run_id: str,
        episode_ids: Iterable[str],
        task: str | TaskDescription,
        *,
        thread_id: str | None = None,
    ) -> Injection:
        """Async twin of :meth:`note_injection`."""
        ids = list(episode_ids)
        return await run_in_executor(
            None, lambda: self.note_injection(run_id, ids, task, thread_id=thread_id)
        )

    def credit(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent:
        """Credit run ``run_id``'s reward to every episode it was shown.

        Each shown episode's utility then moves by the run's advantage: its reward
        minus what runs of the same category earned without that episode
        (:mod:`langchain_episodic.scoring.credit`). The credit is an append-only journal
        entry, one per run: crediting a run again, from this or any other memory
        or process, raises instead of counting twice.
        :meth:`record` credits by itself when the episode's ``source.run_id``
        names an open run.

        Example:
            .. code-block:: python

                memory.credit("run-7", reward=0.9, by="ci")
                memory.utility("login-1").estimate(memory.now())

        Args:
            run_id: A run noted by :meth:`note_injection`.
            reward: The run's reward, in [0, 1] (e.g. its tests' pass rate).
            by: Who credits (a person, an agent, a tool), for the audit trail.

        Returns:
            The credit event written.

        Raises:
            EpisodicValueError: ``reward`` is not in [0, 1], or ``by`` is empty.
            CreditError: No injection record names ``run_id`` here, or the run was
                already credited or closed without credit. Nothing is written.
        """
        CreditEvent(run_id, reward, (), "unknown", 0.0, by)  # check arguments before reading
        with self._write_lock:
            return self._credit.close(run_id, reward, self.now(), by)

    async def acredit(self, run_id: str, reward: float, *, by: str | None = None) -> CreditEvent:
        """Async twin of :meth:`credit`."""
        return await run_in_executor(None, lambda: self.credit(run_id, reward, by=by))

    def _credit_quietly(self, run_id: str, reward: float, by: str | None) -> CreditEvent | None:
        """:meth:`credit` for runs that may have no injection or an outcome: ``None`` then.

        The episode is stored by then: a journal that fails is logged, not raised.
        """
        try:
            return self.credit(run_id, reward, by=by)
        except CreditError:
            return None
        except Exception:
            _log.warning("could not credit run_id=%r", run_id, exc_info=True)
            return None

    def expire_open_runs(self, older_than: float | None = None) -> int:
        """Close without credit every run open longer than ``older_than`` seconds.

        A run whose agent crashed before its outcome leaves its injection record
        open; once closed, it can no longer be credited and counts nothing. The
        memory calls this when it opens, with ``open_run_ttl``.

        Args:
            older_than: Age in seconds; ``open_run_ttl`` when ``None``.

        Returns:
            How many runs were closed.
        """
        ttl = self.open_run_ttl if older_than is None else check_number("older_than", older_than, 0)
        if ttl is None:
            return 0
        now = self.now()
        closed = 0
        with self._write_lock:
            for run_id, shown in self._credit.open_runs():
                if now - max(i.at for i in shown) <= ttl:
                    continue
                try:
                    self._credit.close(run_id, None, now, "open_run_ttl")
                    closed += 1
                except CreditError:
                    continue  # another writer closed it meanwhile
        return closed

    def open_runs(self) -> dict[str, tuple[Injection, ...]]:
        """Runs shown episodes whose outcome is not in yet, with their injection records."""
        return {run_id: tuple(shown) for run_id, shown in self._credit.open_runs()}

    def credit_log(self) -> tuple[CreditEvent, ...]:
        """Every run's outcome (credit, or closing without one), oldest first: the audit trail."""
        return tuple(self._credit.credits())

    def utility(self, episode_id: str) -> EpisodeUtility:
        """What credit says of an episode: injections, credited runs, utility estimate.

        An episode never shown in a run gets an empty row, whose
        ``estimate(memory.now())`` is the prior, 0.5.
        """
        return self._credit.utility(episode_id)

    def utilities(self) -> dict[str, EpisodeUtility]:
        """Every episode shown in at least one run, with what credit says of it."""
        return dict(self._credit.book.rows)

    def harmful(self, min_runs: int = 3, max_utility: float = 0.4) -> list[EpisodeUtility]:
        """Episodes whose injections keep preceding worse outcomes: quarantine candidates.

        Those credited in at least ``min_runs`` runs whose utility estimate is at
        most ``max_utility`` (below the prior's 0.5: the runs that showed them did
        worse than runs of the same kind without them), worst first. Nothing is
        quarantined: a person decides (:meth:`quarantine`).

        Example:
            .. code-block:: python

                for row in memory.harmful():
                    print(row.episode_id, row.estimate(memory.now()), row.credited_runs)
        """
        check_int("min_runs", min_runs, 1)
        check_number("max_utility", max_utility, 0.0, 1.0)
        now = self.now()
        found = [
            row
            for row in self._credit.book.rows.values()
            if row.credited_runs >= min_runs and row.estimate(now) <= max_utility
        ]
        return sorted(found, key=lambda row: (row.estimate(now), row.episode_id))

    def reload_credit(self) -> None:
        """Read the journal afresh: other processes' injections, credits and lessons."""
        with self._write_lock:
            journal = self.store.read_journal(self.namespace)
            self._credit.reload(journal)
            self._lessons.reload(journal)

    # ------------------------------------------------------------------ views

    @property
    def relevance_floor(self) -> float:
        """The similarity floor of the relevance ranking when a recall sets none.

        Suited to the memory's embedder
        (:func:`~langchain_episodic.scoring.relevance.relevance_floor_for`): an embedder may
        declare its own as a ``relevance_floor`` attribute; pass ``min_similarity=``
        to a recall to override it.
        """
        return relevance_floor_for(self.embeddings)

    def now(self) -> float:
        """The memory's current time in seconds (its ``clock``), used when none is given."""
        return float(self._clock())

    @property
    def short_term(self) -> tuple[Episode, ...]:
        """The last ``short_term_limit`` recorded episodes, oldest first, less quarantined ones."""
        quarantined = self._quarantine.active
        return tuple(e for e in self._short_term if e.episode_id not in quarantined)

    def episodes(self, page_size: int = 1000) -> Iterator[Episode]:
        """Every episode of this namespace in recording (time) order, streamed in pages."""
        return self.store.iter_episodes(self.namespace, check_int("page_size", page_size, 1))

    def skill_profiles(self) -> tuple[SkillProfile, ...]:
        """Per-category skill profiles, kept up to date as episodes are recorded.

        Equal to ``compute_skill_profiles(memory.episodes())`` without reading them.
        """
        return profiles_from_tallies(self._summary.tallies)

    # ------------------------------------------------------------------ lessons

    def add_lessons(self, lessons: Iterable[Lesson]) -> int:
        """Store lessons (distilled experience), each embedded for recall; all or nothing.

        Every source must be an episode stored in this namespace and every lesson a
        lesson supersedes must be stored: the whole batch is checked before any is
        written. A lesson already stored is skipped (lessons are immutable: a
        revision is a new lesson, see :meth:`revise_lesson`).

        Example:
            .. code-block:: python

                from langchain_episodic.model.lesson import Lesson, LessonSource

                memory.add_lessons([Lesson.create(
                    title="Strip e-mail addresses before validating them",
                    applies_when="a form validates an e-mail address",
                    do="call .strip() first", sources=[LessonSource("login-1")],
                    created_at=memory.now(),
                )])

        Returns:
            How many lessons were new.

        Raises:
            TypeError: An item is not a :class:`~langchain_episodic.model.lesson.Lesson`.
            EpisodicValueError: A source episode is not stored in this namespace, or a
                superseded lesson is unknown. Nothing is written.
        """
        batch = list(lessons)
        for index, lesson in enumerate(batch):
            if not isinstance(lesson, Lesson):
                msg = f"lessons[{index}]={lesson!r} is not a Lesson"
                raise TypeError(msg)
        with self._write_lock:
            known = self._lessons.book.lessons
            fresh = list(
                {one.lesson_id: one for one in batch if one.lesson_id not in known}.values()
            )
            if not fresh:
                return 0
            cited = sorted({i for lesson in fresh for i in lesson.source_ids})
            stored = self.store.get(self.namespace, cited)
            missing = [i for i in cited if i not in stored]
            if missing:
                msg = (
                    f"lessons cite episode_ids={missing!r}, which are not stored in "
                    f"namespace={self.namespace!r}; no lesson was stored"
                )
                raise EpisodicValueError(msg)
            pending = {lesson.lesson_id for lesson in fresh}
            unknown = sorted(
                old
                for lesson in fresh
                for old in lesson.supersedes
                if old not in known and old not in pending
            )
            if unknown:
                msg = f"lessons supersede unknown lesson ids {unknown!r}; no lesson was stored"
                raise EpisodicValueError(msg)
            texts = [lesson.embedding_text for lesson in fresh]
            vectors = _check_vectors(
                self.embeddings.embed_documents(texts),
                [f"lesson_id={lesson.lesson_id!r}" for lesson in fresh],
            )
            return self._lessons.write(fresh, vectors, self._embedder_tag)

    async def aadd_lessons(self, lessons: Iterable[Lesson]) -> int:
        """Async twin of :meth:`add_lessons`."""
        batch = list(lessons)
        return await run_in_executor(None, self.add_lessons, batch)

    def lessons(self, status: LessonStatus | None = "active") -> tuple[Lesson, ...]:
        """The namespace's lessons of one status (``None``: all), oldest first.

        ``"active"`` lessons are recalled; ``"archived"`` ones were superseded (by a
        revision or a merge); ``"quarantined"`` ones are quarantined themselves or
        derive from a quarantined episode (trust follows lineage).
        """
        quarantined = self._quarantine.active
        return tuple(
            lesson
            for lesson, found in self._lessons.book.with_status(quarantined)
            if status is None or found == status
        )

    def lesson(self, lesson_id: str) -> Lesson:
        """The stored lesson ``lesson_id``.

        Raises:
            EpisodicValueError: No such lesson in this namespace.
        """
        found = self._lessons.book.lessons.get(lesson_id)
        if found is None:
            msg = f"lesson_id={lesson_id!r} is not stored in namespace={self.namespace!r}"
            raise EpisodicValueError(msg)
        return found

    def lesson_status(self, lesson_id: str) -> LessonStatus:
        """Whether ``lesson_id`` is active, archived or quarantined (see :meth:`lessons`)."""
        lesson = self.lesson(lesson_id)
        book = self._lessons.book
        return lesson_status(lesson, book.superseded, self._quarantine.active)

    def lesson_utility(self, lesson_id: str) -> float:
        """The lesson's utility estimate: its credit plus what the lessons it merged carried."""
        helped, hurt = self._lesson_evidence(self.lesson(lesson_id), self.now())
        return (PRIOR_HELPED + helped) / (PRIOR_HELPED + PRIOR_HURT + helped + hurt)

    def _lesson_evidence(self, lesson: Lesson, now: float) -> tuple[float, float]:
        """A lesson's (helped, hurt) evidence at ``now``, prior excluded.

        Its own credit, decayed, and what a merge carried over, which fades from the
        merge on like the lesson's own.
        """
        row = self._credit.utility(lesson.lesson_id)
        decay = row.decay(now)
        age = max(0.0, now - lesson.created_at)
        carried = math.exp(-math.log(2) * age / self._credit.half_life)
        return (
            lesson.helped * carried + row.helped * decay,
            lesson.hurt * carried + row.hurt * decay,
        )

    def revise_lesson(self, lesson_id: str, **changes: Any) -> Lesson:
        """Store a revision of an active lesson: a new lesson that supersedes it.

        Args:
            lesson_id: The lesson to revise.
            **changes: ``title``, ``applies_when``, ``do``, ``avoid``, ``by``.

        Returns:
            The new lesson (the old one is archived, kept and listable).

        Raises:
            EpisodicValueError: Unknown lesson, a lesson not active, or a bad field.
        """
        old = self.lesson(lesson_id)
        if self.lesson_status(lesson_id) != "active":
            msg = (
                f"lesson_id={lesson_id!r} is {self.lesson_status(lesson_id)}: "
                "only an active lesson is revised"
            )
            raise EpisodicValueError(msg)
        allowed = {"title", "applies_when", "do", "avoid", "by"}
        unknown = sorted(set(changes) - allowed)
        if unknown:
            msg = f"revise_lesson got unknown fields {unknown}; allowed: {sorted(allowed)}"
            raise TypeError(msg)
        fields = {name: getattr(old, name) for name in allowed} | changes
        new = Lesson.create(
            **fields,
            sources=old.sources,
            created_at=self.now(),
            supersedes=(old.lesson_id,),
            helped=old.helped,
            hurt=old.hurt,
        )
        self.add_lessons([new])
        return new

    def consolidate_lessons(self, threshold: float = MERGE_SIMILARITY) -> tuple[Lesson, ...]:
        """Merge near-duplicate active lessons, keeping all their evidence; delete nothing.

        Lessons whose vectors reach ``threshold`` cosine (linked transitively) become
        one lesson with the union of their sources and their credit counters, which
        supersedes them (they are archived). Running it again changes nothing.

        Returns:
            The merged lessons written.
        """
        check_number("threshold", threshold, -1.0, 1.0)
        with self._write_lock:
            active = self.lessons("active")
            groups = []
            if active:
                book = self._lessons.book
                dimensions = {book.vectors[lesson.lesson_id].shape[0] for lesson in active}
                # Lessons migrated from another model's namespace: compare in this one's.
                dimension = (
                    dimensions.pop()
                    if len(dimensions) == 1
                    else self._embed_lessons([active[0].embedding_text]).shape[1]
                )
                vectors = self._lessons.vectors_for(
                    active, dimension, self._embed_lessons, self._embedder_tag
                )
                groups = plan_consolidation(active, vectors, threshold)
            now = self.now()
            credit = {}
            for group in groups:
                for lesson in group:
                    # merge_lessons adds what each lesson carried to its credit: pass
                    # the rest of its evidence as it stands now.
                    helped, hurt = self._lesson_evidence(lesson, now)
                    credit[lesson.lesson_id] = (helped - lesson.helped, hurt - lesson.hurt)
            merged = [merge_lessons(group, credit, now) for group in groups]
            self.add_lessons(merged)
            return tuple(merged)

    def recall_lessons(self, query: str | TaskDescription, k: int = 2) -> tuple[Lesson, ...]:
        """The ``k`` active lessons most worth showing for ``query``, best first.

        A lesson qualifies when its similarity to the query reaches the memory's
        relevance floor; qualifying lessons are ordered by similarity scaled by their
        utility (credit), like episodes.
        """
        check_int("k", k, 1)
        vector = _check_vectors([self.embeddings.embed_query(_query_text(query))], ["query"])[0]
        return self._lessons_near(vector, k, self.relevance_floor, self.now())

    def _lessons_near(
        self, vector: NDArray[np.float32], k: int, floor: float, now: float
    ) -> tuple[Lesson, ...]:
        active = self.lessons("active")
        if not active:
            return ()
        query = np.asarray(vector, dtype=np.float32)
        query = query / (np.linalg.norm(query) or 1.0)
        # A lesson stored with another model's vectors (another dimension) is
        # embedded again with this memory's model, once, so migrated lessons recall.
        vectors = self._lessons.vectors_for(
            active, query.shape[0], self._embed_lessons, self._embedder_tag
        )
        scored = []
        for lesson, stored in zip(active, vectors, strict=True):
            similarity = float(stored @ query)
            if similarity >= floor:
                factor = utility_factor(self.lesson_utility(lesson.lesson_id))
                scored.append((similarity * factor, lesson.lesson_id, lesson))
        scored.sort(key=lambda row: (-row[0], row[1]))
        return tuple(lesson for _, _, lesson in scored[:k])

    @functools.cached_property
    def _embedder_tag(self) -> str | None:
        """A digest of this memory's embeddings fingerprint: which model made a lesson's vector.

        Computed once, on first use (one probe embedding), only by memories with lessons.
        """
        fingerprint = fingerprint_embeddings(self.embeddings)
        if fingerprint is None:
            return None
        return hashlib.sha256(fingerprint.to_json().encode("utf-8")).hexdigest()[:16]

    def _embed_lessons(self, texts: list[str]) -> NDArray[np.float32]:
        return _check_vectors(
            self.embeddings.embed_documents(texts), [f"lesson {t!r}" for t in texts]
        )

    # ------------------------------------------------------------ namespaces

    def for_namespace(self, namespace: str) -> EpisodicMemory:
        """This memory's twin for another namespace: same store, embeddings and settings.

        One memory per namespace is kept and reused, so a multi-user agent that
        resolves the namespace per run (``EpisodicMemoryMiddleware(namespace=...)``)
        opens each user's namespace once. The twin checks the embeddings against
        its own namespace's fingerprint, like any memory.

        Example:
            .. code-block:: python

                alice = memory.for_namespace("user-alice")
                alice.record(episode)  # never seen from memory.for_namespace("user-bob")

        Raises:
            EpisodicValueError: ``namespace`` is empty or not valid Unicode.
            EmbeddingMismatchError: The namespace was built with another model.
        """
        if namespace == self.namespace:
            return self
        with self._write_lock:
            twin = self._scoped.get(namespace)
            if twin is None:
                twin = EpisodicMemory(
                    store=self.store,
                    embeddings=self.embeddings,
                    short_term_limit=self.short_term_limit,
                    namespace=namespace,
                    clock=self._clock,
                    open_run_ttl=self.open_run_ttl,
                    utility_half_life=self._credit.half_life,
                )
                self._scoped[namespace] = twin
            return twin

    # ------------------------------------------------------------ integrations

    # Adapters are registered by the package (its __init__), so this module never
    # imports the integrations above it: the memory names the port, the package wires it.
    _adapters: ClassVar[dict[str, Callable[..., Any]]] = {}

    @classmethod
    def register_adapter(
        cls, kind: Literal["retriever", "runnable"], factory: Callable[..., Any]
    ) -> None:
        """Make ``factory(memory, **kwargs)`` what ``as_retriever`` / ``as_runnable`` return."""
        cls._adapters[kind] = factory

    def _adapter(self, kind: str, kwargs: dict[str, Any]) -> Any:
        factory = self._adapters.get(kind)
        if factory is None:  # pragma: no cover - the package registers both on import
            msg = f"no {kind} adapter is registered: import langchain_episodic first"
            raise RuntimeError(msg)
        return factory(self, **kwargs)

    def as_retriever(self, **kwargs: Any) -> BaseRetriever:
        """This memory as a LangChain retriever (an :class:`~langchain_episodic.EpisodicRetriever`).

        Args:
            **kwargs: Fields of :class:`~langchain_episodic.EpisodicRetriever`:
                ``k`` and any :class:`~langchain_episodic.RecallOptions` field given
                flat (``weights``, ``fetch_k``, ``category``, ...), or ``options=``,
                plus ``tags`` and ``metadata``.
        """
        retriever: BaseRetriever = self._adapter("retriever", kwargs)
        return retriever

    def as_runnable(self, **kwargs: Any) -> Runnable[Any, str]:
        """A runnable mapping a task to its replay prompt (see ``create_replay_runnable``).

        Example:
            .. code-block:: python

                chain = {"replay": memory.as_runnable(), "task": RunnablePassthrough()} | prompt
        """
        runnable: Runnable[Any, str] = self._adapter("runnable", kwargs)
        return runnable

    def __len__(self) -> int:
        """Number of episodes in this namespace's long-term tier."""
        return self.store.count(self.namespace)
