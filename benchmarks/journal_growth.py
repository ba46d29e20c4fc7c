"""What a long credit journal costs: opening a memory, and one run's bookkeeping.

On on-disk Chroma folders holding the same 1,000 episodes and a journal of ``N``
entries (credited runs: one injection and one outcome each, written through the store
in bulk, as years of agent runs would leave them), for a small and large ``N`` side by
side in one run:

* **open**: a fresh process opens the memory (``EpisodicMemory(store=...)``) and
  reports the seconds it took and how much its resident memory grew;
* **first credit**: in another fresh process, on a copy of the folder, the first
  ``note`` + ``credit`` of a new run after open (and the recall before it): what an
  open that does not read the journal leaves to the first thing that does;
* **note + credit**: one ``note_injection`` and one ``credit`` of a new run, median over
  ``--runs`` runs, next to one ``recall`` on the same memory.

Ratios of the large journal to the small one are what to read.

    python benchmarks/journal_growth.py [--sizes 200 100000] [--runs 50]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

from _fixtures import RESULTS, make_episodes, median, table

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings
from langchain_episodic.model.credit import CreditEvent, Injection, encode_credit, encode_injection
from langchain_episodic.stores.base import JournalEntry

EPISODES = 1_000
START = 1_780_000_000.0

OPENER = textwrap.dedent(
    """
    import json, resource, sys, time
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings
    embeddings = StaticEmbeddings()
    embeddings.embed_query("warm up")  # the model's load is not the journal's cost
    store = ChromaEpisodeStore(path=sys.argv[1])
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    began = time.perf_counter()
    memory = EpisodicMemory(store=store, embeddings=embeddings, open_run_ttl=None)
    seconds = time.perf_counter() - began
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"seconds": seconds, "rss_mb": (after - before) / 1024,
                      "credited": len(memory.runs.utilities())}))
    """
)


def build(path: Path, entries: int) -> None:
    """A memory with the episodes and a journal of ``entries`` entries (credited runs)."""
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=path), embeddings=StaticEmbeddings())
    episodes = make_episodes(0, EPISODES)
    memory.record_many(episodes)
    store = memory.store
    runs = entries // 2
    batch: list[JournalEntry] = []
    for run in range(runs):
        shown = tuple(episodes[(run * 7 + k) % EPISODES].episode_id for k in range(3))
        at = START + run * 60.0
        batch.append(JournalEntry(*encode_injection(
            Injection(f"run-{run:07d}", shown, "a task", "code_generation", at)
        )))  # fmt: skip
        batch.append(JournalEntry(*encode_credit(
            CreditEvent(f"run-{run:07d}", (run % 10) / 10, shown, "code_generation", at + 30)
        )))  # fmt: skip
        if len(batch) >= 5_000:
            store.append_journal(memory.namespace, batch)
            batch = []
    store.append_journal(memory.namespace, batch)
    memory.runs.reload()  # folded in, as the agent that wrote them would have
    memory.flush()
    store.close()


FIRST = textwrap.dedent(
    """
    import json, sys, time
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings
    embeddings = StaticEmbeddings()
    embeddings.embed_query("warm up")
    store = ChromaEpisodeStore(path=sys.argv[1])
    began = time.perf_counter()
    memory = EpisodicMemory(store=store, embeddings=embeddings, open_run_ttl=None)
    opened = time.perf_counter()
    memory.recall("Implement feature 3 of module 4")
    recalled = time.perf_counter()
    memory.runs.note("first-run", ["ep-0000001"], "Implement feature 3")
    memory.runs.credit("first-run", 0.8)
    credited = time.perf_counter()
    print(json.dumps({"open": opened - began, "recall": recalled - opened,
                      "credit": credited - recalled}))
    """
)


def first_credit_in_a_fresh_process(path: Path, scratch: Path) -> dict[str, float]:
    """Open, first recall and first note + credit, on a copy of ``path`` (it is written)."""
    copy = scratch / f"{path.name}-copy"
    shutil.rmtree(copy, ignore_errors=True)
    shutil.copytree(path, copy)
    try:
        return open_in_a_fresh_process(copy, FIRST)
    finally:
        shutil.rmtree(copy, ignore_errors=True)


def open_in_a_fresh_process(path: Path, script: str = OPENER) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", script, str(path)],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def run_costs(path: Path, runs: int) -> tuple[float, float]:
    """Median ms of note + credit of a new run, and of one recall, on the memory at ``path``."""
    clock = [START + 10**8]
    memory = EpisodicMemory(
        store=ChromaEpisodeStore(path=path), embeddings=StaticEmbeddings(), clock=lambda: clock[0]
    )
    bookkeeping, recalls = [], []
    for run in range(runs):
        clock[0] += 60.0
        began = time.perf_counter()
        memory.recall("Implement feature 3 of module 4")
        recalls.append((time.perf_counter() - began) * 1e3)
        began = time.perf_counter()
        memory.runs.note(f"new-{run}", ["ep-0000001"], "Implement feature 3")
        memory.runs.credit(f"new-{run}", 0.8)
        bookkeeping.append((time.perf_counter() - began) * 1e3)
    memory.store.close()
    return median(bookkeeping), median(recalls)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", type=int, nargs="+", default=[200, 100_000])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--opens", type=int, default=3)
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        paths = {size: Path(folder) / f"journal-{size}" for size in args.sizes}
        for size, path in paths.items():
            began = time.perf_counter()
            build(path, size)
            print(f"built {size:,} entries in {time.perf_counter() - began:.0f} s", flush=True)
        opens: dict[int, list[dict[str, float]]] = {size: [] for size in args.sizes}
        for _ in range(args.opens):  # interleaved
            for size, path in paths.items():
                opens[size].append(open_in_a_fresh_process(path))
        firsts: dict[int, list[dict[str, float]]] = {size: [] for size in args.sizes}
        for _ in range(args.opens):  # interleaved, each on a fresh copy
            for size, path in paths.items():
                firsts[size].append(first_credit_in_a_fresh_process(path, Path(folder)))
        for size, path in paths.items():
            seconds = median([o["seconds"] for o in opens[size]])
            rss = median([o["rss_mb"] for o in opens[size]])
            note_credit, recall = run_costs(path, args.runs)
            first = {key: median([f[key] for f in firsts[size]]) for key in firsts[size][0]}
            rows.append((size, seconds, rss, note_credit, recall, first))
            print(rows[-1], flush=True)
    small = rows[0]
    body = [
        [
            f"{size:,}",
            f"{seconds:.3f} ({seconds / small[1]:.1f}x)",
            f"{rss:+.0f}",
            f"{note_credit:.2f} ({note_credit / small[3]:.2f}x)",
            f"{recall:.2f}",
            f"{note_credit / recall:.1f}x",
            f"{first['open']:.3f} + {first['recall']:.3f} + {first['credit']:.3f} = "
            f"{sum(first.values()):.3f} ({sum(first.values()) / sum(small[5].values()):.1f}x)",
        ]
        for size, seconds, rss, note_credit, recall, first in rows
    ]
    result = table(
        [
            "journal entries",
            "open s (vs smallest)",
            "open RSS MB",
            "note + credit ms (vs smallest)",
            "recall ms",
            "note + credit / recall",
            "fresh process: open + first recall + first note/credit s (vs smallest)",
        ],
        body,
    )
    print(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "journal_growth.md").write_text(
        "# What a long credit journal costs\n\n"
        f"`python benchmarks/journal_growth.py --sizes {' '.join(map(str, args.sizes))} "
        f"--runs {args.runs}` ({EPISODES:,} episodes, on-disk Chroma; open in a fresh "
        f"process, median of {args.opens}; the first credit in another fresh process, on "
        f"a copy of the folder, median of {args.opens})\n\n{result}\n"
    )


if __name__ == "__main__":
    main()
