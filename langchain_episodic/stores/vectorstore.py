"""The long-term tier in any LangChain ``VectorStore`` (FAISS, Chroma, PGVector, Qdrant, ...).

Layout:

* One document per episode in the vector store: id = a UUID derived from the
  namespace and the ``episode_id`` (:func:`record_id`; some backends accept only
  UUIDs, and one vector store may hold several namespaces), page content = the task
  description, vector = the memory's embedding of it, metadata = ``episode`` (the
  full episode as JSON, so it round-trips exactly), ``namespace``, ``seq`` (recording
  number) and the flat fields filters use (``category``, ``outcome``,
  ``strategy_used``).
* A small ledger in a LangChain key-value store (a ``ByteStore``) holds what a
  generic vector store cannot tell: the record ids in recording order (in blocks of
  :data:`LEDGER_BLOCK` ids), each namespace's count, the memory's state strings and
  the list of namespaces. The count is written last: it is the commit point.

Similarities are converted from whatever the backend scores with to cosine (see
:data:`ScoreKind`), and filters are applied exactly: the store over-fetches, doubling,
until it has enough matches or the backend has no more.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import sys
import threading
import uuid
import warnings
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, cast, get_args

import numpy as np
from langchain_core.documents import Document
from langchain_core.stores import BaseStore, InMemoryByteStore
from langchain_core.vectorstores import InMemoryVectorStore, VectorStore
from numpy.typing import NDArray

from langchain_episodic._validation import check_int
from langchain_episodic.episode import Episode
from langchain_episodic.errors import (
    EpisodicValueError,
    MalformedRecordWarning,
    StoreConfigurationError,
)
from langchain_episodic.filters import EpisodeFilter
from langchain_episodic.stores.base import StoredHit, check_batch, new_episodes, unit_rows
from langchain_episodic.stores.codec import decode_episode, decode_hit, encode_episode

__all__ = [
    "LEDGER_BLOCK",
    "RECORD_ID_NAMESPACE",
    "ScoreKind",
    "VectorStoreEpisodeStore",
    "namespace_metadata_filter",
    "record_id",
]

ScoreKind = Literal[
    "cosine_similarity",
    "cosine_distance",
    "inner_product",
    "one_minus_inner_product",
    "squared_l2",
    "l2",
]
"""What a backend's by-vector search returns as its score, and how it becomes cosine.

* ``"cosine_similarity"``: cosine itself (Qdrant ``Distance.COSINE``, LangChain's
  ``InMemoryVectorStore``).
* ``"cosine_distance"``: ``1 - cosine`` (Chroma ``cosine`` space, PGVector cosine);
  cosine = ``1 - d``.
* ``"inner_product"``: the dot product (FAISS ``IndexFlatIP``); cosine = the score,
  exact because every vector written and searched is scaled to unit length.
* ``"one_minus_inner_product"``: ``1 - dot`` (Chroma ``ip`` space); cosine = ``1 - d``
  on unit vectors.
* ``"squared_l2"``: squared Euclidean distance (FAISS ``IndexFlatL2``, Chroma ``l2``
  space); on unit vectors ``d = 2 - 2 cos``, so cosine = ``1 - d / 2``.
