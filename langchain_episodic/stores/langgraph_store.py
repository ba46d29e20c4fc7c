"""The long-term tier in any LangGraph ``BaseStore`` with a vector index.

For agents that already keep their long-term memory in LangGraph's store
(``InMemoryStore(index=...)``, ``PostgresStore`` with pgvector, ``SqliteStore`` with
sqlite-vec): episodes live beside the rest, under a private namespace prefix.

The difficulty: a LangGraph store cannot be searched by vector. ``search(prefix,
query=TEXT)`` embeds the text with the store's own index embeddings, and ``put``
embeds the indexed fields itself. How recall stays exact cosine with the memory's
embeddings anyway:

* **The query text.** `EpisodicMemory` passes every store's
  `search_hits` the query's text (keyword
  ``query_text``) beside its vector; the stores that search by vector ignore it, this
  one searches with that text. The store's embeddings must therefore be the
  memory's: on the first write to each namespace the store embeds one text with its
  index's model and refuses (`StoreConfigurationError`)
  unless it gives the memory's vector (cosine >= 0.999).
* **Our own vectors.** Each record also keeps the memory's vector, scaled to unit
  length, as float32 (base64, in the value). The backend's index only *chooses* the
  candidates; the similarity every hit reports is the dot product of that stored unit
  vector with the memory's unit query, the same float32 cosine as
  `InMemoryEpisodeStore`. And every search checks,
  for free, that the backend's score (converted to cosine) agrees with it within
  1e-3: a store whose index embeds queries with another model than the memory's is
  refused on the first recall instead of answering with the wrong neighbours.
* **Without a text** (``query_text=None``: a call with a vector alone, where the
  caller has no text) the store reads the namespace's
  records in pages and ranks them by those stored vectors: exact, and linear in the
  namespace's size.

Layout, under ``prefix`` (default ``("langchain_episodic",)``; LangGraph namespaces are
tuples of labels without ``.``, so a memory namespace, any Unicode string, becomes the
first 32 hex digits of its SHA-256):

* ``(*prefix, "episodes", <digest>)``: one item per episode, key = a UUID5 of the
  namespace and the ``episode_id`` (`record_id`),
  value = ``text`` (the task description, the only field indexed), ``episode`` (the
  full episode as JSON, so it round-trips exactly), ``vector``, ``namespace``, ``seq``
  and the flat fields filters use (``category``, ``outcome``, ``strategy_used``). A
  search's namespace prefix holds one memory namespace only, so no namespace ever sees
  another's records.
* ``(*prefix, "ledger", ...)``: the `Ledger`
  of `VectorStoreEpisodeStore` (record order,
  counts, state strings, the credit journal, the namespaces), one unindexed item per
  ledger key. The ids and the count are written after the records, in one batch:
  the count is the commit point.

What a generic LangGraph store cannot guarantee, and what is refused at construction:

* **A vector index** is required: a store without ``index_config`` is refused. So is a
  store without an ``embeddings`` attribute (the first-write check needs it; LangGraph's
  own stores have it).
* **The score.** ``InMemoryStore`` returns cosine similarity; ``PostgresStore`` cosine
  similarity, the negated L2 distance or the inner product, by its ``distance_type``;
  ``SqliteStore`` cosine similarity (its ``l2`` ranks the *farthest* first and its
  ``inner_product`` is a negated L1 distance, as of langgraph-checkpoint-sqlite 3.1:
  both refused). Another store is refused unless ``score=`` names its score or gives
  a function from it to cosine. With an L2 or inner-product score the memory's vectors
  must be unit length (the backend embeds texts itself, so they cannot be scaled):
  checked on the first write of each namespace.
* **Exact neighbours** only if the backend's index is exact: ``InMemoryStore`` and
  ``SqliteStore`` (sqlite-vec) compare every vector; ``PostgresStore`` uses an HNSW
  index by default, which is approximate (``ann_index_config={"kind": "flat"}`` is not).
  Filters never hide a neighbour: a filter with one value per field goes to the
  backend (``filter=``, applied before its limit), several values are checked in
  Python and the store asks for ``k``, then twice as many, until ``k`` pass or the
  backend has no more.
* **Durability** is the backend's: ``InMemoryStore`` is gone with the process;
  Postgres and SQLite commit each batch. Every item is written with ``ttl=None``, so
  it never expires, whatever ``default_ttl`` the store's ``ttl_config`` sets.
* **Concurrency.** Writes are serialised by a lock (on a ``PostgresStore`` over a
  connection pool reads are not: each has a connection of its own), and
  `LangGraphEpisodeStore.add` skips, under it, ids already committed, so
  memories sharing one store object never write an id twice. On ``PostgresStore`` the
  writes that read, then write the ledger (its count, the first journal entry under an
  id, the namespaces) also take a PostgreSQL advisory lock, so writers in several
  processes over one database take turns and lose nothing (tested with two
  processes). On other backends one process should write to a namespace at a time.
* **A writer killed mid-write.** Records are written first and committed by the
  ledger's count; a record written but never committed (the writer was killed in
  between) is not stored as far as `get` and `add` are concerned, so the
  next writer writes it again and commits it (tested with a writer interrupted in
  between, and on PostgreSQL with writers killed by SIGKILL).

Tested in the behaviour suite with ``InMemoryStore`` (kind ``langgraph-memory``) and with
``PostgresStore`` on a real PostgreSQL with pgvector (``langgraph-postgres``, its default
HNSW index, cosine; ``tests/integration_tests/test_postgres.py`` adds two writer
processes and SIGKILL). ``SqliteStore`` stays untested: its vector index loads the
sqlite-vec extension, which needs a Python whose ``sqlite3`` can load extensions.
"""

