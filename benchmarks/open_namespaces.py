"""Serving many users from one embedded folder: memory, descriptors and recall latency.

One folder holds ``--namespaces`` namespaces (one per user) of ``--episodes`` episodes;
a second holds 10. A fresh process opens the folder and serves each user once (a
memory and a recall, as a request would), in order, and reports at checkpoints its
resident memory (VmRSS) and open file descriptors. Side by side, each in its own
process on the same folder:

* **baseline**: the store as before the cap (``max_open_namespaces`` so large it never
  closes a namespace: Chroma keeps every index it loaded), over the first
  ``--baseline`` users only: at ~2.6 MB a namespace, 10,000 do not fit this machine;
* **capped**: the default cap (:func:`open_namespace_cap`), over every user.

Then, in the same process, recall latency: **warm** (a user whose namespace is open,
recalled again) and **closed** (a user served long before, whose namespace a reopen
closed: the recall loads it from disk), median and 95th percentile over ``--samples``
users; and the same on the 10-namespace folder. Figures are medians within one run.

    python benchmarks/open_namespaces.py [--namespaces 10000] [--baseline 2000]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, cast

from _fixtures import RESULTS, make_episodes, median, percentile, run_worker, table

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings
from langchain_episodic.stores.chroma.folder import descriptor_limit
from langchain_episodic.stores.chroma.open_namespaces import open_namespace_cap

os.environ["ANONYMIZED_TELEMETRY"] = "False"

QUERY = "Implement feature 3 of module 4"
UNBOUNDED = 10**9
FEW_CAP = 2  # the folder of 10 with a cap that closes namespaces, to compare closed recalls
CHECKPOINTS = (10, 100, 1_000, 2_000, 5_000, 10_000, 20_000)


def user(i: int) -> str:
    return f"user-{i:05d}"


def rss_mb() -> float:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def descriptors() -> int:
    return len(os.listdir("/proc/self/fd"))


def build(folder: Path, count: int, episodes: int) -> float:
    """Record ``episodes`` episodes in each of ``count`` namespaces; seconds taken."""
    began = time.perf_counter()
    store = ChromaEpisodeStore(path=folder)
    embeddings = StaticEmbeddings()
    batch = make_episodes(0, episodes)  # ids need be unique per namespace only
    for i in range(count):
        memory = EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings)
        memory.record_many(batch)
        memory.flush()
        if (i + 1) % 1000 == 0:
            print(f"  built {i + 1:,} namespaces", flush=True)
    store.close()
    return time.perf_counter() - began


def serve(folder: str, users: int, cap: int | None, samples: int) -> dict[str, object]:
    """The worker: serve ``users`` users once each, then time warm and closed recalls."""
    embeddings = StaticEmbeddings()
    embeddings.embed_query("warm up")  # the model's load is not the store's cost
    base_rss, base_fds = rss_mb(), descriptors()
    store = ChromaEpisodeStore(path=folder, max_open_namespaces=cap)
    points: list[dict[str, float]] = []
    began = time.perf_counter()
    for i in range(users):
        memory = EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings)
        assert memory.recall(QUERY), user(i)
        if i + 1 in CHECKPOINTS or i + 1 == users:
            points.append(
                {
                    "users": i + 1,
                    "rss_mb": rss_mb() - base_rss,
                    "fds": descriptors() - base_fds,
                    "open": len(store.open_namespaces.names),
                }
            )
    served = time.perf_counter() - began
    rng = random.Random(7)
    last = EpisodicMemory(store=store, namespace=user(users - 1), embeddings=embeddings)
    warm = []
    for _ in range(samples):
        start = time.perf_counter()
        last.recall(QUERY)
        warm.append((time.perf_counter() - start) * 1e3)
    # Users served in the first half: closed by a reopen since, unless nothing closes
    # (the baseline: each is still loaded). A recall that had to reopen the client first
    # (one in ``cap``) is timed apart: the reopen is not the load of a namespace.
    candidates = range(max(1, users // 2))
    closes = store.open_namespaces.cap < users
    closed: list[float] = []
    reopening: list[float] = []
    for _ in range(samples * 20):
        if len(closed) >= samples:
            break
        name = user(rng.choice(candidates))
        if closes and name in store.open_namespaces.names:
            continue
        reopens = store.open_namespaces.reopens
        start = time.perf_counter()
        EpisodicMemory(store=store, namespace=name, embeddings=embeddings).recall(QUERY)
        took = (time.perf_counter() - start) * 1e3
        (reopening if store.open_namespaces.reopens != reopens else closed).append(took)
    result = {
        "cap": store.open_namespaces.cap,
        "reopens": store.open_namespaces.reopens,
        "served_s": served,
        "points": points,
        "warm_ms": [median(warm), percentile(warm, 95)],
        "closed_ms": [median(closed), percentile(closed, 95)],
        "reopening_ms": [median(reopening), percentile(reopening, 95)] if reopening else None,
    }
    store.close()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--namespaces", type=int, default=10_000)
    parser.add_argument("--baseline", type=int, default=2_000)
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--out", type=Path, default=RESULTS / "open_namespaces.md")
    parser.add_argument(
        "--keep", type=Path, help="build the folders here and keep them (reused when there)"
    )
    parser.add_argument("--worker", nargs=4, metavar=("FOLDER", "USERS", "CAP", "SAMPLES"))
    args = parser.parse_args()
    if args.worker:
        folder, users, cap, samples = args.worker
        print(json.dumps(serve(folder, int(users), int(cap) or None, int(samples))))
        return

    began = time.perf_counter()
    work = args.keep or Path(tempfile.mkdtemp(prefix="open-namespaces-"))
    built = float("nan")
    try:
        if not (work / "many" / "chroma.sqlite3").is_file():
            print(f"building {args.namespaces:,} namespaces ...", flush=True)
            built = build(work / "many", args.namespaces, args.episodes)
            build(work / "few", 10, args.episodes)
        script = str(Path(__file__).resolve())
        runs = {
            "baseline": run_worker(
                script,
                [str(work / "many"), str(args.baseline), str(UNBOUNDED), str(args.samples)],
                None,
            ),
            "capped": run_worker(
                script, [str(work / "many"), str(args.namespaces), "0", str(args.samples)], None
            ),
            # A cap of 2, so that a namespace of the small folder is closed too.
            "capped, 10": run_worker(
                script, [str(work / "few"), "10", str(FEW_CAP), str(args.samples)], None
            ),
        }
    finally:
        if args.keep is None:
            shutil.rmtree(work, ignore_errors=True)
    report = render(args, runs, built, time.perf_counter() - began)
    print(report)
    args.out.write_text(report + "\n", encoding="utf-8")


def render(args: argparse.Namespace, runs: dict[str, object], built: float, took: float) -> str:
    baseline, capped, few = (
        cast("dict[str, Any]", runs[name]) for name in ("baseline", "capped", "capped, 10")
    )
    before_at = {p["users"]: p for p in baseline["points"]}
    after_at = {p["users"]: p for p in capped["points"]}

    def cell(point: dict[str, float] | None, key: str) -> str:
        return "—" if point is None else f"{point[key]:,.0f}"

    rows = []
    for users in sorted(before_at.keys() | after_at.keys()):
        before, after = before_at.get(users), after_at.get(users)
        rows.append(
            [f"{users:,}"]
            + [cell(point, key) for key in ("rss_mb", "fds", "open") for point in (before, after)]
        )
    points = table(
        [
            "users served",
            "baseline RSS MB",
            "capped RSS MB",
            "baseline fds",
            "capped fds",
            "baseline open namespaces",
            "capped open namespaces",
        ],
        rows,
    )

    def ms(pair: list[float] | None) -> str:
        return "—" if pair is None else f"{pair[0]:.2f} / {pair[1]:.2f}"

    def ratio(run: dict[str, Any], key: str) -> str:
        return f"{run[key][0] / few[key][0]:.2f}x"

    latency = table(
        [
            "store",
            "users served",
            "warm recall ms (median / p95)",
            "closed namespace's recall ms",
            "recall that reopened the client ms",
            "warm / closed vs the folder of 10",
        ],
        [
            [
                f"cap {few['cap']}, folder of 10",
                "10",
                ms(few["warm_ms"]),
                ms(few["closed_ms"]),
                ms(few["reopening_ms"]),
                "1x / 1x",
            ],
            [
                f"baseline (never closes), folder of {args.namespaces:,}",
                f"{args.baseline:,}",
                ms(baseline["warm_ms"]),
                ms(baseline["closed_ms"]) + " (still loaded)",
                "—",
                f"{ratio(baseline, 'warm_ms')} / —",
            ],
            [
                f"default cap, folder of {args.namespaces:,}",
                f"{args.namespaces:,}",
                ms(capped["warm_ms"]),
                ms(capped["closed_ms"]),
                ms(capped["reopening_ms"]),
                f"{ratio(capped, 'warm_ms')} / {ratio(capped, 'closed_ms')}",
            ],
        ],
    )
    built_text = "reused" if built != built else f"built in {built / 60:.1f} min"
    per_reopen = capped["served_s"] / max(1, args.namespaces)
    limit = descriptor_limit()
    return "\n\n".join(
        [
            "# Serving many users from one embedded folder",
            f"`python benchmarks/open_namespaces.py --namespaces {args.namespaces} "
            f"--baseline {args.baseline} --episodes {args.episodes} --samples {args.samples}`",
            points,
            latency,
            f"{args.namespaces:,} namespaces of {args.episodes} episodes in one on-disk folder "
            f"({built_text}), StaticEmbeddings. Each column is a fresh "
            "process that serves each user once, in order (a memory and a recall); RSS and "
            "descriptors are its growth over the imports and the embedder's load. Baseline: "
            "no namespace is ever closed (as before the cap), over the first "
            f"{args.baseline:,} users only (about 2.6 MB each: {args.namespaces:,} do not fit "
            f"this machine). Capped: the default cap, {capped['cap']} namespaces here "
            f"(descriptor limit {limit}; default for this limit: "
            f"{open_namespace_cap(None, limit)}), {capped['reopens']} reopens while serving "
            f"{args.namespaces:,} users ({per_reopen * 1e3:.1f} ms a user in all). Warm: the "
            f"last user served, recalled {args.samples} times; closed: {args.samples} "
            "recalls of users from the first half whose namespace a reopen had closed, so "
            "the recall (a new memory and a recall) loads it from disk (in the baseline "
            "nothing closes: they are still loaded); a recall that had to reopen the client "
            "first (one in a cap's worth) is timed apart. The folder of 10 runs with a cap "
            f"of {FEW_CAP}, so that its namespaces close too. Run took {took / 60:.1f} min.",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
