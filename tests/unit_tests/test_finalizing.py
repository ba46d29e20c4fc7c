"""What a collected object leaves to do runs off the collector's thread, never inside it.

The cyclic collector runs inside whatever allocation triggers it, on a thread that may
hold any lock; a finalizer taking that lock there deadlocked (seen in CI: a store's
summary saved over HTTP from inside httpcore's connection pool).
"""

from __future__ import annotations

import gc
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

from langchain_episodic._finalizing import finalize_elsewhere, wait_for_finalizers


class Owner:
    """Something a finalizer watches."""

    cycle: Any = None


def collect_inside(lock: threading.Lock, register: Callable[[Owner], object]) -> bool:
    """Hold ``lock``, drop a cyclic owner and collect; whether that returned within 10 s."""
    finished = threading.Event()

    def hold_and_collect() -> None:
        with lock:
            owner = Owner()
            owner.cycle = owner  # only the cyclic collector frees it
            register(owner)
            del owner
            gc.collect()
        finished.set()

    threading.Thread(target=hold_and_collect, daemon=True).start()
    return finished.wait(10)


def test_a_finalizer_needing_a_lock_the_collecting_thread_holds_runs_after_it() -> None:
    lock = threading.Lock()
    done: list[str] = []

    def needs_the_lock() -> None:
        with lock:
            done.append("saved")

    assert collect_inside(lock, lambda owner: finalize_elsewhere(owner, needs_the_lock))
    assert wait_for_finalizers(timeout=10)
    assert done == ["saved"]


def test_the_plain_finalizer_would_have_deadlocked_there() -> None:
    # What the test above guards against, shown with weakref.finalize itself, in a
    # child process (a thread stuck inside the collector leaves no collection to others).
    script = """
import gc, os, threading, weakref

lock = threading.Lock()
finished = threading.Event()

class Owner:
    pass

def needs_the_lock():
    with lock:
        pass

def hold_and_collect():
    with lock:
        owner = Owner()
        owner.cycle = owner
        weakref.finalize(owner, needs_the_lock)
        del owner
        gc.collect()
    finished.set()

threading.Thread(target=hold_and_collect, daemon=True).start()
print("finished" if finished.wait(5) else "deadlocked", flush=True)
os._exit(0)
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.splitlines() == ["deadlocked"]


def test_a_dropped_owner_is_finalized_at_once_and_a_finalizer_runs_once() -> None:
    done: list[str] = []
    owner = Owner()
    finalize_elsewhere(owner, done.append, "dropped")
    del owner  # its last reference: at once, here, as weakref.finalize does
    assert done == ["dropped"]
    owner = Owner()
    finalizer = finalize_elsewhere(owner, done.append, "closed")
    finalizer()
    assert not finalizer.alive
    owner.cycle = owner
    del owner
    gc.collect()
    assert wait_for_finalizers(timeout=10)
    assert done == ["dropped", "closed"]


def test_work_left_by_a_collection_is_done_before_the_interpreter_exits() -> None:
    script = """
import gc, sys
from langchain_episodic._finalizing import finalize_elsewhere

class Owner:
    pass

owner = Owner()
owner.cycle = owner
finalize_elsewhere(owner, lambda: print("finalized", flush=True))
del owner
gc.collect()
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.splitlines() == ["finalized"]
