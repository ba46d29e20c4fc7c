"""The cap on namespaces a store holds open, and the reopen that enforces it."""

from __future__ import annotations

import threading

import pytest

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.stores.chroma.open_namespaces import (
    DEFAULT_OPEN_NAMESPACES,
    OpenNamespaces,
    open_namespace_cap,
)


def test_the_default_cap_fits_the_descriptor_limit_and_stays_below_chromas_cache() -> None:
    assert open_namespace_cap(None, None) == DEFAULT_OPEN_NAMESPACES
    assert open_namespace_cap(None, 1_000_000) == DEFAULT_OPEN_NAMESPACES
    for limit in (256, 1024, 4096):
        cap = open_namespace_cap(None, limit)
        assert 1 <= cap <= DEFAULT_OPEN_NAMESPACES
        assert 2 * cap < limit // 5  # two indexes a namespace, below Chroma's eviction
    assert open_namespace_cap(None, 100) == 1  # never 0, however low the limit


@pytest.mark.parametrize("bad", [0, -3, 2.5, "10", True])
def test_a_bad_cap_is_refused_by_name(bad: object) -> None:
    with pytest.raises(EpisodicValueError, match="max_open_namespaces"):
        open_namespace_cap(bad, None)  # type: ignore[arg-type]


def test_the_client_is_reopened_when_one_more_namespace_than_the_cap_is_opened() -> None:
    reopened: list[frozenset[str]] = []
    opened = OpenNamespaces(3, reopen=lambda: reopened.append(opened.names))
    for name in ("a", "b", "c", "a", "b"):
        opened.admit(name)
    assert reopened == []  # already open: no reopen
    opened.admit("d")
    assert reopened == [frozenset({"a", "b", "c"})]
    assert opened.names == {"d"}
    assert opened.reopens == 1


def test_no_reopen_while_refused_or_another_thread_is_inside_an_operation() -> None:
    reopened: list[int] = []
    allowed = [False]
    opened = OpenNamespaces(1, reopen=lambda: reopened.append(1), may_reopen=lambda: allowed[0])
    opened.admit("a")
    opened.admit("b")  # refused (another store shares the client): opened beyond the cap
    assert (reopened, opened.names) == ([], {"a", "b"})

    allowed[0] = True
    inside, leave = threading.Event(), threading.Event()

    def busy() -> None:
        with opened.operation():
            inside.set()
            leave.wait(10)

    worker = threading.Thread(target=busy)
    worker.start()
    inside.wait(10)
    with opened.operation():
        opened.admit("c")  # the worker is inside an operation: not now
    assert reopened == []
    leave.set()
    worker.join(10)
    with opened.operation(), opened.operation():  # nested on one thread: still alone
        opened.admit("d")
    assert reopened == [1]
    assert opened.names == {"d"}


def test_an_operation_waits_for_a_reopen_to_finish() -> None:
    started, release = threading.Event(), threading.Event()
    order: list[str] = []

    def slow_reopen() -> None:
        started.set()
        release.wait(10)
        order.append("reopened")

    opened = OpenNamespaces(1, reopen=slow_reopen)
    opened.admit("a")
    admitting = threading.Thread(target=opened.admit, args=("b",))
    admitting.start()
    started.wait(10)

    def operate() -> None:
        with opened.operation():
            order.append("operation")

    other = threading.Thread(target=operate)
    other.start()
    other.join(0.2)
    assert order == []  # blocked behind the reopen
    release.set()
    admitting.join(10)
    other.join(10)
    assert order == ["reopened", "operation"]