from __future__ import annotations

import base64
import hashlib
import warnings
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any, Literal, cast, get_args

import numpy as np
from langchain_core.stores import BaseStore as ByteStore
from numpy.typing import NDArray

from langchain_episodic._extras import missing_extra

try:
    from langgraph.store.base import BaseStore, GetOp, Item, PutOp, SearchItem, SearchOp
    from langgraph.store.memory import InMemoryStore
except ImportError as error:
    raise missing_extra("LangGraphEpisodeStore", "agents") from error

from langchain_episodic._validation import check_int
from langchain_episodic.errors import (
    EpisodicValueError,
    MalformedRecordWarning,
    StoreConfigurationError,
)
from langchain_episodic.model.episode import Episode
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.stores._ledgered import LedgeredStore, passes, record_fields, record_id
from langchain_episodic.stores.backends import embeds_like
from langchain_episodic.stores.base import StoredHit, unit_rows
from langchain_episodic.stores.codec import decode_hits
from langchain_episodic.stores.ledger import Ledger, key_digest

__all__ = ["DEFAULT_PREFIX", "LangGraphEpisodeStore", "LangGraphScore"]

DEFAULT_PREFIX: tuple[str, ...] = ("langchain_episodic",)
"""The namespace prefix under which the store keeps everything, unless told otherwise."""

LangGraphScore = Literal["cosine_similarity", "inner_product", "negative_l2"]
"""What a LangGraph store's ``SearchItem.score`` is, and how it becomes cosine.

* ``"cosine_similarity"``: cosine itself (``InMemoryStore``; ``PostgresStore`` and
  ``SqliteStore`` with ``distance_type="cosine"``).
* ``"inner_product"``: the dot product (``PostgresStore``, ``"inner_product"``);
  cosine on unit vectors.
* ``"negative_l2"``: minus the Euclidean distance (``PostgresStore``, ``"l2"``); on unit
  vectors cosine = ``1 - d² / 2``.
"""

_CONVERSIONS: dict[str, Callable[[float], float]] = {
    "cosine_similarity": lambda score: score,
    "inner_product": lambda score: score,
    "negative_l2": lambda score: 1.0 - score * score / 2.0,
}
_NEEDS_UNIT_VECTORS = frozenset({"inner_product", "negative_l2"})
_UNIT_TOLERANCE = 1e-4
_SCORE_TOLERANCE = 1e-3  # the backend's score against the cosine of our own vectors
_PAGE = 1000
_TEXT_FIELD = "text"


def _check_prefix(prefix: object) -> tuple[str, ...]:
    labels = tuple(prefix) if isinstance(prefix, (tuple, list)) else None
    if (
        not labels
        or not all(isinstance(label, str) and label and "." not in label for label in labels)
        or any("\x00" in label for label in labels)
        or labels[0] == "langgraph"
    ):
        msg = (
            f"prefix={prefix!r} is invalid: must be a non-empty tuple of non-empty "
            "strings without '.' or NUL, not starting with 'langgraph'"
        )
        raise EpisodicValueError(msg)
    return labels


