"""A bounded background worker: queued jobs run on one daemon thread, off the hot path.

`BackgroundWorker` knows nothing of what its jobs do: it runs each callable it
is given, in order, on a thread of its own that starts with the first job. At most
``limit`` jobs are unfinished (waiting or running) at a time; one more is refused,
and the caller decides what refusing means (the middleware logs a dropped
reflection). `flush` waits for the jobs queued so far,
`close` flushes and stops the thread.

The thread is a daemon, so a job that hangs (a slow model, say) never holds the
interpreter's exit: an ``atexit`` hook closes every worker still alive, giving its
pending jobs `EXIT_FLUSH_TIMEOUT` seconds, then abandons them with a warning.

Examples:
    >>> done = []
    >>> worker = BackgroundWorker(limit=2)
    >>> worker.submit(lambda: done.append(1))
    True
    >>> worker.close(timeout=10), done
    (True, [1])
    >>> worker.submit(lambda: done.append(2))  # closed: refused
    False
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
import weakref
from collections import deque
from collections.abc import Callable

__all__ = ["EXIT_FLUSH_TIMEOUT", "BackgroundWorker"]

_log = logging.getLogger(__name__)

EXIT_FLUSH_TIMEOUT = 5.0
"""Seconds the interpreter's exit waits for each worker's jobs still pending.

Read at exit: every worker still alive gets this long to finish what it is doing;
jobs still pending after that are abandoned, with a warning.
"""


class BackgroundWorker:
    """One lazily started daemon thread running queued jobs; at most ``limit`` unfinished.

    A job is a callable without arguments that catches its own errors; one that raises
    anyway is logged and the worker goes on with the next.

    Args:
        limit: Jobs unfinished (queued and running) at most; validated by the caller.
        name: The thread's name, as threading and logs show it.
        jobs: What the jobs are, in the plural, for the log lines (``"reflections"``).
        logger: Where the worker's warnings go; this module's logger when ``None``, so
            that a caller can keep them under its own name.
    """

    def __init__(
        self,
        limit: int,
        *,
        name: str = "episodic-background",
        jobs: str = "jobs",
        logger: logging.Logger | None = None,
    ) -> None:
        self._limit = limit
        self._name = name
        self._what = jobs
        self._log = _log if logger is None else logger
        self._jobs: deque[Callable[[], None]] = deque()
        self._unfinished = 0  # queued and running
        self._condition = threading.Condition()
        self._thread: threading.Thread | None = None
        self.closed = False
        """Whether `close` was called: every job submitted since is refused."""

    def submit(self, job: Callable[[], None]) -> bool:
        """Queue ``job``, starting the thread on the first one.

        Args:
            job: Runs on the worker's thread; should catch its own errors.

        Returns:
            Whether it was queued: ``False`` when the worker is closed or ``limit``
            jobs are unfinished.
        """
        with self._condition:
            if self.closed or self._unfinished >= self._limit:
                return False
            self._jobs.append(job)
            self._unfinished += 1
            if self._thread is None:
                self._thread = threading.Thread(target=self._work, name=self._name, daemon=True)
                self._thread.start()
                _LIVE_WORKERS.add(self)
            self._condition.notify_all()
            return True

    def _work(self) -> None:
        while True:
            with self._condition:
                self._condition.wait_for(lambda: bool(self._jobs) or self.closed)
                if not self._jobs:
                    return
                job = self._jobs.popleft()
            try:
                job()
            except Exception:  # pragma: no cover - jobs catch their own errors
                self._log.warning("one of the background %s failed", self._what, exc_info=True)
            finally:
                with self._condition:
                    self._unfinished -= 1
                    self._condition.notify_all()

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for the jobs queued so far.

        Args:
            timeout: Seconds to wait at most; ``None`` waits until they are done.

        Returns:
            Whether none is unfinished any more (``False``: the timeout passed first).
        """
        with self._condition:
            return self._condition.wait_for(lambda: self._unfinished == 0, timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Refuse new jobs, flush the queued ones, then stop the thread. Safe to call twice.

        Jobs still queued (not started) when ``timeout`` passes are dropped, with a
        warning; a job running by then is left to finish on its own.

        Args:
            timeout: Seconds to wait at most, for the flush and the thread together;
                ``None`` waits until every job is done.

        Returns:
            Whether every queued job finished (``False``: the rest were dropped).
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._condition:
            self.closed = True
            self._condition.notify_all()
        done = self.flush(timeout)
        with self._condition:
            dropped = len(self._jobs)
            self._unfinished -= dropped
            self._jobs.clear()
            self._condition.notify_all()
        if dropped:
            self._log.warning("%d pending %s dropped on close", dropped, self._what)
        thread = self._thread
        if thread is not None and thread is not threading.current_thread():
            thread.join(None if deadline is None else max(0.0, deadline - time.monotonic()))
        return done


# Workers whose thread started, so that the exit hook can close them; weak, so that a
# worker nobody holds any more is not kept alive for it.
_LIVE_WORKERS: weakref.WeakSet[BackgroundWorker] = weakref.WeakSet()


@atexit.register
def _close_live_workers() -> None:  # pragma: no cover - runs at interpreter exit
    for worker in list(_LIVE_WORKERS):
        # The module's value at exit, so that setting it before then takes effect.
        if not worker.close(EXIT_FLUSH_TIMEOUT):
            worker._log.warning("background %s still running at exit were abandoned", worker._what)
