"""``QuarantineLog`` shared by two memories: no event lost, no release undone by a slower clock."""

from __future__ import annotations

from langchain_episodic import (
    EpisodicMemory,
)
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import make_episode


def test_two_memories_never_lose_each_others_quarantine_events() -> None:
    # Equal clocks and repeated events: the stored log is taken as it is, then added to.
    store = InMemoryEpisodeStore()
    first = EpisodicMemory(store=store, clock=lambda: 100.0)
    first.record_many([make_episode(episode_id="x"), make_episode(episode_id="y")])
    first.quarantine.add("x", "bad")
    second = EpisodicMemory(store=store, clock=lambda: 100.0)
    first.quarantine.release("x", "fine")
    first.quarantine.add("x", "bad after all")
    second.quarantine.add("y", "bad too")
    fresh = EpisodicMemory(store=store)
    assert [(e.episode_id, e.action) for e in fresh.quarantine.log()] == [
        ("x", "quarantine"),
        ("x", "release"),
        ("x", "quarantine"),
        ("y", "quarantine"),
    ]
    assert set(fresh.quarantine.list()) == {"x", "y"}


def test_a_slower_clock_elsewhere_cannot_undo_a_release() -> None:
    store = InMemoryEpisodeStore()
    ahead = EpisodicMemory(store=store, clock=lambda: 200.0)
    ahead.record_many([make_episode(episode_id="x"), make_episode(episode_id="y")])
    ahead.quarantine.add("x", "bad")
    behind = EpisodicMemory(store=store, clock=lambda: 100.0)
    behind.quarantine.release("x", "fine")
    ahead.quarantine.add("y", "bad")
    assert set(EpisodicMemory(store=store).quarantine.list()) == {"y"}