def _from_module(store: object, module: str) -> bool:
    """Whether ``store``'s class, or a class it derives from, comes from ``module``."""
    return any(cls.__module__.startswith(module) for cls in type(store).__mro__)


def _detect_score(store: BaseStore) -> tuple[str | None, str]:
    """The score kind of a LangGraph store this module knows, and why it is refused if not."""
    name = type(store).__name__
    config: Mapping[str, Any] = store.index_config or {}  # type: ignore[attr-defined]
    distance = str(config.get("distance_type", "cosine"))
    if isinstance(store, InMemoryStore):
        return "cosine_similarity", ""
    if _from_module(store, "langgraph.store.postgres"):
        kinds = {
            "cosine": "cosine_similarity",
            "l2": "negative_l2",
            "inner_product": "inner_product",
        }
        kind = kinds.get(distance)
        return kind, f"{name} with distance_type={distance!r}: use 'cosine', or pass score="
    if _from_module(store, "langgraph.store.sqlite"):
        if distance == "cosine":
            return "cosine_similarity", ""
        return None, (
            f"{name} with distance_type={distance!r} (its search ranks that score in the "
            "wrong order): use distance_type='cosine'"
        )
    known = ", ".join(map(repr, get_args(LangGraphScore)))
    return None, (
        f"{name} (a store this package does not know): pass score= one of {known}, or a "
        "function from its score to cosine similarity"
    )


def _advisory_lock(
    store: BaseStore, prefix: tuple[str, ...]
) -> Callable[[], AbstractContextManager[None]] | None:
    """A lock across processes for a ``PostgresStore``: a session-level advisory lock.

    The ledger is read, then written (its count, the first journal entry under an id,
    the list of namespaces); writers in several processes over one database must take
    turns, or one's count overwrites another's. The lock is held on the store's own
    connection (or one borrowed from its pool for the duration), keyed by the prefix.
    ``None`` for other backends: one process writes to a namespace at a time there.
    """
    connection = getattr(store, "conn", None)
    if connection is None or not _from_module(store, "langgraph.store.postgres"):
        return None
    digest = hashlib.sha256("\x1f".join(("langchain_episodic", *prefix)).encode("utf-8"))
    key = int.from_bytes(digest.digest()[:8], "big", signed=True)

    @contextmanager
    def locked() -> Iterator[None]:
        # A pool (it has getconn) lends one connection; a connection is used as it is.
        borrowed = connection.connection() if hasattr(connection, "getconn") else None
        with borrowed if borrowed is not None else nullcontext(connection) as session:
            session.execute("SELECT pg_advisory_lock(%s)", (key,))
            try:
                yield
            finally:
                session.execute("SELECT pg_advisory_unlock(%s)", (key,))

    return locked


def _search(store: BaseStore, op: SearchOp) -> list[SearchItem]:
    """Run one search through ``batch`` (the ops of a search are plain tuples)."""
    [items] = store.batch([op])
    return cast("list[SearchItem]", items)


def _decode_vector(raw: object) -> NDArray[np.float32] | None:
    if not isinstance(raw, str):
        return None
    try:
        data = base64.b64decode(raw.encode("ascii"), validate=True)
    except (ValueError, UnicodeEncodeError):
        return None
    if not data or len(data) % 4:
        return None
    vector = np.frombuffer(data, dtype="<f4").astype(np.float32)
    return vector if bool(np.isfinite(vector).all()) else None


