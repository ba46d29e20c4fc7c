"""An embedded Chroma store's folder: the path, its lock, the memory it holds, its failures.

What `ChromaEpisodeStore` checks before Chroma
touches a folder (a path that can hold a store, a database that went missing, damaged
files), the lock that keeps one process per folder, a folder that opens read-only,
closing the embedded client, and what Chroma's failures on a folder mean (a full disk,
damage), said as the package's typed errors.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import logging
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import chromadb.errors

from langchain_episodic.errors import (
    EpisodicValueError,
    StoreConfigurationError,
    StoreReadOnlyError,
    StoreResourceError,
)
from langchain_episodic.stores.chroma._path_lock import FolderShare, PathLock, acquire_path_lock
from langchain_episodic.stores.chroma.health import LOW_SPACE, free_bytes
from langchain_episodic.stores.chroma.precheck import (
    check_before_open,
    damage_from_chroma,
    remember_sound_files,
)
from langchain_episodic.stores.chroma.scrub import (
    close_client,
    restore_thresholds,
    scrub_folder,
    scrub_hnsw,
    scrub_pending,
    settle_indexes,
    unsettled_collections,
)
from langchain_episodic.stores.chroma.snapshot import make_readable_copy, remove_copy

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

__all__ = [
    "FOLDER_INDEXES",
    "HOLDS_A_MEMORY",
    "LOG_TOPIC_INDEX",
    "SEGMENTS_INDEX",
    "check_path",
    "client_share",
    "close_embedded",
    "descriptor_limit",
    "folder_failure",
    "index_the_folder",
    "lock_folder",
    "mark_as_holding_a_memory",
    "no_space_message",
    "prepare_folder",
    "read_only_when_full",
    "refuse_a_lost_database",
    "refused_when_read_only",
    "reports_folder_failures",
    "server_failure",
]

# Stores given the same client object share their record numbering (stores on a path
# share theirs through the path lock). Weak: the entry goes with the client.
_client_shares: weakref.WeakKeyDictionary[Any, FolderShare] = weakref.WeakKeyDictionary()
_client_shares_lock = threading.Lock()
_log = logging.getLogger(__name__)


def client_share(client: ClientAPI) -> FolderShare:
    """The record numbering shared by the stores given this client object."""
    with _client_shares_lock:
        try:
            share = _client_shares.get(client)
        except TypeError:  # a client that cannot be weakly referenced: numbered alone
            return FolderShare("")
        if share is None:
            share = _client_shares[client] = FolderShare("")
        return share


def check_path(path: object) -> str:
    """``path`` as a string once it can name a store's folder, else a one-line error."""
    if not isinstance(path, (str, os.PathLike)):
        msg = f"path={path!r} is invalid: must be a folder, as a str or os.PathLike"
        raise EpisodicValueError(msg)
    folder = os.fspath(path)
    if not isinstance(folder, str):  # a PathLike of bytes
        msg = f"path={path!r} is invalid: must be a folder, as a str or os.PathLike of str"
        raise EpisodicValueError(msg)
    if not folder.strip():
        msg = f"path={folder!r} is invalid: must name a folder (use path='.' for this one)"
        raise EpisodicValueError(msg)
    if os.path.exists(folder) and not os.path.isdir(folder):
        msg = f"path={folder!r} is a file, not a folder: an embedded store needs a folder"
        raise StoreConfigurationError(msg)
    return folder


def lock_folder(folder: str, timeout: float) -> PathLock:
    """Take ``folder``'s lock (waiting up to ``timeout`` seconds), or a one-line error.

    Raises:
        StoreLockedError: Another process holds it after ``timeout`` seconds.
        StoreConfigurationError: The folder or its lock file cannot be made or opened.
    """
    return acquire_path_lock(folder, timeout)


