"""How many namespaces an embedded Chroma client may hold open, and when to reopen it.

Chroma keeps every vector index it loaded in a cache of ``RLIMIT_NOFILE // 5`` indexes
(each holds four or five files open, and ~2.6 MB of memory for a small namespace), and
never closes one while there is room: a process serving many users grows until it runs
out of file descriptors or memory. When the cache is full, Chroma evicts an index, and
an index evicted before Chroma saved it (below ``sync_threshold`` writes since its last
save: every small namespace) reloads without those writes, or fails with "Nothing found
on disk": with the usual limit of 1,024, the 205th namespace a process touches starts
losing recalls.

A `ChromaEpisodeStore` on a ``path`` therefore counts the
namespaces it opened since its client started (`OpenNamespaces`). Before it
opens one more than its cap, it closes the client and starts a fresh one: Chroma's
system stops, every index is dropped with its files, and a namespace used again is
loaded afresh from disk and its log, unsaved writes included. The cap sits below
Chroma's own eviction (`open_namespace_cap`), so Chroma never evicts. The reopen
waits for operations running on other threads and blocks new ones while it runs (about
0.1 s).
"""

from __future__ import annotations

import contextlib
import ctypes
import ctypes.util
import gc
import threading
from collections import Counter
from collections.abc import Callable, Iterator

from langchain_episodic._validation import check_int

__all__ = [
    "DEFAULT_OPEN_NAMESPACES",
    "DESCRIPTORS_PER_NAMESPACE",
    "DESCRIPTOR_RESERVE",
    "OpenNamespaces",
    "give_memory_back",
    "open_namespace_cap",
]

DEFAULT_OPEN_NAMESPACES = 100
"""Namespaces a store holds open at most by default: ~260 MB and ~500 descriptors for
small namespaces (``benchmarks/namespaces.py``), fewer where the descriptor limit is low."""

DESCRIPTORS_PER_NAMESPACE = 10
"""File descriptors an open namespace may hold: two vector indexes (episodes and
journal) of four or five files each."""

DESCRIPTOR_RESERVE = 128
"""Descriptors left for everything else: sqlite, the lock, sockets, the user's files."""


def open_namespace_cap(requested: int | None, descriptor_limit: int | None) -> int:
    """The namespaces a store may hold open: ``requested``, or the default.

    The default is `DEFAULT_OPEN_NAMESPACES`, lowered so that the open namespaces'
    descriptors fit ``descriptor_limit`` beside `DESCRIPTOR_RESERVE` (at least 1).
    That also keeps it below Chroma's own cache (``descriptor_limit // 5`` indexes,
    two per namespace), whose evictions lose unsaved writes.

    Examples:
        >>> open_namespace_cap(None, 1_048_576), open_namespace_cap(None, 1024)
        (100, 89)
        >>> open_namespace_cap(5, 1024)
        5
    """
    if requested is not None:
        check_int("max_open_namespaces", requested, 1)
        return requested
    if descriptor_limit is None or descriptor_limit <= 0:
        return DEFAULT_OPEN_NAMESPACES
    fits = (descriptor_limit - DESCRIPTOR_RESERVE) // DESCRIPTORS_PER_NAMESPACE
    return max(1, min(DEFAULT_OPEN_NAMESPACES, fits))


class OpenNamespaces:
    """The namespaces a client opened, the operations running, and the reopen between.

    Every store operation runs inside `operation`; a store about to open a
    namespace calls `admit`, which reopens the client first (``reopen``) when the
    cap is reached, no other thread is inside an operation and ``may_reopen()`` says
    yes. Otherwise the namespace is opened beyond the cap and the reopen waits for a
    later admission.

    Examples:
        >>> reopened = []
        >>> opened = OpenNamespaces(2, reopen=lambda: reopened.append(1))
        >>> with opened.operation():
        ...     for name in ("a", "b", "a", "c"):
        ...         opened.admit(name)
        >>> len(reopened), sorted(opened.names)
        (1, ['c'])
    """

    def __init__(
        self,
        cap: int,
        reopen: Callable[[], None],
        may_reopen: Callable[[], bool] = lambda: True,
    ) -> None:
        self.cap = cap
        self._reopen = reopen
        self._may_reopen = may_reopen
        self._names: set[str] = set()
        self._reopens = 0
        # Reentrant: an operation may call another on its own thread.
        self._lock = threading.RLock()
        self._running: Counter[int] = Counter()

    @property
    def names(self) -> frozenset[str]:
        """The namespaces opened since the client last started."""
        return frozenset(self._names)

    @property
    def reopens(self) -> int:
        """How many times the client was reopened to close idle namespaces."""
        return self._reopens

    @contextlib.contextmanager
    def operation(self) -> Iterator[None]:
        """Mark an operation running on this thread (nested ones count once)."""
        me = threading.get_ident()
        with self._lock:  # waits while a reopen runs
            self._running[me] += 1
        try:
            yield
        finally:
            with self._lock:
                self._running[me] -= 1
                if not self._running[me]:  # only threads still running stay listed
                    del self._running[me]

    def admit(self, namespace: str) -> None:
        """Note that ``namespace`` is about to be opened; reopen the client first if due."""
        with self._lock:
            if namespace in self._names:
                return
            if len(self._names) >= self.cap and self._alone() and self._may_reopen():
                self._reopen()
                self._names.clear()
                self._reopens += 1
            self._names.add(namespace)

    def _alone(self) -> bool:
        # No thread but this one is inside an operation (this one may be, or not).
        return set(self._running) <= {threading.get_ident()}


def give_memory_back() -> None:
    """Collect garbage and return freed heap pages to the system (glibc; else nothing).

    Chroma's indexes are freed when its system stops, but glibc keeps the pages in the
    process unless asked: without this a reopened client's memory is not seen to drop.
    """
    gc.collect()
    name = ctypes.util.find_library("c")
    if name is None:
        return
    try:
        trim = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return
    trim(0)
