"""What the calibrated relevance test and the value stage cost per recall, in one run.

On one on-disk Chroma memory (``--episodes`` episodes, the default ``StaticEmbeddings``,
so embedding the query is included as in real use) with a journal of credited runs,
interleaved rounds of the same queries, medians per recall:

* **raw query 6 / raw query 12**: ``collection.query`` for 6 or 12 neighbours, metadata
  and distances included: the floor no recall can beat;
* **previous rule**: the previous default's rule (6 candidates, relevant within 0.15 of
  the best, no background test), on this code;
* **default, no credit**: the default without credit (``use_utility=False``): the
  background test on 6 candidates;
* **default, learning**: the default once credit has evidence: the background test,
  then value and utility among 12 candidates, near-duplicates sharing evidence.

Ratios to the previous rule are what to read (this machine is shared and noisy). The
previous release's own code was also measured against this one, from a checkout of
that commit over the same folder (the closing note of the change gives the figures).

Run: ``python benchmarks/recall_cost.py [--episodes 10000] [--queries 200] [--rounds 7]``
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable

from _fixtures import make_episodes, median, table

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    RecallOptions,
    StaticEmbeddings,
    TaskDescription,
)

NOW = 1_780_000_000.0 + 60.0 * 20_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        store = ChromaEpisodeStore(path=folder)
        embeddings = StaticEmbeddings()
        memory = EpisodicMemory(store=store, embeddings=embeddings, clock=lambda: NOW)
        for start in range(0, args.episodes, 5_000):
            memory.record_many(make_episodes(start, min(start + 5_000, args.episodes)))
        tasks = [
            TaskDescription(f"implement feature {j % 97} of module {j % 13} again", "unknown", 0.5)
            for j in range(args.queries)
        ]
        # A journal of credited runs, so that the default is learning.
        for j in range(200):
            shown = [r.episode.episode_id for r in memory.recall(tasks[j % len(tasks)])]
            memory.runs.note(f"run-{j}", shown, tasks[j % len(tasks)])
            memory.runs.credit(f"run-{j}", reward=(j % 10) / 10)
        previous = EpisodicMemory(store=store, embeddings=embeddings, clock=lambda: NOW,
                                  background=())  # fmt: skip
        collection = store.collection(memory.namespace)
        vectors = [embeddings.embed_query(task.description) for task in tasks]
        rules = {
            "previous": RecallOptions(fetch_k=6, relevance_margin=0.15),
            "no credit": RecallOptions(use_utility=False),
            "learning": RecallOptions(),
        }
        assert memory.recall(tasks[0], options=rules["learning"], explain=True).candidates == 12
        assert memory.recall(tasks[0], options=rules["no credit"], explain=True).candidates == 6

        def raw(count: int) -> Callable[[int], object]:
            def query(j: int) -> object:
                return collection.query(
                    query_embeddings=[vectors[j]],
                    n_results=count,
                    include=["metadatas", "distances"],
                )

            return query

        def recall(owner: EpisodicMemory, options: RecallOptions) -> Callable[[int], object]:
            def run(j: int) -> object:
                return owner.recall(tasks[j], options=options)

            return run

        runs: dict[str, Callable[[int], object]] = {
            "raw query 6": raw(6),
            "raw query 12": raw(12),
            "previous rule": recall(previous, rules["previous"]),
            "default, no credit": recall(memory, rules["no credit"]),
            "default, learning": recall(memory, rules["learning"]),
        }
        for run in runs.values():  # warm up: the background is embedded once, here
            run(0)
        samples: dict[str, list[float]] = {name: [] for name in runs}
        for round_number in range(args.rounds):
            order = list(runs)
            order = order[round_number % len(order) :] + order[: round_number % len(order)]
            for name in order:
                started = time.perf_counter()
                for j in range(args.queries):
                    runs[name](j)
                samples[name].append((time.perf_counter() - started) / args.queries * 1000)

    base = median(samples["previous rule"])
    rows = [
        [name, f"{median(values):.3f}", f"{median(values) / base:.2f}x"]
        for name, values in samples.items()
    ]
    print(
        f"{args.episodes} episodes, {args.queries} queries x {args.rounds} rounds, "
        "interleaved; median ms per recall"
    )
    print(table(["recall", "ms", "vs previous rule"], rows))


if __name__ == "__main__":
    main()