def prepare_folder(folder: str, lock: PathLock) -> None:
    """Ready a locked ``folder`` for Chroma: check its files, copy it if read-only.

    Only the first store on the folder in this process does anything: the others share
    its Chroma system, which has the files loaded already. Its folder's files are then
    recorded as found sound when the last store closes (read-only: the copy is removed).

    Raises:
        StoreDamagedError: A file Chroma would read is damaged (named).
        StoreConfigurationError: A read-only folder cannot be copied.
    """
    if not lock.first:
        return
    check_before_open(folder)
    share = lock.share
    if share.read_only is None:
        share.on_last_release.append(lambda: settle_erasures(folder, share.chroma_path))
        share.on_last_release.append(lambda: remember_sound_files(folder))
        return
    share.chroma_path = copy = make_readable_copy(folder)
    share.on_last_release.append(lambda: remove_copy(copy))


def read_only_when_full(folder: str, lock: PathLock) -> bool:
    """Ready a full ``folder`` to be opened for reading, as a read-only one; whether done.

    Chroma writes as it opens a folder, so on a full disk it cannot open it at all: the
    folder is copied to the system's temporary folder (when that has room) and opened
    from there, and every write is refused, saying the disk is full. Only for the first
    store on the folder in this process, and when the disk really has under
    `LOW_SPACE` free.

    Raises:
        StoreConfigurationError: The copy cannot be made (naming the cause).
    """
    free = free_bytes(folder)
    if not lock.first or lock.share.read_only is not None or free >= LOW_SPACE:
        return False
    lock.share.chroma_path = copy = make_readable_copy(folder)
    lock.share.read_only = f"no space left on device, {free} bytes free"
    lock.share.on_last_release.append(lambda: remove_copy(copy))
    return True


HOLDS_A_MEMORY = ".langchain-episodic-store"
"""A file written in a folder once Chroma created its database there: it holds a memory."""


def refuse_a_lost_database(folder: str) -> None:
    """Refuse a folder that held a memory and whose ``chroma.sqlite3`` is gone or empty.

    Chroma would open it as a new, empty database and write into it: the history would
    be gone without a word. Checked before Chroma touches the folder.

    Raises:
        StoreConfigurationError: Naming the folder, what is wrong, and what to do.
    """
    if not os.path.isfile(os.path.join(folder, HOLDS_A_MEMORY)):
        return
    database = os.path.join(folder, "chroma.sqlite3")
    if not os.path.exists(database):
        state = "is missing"
    elif os.path.getsize(database) == 0:
        state = "is empty (0 bytes)"
    else:
        return
    msg = (
        f"path={folder!r} held a memory, but its database chroma.sqlite3 {state}: opening "
        "it would start an empty memory in its place, so nothing was opened or written. "
        "Restore the folder from a backup; to start afresh on purpose, delete the folder"
    )
    raise StoreConfigurationError(msg)


LOG_TOPIC_INDEX = "langchain_episodic_queue_topic"
"""An index this package adds to Chroma's log (``embeddings_queue``) on ``(topic, seq_id)``.

Chroma reads a collection's log rows by topic, and its table has no such index: every
first touch of a collection (loading its index, counting it) read the whole log, which
holds every record of every namespace whose vector index was never saved (below
``sync_threshold``). With 2,000 namespaces opening a memory on one took 26 ms, with the
index 10 ms (``benchmarks/open_namespaces.py``); nothing Chroma reads changes."""

SEGMENTS_INDEX = "langchain_episodic_segments_collection"
"""An index this package adds to Chroma's ``segments`` table on ``collection``.

Chroma looks up a collection's segments by collection on every query, and the table (two
rows a namespace) has no such index: a warm recall scanned it. With 10,000 namespaces a
warm recall took 3.2 ms, with the index 1.3 ms, as on a folder of 10
(``benchmarks/open_namespaces.py``)."""

FOLDER_INDEXES = {
    LOG_TOPIC_INDEX: ("embeddings_queue", "topic, seq_id"),
    SEGMENTS_INDEX: ("segments", "collection"),
}
"""The indexes `index_the_folder` adds: name -> (Chroma's table, its columns)."""


