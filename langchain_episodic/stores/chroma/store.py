"""The long-term tier in ChromaDB: embedded on disk, in memory, or on a Chroma server.

Layout in Chroma:

* One collection per namespace, in cosine space. The ``"default"`` namespace uses
  ``collection_name`` itself; another namespace ``ns`` uses
  ``f"{collection_name}-{slug(ns)}-{digest(ns)}"``. A collection per namespace, not a
  ``where`` filter on a shared one, because a filtered Chroma query costs about 20x
  an unfiltered one (measured: 57 ms vs 3 ms over 20k records).
* One record per episode: id = ``episode_id``, document = the task description,
  embedding = the vector the caller computed (Chroma's own embedding function is
  never attached, so it can never download a model), metadata = the flat fields used
  for filtering plus ``episode``, the full episode as JSON, so it round-trips exactly.
* ``seq``, an integer per record in recording order, lets the store read the latest
  records and stream all of them in pages without loading the collection.
* The collection's metadata holds a small summary the caller keeps (counts per
  category) as one JSON value, so nothing has to scan the collection on open.
* The namespace's journal (credit: which runs were shown which episodes, and their
  outcomes) lives in a second collection, ``f"{collection}-journal"``, created on its
  first entry: one record per entry, its id the entry's, so concurrent writers never
  lose one and Chroma keeps the first record under an id. Kept apart so that it
  costs a recall query nothing. Chroma needs a vector per record: each gets the same
  one-dimensional vector, never searched.
"""

from __future__ import annotations

import functools
import hashlib
import os
import re
import uuid
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import AbstractContextManager
from typing import TYPE_CHECKING, Any, TypeVar

import chromadb
import chromadb.errors
import numpy as np
from numpy.typing import NDArray

from langchain_episodic._finalizing import finalize_elsewhere
from langchain_episodic._validation import check_int, check_number
from langchain_episodic.errors import (
    EpisodicValueError,
    MalformedRecordWarning,
    StoreConfigurationError,
    StoreReadOnlyError,
)
from langchain_episodic.model.episode import Episode
from langchain_episodic.model.erasure import TOMBSTONE_RUN
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.stores._audit import RecordAudit
from langchain_episodic.stores.base import DEFAULT_NAMESPACE, JournalEntry, StoredHit
from langchain_episodic.stores.chroma.folder import (
    HOLDS_A_MEMORY,
    check_path,
    client_share,
    close_embedded,
    descriptor_limit,
    folder_failure,
    index_the_folder,
    lock_folder,
    mark_as_holding_a_memory,
    prepare_folder,
    read_only_when_full,
    refuse_a_lost_database,
    refused_when_read_only,
    reports_folder_failures,
)
from langchain_episodic.stores.chroma.hits import forget_hits, hit_cache, query_hits
from langchain_episodic.stores.chroma.journal_head import JournalHeads
from langchain_episodic.stores.chroma.open_namespaces import (
    OpenNamespaces,
    give_memory_back,
    open_namespace_cap,
)
from langchain_episodic.stores.chroma.records import (
    EPISODE_KEY,
    episode_metadata,
    episode_rows,
    filter_keys,
    journal_entries,
    metadata_by_id,
    seq_rows,
    where_clause,
)
from langchain_episodic.stores.chroma.scrub import (
    close_client,
    deleted_since_scrub,
    note_deleting,
    pending_status,
    scrub_folder,
    scrub_pending,
    scrubbed_sentence,
    sqlite_folder,
    unreachable_files,
)
from langchain_episodic.stores.codec import decode_episodes

if TYPE_CHECKING:
    from chromadb.api import ClientAPI
    from chromadb.api.models.Collection import Collection
    from chromadb.api.types import GetResult

    from langchain_episodic.stores.chroma._path_lock import PathLock

__all__ = ["DEFAULT_NAMESPACE", "HOLDS_A_MEMORY", "ChromaEpisodeStore", "StoredHit"]

SCHEMA_VERSION = 1

_NAMESPACE_KEY = "langchain_episodic:namespace"
_SCHEMA_KEY = "langchain_episodic:schema"
# The memory's state strings live in the collection metadata under this prefix. Few and
# packed: Chroma reads a collection's metadata on every query, so each extra key costs
# every recall (27 flat keys made a query ~30% slower, measured).
_STATE_PREFIX = "langchain_episodic:"
_JOURNAL_OF_KEY = "langchain_episodic:journal_of"
_JOURNAL_SUFFIX = "-journal"
_CHECKPOINT_KEY = "langchain_episodic:checkpoint"
_FILTER_KEYS_STATE, _FILTER_KEYS_DONE = "filter_keys", "1"
_READ_WHOLE_BELOW = 1_000  # records: below, the short-term window reads the collection whole
SCRUB_AFTER = 1_000
"""Records deleted from a folder since its last scrub that make an erasure scrub at once.

A scrub rewrites the whole database, so it is paid once per batch of deletions (and on
close, and on ``memory.forgetting.compact()``), not on every erasure."""
_UNSAFE_NAME_CHARS = re.compile(r"[^a-zA-Z0-9_-]+")
# Chroma's own rule for collection names, checked here for a clearer message.
_COLLECTION_NAME = re.compile(r"^[a-zA-Z0-9][a-zA-Z0-9._-]{1,510}[a-zA-Z0-9]$")


