"""Namespaces, fuzzed: each name is refused with a clear error or fully isolated (issue 5).

Several memories share one in-process store, one per drawn namespace name. Each
records an episode under the same ``episode_id`` with its own content; every public
read of every other namespace must see nothing of it.
"""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_episodic import (
    ChromaEpisodeStore,
    Episode,
    EpisodicMemory,
    EpisodicValueError,
    TaskCategory,
)
from tests.unit_tests.factories import make_episode
from tests.unit_tests.fuzzing import fuzz_settings

TRICKY = [
    "",
    " ",
    "\t\n",
    "default",
    "Default",
    "DEFAULT",
    " default",
    "$or",
    "$and",
    "$in",
    "$ne",
    '{"$or": []}',
    "a/b",
    "a_b",
    "a b",
    "a-b",
    "a.b",
    "a__b",
    "_a_b_",
    "ns",
    "episodes",
    "\x00",
    "a\x00b",
    "é",
    "e\u0301",
    "名前",
    "🦜🔗",
    "x" * 40 + "1",
    "x" * 40 + "2",
    "y" * 5000,
    "..",
    "1.2.3.4",
]

NAMES = st.one_of(
    st.sampled_from(TRICKY), st.text(max_size=12), st.text(min_size=300, max_size=600)
)
CATEGORIES = list(TaskCategory)


def own_episode(index: int) -> Episode:
    # The same id everywhere, different content: a shared namespace would conflict.
    return make_episode(
        episode_id="same-id",
        description=f"Implement login form variant {index}",
        category=CATEGORIES[index % len(CATEGORIES)],
        reward=index / 10,
        solution=f"solution {index}",
    )


@given(st.lists(NAMES, min_size=2, max_size=4, unique=True))
@fuzz_settings(40)
def test_every_namespace_is_refused_clearly_or_fully_isolated(names: list[str]) -> None:
    store = ChromaEpisodeStore()
    memories: dict[str, EpisodicMemory] = {}
    for name in names:
        if not name.strip():  # only blank names are refused, by name
            with pytest.raises(EpisodicValueError, match=r"^namespace=.* must be a non-empty"):
                EpisodicMemory(store=store, namespace=name)
            continue
        memories[name] = EpisodicMemory(store=store, namespace=name, clock=lambda: 0.0)
    owned = {name: own_episode(i) for i, name in enumerate(memories)}
    for name, memory in memories.items():
        assert memory.record(owned[name]) is True
    assert set(store.namespaces()) >= set(memories)
    for name, memory in memories.items():
        mine = owned[name]
        for reader in (memory, EpisodicMemory(store=store, namespace=name)):
            assert len(reader) == 1
            assert list(reader.episodes()) == [mine]
            assert reader.short_term == (mine,)
            hits = reader.recall("Implement login form variant", top_k=5, fetch_k=10)
            assert [hit.episode for hit in hits] == [mine]
            profiles = reader.skill_profiles()
            assert [(p.category, p.total_episodes) for p in profiles] == [(mine.task.category, 1)]
            assert reader.quarantine.list() == {}
        assert store.get(name, ["same-id"]) == {"same-id": mine}
        assert store.count(name) == 1
        assert store.verify(name) == []


@pytest.mark.parametrize("name", ["\ud800", "team-\udfff"])
def test_a_namespace_that_is_not_valid_unicode_is_refused_clearly(name: str) -> None:
    with pytest.raises(EpisodicValueError, match=r"^namespace="):
        EpisodicMemory(store=ChromaEpisodeStore(), namespace=name)
