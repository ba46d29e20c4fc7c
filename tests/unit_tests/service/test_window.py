"""The short-term window: refilled after an erasure from its spares, as a fresh open sees it."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.model.episode import Episode
from langchain_episodic.service.window import ShortTermWindow
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import EpisodeStore
from tests.helpers.forgetting import NOW
from tests.unit_tests.factories import make_episode


def episodes(count: int, start: int = 0) -> list[Episode]:
    return [
        make_episode(episode_id=f"ep-{i}", description=f"task number {i}", timestamp=float(i))
        for i in range(start, start + count)
    ]


def ids(window: object) -> list[str]:
    return [e.episode_id for e in window]  # type: ignore[attr-defined]


class CountingStore(InMemoryEpisodeStore):
    """Counts reads of the last records by number (what the spares save)."""

    def __init__(self) -> None:
        super().__init__()
        self.latest_calls = 0

    def latest(self, namespace: str, n: int, total: int) -> list[Episode]:
        self.latest_calls += 1
        return super().latest(namespace, n, total)


def fresh_window(store: EpisodeStore, limit: int = 3) -> list[str]:
    return ids(EpisodicMemory(store=store, clock=lambda: NOW, short_term_limit=limit).short_term)


def test_a_full_window_pushes_its_oldest_episode_into_the_spares() -> None:
    window = ShortTermWindow(episodes(5), maxlen=3)
    assert ids(window) == ["ep-2", "ep-3", "ep-4"]
    assert ids(window.spares) == ["ep-0", "ep-1"]
    window.extend(episodes(2, start=5))
    window.append(episodes(1, start=7)[0])
    assert ids(window) == ["ep-5", "ep-6", "ep-7"]
    assert ids(window.spares) == ["ep-2", "ep-3", "ep-4"]  # as many as the window holds
    window.clear()
    assert not window
    assert not window.spares


def test_a_window_of_none_keeps_nothing() -> None:
    window = ShortTermWindow(episodes(3), maxlen=0)
    window.extend(episodes(2, start=3))
    assert not window
    assert not window.spares


@pytest.mark.parametrize("erased", [["ep-9"], ["ep-9", "ep-8"], ["ep-8", "ep-6", "ep-2"]])
def test_erasing_recent_episodes_leaves_the_window_a_fresh_open_shows(erased: list[str]) -> None:
    store = CountingStore()
    memory = EpisodicMemory(store=store, clock=lambda: NOW, short_term_limit=3)
    memory.record_many(episodes(10))
    reads = store.latest_calls
    memory.forget(erased, reason="user asked")
    assert store.latest_calls == reads  # refilled from the spares, not a read by number
    assert ids(memory.short_term) == fresh_window(store)


def test_the_spares_running_out_reads_the_store_again() -> None:
    store = CountingStore()
    memory = EpisodicMemory(store=store, clock=lambda: NOW, short_term_limit=3)
    memory.record_many(episodes(10))
    for newest in range(9, 2, -1):  # more erasures of the newest than the spares cover
        memory.forget([f"ep-{newest}"], reason="user asked")
        assert ids(memory.short_term) == fresh_window(store)
    memory.record(make_episode(episode_id="late", description="a later task", timestamp=20.0))
    memory.forget(["late"], reason="user asked")
    assert ids(memory.short_term) == fresh_window(store) == ["ep-0", "ep-1", "ep-2"]


def test_a_spare_another_memory_erased_is_not_brought_into_the_window() -> None:
    store = InMemoryEpisodeStore()
    memory = EpisodicMemory(store=store, clock=lambda: NOW, short_term_limit=3)
    memory.record_many(episodes(8))
    other = EpisodicMemory(store=store, clock=lambda: NOW, short_term_limit=3)
    other.forget(["ep-4"], reason="user asked")  # the newest spare of the first memory
    memory.forget(["ep-7"], reason="user asked")
    assert ids(memory.short_term) == fresh_window(store) == ["ep-3", "ep-5", "ep-6"]


def test_forget_all_empties_the_window_and_its_spares() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW, short_term_limit=3)
    memory.record_many(episodes(8))
    memory.forgetting.forget_all(reason="user asked")
    assert memory.short_term == ()
    memory.record_many(episodes(2, start=20))
    assert ids(memory.short_term) == ["ep-20", "ep-21"]


def test_the_window_of_a_folder_after_erasing_its_newest_is_a_fresh_opens(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "folder")
    memory = EpisodicMemory(store=store, clock=lambda: NOW, short_term_limit=3)
    memory.record_many(episodes(6))
    memory.record(make_episode(episode_id="newest", description="the newest task"))
    memory.forget(["newest"], reason="user asked")
    memory.forget(["ep-5", "ep-1"], reason="user asked")
    seen = ids(memory.short_term)
    store.close()
    reopened = ChromaEpisodeStore(path=tmp_path / "folder")
    assert seen == fresh_window(reopened) == ["ep-2", "ep-3", "ep-4"]
    reopened.close()
