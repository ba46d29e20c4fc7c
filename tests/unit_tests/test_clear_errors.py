"""Odd input gets a typed error that names what was wrong, never a raw Python error."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory, EpisodicValueError, episode_from_tests
from langchain_episodic.stores import InMemoryEpisodeStore


def _nested(depth: int) -> list[object]:
    value: list[object] = []
    for _ in range(depth):
        value = [value]
    return value


@pytest.mark.parametrize("field", ["category", "outcome"])
def test_a_deeply_nested_filter_is_refused_by_name(field: str) -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore())
    memory.record(episode_from_tests("Parse a config file", "def parse(): ...", 1, 1))
    with pytest.raises(EpisodicValueError, match=f"EpisodeFilter.{field}="):
        memory.recall("Parse a config file", **{field: _nested(10_000)})


@pytest.mark.parametrize("reading", [float("nan"), float("inf"), "soon", None])
def test_a_clock_that_returns_no_finite_seconds_is_named(reading: object) -> None:
    readings: list[object] = [1_700_000_000.0]
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: readings[0])
    memory.record(episode_from_tests("Parse a config file", "def parse(): ...", 1, 1))
    readings[0] = reading
    with pytest.raises(EpisodicValueError, match="the memory's clock returned"):
        memory.now()
    with pytest.raises(EpisodicValueError, match="the memory's clock returned"):
        memory.runs.note("run", [], "Parse a config file")
