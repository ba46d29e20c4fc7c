"""Many namespaces (one per user): one shared on-disk Chroma store vs a store per namespace.

``N`` namespaces of ``E`` episodes each, kept two ways side by side in one run:

* **shared**: all namespaces in ONE on-disk Chroma folder (one ``ChromaEpisodeStore``,
  a collection per namespace);
* **separate**: a folder (and a ``ChromaEpisodeStore``) per namespace.

Measured for each:

* **setup**: seconds per namespace to create it and record its episodes (median over
  all namespaces; for a separate store this includes opening and closing its folder),
  also for the first and last tenth created, so growth with ``N`` shows; and the disk
  per namespace (sum of file sizes under the folder(s) / ``N``, and the blocks
  actually allocated, as HNSW files are sparse);
* **open**: opening a memory on a random existing namespace, as a new request would:
  on the shared store already open in the process, vs a new ``ChromaEpisodeStore`` on
  that namespace's folder; median ms over ``--samples`` distinct namespaces;
* **first recall** / **recall**: the first recall on that freshly opened memory (loads
  the namespace's index) and a second one on the now warm memory, median ms;
* **fresh process**: a new process opens the shared folder (``ChromaEpisodeStore`` +
  ``len(store.namespaces())``) vs one per-namespace folder: seconds, the process's peak
  RSS and its growth over the imports, median of ``--opens``.

The separate stores are measured at ``--separate`` namespaces (default 1,000: a folder
each makes 10,000 slow and large), which the output states; per-namespace figures
compare across the two sizes, totals do not.

    python benchmarks/namespaces.py [--namespaces 10000] [--episodes 5] [--separate 1000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

from _fixtures import RESULTS, make_episodes, median, table

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings

os.environ["ANONYMIZED_TELEMETRY"] = "False"

QUERY = "Implement feature 3 of module 4"

OPENER = textwrap.dedent(
    """
    import json, sys, time
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings

    def rss_mb():  # resident now, not the peak: the model's load peaks higher
        for line in open("/proc/self/status"):
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024

    base = rss_mb()
    began = time.perf_counter()
    store = ChromaEpisodeStore(path=sys.argv[1])
    count = len(store.namespaces())
    seconds = time.perf_counter() - began
    opened = rss_mb()
    embeddings = StaticEmbeddings()
    embeddings.embed_query("warm up")  # the model's load is not the store's cost
    began = time.perf_counter()
    memory = EpisodicMemory(store=store, namespace=sys.argv[2], embeddings=embeddings)
    hits = memory.recall("Implement feature 3 of module 4")
    first = time.perf_counter() - began
    store.close()
    print(json.dumps({"seconds": seconds, "count": count, "rss_mb": opened,
                      "rss_growth_mb": opened - base, "first_s": first,
                      "hits": len(hits)}))
    """
)


@dataclass
class Arm:
    """One way of keeping the namespaces, measured."""

    setup_ms: float
    tenths_ms: tuple[float, float]
    disk_per_ns: tuple[float, float]
    total_bytes: int
    open_ms: float
    first_ms: float
    recall_ms: float
    fresh_s: float
    fresh_rss: float
    fresh_growth: float
    fresh_first_ms: float


def user(i: int) -> str:
    return f"user-{i:05d}"


def disk(folder: Path) -> tuple[int, int]:
    """Sum of file sizes under ``folder``, and the bytes actually allocated."""
    size = allocated = 0
    for path in folder.rglob("*"):
        if path.is_file():
            stat = path.stat()
            size += stat.st_size
            allocated += stat.st_blocks * 512
    return size, allocated


def log_rows(folder: Path) -> int:
    """Rows in Chroma's write-ahead log (``embeddings_queue``) of a closed folder."""
    connection = sqlite3.connect(f"file:{folder / 'chroma.sqlite3'}?mode=ro", uri=True)
    try:
        rows: int = connection.execute("SELECT COUNT(*) FROM embeddings_queue").fetchone()[0]
    finally:
        connection.close()
    return rows


def build_shared(
    folder: Path, count: int, episodes: int, embeddings: StaticEmbeddings
) -> list[float]:
    """Seconds per namespace to create it and record its episodes in one open store."""
    store = ChromaEpisodeStore(path=folder)
    seconds = []
    batch = make_episodes(0, episodes)  # ids need be unique per namespace only
    for i in range(count):
        began = time.perf_counter()
        memory = EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings)
        memory.record_many(batch)
        memory.flush()
        seconds.append(time.perf_counter() - began)
        if (i + 1) % 1000 == 0:
            print(f"  shared: {i + 1:,} namespaces, last {seconds[-1] * 1e3:.0f} ms", flush=True)
    store.close()
    return seconds


def build_separate(
    folder: Path, count: int, episodes: int, embeddings: StaticEmbeddings
) -> list[float]:
    """Seconds per namespace to open its own folder, record its episodes and close it."""
    seconds = []
    batch = make_episodes(0, episodes)
    for i in range(count):
        began = time.perf_counter()
        store = ChromaEpisodeStore(path=folder / user(i))
        memory = EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings)
        memory.record_many(batch)
        memory.flush()
        store.close()
        seconds.append(time.perf_counter() - began)
        if (i + 1) % 500 == 0:
            print(f"  separate: {i + 1:,} folders, last {seconds[-1] * 1e3:.0f} ms", flush=True)
    return seconds


