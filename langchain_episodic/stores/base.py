"""The store interface `EpisodicMemory` depends on.

A long-term tier is anything that implements `EpisodeStore`: eleven methods,
drawn from what the memory actually calls, nothing more. The memory embeds, validates,
checks immutability, numbers records and ranks; a store only keeps records and finds
neighbours. Four ship with the package (in `langchain_episodic.stores`):

* `ChromaEpisodeStore` (the default): embedded on
  disk, in memory, or on a Chroma server.
* `InMemoryEpisodeStore`: numpy brute force, exact.
* `VectorStoreEpisodeStore`: any LangChain ``VectorStore``.
* `LangGraphEpisodeStore`: any LangGraph ``BaseStore``
  with a vector index (needs the ``langgraph`` package).

A store may also have optional capabilities, each declared here and listed in
`EpisodeStore`'s docstring with what the memory does with it; the only one
ones are `ListsCollections`, `OrderedJournal`, `ForgetsRecords`
(deletion: every store of the package has it) and `BatchesPurge` (a purge paid
once per batch of erasures).

Records are encoded and decoded by `langchain_episodic.stores.codec`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import Episode, OutcomeStatus, episode_from_stored
from langchain_episodic.model.filters import EpisodeFilter

__all__ = [
    "DEFAULT_NAMESPACE",
    "BatchesPurge",
    "EpisodeStore",
    "ForgetsRecords",
    "JournalEntry",
    "JournalHead",
    "KeyedJournal",
    "ListsCollections",
    "OrderedJournal",
    "StoredHit",
    "read_journal_entries",
    "require_stored",
    "unit_rows",
]

DEFAULT_NAMESPACE = "default"


@dataclass(frozen=True)
class StoredHit:
    """A search hit before its episode is built: what ranking needs, and the record.

    Attributes:
        similarity: Cosine similarity to the query, in [-1, 1].
        timestamp: The episode's timestamp.
        reward: The episode's reward.
        outcome: The episode's outcome.
        data: The stored episode as a dict (``Episode.to_dict()`` form).
        record_id: The record's id in the store (the ``episode_id`` for the
            package's own stores).
    """

    similarity: float
    timestamp: float
    reward: float
    outcome: OutcomeStatus
    data: Mapping[str, Any]
    record_id: str = ""

    @property
    def episode_id(self) -> str:
        """The stored episode's id."""
        return str(self.data["episode_id"])

    def episode(self) -> Episode:
        """Build the stored episode (validated when it was recorded).

        Raises:
            EpisodeValidationError: The record was not written by this package and
                breaks a rule of the data model.
        """
        return episode_from_stored(self.data)


@dataclass(frozen=True)
class JournalEntry:
    """One entry of a namespace's journal: a small immutable record beside the episodes.

    The memory keeps its credit loop there (which episodes each run was shown, and
    each run's outcome; `langchain_episodic.scoring.credit`). A store keeps entries
    apart from the episodes, so they add nothing to the cost of a recall query.

    Attributes:
        entry_id: Unique within the namespace; the first entry under an id is kept.
        run_id: The run the entry is about; entries can be read per run.
        payload: The entry itself, as a string (JSON).
    """

    entry_id: str
    run_id: str
    payload: str


def unit_rows(vectors: NDArray[np.floating[Any]]) -> NDArray[np.float64]:
    """Vectors (one, or a matrix of rows) scaled to unit length, in float64.

    Normalisation only: the memory has already refused non-finite and zero vectors.
    Stores that compute cosine themselves, or convert a backend's L2 or inner-product
    score into it, keep and query unit vectors.
    """
    matrix = np.asarray(vectors, dtype=np.float64)
    unit: NDArray[np.float64] = matrix / np.linalg.norm(matrix, axis=-1, keepdims=True)
    return unit


def require_stored(store: EpisodeStore, namespace: str, ids: Sequence[str], then: str) -> None:
    """Refuse, naming them, the ``ids`` the namespace holds no episode under.

    Args:
        store: Where to look (one ``get``, nothing when ``ids`` is empty).
        namespace: The namespace.
        ids: Episode ids.
        then: What the message says follows, e.g. ``"nothing was changed"``.

    Raises:
        EpisodicValueError: Some ids are not stored; the message lists them.
    """
    if not ids:
        return
    stored = store.get(namespace, list(ids))
    missing = [i for i in ids if i not in stored]
    if missing:
        msg = f"episode_ids={missing!r} are not stored in namespace={namespace!r}; {then}"
        raise EpisodicValueError(msg)


