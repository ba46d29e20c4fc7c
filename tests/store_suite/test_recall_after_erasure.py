"""Recall after another memory over the same data forgot episodes, on every store.

A memory caches what ranking needs of the records it has read (the Chroma store
does, ``stores/chroma/hits.py``); an erasure made through another memory (another
store object: on a Chroma server, another client with its own cache) must still
leave nothing of the forgotten episodes recallable from the first, and the first's
recall must be the reference ranking over what remains.
"""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
from tests.helpers.episodes import DAY, QUERIES, corpus, relevance_recall
from tests.helpers.stores import StoreHarness

NOW = 3 * DAY


def memory_on(harness: StoreHarness) -> EpisodicMemory:
    return EpisodicMemory(store=harness.open(), clock=lambda: NOW)


def test_episodes_another_memory_forgot_are_not_recalled_from_a_warm_one(
    harness: StoreHarness,
) -> None:
    episodes = corpus(30)
    first = memory_on(harness)
    first.record_many(episodes)
    shown = [r.episode.episode_id for q in QUERIES for r in first.recall(q, current_time=NOW)]
    forgotten = set(list(dict.fromkeys(shown))[:3])
    assert len(forgotten) == 3
    memory_on(harness).forget(sorted(forgotten), reason="asked")
    if harness.kind == "faiss":
        # Each FAISS store object holds its own copy of the index, loaded on open:
        # another object's deletion reaches a memory once it opens the store again.
        first = memory_on(harness)
    for query in QUERIES:
        recalled = {r.episode.episode_id for r in first.recall(query, top_k=5, current_time=NOW)}
        assert not recalled & forgotten, query
    remaining = [e for e in episodes if e.episode_id not in forgotten]
    for query in QUERIES:  # the relevance ranking, written out by brute force
        got = first.recall(query, top_k=5, current_time=NOW)
        expected = relevance_recall(remaining, first.embeddings, query, 5, NOW)
        assert [r.episode.episode_id for r in got] == [e[0] for e in expected], query
