"""The records' cache behind a Chroma recall: same results, never a deleted record.

Real in-process Chroma (and the real Chroma server for another process's erasure);
the default ``HashingEmbeddings`` everywhere, so Chroma's own embedding function
never runs.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from pathlib import Path

import chromadb
import numpy as np
import pytest
from chromadb.api import ClientAPI

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, RecallOptions
from langchain_episodic.errors import MalformedRecordWarning
from langchain_episodic.scoring.retention import Retention
from langchain_episodic.stores.base import StoredHit
from langchain_episodic.stores.chroma.hits import HitCache, hit_cache, query_hits
from langchain_episodic.stores.codec import decode_hits
from tests.helpers.episodes import DAY, QUERIES, corpus

NOW = 3 * DAY


def memory_on(store: ChromaEpisodeStore, **kwargs: object) -> EpisodicMemory:
    return EpisodicMemory(store=store, clock=lambda: NOW, **kwargs)  # type: ignore[arg-type]


def recalled(memory: EpisodicMemory) -> list[list[tuple[str, float, float]]]:
    """Every query's results: ids, similarities and priorities, in order."""
    return [
        [
            (r.episode.episode_id, r.similarity, r.priority)
            for r in memory.recall(query, options=RecallOptions(top_k=5))
        ]
        for query in QUERIES
    ]


def uncached(collection: object, vector: np.ndarray, k: int) -> list[StoredHit]:
    """What the store returned before the cache: metadata read in the query itself."""
    result = collection.query(  # type: ignore[attr-defined]
        query_embeddings=[vector], n_results=k, include=["metadatas", "distances"]
    )
    rows = (
        (record_id, (metadata or {}).get("episode"), 1.0 - float(distance))
        for record_id, metadata, distance in zip(
            result["ids"][0], result["metadatas"][0], result["distances"][0], strict=True
        )
    )
    return list(decode_hits(rows))


def test_hits_are_those_of_a_query_that_reads_the_metadata(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "chroma")
    memory = memory_on(store)
    memory.record_many(corpus(40))
    collection = store.collection("default")
    cache = HitCache()
    for query in QUERIES:
        vector = np.asarray(memory.embeddings.embed_query(query), dtype=np.float32)
        expected = uncached(collection, vector, 12)
        assert query_hits(collection, vector, 12, None, cache) == expected  # cold
        assert query_hits(collection, vector, 12, None, cache) == expected  # all cached
        assert len(cache) > 0
    store.close()


def test_recall_is_the_same_with_a_warm_cache_and_a_fresh_store(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "chroma")
    memory = memory_on(store)
    memory.record_many(corpus(40))
    first = recalled(memory)
    assert recalled(memory) == first  # now from the cache
    assert len(hit_cache(store._share)) > 0
    store.close()
    with ChromaEpisodeStore(path=tmp_path / "chroma") as reopened:
        assert recalled(memory_on(reopened)) == first  # a new process's cold cache


def test_forget_drops_the_record_from_the_cache_and_from_recall(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "chroma")
    memory = memory_on(store)
    memory.record_many(corpus(20))
    top = memory.recall(QUERIES[0])[0].episode.episode_id
    cache = hit_cache(store._share)
    key = store.collection("default").id
    assert cache.take(key, [top]) != [None]
    memory.forget(top, reason="asked")
    assert cache.take(key, [top]) == [None]  # its content is gone from this process too
    assert top not in {r.episode.episode_id for q in QUERIES for r in memory.recall(q)}
    store.close()


def test_a_second_memory_on_the_folder_forgetting_reaches_the_first(tmp_path: Path) -> None:
    first = memory_on(ChromaEpisodeStore(path=tmp_path / "chroma"))
    first.record_many(corpus(20))
    before = first.recall(QUERIES[0])
    top = before[0].episode.episode_id
    second_store = ChromaEpisodeStore(path=tmp_path / "chroma")
    memory_on(second_store).forget(top, reason="asked")
    after = first.recall(QUERIES[0])
    assert top not in [r.episode.episode_id for r in after]
    assert after  # the others are still found
    second_store.close()


