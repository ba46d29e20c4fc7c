"""Recall on every store against the same store's raw search, side by side in one run.

What does the memory layer cost on top of each backend? For each store and size, the
contenders are queried in rotating order after a warm-up; each figure is a ratio to
the raw search of the same backend in the same run (machines here are shared and noisy).

    python benchmarks/stores.py [--sizes 1000 10000] [--queries 300]

Raw searches (6 candidates, what recall's default fetch_k asks for):

* chroma: ``collection.query(n_results=6, include=["metadatas", "distances"])``
* in-memory: ``vectors @ query``, ``argpartition`` for the 6 best, sort them
* faiss: ``FAISS.similarity_search_with_score_by_vector(query, k=6)``
* langchain-chroma: ``Chroma.similarity_search_by_vector_with_relevance_scores(query, k=6)``

"ours" is ``EpisodicMemory.recall(query, top_k=3)`` on that store: embed (a table
lookup here), search, rank by priority, build the 3 episodes. Needs the ``dev`` extra.
"""

from __future__ import annotations

import argparse
import sys
import uuid
import warnings
from collections.abc import Callable
from pathlib import Path

import chromadb
import faiss
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _fixtures import (
    RESULTS,
    PrecomputedEmbeddings,
    make_episodes,
    median,
    percentile,
    table,
    timed,
    unit_vectors,
)
from langchain_chroma import Chroma

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community is sunsetting
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.stores import EpisodeStore, InMemoryEpisodeStore, VectorStoreEpisodeStore

TOP_K, FETCH_K = 3, 6
NOW = 1_780_000_000.0 + 60.0 * 20_000
Search = Callable[[int], object]


def contenders(size: int) -> dict[str, tuple[EpisodicMemory, Search]]:
    """Per store: a memory holding ``size`` episodes, and the raw search of its backend."""
    embeddings = PrecomputedEmbeddings(unit_vectors(size, seed=1), unit_vectors(1_000, seed=2))
    queries = embeddings.queries
    episodes = make_episodes(0, size)

    def memory_on(store: EpisodeStore) -> EpisodicMemory:
        memory = EpisodicMemory(store=store, embeddings=embeddings, clock=lambda: NOW)
        for start in range(0, size, 5_000):
            memory.record_many(episodes[start : start + 5_000])
        return memory

    chroma = ChromaEpisodeStore(client=chromadb.EphemeralClient(), collection_name="bench")
    chroma_memory = memory_on(chroma)
    collection = chroma.collection("default")

    in_memory = memory_on(InMemoryEpisodeStore())
    matrix = embeddings.episodes

    def raw_numpy(j: int) -> object:
        scores = matrix @ queries[j]
        best = np.argpartition(-scores, FETCH_K)[:FETCH_K]
        return best[np.argsort(-scores[best])]

    faiss_vectors = FAISS(
        embedding_function=embeddings,
        index=faiss.IndexFlatIP(matrix.shape[1]),
        docstore=InMemoryDocstore(),
        index_to_docstore_id={},
    )
    faiss_memory = memory_on(VectorStoreEpisodeStore(faiss_vectors))

    lc_chroma = Chroma(
        collection_name=f"bench-{uuid.uuid4().hex[:8]}",
        embedding_function=embeddings,
        client=chromadb.EphemeralClient(),
        collection_configuration={"hnsw": {"space": "cosine"}},
    )
    lc_chroma_memory = memory_on(VectorStoreEpisodeStore(lc_chroma))

    return {
        "chroma": (
            chroma_memory,
            lambda j: collection.query(
                query_embeddings=[queries[j]],
                n_results=FETCH_K,
                include=["metadatas", "distances"],
            ),
        ),
        "in-memory": (in_memory, raw_numpy),
        "faiss": (
            faiss_memory,
            lambda j: faiss_vectors.similarity_search_with_score_by_vector(
                queries[j].tolist(), k=FETCH_K
            ),
        ),
        "langchain-chroma": (
            lc_chroma_memory,
            lambda j: lc_chroma.similarity_search_by_vector_with_relevance_scores(
                queries[j].tolist(), k=FETCH_K
            ),
        ),
    }


def bench(sizes: list[int], queries: int) -> str:
    rows = []
    for size in sizes:
        for name, (memory, raw) in contenders(size).items():
            runs: dict[str, Search] = {
                "raw": raw,
                "ours": lambda j, memory=memory: memory.recall(f"query {j}", top_k=TOP_K),
            }
            for j in range(20):  # warm-up
                for search in runs.values():
                    search(j)
            times: dict[str, list[float]] = {key: [] for key in runs}
            for j in range(queries):
                order = list(runs) if j % 2 == 0 else list(reversed(runs))
                for key in order:
                    times[key].append(timed(lambda key=key, j=j: runs[key](j % 1_000)) * 1e3)
            raw_ms, ours_ms = median(times["raw"]), median(times["ours"])
            rows.append(
                [
                    f"{size:,}",
                    name,
                    f"{raw_ms:.2f} / {percentile(times['raw'], 95):.2f}",
                    f"{ours_ms:.2f} / {percentile(times['ours'], 95):.2f}",
                    f"{ours_ms / raw_ms:.2f}x",
                    f"{ours_ms - raw_ms:+.2f}",
                ]
            )
            print(rows[-1], flush=True)
    return table(
        [
            "episodes",
            "store",
            "raw search p50/p95 ms",
            "recall p50/p95 ms",
            "recall / raw",
            "added ms (p50)",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=300)
    args = parser.parse_args()
    result = bench(args.sizes, args.queries)
    print(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "stores.md").write_text(
        "# Recall on every store vs its raw search\n\n"
        f"`python benchmarks/stores.py --sizes {' '.join(map(str, args.sizes))} "
        f"--queries {args.queries}`\n\n{result}\n"
    )


if __name__ == "__main__":
    main()
