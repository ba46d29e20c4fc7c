"""The head of a journal in an embedded Chroma folder: whether it changed, known without reading it.

The first read of a large Chroma collection in a process costs a fixed 0.1-0.3 s
(measured at 100,000 journal entries: a ``count()``, a ``get`` by id, any read), so an
open that only needs to know "was anything written after the checkpoint?" must not ask
the journal. So every write of a journal in an embedded folder goes through its *head*,
a small file beside Chroma's in the folder, ``.langchain-episodic-head-<journal>``:

1. before the first of the writes in flight, it says ``writing`` (synced to disk);
2. the entries are added (or deleted) in Chroma;
3. after the last of them, even one that failed half-way, it holds a fresh random
   nonce (synced).

`JournalHeads.read` returns the nonce, or ``None`` when it cannot vouch (a write in
flight, no head yet). A checkpoint keeps the nonce read *before* the journal it sums up
was read; an open whose head equals the checkpoint's knows nothing was appended or
deleted since (a completed write renews the nonce; one in flight, or one a crash
interrupted, leaves ``writing``) and reads nothing of the journal. Otherwise it counts
and reads the journal as before. The head costs two small synced writes per journal
write (about 1 ms); records in a Chroma collection cost three Chroma writes (about
25 ms per note + credit, measured, and abandoned for that).

The folder is locked by one process (`_path_lock`), so
a head that says ``writing`` with no write in flight in this process is from a process
that died during a write: the read renews the nonce (a checkpoint from before the crash
never matches it) and returns ``None``, and the caller reads the journal, the dead
writer's entries with it. A head that cannot be read (a torn write) counts the same.
Stores on a Chroma server or a client the user made keep no head: their open reads the
journal as before.
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import uuid
from collections import Counter
from collections.abc import Callable, Iterator

from langchain_episodic.stores.chroma.scrub import write_synced

__all__ = ["HEAD_PREFIX", "JournalHeads"]

HEAD_PREFIX = ".langchain-episodic-head-"
_WRITING = "writing"
_NONCE = re.compile(r"[0-9a-f]{32}")

# Writes in flight in this process, per head file (any store, any folder), and the lock
# every read and write of a head file takes (no other process writes the folder).
_in_flight: Counter[str] = Counter()
_lock = threading.Lock()


class JournalHeads:
    """The heads of the journals in one embedded folder (none elsewhere).

    Args:
        folder: The embedded folder; ``None``: a server or a user's client (no head).
        writable: Whether this store may write (a read-only folder may not).
    """

    def __init__(self, folder: str | None, *, writable: bool) -> None:
        self._folder = folder
        self._writable = writable

    @contextlib.contextmanager
    def writing(self, journal: str) -> Iterator[None]:
        """Mark a write of the journal collection ``journal`` in flight around the body."""
        if self._folder is None or not self._writable:
            yield
            return
        path = self._head_path(journal)
        with _lock:
            if not _in_flight[path]:
                _write_synced(path, _WRITING)
            _in_flight[path] += 1
        try:
            yield
        finally:  # the entries may be there even if the write failed: a new nonce
            with _lock:
                _in_flight[path] -= 1
                if not _in_flight[path]:
                    del _in_flight[path]
                    _write_synced(path, uuid.uuid4().hex)

    def read(self, journal: str, exists: Callable[[], bool]) -> str | None:
        """The head of the journal collection ``journal``; ``None``: it cannot vouch.

        ``None`` when no head is kept (a server, a folder from a release without heads:
        one is started then, if the journal ``exists``), a write is in flight, or a
        crash interrupted one (the head is renewed then).
        """
        if self._folder is None:
            return None
        path = self._head_path(journal)
        with _lock:
            if _in_flight[path]:
                return None  # a write in flight here: the journal may be changing
            try:
                with open(path, encoding="ascii") as handle:
                    value = handle.read().strip()
            except FileNotFoundError:
                value = None
            except (OSError, ValueError):
                value = ""
            if value is None and not exists():
                return None  # no journal yet, no head needed
            if value is not None and _NONCE.fullmatch(value):
                return value
            # No head (a release without heads), or a writer died during a write (the
            # folder's lock is ours), or a torn head: a nonce no checkpoint holds.
            if self._writable:
                _write_synced(path, uuid.uuid4().hex)
            return None

    def _head_path(self, journal: str) -> str:
        assert self._folder is not None
        return os.path.join(self._folder, HEAD_PREFIX + journal)


def _write_synced(path: str, text: str) -> None:
    write_synced(path, f"{text}\n")
