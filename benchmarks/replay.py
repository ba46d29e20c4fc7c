"""What a replay with a strategy line costs next to a replay alone, in one run.

Three ways to build what an integration injects, on the same memory and queries:

* **replay alone**: ``build_replay(memory, task)`` (one recall, the prompt);
* **replay + strategy, two recalls** (how the middleware, runnable and classic
  memory did it before the pipeline): ``build_replay(memory, task)`` and then
  ``choose_strategy(task, memory)``, which recalls again;
* **replay + strategy, one recall** (now): ``build_replay(memory, task,
  include_strategy=True)``.

The memory is an on-disk ``ChromaEpisodeStore`` with the default embedder (embedding
cost included, as in real use). Raw Chroma queries of 6 and of the strategy's 20
candidates (the task embedded too) are the floors. Figures are
medians over rotating rounds; the ratios to "replay alone" are what to read.

Run: ``python benchmarks/replay.py [--episodes 10000] [--queries 200]``
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
    TaskDescription,
    build_replay,
    choose_strategy,
)
from langchain_episodic.pipeline import DEFAULT_EVIDENCE_K

NOW = 1_780_000_000.0 + 60.0 * 20_000


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as folder:
        store = ChromaEpisodeStore(path=folder)
        memory = EpisodicMemory(store=store, clock=lambda: NOW)
        for start in range(0, args.episodes, 5_000):
            memory.record_many(make_episodes(start, min(start + 5_000, args.episodes)))
        tasks = [
            TaskDescription(f"implement feature {j % 97} of module {j % 13} again", "unknown", 0.5)
            for j in range(args.queries)
        ]

        def alone(task: TaskDescription) -> object:
            return build_replay(memory, task).text

        def two_recalls(task: TaskDescription) -> object:
            text = build_replay(memory, task).text
            return text + "\n\n" + choose_strategy(task, memory).prompt_line

        def one_recall(task: TaskDescription) -> object:
            return build_replay(memory, task, include_strategy=True).text

        collection = store.collection(memory.namespace)

        def raw(count: int) -> Callable[[TaskDescription], object]:
            def query(task: TaskDescription) -> object:
                vector = memory.embeddings.embed_query(task.description)
                return collection.query(
                    query_embeddings=[vector], n_results=count, include=["metadatas", "distances"]
                )

            return query

        contenders: dict[str, Callable[[TaskDescription], object]] = {
            "raw query of 6 (embedding included)": raw(6),
            f"raw query of {DEFAULT_EVIDENCE_K} (embedding included)": raw(DEFAULT_EVIDENCE_K),
            "replay alone": alone,
            "replay + strategy, two recalls (before)": two_recalls,
            "replay + strategy, one recall (now)": one_recall,
        }
        for task in tasks[:20]:  # warm-up
            for run in contenders.values():
                run(task)
        times: dict[str, list[float]] = {name: [] for name in contenders}
        names = list(contenders)
        for index, task in enumerate(tasks):
            shift = index % len(names)
            for name in names[shift:] + names[:shift]:  # rotate who goes first
                start = time.perf_counter()
                contenders[name](task)
                times[name].append(time.perf_counter() - start)
        store.close()

    base = median(times["replay alone"])
    raw_evidence = median(times[f"raw query of {DEFAULT_EVIDENCE_K} (embedding included)"])
    rows = [
        [
            name,
            f"{median(values) * 1000:.2f}",
            f"{median(values) / base:.2f}x",
            f"{median(values) / raw_evidence:.2f}x",
        ]
        for name, values in times.items()
    ]
    print(f"{args.episodes:,} episodes, {args.queries} queries, embedded Chroma, default model")
    print(
        table(
            ["how", "median ms", "vs replay alone", f"vs raw query of {DEFAULT_EVIDENCE_K}"],
            rows,
        )
    )


if __name__ == "__main__":
    main()
