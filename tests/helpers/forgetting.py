"""A small memory to forget from, with its clock, for the forgetting tests."""

from __future__ import annotations

from typing import Any

from langchain_episodic import EpisodicMemory
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.episodes import corpus

NOW = 1_000_000.0


def memory_with(count: int = 6, **kwargs: Any) -> EpisodicMemory:
    """``corpus(count)`` in memory, the clock standing at ``NOW``."""
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW, **kwargs)
    memory.record_many(corpus(count))
    return memory