class _LedgerStore(ByteStore[str, bytes]):
    """A LangChain ``ByteStore`` over a LangGraph store: what `Ledger` writes to.

    A ledger key ``a/b/c`` is the item ``c`` of namespace ``(*root, "a", "b")``, so that
    the ledger's prefix listings (a run's journal) are namespace-prefix searches.
    """

    def __init__(self, store: BaseStore, root: tuple[str, ...]) -> None:
        self.store = store
        self.root = root

    def _place(self, key: str) -> tuple[tuple[str, ...], str]:
        *labels, last = key.split("/")
        return (*self.root, *labels), last

    def get_op(self, key: str) -> GetOp:
        """The read of ledger ``key``, for a caller that batches it with others."""
        return GetOp(*self._place(key))

    @staticmethod
    def value_of(item: object) -> bytes | None:
        """The ledger value a `get_op` read (``None``: not stored)."""
        value = item.value.get("v") if isinstance(item, Item) else None
        return value.encode("utf-8") if isinstance(value, str) else None

    def mget(self, keys: Sequence[str]) -> list[bytes | None]:
        if not keys:
            return []
        return [self.value_of(item) for item in self.store.batch(map(self.get_op, keys))]

    def mset(self, key_value_pairs: Sequence[tuple[str, bytes]]) -> None:
        if key_value_pairs:
            self.store.batch(
                [
                    PutOp(*self._place(key), {"v": value.decode("utf-8")}, index=False)
                    for key, value in key_value_pairs
                ]
            )

    def mdelete(self, keys: Sequence[str]) -> None:
        if keys:
            self.store.batch([PutOp(*self._place(key), None) for key in keys])

    def yield_keys(self, *, prefix: str | None = None) -> Iterator[str]:
        prefix = prefix or ""
        labels = [label for label in prefix.split("/") if label]
        if labels and not prefix.endswith("/"):
            labels.pop()  # a prefix that ends inside a label: list its parent namespace
        offset = 0
        while True:
            items = _search(self.store, SearchOp((*self.root, *labels), limit=_PAGE, offset=offset))
            for item in items:
                key = "/".join((*item.namespace[len(self.root) :], item.key))
                if key.startswith(prefix):
                    yield key
            if len(items) < _PAGE:
                return
            offset += len(items)