_Method = TypeVar("_Method", bound=Callable[..., Any])
_T = TypeVar("_T")


def _operation(method: _Method) -> _Method:
    """One store operation: counted for `OpenNamespaces`, Chroma's errors typed."""
    reported = reports_folder_failures(method)

    @functools.wraps(method)
    def wrapper(self: ChromaEpisodeStore, *args: Any, **kwargs: Any) -> Any:
        with self._open.operation():
            return reported(self, *args, **kwargs)

    return wrapper  # type: ignore[return-value]


def _chunks(size: int, total: int) -> Iterator[slice]:
    for start in range(0, total, size):
        yield slice(start, min(start + size, total))


def _pages(collection: Collection, size: int, offset: int = 0, **query: Any) -> Iterator[GetResult]:
    """A Chroma ``get`` of records' metadata, one page of ``size`` at a time, to the end."""
    while True:
        got = collection.get(limit=size, offset=offset, include=["metadatas"], **query)
        yield got
        offset += len(got["ids"])
        if len(got["ids"]) < size:
            return


def _namespace_suffix(namespace: str) -> str:
    # What a namespace adds to the collection_name to name its collection.
    if namespace == DEFAULT_NAMESPACE:
        return ""
    slug = _UNSAFE_NAME_CHARS.sub("_", namespace).strip("_-")[:40] or "ns"
    digest = hashlib.sha256(namespace.encode("utf-8")).hexdigest()[:12]
    return f"-{slug}-{digest}"


