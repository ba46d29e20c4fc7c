"""Finalizers whose work never runs on the thread the garbage collector interrupted.

A ``weakref.finalize`` callback called by the cyclic garbage collector runs wherever
the collector happens to run: inside any allocation of any thread, which may be
holding a lock at that moment (this package's own, an HTTP client's connection pool,
Chroma's). A callback that takes a lock or does I/O there can deadlock on a lock its
own thread holds: seen with a store's summary saved over HTTP from inside
``httpcore``'s pool, and a folder's lock released from inside the lock registry. So
`finalize_elsewhere` hands the work of an object the collector frees to one
daemon thread, through a queue that is safe to fill from there
(`queue.SimpleQueue`): it is done shortly after, not during the collection.

An object freed by its last reference going away (``del store``, the usual case) is
finalized at once, where that happened, as with ``weakref.finalize``; so is one whose
finalizer is called explicitly (a ``close()``), and at the interpreter's exit (the
queue is drained there too, so nothing is left undone).

Examples:
    >>> import gc
    >>> class Owner:
    ...     pass
    >>> done = []
    >>> owner = Owner()
    >>> finalizer = finalize_elsewhere(owner, done.append, "closed")
    >>> finalizer(), done  # explicitly: here and now
    (None, ['closed'])
    >>> owner = Owner()
    >>> finalizer = finalize_elsewhere(owner, done.append, "collected")
    >>> owner.cycle = owner  # only the cyclic collector can free it
    >>> del owner; _ = gc.collect()
    >>> wait_for_finalizers(timeout=10), done
    (True, ['closed', 'collected'])
"""

from __future__ import annotations

import atexit
import gc
import logging
import os
import queue
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

__all__ = ["finalize_elsewhere", "wait_for_finalizers"]

_log = logging.getLogger(__name__)

if TYPE_CHECKING:
    _Finalize = weakref.finalize[..., Any]
else:
    _Finalize = weakref.finalize

_jobs: queue.SimpleQueue[Callable[[], Any]] = queue.SimpleQueue()
_thread: threading.Thread | None = None
_start_lock = threading.Lock()
_collecting_on: int | None = None  # the thread the cyclic collector runs on, if it runs


def _note_collection(phase: str, info: dict[str, Any]) -> None:
    global _collecting_on  # noqa: PLW0603 - one collection at a time in a process
    _collecting_on = threading.get_ident() if phase == "start" else None


class _Collected(_Finalize):
    """A finalizer that leaves its work to the worker when the collector calls it."""

    def __call__(self, _: object = None) -> Any:
        # A weak reference's death calls with it; a caller (or the exit) without.
        collected = _ is not None and _collecting_on == threading.get_ident()
        if not collected or not threading.main_thread().is_alive():
            return super().__call__()
        # Still registered until the worker calls it: run once, whoever comes first.
        _jobs.put(super().__call__)  # SimpleQueue.put is safe inside the collector
        return None


def _work() -> None:
    while True:
        job = _jobs.get()
        try:
            job()
        except Exception:  # the work of a finalizer is best effort, as it was inline
            _log.warning("a deferred finalizer failed", exc_info=True)


def _ensure_worker() -> None:
    global _thread  # noqa: PLW0603 - one worker per process
    with _start_lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_work, name="episodic-finalizers", daemon=True)
            _thread.start()


def finalize_elsewhere(owner: object, func: Callable[..., Any], *args: Any) -> _Finalize:
    """Like ``weakref.finalize(owner, func, *args)``, but never on the collector's thread.

    Args:
        owner: The object whose collection runs ``func``.
        func: The work left to do; may take locks and do I/O.
        *args: Its arguments (held strongly: they must not refer to ``owner``).

    Returns:
        The finalizer: call it to run ``func`` now, here (once); ``detach()`` as usual.
    """
    _ensure_worker()  # started here, never from inside the collector
    return _Collected(owner, func, *args)


def wait_for_finalizers(timeout: float | None = None) -> bool:
    """Wait until every finalizer the collector deferred so far has run.

    Returns:
        ``False`` if ``timeout`` seconds passed first.
    """
    _ensure_worker()
    done = threading.Event()
    _jobs.put(done.set)  # one worker, first in first out: the earlier ones ran
    return done.wait(timeout)


def _run_what_is_left() -> None:
    # At exit the worker (a daemon) may never get to the queue: run it here.
    while True:
        try:
            job = _jobs.get_nowait()
        except queue.Empty:
            return
        try:
            job()
        except Exception:
            _log.warning("a deferred finalizer failed at exit", exc_info=True)


def _after_fork_in_child() -> None:
    global _jobs, _thread, _start_lock  # noqa: PLW0603 - the child's own
    _jobs = queue.SimpleQueue()  # the parent's pending work is the parent's to do
    _thread = None  # the parent's worker did not come along: the next use starts one
    _start_lock = threading.Lock()


gc.callbacks.append(_note_collection)
atexit.register(_run_what_is_left)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
