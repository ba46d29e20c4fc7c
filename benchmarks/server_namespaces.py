"""Serving many users from one Chroma server: its memory, descriptors and recall latency.

A real ``chroma run`` server (descriptor limit ``--descriptors``) gets ``--namespaces``
namespaces of ``--episodes`` episodes through ``chromadb.HttpClient``, one per user; each
user is served once as it is built (a memory, its episodes, a recall). At checkpoints the
server's resident memory (VmRSS) and open descriptors are read from ``/proc``. A server
keeps every namespace it touched loaded, and the store cannot close them from a client:
these figures are the budget an operator gives the server.

Then recall latency, median and 95th percentile over ``--samples`` recalls: **warm** (the
last user, again) and **first after a restart** (users of the first half, once each, after
the server restarted: the recall loads the namespace from disk), each on the server's
folder as Chroma leaves it and after ``index_the_folder`` added the two indexes the
embedded store adds (``stores/chroma/folder.py``); the same on a server of 10 namespaces.

    python benchmarks/server_namespaces.py [--namespaces 2000] [--descriptors 20000]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import chromadb
from _fixtures import RESULTS, make_episodes, median, percentile, table

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StaticEmbeddings
from langchain_episodic.stores.chroma.folder import index_the_folder

QUERY = "Implement feature 3 of module 4"
CHECKPOINTS = (10, 100, 500, 1_000, 2_000, 5_000, 10_000)


def user(i: int) -> str:
    return f"user-{i:05d}"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


@contextmanager
def server(folder: Path, descriptors: int) -> Iterator[tuple[chromadb.api.ClientAPI, int]]:
    """``chroma run`` over ``folder`` under a descriptor limit: ``(client, server pid)``."""
    port = free_port()
    chroma = shutil.which("chroma") or str(Path(sys.executable).with_name("chroma"))
    log = (folder.parent / f"{folder.name}.log").open("a")
    process = subprocess.Popen(
        ["prlimit", f"--nofile={descriptors}:{descriptors}", chroma, "run", "--path",
         str(folder), "--host", "127.0.0.1", "--port", str(port)],
        stdout=log, stderr=subprocess.STDOUT, env={**os.environ, "ANONYMIZED_TELEMETRY": "False"},
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                client = chromadb.HttpClient(host="127.0.0.1", port=port)
                client.heartbeat()
                break
            except Exception:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise
                time.sleep(0.25)
        yield client, process.pid
    finally:
        process.terminate()
        process.wait(timeout=60)
        log.close()


def resources(pid: int) -> tuple[float, int]:
    """``(resident MB, open descriptors)`` of process ``pid``."""
    with open(f"/proc/{pid}/status", encoding="ascii") as status:
        rss = next(int(line.split()[1]) / 1024 for line in status if line.startswith("VmRSS:"))
    return rss, len(os.listdir(f"/proc/{pid}/fd"))


def build(folder: Path, count: int, episodes: int, descriptors: int) -> list[dict[str, float]]:
    """Build and serve ``count`` users on a fresh server; its resources at checkpoints."""
    embeddings = StaticEmbeddings()
    batch = make_episodes(0, episodes)
    points = []
    with server(folder, descriptors) as (client, pid):
        base_rss, base_fds = resources(pid)
        store = ChromaEpisodeStore(client=client)
        for i in range(count):
            memory = EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings)
            memory.record_many(batch)
            assert memory.recall(QUERY), user(i)
            if i + 1 in CHECKPOINTS or i + 1 == count:
                rss, fds = resources(pid)
                points.append({"users": i + 1, "rss_mb": rss - base_rss, "fds": fds - base_fds})
                print(f"  served {i + 1:,} users", flush=True)
    return points


def latency(folder: Path, count: int, samples: int, descriptors: int) -> dict[str, list[float]]:
    """Warm and first-after-restart recalls on a restarted server over ``folder``."""
    embeddings = StaticEmbeddings()
    rng = random.Random(7)
    picks = rng.sample(range(max(1, count // 2)), min(samples, max(1, count // 2)))
    with server(folder, descriptors) as (client, _):
        store = ChromaEpisodeStore(client=client)
        first = []
        for i in picks:
            start = time.perf_counter()
            EpisodicMemory(store=store, namespace=user(i), embeddings=embeddings).recall(QUERY)
            first.append((time.perf_counter() - start) * 1e3)
        last = EpisodicMemory(store=store, namespace=user(count - 1), embeddings=embeddings)
        last.recall(QUERY)
        warm = []
        for _ in range(samples):
            start = time.perf_counter()
            last.recall(QUERY)
            warm.append((time.perf_counter() - start) * 1e3)
    return {
        "warm": [median(warm), percentile(warm, 95)],
        "first": [median(first), percentile(first, 95)],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--namespaces", type=int, default=2_000)
    parser.add_argument("--episodes", type=int, default=5)
    parser.add_argument("--samples", type=int, default=200)
    parser.add_argument("--descriptors", type=int, default=20_000)
    parser.add_argument("--out", type=Path, default=RESULTS / "server_namespaces.md")
    args = parser.parse_args()
    began = time.perf_counter()
    work = Path(tempfile.mkdtemp(prefix="server-namespaces-"))
    try:
        print(f"building {args.namespaces:,} namespaces on a server ...", flush=True)
        points = build(work / "many", args.namespaces, args.episodes, args.descriptors)
        build(work / "few", 10, args.episodes, args.descriptors)
        runs = {}
        for name, count in (("many", args.namespaces), ("few", 10)):
            runs[f"{name}, as Chroma leaves it"] = latency(
                work / name, count, args.samples, args.descriptors
            )
            index_the_folder(str(work / name))
            runs[f"{name}, indexed"] = latency(work / name, count, args.samples, args.descriptors)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report = render(args, points, runs, time.perf_counter() - began)
    print(report)
    args.out.write_text(report + "\n", encoding="utf-8")


def render(
    args: argparse.Namespace,
    points: list[dict[str, float]],
    runs: dict[str, dict[str, list[float]]],
    took: float,
) -> str:
    per = points[-1]
    held = table(
        ["users served", "server RSS MB", "server descriptors", "MB a user", "descriptors a user"],
        [
            [
                f"{p['users']:,}",
                f"{p['rss_mb']:,.0f}",
                f"{p['fds']:,}",
                f"{p['rss_mb'] / p['users']:.2f}",
                f"{p['fds'] / p['users']:.1f}",
            ]
            for p in points
        ],
    )

    def ms(pair: list[float]) -> str:
        return f"{pair[0]:.2f} / {pair[1]:.2f}"

    rows = []
    for state in ("as Chroma leaves it", "indexed"):
        few, many = runs[f"few, {state}"], runs[f"many, {state}"]
        rows.append(
            [
                state,
                ms(few["warm"]),
                ms(many["warm"]),
                f"{many['warm'][0] / few['warm'][0]:.2f}x",
                ms(few["first"]),
                ms(many["first"]),
                f"{many['first'][0] / few['first'][0]:.2f}x",
            ]
        )
    speed = table(
        [
            "server folder",
            "warm ms, 10 namespaces",
            f"warm ms, {args.namespaces:,}",
            "ratio",
            "first after restart ms, 10",
            f"first after restart ms, {args.namespaces:,}",
            "ratio",
        ],
        rows,
    )
    return "\n\n".join(
        [
            "# Serving many users from one Chroma server",
            f"`python benchmarks/server_namespaces.py --namespaces {args.namespaces} "
            f"--episodes {args.episodes} --samples {args.samples} "
            f"--descriptors {args.descriptors}`",
            held,
            speed,
            f"A `chroma run` server (chromadb {chromadb.__version__}, descriptor limit "
            f"{args.descriptors:,}) on this machine, reached through `chromadb.HttpClient`; "
            f"{args.namespaces:,} namespaces of {args.episodes} episodes, StaticEmbeddings. "
            "RSS and descriptors are the server's growth over its start while each user is "
            "built and served once. The server keeps every namespace it touched loaded: "
            f"at {per['users']:,} users, {per['rss_mb'] / per['users']:.2f} MB and "
            f"{per['fds'] / per['users']:.1f} descriptors a user, so 10,000 users need "
            f"about {per['rss_mb'] / per['users'] * 10:.0f} GB and "
            f"{per['fds'] / per['users'] * 10_000:,.0f} descriptors (measured up to "
            f"{per['users']:,} here). Latency (median / p95 over {args.samples} recalls, "
            "a new memory and a recall for a first one): on a restarted server, users of "
            "the first half once each, then the last user again and again; first on the "
            "folder as Chroma leaves it, then after `index_the_folder` added the log and "
            f"segments indexes. Run took {took / 60:.1f} min.",
        ]
    )


if __name__ == "__main__":
    sys.exit(main())
