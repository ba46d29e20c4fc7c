"""What the stores with a ledger share: order, counts, state and journal from the ledger.

`VectorStoreEpisodeStore` and
`LangGraphEpisodeStore` keep their records in a
backend that cannot say what order they were written in, how many are committed, or
hold the memory's state strings and journal; a
`Ledger` beside the records does. This base
implements every protocol method that reads or writes only the ledger, or the ledger
and records by id; a subclass says how to read its records (`_records`).
"""

from __future__ import annotations

import threading
import uuid
import warnings
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Any

from langchain_episodic._validation import check_int
from langchain_episodic.errors import MalformedRecordWarning
from langchain_episodic.model.episode import Episode
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.stores.base import JournalEntry
from langchain_episodic.stores.codec import decode_episodes, encode_episode
from langchain_episodic.stores.ledger import Ledger

__all__ = ["RECORD_ID_NAMESPACE", "LedgeredStore", "passes", "record_fields", "record_id"]

RECORD_ID_NAMESPACE = uuid.UUID("6f1d3c52-8a4e-5b7f-9c2d-1e0a4b6c8d9e")
"""The UUID namespace of `record_id` (fixed forever: ids depend on it)."""


def record_id(namespace: str, episode_id: str) -> str:
    """The backend id of an episode: a UUID5 of the namespace and the ``episode_id``."""
    return str(uuid.uuid5(RECORD_ID_NAMESPACE, f"{namespace}\x00{episode_id}"))


def passes(fields: Mapping[str, Any], filters: EpisodeFilter | None) -> bool:
    """Whether a record's flat fields (category, outcome, strategy) pass ``filters``."""
    if filters is None or filters.is_empty:
        return True
    category, outcome = str(fields.get("category")), str(fields.get("outcome"))
    return filters.matches(category, outcome, str(fields.get("strategy_used")))


def record_fields(namespace: str, episode: Episode, seq: int) -> dict[str, Any]:
    """A record's stored fields: the episode as JSON, its place and what filters read."""
    return {
        "episode": encode_episode(episode),
        "namespace": namespace,
        "seq": seq,
        "category": episode.task.category.value,
        "outcome": episode.outcome.value,
        "strategy_used": episode.strategy_used,
    }


