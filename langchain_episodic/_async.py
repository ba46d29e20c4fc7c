"""Async twins: one executor hop around a sync method, with no body written twice."""

from __future__ import annotations

import functools
from collections.abc import Callable, Coroutine
from typing import Any, ParamSpec, TypeVar

__all__ = ["async_twin", "in_executor"]

_P = ParamSpec("_P")
_R = TypeVar("_R")


def async_twin(method: Callable[_P, _R]) -> Callable[_P, Coroutine[Any, Any, _R]]:
    """The ``a``-prefixed twin of ``method``: the same call, in LangChain's executor.

    The arguments are bound on the caller's side (so a generator passed in is read in
    the executor, in one go) and the call runs under ``run_in_executor``, which keeps
    the caller's context variables (LangChain callbacks and config).

    Examples:
        >>> import asyncio
        >>> class Memory:
        ...     def count(self, n: int) -> int:
        ...         return n + 1
        ...     acount = async_twin(count)
        >>> asyncio.run(Memory().acount(1)), Memory.acount.__name__
        (2, 'acount')
    """

    @functools.wraps(method)
    async def twin(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        return await in_executor(method, *args, **kwargs)

    owner, _, name = method.__qualname__.rpartition(".")
    twin.__name__ = f"a{name}"
    twin.__qualname__ = f"{owner}.a{name}" if owner else f"a{name}"
    twin.__doc__ = f"Async twin of `{method.__name__}`, with the same arguments."
    return twin


async def in_executor(function: Callable[_P, _R], *args: _P.args, **kwargs: _P.kwargs) -> _R:
    """``function(*args, **kwargs)`` in the default executor, with the caller's context.

    LangChain's ``run_in_executor``, imported on the first call: LangChain's runnables
    cost a process that never awaits (the command line) a third of a second to import.
    """
    from langchain_core.runnables.config import run_in_executor  # noqa: PLC0415

    return await run_in_executor(None, function, *args, **kwargs)
