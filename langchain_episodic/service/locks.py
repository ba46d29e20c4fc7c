"""A lock with a shared side (writes of new records) and an exclusive one (erasures)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from types import TracebackType

__all__ = ["WritesLock"]


class WritesLock:
    """Records share it; an erasure holds it alone.

    ``with lock:`` takes the exclusive side (reentrant, like an ``RLock``);
    ``with lock.shared():`` the shared side, which any number of threads hold at once.
    A thread waiting for the exclusive side keeps new sharers out, so erasures are not
    starved by a stream of records. A thread that holds the exclusive side may take the
    shared one (it already excludes everyone), and a thread that holds the shared side
    may take it again; asking for the exclusive side while holding the shared one would
    wait for itself, so it raises.

    Examples:
        >>> lock = WritesLock()
        >>> with lock.shared(), lock.shared():
        ...     pass
        >>> with lock, lock.shared():
        ...     pass
    """

    def __init__(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._owner: int | None = None
        self._depth = 0
        self._waiting = 0
        # Shared holds per thread: a thread's nested shared() never waits.
        self._sharers: dict[int, int] = {}

    def __enter__(self) -> WritesLock:
        me = threading.get_ident()
        with self._changed:
            if self._owner == me:
                self._depth += 1
                return self
            if me in self._sharers:
                msg = "the exclusive side was asked for by a thread that holds the shared side"
                raise RuntimeError(msg)
            self._waiting += 1
            try:
                self._changed.wait_for(lambda: self._owner is None and not self._sharers)
            finally:
                self._waiting -= 1
            self._owner, self._depth = me, 1
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        with self._changed:
            if self._owner != threading.get_ident():
                raise RuntimeError("the exclusive side is not held by this thread")
            self._depth -= 1
            if not self._depth:
                self._owner = None
                self._changed.notify_all()

    @contextmanager
    def shared(self) -> Iterator[None]:
        """Hold the shared side for the ``with`` block."""
        me = threading.get_ident()
        with self._changed:
            if self._owner != me and me not in self._sharers:
                self._changed.wait_for(lambda: self._owner is None and not self._waiting)
            self._sharers[me] = self._sharers.get(me, 0) + 1
        try:
            yield
        finally:
            with self._changed:
                left = self._sharers[me] - 1
                if left:
                    self._sharers[me] = left
                else:
                    del self._sharers[me]
                    if not self._sharers:
                        self._changed.notify_all()