def index_the_folder(folder: str) -> None:
    """Add `FOLDER_INDEXES` to ``folder``'s database where it lacks them (best effort).

    Only a writable folder whose database Chroma created; a failure (a locked or full
    database) is logged and leaves the folder as it was: the indexes only speed reads.
    """
    database = os.path.join(folder, "chroma.sqlite3")
    if not os.path.isfile(database):
        return
    try:
        with contextlib.closing(sqlite3.connect(database, timeout=10.0)) as connection:
            listed = connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            tables = {name for (name,) in listed}
            for index, (table, columns) in FOLDER_INDEXES.items():
                if table in tables:
                    connection.execute(f"CREATE INDEX IF NOT EXISTS {index} ON {table} ({columns})")
            connection.commit()
    except sqlite3.Error:
        _log.warning("could not index %r (reads stay slower)", folder, exc_info=True)


def mark_as_holding_a_memory(folder: str) -> None:
    """Leave `HOLDS_A_MEMORY` once Chroma created its database here (best effort)."""
    marker = os.path.join(folder, HOLDS_A_MEMORY)
    database = os.path.join(folder, "chroma.sqlite3")
    if not os.path.exists(marker) and os.path.isfile(database) and os.path.getsize(database):
        # Best effort: without it, only this one check is lost.
        with contextlib.suppress(OSError), open(marker, "w", encoding="utf-8") as handle:
            handle.write("langchain-episodic: this folder holds an episodic memory\n")


def close_embedded(
    clients: list[ClientAPI], release_lock: Callable[[], None], erased_in: list[str]
) -> None:
    """Close an embedded store's client, scrub the folders erased from, release the lock.

    ``clients`` holds the client in use (a store that closes idle namespaces replaces
    it there when it starts a fresh one).

    A folder whose scrub is pending (erasures since the last one, here or in a process
    that was stopped) is scrubbed whole; one scrubbed already has its index files
    zeroed again. A scrub that fails is logged and stays pending for the next close.
    """
    # Chroma keeps one system per path in a process; closing its last client drops it,
    # so a store reopened here after another process wrote does not search a stale index.
    try:
        for client in clients:
            close_client(client)
        for folder in erased_in:  # Chroma may have saved its index again: scrub it last
            try:
                if scrub_pending(folder):
                    scrub_folder(folder)
                else:
                    scrub_hnsw(folder)
            except (OSError, sqlite3.Error):
                _log.warning("could not scrub %r on close: still pending", folder, exc_info=True)
    finally:
        release_lock()


def settle_erasures(folder: str, chroma_path: str) -> None:
    """Finish a scrub that an index saved before a delete held back; at the last close.

    Runs once no store in this process has the folder open (Chroma's system on it is
    closed) and before its lock is released: the indexes are saved again
    (`settle_indexes`) and the folder
    scrubbed, so no erased id is left in its files. A failure is logged and leaves the
    scrub pending for the next close.
    """
    try:
        restore_thresholds(folder, chroma_path)  # a settle cut short (none: nothing to do)
        if scrub_pending(folder) and unsettled_collections(os.path.join(folder, "chroma.sqlite3")):
            settle_indexes(folder, chroma_path)
            scrub_folder(folder)
    except Exception:  # the close must still release the lock
        _log.warning("could not settle %r's indexes on close: still pending", folder, exc_info=True)


_Method = TypeVar("_Method", bound=Callable[..., Any])


def no_space_message(folder: str, error: BaseException) -> str:
    """What a write that failed on a full disk says: what was kept, what to do."""
    return (
        f"no space left on device at {folder!r} ({free_bytes(folder)} bytes free): this "
        "write was not acknowledged (a batch may be stored in part: record it again once "
        "there is room; records are immutable, so a repeat is a no-op); everything "
        f"acknowledged before is kept. Free space, then retry. (Chroma said: {error})"
    )


def folder_failure(folder: str | None, error: BaseException) -> Exception | None:
    """What a Chroma error on an embedded store's ``folder`` means, as a typed error.

    A full disk (Chroma says it as an internal error about compaction or its log), or
    damage (any other internal error: Chroma's words, with the files the checks find at
    fault). ``None`` for other errors (a bad argument, a missing collection), and for a
    store given a client.
    """
    if folder is None or not isinstance(error, chromadb.errors.ChromaError):
        return None
    if free_bytes(folder) < LOW_SPACE:
        return StoreConfigurationError(no_space_message(folder, error))
    descriptors = descriptors_nearly_exhausted()
    if descriptors is not None:
        # SQLite says "unable to open database file" when no descriptor is left: not damage.
        return StoreResourceError(
            folder,
            "file descriptors",
            in_use=descriptors[0],
            limit=descriptors[1],
            chroma_said=str(error),
        )
    if isinstance(error, chromadb.errors.InternalError):
        return damage_from_chroma(folder, error)
    return None


