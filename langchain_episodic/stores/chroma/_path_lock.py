"""An advisory inter-process lock on an embedded store's folder.

Chroma's embedded mode (``PersistentClient``) is not safe for writers in several
processes: each keeps its own in-memory index and flushes it over the other's. So a
`ChromaEpisodeStore` opened on a ``path`` holds an exclusive
lock on ``<path>/.langchain-episodic.lock`` for its life, and a store in another
process is refused with `StoreLockedError` (or waits,
given a timeout). Several processes go through a Chroma server instead.

* The lock is ``flock`` on POSIX, ``msvcrt.locking`` on Windows: advisory, held by
  the open file, so the operating system drops it when the holder dies, even by
  ``SIGKILL``. No stale lock file needs cleaning: the file stays, the lock does not.
* Stores in one process share the lock (Chroma itself shares one system per path
  in a process): a registry counts them, and the last one to close releases it.
* The holder writes its pid into the file, so the refusal can name it.
* Stores in one process on one folder also share a `FolderShare`: the spelling
  of the path that Chroma opens (so that ``"./m"`` and ``"/abs/m"`` use one Chroma
  system, not two whose in-memory indexes go stale to each other) and the record
  numbering, so two handles on one folder (a re-run notebook cell) never repeat a
  record number. It lives exactly as long as the lock: the last close drops it.
* A folder this process cannot write (a read-only mount, no permission) is locked
  shared, through the lock file opened for reading (``flock`` needs no write access):
  the store opens it read-only, and a writer elsewhere is refused meanwhile as it
  would be by any other holder. No lock file there (it could never be created) means
  no writer can be either, so none is taken.
* Any other failure to take the lock (the lock path is a folder, the folder cannot be
  created) is a `StoreConfigurationError` naming the
  path and the cause, never an ``OSError``.
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from langchain_episodic.errors import StoreConfigurationError, StoreLockedError
from langchain_episodic.stores._numbering import RecordNumbers

__all__ = ["LOCK_FILE_NAME", "FolderShare", "PathLock", "acquire_path_lock"]

LOCK_FILE_NAME = ".langchain-episodic.lock"
_POLL_SECONDS = 0.05
# What opening the lock file for writing raises in a folder this process cannot write.
_READ_ONLY_ERRNOS = frozenset({errno.EROFS, errno.EACCES, errno.EPERM})

if sys.platform == "win32":  # pragma: no cover - the test machines run POSIX
    import msvcrt

    # Lock one byte far past the pid text, so readers of the pid are not blocked.
    _WINDOWS_LOCK_OFFSET = 1 << 30

    def _try_lock(fd: int, *, shared: bool = False) -> bool:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        try:
            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        except OSError:
            return False
        return True

    def _unlock(fd: int) -> None:
        os.lseek(fd, _WINDOWS_LOCK_OFFSET, os.SEEK_SET)
        msvcrt.locking(fd, msvcrt.LK_UNLCK, 1)

else:
    import fcntl

    def _try_lock(fd: int, *, shared: bool = False) -> bool:
        try:
            fcntl.flock(fd, (fcntl.LOCK_SH if shared else fcntl.LOCK_EX) | fcntl.LOCK_NB)
        except BlockingIOError:
            return False
        return True

    def _unlock(fd: int) -> None:
        fcntl.flock(fd, fcntl.LOCK_UN)


@dataclass
class FolderShare:
    """What every store open on one folder in this process shares, beside the lock.

    Attributes:
        chroma_path: The folder as the first store spelled it; later stores hand
            Chroma the same string, as Chroma keys its per-process system on it.
        add_lock: Held while a store takes or gives back the numbers of the records
            it writes.
        numbers: The record numbers given out, per Chroma collection name.
        erased_in: The folder once an erasure purged it: every store closing on it
            scrubs the index files again (Chroma may save them after the purge).
        read_only: Why this process cannot write the folder (as the operating system
            said it), or ``None`` when it can.
        on_last_release: Called, in order, when the last store on the folder in this
            process releases the lock (e.g. to remove a read-only folder's copy).
    """

    chroma_path: str
    add_lock: threading.Lock = field(default_factory=threading.Lock)
    numbers: defaultdict[str, RecordNumbers] = field(
        default_factory=lambda: defaultdict(RecordNumbers)
    )
    erased_in: list[str] = field(default_factory=list)
    read_only: str | None = None
    on_last_release: list[Callable[[], None]] = field(default_factory=list)


@dataclass
class _Held:
    fd: int | None  # None: a read-only folder without a lock file, nothing to unlock
    users: int
    share: FolderShare


_registry: dict[str, _Held] = {}
# Reentrant: a store dropped by the garbage collector releases its share from a
# finalizer, which can run on a thread already inside a section below (any allocation
# may collect). A plain lock deadlocked there; with this one the nested release sees
# the section busy and leaves its share to the section, which releases it on the way out.
_registry_lock = threading.RLock()
_section_busy = False
_deferred: list[PathLock] = []


@contextlib.contextmanager
def _registry_section() -> Iterator[bool]:
    """Hold the registry; yield ``False`` when re-entered on the thread holding it."""
    global _section_busy  # noqa: PLW0603 - one flag guarded by the reentrant lock
    with _registry_lock:
        if _section_busy:
            yield False
            return
        _section_busy = True
        try:
            yield True
        finally:
            try:
                while _deferred:
                    _deferred.pop()._release_held()
            finally:
                _section_busy = False


def _forget_after_fork() -> None:
    # A forked child shares the parent's open lock files, so unlocking them would free
    # the parent's lock: close the child's copies only. The child is another process,
    # so its own stores must take the lock anew (and are refused while the parent holds it).
    global _registry_lock, _section_busy  # noqa: PLW0603 - another thread may have held it
    _registry_lock = threading.RLock()
    _section_busy = False
    _deferred.clear()
    for held in _registry.values():
        if held.fd is not None:
            with contextlib.suppress(OSError):
                os.close(held.fd)
    _registry.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_after_fork)


class PathLock:
    """One store's share of the lock on a folder; `release` gives it back once."""

    def __init__(self, key: str, share: FolderShare, *, first: bool) -> None:
        self._key = key
        self._released = False
        self.share = share
        self.first = first
        """Whether this share took the lock from the operating system: no other store
        in this process had the folder open (so Chroma has loaded none of its files)."""

    @property
    def holders(self) -> int:
        """Stores in this process holding the folder now, this one included (0: released)."""
        held = _registry.get(self._key)
        return 0 if held is None or self._released else held.users

    def release(self) -> None:
        """Give this share back; the last share in the process unlocks the file.

        Safe from a garbage-collector finalizer that runs inside this module's own
        section on the same thread: the share is then released as that section ends.
        """
        with _registry_section() as owner:
            if owner:
                self._release_held()
            else:
                _deferred.append(self)

    def _release_held(self) -> None:
        # Called with the registry held.
        if self._released:
            return
        self._released = True
        held = _registry.get(self._key)
        if held is None:  # forked child: the parent's lock is not ours to free
            return
        held.users -= 1
        if held.users == 0:
            del _registry[self._key]
            try:
                for cleanup in held.share.on_last_release:
                    cleanup()
            finally:
                if held.fd is not None:
                    try:
                        _unlock(held.fd)
                    finally:
                        os.close(held.fd)


def _holder(lock_file: str) -> str:
    try:
        with open(lock_file, encoding="ascii", errors="replace") as file:
            pid = file.read(32).strip()
    except OSError:
        pid = ""
    return f"pid {pid}" if pid.isdigit() else "pid unknown"


def _cannot_lock(folder: str, key: str, error: OSError) -> StoreConfigurationError:
    """One line naming the folder, the cause and (when it is another) the file at fault."""
    cause = error.strerror or type(error).__name__
    filename = error.filename if isinstance(error.filename, str) else key
    where = f" ({filename})" if filename != folder else ""
    return StoreConfigurationError(f"path={folder!r} cannot hold a store: {cause}{where}")


def _open_read_only(key: str, folder: str, cause: str) -> _Held | None:
    """Lock a folder this process cannot write, shared; ``None`` if a writer holds it."""
    try:
        fd = os.open(key, os.O_RDONLY)
    except FileNotFoundError:  # never created, so no writer can hold it either
        return _Held(None, 1, FolderShare(folder, read_only=cause))
    except OSError as error:
        raise _cannot_lock(folder, key, error) from error
    try:
        if not _try_lock(fd, shared=True):
            os.close(fd)
            return None
    except OSError as error:
        os.close(fd)
        raise _cannot_lock(folder, key, error) from error
    return _Held(fd, 1, FolderShare(folder, read_only=cause))


def _try_acquire(key: str, folder: str) -> tuple[FolderShare, bool] | None:
    """Join this process's lock on ``key``, or take it from the OS; ``None`` if held elsewhere.

    Returns:
        The share, and whether it was taken from the operating system (first here).
    """
    held = _registry.get(key)
    if held is not None:
        held.users += 1
        return held.share, False
    try:
        fd = os.open(key, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as error:
        if error.errno not in _READ_ONLY_ERRNOS or not os.path.isdir(folder):
            raise _cannot_lock(folder, key, error) from error
        opened = _open_read_only(key, folder, error.strerror or type(error).__name__)
        if opened is None:
            return None
        _registry[key] = opened
        return opened.share, True
    try:
        if not _try_lock(fd):
            os.close(fd)
            return None
        os.ftruncate(fd, 0)
        os.lseek(fd, 0, os.SEEK_SET)
        os.write(fd, f"{os.getpid()}\n".encode("ascii"))
    except OSError as error:
        os.close(fd)
        raise _cannot_lock(folder, key, error) from error
    except BaseException:
        os.close(fd)
        raise
    share = FolderShare(folder)
    _registry[key] = _Held(fd, 1, share)
    return share, True


def acquire_path_lock(folder: str, timeout: float = 0.0) -> PathLock:
    """Lock ``folder`` (created if missing) for this process, waiting up to ``timeout`` s.

    A folder this process cannot write is locked shared, and its share says why it is
    read-only (`FolderShare.read_only`).

    Raises:
        StoreLockedError: Another process holds the lock after ``timeout`` seconds.
        StoreConfigurationError: The folder cannot be created, or its lock file cannot
            be opened (e.g. the lock path is a folder); names the path and the cause.
    """
    key = os.path.join(os.path.realpath(folder), LOCK_FILE_NAME)
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as error:
        raise _cannot_lock(folder, key, error) from error
    deadline = time.monotonic() + timeout
    while True:
        # Polled, not a blocking flock: a thread waiting here must not hold the registry.
        with _registry_section():  # never re-entered: nothing here releases a share
            taken = _try_acquire(key, folder)
        if taken is not None:
            return PathLock(key, taken[0], first=taken[1])
        if time.monotonic() >= deadline:
            raise StoreLockedError(folder, _holder(key), timeout)
        time.sleep(_POLL_SECONDS)
