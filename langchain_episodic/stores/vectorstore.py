"""The long-term tier in any LangChain ``VectorStore`` (FAISS, Chroma, PGVector, Qdrant, ...).

Layout:

* One document per episode in the vector store: id = a UUID derived from the
  namespace and the ``episode_id`` (`record_id`; some backends accept only
  UUIDs, and one vector store may hold several namespaces), page content = the task
  description, vector = the memory's embedding of it, metadata = ``episode`` (the
  full episode as JSON, so it round-trips exactly), ``namespace``, ``seq`` (recording
  number) and the flat fields filters use (``category``, ``outcome``,
  ``strategy_used``).
* A small ledger in a LangChain key-value store (a ``ByteStore``,
  `ledger`) holds what a generic vector store cannot
  tell: the record ids in recording order, each namespace's count, the memory's state
  strings and the list of namespaces. The count is written last: it is the commit
  point.

What the store knows of particular backends (score kinds, FAISS, langchain-chroma) is
in `backends`.

How the guarantees of a store are kept, and where a backend cannot keep them:

* **Cosine similarity.** Every vector this store writes and every query is scaled to
  unit length, then the backend's score is converted as `ScoreKind` says. A
  backend without ``add_embeddings`` (langchain-chroma, for one) embeds the texts
  itself, so its vectors cannot be scaled: with an L2 or inner-product score the store
  checks that the memory's vectors are unit length and raises
  `StoreConfigurationError` otherwise (use a cosine
  space, or an embeddings model that returns unit vectors). On the first write it also
  checks, with one extra embedding, that the backend's embeddings are the memory's.
* **Exact neighbours.** Filters (namespace, category, outcome, strategy) never hide a
  neighbour: the store asks for ``k``, then twice as many, until enough records pass
  or the backend has no more. The neighbours themselves are exact only if the
  backend's index is (FAISS ``IndexFlat*`` is; HNSW in Chroma or Qdrant is
  approximate).
* **Immutability.** The memory checks it through ``get_by_ids``; a backend without it
  is refused at construction. Calls into the vector store and the ledger are
  serialised by a lock (FAISS is not safe for a write during a search), and
  `VectorStoreEpisodeStore.add` skips, under that lock, ids stored since the
  memory's check, so memories sharing the store in one process never write an id
  twice.
* **Order, counts, state, namespaces** come from the ledger, never from the backend,
  which cannot count or iterate in order. The vector store is written first, then the
  ledger's ids, then its count (the commit point). If the process dies in between,
  the written documents are searchable but not counted or iterated, and recording
  them again is a no-op. Records the ledger lists but the vector store lacks (a FAISS
  index not saved) are skipped with a
  `MalformedRecordWarning`. One process should write
  to a ledger at a time.

Costs: a backend that embeds texts itself embeds every episode a second time (the
memory already did); a Chroma ``where`` filter on the namespace makes each query
several times slower (see the package's design notes), so a collection that holds one
namespace may pass ``namespace_filter=None``; `VectorStoreEpisodeStore.add` reads
the ids once more under the lock before writing.

FAISS, persisted (FAISS lives in memory until ``save_local``, so ``persist`` saves it
after each write, before the ledger records the write; vector store *and* ledger must
both be kept):

```python
import faiss
from langchain_classic.storage import LocalFileStore
from langchain_community.docstore.in_memory import InMemoryDocstore
from langchain_community.vectorstores import FAISS

faiss_store = FAISS(
    embedding_function=embeddings,
    index=faiss.IndexFlatIP(embeddings.dimensions),
    docstore=InMemoryDocstore(),
    index_to_docstore_id={},
)
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
```

langchain-chroma (the backend embeds the texts itself, so its ``embedding_function``
must be the memory's embeddings), and a backend whose score must be named:

```python
from langchain_chroma import Chroma

chroma = Chroma(
    "episodes",
    embedding_function=embeddings,
    collection_configuration={"hnsw": {"space": "cosine"}},
)
store = VectorStoreEpisodeStore(chroma)
store = VectorStoreEpisodeStore(pgvector_store, score="cosine_distance")
store = VectorStoreEpisodeStore(es_store, score=lambda s: 2 * s - 1)
```
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
from langchain_core.documents import Document
from langchain_core.stores import BaseStore, InMemoryByteStore
from langchain_core.vectorstores import VectorStore
from numpy.typing import NDArray

from langchain_episodic._validation import check_int
from langchain_episodic.errors import StoreConfigurationError
from langchain_episodic.model.episode import Episode
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.stores._ledgered import (
    RECORD_ID_NAMESPACE,
    LedgeredStore,
    passes,
    record_fields,
    record_id,
)
from langchain_episodic.stores.backends import (
    ScoreKind,
    check_backend_embeddings,
    embeddings_writer,
    is_faiss,
    namespace_filter_for,
    namespace_metadata_filter,
    score_to_cosine,
    search_method,
)
from langchain_episodic.stores.base import StoredHit, unit_rows
from langchain_episodic.stores.codec import decode_hits
from langchain_episodic.stores.ledger import LEDGER_BLOCK, Ledger

__all__ = [
    "LEDGER_BLOCK",
    "RECORD_ID_NAMESPACE",
    "ScoreKind",
    "VectorStoreEpisodeStore",
    "namespace_metadata_filter",
    "record_id",
]


def _hit_matches(hit: StoredHit, filters: EpisodeFilter | None) -> bool:
    """The filter applied to the episode itself (the flat metadata only pre-selects)."""
    if filters is None or filters.is_empty:
        return True
    try:
        category, strategy = hit.data["task"]["category"], hit.data["strategy_used"]
    except (KeyError, TypeError):
        return False
    return filters.matches(category, hit.outcome, strategy)


class VectorStoreEpisodeStore(LedgeredStore):
    """Episodes in any LangChain ``VectorStore``, with a small ledger beside it.

    For users who already run a vector store (FAISS, PGVector, Qdrant, Elasticsearch,
    Chroma through langchain-chroma, ...) and want episodes in it. Tested with
    ``FAISS`` from langchain-community (``IndexFlatL2`` and ``IndexFlatIP``),
    ``Chroma`` from langchain-chroma (``cosine``, ``l2`` and ``ip`` spaces) and
    LangChain's ``InMemoryVectorStore``. The module docstring shows FAISS persisted,
    langchain-chroma and other backends, and how each guarantee is kept.

    Examples:
        >>> from langchain_core.vectorstores import InMemoryVectorStore
        >>> from langchain_episodic import EpisodicMemory, HashingEmbeddings
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> embeddings = HashingEmbeddings()
        >>> store = VectorStoreEpisodeStore(InMemoryVectorStore(embeddings))
        >>> memory = EpisodicMemory(store=store, embeddings=embeddings)
        >>> memory.record(Episode(
        ...     episode_id="login-1",
        ...     task=TaskDescription("Implement a login form with validation"),
        ...     solution="def login(): ...",
        ...     feedback=Feedback(reward=0.9, tests_passed=9, tests_total=10),
        ...     outcome=OutcomeStatus.SUCCESS,
        ...     timestamp=1_700_000_000.0,
        ... ))
        True
        >>> [hit.episode.episode_id for hit in memory.recall("Build a login form")]
        ['login-1']

    Args:
        vectorstore: The vector store. It must implement ``get_by_ids`` and a search by
            vector that returns scores (``similarity_search_with_score_by_vector`` or
            ``similarity_search_by_vector_with_relevance_scores``).
        ledger: A LangChain ``ByteStore`` for record order, counts and the memory's
            state; ``InMemoryByteStore()`` when ``None`` (lost with the process).
        score: What the backend's search scores with (a `ScoreKind`), or a
            function from that score to cosine similarity. Detected for FAISS (from
            the index's ``metric_type``), langchain-chroma (from the collection's
            space) and LangChain's ``InMemoryVectorStore``; required otherwise.
        namespace_filter: Builds the backend's metadata filter that keeps one
            namespace, or ``None`` to filter in Python only. Default
            `namespace_metadata_filter` (``{"namespace": ns}``; a predicate for
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
    """

    _backend_name = "the vector store"

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
        if type(vectorstore).get_by_ids is VectorStore.get_by_ids:
            msg = (
                f"vectorstore={type(vectorstore).__name__} does not implement get_by_ids, "
                "which VectorStoreEpisodeStore needs to check immutability and read "
                "episodes in recording order"
            )
            raise StoreConfigurationError(msg)
        self._search = search_method(vectorstore)
        self._score_kind, self._to_cosine = score_to_cosine(vectorstore, score)
        self._vectorstore = vectorstore
        self._ledger = Ledger(ledger if ledger is not None else InMemoryByteStore())
        self._namespace_filter = namespace_filter_for(vectorstore, namespace_filter)
        self._persist = persist
        self._batch_size = batch_size
        self._write_vectors = embeddings_writer(vectorstore)
        self._embeddings_checked = False
        super().__init__()

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

    def _documents(self, namespace: str, ids: Sequence[str]) -> dict[str, Document]:
        """The namespace's documents among record ``ids``, by id, read in batches."""
        found: dict[str, Document] = {}
        for start in range(0, len(ids), self._batch_size):
            part = list(ids[start : start + self._batch_size])
            try:
                documents = self._vectorstore.get_by_ids(part)
            except NotImplementedError as error:
                msg = (
                    f"vectorstore={type(self._vectorstore).__name__} cannot get documents by "
                    "id, which immutability checks and ordered reads need"
                )
                raise StoreConfigurationError(msg) from error
            for document in documents:
                metadata = document.metadata or {}
                if document.id is not None and metadata.get("namespace") == namespace:
                    found[document.id] = document
        return found

    def _records(self, namespace: str, ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        return {rid: doc.metadata for rid, doc in self._documents(namespace, ids).items()}

    def add(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        embeddings: NDArray[np.float32],
        first_seq: int,
    ) -> None:
        """Write new episodes and their vectors, then commit them in the ledger.

        Takes what `EpisodeStore` says the memory
        guarantees, unchecked. ``first_seq`` is the caller's count; the store numbers
        records from the ledger's count under its lock, which gives the same numbers
        when one writer at a time adds.

        Raises:
            StoreConfigurationError: The backend embeds texts itself and its vectors
                cannot give exact cosine (see the module docstring).
        """
        vectors = np.asarray(embeddings, dtype=np.float64)
        ids = [record_id(namespace, episode.episode_id) for episode in episodes]
        with self._using(namespace, write=True):
            # Not validation but the one concurrency guard: memories sharing this store
            # (threads) may each have found an id missing before either wrote it. The
            # first record is kept, as Chroma keeps it; writing again would list the id
            # twice in the ledger, and backends that upsert (langchain-chroma,
            # InMemoryVectorStore) would overwrite the first episode.
            stored = self._documents(namespace, ids)
            new = [index for index, rid in enumerate(ids) if rid not in stored]
            if not new:
                return
            start = self._ledger.count(namespace)
            for offset in range(0, len(new), self._batch_size):
                part = new[offset : offset + self._batch_size]
                self._write(namespace, [episodes[i] for i in part], vectors[part], start + offset)
            if self._persist is not None:
                self._persist(self._vectorstore)
            self._ledger.append(namespace, start, [ids[i] for i in new])
            self._ledger.set_count(namespace, start + len(new))

    def delete(self, namespace: str, episode_ids: Sequence[str]) -> int:
        """Remove the records under ``episode_ids`` from the vector store; how many were there.

        Raises:
            StoreConfigurationError: The vector store cannot delete by id. Nothing is
                changed.
        """
        if type(self._vectorstore).delete is VectorStore.delete:
            msg = (
                f"vectorstore={type(self._vectorstore).__name__} does not implement "
                "delete, which forgetting episodes needs; nothing was deleted"
            )
            raise StoreConfigurationError(msg)
        return super().delete(namespace, episode_ids)

    def _delete_records(self, namespace: str, ids: Sequence[str]) -> None:
        for start in range(0, len(ids), self._batch_size):
            self._vectorstore.delete(ids=list(ids[start : start + self._batch_size]))
        if self._persist is not None:
            self._persist(self._vectorstore)

    def purge_deleted(self) -> str:
        """Say what the backend keeps of deleted documents (out of this package's reach)."""
        name = type(self._vectorstore).__name__
        return (
            f"LangChain vector store {name}: the documents were deleted through its "
            "delete(); whether its own files or server keep their bytes is up to the "
            "backend (an in-process store keeps nothing on disk; a saved index keeps the "
            "old bytes until saved again with persist=)"
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
        metadatas = [
            record_fields(namespace, episode, seq)
            for seq, episode in enumerate(episodes, first_seq)
        ]
        if self._write_vectors is not None:
            self._write_vectors(texts, unit_rows(vectors).tolist(), metadatas, ids)
            return
        check_backend_embeddings(
            self._vectorstore,
            self._score_kind,
            texts[0],
            vectors,
            compare_model=not self._embeddings_checked,
        )
        self._embeddings_checked = True
        written = self._vectorstore.add_texts(texts, metadatas=metadatas, ids=ids)
        if list(written) != ids:
            msg = (
                f"vectorstore={type(self._vectorstore).__name__} did not keep the ids it "
                "was given, so episodes could not be found again by id"
            )
            raise StoreConfigurationError(msg)

    def search_hits(
        self,
        namespace: str,
        embedding: NDArray[np.float32],
        k: int,
        filters: EpisodeFilter | None = None,
        *,
        query_text: str | None = None,
    ) -> list[StoredHit]:
        """The ``k`` records nearest to ``embedding`` by cosine, most similar first.

        Asks the backend for ``k`` documents, then twice as many, until ``k`` pass the
        namespace and ``filters`` or the backend has no more: filters never hide a
        neighbour. Each score is converted to cosine similarity (see `ScoreKind`).
        ``query_text`` is ignored: the backend is searched by the vector.
        """
        k = check_int("k", k, 1)
        query = unit_rows(embedding.reshape(-1)).tolist()
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
        rows = (
            (
                document.id or "",
                document.metadata.get("episode"),
                min(1.0, max(-1.0, float(self._to_cosine(float(score))))),
            )
            for document, score in kept
        )
        hits = [hit for hit in decode_hits(rows) if _hit_matches(hit, filters)]
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
        with self._using(namespace):
            if is_faiss(self._vectorstore):
                # FAISS filters *after* taking fetch_k neighbours of the whole index, so
                # it has given all it has only once n covers the index.
                # It also allocates k results up front: never ask for more than it holds.
                total = int(self._vectorstore.index.ntotal)  # type: ignore[attr-defined]
                n = min(n, total)
                raw = self._search(query, k=n, filter=backend_filter, fetch_k=n) if n else []
                exhausted = n >= total
            else:
                extra = {} if backend_filter is None else {"filter": backend_filter}
                raw = self._search(query, k=n, **extra)
                exhausted = len(raw) < n
        kept = [
            (document, score)
            for document, score in raw
            if (document.metadata or {}).get("namespace") == namespace
            and passes(document.metadata, filters)
        ]
        return kept, exhausted