class ChromaEpisodeStore:
    """Episodes stored in ChromaDB: on disk, in memory, or on a Chroma server.

    Setup:
        ```bash
        pip install langchain-episodic
        ```

    Instantiate:
        ```python
        from langchain_episodic import ChromaEpisodeStore

        on_disk = ChromaEpisodeStore(path="./episodic-memory")   # PersistentClient
        in_memory = ChromaEpisodeStore()                         # EphemeralClient

        import chromadb
        remote = ChromaEpisodeStore(client=chromadb.HttpClient(host="localhost", port=8000))
        ```

    Most users never call the store directly: hand it to
    `EpisodicMemory`, which embeds, validates and ranks.

    Args:
        path: Folder for an embedded, persistent Chroma database.
        client: Any chromadb client (``HttpClient``, ``PersistentClient``, ...).
            Give ``path`` or ``client``, not both. With neither, the store lives in
            process memory and is private to this object (its collections get a
            unique suffix); pass ``client=chromadb.EphemeralClient()`` to share one.
        collection_name: Name of the default namespace's collection, and the prefix
            of the other namespaces' collections.
        max_batch_size: Records per Chroma call; defaults to the client's
            ``get_max_batch_size()``.
        lock_timeout: Seconds to wait when another process holds ``path``.
        max_open_namespaces: With ``path``: namespaces whose vector indexes the store
            keeps loaded at most; opening one more first closes them all (a fresh
            Chroma client), and a namespace used again loads from disk. Defaults to
            100, fewer where the file-descriptor limit is low
            (`open_namespace_cap`).
            Ignored with ``client``, whose owner manages it.

    Raises:
        EpisodicValueError: An argument is not a usable value, e.g. ``path=''`` or
            ``path=123``.
        StoreConfigurationError: ``path`` is a file, or a folder that cannot be
            created or locked (e.g. no permission; the lock path is a folder).
        StoreDamagedError: A file of the folder is damaged (named); see below.
        StoreLockedError: Another process holds ``path`` after ``lock_timeout``.

    Before Chroma reads a folder, the first store on it in a process checks its files
    as ``verify`` does, cheaply (headers against sizes, graph links, the metadata
    pickle; files unchanged since last found sound are not read again): a damaged
    vector index would otherwise crash the process. A damaged file, found then or by
    Chroma later, raises `StoreDamagedError` naming
    it; Chroma's own internal errors never reach the caller.

    A folder this process cannot write (a read-only mount, no permission) opens
    read-only: reads work (from a private copy, as Chroma writes when it opens a
    folder), and each write raises
    `StoreReadOnlyError` naming it.

    With ``path``, the store holds an exclusive lock on the folder until `close`
    (or ``with``, or its last reference going away; a store only the cyclic garbage
    collector frees releases it shortly after, on a worker thread): Chroma's embedded
    mode is not safe for writers in several processes, so another process gets a
    `StoreLockedError` naming the holder's pid. Several processes share a Chroma
    server instead (``client=chromadb.HttpClient(...)``).

    Stores opened on one folder in one process (a re-run notebook cell, however the
    path is spelled) share the lock, one Chroma client system and the record numbering,
    so records written through any of them are numbered once, in order, and
    `verify` stays clean. Sharing rather than refusing the second store, because
    a refusal would break the re-run cell while the old store waits for garbage
    collection. The shared state lives as long as the lock: the last store to close
    drops it. Stores given the same ``client`` object share the numbering too.
    """

    concurrent_adds = True
    """Batches may come from several threads at once: `add` takes its numbers
    under the shared lock and writes without it (see
    `EpisodeStore`)."""

    def __init__(
        self,
        path: str | os.PathLike[str] | None = None,
        client: ClientAPI | None = None,
        collection_name: str = "episodes",
        *,
        max_batch_size: int | None = None,
        lock_timeout: float = 0,
        max_open_namespaces: int | None = None,
    ) -> None:
        if path is not None and client is not None:
            shown = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path
            msg = f"path={shown!r} and client={client!r} were both given: pass one"
            raise EpisodicValueError(msg)
        folder = None if path is None else check_path(path)
        if not isinstance(collection_name, str) or not _COLLECTION_NAME.match(collection_name):
            msg = (
                f"collection_name={collection_name!r} is invalid: Chroma needs 3-512 "
                "characters from [a-zA-Z0-9._-], starting and ending with a letter or digit"
            )
            raise EpisodicValueError(msg)
        if max_batch_size is not None:
            check_int("max_batch_size", max_batch_size, 1)
        check_number("lock_timeout", lock_timeout, 0)
        cap = open_namespace_cap(max_open_namespaces, descriptor_limit())
        private = path is None and client is None
        # Taken before Chroma opens the folder; released by close() or collection.
        lock = None if folder is None else lock_folder(folder, lock_timeout)
        try:
            if folder is not None and lock is not None:
                refuse_a_lost_database(folder)
                prepare_folder(folder, lock)  # checks its files, copies a read-only one
            if client is None:
                client = _own_client(folder, lock)
            if folder is not None and lock is not None and lock.share.read_only is None:
                mark_as_holding_a_memory(folder)
                if lock.first:
                    index_the_folder(folder)
        except BaseException as error:
            if lock is not None:  # Chroma could not open the folder: do not keep it locked
                lock.release()
            translated = folder_failure(folder, error)
            if translated is not None:
                raise translated from error
            raise
        # Folders erased from (shared by the stores on one folder): scrubbed again on close.
        self._erased_in: list[str] = lock.share.erased_in if lock is not None else []
        if folder and lock and lock.share.read_only is None and scrub_pending(folder):
            # A process stopped between an erasure and its scrub: this close finishes it.
            self._scrub_on_close(folder)
        # The client in use: a store on a path replaces it to close idle namespaces.
        self._clients = [client]
        self._release_lock = (
            None
            if lock is None
            else finalize_elsewhere(
                self, close_embedded, self._clients, lock.release, self._erased_in
            )
        )
        self._lock = lock
        self._client = client
        # Weak: the store must stay free of reference cycles (dropping it releases the lock).
        self._open = OpenNamespaces(
            cap,
            reopen=_weakly(self._reopen_client, None),
            may_reopen=_weakly(self._may_reopen, False),
        )
        self._path = folder
        # Why the folder cannot be written (then every write is refused), or None.
        self._read_only = lock.share.read_only if lock is not None else None
        # Ephemeral clients in one process share one in-memory system, so a store made
        # with neither path nor client keeps its collections apart under a unique prefix.
        self._collection_name = (
            f"{collection_name}-{uuid.uuid4().hex[:16]}" if private else collection_name
        )
        self._batch_size = max_batch_size
        self._collections: dict[str, Collection] = {}
        self._journals: dict[str, Collection] = {}
        self._every_field: set[str] = set()  # namespaces whose records carry every key
        # The journals' heads (embedded folders only): see chroma_journal_head.
        self._heads = JournalHeads(folder, writable=self._read_only is None)
        # Record numbering (and the lock around it) shared by every store on the folder
        # in this process, or on the same client object; see the class docstring.
        self._share = lock.share if lock is not None else client_share(client)

    def __repr__(self) -> str:
        where = f"path={self._path!r}" if self._path else f"client={type(self._client).__name__}"
        return f"ChromaEpisodeStore({where}, collection_name={self._collection_name!r})"

    def close(self) -> None:
        """Close the embedded client and release the lock on ``path``; idempotent.

        Another process may then open the folder, and a store opened later in this
        process reads it afresh from disk. The store must not be used afterwards. A
        store given a ``client`` holds no lock and closes nothing.
        """
        if self._release_lock is not None:
            self._release_lock()

    def __enter__(self) -> ChromaEpisodeStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @property
    def client(self) -> ClientAPI:
        """The chromadb client in use.

        A store on a ``path`` starts a fresh client when it closes idle namespaces
        (``max_open_namespaces``): read this property again rather than keep the client.
        """
        return self._client

    @property
    def open_namespaces(self) -> OpenNamespaces:
        """The namespaces whose indexes the client holds, the cap, and the reopens so far."""
        return self._open

    def _may_reopen(self) -> bool:
        # Only a client this store owns alone: other stores on the folder in this
        # process share Chroma's system, which stops only when every client closes.
        return (
            self._lock is not None and self._release_lock is not None and (self._lock.holders == 1)
        )

    def _reopen_client(self) -> None:
        """Close the client (Chroma drops every loaded index and its files), start anew."""
        assert self._lock is not None
        self._collections.clear()
        self._journals.clear()
        close_client(self._client)
        give_memory_back()
        self._client = chromadb.PersistentClient(path=self._lock.share.chroma_path)
        self._clients[0] = self._client

    @property
    def collection_name(self) -> str:
        """Name of the default namespace's collection."""
        return self._collection_name

    @property
    def batch_size(self) -> int:
        """Records per Chroma call, at most the client's own limit."""
        if self._batch_size is None:
            self._batch_size = int(self._client.get_max_batch_size())
        return self._batch_size

    def collection_name_for(self, namespace: str) -> str:
        """The Chroma collection that holds ``namespace``."""
        return self._collection_name + _namespace_suffix(namespace)

    @_operation
    def collection(self, namespace: str) -> Collection:
        """The namespace's collection, created in cosine space on first use.

        Raises:
            StoreConfigurationError: The collection exists but is not in cosine space,
                or belongs to another namespace.
        """
        cached = self._collections.get(namespace)
        if cached is not None:
            return cached
        self._open.admit(namespace)
        name = self.collection_name_for(namespace)
        if self._read_only is not None and all(
            name != listed.name for listed in self._client.list_collections()
        ):
            operation = f"create namespace={namespace!r}"
            raise StoreReadOnlyError(str(self._path), operation, self._read_only)
        collection = self._client.get_or_create_collection(
            name,
            configuration={"hnsw": {"space": "cosine"}},
            metadata={_NAMESPACE_KEY: namespace, _SCHEMA_KEY: SCHEMA_VERSION},
            embedding_function=None,
        )
        self._check_collection(collection, namespace)
        self._collections[namespace] = collection
        return collection

    @staticmethod
    def _check_collection(collection: Collection, namespace: str) -> None:
        configuration: Mapping[str, Any] = collection.configuration or {}
        hnsw = configuration.get("hnsw") or {}
        metadata = collection.metadata or {}
        space = hnsw.get("space") or metadata.get("hnsw:space") or "l2"
        if space != "cosine":
            msg = (
                f"collection {collection.name!r} uses distance space={space!r}; episodes need "
                "'cosine' (similarity = 1 - distance). Use another collection_name."
            )
            raise StoreConfigurationError(msg)
        owner = metadata.get(_NAMESPACE_KEY, namespace)
        if owner != namespace:
            msg = (
                f"collection {collection.name!r} holds namespace={owner!r}, "
                f"not namespace={namespace!r}"
            )
            raise StoreConfigurationError(msg)

    @_operation
    def namespaces(self) -> tuple[str, ...]:
        """Namespaces that have a collection under this store's ``collection_name``."""
        return self.collection_names().get(self._collection_name, ())

    @_operation
    def collection_names(self) -> dict[str, tuple[str, ...]]:
        """Every ``collection_name`` with namespaces at this client, with their namespaces.

        One ``list_collections`` call, as `namespaces`; for telling a user who
        mistyped ``collection_name=`` what is there. Sorted by name.
        """
        found: dict[str, list[str]] = {}
        for collection in self._client.list_collections():
            namespace = (collection.metadata or {}).get(_NAMESPACE_KEY)
            if not isinstance(namespace, str):
                continue
            suffix = _namespace_suffix(namespace)
            if collection.name.endswith(suffix) and len(collection.name) > len(suffix):
                prefix = collection.name[: len(collection.name) - len(suffix)]
                found.setdefault(prefix, []).append(namespace)
        return {name: tuple(sorted(found[name])) for name in sorted(found)}

    @_operation
    def count(self, namespace: str) -> int:
        """Number of episodes stored in ``namespace`` (one Chroma round trip)."""
        return int(self.collection(namespace).count())

    @_operation
    def get(self, namespace: str, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id; missing ids are left out."""
        collection = self.collection(namespace)
        found: dict[str, Episode] = {}
        for part in _chunks(self.batch_size, len(episode_ids)):
            got = collection.get(ids=list(episode_ids[part]), include=["metadatas"])
            found.update(decode_episodes(episode_rows(metadata_by_id(got))))
        return found

    @_operation
    @refused_when_read_only("record episodes")
    def add(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        embeddings: NDArray[np.float32],
        first_seq: int,
    ) -> None:
        """Write new episodes with their vectors, numbered from ``first_seq`` on.

        Takes what `EpisodeStore` says the memory
        guarantees, unchecked. Writes go in batches of at most `batch_size`
        records. Memories sharing this store, or another store on the same folder or
        client in this process, never repeat a number: it counts on from the last one
        given when that is ahead of ``first_seq``. Batches may be added at once from
        several threads (`concurrent_adds`): each takes its numbers first, then
        writes without a lock; a batch that fails gives back the numbers it did not
        use, and the next batches take those first (see ``stores/_numbering.py``).
        """
        # No check for ids stored since the memory's get (another thread's memory, or
        # another process on the same server): Chroma ignores an id it already holds
        # and keeps the first record.
        collection = self.collection(namespace)
        share = self._share
        with share.add_lock:
            numbers = share.numbers[collection.name]
            seqs = numbers.take(first_seq, len(episodes))
        written = 0
        try:
            for part in _chunks(self.batch_size, len(episodes)):
                batch = episodes[part]
                collection.add(
                    ids=[episode.episode_id for episode in batch],
                    embeddings=embeddings[part],
                    documents=[episode.task.description for episode in batch],
                    metadatas=[
                        episode_metadata(episode, seq)
                        for episode, seq in zip(batch, seqs[part], strict=True)
                    ],
                )
                written = part.stop
        except BaseException:
            with share.add_lock:
                numbers.give_back(seqs[written:])
            raise

    @_operation
    def search_hits(
        self,
        namespace: str,
        embedding: NDArray[np.float32],
        k: int,
        filters: EpisodeFilter | None = None,
        *,
        query_text: str | None = None,
    ) -> list[StoredHit]:
        """The ``k`` records nearest to ``embedding``, most similar first, unparsed.

        Similarity is ``1 - cosine distance``. Each hit carries the fields a ranking
        needs; `StoredHit.episode` parses the full episode only when asked.
        ``query_text`` is ignored: Chroma searches by the vector.
        """
        # Ids and distances from Chroma, the rest from the records' cache: see chroma_hits.
        cache = hit_cache(self._share)
        return query_hits(self.collection(namespace), embedding, k, where_clause(filters), cache)

    def filters_every_field(self, namespace: str) -> bool:
        """Whether every record of ``namespace`` carries each field a filter may name.

        Then `search_hits` applies a whole `EpisodeFilter` (reward, pass rate and
        timestamp too) in Chroma's ``where``. Records written before 0.2 lack those
        three keys: the first time a filter names one, each record is given them from
        its JSON (once per namespace and folder; its state says so). A store opened
        read-only cannot: ``False``, and the memory filters those parts itself.
        """
        if namespace in self._every_field:
            return True
        if self.read_state(namespace, _FILTER_KEYS_STATE) != _FILTER_KEYS_DONE:
            if self._read_only is not None:
                return False
            self._give_filter_keys(namespace)
            self.write_state(namespace, _FILTER_KEYS_STATE, _FILTER_KEYS_DONE)
        self._every_field.add(namespace)
        return True

    @_operation
    def _give_filter_keys(self, namespace: str) -> None:
        """Give each record of ``namespace`` that lacks them the numeric filter keys."""
        collection = self.collection(namespace)
        # Read first, write after: an update must not move a page's offset.
        missing = [
            (record_id, keys)
            for got in _pages(collection, self.batch_size)
            for record_id, metadata in metadata_by_id(got).items()
            if (keys := filter_keys(metadata)) is not None
        ]
        for part in _chunks(self.batch_size, len(missing)):
            batch = missing[part]
            # Chroma merges what an update gives into the record's metadata.
            collection.update(
                ids=[record_id for record_id, _ in batch],
                metadatas=[keys for _, keys in batch],
            )

    @_operation
    def _get_seq_range(self, namespace: str, start: int, stop: int) -> list[tuple[int, Episode]]:
        got = self.collection(namespace).get(
            where={"$and": [{"seq": {"$gte": start}}, {"seq": {"$lt": stop}}]},
            include=["metadatas"],
        )
        return seq_rows(metadata_by_id(got), start, stop)

    @_operation
    def latest(self, namespace: str, n: int, total: int) -> list[Episode]:
        """The last ``n`` recorded episodes of ``total``, oldest first."""
        if n <= 0 or total <= 0:
            return []
        fetch = functools.partial(self._get_seq_range, namespace)
        if total <= _READ_WHOLE_BELOW:
            # Chroma answers a filter on seq from the metadata of every collection in
            # the folder: with thousands of namespaces (one per user) that is most of
            # an open. A small collection is read whole once instead, and filtered here.
            records = metadata_by_id(self.collection(namespace).get(include=["metadatas"]))
            fetch = functools.partial(seq_rows, records)
        # With one writer the last n seq values hold the last n records. Several writer
        # processes repeat seq values and leave the top ones empty: widen until found.
        window = n
        while True:
            rows = fetch(max(0, total - window), total)
            if len(rows) >= n or window >= total:
                return [episode for _, episode in rows[-n:]]
            window *= 2

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        """Episodes of ``namespace`` in recording order from the ``start``-th on, in pages."""
        check_int("page_size", page_size, 1)
        while True:
            rows = self._get_seq_range(namespace, start, start + page_size)
            for _, episode in rows:
                yield episode
            start += page_size
            # Deletion and several writers leave gaps in the numbers: an empty page ends
            # the records only when none is numbered beyond it (one probe, at empty pages).
            if not rows and not self._numbered_from(namespace, start):
                return

    @_operation
    def _numbered_from(self, namespace: str, start: int) -> bool:
        """Whether any record of ``namespace`` has a ``seq`` of ``start`` or more."""
        got = self.collection(namespace).get(where={"seq": {"$gte": start}}, limit=1, include=[])
        return bool(got["ids"])

    @_operation
    def read_state(self, namespace: str, key: str) -> str | None:
        """A string the memory saved with `write_state`, read afresh from Chroma."""
        value = self._fresh_metadata(self.collection(namespace).name).get(_STATE_PREFIX + key)
        return value if isinstance(value, str) else None

    @_operation
    @refused_when_read_only("save the memory's state")
    def write_state(self, namespace: str, key: str, value: str) -> None:
        """Save a string in the namespace's collection metadata, replacing the old one.

        Chroma replaces a collection's metadata as a whole, so the other keys are read
        afresh first: a store opened earlier must not undo what another wrote since.
        """
        collection = self.collection(namespace)
        metadata = self._fresh_metadata(collection.name)
        metadata[_STATE_PREFIX + key] = value
        collection.modify(metadata=metadata)

    def _fresh_metadata(self, name: str) -> dict[str, Any]:
        # The cached Collection holds its metadata as it was when it was fetched.
        return dict(self._client.get_collection(name, embedding_function=None).metadata or {})

    def _journal(self, namespace: str, *, create: bool) -> Collection | None:
        cached = self._journals.get(namespace)
        if cached is not None:
            return cached
        self._open.admit(namespace)
        name = self.collection_name_for(namespace) + _JOURNAL_SUFFIX
        if create:
            journal = self._client.get_or_create_collection(
                name, metadata={_JOURNAL_OF_KEY: namespace}, embedding_function=None
            )
        else:
            try:
                journal = self._client.get_collection(name, embedding_function=None)
            except Exception:  # chromadb raises NotFoundError, ValueError by version
                return None
        owner = (journal.metadata or {}).get(_JOURNAL_OF_KEY)
        if owner != namespace:
            msg = f"collection {name!r} is not the journal of namespace={namespace!r}"
            raise StoreConfigurationError(msg)
        self._journals[namespace] = journal
        return journal

    @_operation
    @refused_when_read_only("write to the journal")
    def append_journal(self, namespace: str, entries: Sequence[JournalEntry]) -> None:
        """Add journal entries, one Chroma record each; Chroma keeps the first under an id."""
        if not entries:
            return
        self.collection(namespace)  # the namespace exists once it has a journal
        journal = self._journal(namespace, create=True)
        assert journal is not None
        with self._heads.writing(journal.name):
            for part in _chunks(self.batch_size, len(entries)):
                batch = entries[part]
                journal.add(
                    ids=[entry.entry_id for entry in batch],
                    embeddings=np.ones((len(batch), 1), dtype=np.float32),
                    metadatas=[{"run": entry.run_id, "entry": entry.payload} for entry in batch],
                )

    @_operation
    def read_journal(self, namespace: str, run_id: str | None = None) -> list[JournalEntry]:
        """The namespace's journal entries, of one run when ``run_id`` is given."""
        return self._read_journal(namespace, 0, None if run_id is None else {"run": run_id})

    @_operation
    def read_journal_from(self, namespace: str, start: int) -> list[JournalEntry]:
        """The entries from position ``start`` on, in the order Chroma first stored them.

        Chroma pages an unfiltered ``get`` in insertion order, and keeps an id's first
        record where it was: positions never move.
        """
        return self._read_journal(namespace, max(start, 0), None)

    def _read_journal(
        self, namespace: str, start: int, where: dict[str, str] | None
    ) -> list[JournalEntry]:
        journal = self._journal(namespace, create=False)
        if journal is None:
            return []
        pages = _pages(journal, self.batch_size, start, where=where)
        return [entry for got in pages for entry in journal_entries(got)]

    @_operation
    def read_journal_ids(self, namespace: str, entry_ids: Sequence[str]) -> list[JournalEntry]:
        """The stored entries under ``entry_ids`` (those that exist): a read by key."""
        journal = self._journal(namespace, create=False)
        wanted = list(dict.fromkeys(entry_ids))
        if journal is None or not wanted:
            return []
        return [
            entry
            for part in _chunks(self.batch_size, len(wanted))
            for entry in journal_entries(journal.get(ids=wanted[part], include=["metadatas"]))
        ]

    @_operation
    def journal_size(self, namespace: str) -> int:
        """How many entries the namespace's journal holds (a count, not a read)."""
        journal = self._journal(namespace, create=False)
        return 0 if journal is None else journal.count()

    def journal_writes(self, namespace: str) -> AbstractContextManager[None]:
        """Several writes of the namespace's journal under one head update (see the base)."""
        return self._heads.writing(self.collection_name_for(namespace) + _JOURNAL_SUFFIX)

    @_operation
    def journal_head(self, namespace: str) -> str | None:
        """A token that changes with every write of the journal; ``None``: it cannot vouch.

        Read from a small file in an embedded folder, never from the journal itself
        (`chroma_journal_head`); ``None`` on a server.
        """
        name = self.collection_name_for(namespace) + _JOURNAL_SUFFIX
        return self._heads.read(name, lambda: self._journal(namespace, create=False) is not None)

    @_operation
    def read_checkpoint(self, namespace: str) -> str | None:
        """The journal checkpoint, kept in the journal collection's metadata, read afresh."""
        journal = self._journal(namespace, create=False)
        if journal is None:
            return None
        value = self._fresh_metadata(journal.name).get(_CHECKPOINT_KEY)
        return value if isinstance(value, str) else None

    @_operation
    @refused_when_read_only("write the journal checkpoint")
    def write_checkpoint(self, namespace: str, value: str) -> None:
        """Replace the checkpoint: one metadata update of the journal collection (atomic)."""
        self.collection(namespace)
        journal = self._journal(namespace, create=True)
        assert journal is not None
        journal.modify(metadata={_JOURNAL_OF_KEY: namespace, _CHECKPOINT_KEY: value})

    @_operation
    @refused_when_read_only("delete episodes")
    def delete(self, namespace: str, episode_ids: Sequence[str]) -> int:
        """Remove the records under ``episode_ids``, with their vectors; how many were there.

        Chroma marks them deleted in its index and removes their rows; the bytes stay
        in its files until the folder is scrubbed (`purge_when_due`).
        """
        self._note_deleting(len(episode_ids))
        collection, cache = self.collection(namespace), hit_cache(self._share)
        forget_hits(cache, collection, episode_ids)
        try:
            return _delete_ids(collection, episode_ids, self.batch_size)
        finally:  # and again: a search that raced the deletion may have read them
            forget_hits(cache, collection, episode_ids)

    @_operation
    @refused_when_read_only("delete journal entries")
    def delete_journal(self, namespace: str, entry_ids: Sequence[str]) -> int:
        """Remove the journal entries under ``entry_ids``; how many were there."""
        journal = self._journal(namespace, create=False)
        if journal is None or not entry_ids:
            return 0
        self._note_deleting(len(entry_ids))
        with self._heads.writing(journal.name):
            return _delete_ids(journal, entry_ids, self.batch_size)

    def _note_deleting(self, count: int) -> None:
        # Marked before Chroma deletes: a process killed after the deletion leaves the
        # mark, and the next store on the folder finishes the scrub.
        folder = sqlite_folder(self._path, self._client)
        if folder is not None and count:
            note_deleting(folder, count)
            self._scrub_on_close(folder)

    def _scrub_on_close(self, folder: str) -> None:
        if folder not in self._erased_in:
            self._erased_in.append(folder)

    @_operation
    @refused_when_read_only("purge deleted records")
    def purge_deleted(self) -> str:
        """Scrub what deletion left in an embedded store's files; say what is guaranteed.

        On a folder (``path=``, or a ``PersistentClient``), in ``chroma.sqlite3``:
        Chroma's write-ahead log (the ``embeddings_queue`` table) keeps every
        record's metadata and document until its vector index is saved, and sqlite
        keeps deleted rows on free pages, as does the full-text index in its
        segments. The log rows of every deleted record are removed, the full-text
        index merged (``optimize``), and the file vacuumed. A server's files are out
        of reach: the sentence says so. Costs time in proportion to the folder: an
        erasure calls `purge_when_due` instead.
        """
        folder = sqlite_folder(self._path, self._client)
        if folder is None:
            return unreachable_files(self._path, self._client)
        scrub_folder(folder)
        self._scrub_on_close(folder)
        return scrubbed_sentence(folder)

    @_operation
    @refused_when_read_only("purge deleted records")
    def purge_when_due(self) -> tuple[bool, str]:
        """Scrub the folder if enough was deleted since its last scrub; else leave it pending.

        At `SCRUB_AFTER` records deleted since the last scrub the folder is
        scrubbed now (`purge_deleted`); below, the scrub waits for `close`,
        ``memory.forgetting.compact()`` or a later erasure, and a process killed
        before then leaves it to the next store opened on the folder. A store given a
        ``client`` (it closes nothing) scrubs at once.

        Returns:
            ``(pending, sentence)``: whether the bytes are still in the files, and
            what the store guarantees (and when), for the erasure's receipt.
        """
        folder = sqlite_folder(self._path, self._client)
        if folder is None:
            return False, unreachable_files(self._path, self._client)
        # A store given a PersistentClient does not close it: it scrubs at once.
        if self._release_lock is None or (deleted_since_scrub(folder) or 0) >= SCRUB_AFTER:
            said = self.purge_deleted()
            return scrub_pending(folder), said
        return self.purge_status()

    def purge_status(self) -> tuple[bool, str]:
        """``(pending, sentence)``: whether deleted records' bytes wait for a scrub, and when.

        ``pending`` is ``True`` while any record deleted from the folder (in any
        namespace) is not yet scrubbed; the sentence says where the bytes are, or
        that they are gone.
        """
        folder = sqlite_folder(self._path, self._client)
        if folder is None:
            return False, unreachable_files(self._path, self._client)
        return pending_status(folder, SCRUB_AFTER)

    @_operation
    def verify(self, namespace: str, page_size: int = 1000) -> list[MalformedRecordWarning]:
        """Every record of ``namespace`` that readers skip or misorder, with the reason.

        Scans the whole collection in pages of ``page_size`` (no filter, no vectors)
        and reports, once per problem: records whose episode JSON is missing, does not
        parse or breaks a rule of the data model (recall, `get` and
        `iter_episodes` skip those with a `MalformedRecordWarning`);
        records whose id differs from their ``episode_id``; and records whose ``seq``
        is missing, repeated or out of range, which ordered reads miss or misplace.
        Nothing is warned and nothing is changed.

        Returns:
            One `MalformedRecordWarning` (``record_id``, ``reason``) per
            finding, in the collection's order; empty when every record is sound.
        """
        check_int("page_size", page_size, 1)
        collection = self.collection(namespace)
        # Erased records leave their numbers given: each left a tombstone.
        audit = RecordAudit(deleted=len(self.read_journal(namespace, TOMBSTONE_RUN)))
        for got in _pages(collection, page_size):
            for record_id, metadata in metadata_by_id(got).items():
                audit.feed(record_id, metadata, EPISODE_KEY)
        return audit.finish()


def _own_client(folder: str | None, lock: PathLock | None) -> ClientAPI:
    """The client a store without a ``client`` opens: on its folder, or in memory."""
    if folder is None or lock is None:
        return chromadb.EphemeralClient()
    # Default settings on purpose: Chroma refuses two clients of one system with
    # different settings, and users create their own clients beside ours. The folder as
    # the first store here spelled it: Chroma keys its system on the string, and two
    # systems on one folder search stale indexes.
    try:
        return chromadb.PersistentClient(path=lock.share.chroma_path)
    except chromadb.errors.ChromaError:
        # A disk too full for Chroma to open: read it from a copy instead.
        if not read_only_when_full(folder, lock):
            raise
        return chromadb.PersistentClient(path=lock.share.chroma_path)


def _weakly(method: Callable[[], _T], dead: _T) -> Callable[[], _T]:
    """``method``, called through a weak reference to its store (``dead`` once gone)."""
    bound = weakref.WeakMethod(method)
    return lambda: dead if (alive := bound()) is None else alive()


def _delete_ids(collection: Collection, ids: Sequence[str], batch_size: int) -> int:
    wanted = list(dict.fromkeys(ids))
    deleted = 0
    for part in _chunks(batch_size, len(wanted)):
        found = collection.get(ids=wanted[part], include=[])["ids"]
        if found:
            collection.delete(ids=list(found))
            deleted += len(found)
    return deleted
