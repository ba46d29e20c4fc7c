"""The long-term tier in process memory: exact cosine search by numpy brute force.

Layout, per namespace:

* a float32 matrix of unit rows (the given vectors, normalised in float64), grown by
  doubling its capacity so that adding ``n`` records costs amortised ``O(n)``, not a
  copy of the whole matrix per call;
* the records in recording order: id, episode JSON (`encode_episode`, the form
  every store keeps) and small integer codes of the fields filters use;
* a dict of the memory's state strings.

Rows are append-only and never change once written, so a search copies nothing: it
takes a view of the rows present under the lock and computes outside it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import Episode, OutcomeStatus, TaskCategory
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.stores.base import JournalEntry, StoredHit, unit_rows
from langchain_episodic.stores.codec import decode_episodes, decode_hits, encode_episode

__all__ = ["InMemoryEpisodeStore"]

_MIN_CAPACITY = 64
_CATEGORY_CODES = {category: code for code, category in enumerate(TaskCategory)}
_OUTCOME_CODES = {outcome: code for code, outcome in enumerate(OutcomeStatus)}


def _top_k(similarities: NDArray[np.float32], k: int) -> NDArray[np.intp]:
    """Positions of the ``k`` largest values, largest first; ties by position, exactly.

    ``argpartition`` alone would pick an arbitrary subset of values tied at the
    boundary, so the boundary value is found first and its earliest holders fill up.
    """
    count = similarities.shape[0]
    if k >= count:
        return np.argsort(-similarities, kind="stable")
    threshold = np.partition(similarities, count - k)[count - k]
    above = np.flatnonzero(similarities > threshold)
    tied = np.flatnonzero(similarities == threshold)[: k - above.size]
    chosen = np.concatenate([above, tied])
    # lexsort: the last key is the primary one; positions break ties.
    order: NDArray[np.intp] = chosen[np.lexsort((chosen, -similarities[chosen]))]
    return order


@dataclass
class _Namespace:
    """One namespace's records, in recording order."""

    vectors: NDArray[np.float32] = field(default_factory=lambda: np.empty((0, 0), dtype=np.float32))
    # Per row, the codes of the fields filters use: category, outcome, strategy.
    codes: NDArray[np.int32] = field(default_factory=lambda: np.empty((0, 3), dtype=np.int32))
    strategy_codes: dict[str, int] = field(default_factory=dict)
    ids: list[str] = field(default_factory=list)
    records: list[str] = field(default_factory=list)
    rows: dict[str, int] = field(default_factory=dict)
    state: dict[str, str] = field(default_factory=dict)
    journal: dict[str, JournalEntry] = field(default_factory=dict)
    journal_runs: dict[str, list[JournalEntry]] = field(default_factory=dict)
    journal_order: list[JournalEntry] = field(default_factory=list)
    checkpoint: str | None = None

    @property
    def size(self) -> int:
        return len(self.ids)

    def reserve(self, needed: int, dimensions: int) -> None:
        if self.size == 0 and self.vectors.shape[1] != dimensions:
            self.vectors = np.empty((0, dimensions), dtype=np.float32)
        if self.vectors.shape[1] != dimensions:
            msg = (
                f"embeddings have {dimensions} dimensions but this namespace holds "
                f"{self.vectors.shape[1]}-dimensional vectors; use one embeddings model "
                "per namespace"
            )
            raise EpisodicValueError(msg)
        capacity = self.vectors.shape[0]
        if needed <= capacity:
            return
        grown = max(needed, 2 * capacity, _MIN_CAPACITY)
        # A new array, never a resize in place: searches may hold views of the old one.
        vectors = np.empty((grown, dimensions), dtype=np.float32)
        vectors[: self.size] = self.vectors[: self.size]
        codes = np.empty((grown, 3), dtype=np.int32)
        codes[: self.size] = self.codes[: self.size]
        self.vectors, self.codes = vectors, codes

    def codes_of(self, episode: Episode) -> tuple[int, int, int]:
        strategy = self.strategy_codes.setdefault(episode.strategy_used, len(self.strategy_codes))
        return _CATEGORY_CODES[episode.task.category], _OUTCOME_CODES[episode.outcome], strategy

    def mask(self, filters: EpisodeFilter, size: int) -> NDArray[np.bool_] | None:
        """Rows (of the first ``size``) that pass ``filters``; ``None`` when all do.

        The same rule as `EpisodeFilter.matches`, on integer codes.
        """
        if filters.is_empty:
            return None
        keep = np.ones(size, dtype=np.bool_)
        if filters.categories is not None:
            keep &= np.isin(self.codes[:size, 0], [_CATEGORY_CODES[c] for c in filters.categories])
        if filters.outcomes is not None:
            keep &= np.isin(self.codes[:size, 1], [_OUTCOME_CODES[o] for o in filters.outcomes])
        if filters.strategies is not None:
            wanted = [
                self.strategy_codes[s] for s in filters.strategies if s in self.strategy_codes
            ]
            keep &= np.isin(self.codes[:size, 2], wanted)
        return keep


