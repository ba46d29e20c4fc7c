"""What three more flat metadata keys cost a Chroma search: 5 keys against 8.

A record carries its episode's JSON, its number and the keys filters use. 0.2 adds
``reward``, ``pass_rate`` and ``timestamp`` to category, outcome and strategy, so that
Chroma applies a whole filter in its ``where``. This builds two collections of 4,000
records on disk, identical but for those three keys, and times 200 filtered searches
(``where={"outcome": "success"}``, 12 results) in each, the two taking turns for
``--rounds`` rounds; the figure is the median time with 8 keys over 5.

    python benchmarks/filter_keys.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
import time

import chromadb
import numpy as np

RECORDS, QUERIES, DIMENSION = 4_000, 200, 256


def metadata(i: int, numeric: bool) -> dict[str, object]:
    found: dict[str, object] = {
        "episode": json.dumps({"solution": "x" * 600, "i": i}),
        "seq": i,
        "category": ["debugging", "testing", "refactoring"][i % 3],
        "outcome": ["success", "failure", "partial"][i % 3],
        "strategy_used": "iterative",
    }
    if numeric:
        found.update(reward=(i % 11) / 10, pass_rate=(i % 7) / 6, timestamp=1.7e9 + i)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from _fixtures import table

    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(RECORDS, DIMENSION)).astype(np.float32)
    queries = rng.normal(size=(QUERIES, DIMENSION)).astype(np.float32)
    client = chromadb.PersistentClient(path=tempfile.mkdtemp())
    collections = {}
    for numeric in (False, True):
        collection = client.create_collection(
            f"keys-{8 if numeric else 5}",
            metadata={"hnsw:space": "cosine"},
            embedding_function=None,
        )
        for start in range(0, RECORDS, 500):
            collection.add(
                ids=[str(i) for i in range(start, start + 500)],
                embeddings=vectors[start : start + 500],
                metadatas=[metadata(i, numeric) for i in range(start, start + 500)],  # type: ignore[misc]
            )
        collections[numeric] = collection
    times: dict[bool, list[float]] = {False: [], True: []}
    for _ in range(args.rounds):
        for numeric, collection in collections.items():
            start = time.perf_counter()
            for query in queries:
                collection.query(
                    query_embeddings=[query], n_results=12, where={"outcome": "success"}
                )
            times[numeric].append((time.perf_counter() - start) / QUERIES * 1000)
    ratio = statistics.median(a / b for a, b in zip(times[True], times[False], strict=True))
    print(f"{RECORDS} records, {QUERIES} filtered searches a round, {args.rounds} rounds\n")
    rows = [
        ["5 keys (before 0.2)", f"{statistics.median(times[False]):.2f}"],
        ["8 keys (0.2)", f"{statistics.median(times[True]):.2f}"],
    ]
    print(table(["record metadata", "ms a search (median)"], rows))
    print(f"\n8 keys / 5 keys: {ratio:.2f}x (median of the rounds)")


if __name__ == "__main__":
    main()