class LangGraphEpisodeStore(LedgeredStore):
    """Episodes in any LangGraph ``BaseStore`` with a vector index.

    Tested with ``InMemoryStore(index=...)`` and with ``PostgresStore`` on PostgreSQL with
    pgvector. The module docstring says how recall
    stays exact cosine with the memory's embeddings, what a generic store cannot
    guarantee and what is refused.

    Examples:
        >>> from langgraph.store.memory import InMemoryStore
        >>> from langchain_episodic import EpisodicMemory, HashingEmbeddings
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> embeddings = HashingEmbeddings()
        >>> graph_store = InMemoryStore(index={"dims": 384, "embed": embeddings})
        >>> memory = EpisodicMemory(store=LangGraphEpisodeStore(graph_store), embeddings=embeddings)
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
        store: The LangGraph store. It must have a vector index (``index=`` when it
            was built), whose embeddings model must be the memory's.
        prefix: The namespace prefix under which episodes and the ledger are kept.
        score: What the store's ``SearchItem.score`` is (a `LangGraphScore`), or
            a function from it to cosine similarity. Detected for ``InMemoryStore``,
            ``PostgresStore`` and ``SqliteStore``; required otherwise.
        batch_size: Records per call to the store.

    Raises:
        TypeError: ``store`` is not a LangGraph ``BaseStore``.
        StoreConfigurationError: The store has no vector index or no embeddings, or its
            score is unknown (or ranks wrongly) and ``score`` was not given.
        EpisodicValueError: ``prefix``, ``score`` or ``batch_size`` is invalid.
    """

    _commits_checked = True

    def __init__(
        self,
        store: BaseStore,
        *,
        prefix: Sequence[str] = DEFAULT_PREFIX,
        score: LangGraphScore | Callable[[float], float] | None = None,
        batch_size: int = 1000,
    ) -> None:
        if not isinstance(store, BaseStore):
            msg = f"store={store!r} is invalid: must be a LangGraph BaseStore"
            raise TypeError(msg)
        self._prefix = _check_prefix(prefix)
        check_int("batch_size", batch_size, 1)
        name = type(store).__name__
        if not getattr(store, "index_config", None):
            msg = (
                f"store={name} has no vector index: build it with index={{'dims': ..., "
                "'embed': <the memory's embeddings>}} (LangGraphEpisodeStore searches "
                "episodes by similarity)"
            )
            raise StoreConfigurationError(msg)
        if getattr(store, "embeddings", None) is None:
            msg = (
                f"store={name} exposes no embeddings model, so LangGraphEpisodeStore "
                "cannot check that it embeds like the memory"
            )
            raise StoreConfigurationError(msg)
        self._score_kind, self._to_cosine = self._conversion(store, score)
        self._store = store
        self._ledger_store = _LedgerStore(store, (*self._prefix, "ledger"))
        self._ledger = Ledger(self._ledger_store)
        self._batch_size = batch_size
        self._checked: set[str] = set()
        self._across_processes = _advisory_lock(store, self._prefix)
        super().__init__()
        # A PostgresStore over a pool serves each call on a connection of its own:
        # concurrent runs read at once there. One connection cannot serve two threads
        # (psycopg refuses a second pipeline), so reads over it stay serialised.
        self._concurrent_reads = self._across_processes is not None and hasattr(
            getattr(store, "conn", None), "getconn"
        )

    @contextmanager
    def _exclusive(self) -> Iterator[None]:
        across = self._across_processes
        with self._lock, nullcontext() if across is None else across():
            yield

    @staticmethod
    def _conversion(
        store: BaseStore, score: LangGraphScore | Callable[[float], float] | None
    ) -> tuple[str | None, Callable[[float], float]]:
        if callable(score):
            return None, score
        kinds = ", ".join(map(repr, get_args(LangGraphScore)))
        if score is not None:
            if score not in _CONVERSIONS:
                msg = f"score={score!r} is invalid: must be a function or one of {kinds}"
                raise EpisodicValueError(msg)
            return score, _CONVERSIONS[score]
        kind, why = _detect_score(store)
        if kind is None:
            msg = f"cannot turn the search scores of {why} into cosine similarity"
            raise StoreConfigurationError(msg)
        return kind, _CONVERSIONS[kind]

    def __repr__(self) -> str:
        score = self._score_kind or "custom"
        return (
            f"LangGraphEpisodeStore({type(self._store).__name__}, prefix={self._prefix!r}, "
            f"score={score!r})"
        )

    @property
    def store(self) -> BaseStore:
        """The wrapped LangGraph store."""
        return self._store

    @property
    def prefix(self) -> tuple[str, ...]:
        """The namespace prefix under which everything is kept."""
        return self._prefix

    def _space(self, namespace: str) -> tuple[str, ...]:
        return (*self._prefix, "episodes", key_digest(namespace))

    def _records(self, namespace: str, ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        space = self._space(namespace)
        found: dict[str, Mapping[str, Any]] = {}
        for start in range(0, len(ids), self._batch_size):
            part = ids[start : start + self._batch_size]
            for rid, item in zip(
                part, self._store.batch([GetOp(space, rid) for rid in part]), strict=True
            ):
                if isinstance(item, Item):
                    found[rid] = item.value
        return found

    def _records_and_count(
        self, namespace: str, ids: Sequence[str]
    ) -> tuple[dict[str, Mapping[str, Any]], int]:
        # One batch for the records and the ledger's count: one round trip, not two.
        if len(ids) > self._batch_size:
            return super()._records_and_count(namespace, ids)
        space = self._space(namespace)
        count_op = self._ledger_store.get_op(self._ledger.count_key(namespace))
        *items, count_item = self._store.batch([*(GetOp(space, rid) for rid in ids), count_op])
        records: dict[str, Mapping[str, Any]] = {
            rid: item.value for rid, item in zip(ids, items, strict=True) if isinstance(item, Item)
        }
        return records, self._ledger.parse_count(self._ledger_store.value_of(count_item))

    def add(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        embeddings: NDArray[np.float32],
        first_seq: int,
    ) -> None:
        """Write new episodes with their vectors, then commit them in the ledger.

        Takes what `EpisodeStore` says the memory
        guarantees, unchecked. The store numbers records from the ledger's count under
        its lock, which gives ``first_seq + i`` when one writer at a time adds.

        Raises:
            StoreConfigurationError: The store's embeddings are not the memory's, or
                its score needs unit vectors the memory's model does not give.
        """
        raw = np.asarray(embeddings, dtype=np.float64)
        vectors = unit_rows(raw).astype(np.float32)
        ids = [record_id(namespace, episode.episode_id) for episode in episodes]
        with self._using(namespace, write=True):
            # Memories sharing this store (or, on PostgreSQL, the database) may each
            # have found an id missing before either wrote it. The first record is kept;
            # one a killed writer wrote but never committed is written again.
            records, start = self._records_and_count(namespace, ids)
            stored = self._committed(namespace, records, start)
            new = [index for index, rid in enumerate(ids) if rid not in stored]
            if not new:
                return
            self._check_embeddings(namespace, episodes[new[0]].task.description, raw[new])
            space = self._space(namespace)
            # The ledger block the new ids extend is read in the records' first batch (a
            # batch reads before it writes): a round trip fewer than reading it alone.
            head = self._ledger.head_key(namespace, start)
            head_op = [] if head is None else [self._ledger_store.get_op(head)]
            head_raw: bytes | None = None
            for offset in range(0, len(new), self._batch_size):
                part = new[offset : offset + self._batch_size]
                found = self._store.batch(
                    [
                        *(head_op if offset == 0 else []),
                        *(
                            PutOp(
                                space,
                                ids[index],
                                self._value(namespace, episodes[index], vectors[index], seq),
                                index=[_TEXT_FIELD],
                            )
                            for seq, index in enumerate(part, start + offset)
                        ),
                    ]
                )
                if offset == 0 and head_op:
                    head_raw = self._ledger_store.value_of(found[0])
            # The ids and the count in one write (one statement on PostgreSQL, so both or
            # neither): the count still commits the records, written before.
            self._ledger_store.mset(
                [
                    *self._ledger.appended(namespace, start, [ids[i] for i in new], head_raw),
                    self._ledger.count_value(namespace, start + len(new)),
                ]
            )

    def _delete_records(self, namespace: str, ids: Sequence[str]) -> None:
        space = self._space(namespace)
        for start in range(0, len(ids), self._batch_size):
            part = ids[start : start + self._batch_size]
            self._store.batch([PutOp(space, rid, None) for rid in part])

    def purge_deleted(self) -> str:
        """Say what the backend keeps of deleted items (nothing it can purge from here)."""
        name = type(self._store).__name__
        if isinstance(self._store, InMemoryStore):
            return (
                f"LangGraph {name}: the items were dropped from this process's memory "
                "(nothing was written to disk)"
            )
        return (
            f"LangGraph {name}: the items were deleted through the store; the database "
            "may keep their bytes (PostgreSQL: dead rows until VACUUM, and its write-ahead "
            "log until recycled; SQLite: free pages until VACUUM) until its operator "
            "vacuums it"
        )

    @staticmethod
    def _value(
        namespace: str, episode: Episode, vector: NDArray[np.float32], seq: int
    ) -> dict[str, Any]:
        return {
            _TEXT_FIELD: episode.task.description,
            **record_fields(namespace, episode, seq),
            "vector": base64.b64encode(np.asarray(vector, dtype="<f4").tobytes()).decode("ascii"),
        }

    def _check_embeddings(self, namespace: str, text: str, vectors: NDArray[np.float64]) -> None:
        """On a namespace's first write: the backend embeds like the memory (see module doc)."""
        name = type(self._store).__name__
        norms = np.linalg.norm(vectors, axis=1)
        if self._score_kind in _NEEDS_UNIT_VECTORS and not np.allclose(
            norms, 1.0, atol=_UNIT_TOLERANCE
        ):
            msg = (
                f"store={name} scores by {self._score_kind!r} and embeds texts itself, so "
                "its vectors cannot be scaled to unit length, and this embeddings model "
                f"returns vectors of length {float(norms[0]):.6g}: similarity would not be "
                "cosine. Use distance_type='cosine' or a model that returns unit vectors"
            )
            raise StoreConfigurationError(msg)
        if namespace in self._checked:
            return
        model = self._store.embeddings  # type: ignore[attr-defined]
        if not embeds_like(model, text, vectors[0]):
            msg = (
                f"store={name} embeds with {type(model).__name__}, which gives other "
                "vectors than the memory's embeddings model: build the store's index "
                "with the same model"
            )
            raise StoreConfigurationError(msg)
        self._checked.add(namespace)

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

        With ``query_text`` (the text whose ``embed_query`` ``embedding`` is), the
        backend's index searches with it; with ``None``, the namespace is read and
        ranked here by the stored vectors (exact, linear in its size).
        Similarities are the float32 cosine of the stored unit vectors and the query.

        Raises:
            EpisodicValueError: ``k`` is below 1, or the query's length differs from
                the namespace's vectors'.
            StoreConfigurationError: The backend's scores disagree with the memory's
                vectors: its index embeds with another model.
        """
        k = check_int("k", k, 1)
        query = unit_rows(np.asarray(embedding).reshape(-1)).astype(np.float32)
        native = _native_filter(filters)
        if query_text is None:
            return self._scan(namespace, query, k, native, filters)
        wanted = k
        while True:
            items = self._search_space(namespace, native, wanted, 0, query_text)
            kept = [item for item in items if passes(item.value, filters)]
            if len(kept) >= k or len(items) < wanted:
                break
            wanted *= 2
        hits = list(decode_hits(self._scored(kept, query, check=True)))
        hits.sort(key=lambda hit: -hit.similarity)  # stable: the backend's order on ties
        return hits[:k]

    def _search_space(
        self,
        namespace: str,
        native: dict[str, Any] | None,
        limit: int,
        offset: int,
        query: str | None = None,
    ) -> list[SearchItem]:
        op = SearchOp(self._space(namespace), native, limit, offset, query)
        with self._using(namespace):
            return _search(self._store, op)

    def _scored(
        self, items: Sequence[Item], query: NDArray[np.float32], *, check: bool
    ) -> Iterator[tuple[str, object, float]]:
        """``(record_id, episode JSON, similarity)`` per item, for the codec to decode.

        The similarity is that of the item's stored vector; an item without a
        readable one is skipped with a warning where it stands, so that warnings keep
        the items' order. With ``check``, the backend's score must agree with it.
        """
        for item in items:
            vector = _decode_vector(item.value.get("vector"))
            if vector is None:
                warnings.warn(
                    MalformedRecordWarning(item.key, "no readable vector in the record"),
                    stacklevel=3,
                )
                continue
            if vector.shape != query.shape:
                msg = (
                    f"embedding has {query.shape[0]} dimensions but namespace="
                    f"{item.value.get('namespace')!r} holds {vector.shape[0]}-dimensional "
                    "vectors"
                )
                raise EpisodicValueError(msg)
            similarity = min(1.0, max(-1.0, float(vector @ query)))
            score = item.score if isinstance(item, SearchItem) else None
            if check and score is not None:
                theirs = float(self._to_cosine(float(score)))
                if abs(theirs - similarity) > _SCORE_TOLERANCE:
                    msg = (
                        f"store={type(self._store).__name__} scored a record {theirs:.6f} "
                        f"where the memory's vectors give cosine {similarity:.6f}: its index "
                        "embeds queries with another model than the memory's, or score= is "
                        "wrong"
                    )
                    raise StoreConfigurationError(msg)
            yield item.key, item.value.get("episode"), similarity

    def _scan(
        self,
        namespace: str,
        query: NDArray[np.float32],
        k: int,
        native: dict[str, Any] | None,
        filters: EpisodeFilter | None,
    ) -> list[StoredHit]:
        """Exact search without a text: every record of the namespace, read in pages."""
        hits: list[tuple[int, StoredHit]] = []
        offset = 0
        while True:
            items = self._search_space(namespace, native, _PAGE, offset)
            passing = [item for item in items if passes(item.value, filters)]
            seqs = {item.key: item.value.get("seq") for item in passing}  # keys are unique
            for hit in decode_hits(self._scored(passing, query, check=False)):
                seq = seqs[hit.record_id]
                hits.append((seq if isinstance(seq, int) else 0, hit))
            if len(items) < _PAGE:
                break
            offset += len(items)
        hits.sort(key=lambda pair: (-pair[1].similarity, pair[0]))
        return [hit for _, hit in hits[:k]]


def _native_filter(filters: EpisodeFilter | None) -> dict[str, Any] | None:
    """The part of ``filters`` the backend applies: fields restricted to one value."""
    if filters is None or filters.is_empty:
        return None
    native: dict[str, Any] = {}
    for field, values in (
        ("category", filters.categories),
        ("outcome", filters.outcomes),
        ("strategy_used", filters.strategies),
    ):
        if values is not None and len(values) == 1:
            [value] = values
            native[field] = getattr(value, "value", value)
    return native or None