class InMemoryEpisodeStore:
    """Episodes in process memory, searched exactly by numpy brute force.

    For tests, notebooks, short-lived agents and namespaces of up to a few hundred
    thousand episodes, with no database at all. Search is exact: every record of the
    namespace is scored, filters are applied first and the ``k`` best are taken
    after, so recall never misses a neighbour the way an approximate index (HNSW)
    can. Cost per search is one matrix-vector product over the namespace.

    Setup:
        Nothing to install beyond ``langchain-episodic`` (only numpy is used).

    Instantiate:
        ```python
        from langchain_episodic import EpisodicMemory
        from langchain_episodic.stores import InMemoryEpisodeStore

        store = InMemoryEpisodeStore()
        memory = EpisodicMemory(store=store)
        ```

    Search:
        ```python
        import numpy as np

        hits = store.search_hits("default", np.ones(384, dtype=np.float32), k=3)
        for hit in hits:
            print(hit.episode_id, round(hit.similarity, 3))
        ```

    Not persistent: everything is lost when the object is. For episodes that outlive
    the process use `ChromaEpisodeStore` (or a
    `VectorStoreEpisodeStore` over a persistent store).

    Similarity: each vector is scaled to unit length in float64 and stored as float32;
    a search scales the query the same way and takes the float32 dot product (the
    precision Chroma and FAISS use), so similarities agree with a float64 cosine to
    about 1e-6. Equal similarities are ordered by recording order.

    Thread-safe: one lock guards every read and write, and a search computes on a
    snapshot of the rows present when it started, so several threads may record
    and recall at once. Records are numbered by the store under that lock, in the
    order writes arrive (``first_seq + i`` when one writer at a time), so concurrent
    writers never share a number. An id already stored when `add` takes the
    lock keeps its first record (as in Chroma); the memory has already told an
    identical re-record from a conflicting one.
    """

    concurrent_adds = True
    """Batches may come from several threads at once: `add` numbers and writes
    under the store's lock (see `EpisodeStore`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._namespaces: dict[str, _Namespace] = {}

    def __repr__(self) -> str:
        with self._lock:
            sizes = {name: space.size for name, space in self._namespaces.items()}
        return f"InMemoryEpisodeStore(namespaces={sizes!r})"

    def _space(self, namespace: str) -> _Namespace:
        # Caller holds the lock. Any use opens the namespace, as Chroma's store does.
        space = self._namespaces.get(namespace)
        if space is None:
            space = self._namespaces[namespace] = _Namespace()
        return space

    def namespaces(self) -> tuple[str, ...]:
        """Every namespace that holds a record or was opened, sorted."""
        with self._lock:
            return tuple(sorted(self._namespaces))

    def count(self, namespace: str) -> int:
        """Number of episodes stored in ``namespace``."""
        with self._lock:
            return self._space(namespace).size

    def get(self, namespace: str, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id; missing ids are left out."""
        with self._lock:
            space = self._space(namespace)
            raw = {i: space.records[space.rows[i]] for i in episode_ids if i in space.rows}
        return dict(decode_episodes(raw.items()))

    def add(
        self,
        namespace: str,
        episodes: Sequence[Episode],
        embeddings: NDArray[np.float32],
        first_seq: int,
    ) -> None:
        """Write new episodes with their vectors, in order, after those already stored.

        Takes what `EpisodeStore` says the memory
        guarantees, unchecked. ``first_seq`` is the caller's count; the store numbers
        records itself under its lock, which gives the same numbers when one writer at
        a time adds.

        Raises:
            EpisodicValueError: The vectors' length differs from the namespace's.
        """
        vectors = unit_rows(embeddings).astype(np.float32)
        encoded = [encode_episode(episode) for episode in episodes]
        with self._lock:
            space = self._space(namespace)
            # Not validation but the one concurrency guard: memories sharing this store
            # (threads) may each have found an id missing before either wrote it. The
            # first record under an id is kept, as Chroma keeps it; a second row would
            # make the id count, list and search twice.
            keep = [i for i, episode in enumerate(episodes) if episode.episode_id not in space.rows]
            if not keep:
                return
            start = space.size
            space.reserve(start + len(keep), vectors.shape[1])
            stop = start + len(keep)
            space.vectors[start:stop] = vectors[keep]
            space.codes[start:stop] = [space.codes_of(episodes[index]) for index in keep]
            for row, index in enumerate(keep, start):
                space.rows[episodes[index].episode_id] = row
                space.ids.append(episodes[index].episode_id)
                space.records.append(encoded[index])

    def search_hits(
        self,
        namespace: str,
        embedding: NDArray[np.float32],
        k: int,
        filters: EpisodeFilter | None = None,
        *,
        query_text: str | None = None,
    ) -> list[StoredHit]:
        """The ``k`` records nearest to ``embedding`` by exact cosine, most similar first.

        Filters are applied before the ``k`` best are taken, so the result holds
        ``min(k, matching records)`` hits. Equal similarities keep recording order.
        ``query_text`` is ignored: the store searches by the vector.

        Raises:
            EpisodicValueError: ``k`` is below 1, or the query's length differs from
                the namespace's vectors'.
        """
        check_int("k", k, 1)
        query = unit_rows(embedding.reshape(-1)).astype(np.float32)
        with self._lock:
            space = self._space(namespace)
            size = space.size
            vectors = space.vectors[:size]  # a view: later adds never write its rows
            mask = None if filters is None else space.mask(filters, size)
            # Append-only lists: rows below ``size`` stay as they are, no copy needed.
            ids, records = space.ids, space.records
        if size == 0:
            return []
        if vectors.shape[1] != query.shape[0]:
            msg = (
                f"embedding has {query.shape[0]} dimensions but namespace={namespace!r} "
                f"holds {vectors.shape[1]}-dimensional vectors"
            )
            raise EpisodicValueError(msg)
        similarities = vectors @ query
        if mask is None:
            chosen = _top_k(similarities, k)
        else:
            rows = np.flatnonzero(mask)
            chosen = rows[_top_k(similarities[rows], k)]
        nearest = (
            (ids[row], records[row], min(1.0, max(-1.0, float(similarities[row]))))
            for row in chosen
        )
        return list(decode_hits(nearest))

    def latest(self, namespace: str, n: int, total: int) -> list[Episode]:
        """The last ``n`` of the first ``total`` records in recording order, oldest first."""
        if n <= 0 or total <= 0:
            return []
        with self._lock:
            space = self._space(namespace)
            stop = min(total, space.size)
            rows = range(max(0, stop - n), stop)
            raw = [(space.ids[row], space.records[row]) for row in rows]
        return [episode for _, episode in decode_episodes(raw)]

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        """Episodes in recording order from the ``start``-th on, copied out in pages."""
        check_int("page_size", page_size, 1)
        while True:
            with self._lock:
                space, stop = self._space(namespace), start + page_size
                raw = list(zip(space.ids[start:stop], space.records[start:stop], strict=True))
            if not raw:
                return
            for _, episode in decode_episodes(raw):
                yield episode
            start += len(raw)

    def read_state(self, namespace: str, key: str) -> str | None:
        """A string saved with `write_state`, or ``None``."""
        with self._lock:
            return self._space(namespace).state.get(key)

    def write_state(self, namespace: str, key: str, value: str) -> None:
        """Save a string for ``namespace`` under ``key``, replacing the old one."""
        with self._lock:
            self._space(namespace).state[key] = value

    def append_journal(self, namespace: str, entries: Sequence[JournalEntry]) -> None:
        """Add journal entries; an id already stored keeps its first entry."""
        with self._lock:
            space = self._space(namespace)
            for entry in entries:
                if entry.entry_id not in space.journal:
                    space.journal[entry.entry_id] = entry
                    space.journal_runs.setdefault(entry.run_id, []).append(entry)
                    space.journal_order.append(entry)

    def read_journal(self, namespace: str, run_id: str | None = None) -> list[JournalEntry]:
        """The namespace's journal entries, of one run when ``run_id`` is given."""
        with self._lock:
            space = self._space(namespace)
            if run_id is None:
                return list(space.journal.values())
            return list(space.journal_runs.get(run_id, ()))

    def read_journal_from(self, namespace: str, start: int) -> list[JournalEntry]:
        """The entries from position ``start`` on, in the order they were first stored."""
        with self._lock:
            return self._space(namespace).journal_order[max(start, 0) :]

    def read_journal_ids(self, namespace: str, entry_ids: Sequence[str]) -> list[JournalEntry]:
        """The stored entries under ``entry_ids`` (those that exist)."""
        with self._lock:
            journal = self._space(namespace).journal
            return [journal[i] for i in dict.fromkeys(entry_ids) if i in journal]

    def journal_size(self, namespace: str) -> int:
        """How many entries the namespace's journal holds."""
        with self._lock:
            return len(self._space(namespace).journal_order)

    def read_checkpoint(self, namespace: str) -> str | None:
        """The journal checkpoint last written, or ``None``."""
        with self._lock:
            return self._space(namespace).checkpoint

    def write_checkpoint(self, namespace: str, value: str) -> None:
        """Replace the journal checkpoint."""
        with self._lock:
            self._space(namespace).checkpoint = value

    def delete(self, namespace: str, episode_ids: Sequence[str]) -> int:
        """Remove the records under ``episode_ids``; how many were there.

        The rows after them move up, so recording order stays without gaps. New
        arrays and lists, never a change in place: a search in another thread keeps
        the ones it holds.
        """
        with self._lock:
            space = self._space(namespace)
            gone = {space.rows[i] for i in dict.fromkeys(episode_ids) if i in space.rows}
            if not gone:
                return 0
            keep = np.asarray([row for row in range(space.size) if row not in gone], np.intp)
            space.vectors, space.codes = space.vectors[keep].copy(), space.codes[keep].copy()
            space.ids = [space.ids[row] for row in keep]
            space.records = [space.records[row] for row in keep]
            space.rows = {episode_id: row for row, episode_id in enumerate(space.ids)}
            return len(gone)

    def delete_journal(self, namespace: str, entry_ids: Sequence[str]) -> int:
        """Remove the journal entries under ``entry_ids``; how many were there."""
        with self._lock:
            space = self._space(namespace)
            gone = [space.journal.pop(i) for i in dict.fromkeys(entry_ids) if i in space.journal]
            if gone:
                ids = {entry.entry_id for entry in gone}
                space.journal_order = [e for e in space.journal_order if e.entry_id not in ids]
                for entry in gone:
                    run = [e for e in space.journal_runs.get(entry.run_id, ()) if e is not entry]
                    space.journal_runs[entry.run_id] = run
            return len(gone)

    def purge_deleted(self) -> str:
        """Nothing to purge: the records lived in this process's memory only."""
        return (
            "in-memory store: the records were dropped from this process's memory "
            "(nothing was written to disk; Python does not zero freed memory)"
        )