@runtime_checkable
class EpisodeStore(Protocol):
    """The long-term tier's interface: what `EpisodicMemory` calls, nothing more.

    The memory validates; a store keeps records and finds neighbours. Every method
    takes the ``namespace`` first; no method may read or count another namespace's
    records.

    A store may assume, because the memory checks it before every call:

    * ``namespace`` is a non-empty string of valid Unicode.
    * `add` gets at least one episode; each is a validated `Episode`,
      their ``episode_id`` values are unique within the batch, and `get` found
      none of them in the namespace just before (and the memory raised
      `EpisodeConflictError` itself for a different stored episode).
    * ``embeddings`` is a float32 matrix with one row per episode, in the same order,
      and at least one column; every row is finite and non-zero. The query of
      `search_hits` is one such row, from the same embeddings model.
    * ``first_seq`` is the namespace's count (as the memory knows it) before the write,
      and one memory object writes one batch at a time, unless the store says
      ``concurrent_adds`` (below).
    * ``k`` and ``page_size`` are at least 1.

    What a store may have beyond these methods, and what the memory does with each
    (nothing else of a store is read by name, by the memory or anything else in the
    package):

    * The ``query_text`` keyword of `search_hits`, declared here and taken by
      every store: the text whose ``embed_query`` the vector is, or ``None``. The
      memory passes the query's text on every recall, and ``None`` where it has
      none. Stores that search by vector ignore it; one that can only search by text
      (`LangGraphEpisodeStore`: a LangGraph store
      embeds the query itself) searches its index with it, and without it reads the
      namespace and ranks it by the stored vectors.
    * `ListsCollections` (``collection_name`` and ``collection_names()``; the
      Chroma store has it): when a namespace asked for with
      ``create_namespace=False`` is not there, the memory names the other
      collections in the same place, with their namespaces, in its
      `NamespaceNotFoundError` (the CLI does the
      same), so that a mistyped ``collection_name`` is seen at once. A store without
      it gets the error with its own namespaces only.
    * ``repr(store)``: the memory names the store by it in errors, so a store should
      say what it is and where (all four do).
    * ``concurrent_adds = True``: the memory may call `add` from several
      threads at once (batches of different ids; two may carry the same
      ``first_seq``). The store then numbers records itself, never giving a number
      twice (all four do, under a lock of their own held only to take the numbers or,
      without a server to wait on, for the whole write). Without it the memory writes
      one batch at a time, each numbered from the count the last one left.

    Store-specific methods (``ChromaEpisodeStore.verify``, ``close``, ...) are called
    only by code that holds that store's type, never looked up on an arbitrary store.

    A store must:

    * Return similarities as cosine similarity, whatever its backend scores with;
      scaling vectors to unit length where a backend needs it is the store's job.
    * Keep the first record under an id. The memory's `get` and `add`
      are two calls, so another writer (memories sharing one store object, or
      processes sharing one Chroma server) may store an id in between. Such an id
      must be neither written twice nor overwritten: Chroma ignores an existing id by
      itself; the other stores skip it under their lock. This guard is about
      concurrency, not validation.
    * Make the records durable, as far as the backend allows, before `add`
      returns.
    * Keep journal entries (`JournalEntry`) apart from the episodes, so that
      they cost a recall nothing, and keep the first entry under an id.
    * Skip a stored record that is not a readable episode with a
      `MalformedRecordWarning`, instead of failing
      the call, by reading its rows through
      `decode_hits` and
      `decode_episodes`.
    """

    def namespaces(self) -> tuple[str, ...]:
        """Every namespace that holds at least one record, or was opened, sorted."""

    def count(self, namespace: str) -> int:
        """Number of records in ``namespace``."""

    def get(self, namespace: str, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id; missing ids are left out."""

    def add(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        embeddings: NDArray[np.float32],
        first_seq: int,
    ) -> None:
        """Write new episodes with their vectors; record ``i`` gets number ``first_seq + i``.

        A store that numbers records itself under a lock (the in-memory and vector-store
        stores do) gives the same numbers with one writer and never repeats one with
        several. An id another writer stored since the memory's `get` keeps its
        record and is not written again. When this returns, the records must be
        durable as far as the backend allows.
        """

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

        Args:
            namespace: The namespace searched.
            embedding: The query vector.
            k: How many hits at most.
            filters: Only records that pass, when given.
            query_text: The text whose ``embed_query`` the vector is, or ``None``;
                stores that search by vector ignore it (see the class docstring).
        """

    def latest(self, namespace: str, n: int, total: int) -> list[Episode]:
        """The last ``n`` of the ``total`` records in recording order, oldest first."""

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        """Episodes in recording order from the ``start``-th on, read in pages."""

    def read_state(self, namespace: str, key: str) -> str | None:
        """A small string the memory saved for ``namespace`` under ``key``, or ``None``."""

    def write_state(self, namespace: str, key: str, value: str) -> None:
        """Save a small string for ``namespace`` under ``key``, replacing the old one."""

    def append_journal(self, namespace: str, entries: Sequence[JournalEntry]) -> None:
        """Add entries to the namespace's journal, durably, before returning.

        An entry whose ``entry_id`` is already stored is not written again: the first
        one is kept, also when several writers (processes on one Chroma server) add
        the same id at once. Entries never slow `search_hits`.
        """

    def read_journal(self, namespace: str, run_id: str | None = None) -> list[JournalEntry]:
        """The namespace's journal entries (of one run when ``run_id`` is given), any order."""


@runtime_checkable
class OrderedJournal(Protocol):
    """An optional capability: a journal read in the order it was written, and by id.

    A memory over such a store opens in time independent of how long its journal
    is: it keeps a checkpoint of what the journal adds up to (the utility book, the
    open runs, the lessons' ids) beside the journal, and reads only the entries
    written after it (`checkpoint`). A run's outcome
    is read by its id, not by a filtered scan. Stores without it read the whole
    journal on open, as before. `ChromaEpisodeStore`
    and `InMemoryEpisodeStore` implement it.
    """

    def read_journal_from(self, namespace: str, start: int) -> list[JournalEntry]:
        """The entries from position ``start`` on, in the order they were first stored.

        Positions count every entry ever stored in the namespace's journal, from 0;
        an id written again does not move (the first entry is kept).
        """

    def read_journal_ids(self, namespace: str, entry_ids: Sequence[str]) -> list[JournalEntry]:
        """The stored entries under ``entry_ids`` (those that exist), any order."""

    def journal_size(self, namespace: str) -> int:
        """How many entries the namespace's journal holds (the next entry's position)."""

    def read_checkpoint(self, namespace: str) -> str | None:
        """The journal checkpoint last written with `write_checkpoint`, or ``None``."""

    def write_checkpoint(self, namespace: str, value: str) -> None:
        """Replace the journal checkpoint, atomically (a reader sees the old or the new)."""


@runtime_checkable
class JournalHead(Protocol):
    """An optional capability: whether the journal changed, known without reading it.

    An `OrderedJournal` with it opens without touching its journal when nothing
    was written since the checkpoint: the checkpoint keeps the head it saw, and an
    equal head now means no entry was appended or deleted since. On a large journal
    that spares the first read of it in the process (a fixed 0.1-0.3 s in Chroma).
    `ChromaEpisodeStore` implements it on an embedded
    folder (small files beside Chroma's); on a server it keeps no head (``None``).
    """

    def journal_head(self, namespace: str) -> str | None:
        """A token that changes with every write of the journal; ``None``: cannot vouch.

        ``None`` when a write is in flight, a crash interrupted one, or no head is kept:
        the memory then reads the journal as before.
        """

    def journal_writes(self, namespace: str) -> AbstractContextManager[None]:
        """Several writes of the journal as one in flight: the head is renewed once, after.

        The head says a write is in flight from the block's start to its end (the
        journal may change throughout), at the cost of one pair of synced writes
        instead of one pair per write.
        """


@runtime_checkable
class KeyedJournal(Protocol):
    """An optional capability: a run's journal entries read by their ids, in one read.

    For a store whose journal is not an `OrderedJournal` but keeps each entry
    under its run and id (`VectorStoreEpisodeStore`,
    `LangGraphEpisodeStore`): a run's outcome, or an
    episode's tombstone, is then one read by key instead of a listing of the run's
    entries. `read_journal_entries` picks the cheapest read a store offers.
    """

    def read_journal_keys(
        self, namespace: str, run_id: str, entry_ids: Sequence[str]
    ) -> list[JournalEntry]:
        """The stored entries of run ``run_id`` under ``entry_ids`` (those that exist)."""


def read_journal_entries(
    store: EpisodeStore, namespace: str, entry_ids: Sequence[str], run_id: str | None = None
) -> list[JournalEntry]:
    """The stored journal entries among ``entry_ids`` (those that exist), any order.

    Read by id where the store can (`OrderedJournal`), by key where every wanted
    entry is ``run_id``'s and the store is a `KeyedJournal`; else from a read of
    the journal (of ``run_id``'s entries only, when given).
    """
    wanted = list(dict.fromkeys(entry_ids))
    if not wanted:
        return []
    if isinstance(store, OrderedJournal):
        return store.read_journal_ids(namespace, wanted)
    if run_id is not None and isinstance(store, KeyedJournal):
        return store.read_journal_keys(namespace, run_id, wanted)
    keep = set(wanted)
    return [entry for entry in store.read_journal(namespace, run_id) if entry.entry_id in keep]


@runtime_checkable
class ForgetsRecords(Protocol):
    """An optional capability: a store that can delete records and journal entries.

    What `forget`,
    ``memory.forgetting.forget_all`` and
    `prune` need; every store of the package
    has it. A store without it can still be used: those methods then raise
    `StoreConfigurationError` naming it.

    A store must, besides:

    * Yield every remaining record from `EpisodeStore.iter_episodes` and the
      last ones from `EpisodeStore.latest` although deletion leaves gaps in the
      record numbers (``total`` there is then the memory's high-water mark, not the
      count); `EpisodeStore.count` counts the records left.
    * Keep the first entry under an id only while it is stored: an entry id deleted
      with `delete_journal` may be written again (a redacted entry replaces
      the original under its id). On an `OrderedJournal` the entries after a
      deleted one move up a position; the memory drops its checkpoint first.
    """

    def delete(self, namespace: str, episode_ids: Sequence[str]) -> int:
        """Remove the records (and their vectors) under ``episode_ids``; how many were there.

        Ids not stored are skipped. Durable, as far as the backend allows, on return.
        """

    def delete_journal(self, namespace: str, entry_ids: Sequence[str]) -> int:
        """Remove the journal entries under ``entry_ids``; how many were there."""

    def purge_deleted(self) -> str:
        """Make what was deleted unrecoverable from the store's own files, as far as it can.

        Called once after an erasure. Returns one sentence for the erasure's receipt:
        what the backend guarantees and what it cannot (e.g. a server's own logs).
        """


@runtime_checkable
class BatchesPurge(Protocol):
    """An optional capability: a store whose purge after deletion is batched.

    A purge that costs time in proportion to the whole store (an embedded Chroma
    folder's ``VACUUM``) is paid once per batch of erasures rather than on each: an
    erasure calls `purge_when_due` instead of
    `ForgetsRecords.purge_deleted`, and the receipt says whether the bytes are
    gone or when they will be. ``memory.forgetting.compact()`` purges at once
    (`ForgetsRecords.purge_deleted`). A purge left pending must survive the
    process: the next store opened on the same files finishes it.
    `ChromaEpisodeStore` implements it.
    """

    def purge_when_due(self) -> tuple[bool, str]:
        """Purge now if enough was deleted since the last purge, else leave it pending.

        Returns:
            ``(pending, sentence)``: whether deleted bytes are still in the store's
            files, and what the store guarantees and when, for a receipt.
        """

    def purge_status(self) -> tuple[bool, str]:
        """``(pending, sentence)`` now: whether a purge is pending, and what holds."""


@runtime_checkable
class ListsCollections(Protocol):
    """An optional capability: a store that can list the other collections in its place.

    A place (a Chroma folder or server) may hold several stores, one per
    ``collection_name``. When a namespace asked for is not found, the memory and the
    CLI name what else is there (``isinstance(store, ListsCollections)``), so that a
    mistyped ``collection_name`` is seen at once.
    `ChromaEpisodeStore` implements it.
    """

    @property
    def collection_name(self) -> str:
        """This store's own name in its place (left out of what is shown as elsewhere)."""

    def collection_names(self) -> dict[str, tuple[str, ...]]:
        """Every collection name in the place that holds namespaces, with them, sorted."""


@runtime_checkable
class FiltersEveryField(Protocol):
    """An optional capability: a store that filters by every field a filter may name.

    Every store filters by category, outcome and strategy (`EpisodeFilter.pushdown`);
    the memory applies the rest of a filter (`EpisodeFilter.where`: reward, pass rate,
    timestamp, ``$or``, ...) to the candidates a store returns. A store that says
    ``filters_every_field(namespace)`` is given the whole filter for that namespace
    instead. `ChromaEpisodeStore` implements it.
    """

    def filters_every_field(self, namespace: str) -> bool:
        """Whether ``search_hits`` in ``namespace`` applies a whole `EpisodeFilter`."""
