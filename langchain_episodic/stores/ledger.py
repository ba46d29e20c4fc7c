"""The ledger of `VectorStoreEpisodeStore`.

What a generic vector store cannot say, kept in a LangChain key-value store (a
``ByteStore``), under keys that start with ``langchain_episodic/``:

* ``namespaces``: the sorted JSON list of namespaces opened;
* per namespace (``ns/<sha256 prefix of the name>``): ``count``, the number of record
  numbers given (committed records, deleted ones included); ``deleted``, how many of
  them were deleted since; ``seq/<block>``, the record ids in recording order,
  `LEDGER_BLOCK` to a JSON list, a deleted record's id replaced by ``""``;
  ``state/<hex of the key>``, the memory's state strings;
  ``journal/<run digest>/<entry digest>``, one journal entry each (JSON).

The store writes the ids first and the count last (or both in one write, where the
backend writes a batch at once): the count is the commit point.
One writer at a time.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence

from langchain_core.stores import BaseStore

from langchain_episodic.stores.base import JournalEntry

__all__ = ["LEDGER_BLOCK", "Ledger", "key_digest"]

LEDGER_BLOCK = 1024
"""Record ids per ledger value (fixed forever: ledgers written before depend on it)."""

_LEDGER_ROOT = "langchain_episodic"


def key_digest(text: str) -> str:
    """``text`` as a fixed-length key part: 32 hex digits of its SHA-256."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


