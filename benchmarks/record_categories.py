"""What inferring a category costs a write: ``record_many`` with and without it.

An episode recorded with no category is stored with the one its text says (the
memory's ``infer_categories``, default on); that embeds its task once more for the
category probe. This times ``record_many`` of 500 episodes whose tasks name no category
into a fresh in-memory store with the default (static) embedder, inference on against
off (``record_many(..., infer_category=False)``: the write as it was), in one process,
the two taking turns for ``--rounds`` rounds; the figure is on's time over off's, per
round, then the median. A batch whose episodes name their category pays nothing.

    python benchmarks/record_categories.py [--rounds 5]
"""

from __future__ import annotations

import argparse
import dataclasses
import statistics
import time

EPISODES = 500


def timed(infer: bool, batch: list, *, one_at_a_time: bool = False) -> float:
    from langchain_episodic import EpisodicMemory
    from langchain_episodic.stores import InMemoryEpisodeStore

    memory = EpisodicMemory(store=InMemoryEpisodeStore())
    start = time.perf_counter()
    if one_at_a_time:
        for episode in batch:
            memory.record(episode, infer_category=infer)
    else:
        memory.record_many(batch, infer_category=infer)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    from _fixtures import make_episodes, table

    from langchain_episodic import TaskCategory

    batch = [
        dataclasses.replace(e, task=dataclasses.replace(e.task, category=TaskCategory.UNKNOWN))
        for e in make_episodes(0, EPISODES)
    ]
    timed(True, batch[:20])  # warm up: the packaged model and the category probe load once
    rows = []
    for label, alone in ((f"record_many of {EPISODES}", False), ("record, one by one", True)):
        on, off = [], []
        for _ in range(args.rounds):
            off.append(timed(False, batch, one_at_a_time=alone))
            on.append(timed(True, batch, one_at_a_time=alone))
        ratio = statistics.median(a / b for a, b in zip(on, off, strict=True))
        rows.append(
            [
                label,
                f"{statistics.median(off) * 1000:.0f}",
                f"{statistics.median(on) * 1000:.0f}",
                f"{ratio:.2f}x",
            ]
        )
    print(f"{EPISODES} episodes without a category, {args.rounds} rounds, the two taking turns\n")
    print(table(["write", "as before ms", "inferred ms", "inferred / before"], rows))


if __name__ == "__main__":
    main()
