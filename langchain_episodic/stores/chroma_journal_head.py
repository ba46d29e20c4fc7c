"""The head of a journal in an embedded Chroma folder: whether it changed, known without reading it.

The first read of a large Chroma collection in a process costs a fixed 0.1-0.3 s
(measured at 100,000 journal entries: a ``count()``, a ``get`` by id, any read), so an
open that only needs to know "was anything written after the checkpoint?" must not ask
the journal. So every write of a journal in an embedded folder goes through a *head*,
two kinds of small files beside Chroma's in the folder:

1. before the write, ``.langchain-episodic-writing-<journal>-<token>`` (the write is in
   flight), synced to disk with its folder entry;
2. the entries added (or deleted), in Chroma;
3. after it, even when it failed half-way, ``.langchain-episodic-head-<journal>`` gets
   a fresh random nonce (written aside, synced, renamed over), then the ``writing``
   file is removed.

:meth:`JournalHeads.read` returns the nonce when no write is in flight, else ``None``
(it cannot vouch). A checkpoint keeps the nonce read *before* the journal it sums up was
read; an open whose head equals the checkpoint's knows nothing was appended or deleted
since (a completed write renews the nonce; one in flight, or one a crash interrupted,
leaves its ``writing`` file) and reads nothing of the journal. Otherwise it counts and
reads the journal as before. Files cost about 1 ms per write (two syncs), where records
in a Chroma collection cost about 25 ms (three Chroma writes, measured).

The folder is locked by one process (:mod:`~langchain_episodic.stores._path_lock`), so
a ``writing`` file that is not of a write in flight in this process is from a process
that died: the next read renews the nonce (a checkpoint from before the crash never
matches again), removes the file and returns ``None``, and the caller reads the journal,
the dead writer's entries with it. Stores on a Chroma server or a client the user made
keep no head: their open reads the journal as before.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterator

__all__ = ["HEAD_PREFIX", "WRITING_PREFIX", "JournalHeads"]

HEAD_PREFIX = ".langchain-episodic-head-"
WRITING_PREFIX = ".langchain-episodic-writing-"

# The writing files of the writes in flight in this process (any store, any folder).
_in_flight: set[str] = set()
_in_flight_lock = threading.Lock()


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
        marker = os.path.join(self._folder, f"{WRITING_PREFIX}{journal}-{uuid.uuid4().hex}")
        with _in_flight_lock:
            _in_flight.add(marker)
        try:
            _write_synced(marker, f"{time.time()}\n", exclusive=True)
            try:
                yield
            finally:  # the entries may be there even if the write failed: a new nonce
                self._renew(journal)
                os.unlink(marker)
        finally:
            with _in_flight_lock:
                _in_flight.discard(marker)

    def read(self, journal: str, exists: Callable[[], bool]) -> str | None:
        """The head of the journal collection ``journal``; ``None``: it cannot vouch.

        ``None`` when no head is kept (a server, a folder from a release without heads:
        one is started then, if the journal ``exists``), a write is in flight, or a
        crash interrupted one (its file is cleared then, after the head is renewed).
        """
        if self._folder is None:
            return None
        prefix = f"{WRITING_PREFIX}{journal}-"
        try:
            markers = [
                os.path.join(self._folder, name)
                for name in os.listdir(self._folder)
                if name.startswith(prefix)
            ]
        except OSError:
            return None
        if markers:
            with _in_flight_lock:
                if any(marker in _in_flight for marker in markers):
                    return None  # a write in flight here: the journal may be changing
            if self._writable:  # the folder's lock is ours: the writers died
                self._renew(journal)  # first: a checkpoint from before never matches
                for marker in markers:
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(marker)
            return None
        try:
            with open(self._head_path(journal), encoding="ascii") as handle:
                nonce = handle.read().strip()
        except FileNotFoundError:
            if self._writable and exists():  # a journal from a release without heads
                self._renew(journal)  # a nonce no checkpoint holds: read it this time
            return None
        except (OSError, ValueError):
            return None
        return nonce or None

    def _head_path(self, journal: str) -> str:
        assert self._folder is not None
        return os.path.join(self._folder, HEAD_PREFIX + journal)

    def _renew(self, journal: str) -> None:
        path = self._head_path(journal)
        aside = f"{path}.{uuid.uuid4().hex}.tmp"
        _write_synced(aside, uuid.uuid4().hex + "\n", exclusive=True)
        os.replace(aside, path)
        _sync_folder(os.path.dirname(path))


def _write_synced(path: str, text: str, *, exclusive: bool) -> None:
    """Write ``path`` and sync it and its folder entry to disk."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_EXCL if exclusive else os.O_TRUNC)
    descriptor = os.open(path, flags, 0o644)
    try:
        os.write(descriptor, text.encode("ascii"))
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
    _sync_folder(os.path.dirname(path))


def _sync_folder(folder: str) -> None:
    try:
        descriptor = os.open(folder, os.O_RDONLY)
    except OSError:  # a platform without directory handles: the file itself is synced
        return
    try:
        os.fsync(descriptor)
    except OSError:
        pass
    finally:
        os.close(descriptor)