class Ledger:
    """What a generic vector store cannot say, in a ``ByteStore``; one writer at a time."""

    def __init__(self, store: BaseStore[str, bytes]) -> None:
        self.store = store

    @staticmethod
    def _prefix(namespace: str) -> str:
        return f"{_LEDGER_ROOT}/ns/{key_digest(namespace)}"

    def _get(self, key: str) -> bytes | None:
        return self.store.mget([key])[0]

    def namespaces(self) -> list[str]:
        """Every namespace opened, sorted."""
        raw = self._get(f"{_LEDGER_ROOT}/namespaces")
        names = json.loads(raw) if raw else []
        return [name for name in names if isinstance(name, str)]

    def add_namespace(self, namespace: str) -> None:
        """List ``namespace`` among the namespaces, if it is not yet."""
        names = self.namespaces()
        if namespace not in names:
            packed = json.dumps(sorted([*names, namespace]), ensure_ascii=False)
            self.store.mset([(f"{_LEDGER_ROOT}/namespaces", packed.encode("utf-8"))])

    def count_key(self, namespace: str) -> str:
        """The key of ``namespace``'s count, for a caller that batches its reads."""
        return f"{self._prefix(namespace)}/count"

    @staticmethod
    def parse_count(raw: bytes | None) -> int:
        """The count stored as ``raw`` (0 when there is none)."""
        return int(raw) if raw else 0

    def count(self, namespace: str) -> int:
        """Number of records committed in ``namespace``."""
        return self.parse_count(self._get(self.count_key(namespace)))

    def count_value(self, namespace: str, count: int) -> tuple[str, bytes]:
        """The ``(key, value)`` that commits ``count`` records in ``namespace``."""
        return self.count_key(namespace), str(count).encode("ascii")

    def set_count(self, namespace: str, count: int) -> None:
        """Commit ``count`` records in ``namespace``."""
        self.store.mset([self.count_value(namespace, count)])

    def deleted(self, namespace: str) -> int:
        """How many of the record numbers given in ``namespace`` were deleted since."""
        return self.parse_count(self._get(f"{self._prefix(namespace)}/deleted"))

    def blank(self, namespace: str, seqs: Sequence[int]) -> int:
        """Mark the records numbered ``seqs`` deleted (their ids become ``""``); how many.

        The blocks and the deleted count are written in one ``mset``.
        """
        listed = self._blocks(namespace, seqs)
        blanked = 0
        for seq in seqs:
            ids = listed.get(seq // LEDGER_BLOCK, [])
            offset = seq % LEDGER_BLOCK
            if seq >= 0 and offset < len(ids) and ids[offset]:
                ids[offset] = ""
                blanked += 1
        if blanked:
            count = str(self.deleted(namespace) + blanked).encode("ascii")
            self.store.mset(
                [
                    *(
                        (self._block_key(namespace, block), json.dumps(ids).encode("ascii"))
                        for block, ids in listed.items()
                    ),
                    (f"{self._prefix(namespace)}/deleted", count),
                ]
            )
        return blanked

    def _block_key(self, namespace: str, block: int) -> str:
        return f"{self._prefix(namespace)}/seq/{block}"

    def _blocks(self, namespace: str, seqs: Sequence[int]) -> dict[int, list[str]]:
        """The blocks holding ``seqs`` (one ``mget``), by block number."""
        blocks = sorted({seq // LEDGER_BLOCK for seq in seqs if seq >= 0})
        raw = self.store.mget([self._block_key(namespace, block) for block in blocks])
        return {block: json.loads(v) if v else [] for block, v in zip(blocks, raw, strict=True)}

    def ids(self, namespace: str, start: int, stop: int) -> list[str]:
        """Record ids numbered ``start`` to ``stop - 1``."""
        if stop <= start:
            return []
        first, last = start // LEDGER_BLOCK, (stop - 1) // LEDGER_BLOCK
        blocks = self.store.mget([self._block_key(namespace, b) for b in range(first, last + 1)])
        ids: list[str] = [i for raw in blocks for i in (json.loads(raw) if raw else [])]
        offset = start - first * LEDGER_BLOCK
        return ids[offset : offset + stop - start]

    def ids_at(self, namespace: str, seqs: Sequence[int]) -> dict[int, str]:
        """The record id the ledger holds at each of ``seqs`` (those it holds), one read."""
        listed = self._blocks(namespace, seqs)
        found: dict[int, str] = {}
        for seq in seqs:
            ids = listed.get(seq // LEDGER_BLOCK, [])
            if seq >= 0 and seq % LEDGER_BLOCK < len(ids):
                found[seq] = ids[seq % LEDGER_BLOCK]
        return found

    def append(self, namespace: str, start: int, ids: Sequence[str]) -> None:
        """Write ids numbered from ``start`` on; ids beyond an uncommitted count are replaced."""
        if not ids:
            return
        head = self.head_key(namespace, start)
        raw = None if head is None else self._get(head)
        self.store.mset(self.appended(namespace, start, ids, raw))

    def head_key(self, namespace: str, start: int) -> str | None:
        """The key of the block that ids numbered from ``start`` on extend, if one does."""
        first = start // LEDGER_BLOCK
        return self._block_key(namespace, first) if start - first * LEDGER_BLOCK else None

    def appended(
        self, namespace: str, start: int, ids: Sequence[str], head: bytes | None
    ) -> list[tuple[str, bytes]]:
        """The blocks to write for ids numbered from ``start`` on (``head``: that block read)."""
        first = start // LEDGER_BLOCK
        kept: list[str] = (json.loads(head) if head else [])[: start - first * LEDGER_BLOCK]
        merged = [*kept, *ids]
        return [
            (
                self._block_key(namespace, first + index),
                json.dumps(merged[offset : offset + LEDGER_BLOCK]).encode("ascii"),
            )
            for index, offset in enumerate(range(0, len(merged), LEDGER_BLOCK))
        ]

    def _journal_prefix(self, namespace: str, run_id: str | None = None) -> str:
        prefix = f"{self._prefix(namespace)}/journal/"
        return prefix if run_id is None else prefix + key_digest(run_id) + "/"

    def append_journal(self, namespace: str, entries: Sequence[JournalEntry]) -> None:
        """Write journal entries; an id already stored keeps its first entry."""
        keys = [
            self._journal_prefix(namespace, entry.run_id) + key_digest(entry.entry_id)
            for entry in entries
        ]
        stored = self.store.mget(keys)
        fresh = {
            key: json.dumps([entry.entry_id, entry.run_id, entry.payload]).encode("utf-8")
            for key, entry, old in zip(keys, entries, stored, strict=True)
            if old is None
        }
        if fresh:
            self.store.mset(list(fresh.items()))

    def read_journal(self, namespace: str, run_id: str | None = None) -> list[JournalEntry]:
        """The journal entries of ``namespace`` (of one run when ``run_id`` is given)."""
        keys = list(self.store.yield_keys(prefix=self._journal_prefix(namespace, run_id)))
        return [JournalEntry(*json.loads(raw)) for raw in self.store.mget(keys) if raw is not None]

    def read_journal_keys(
        self, namespace: str, run_id: str, entry_ids: Sequence[str]
    ) -> list[JournalEntry]:
        """The entries of run ``run_id`` under ``entry_ids`` that are stored: one ``mget``."""
        prefix = self._journal_prefix(namespace, run_id)
        stored = self.store.mget([prefix + key_digest(entry_id) for entry_id in entry_ids])
        entries = [JournalEntry(*json.loads(raw)) for raw in stored if raw is not None]
        wanted = set(entry_ids)
        # A digest's prefix is no proof of the id.
        return [entry for entry in entries if entry.entry_id in wanted]

    def delete_journal(self, namespace: str, entry_ids: Sequence[str]) -> int:
        """Remove the journal entries under ``entry_ids``; how many were there."""
        wanted = set(entry_ids)
        keys = list(self.store.yield_keys(prefix=self._journal_prefix(namespace)))
        gone = [
            key
            for key, raw in zip(keys, self.store.mget(keys), strict=True)
            if raw is not None and json.loads(raw)[0] in wanted
        ]
        if gone:
            self.store.mdelete(gone)
        return len(gone)

    def _state_key(self, namespace: str, key: str) -> str:
        return f"{self._prefix(namespace)}/state/{key.encode('utf-8').hex()}"

    def read_state(self, namespace: str, key: str) -> str | None:
        """The string saved for ``namespace`` under ``key``, or ``None``."""
        raw = self._get(self._state_key(namespace, key))
        return None if raw is None else raw.decode("utf-8")

    def write_state(self, namespace: str, key: str, value: str) -> None:
        """Save a string for ``namespace`` under ``key``, replacing the old one."""
        self.store.mset([(self._state_key(namespace, key), value.encode("utf-8"))])