def requests_shared(
    folder: Path, picks: list[int], embeddings: StaticEmbeddings
) -> tuple[float, list[float], list[float], list[float]]:
    """Open the shared store once; then per pick: open a memory, recall twice (ms)."""
    began = time.perf_counter()
    store = ChromaEpisodeStore(path=folder)
    reopen = time.perf_counter() - began
    opens, firsts, warms = [], [], []
    for i in picks:
        began = time.perf_counter()
        memory = EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings)
        opened = time.perf_counter()
        assert memory.recall(QUERY)
        first = time.perf_counter()
        memory.recall(QUERY)
        warm = time.perf_counter()
        opens.append((opened - began) * 1e3)
        firsts.append((first - opened) * 1e3)
        warms.append((warm - first) * 1e3)
    store.close()
    return reopen, opens, firsts, warms


def requests_separate(
    folder: Path, picks: list[int], embeddings: StaticEmbeddings
) -> tuple[list[float], list[float], list[float]]:
    """Per pick: open its folder and a memory, recall twice, close the folder (ms)."""
    opens, firsts, warms = [], [], []
    for i in picks:
        began = time.perf_counter()
        store = ChromaEpisodeStore(path=folder / user(i))
        memory = EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings)
        opened = time.perf_counter()
        assert memory.recall(QUERY)
        first = time.perf_counter()
        memory.recall(QUERY)
        warm = time.perf_counter()
        store.close()
        opens.append((opened - began) * 1e3)
        firsts.append((first - opened) * 1e3)
        warms.append((warm - first) * 1e3)
    return opens, firsts, warms


