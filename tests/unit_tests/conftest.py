"""Fixtures shared by the unit tests."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory
from tests.helpers.episodes import DAY


@pytest.fixture
def memory() -> EpisodicMemory:
    """An empty in-process memory whose clock stands still at day 100.

    A module whose tests need other data or another clock overrides it, saying why.
    """
    return EpisodicMemory(clock=lambda: 100 * DAY)
