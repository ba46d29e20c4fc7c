"""What checking an embedded Chroma folder's files costs an open, beside the same open without.

Every store checks a folder before Chroma reads it (``stores/chroma/precheck.py``): a
damaged vector index would otherwise crash the process. For folders of ``N`` episodes,
in one run, repetitions interleaved (the machines here are shared and noisy):

* **no checks**: ``ChromaEpisodeStore(path=...)`` + ``EpisodicMemory(store)`` with the
  checks switched off (``chroma_precheck.checks_on_open = False``): today's open before
  the checks, the baseline;
* **checks, files recorded sound**: the default, the files as the last close left them
  (the record in ``.langchain-episodic-checked`` matches; only ``stat`` calls and one
  read-only sqlite query);
* **checks, first open after a change**: the record removed before each open, so every
  file is read and checked (what an open pays once after another program wrote the
  files, after a restore, and on every read-only open);
* **the checks alone**: ``check_before_open`` timed by itself, with the record and
  without (steadier than a difference of two opens);
* **plain Chroma**: ``chromadb.PersistentClient`` + ``get_collection`` + ``count``, for scale;
* **read-only copy**: copying the folder, what opening a folder this process cannot
  write adds (Chroma writes as it opens, so it reads a private copy).

Each open is timed from the constructor to a memory ready to recall; ``close`` is timed
apart (the last close records the files as found sound).

    python benchmarks/open_cost.py [--sizes 1000 10000] [--repeats 15]
        [--out benchmarks/results/open_cost.md]
"""

from __future__ import annotations

import argparse
import os
import platform
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import chromadb
from _fixtures import RESULTS, make_episodes, median, table

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.stores.chroma import precheck as chroma_precheck
from langchain_episodic.stores.chroma.snapshot import make_readable_copy, remove_copy

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")


def build(folder: Path, size: int) -> None:
    with ChromaEpisodeStore(path=folder) as store:
        memory = EpisodicMemory(store=store)
        episodes = make_episodes(0, size)
        for start in range(0, size, 1000):
            memory.record_many(episodes[start : start + 1000])


def open_memory(folder: Path, *, checks: bool) -> tuple[float, float]:
    """Seconds to open (store + memory) and to close."""
    chroma_precheck.checks_on_open = checks
    try:
        start = time.perf_counter()
        store = ChromaEpisodeStore(path=folder)
        EpisodicMemory(store=store)
        opened = time.perf_counter() - start
        start = time.perf_counter()
        store.close()
        return opened, time.perf_counter() - start
    finally:
        chroma_precheck.checks_on_open = True


def plain_chroma(folder: Path) -> tuple[float, float]:
    start = time.perf_counter()
    client = chromadb.PersistentClient(path=str(folder))
    client.get_collection("episodes").count()
    opened = time.perf_counter() - start
    start = time.perf_counter()
    client.close()
    return opened, time.perf_counter() - start


def copy_cost(folder: Path) -> tuple[float, float]:
    start = time.perf_counter()
    copy = make_readable_copy(str(folder))
    copied = time.perf_counter() - start
    remove_copy(copy)
    return copied, 0.0


def check_alone(folder: Path, *, recorded: bool) -> tuple[float, float]:
    if not recorded:
        (folder / chroma_precheck.CHECKED_FILE).unlink(missing_ok=True)
    start = time.perf_counter()
    chroma_precheck.check_before_open(str(folder))
    return time.perf_counter() - start, 0.0


def measure(size: int, workdir: Path, repeats: int) -> list[list[object]]:
    folder = workdir / f"memory-{size}"
    build(folder, size)
    record = folder / chroma_precheck.CHECKED_FILE

    def after_a_change() -> tuple[float, float]:
        record.unlink(missing_ok=True)
        return open_memory(folder, checks=True)

    arms: dict[str, Callable[[], tuple[float, float]]] = {
        "no checks (baseline)": lambda: open_memory(folder, checks=False),
        "checks, files recorded sound": lambda: open_memory(folder, checks=True),
        "checks, first open after a change": after_a_change,
        "the checks alone, files recorded sound": lambda: check_alone(folder, recorded=True),
        "the checks alone, every file read": lambda: check_alone(folder, recorded=False),
        "plain Chroma": lambda: plain_chroma(folder),
        "read-only copy (added to an open)": lambda: copy_cost(folder),
    }
    for arm in arms.values():  # warm the page cache and Chroma's imports
        arm()
    opens: dict[str, list[float]] = {name: [] for name in arms}
    closes: dict[str, list[float]] = {name: [] for name in arms}
    ratios: dict[str, list[float]] = {name: [] for name in arms}
    pair = ["no checks (baseline)", "checks, files recorded sound"]
    others = [name for name in arms if name not in pair]
    for repetition in range(repeats):
        # The comparison that matters is run as an adjacent pair, its order alternating
        # (the page cache, Chroma's threads); the other arms follow, shuffled. Each
        # ratio is taken within the repetition.
        random.Random(repetition).shuffle(others)
        this: dict[str, float] = {}
        for name in (pair if repetition % 2 else pair[::-1]) + others:
            opened, closed = arms[name]()
            this[name] = opened
            opens[name].append(opened)
            closes[name].append(closed)
        baseline = this["no checks (baseline)"]
        for name, opened in this.items():
            ratios[name].append(opened / baseline)
    return [
        [
            size,
            name,
            f"{1000 * median(opens[name]):.1f}",
            f"{median(ratios[name]):.3f}",
            f"{1000 * median(closes[name]):.1f}" if name in list(arms)[:3] else "-",
        ]
        for name in arms
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--repeats", type=int, default=15)
    parser.add_argument("--out", type=Path, default=RESULTS / "open_cost.md")
    args = parser.parse_args()
    rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as workdir:
        for size in args.sizes:
            rows += measure(size, Path(workdir), args.repeats)
    headers = [
        "episodes",
        "open",
        "median ms",
        "median ratio to no checks (same repetition)",
        "close ms",
    ]
    report = "\n".join(
        [
            "# What checking a folder's files costs an open",
            "",
            f"`python benchmarks/open_cost.py --sizes {' '.join(map(str, args.sizes))} "
            f"--repeats {args.repeats}` on {platform.machine()}, {os.cpu_count()} cores, "
            f"Python {platform.python_version()}, chromadb {chromadb.__version__}. "
            "Repetitions interleaved: in each, the baseline and the default open as an "
            "adjacent pair (order alternating), then the other arms shuffled; each ratio is "
            "taken within one repetition, then the median of the ratios is shown.",
            "",
            table(headers, rows),
            "",
        ]
    )
    print(report)
    args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
