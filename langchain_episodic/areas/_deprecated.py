"""The façade's old spellings: each warns once per call and forwards to its new home."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

__all__ = ["deprecated_call", "moved_method", "moved_property"]


def deprecated_call(old: str, new: str) -> None:
    """Warn that ``memory.<old>`` is spelled ``memory.<new>`` now."""
    warnings.warn(
        f"EpisodicMemory.{old} is deprecated and will be removed in the next release: "
        f"use memory.{new}",
        DeprecationWarning,
        stacklevel=3,
    )


def moved_method(old: str, area: str, name: str) -> Callable[..., Any]:
    """A method ``old`` of the façade that forwards to ``memory.<area>.<name>``."""

    def method(self: Any, /, *args: Any, **kwargs: Any) -> Any:
        deprecated_call(f"{old}()", f"{area}.{name}()")
        return getattr(getattr(self, area), name)(*args, **kwargs)

    method.__name__ = method.__qualname__ = old
    method.__doc__ = (
        f"Deprecated: use ``memory.{area}.{name}(...)`` (same arguments); removed in the "
        "next release."
    )
    return method


def moved_property(old: str, area: str, name: str) -> property:
    """A property ``old`` of the façade that reads ``memory.<area>.<name>``."""

    def read(self: Any) -> Any:
        deprecated_call(old, f"{area}.{name}")
        return getattr(getattr(self, area), name)

    read.__name__ = old
    read.__doc__ = f"Deprecated: use ``memory.{area}.{name}``; removed in the next release."
    return property(read)
