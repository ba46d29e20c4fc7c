"""``WritesLock``: records share it, an erasure holds it alone, and neither starves."""

from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from langchain_episodic.service.locks import WritesLock


def _started(target: Callable[[], object]) -> threading.Thread:
    thread = threading.Thread(target=target, daemon=True)
    thread.start()
    return thread


def _holding_shared(lock: WritesLock, held: threading.Event, release: threading.Event) -> None:
    with lock.shared():
        held.set()
        assert release.wait(10.0)


def test_many_threads_hold_the_shared_side_at_once() -> None:
    lock, release = WritesLock(), threading.Event()
    held = [threading.Event() for _ in range(3)]
    threads = [_started(lambda h=h: _holding_shared(lock, h, release)) for h in held]
    assert all(h.wait(10.0) for h in held)  # each got in while the others held it
    release.set()
    for thread in threads:
        thread.join(10.0)
        assert not thread.is_alive()


def test_the_exclusive_side_waits_for_every_sharer_and_keeps_new_ones_out() -> None:
    lock = WritesLock()
    held, release = threading.Event(), threading.Event()
    sharer = _started(lambda: _holding_shared(lock, held, release))
    assert held.wait(10.0)
    erased = threading.Event()
    eraser = _started(lambda: (lock.__enter__(), erased.set(), lock.__exit__(None, None, None)))
    assert not erased.wait(0.2)  # a record is still writing
    # A record arriving now waits behind the waiting erasure (no starvation).
    late_held, late_release = threading.Event(), threading.Event()
    late = _started(lambda: _holding_shared(lock, late_held, late_release))
    assert not late_held.wait(0.2)
    release.set()
    assert erased.wait(10.0)
    assert late_held.wait(10.0)
    late_release.set()
    for thread in (sharer, eraser, late):
        thread.join(10.0)
        assert not thread.is_alive()


def test_a_sharer_waits_while_the_exclusive_side_is_held() -> None:
    lock = WritesLock()
    held, release = threading.Event(), threading.Event()
    with lock:
        sharer = _started(lambda: _holding_shared(lock, held, release))
        assert not held.wait(0.2)
    assert held.wait(10.0)
    release.set()
    sharer.join(10.0)
    assert not sharer.is_alive()


def test_the_same_thread_nests_both_sides_in_the_order_that_cannot_deadlock() -> None:
    lock = WritesLock()
    with lock, lock, lock.shared(), lock.shared():
        pass
    with lock.shared(), lock.shared():
        pass
    # Released in full: another thread gets the exclusive side at once.
    done = threading.Event()
    _started(lambda: (lock.__enter__(), done.set(), lock.__exit__(None, None, None)))
    assert done.wait(10.0)


def test_the_exclusive_side_asked_for_under_the_shared_one_is_refused() -> None:
    lock = WritesLock()
    with lock.shared(), pytest.raises(RuntimeError, match="holds the shared side"):
        lock.__enter__()
    with lock:  # the refusal left nothing held
        pass


def test_a_sharer_keeps_its_place_while_an_erasure_waits() -> None:
    # A thread already sharing takes the shared side again without waiting for the
    # waiting erasure, which waits for that very thread.
    lock = WritesLock()
    inside, go_on, nested = threading.Event(), threading.Event(), threading.Event()

    def record() -> None:
        with lock.shared():
            inside.set()
            assert go_on.wait(10.0)
            with lock.shared():
                nested.set()

    recorder = _started(record)
    assert inside.wait(10.0)
    eraser = _started(lambda: (lock.__enter__(), lock.__exit__(None, None, None)))
    assert not nested.wait(0.1)
    go_on.set()
    assert nested.wait(10.0)
    for thread in (recorder, eraser):
        thread.join(10.0)
        assert not thread.is_alive()


def test_releasing_a_side_this_thread_does_not_hold_is_an_error() -> None:
    lock = WritesLock()
    with pytest.raises(RuntimeError, match="not held by this thread"):
        lock.__exit__(None, None, None)
