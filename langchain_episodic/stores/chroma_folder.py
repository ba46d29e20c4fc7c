"""An embedded Chroma store's folder: the path, its lock, the memory it holds, a full disk.

What :class:`~langchain_episodic.stores.chroma.ChromaEpisodeStore` checks before Chroma
touches a folder (a path that can hold a store, a database that went missing), the lock
that keeps one process per folder, closing the embedded client, and the message a write
gets when the disk is full.
"""

from __future__ import annotations

import functools
import os
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import chromadb.errors

from langchain_episodic.errors import EpisodicValueError, StoreConfigurationError
from langchain_episodic.stores._path_lock import FolderShare, PathLock, acquire_path_lock
from langchain_episodic.stores.chroma_health import LOW_SPACE, free_bytes
from langchain_episodic.stores.chroma_scrub import scrub_hnsw

if TYPE_CHECKING:
    from chromadb.api import ClientAPI

__all__ = [
    "HOLDS_A_MEMORY",
    "check_path",
    "client_share",
    "close_embedded",
    "lock_folder",
    "mark_as_holding_a_memory",
    "no_space_message",
    "refuse_a_lost_database",
    "reports_a_full_disk",
]

# Stores given the same client object share their record numbering (stores on a path
# share theirs through the path lock). Weak: the entry goes with the client.
_client_shares: weakref.WeakKeyDictionary[Any, FolderShare] = weakref.WeakKeyDictionary()
_client_shares_lock = threading.Lock()


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
    """Take ``folder``'s lock (waiting up to ``timeout`` seconds), or a one-line error."""
    try:
        return acquire_path_lock(folder, timeout)
    except OSError as exc:  # cannot create the folder or its lock file
        reason = exc.strerror or type(exc).__name__
        where = f" ({exc.filename})" if exc.filename and exc.filename != folder else ""
        msg = f"path={folder!r} cannot hold a store: {reason}{where}"
        raise StoreConfigurationError(msg) from exc


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


def mark_as_holding_a_memory(folder: str) -> None:
    """Leave :data:`HOLDS_A_MEMORY` once Chroma created its database here (best effort)."""
    marker = os.path.join(folder, HOLDS_A_MEMORY)
    database = os.path.join(folder, "chroma.sqlite3")
    if not os.path.exists(marker) and os.path.isfile(database) and os.path.getsize(database):
        try:
            with open(marker, "w", encoding="utf-8") as handle:
                handle.write("langchain-episodic: this folder holds an episodic memory\n")
        except OSError:  # best effort: without it, only this one check is lost
            return


def close_embedded(
    client: ClientAPI, release_lock: Callable[[], None], erased_in: list[str]
) -> None:
    """Close an embedded client, scrub the folders erased from, release the lock."""
    # Chroma keeps one system per path in a process; closing its last client drops it,
    # so a store reopened here after another process wrote does not search a stale index.
    try:
        close = getattr(client, "close", None)  # not declared by ClientAPI
        if callable(close):
            close()
        for folder in erased_in:  # Chroma may have saved its index again: scrub it last
            scrub_hnsw(folder)
    finally:
        release_lock()


_Method = TypeVar("_Method", bound=Callable[..., Any])


def no_space_message(folder: str, error: BaseException) -> str:
    """What a write that failed on a full disk says: what was kept, what to do."""
    return (
        f"no space left on device at {folder!r} ({free_bytes(folder)} bytes free): this "
        "write was not acknowledged (a batch may be stored in part: record it again once "
        "there is room; records are immutable, so a repeat is a no-op); everything "
        f"acknowledged before is kept. Free space, then retry. (Chroma said: {error})"
    )


def reports_a_full_disk(method: _Method) -> _Method:
    """Say "no space left on device" when a write of an embedded store fails on a full disk.

    Chroma reports a full disk as an internal error about compaction or its log.
    """

    @functools.wraps(method)
    def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return method(self, *args, **kwargs)
        except chromadb.errors.ChromaError as error:
            if self._path is not None and free_bytes(self._path) < LOW_SPACE:
                raise StoreConfigurationError(no_space_message(self._path, error)) from error
            raise

    return wrapper  # type: ignore[return-value]
