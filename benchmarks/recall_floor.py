"""Recall next to the floor it cannot beat: a raw Chroma query of the same candidates.

For each size (``--sizes``, default 1k, 20k and 100k episodes) one on-disk Chroma
folder is built (the default ``StaticEmbeddings``, 200 credited runs in the journal,
so the default ranking is learning and fetches 12 candidates). Then processes take
turns on the folder (an embedded folder is locked by one process at a time): one
running this checkout, one running ``--before`` (a checkout of the code to compare
with, e.g. ``git worktree add /tmp/recall_floor 3608ec8``) when given, alternating
for ``--rounds`` rounds. Each process opens the folder, recalls every query once (the
cold pass: nothing cached yet), then times, query by query in rotating order:

* **raw query 12**: ``collection.query`` for 12 neighbours, metadata and distances
  included (the query recall made before this change), the task embedded first;
* **recall**: ``memory.recall(task)``, the default options (learning, 12 candidates);
* **raw query 20**: the same for the strategy's 20 candidates;
* **replay + strategy**: ``build_replay(memory, task, include_strategy=True)``.

Each process reports medians per query and the ratios recall / raw query 12 and
replay + strategy / raw query 20 (both measured in that process, side by side); the
table gives the median over its rounds. Ratios are what to read: this machine is
shared and noisy.

Run: ``python benchmarks/recall_floor.py [--sizes 1000 20000 100000] [--before /tmp/x]``
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, cast

if TYPE_CHECKING:
    from langchain_episodic import TaskDescription

HERE = Path(__file__).resolve().parent
NOW = 1_780_000_000.0 + 60.0 * 20_000
QUERIES = 200


def tasks() -> list[TaskDescription]:
    from langchain_episodic import TaskCategory, TaskDescription

    return [
        TaskDescription(
            f"implement feature {j % 97} of module {j % 13} again", TaskCategory.UNKNOWN, 0.5
        )
        for j in range(QUERIES)
    ]


def build(folder: str, size: int) -> None:
    """Fill ``folder`` with ``size`` episodes and 200 credited runs (this checkout)."""
    from _fixtures import make_episodes

    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings

    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, embeddings=StaticEmbeddings(), clock=lambda: NOW)
    for start in range(0, size, 5_000):
        memory.record_many(make_episodes(start, min(start + 5_000, size)))
    queries = tasks()
    for j in range(200):  # a journal of credited runs, so that the default is learning
        task = queries[j % len(queries)]
        shown = [r.episode.episode_id for r in memory.recall(task)]
        memory.runs.note(f"run-{j}", shown, task)
        memory.runs.credit(f"run-{j}", reward=(j % 10) / 10)
    store.close()


def worker(folder: str) -> None:
    """Time the contenders on ``folder`` with whichever package is importable; print JSON."""
    from langchain_episodic import (
        ChromaEpisodeStore,
        EpisodicMemory,
        RecallOptions,
        StaticEmbeddings,
        build_replay,
    )

    store = ChromaEpisodeStore(path=folder)
    embeddings = StaticEmbeddings()
    memory = EpisodicMemory(store=store, embeddings=embeddings, clock=lambda: NOW)
    collection = store.collection(memory.namespace)
    queries = tasks()
    assert memory.recall(queries[0], options=RecallOptions(), explain=True).candidates == 12

    def raw(count: int) -> Callable[[TaskDescription], object]:
        def query(task: TaskDescription) -> object:
            vector = embeddings.embed_query(task.description)
            return collection.query(
                query_embeddings=[vector], n_results=count, include=["metadatas", "distances"]
            )

        return query

    contenders: dict[str, Callable[[TaskDescription], object]] = {
        "raw query 12": raw(12),
        "recall": memory.recall,
        "raw query 20": raw(20),
        "replay + strategy": lambda task: build_replay(memory, task, include_strategy=True).text,
    }
    started = time.perf_counter()
    for task in queries:  # the cold pass: the background embedded, nothing cached yet
        memory.recall(task)
    cold = (time.perf_counter() - started) / len(queries)
    for task in queries[:20]:
        for run in contenders.values():
            run(task)
    times: dict[str, list[float]] = {name: [] for name in contenders}
    names = list(contenders)
    for repetition in range(3):
        for index, task in enumerate(queries):
            shift = (index + repetition) % len(names)
            for name in names[shift:] + names[:shift]:
                start = time.perf_counter()
                contenders[name](task)
                times[name].append(time.perf_counter() - start)
    store.close()
    medians = {name: statistics.median(values) * 1000 for name, values in times.items()}
    medians["recall, cold pass"] = cold * 1000
    print(json.dumps(medians))


def measure(folder: str, pythonpath: str | None) -> dict[str, float]:
    from _fixtures import run_worker

    return cast(dict[str, float], run_worker(__file__, [folder], pythonpath))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1_000, 20_000, 100_000])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--before", help="a checkout of the code to compare with")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker)
        return
    from _fixtures import RESULTS, table

    versions = {"now": str(HERE.parent)}
    if args.before:
        versions = {"before": args.before, **versions}
    rows = []
    for size in args.sizes:
        with tempfile.TemporaryDirectory() as folder:
            build(folder, size)
            found: dict[str, list[dict[str, float]]] = {name: [] for name in versions}
            for _ in range(args.rounds):
                for name, path in versions.items():
                    found[name].append(measure(folder, path))
        for name, runs in found.items():

            def med(key: str, runs: list[dict[str, float]] = runs) -> float:
                return statistics.median(run[key] for run in runs)

            recall_ratio = statistics.median(r["recall"] / r["raw query 12"] for r in runs)
            replay_ratio = statistics.median(
                r["replay + strategy"] / r["raw query 20"] for r in runs
            )
            rows.append(
                [
                    f"{size:,}",
                    name,
                    f"{med('raw query 12'):.2f}",
                    f"{med('recall'):.2f}",
                    f"{recall_ratio:.2f}x",
                    f"{med('recall, cold pass'):.2f}",
                    f"{med('raw query 20'):.2f}",
                    f"{med('replay + strategy'):.2f}",
                    f"{replay_ratio:.2f}x",
                ]
            )
            print(rows[-1], flush=True)
    headers = [
        "episodes",
        "code",
        "raw 12 ms",
        "recall ms",
        "recall / raw 12",
        "cold pass ms",
        "raw 20 ms",
        "replay+strategy ms",
        "replay+strategy / raw 20",
    ]
    text = table(headers, rows)
    print(text)
    command = " ".join(["python benchmarks/recall_floor.py", *sys.argv[1:]])
    (RESULTS / "recall_floor.md").write_text(
        f"# Recall at the floor\n\n`{command}` ({args.rounds} rounds of alternating "
        f"processes per size; medians; ratios measured side by side in each process)\n\n"
        f"{text}\n"
    )


if __name__ == "__main__":
    sys.path.insert(0, str(HERE))
    main()