def test_retention_drops_pruned_records_from_the_cache(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "chroma")
    memory = memory_on(store)
    memory.record_many(corpus(20))
    seen = {r.episode.episode_id for q in QUERIES for r in memory.recall(q)}
    _, receipt = memory.forgetting.prune(Retention(max_episodes=5))
    assert receipt is not None
    remaining = {e.episode_id for e in memory.episodes()}
    pruned = sorted(seen - remaining)
    assert len(remaining) == 5
    assert pruned
    key = store.collection("default").id
    assert hit_cache(store._share).take(key, pruned) == [None] * len(pruned)
    assert not set(pruned) & {r.episode.episode_id for q in QUERIES for r in memory.recall(q)}
    store.close()


def test_another_process_forgetting_on_a_chroma_server_is_seen_at_once(
    chroma_server_client: ClientAPI,
    chroma_server_address: tuple[str, int],
    unique_name: str,
) -> None:
    store = ChromaEpisodeStore(client=chroma_server_client, collection_name=unique_name)
    memory = memory_on(store)
    memory.record_many(corpus(20))
    before = [r.episode.episode_id for r in memory.recall(QUERIES[0])]
    host, port = chroma_server_address
    script = textwrap.dedent(
        f"""
        import chromadb
        from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
        store = ChromaEpisodeStore(
            client=chromadb.HttpClient(host={host!r}, port={port}),
            collection_name={unique_name!r},
        )
        EpisodicMemory(store=store).forget({before[0]!r}, reason="asked elsewhere")
        """
    )
    subprocess.run([sys.executable, "-c", script], check=True, timeout=120)
    after = [r.episode.episode_id for r in memory.recall(QUERIES[0])]
    assert before[0] not in after
    fresh = EpisodicMemory(  # its own client, so its own cold cache
        store=ChromaEpisodeStore(
            client=chromadb.HttpClient(host=host, port=port), collection_name=unique_name
        ),
        clock=lambda: NOW,
    )
    assert after == [r.episode.episode_id for r in fresh.recall(QUERIES[0])]


def test_another_client_deleting_a_record_is_never_served_from_the_cache(
    chroma_server_address: tuple[str, int], unique_name: str
) -> None:
    host, port = chroma_server_address
    store = ChromaEpisodeStore(
        client=chromadb.HttpClient(host=host, port=port), collection_name=unique_name
    )
    memory = memory_on(store)
    memory.record_many(corpus(20))
    top = memory.recall(QUERIES[0])[0].episode.episode_id
    # Another writer that knows nothing of this process's cache (another tool, say).
    other = chromadb.HttpClient(host=host, port=port)
    other.get_collection(unique_name).delete(ids=[top])
    assert top not in {r.episode.episode_id for q in QUERIES for r in memory.recall(q)}


def test_a_malformed_record_is_warned_about_on_every_search(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "chroma")
    memory = memory_on(store)
    memory.record_many(corpus(5))
    collection = store.collection("default")
    vector = np.asarray(memory.embeddings.embed_query(QUERIES[0]), dtype=np.float32)
    collection.add(
        ids=["foreign"], embeddings=[vector], metadatas=[{"episode": json.dumps({"x": 1})}]
    )
    cache = HitCache()
    for _ in range(2):
        with pytest.warns(MalformedRecordWarning, match="foreign"):
            hits = query_hits(collection, vector, 3, None, cache)
        assert "foreign" not in [hit.record_id for hit in hits]
    store.close()


def hit(record_id: str) -> StoredHit:
    return StoredHit(0.5, 0.0, 1.0, corpus(1)[0].outcome, {"episode_id": record_id}, record_id)


def test_the_cache_is_bounded_least_recently_used_first() -> None:
    cache = HitCache(limit=2)
    cache.keep("c", [hit("a"), hit("b")], cache.generation("c"))
    assert cache.take("c", ["a"]) == [hit("a")]  # a is now the most recent
    cache.keep("c", [hit("x")], cache.generation("c"))
    assert cache.take("c", ["a", "b", "x"]) == [hit("a"), None, hit("x")]


def test_a_search_that_raced_a_deletion_does_not_put_its_records_back() -> None:
    cache = HitCache()
    generation = cache.generation("c")  # a search starts ...
    cache.drop("c", ["a"])  # ... a deletion lands before it caches what it read
    cache.keep("c", [hit("a")], generation)
    assert cache.take("c", ["a"]) == [None]
    cache.keep("c", [hit("b")], cache.generation("c"))
    assert cache.take("other", ["b"]) == [None]  # per collection
    assert cache.take("c", ["b"]) == [hit("b")]