* ``"l2"``: Euclidean distance; cosine = ``1 - d² / 2`` on unit vectors.
"""

_CONVERSIONS: dict[str, Callable[[float], float]] = {
    "cosine_similarity": lambda score: score,
    "cosine_distance": lambda distance: 1.0 - distance,
    "inner_product": lambda score: score,
    "one_minus_inner_product": lambda distance: 1.0 - distance,
    "squared_l2": lambda distance: 1.0 - distance / 2.0,
    "l2": lambda distance: 1.0 - distance * distance / 2.0,
}
# Scores that rank like cosine, and convert exactly, only on unit vectors.
_NEEDS_UNIT_VECTORS = frozenset({"inner_product", "one_minus_inner_product", "squared_l2", "l2"})
_UNIT_TOLERANCE = 1e-4
# The backend's embeddings must be the memory's: checked once, on the first write.
_SAME_MODEL_COSINE = 0.999

RECORD_ID_NAMESPACE = uuid.UUID("6f1d3c52-8a4e-5b7f-9c2d-1e0a4b6c8d9e")
"""The UUID namespace of :func:`record_id` (fixed forever: ids depend on it)."""

LEDGER_BLOCK = 1024
"""Record ids per ledger value (fixed forever: ledgers written before depend on it)."""

_LEDGER_ROOT = "langchain_episodic"
_FAISS_METRIC_INNER_PRODUCT = 0  # faiss.METRIC_INNER_PRODUCT
_FAISS_METRIC_L2 = 1  # faiss.METRIC_L2
_CHROMA_SPACES: dict[str, ScoreKind] = {
    "cosine": "cosine_distance",
    "l2": "squared_l2",
    "ip": "one_minus_inner_product",
}


def record_id(namespace: str, episode_id: str) -> str:
    """The vector-store id of an episode: a UUID5 of the namespace and the ``episode_id``."""
    return str(uuid.uuid5(RECORD_ID_NAMESPACE, f"{namespace}\x00{episode_id}"))


def namespace_metadata_filter(namespace: str) -> dict[str, str]:
    """The default ``namespace_filter``: ``{"namespace": namespace}``, as FAISS and Chroma take."""
    return {"namespace": namespace}


def _namespace_predicate(namespace: str) -> Callable[[Document], bool]:
    # LangChain's InMemoryVectorStore filters with a predicate on the document.
    return lambda document: document.metadata.get("namespace") == namespace


def _instance_of(vectorstore: object, module: str, name: str) -> bool:
    """``isinstance`` against an optional dependency, without importing it."""
    loaded = sys.modules.get(module)
    cls = getattr(loaded, name, None)
    return isinstance(cls, type) and isinstance(vectorstore, cls)


def _is_faiss(vectorstore: VectorStore) -> bool:
    return _instance_of(vectorstore, "langchain_community.vectorstores.faiss", "FAISS")


def _is_chroma(vectorstore: VectorStore) -> bool:
    return _instance_of(vectorstore, "langchain_chroma.vectorstores", "Chroma")


def _chroma_space(vectorstore: VectorStore) -> str:
    # langchain-chroma exposes no public accessor for its collection; ``_collection``
    # is the property its own _select_relevance_score_fn reads.
    collection = vectorstore._collection  # type: ignore[attr-defined]
    configuration = collection.configuration or {}
    for index in ("hnsw", "spann"):
        space = (configuration.get(index) or {}).get("space")
        if space:
            return str(space)
    legacy = (collection.metadata or {}).get("hnsw:space")
    return str(legacy) if legacy else "l2"  # Chroma's default space


def _detect_score(vectorstore: VectorStore) -> tuple[ScoreKind | None, str]:
    """The score kind of a backend the store knows, and what it was read from."""
    name = type(vectorstore).__name__
    if _is_faiss(vectorstore):
        metric = getattr(getattr(vectorstore, "index", None), "metric_type", None)
        kinds: dict[object, ScoreKind] = {
            _FAISS_METRIC_L2: "squared_l2",
            _FAISS_METRIC_INNER_PRODUCT: "inner_product",
        }
        return kinds.get(metric), f"{name} with index metric_type={metric!r}"
    if _is_chroma(vectorstore):
        space = _chroma_space(vectorstore)
        return _CHROMA_SPACES.get(space), f"{name} with collection space={space!r}"
    if isinstance(vectorstore, InMemoryVectorStore):
        return "cosine_similarity", name
    return None, name


def _search_method(vectorstore: VectorStore) -> Callable[..., list[tuple[Document, float]]]:
    for name in (
        "similarity_search_with_score_by_vector",  # FAISS, InMemoryVectorStore, PGVector
        "similarity_search_by_vector_with_relevance_scores",  # Chroma, Elasticsearch
    ):
        method = getattr(vectorstore, name, None)
        if callable(method):
            return cast("Callable[..., list[tuple[Document, float]]]", method)
    msg = (
        f"vectorstore={type(vectorstore).__name__} cannot search by vector with scores: "
        "VectorStoreEpisodeStore needs similarity_search_with_score_by_vector or "
        "similarity_search_by_vector_with_relevance_scores"
    )
    raise StoreConfigurationError(msg)


def _embeddings_writer(
    vectorstore: VectorStore,
) -> Callable[[list[str], list[list[float]], list[dict[str, Any]], list[str]], Any] | None:
    """A call that writes precomputed vectors, if the backend has ``add_embeddings``."""
    method = getattr(vectorstore, "add_embeddings", None)
    if not callable(method):
        return None
    try:
        parameters = list(inspect.signature(method).parameters)
    except (TypeError, ValueError):
        return None
    if parameters[:1] == ["text_embeddings"]:  # FAISS: pairs of (text, vector)
        return lambda texts, vectors, metadatas, ids: method(
            list(zip(texts, vectors, strict=True)), metadatas=metadatas, ids=ids
        )
    if parameters[:2] == ["texts", "embeddings"]:  # PGVector and others
        return lambda texts, vectors, metadatas, ids: method(
            texts, vectors, metadatas=metadatas, ids=ids
        )
    return None


def _hit_matches(hit: StoredHit, filters: EpisodeFilter | None) -> bool:
    """The filter applied to the episode itself (the flat metadata only pre-selects)."""
    if filters is None or filters.is_empty:
        return True
    try:
        category, strategy = hit.data["task"]["category"], hit.data["strategy_used"]
    except (KeyError, TypeError):
        return False
    return filters.matches(category, hit.outcome, strategy)


class _Ledger:
    """What a generic vector store cannot say, in a ``ByteStore``; one writer at a time."""

    def __init__(self, store: BaseStore[str, bytes]) -> None:
        self.store = store

    @staticmethod
    def _prefix(namespace: str) -> str:
        digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:32]
        return f"{_LEDGER_ROOT}/ns/{digest}"

    def _get(self, key: str) -> bytes | None:
        return self.store.mget([key])[0]

    def namespaces(self) -> list[str]:
        raw = self._get(f"{_LEDGER_ROOT}/namespaces")
        names = json.loads(raw) if raw else []
        return [name for name in names if isinstance(name, str)]

    def add_namespace(self, namespace: str) -> None:
        names = self.namespaces()
        if namespace not in names:
            packed = json.dumps(sorted([*names, namespace]), ensure_ascii=False)
            self.store.mset([(f"{_LEDGER_ROOT}/namespaces", packed.encode("utf-8"))])

    def count(self, namespace: str) -> int:
        raw = self._get(f"{self._prefix(namespace)}/count")
        return int(raw) if raw else 0

    def set_count(self, namespace: str, count: int) -> None:
        self.store.mset([(f"{self._prefix(namespace)}/count", str(count).encode("ascii"))])

    def _block_key(self, namespace: str, block: int) -> str:
        return f"{self._prefix(namespace)}/seq/{block}"

    def ids(self, namespace: str, start: int, stop: int) -> list[str]:
        """Record ids numbered ``start`` to ``stop - 1``."""
        if stop <= start:
            return []
        first, last = start // LEDGER_BLOCK, (stop - 1) // LEDGER_BLOCK
        blocks = self.store.mget([self._block_key(namespace, b) for b in range(first, last + 1)])
        ids: list[str] = []
        for raw in blocks:
            ids.extend(json.loads(raw) if raw else [])
        offset = start - first * LEDGER_BLOCK
        return ids[offset : offset + stop - start]

    def append(self, namespace: str, start: int, ids: Sequence[str]) -> None:
        """Write ids numbered from ``start`` on; ids beyond an uncommitted count are replaced."""
        if not ids:
            return
        first = start // LEDGER_BLOCK
        head = start - first * LEDGER_BLOCK
        kept: list[str] = []
        if head:
            raw = self._get(self._block_key(namespace, first))
            kept = (json.loads(raw) if raw else [])[:head]
        merged = [*kept, *ids]
        self.store.mset(
            [
                (
                    self._block_key(namespace, first + index),
                    json.dumps(merged[offset : offset + LEDGER_BLOCK]).encode("ascii"),
                )
                for index, offset in enumerate(range(0, len(merged), LEDGER_BLOCK))
            ]
        )

    def _state_key(self, namespace: str, key: str) -> str:
        return f"{self._prefix(namespace)}/state/{key.encode('utf-8').hex()}"

    def read_state(self, namespace: str, key: str) -> str | None:
        raw = self._get(self._state_key(namespace, key))
        return None if raw is None else raw.decode("utf-8")

    def write_state(self, namespace: str, key: str, value: str) -> None:
        self.store.mset([(self._state_key(namespace, key), value.encode("utf-8"))])


class VectorStoreEpisodeStore:
    """Episodes in any LangChain ``VectorStore``, with a small ledger beside it.

    For users who already run a vector store (FAISS, PGVector, Qdrant,
    Elasticsearch, Chroma through langchain-chroma, ...) and want episodes in it.
    Tested with ``FAISS`` from langchain-community (``IndexFlatL2`` and
    ``IndexFlatIP``) and ``Chroma`` from langchain-chroma (``cosine``, ``l2`` and
    ``ip`` spaces).

    Setup:
        .. code-block:: bash

            pip install langchain-episodic faiss-cpu langchain-community

    Instantiate:
        .. code-block:: python

            import faiss
            from langchain_community.docstore.in_memory import InMemoryDocstore
            from langchain_community.vectorstores import FAISS

            from langchain_episodic import EpisodicMemory, HashingEmbeddings
            from langchain_episodic.stores import VectorStoreEpisodeStore

            embeddings = HashingEmbeddings()
            faiss_store = FAISS(
                embedding_function=embeddings,
                index=faiss.IndexFlatIP(embeddings.dimensions),
                docstore=InMemoryDocstore(),
                index_to_docstore_id={},
            )
            store = VectorStoreEpisodeStore(faiss_store)
            memory = EpisodicMemory(store=store, embeddings=embeddings)

        With langchain-chroma (the backend embeds the texts itself, so its
        ``embedding_function`` must be the memory's embeddings):

        .. code-block:: python

            from langchain_chroma import Chroma

            chroma = Chroma(
                "episodes",
                embedding_function=embeddings,
                collection_configuration={"hnsw": {"space": "cosine"}},
            )
            memory = EpisodicMemory(store=VectorStoreEpisodeStore(chroma), embeddings=embeddings)

        Another backend: say what its by-vector search scores with.

        .. code-block:: python

            store = VectorStoreEpisodeStore(pgvector_store, score="cosine_distance")
            store = VectorStoreEpisodeStore(es_store, score=lambda s: 2 * s - 1)

    Persistent:
        Give a persistent vector store *and* a persistent ledger; both must be kept.
        FAISS lives in memory until ``save_local``, so ``persist`` saves it after each
        write, before the ledger records the write:

        .. code-block:: python

            from langchain_classic.storage import LocalFileStore

            store = VectorStoreEpisodeStore(
                faiss_store,
                ledger=LocalFileStore("./episodes-ledger"),
                persist=lambda vs: vs.save_local("./episodes-faiss"),
            )
            # later, in another process:
            faiss_store = FAISS.load_local(
                "./episodes-faiss", embeddings, allow_dangerous_deserialization=True
            )
            store = VectorStoreEpisodeStore(faiss_store, ledger=LocalFileStore("./episodes-ledger"))

    Args:
        vectorstore: The vector store. It must implement ``get_by_ids`` and a search by
            vector that returns scores (``similarity_search_with_score_by_vector`` or
            ``similarity_search_by_vector_with_relevance_scores``).
        ledger: A LangChain ``ByteStore`` for record order, counts and the memory's
            state; ``InMemoryByteStore()`` when ``None`` (lost with the process).
        score: What the backend's search scores with (a :data:`ScoreKind`), or a
            function from that score to cosine similarity. Detected for FAISS (from
            the index's ``metric_type``), langchain-chroma (from the collection's
            space) and LangChain's ``InMemoryVectorStore``; required otherwise.
        namespace_filter: Builds the backend's metadata filter that keeps one
            namespace, or ``None`` to filter in Python only. Default
            :func:`namespace_metadata_filter` (``{"namespace": ns}``; a predicate for
            ``InMemoryVectorStore``). The backend must apply it *before* keeping the
            ``k`` best (Chroma, PGVector, Qdrant do; FAISS is handled specially);
            for a backend that filters after, pass ``None``.
        persist: Called with the vector store after every write to it, before the
            ledger commits the write (for FAISS: ``save_local``, which rewrites the
            whole index, so each record costs a full save).
        batch_size: Records per call to the vector store.

    Raises:
        StoreConfigurationError: The backend lacks ``get_by_ids`` or a scored search
            by vector, or its score is unknown and ``score`` was not given.
        EpisodicValueError: ``score`` or ``batch_size`` is invalid.

    How the guarantees of a store are kept, and where a backend cannot keep them:

    * **Cosine similarity.** Every vector this store writes and every query is scaled
      to unit length, then the backend's score is converted as :data:`ScoreKind`
      says. A backend without ``add_embeddings`` (langchain-chroma, for one) embeds
      the texts itself, so its vectors cannot be scaled: with an L2 or inner-product
      score the store checks that the memory's vectors are unit length and raises
      :class:`StoreConfigurationError` otherwise (use a cosine space, or an
      embeddings model that returns unit vectors). On the first write it also checks,
      with one extra embedding, that the backend's embeddings are the memory's.
    * **Exact neighbours.** Filters (namespace, category, outcome, strategy) never
      hide a neighbour: the store asks for ``k``, then twice as many, until enough
      records pass or the backend has no more. The neighbours themselves are exact
      only if the backend's index is (FAISS ``IndexFlat*`` is; HNSW in Chroma or
      Qdrant is approximate).
    * **Immutability.** Checked through ``get_by_ids``; a backend without it is
      refused at construction. Calls into the vector store and the ledger are
      serialised by a lock (FAISS is not safe for a write during a search), and
      :meth:`add` re-checks the ids under that lock, so concurrent writers in one
      process cannot store two episodes under one id.
    * **Order, counts, state, namespaces** come from the ledger, never from the
      backend, which cannot count or iterate in order. The vector store is written
      first, then the ledger's ids, then its count (the commit point). If the
      process dies in between, the written documents are searchable but not counted
      or iterated, and recording them again is a no-op. Records the ledger lists but
      the vector store lacks (a FAISS index not saved) are skipped with a
      :class:`MalformedRecordWarning`. One process should write to a ledger at a time.

    Costs: a backend that embeds texts itself embeds every episode a second time (the
    memory already did); a Chroma ``where`` filter on the namespace makes each query
    several times slower (see the package's design notes), so a collection that holds
    one namespace may pass ``namespace_filter=None``; :meth:`add` reads the ids once
    more under the lock before writing.
    """

    def __init__(
        self,
        vectorstore: VectorStore,
        *,
        ledger: BaseStore[str, bytes] | None = None,
        score: ScoreKind | Callable[[float], float] | None = None,
        namespace_filter: Callable[[str], Any] | None = namespace_metadata_filter,
        persist: Callable[[VectorStore], object] | None = None,
        batch_size: int = 1000,
    ) -> None:
        if not isinstance(vectorstore, VectorStore):
            msg = f"vectorstore={vectorstore!r} is invalid: must be a LangChain VectorStore"
            raise TypeError(msg)
        check_int("batch_size", batch_size, 1)
        name = type(vectorstore).__name__
        if type(vectorstore).get_by_ids is VectorStore.get_by_ids:
            msg = (
                f"vectorstore={name} does not implement get_by_ids, which "
                "VectorStoreEpisodeStore needs to check immutability and read episodes "
                "in recording order"
            )
            raise StoreConfigurationError(msg)
        self._search = _search_method(vectorstore)
        kind, source = _detect_score(vectorstore)
        if score is not None:
            if not callable(score) and score not in _CONVERSIONS:
                msg = (
                    f"score={score!r} is invalid: must be a function or one of "
                    f"{', '.join(map(repr, get_args(ScoreKind)))}"
                )
                raise EpisodicValueError(msg)
            kind = None if callable(score) else score
        elif kind is None:
            msg = (
                f"cannot tell how {source} scores similarity: pass score= one of "
                f"{', '.join(map(repr, get_args(ScoreKind)))}, or a function from its "
                "score to cosine similarity"
            )
            raise StoreConfigurationError(msg)
        self._score_kind = kind
        self._to_cosine = score if callable(score) else _CONVERSIONS[cast("str", kind)]
        self._vectorstore = vectorstore
        self._ledger = _Ledger(ledger if ledger is not None else InMemoryByteStore())
        if namespace_filter is namespace_metadata_filter and isinstance(
            vectorstore, InMemoryVectorStore
        ):
            namespace_filter = _namespace_predicate
        self._namespace_filter = namespace_filter
        self._persist = persist
        self._batch_size = batch_size
        self._write_vectors = _embeddings_writer(vectorstore)
        self._embeddings_checked = False
        self._opened: set[str] = set()
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        score = self._score_kind or "custom"
        return f"VectorStoreEpisodeStore({type(self._vectorstore).__name__}, score={score!r})"

    @property
    def vectorstore(self) -> VectorStore:
        """The wrapped vector store."""
        return self._vectorstore

    @property
    def ledger(self) -> BaseStore[str, bytes]:
        """The key-value store holding record order, counts and state."""
        return self._ledger.store

    def _open(self, namespace: str) -> None:
        # Caller holds the lock. Any use opens the namespace, as Chroma's store does.
        if namespace not in self._opened:
            self._ledger.add_namespace(namespace)
            self._opened.add(namespace)

    def _get_by_ids(self, ids: list[str]) -> list[Document]:
        try:
            return self._vectorstore.get_by_ids(ids)
        except NotImplementedError as error:
            msg = (
                f"vectorstore={type(self._vectorstore).__name__} cannot get documents by "
                "id, which immutability checks and ordered reads need"
            )
            raise StoreConfigurationError(msg) from error

    def _documents(self, namespace: str, ids: Sequence[str]) -> dict[str, Document]:
        """The namespace's documents among record ``ids``, by id, read in batches."""
        found: dict[str, Document] = {}
        for start in range(0, len(ids), self._batch_size):
            for document in self._get_by_ids(list(ids[start : start + self._batch_size])):
                metadata = document.metadata or {}
                if document.id is not None and metadata.get("namespace") == namespace:
                    found[document.id] = document
        return found

    # ---------------------------------------------------------------- protocol

    def namespaces(self) -> tuple[str, ...]:
        """Every namespace the ledger lists (holding records, or opened), sorted."""
        with self._lock:
            return tuple(sorted(self._ledger.namespaces()))

    def count(self, namespace: str) -> int:
        """Number of episodes the ledger has committed in ``namespace``."""
        with self._lock:
            self._open(namespace)
            return self._ledger.count(namespace)

    def get(self, namespace: str, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id, read with ``get_by_ids``."""
        wanted = {record_id(namespace, episode_id): episode_id for episode_id in episode_ids}
        with self._lock:
            self._open(namespace)
            documents = self._documents(namespace, list(wanted))
        found: dict[str, Episode] = {}
        for rid, document in documents.items():
            episode = decode_episode(rid, document.metadata.get("episode"))
            if episode is not None and episode.episode_id == wanted[rid]:
                found[episode.episode_id] = episode
        return found

    def add(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        embeddings: NDArray[np.float32],
        first_seq: int,
    ) -> None:
        """Write new episodes and their vectors, then commit them in the ledger.

        ``first_seq`` is the caller's count; the store numbers records from the
        ledger's count under its lock, which gives the same numbers when one writer
        at a time adds.

        Raises:
            EpisodicValueError: Episodes and vectors differ in number, or a vector is
                not finite or is zero.
            EpisodeConflictError: A different episode is stored under one of the ids
                (the identical episode is skipped). Nothing is written.
            StoreConfigurationError: The backend embeds texts itself and its vectors
                cannot give exact cosine (see the class docstring).
        """
        check_batch(episodes, embeddings)
        if not episodes:
            return
        vectors = np.asarray(embeddings, dtype=np.float64)
        with self._lock:
            self._open(namespace)
            new = self._new_records(namespace, episodes)
            if not new:
                return
            start = self._ledger.count(namespace)
            ids = [record_id(namespace, episodes[index].episode_id) for index in new]
            for offset in range(0, len(new), self._batch_size):
                part = new[offset : offset + self._batch_size]
                self._write(namespace, [episodes[i] for i in part], vectors[part], start + offset)
            if self._persist is not None:
                self._persist(self._vectorstore)
            self._ledger.append(namespace, start, ids)
            self._ledger.set_count(namespace, start + len(ids))

    def _new_records(self, namespace: str, episodes: Sequence[Episode]) -> list[int]:
        """Indices of the episodes not stored yet; conflicts raise. Caller holds the lock."""
        encoded = [encode_episode(episode) for episode in episodes]
        stored = self.get(namespace, [episode.episode_id for episode in episodes])
        return new_episodes(
            namespace,
            episodes,
            encoded,
            {episode_id: encode_episode(episode) for episode_id, episode in stored.items()},
        )

    def _write(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        vectors: NDArray[np.float64],
        first_seq: int,
    ) -> None:
        texts = [episode.task.description for episode in episodes]
        ids = [record_id(namespace, episode.episode_id) for episode in episodes]
        metadatas: list[dict[str, Any]] = [
            {
                "episode": encode_episode(episode),
                "namespace": namespace,
                "seq": first_seq + offset,
                "category": episode.task.category.value,
                "outcome": episode.outcome.value,
                "strategy_used": episode.strategy_used,
            }
            for offset, episode in enumerate(episodes)
        ]
        if self._write_vectors is not None:
            unit = unit_rows(vectors, "embeddings")
            self._write_vectors(texts, unit.tolist(), metadatas, ids)
            return
        self._check_backend_embeddings(texts[0], vectors)
        written = self._vectorstore.add_texts(texts, metadatas=metadatas, ids=ids)
        if list(written) != ids:
            msg = (
                f"vectorstore={type(self._vectorstore).__name__} did not keep the ids it "
                "was given, so episodes could not be found again by id"
            )
            raise StoreConfigurationError(msg)

    def _check_backend_embeddings(self, text: str, vectors: NDArray[np.float64]) -> None:
        name = type(self._vectorstore).__name__
        model = self._vectorstore.embeddings
        if model is None:
            msg = (
                f"vectorstore={name} has no add_embeddings and no embeddings to embed "
                "the episodes with: give it the memory's embeddings (e.g. Chroma("
                "embedding_function=...))"
            )
            raise StoreConfigurationError(msg)
        norms = np.linalg.norm(vectors, axis=1)
        if self._score_kind in _NEEDS_UNIT_VECTORS and not np.allclose(
            norms, 1.0, atol=_UNIT_TOLERANCE
        ):
            msg = (
                f"vectorstore={name} scores by {self._score_kind!r} and embeds texts "
                "itself, so its vectors cannot be scaled to unit length, and this "
                f"embeddings model returns vectors of length {float(norms[0]):.6g}: "
                "similarity would not be cosine. Use a cosine space (Chroma: "
                "collection_configuration={'hnsw': {'space': 'cosine'}}) or an "
                "embeddings model that returns unit vectors"
            )
            raise StoreConfigurationError(msg)
        if self._embeddings_checked:
            return
        theirs = np.asarray(model.embed_documents([text])[0], dtype=np.float64)
        ours = vectors[0]
        same = (
            theirs.shape == ours.shape
            and float(theirs @ ours / (np.linalg.norm(theirs) * np.linalg.norm(ours) or 1.0))
            >= _SAME_MODEL_COSINE
        )
        if not same:
            msg = (
                f"vectorstore={name} embeds with {type(model).__name__}, which gives "
                "other vectors than the memory's embeddings model: pass the same model "
                "to both"
            )
            raise StoreConfigurationError(msg)
        self._embeddings_checked = True

    def search_hits(
        self,
        namespace: str,
        embedding: NDArray[np.float32],
        k: int,
        filters: EpisodeFilter | None = None,
    ) -> list[StoredHit]:
        """The ``k`` records nearest to ``embedding`` by cosine, most similar first.

        Asks the backend for ``k`` documents, then twice as many, until ``k`` pass the
        namespace and ``filters`` or the backend has no more: filters never hide a
        neighbour. Each score is converted to cosine similarity (see :data:`ScoreKind`).
        """
        k = check_int("k", k, 1)
        query = unit_rows(np.asarray(embedding).reshape(-1), "embedding").tolist()
        native = None if self._namespace_filter is None else self._namespace_filter(namespace)
        # First without the backend's filter: a metadata filter can cost a backend far
        # more than the search (Chroma: ~20x), and when the k nearest records pass the
        # checks in Python they are exactly the k nearest that pass. Only when they do
        # not (other namespaces or documents crowd the top) is the filter used.
        kept: list[tuple[Document, float]] = []
        if native is not None:
            kept, _ = self._passing(query, k, None, namespace, filters)
        wanted = k
        while len(kept) < k:
            kept, exhausted = self._passing(query, wanted, native, namespace, filters)
            if exhausted:
                break
            wanted *= 2
        hits: list[StoredHit] = []
        for document, score in kept:
            similarity = min(1.0, max(-1.0, float(self._to_cosine(float(score)))))
            hit = decode_hit(document.id or "", document.metadata.get("episode"), similarity)
            if hit is not None and _hit_matches(hit, filters):
                hits.append(hit)
        hits.sort(key=lambda hit: -hit.similarity)  # stable: the backend's order on ties
        return hits[:k]

    def _passing(
        self,
        query: list[float],
        n: int,
        backend_filter: Any,
        namespace: str,
        filters: EpisodeFilter | None,
    ) -> tuple[list[tuple[Document, float]], bool]:
        """Those of the ``n`` nearest in ``namespace`` that pass ``filters``, and exhaustion.

        The flag is ``True`` when the backend has no more records to give.
        """
        with self._lock:
            self._open(namespace)
            raw, exhausted = self._search_raw(query, n, backend_filter)
        kept = [
            (document, score)
            for document, score in raw
            if self._passes(document.metadata or {}, namespace, filters)
        ]
        return kept, exhausted

    def _search_raw(
        self, query: list[float], n: int, native: Any
    ) -> tuple[list[tuple[Document, float]], bool]:
        """Up to ``n`` scored documents, and whether the backend has no more to give."""
        if _is_faiss(self._vectorstore):
            # FAISS filters *after* taking fetch_k neighbours of the whole index, so
            # it has given all it has only once n covers the index.
            # It also allocates k results up front: never ask for more than it holds.
            total = int(self._vectorstore.index.ntotal)  # type: ignore[attr-defined]
            if total == 0:
                return [], True
            n = min(n, total)
            return self._search(query, k=n, filter=native, fetch_k=n), n >= total
        found = (
            self._search(query, k=n) if native is None else self._search(query, k=n, filter=native)
        )
        return found, len(found) < n

    @staticmethod
    def _passes(metadata: dict[str, Any], namespace: str, filters: EpisodeFilter | None) -> bool:
        if metadata.get("namespace") != namespace:
            return False
        if filters is None or filters.is_empty:
            return True
        return filters.matches(
            str(metadata.get("category")),
            str(metadata.get("outcome")),
            str(metadata.get("strategy_used")),
        )

    def latest(self, namespace: str, n: int, total: int) -> list[Episode]:
        """The last ``n`` of the first ``total`` committed records, oldest first."""
        if n <= 0 or total <= 0:
            return []
        with self._lock:
            self._open(namespace)
            stop = min(total, self._ledger.count(namespace))
        return list(self._read_range(namespace, max(0, stop - n), stop))

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        """Committed episodes in recording order from the ``start``-th on, in pages."""
        check_int("page_size", page_size, 1)
        with self._lock:
            self._open(namespace)
            total = self._ledger.count(namespace)
        for page in range(start, total, page_size):
            yield from self._read_range(namespace, page, min(page + page_size, total))

    def _read_range(self, namespace: str, start: int, stop: int) -> Iterator[Episode]:
        with self._lock:
            ids = self._ledger.ids(namespace, start, stop)
            documents = self._documents(namespace, ids)
        for rid in ids:
            document = documents.get(rid)
            if document is None:
                warnings.warn(
                    MalformedRecordWarning(
                        rid, "listed in the ledger but not found in the vector store"
                    ),
                    stacklevel=3,
                )
                continue
            episode = decode_episode(rid, document.metadata.get("episode"))
            if episode is not None:
                yield episode

    def read_state(self, namespace: str, key: str) -> str | None:
        """A string saved with :meth:`write_state`, from the ledger, or ``None``."""
        with self._lock:
            self._open(namespace)
            return self._ledger.read_state(namespace, key)

    def write_state(self, namespace: str, key: str, value: str) -> None:
        """Save a string for ``namespace`` under ``key`` in the ledger."""
        with self._lock:
            self._open(namespace)
            self._ledger.write_state(namespace, key, value)
