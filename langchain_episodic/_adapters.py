"""Where `EpisodicMemory.as_retriever` and ``as_runnable`` find their factories.

The façade sits below the integrations, so it cannot import them; the package's
``__init__`` registers one factory per kind here, without importing the façade (which
would pull in numpy, Chroma and LangChain on ``import langchain_episodic``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

__all__ = ["ADAPTERS"]

ADAPTERS: dict[str, Callable[..., Any]] = {}
"""``kind -> factory(memory, **kwargs)``: ``"retriever"`` and ``"runnable"``."""