_DESCRIPTORS_HEADROOM = 16  # fewer free than this: an open that failed ran out of them


def descriptor_limit() -> int | None:
    """This process's soft ``RLIMIT_NOFILE``; ``None`` where there is none to read."""
    try:
        import resource  # noqa: PLC0415 (Unix only)

        limit = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
    except (ImportError, OSError, ValueError):
        return None
    return None if limit == resource.RLIM_INFINITY or limit <= 0 else int(limit)


def descriptors_nearly_exhausted() -> tuple[int, int] | None:
    """``(in use, limit)`` when this process has almost no file descriptor left, else None.

    Read from ``/proc/self/fd`` and the soft ``RLIMIT_NOFILE``; ``None`` where either
    cannot be read (not Linux, no limit).
    """
    limit = descriptor_limit()
    if limit is None:
        return None
    try:
        in_use = len(os.listdir("/proc/self/fd"))
    except OSError as error:
        if error.errno in (errno.EMFILE, errno.ENFILE):
            return limit, limit  # listing them needs one more: none is left
        return None
    return (in_use, limit) if limit - in_use < _DESCRIPTORS_HEADROOM else None


_SERVER_OUT_OF_DESCRIPTORS = "(code: 14) unable to open database file"


def server_failure(client: object, error: BaseException) -> Exception | None:
    """What a Chroma server's error means, as a typed error; ``None`` when it says nothing.

    A server out of file descriptors answers every request with SQLite's "unable to open
    database file" (seen: ``chroma run`` under ``ulimit -n 1024`` at its 250th namespace,
    its index cache holding every namespace's files open). Nothing is damaged: the server
    needs a higher limit.
    """
    if not isinstance(error, chromadb.errors.ChromaError):
        return None
    if _SERVER_OUT_OF_DESCRIPTORS not in str(error):
        return None
    where, holder = "a Chroma server", "the Chroma server"
    # A client that cannot say: the generic name stands.
    with contextlib.suppress(Exception):
        found = client.get_settings()  # type: ignore[attr-defined]
        if "fastapi" not in str(found.chroma_api_impl).lower():  # a client of this process
            folder = found.persist_directory if found.is_persistent else None
            where, holder = str(folder or "in memory"), "this process"
        elif found.chroma_server_host:
            where = f"chroma server {found.chroma_server_host}:{found.chroma_server_http_port}"
    return StoreResourceError(
        where,
        "file descriptors (most likely: about five for each namespace it has loaded)",
        chroma_said=str(error),
        holder=holder,
    )


def reports_folder_failures(method: _Method) -> _Method:
    """Turn Chroma's internal errors on an embedded store's folder into typed errors.

    "No space left on device" for a full disk, `StoreDamagedError` for damage
    (see `folder_failure`); Chroma's raw ``InternalError`` never reaches a caller.
    Running out of memory (``MemoryError``) is a `StoreResourceError` naming it.
    """

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except MemoryError as error:
            if self._path is None:
                raise
            # Out of memory is not damage either: say what ran out.
            said = str(error) or "MemoryError"
            raise StoreResourceError(self._path, "memory", chroma_said=said) from error
        except chromadb.errors.ChromaError as error:
            translated = (
                folder_failure(self._path, error)
                if self._path is not None
                else server_failure(self._client, error)
            )
            if translated is None:
                raise
            raise translated from error

    return wrapper  # type: ignore[return-value]


def refused_when_read_only(operation: str) -> Callable[[_Method], _Method]:
    """Refuse a write, naming ``operation``, on a store whose folder opened read-only."""

    def decorate(method: _Method) -> _Method:
        @functools.wraps(method)
        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if self._read_only is not None:
                raise StoreReadOnlyError(self._path, operation, self._read_only)
            return method(self, *args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate
