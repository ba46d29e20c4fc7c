"""``QuarantineLog`` shared by two memories: no event lost, no release undone by a slower clock."""

from __future__ import annotations

import pytest

from langchain_episodic import (
    EpisodicMemory,
    EpisodicValueError,
    episode_from_tests,
)
from langchain_episodic.model.episode import EpisodeSource
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.episodes import corpus
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


# ------------------------------------------------------------------ memory.quarantine
# ``memory.quarantine``: an auditable soft delete; and who recorded an episode.

DAY = 86_400.0


# Overrides conftest's: the 12 corpus episodes, clock at day 10 (the quarantine time asserted).
@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: 10 * DAY)
    memory.record_many(corpus(12))
    return memory


def test_quarantined_episode_leaves_recall_but_not_history(memory: EpisodicMemory) -> None:
    query = "Implement a login form with email validation"
    # The article's ranking returns every candidate: what quarantine hides shows.
    assert memory.recall(query, top_k=1, ranking="article")[0].episode.episode_id == "ep-0"
    assert memory.quarantine.add("ep-0", "solution leaked a secret", by="security") == 1
    hits = memory.recall(query, top_k=12, fetch_k=12, ranking="article")
    assert "ep-0" not in {hit.episode.episode_id for hit in hits}
    assert len(hits) == 11
    assert next(e.episode_id for e in memory.episodes()) == "ep-0"
    assert len(memory) == 12
    event = memory.quarantine.list()["ep-0"]
    assert (event.reason, event.by, event.at, event.action) == (
        "solution leaked a secret",
        "security",
        10 * DAY,
        "quarantine",
    )


def test_recall_still_returns_fetch_k_candidates_around_quarantined_ones(
    memory: EpisodicMemory,
) -> None:
    query = "Fix the login bug where sessions expire too early"
    before = [
        h.episode.episode_id for h in memory.recall(query, top_k=4, fetch_k=4, ranking="article")
    ]
    memory.quarantine.add(before[:2], "bad run")
    after = memory.recall(query, top_k=4, fetch_k=4, ranking="article")
    assert len(after) == 4
    assert not {h.episode.episode_id for h in after} & set(before[:2])


def test_short_term_hides_quarantined_episodes(memory: EpisodicMemory) -> None:
    assert [e.episode_id for e in memory.short_term] == [f"ep-{i}" for i in range(7, 12)]
    memory.quarantine.add(["ep-9", "ep-11"], "flaky tests")
    assert [e.episode_id for e in memory.short_term] == ["ep-7", "ep-8", "ep-10"]


def test_unknown_ids_and_empty_reasons_change_nothing(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match=r"episode_ids=\['missing'\]"):
        memory.quarantine.add(["ep-1", "missing"], "typo")
    with pytest.raises(EpisodicValueError, match=r"QuarantineEvent\.reason=''"):
        memory.quarantine.add("ep-1", "")
    with pytest.raises(EpisodicValueError, match=r"episode_ids\[0\]=3"):
        memory.quarantine.add([3], "not a string")  # type: ignore[list-item]
    with pytest.raises(EpisodicValueError, match=r"QuarantineEvent\.by=''"):
        memory.quarantine.add("ep-1", "why", by="")
    assert memory.quarantine.log() == ()
    assert memory.quarantine.release("ep-1", "was never quarantined") == 0
    assert memory.quarantine.log() == ()


async def test_async_twins(memory: EpisodicMemory) -> None:
    assert await memory.quarantine.aadd(["ep-1", "ep-2"], "async") == 2
    assert await memory.quarantine.arelease("ep-2", "async") == 1
    assert set(memory.quarantine.list()) == {"ep-1"}


def test_a_damaged_log_is_an_error_not_a_silent_release(memory: EpisodicMemory) -> None:
    memory.store.write_state("default", "quarantine", '[{"episode_id": "ep-1"}]')
    with pytest.raises(EpisodicValueError, match="quarantine log is damaged"):
        EpisodicMemory(store=memory.store)
    memory.store.write_state("default", "quarantine", "{not json")
    with pytest.raises(EpisodicValueError, match="quarantine log is damaged"):
        EpisodicMemory(store=memory.store)


def test_episode_from_tests_carries_the_source(memory: EpisodicMemory) -> None:
    episode = episode_from_tests(
        "Add a health check endpoint", "def health(): ...", 3, 3, source=EpisodeSource("ci")
    )
    memory.record(episode)
    assert memory.store.get("default", [episode.episode_id])[episode.episode_id].source == (
        EpisodeSource(agent="ci")
    )


def test_quarantine_of_something_not_ids_names_the_argument(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match="episode_ids=5"):
        memory.quarantine.add(5, "why")  # type: ignore[arg-type]