class LedgeredStore:
    """The ledger-backed part of a store; one writer at a time per namespace.

    Subclasses set ``_ledger`` and call ``super().__init__()``, and implement
    `_records`.
    """

    _ledger: Ledger
    _backend_name = "the store"
    _commits_checked = False
    """Whether a record counts as stored only once the ledger committed it: for a
    backend that upserts, so that a record a killed writer wrote but never committed
    is written again (and counted) by the next, rather than skipped for ever."""
    concurrent_adds = True
    """Batches may come from several threads at once: `add` numbers and writes
    under this object's lock (see `EpisodeStore`)."""
    _concurrent_reads = False
    """Whether reads run without this object's lock, at once with each other and with
    a writer: for a backend that serves each call in a transaction of its own (a
    database), whose readers already meet other processes' writers. The ledger's
    commit point (ids first, the count last) keeps such a read consistent."""

    def __init__(self) -> None:
        self._opened: set[str] = set()
        self._lock = threading.RLock()

    def _exclusive(self) -> AbstractContextManager[Any]:
        """Held while the ledger is read, then written: one writer at a time.

        This object's lock; a store whose backend can lock across processes adds that
        (`LangGraphEpisodeStore` on PostgreSQL).
        """
        return self._lock

    def _reading(self) -> AbstractContextManager[Any]:
        """Held while records and the ledger are read: this object's lock, or nothing.

        Nothing when `_concurrent_reads`: concurrent agent runs would otherwise
        wait for each other's database round trips.
        """
        return nullcontext() if self._concurrent_reads else self._lock

    @contextmanager
    def _using(self, namespace: str, *, write: bool = False) -> Iterator[None]:
        """`_exclusive` (``write``) or `_reading`, with ``namespace`` opened."""
        with self._exclusive() if write else self._reading():
            # Any use opens the namespace, as Chroma's store does; adding it is
            # idempotent, so two readers that race here both add it, under the writer's lock.
            if namespace not in self._opened:
                with self._exclusive():
                    self._ledger.add_namespace(namespace)
                self._opened.add(namespace)
            yield

    def _records(self, namespace: str, ids: Sequence[str]) -> dict[str, Mapping[str, Any]]:
        """The stored fields (holding ``"episode"``) of the namespace's records among ``ids``."""
        raise NotImplementedError

    def _records_and_count(
        self, namespace: str, ids: Sequence[str]
    ) -> tuple[dict[str, Mapping[str, Any]], int]:
        """`_records` and the ledger's count; a backend that can reads both at once."""
        return self._records(namespace, ids), self._ledger.count(namespace)

    def namespaces(self) -> tuple[str, ...]:
        """Every namespace the ledger lists (holding records, or opened), sorted."""
        with self._reading():
            return tuple(sorted(self._ledger.namespaces()))

    def count(self, namespace: str) -> int:
        """Number of episodes the ledger has committed in ``namespace``, less those deleted."""
        with self._using(namespace):
            return self._ledger.count(namespace) - self._ledger.deleted(namespace)

    def get(self, namespace: str, episode_ids: Sequence[str]) -> dict[str, Episode]:
        """The stored episodes among ``episode_ids``, by id; missing ids are left out."""
        wanted = {record_id(namespace, episode_id): episode_id for episode_id in episode_ids}
        with self._using(namespace):
            if self._commits_checked:
                records, count = self._records_and_count(namespace, list(wanted))
                records = self._committed(namespace, records, count)
            else:
                records = self._records(namespace, list(wanted))
        rows = ((rid, fields.get("episode")) for rid, fields in records.items())
        # A record under another episode's id (written by another tool) is not that one.
        return {
            episode.episode_id: episode
            for rid, episode in decode_episodes(rows)
            if episode.episode_id == wanted[rid]
        }

    def _committed(
        self, namespace: str, records: Mapping[str, Mapping[str, Any]], count: int | None = None
    ) -> dict[str, Mapping[str, Any]]:
        """The ``records`` the ledger committed: its id stands at the record's ``seq``.

        ``count``: the ledger's count, when the caller has just read it.
        """
        if not records:
            return {}
        if count is None:
            count = self._ledger.count(namespace)
        seqs: dict[str, int] = {}
        for rid, fields in records.items():
            seq = fields.get("seq")
            if isinstance(seq, int) and not isinstance(seq, bool) and 0 <= seq < count:
                seqs[rid] = seq
        placed = self._ledger.ids_at(namespace, list(seqs.values()))
        return {rid: records[rid] for rid, seq in seqs.items() if placed.get(seq) == rid}

    def latest(self, namespace: str, n: int, total: int) -> list[Episode]:
        """The last ``n`` of the first ``total`` committed records, oldest first."""
        if n <= 0 or total <= 0:
            return []
        with self._using(namespace):
            stop = min(total, self._ledger.count(namespace))
        # Deleted records leave blanks in the ledger: widen until n are found.
        window = n
        while True:
            found = list(self._read_range(namespace, max(0, stop - window), stop))
            if len(found) >= n or window >= stop:
                return found[-n:]
            window *= 2

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        """Committed episodes in recording order from the ``start``-th on, in pages."""
        check_int("page_size", page_size, 1)
        with self._using(namespace):
            total = self._ledger.count(namespace)
        for page in range(start, total, page_size):
            yield from self._read_range(namespace, page, min(page + page_size, total))

    def _read_range(self, namespace: str, start: int, stop: int) -> Iterator[Episode]:
        with self._reading():
            ids = [rid for rid in self._ledger.ids(namespace, start, stop) if rid]  # "": deleted
            records = self._records(namespace, ids)
        for _, episode in decode_episodes(self._listed(ids, records)):
            yield episode

    def _listed(
        self, ids: Sequence[str], records: Mapping[str, Mapping[str, Any]]
    ) -> Iterator[tuple[str, object]]:
        """``(record_id, episode JSON)`` for each of the ledger's ``ids`` the backend holds.

        An id the backend lacks (a FAISS index not saved) is skipped with a warning
        where it stands, so that warnings keep the ledger's order.
        """
        for rid in ids:
            fields = records.get(rid)
            if fields is None:
                warnings.warn(
                    MalformedRecordWarning(
                        rid, f"listed in the ledger but not found in {self._backend_name}"
                    ),
                    stacklevel=3,
                )
                continue
            yield rid, fields.get("episode")

    def read_state(self, namespace: str, key: str) -> str | None:
        """A string saved with `write_state`, from the ledger, or ``None``."""
        with self._using(namespace):
            return self._ledger.read_state(namespace, key)

    def write_state(self, namespace: str, key: str, value: str) -> None:
        """Save a string for ``namespace`` under ``key`` in the ledger."""
        with self._using(namespace, write=True):
            self._ledger.write_state(namespace, key, value)

    def append_journal(self, namespace: str, entries: Sequence[JournalEntry]) -> None:
        """Add journal entries to the ledger; an id already stored keeps its first entry."""
        with self._using(namespace, write=True):
            self._ledger.append_journal(namespace, entries)

    def read_journal(self, namespace: str, run_id: str | None = None) -> list[JournalEntry]:
        """The namespace's journal entries from the ledger, of one run when ``run_id`` is given."""
        with self._using(namespace):
            return self._ledger.read_journal(namespace, run_id)

    def read_journal_keys(
        self, namespace: str, run_id: str, entry_ids: Sequence[str]
    ) -> list[JournalEntry]:
        """The stored entries of run ``run_id`` under ``entry_ids``: one read by key."""
        with self._using(namespace):
            return self._ledger.read_journal_keys(namespace, run_id, entry_ids)

    def delete(self, namespace: str, episode_ids: Sequence[str]) -> int:
        """Remove the records under ``episode_ids``; how many were there.

        The ledger marks them deleted first (readers stop listing them), then the
        backend deletes them (`_delete_records`): a writer killed in between
        leaves records no reader lists, which deleting again removes.
        """
        wanted = [record_id(namespace, episode_id) for episode_id in dict.fromkeys(episode_ids)]
        with self._using(namespace, write=True):
            records = self._records(namespace, wanted)
            seqs = [
                seq
                for seq in (fields.get("seq") for fields in records.values())
                if isinstance(seq, int) and not isinstance(seq, bool)
            ]
            placed = self._ledger.ids_at(namespace, seqs)
            listed = [seq for seq in seqs if placed.get(seq) in records]
            self._ledger.blank(namespace, listed)
            if records:
                self._delete_records(namespace, list(records))
        return len(records)

    def _delete_records(self, namespace: str, ids: Sequence[str]) -> None:
        """Delete the backend's records under record ``ids``."""
        raise NotImplementedError

    def delete_journal(self, namespace: str, entry_ids: Sequence[str]) -> int:
        """Remove the journal entries under ``entry_ids`` from the ledger; how many were there."""
        with self._using(namespace, write=True):
            return self._ledger.delete_journal(namespace, entry_ids)
