"""The head of a namespace's Chroma journal: whether it changed, known without reading it.

The first read of a large Chroma collection in a process costs a fixed 0.1-0.3 s
(measured at 100,000 journal entries: a ``count()``, a ``get`` by id, any read), so an
open that only needs to know "was anything written after the checkpoint?" must not ask
the journal. Each journal keeps a *head* beside it, in a tiny collection
(``<collection>-journal-head``), which every write of the journal goes through:

1. before the write, a ``writing:<token>`` record (the write is in flight);
2. the entries added (or deleted);
3. after it, even when it failed half-way, the ``head`` record gets a fresh random
   nonce, then the ``writing:`` record is removed.

:meth:`JournalHeads.read` returns the nonce when no write is in flight, else ``None``
(it cannot vouch). A checkpoint keeps the nonce read *before* the journal it sums up was
read; an open whose head equals the checkpoint's knows nothing was appended or deleted
since (a completed write changes the nonce; one in flight, or one a crash interrupted,
leaves its ``writing:`` record) and reads nothing of the journal. Otherwise it counts and
reads the journal as before.

A ``writing:`` record a crash left is detected, and cleared once the journal has been
read past it: on an embedded folder (locked by one process) or a private client, any
record not of a write in flight in this process is from a dead one; at a Chroma server,
one older than :data:`ABANDONED_AFTER`. Clearing gives the head a fresh nonce first, so a
checkpoint taken before the crash never matches again. A writer of a release without
heads does not update them: while one writes to the same journal, open with it too.
"""

from __future__ import annotations

import contextlib
import threading
import time
import uuid
from collections.abc import Callable, Iterator

import numpy as np
from chromadb.api import ClientAPI
from chromadb.api.models.Collection import Collection

__all__ = ["ABANDONED_AFTER", "HEAD_SUFFIX", "JournalHeads"]

HEAD_SUFFIX = "-head"
ABANDONED_AFTER = 600.0
"""Seconds after which a write in flight at a Chroma server counts as abandoned (a writer
killed between its steps); its entries, if any, are read by the open that clears it."""

_HEAD_OF_KEY = "langchain_episodic:head_of"
_NONCE_ID = "head"
_WRITING = "writing:"
_ONE = np.ones((1, 1), dtype=np.float32)

# Tokens of the writes in flight in this process (any store, any folder).
_in_flight: set[str] = set()
_in_flight_lock = threading.Lock()


class JournalHeads:
    """The heads of one store's journals.

    Args:
        client: The store's Chroma client.
        name_for: The journal collection's name for a namespace (the head's is that
            and :data:`HEAD_SUFFIX`).
        exclusive: Whether no other process writes through this client (an embedded
            folder this process locks, a private in-memory client).
        writable: Whether this store may write (a read-only folder may not).
    """

    def __init__(
        self,
        client: ClientAPI,
        name_for: Callable[[str], str],
        *,
        exclusive: bool,
        writable: bool,
    ) -> None:
        self._client = client
        self._name_for = name_for
        self._exclusive = exclusive
        self._writable = writable
        self._heads: dict[str, Collection] = {}

    def _collection(self, namespace: str, *, create: bool) -> Collection | None:
        cached = self._heads.get(namespace)
        if cached is not None:
            return cached
        name = self._name_for(namespace) + HEAD_SUFFIX
        if create:
            head = self._client.get_or_create_collection(
                name, metadata={_HEAD_OF_KEY: namespace}, embedding_function=None
            )
        else:
            try:
                head = self._client.get_collection(name, embedding_function=None)
            except Exception:  # chromadb raises NotFoundError, ValueError by version
                return None
        self._heads[namespace] = head
        return head

    @contextlib.contextmanager
    def writing(self, namespace: str) -> Iterator[None]:
        """Mark a write of ``namespace``'s journal in flight around the ``with`` body."""
        head = self._collection(namespace, create=True)
        assert head is not None
        token = _WRITING + uuid.uuid4().hex
        with _in_flight_lock:
            _in_flight.add(token)
        try:
            head.upsert(ids=[token], embeddings=_ONE, metadatas=[{"since": time.time()}])
            try:
                yield
            finally:  # the entries may be there even if the write failed: a new nonce
                _renew(head)
                head.delete(ids=[token])
        finally:
            with _in_flight_lock:
                _in_flight.discard(token)

    def read(self, namespace: str) -> str | None:
        """The journal's head; ``None`` when it cannot vouch for the journal.

        ``None``: no head kept yet, a write in flight, or one a crash interrupted (then
        cleared when that writer is known dead, and the head renewed: the caller reads
        the journal this time, and later opens may trust the head again).
        """
        head = self._collection(namespace, create=False)
        if head is None:
            if self._writable and self._client_has_journal(namespace):
                # A journal from a release without heads: start one (a fresh nonce no
                # checkpoint holds, so this open reads the journal).
                head = self._collection(namespace, create=True)
                assert head is not None
                _renew(head)
            return None
        got = head.get(include=["metadatas"])
        nonce: str | None = None
        dead = []
        now = time.time()
        for record_id, metadata in zip(got["ids"], got["metadatas"] or [], strict=False):
            if record_id == _NONCE_ID:
                value = (metadata or {}).get("nonce")
                nonce = value if isinstance(value, str) else None
            elif record_id.startswith(_WRITING):
                if not self._is_dead(record_id, (metadata or {}).get("since"), now):
                    return None  # a write in flight: the journal may be changing
                dead.append(record_id)
        if dead:
            if self._writable:
                _renew(head)  # first: a checkpoint from before the crash never matches
                head.delete(ids=dead)
            return None
        return nonce

    def _is_dead(self, token: str, since: object, now: float) -> bool:
        if self._exclusive:
            with _in_flight_lock:
                return token not in _in_flight
        return isinstance(since, (int, float)) and now - since > ABANDONED_AFTER

    def _client_has_journal(self, namespace: str) -> bool:
        try:
            self._client.get_collection(self._name_for(namespace), embedding_function=None)
        except Exception:  # chromadb raises NotFoundError, ValueError by version
            return False
        return True


def _renew(head: Collection) -> None:
    head.upsert(ids=[_NONCE_ID], embeddings=_ONE, metadatas=[{"nonce": uuid.uuid4().hex}])