def open_in_a_fresh_process(folder: Path, namespace: str) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, "-c", OPENER, str(folder), namespace],
        capture_output=True,
        text=True,
        check=True,
        env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def tenths(seconds: list[float]) -> tuple[float, float]:
    """Median ms of the first and of the last tenth of the namespaces created."""
    k = max(1, len(seconds) // 10)
    return median(seconds[:k]) * 1e3, median(seconds[-k:]) * 1e3


MB = 1024 * 1024


def ratio(value: float, base: float) -> str:
    return f"{value / base:.2f}x" if base else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--namespaces", type=int, default=10_000, help="in the shared store")
    parser.add_argument("--episodes", type=int, default=5, help="per namespace")
    parser.add_argument("--separate", type=int, default=1_000, help="folders, one per namespace")
    parser.add_argument("--samples", type=int, default=200, help="opens and recalls timed")
    parser.add_argument("--opens", type=int, default=3, help="fresh processes per store kind")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    shared_n, separate_n = args.namespaces, args.separate
    rng = random.Random(args.seed)
    started = time.perf_counter()
    embeddings = StaticEmbeddings()
    embeddings.embed_query("warm up")
    folder = Path(tempfile.mkdtemp(prefix="namespaces-bench-"))
    try:
        shared, separate = folder / "shared", folder / "separate"
        separate.mkdir()

        print(f"building {shared_n:,} namespaces in one store ...", flush=True)
        began = time.perf_counter()
        shared_setup = build_shared(shared, shared_n, args.episodes, embeddings)
        print(f"  {time.perf_counter() - began:.0f} s", flush=True)
        print(f"building {separate_n:,} stores, one namespace each ...", flush=True)
        began = time.perf_counter()
        separate_setup = build_separate(separate, separate_n, args.episodes, embeddings)
        print(f"  {time.perf_counter() - began:.0f} s", flush=True)
        shared_disk = disk(shared)
        shared_log = log_rows(shared)
        separate_disk = disk(separate)

        reopen, *shared_requests = requests_shared(
            shared, rng.sample(range(shared_n), min(args.samples, shared_n)), embeddings
        )
        requests = {
            "shared": shared_requests,
            "separate": requests_separate(
                separate, rng.sample(range(separate_n), min(args.samples, separate_n)), embeddings
            ),
        }

        fresh: dict[str, list[dict[str, float]]] = {"shared": [], "separate": []}
        for _ in range(args.opens):  # interleaved
            i = rng.randrange(shared_n)
            fresh["shared"].append(open_in_a_fresh_process(shared, user(i)))
            i = rng.randrange(separate_n)
            fresh["separate"].append(open_in_a_fresh_process(separate / user(i), user(i)))
        assert all(o["count"] == shared_n for o in fresh["shared"]), fresh["shared"]
        assert all(o["count"] == 1 for o in fresh["separate"]), fresh["separate"]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    runtime = time.perf_counter() - started

    def arm(kind: str, count: int, setup: list[float], on_disk: tuple[int, int]) -> Arm:
        timings = requests[kind]
        opened = fresh[kind]
        return Arm(
            setup_ms=median(setup) * 1e3,
            tenths_ms=tenths(setup),
            disk_per_ns=(on_disk[0] / count, on_disk[1] / count),
            total_bytes=on_disk[0],
            open_ms=median(timings[0]),
            first_ms=median(timings[1]),
            recall_ms=median(timings[2]),
            fresh_s=median([o["seconds"] for o in opened]),
            fresh_rss=median([o["rss_mb"] for o in opened]),
            fresh_growth=median([o["rss_growth_mb"] for o in opened]),
            fresh_first_ms=median([o["first_s"] for o in opened]) * 1e3,
        )

    rows = {
        "shared": arm("shared", shared_n, shared_setup, shared_disk),
        "separate": arm("separate", separate_n, separate_setup, separate_disk),
    }
    base = rows["shared"]

    def cells(kind: str, label: str) -> list[str]:
        row = rows[kind]
        first_tenth, last_tenth = row.tenths_ms
        return [
            label,
            f"{row.setup_ms:.1f} ({ratio(row.setup_ms, base.setup_ms)})",
            f"{first_tenth:.1f} / {last_tenth:.1f}",
            f"{row.disk_per_ns[0] / 1024:.0f} ({ratio(row.disk_per_ns[0], base.disk_per_ns[0])})",
            f"{row.disk_per_ns[1] / 1024:.0f} ({ratio(row.disk_per_ns[1], base.disk_per_ns[1])})",
            f"{row.total_bytes / MB:,.1f}",
            f"{row.open_ms:.2f} ({ratio(row.open_ms, base.open_ms)})",
            f"{row.first_ms:.2f} ({ratio(row.first_ms, base.first_ms)})",
            f"{row.recall_ms:.2f} ({ratio(row.recall_ms, base.recall_ms)})",
        ]

    per_namespace = table(
        [
            "store",
            "setup ms/ns (vs shared)",
            "setup ms first / last 10%",
            "disk KiB/ns (vs shared)",
            "allocated KiB/ns (vs shared)",
            "all folders MiB",
            "open memory ms (vs shared)",
            "first recall ms (vs shared)",
            "recall ms (vs shared)",
        ],
        [
            cells("shared", f"one shared store, {shared_n:,} namespaces"),
            cells("separate", f"a store per namespace, {separate_n:,} folders"),
        ],
    )

    def fresh_cells(kind: str, label: str) -> list[str]:
        row = rows[kind]
        return [
            label,
            f"{row.fresh_s:.3f} ({ratio(row.fresh_s, base.fresh_s)})",
            f"{row.fresh_rss:.0f} ({ratio(row.fresh_rss, base.fresh_rss)})",
            f"{row.fresh_growth:+.1f} ({ratio(row.fresh_growth, base.fresh_growth)})",
            f"{row.fresh_first_ms:.0f}",
        ]

    whole = table(
        [
            "fresh process opens",
            "open + namespaces() s (vs shared)",
            "RSS after open MB (vs shared)",
            "RSS growth of open MB (vs shared)",
            "then memory + recall ms",
        ],
        [
            fresh_cells("shared", f"the shared folder ({shared_n:,} namespaces)"),
            fresh_cells("separate", "one per-namespace folder (1 namespace)"),
        ],
    )
    sizes = (
        f"{shared_n:,} namespaces in the shared store, {separate_n:,} per-namespace stores"
        if shared_n != separate_n
        else f"{shared_n:,} namespaces each way"
    )
    note = (
        f"{sizes}, {args.episodes} episodes per namespace, on-disk Chroma, StaticEmbeddings. "
        f"Open and recall: median over {min(args.samples, shared_n)} / "
        f"{min(args.samples, separate_n)} distinct random namespaces (open on the shared store "
        "already open in the process; per-namespace: a new store on its folder, closed "
        "after). Fresh process: median of "
        f"{args.opens}. Per-namespace figures (ms/ns, KiB/ns, open, recall) compare across "
        "the two sizes; the folder totals and the fresh-process open of the shared folder "
        f"are for its {shared_n:,} namespaces. RSS is resident memory (VmRSS) after "
        "the imports and after the open, before the embedding model loads. Reopening the "
        f"shared folder in the benchmark's own process took {reopen:.2f} s. "
        f"Chroma's write-ahead log (embeddings_queue) in the shared folder held {shared_log:,} "
        f"rows after setup, for {shared_n * args.episodes:,} episodes recorded. "
        f"Run took {runtime / 60:.1f} min."
    )
    if shared_n != separate_n:
        note += (
            f" NOTE: the per-namespace-store row is measured at {separate_n:,} namespaces, "
            f"not {shared_n:,}."
        )
    command = (
        f"python benchmarks/namespaces.py --namespaces {shared_n} --episodes {args.episodes} "
        f"--separate {separate_n} --samples {args.samples} --opens {args.opens}"
    )
    result = f"{per_namespace}\n\n{whole}\n\n{note}"
    print()
    print(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "namespaces.md").write_text(
        f"# Many namespaces: one shared Chroma store vs a store per namespace\n\n`{command}`\n\n"
        f"{result}\n"
    )


if __name__ == "__main__":
    main()
