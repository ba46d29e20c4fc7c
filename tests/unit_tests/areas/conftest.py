"""Fixtures of the areas' tests (``memory.runs``, ``.journal``, ...)."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory
from tests.unit_tests.factories import logins_memory


@pytest.fixture
def memory() -> EpisodicMemory:
    """Two login episodes, the clock standing still (a module may override it, saying why)."""
    return logins_memory()
