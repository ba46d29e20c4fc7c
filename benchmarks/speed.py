"""Speed of langchain-episodic against raw Chroma and LangChain's time-weighted retriever.

Every figure is printed next to its baseline from the same run, as a ratio: machines
here are shared and noisy, absolute times are not comparable across runs.

    python benchmarks/speed.py recall   [--sizes 1000 10000 100000] [--queries 200]
    python benchmarks/speed.py record   [--batch-sizes 1 32 256 5000]
    python benchmarks/speed.py footprint [--size 100000]
    python benchmarks/speed.py restart
    python benchmarks/speed.py all       # everything above, tables to benchmarks/results/

Stores of each size are built once under benchmarks/.cache/ and reused.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import textwrap
import uuid
from pathlib import Path

import chromadb
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _fixtures import (  # noqa: E402
    CACHE,
    RESULTS,
    PrecomputedEmbeddings,
    make_episodes,
    median,
    percentile,
    table,
    timed,
    unit_vectors,
)

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory  # noqa: E402
from langchain_episodic.stores.chroma.records import episode_metadata  # noqa: E402

TOP_K = 3
FETCH_K = 2 * TOP_K
NOW = 1_780_000_000.0 + 60.0 * 200_000
TWVSR_COLLECTION = "twvsr"
BUILD_CHUNK = 5_000


def embeddings_for(size: int) -> PrecomputedEmbeddings:
    return PrecomputedEmbeddings(unit_vectors(size, seed=1), unit_vectors(1_000, seed=2))


# --------------------------------------------------------------------------- build


def twvsr_vectorstore(client: chromadb.api.ClientAPI, embeddings: PrecomputedEmbeddings):  # type: ignore[no-untyped-def]
    from langchain_chroma import Chroma  # noqa: PLC0415

    return Chroma(
        collection_name=TWVSR_COLLECTION,
        client=client,
        embedding_function=embeddings,
        collection_metadata={"hnsw:space": "cosine"},
    )


def build_store(size: int) -> Path:
    """An on-disk store of ``size`` episodes, for us and for the time-weighted retriever."""
    path = CACHE / f"store-{size}"
    if (path / "complete").exists():
        return path
    shutil.rmtree(path, ignore_errors=True)
    path.mkdir(parents=True)
    embeddings = embeddings_for(size)
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=path), embeddings=embeddings)
    twvsr_store = twvsr_vectorstore(memory.store.client, embeddings)
    print(f"building {size:,} episodes in {path} ...", flush=True)
    for start in range(0, size, BUILD_CHUNK):
        episodes = make_episodes(start, min(size, start + BUILD_CHUNK))
        memory.record_many(episodes)
        # The same data for the time-weighted retriever: the whole episode in its
        # document (task description first, for the fixed embedding lookup), and float
        # timestamps, since Chroma rejects its default datetime metadata.
        twvsr_store.add_texts(
            texts=[
                f"{e.task.description}\n{json.dumps(e.to_dict(), separators=(',', ':'))}"
                for e in episodes
            ],
            metadatas=[
                {
                    "buffer_idx": start + offset,
                    "last_accessed_at": e.timestamp,
                    "created_at": e.timestamp,
                }
                for offset, e in enumerate(episodes)
            ],
            ids=[e.episode_id for e in episodes],
        )
    (path / "complete").write_text(str(size))
    return path


def time_weighted_retriever(client: chromadb.api.ClientAPI, embeddings: PrecomputedEmbeddings):  # type: ignore[no-untyped-def]
    """LangChain's TimeWeightedVectorStoreRetriever over the stored copy.

    Its memory_stream lives only in RAM, so after opening it must be rebuilt from
    Chroma: every document, in buffer order.
    """
    from langchain_classic.retrievers import TimeWeightedVectorStoreRetriever  # noqa: PLC0415
    from langchain_core.documents import Document  # noqa: PLC0415

    vectorstore = twvsr_vectorstore(client, embeddings)
    collection = client.get_collection(TWVSR_COLLECTION)
    stream = []
    for offset in range(0, collection.count(), BUILD_CHUNK):  # SQLite caps one read
        got = collection.get(include=["documents", "metadatas"], limit=BUILD_CHUNK, offset=offset)
        stream += [
            Document(page_content=text, metadata=dict(metadata))
            for text, metadata in zip(got["documents"], got["metadatas"], strict=True)
        ]
    stream.sort(key=lambda doc: doc.metadata["buffer_idx"])
    return TimeWeightedVectorStoreRetriever(
        vectorstore=vectorstore, memory_stream=stream, k=TOP_K, search_kwargs={"k": FETCH_K}
    )


# --------------------------------------------------------------------------- recall


def bench_recall(sizes: list[int], queries: int) -> str:
    rows = []
    for size in sizes:
        path = build_store(size)
        embeddings = embeddings_for(size)
        memory = EpisodicMemory(store=ChromaEpisodeStore(path=path), embeddings=embeddings)
        collection = memory.store.collection("default")
        holder: dict[str, object] = {}
        rebuild = timed(
            lambda: holder.update(twvsr=time_weighted_retriever(memory.store.client, embeddings))
        )
        twvsr = holder["twvsr"]
        query_vectors = embeddings.queries

        def raw(j: int) -> object:
            return collection.query(
                query_embeddings=[query_vectors[j]],
                n_results=FETCH_K,
                include=["documents", "metadatas", "distances"],
            )

        def ours(j: int) -> object:
            return memory.recall(f"query {j}", top_k=TOP_K, current_time=NOW)

        def theirs(j: int) -> object:
            return twvsr.invoke(f"query {j}")  # type: ignore[attr-defined]

        contenders = {"raw": raw, "ours": ours, "twvsr": theirs}
        times: dict[str, list[float]] = {name: [] for name in contenders}
        for j in range(20):  # warm caches
            for function in contenders.values():
                function(j)
        names = list(contenders)
        for j in range(queries):
            order = names[j % 3 :] + names[: j % 3]  # rotate: no contender always goes first
            for name in order:
                times[name].append(timed(lambda name=name: contenders[name](j)) * 1000)
        p50 = {name: median(values) for name, values in times.items()}
        p95 = {name: percentile(values, 95) for name, values in times.items()}
        rows.append(
            [
                f"{size:,}",
                f"{p50['raw']:.2f} / {p95['raw']:.2f}",
                f"{p50['ours']:.2f} / {p95['ours']:.2f}",
                f"{p50['twvsr']:.2f} / {p95['twvsr']:.2f}",
                f"{p50['ours'] / p50['raw']:.2f}x / {p95['ours'] / p95['raw']:.2f}x",
                f"{p50['ours'] / p50['twvsr']:.2f}x",
                f"{rebuild:.1f}",
            ]
        )
        print(table(HEADERS_RECALL, rows[-1:]), flush=True)
    return table(HEADERS_RECALL, rows)


HEADERS_RECALL = [
    "episodes",
    "raw query p50/p95 ms",
    "ours p50/p95 ms",
    "time-weighted p50/p95 ms",
    "ours / raw (goal <= 1.2x)",
    "ours / time-weighted (goal <= 1x)",
    "time-weighted memory_stream rebuild s",
]


# --------------------------------------------------------------------------- record


def bench_record(batch_sizes: list[int], rounds: int = 7) -> str:
    client = chromadb.EphemeralClient()
    totals = {1: 300, 32: 960, 256: 3_072, 5_000: 10_000}
    rows = []
    for batch_size in batch_sizes:
        total = totals.get(batch_size, batch_size * 4)
        episodes = make_episodes(0, total)
        embeddings = PrecomputedEmbeddings(unit_vectors(total, seed=3), unit_vectors(1, seed=4))
        vectors = embeddings.episodes
        metadatas = [episode_metadata(e, i) for i, e in enumerate(episodes)]
        seconds: dict[str, list[float]] = {"raw": [], "ours": []}

        def run_ours() -> None:
            store = ChromaEpisodeStore(client=client, collection_name=f"b-{uuid.uuid4().hex}")
            memory = EpisodicMemory(store=store, embeddings=embeddings)
            for start in range(0, total, batch_size):
                memory.record_many(episodes[start : start + batch_size])

        def run_raw() -> None:
            collection = client.create_collection(
                f"b-{uuid.uuid4().hex}",
                configuration={"hnsw": {"space": "cosine"}},
                embedding_function=None,
            )
            for start in range(0, total, batch_size):
                part = slice(start, start + batch_size)
                collection.add(
                    ids=[e.episode_id for e in episodes[part]],
                    embeddings=vectors[part],
                    documents=[e.task.description for e in episodes[part]],
                    metadatas=metadatas[part],
                )

        for round_ in range(rounds):
            pair = [("raw", run_raw), ("ours", run_ours)]
            for name, function in pair if round_ % 2 == 0 else pair[::-1]:
                seconds[name].append(timed(function))
        raw_rate = total / median(seconds["raw"])
        our_rate = total / median(seconds["ours"])
        # Each round times both back to back: the median of the paired ratios is less
        # exposed to the other load on a shared machine than a ratio of medians.
        paired = median([o / r for o, r in zip(seconds["ours"], seconds["raw"], strict=True)])
        rows.append(
            [
                f"{batch_size:,}",
                f"{total:,}",
                f"{raw_rate:,.0f}",
                f"{our_rate:,.0f}",
                f"{raw_rate / our_rate:.2f}x",
                f"{paired:.2f}x",
            ]
        )
        print(table(HEADERS_RECORD, rows[-1:]), flush=True)
    return table(HEADERS_RECORD, rows)


HEADERS_RECORD = [
    "batch size",
    "episodes",
    "raw add episodes/s",
    "record_many episodes/s",
    "time ours / raw, medians (goal <= 1.3x)",
    "median of paired ratios",
]


# --------------------------------------------------------------------------- footprint

FOOTPRINT_SCRIPT = """
import json, os, sys, tracemalloc
sys.path[:0] = [{bench!r}, {root!r}]
os.environ["ANONYMIZED_TELEMETRY"] = "False"
import chromadb
from _fixtures import PrecomputedEmbeddings, unit_vectors
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
import speed

def rss_kib():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1])

embeddings = speed.embeddings_for({size})
before = rss_kib()
tracemalloc.start()
kind = {kind!r}
if kind == "ours":
    memory = EpisodicMemory(store=ChromaEpisodeStore(path={path!r}), embeddings=embeddings)
    hits = memory.recall("query 1", top_k=3, current_time=speed.NOW)
    assert len(hits) == 3
elif kind == "raw":
    client = chromadb.PersistentClient(path={path!r})
    collection = client.get_collection("episodes")
    got = collection.query(query_embeddings=[embeddings.queries[1]], n_results=6,
                           include=["documents", "metadatas", "distances"])
    assert len(got["ids"][0]) == 6
else:
    client = chromadb.PersistentClient(path={path!r})
    retriever = speed.time_weighted_retriever(client, embeddings)
    assert len(retriever.invoke("query 1")) == 3
current, peak = tracemalloc.get_traced_memory()
print(json.dumps({{"heap_kib": current // 1024, "heap_peak_kib": peak // 1024,
                  "rss_delta_kib": rss_kib() - before}}))
"""


def bench_footprint(size: int) -> str:
    path = build_store(size)
    here = Path(__file__).resolve().parent
    rows = []
    measured = {}
    for kind in ("raw", "ours", "twvsr"):
        script = FOOTPRINT_SCRIPT.format(
            bench=str(here), root=str(here.parent), size=size, kind=kind, path=str(path)
        )
        done = subprocess.run(
            [sys.executable, "-c", textwrap.dedent(script)],
            capture_output=True,
            text=True,
            check=True,
        )
        measured[kind] = json.loads(done.stdout.strip().splitlines()[-1])
    names = {"raw": "raw Chroma query", "ours": "EpisodicMemory", "twvsr": "time-weighted"}
    for kind, values in measured.items():
        rows.append(
            [
                names[kind],
                f"{values['heap_kib'] / 1024:.1f}",
                f"{values['heap_peak_kib'] / 1024:.1f}",
                f"{values['rss_delta_kib'] / 1024:.1f}",
                f"{values['heap_kib'] / max(measured['raw']['heap_kib'], 1):.2f}x",
            ]
        )
    return f"{size:,} episodes on disk, opened and recalled once in a fresh process\n\n" + table(
        [
            "what",
            "Python heap MiB",
            "heap peak MiB",
            "RSS growth MiB",
            "heap vs raw",
        ],
        rows,
    )


# --------------------------------------------------------------------------- restart

RESTART_WRITE = """
import os, sys
sys.path[:0] = [{bench!r}, {root!r}]
os.environ["ANONYMIZED_TELEMETRY"] = "False"
import speed
from _fixtures import make_episodes
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_classic.retrievers import TimeWeightedVectorStoreRetriever
from langchain_core.documents import Document
embeddings = speed.embeddings_for(1000)
memory = EpisodicMemory(store=ChromaEpisodeStore(path={path!r}), embeddings=embeddings)
episodes = make_episodes(0, 1000)
memory.record_many(episodes)
retriever = TimeWeightedVectorStoreRetriever(
    vectorstore=speed.twvsr_vectorstore(memory.store.client, embeddings), k=3,
    search_kwargs={{"k": 6}})
try:
    retriever.add_documents([Document(page_content=episodes[0].task.description)])
    print("datetime metadata: accepted")
except Exception as error:
    print("datetime metadata:", type(error).__name__, str(error).splitlines()[0][:120])
docs = [Document(page_content=e.task.description,
                 metadata={{"last_accessed_at": e.timestamp, "created_at": e.timestamp}})
        for e in episodes]
retriever.add_documents(docs)
print("before restart:", [d.page_content.split()[1] for d in retriever.invoke("query 7")])
"""

RESTART_READ = """
import os, sys
sys.path[:0] = [{bench!r}, {root!r}]
os.environ["ANONYMIZED_TELEMETRY"] = "False"
import speed
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_classic.retrievers import TimeWeightedVectorStoreRetriever
embeddings = speed.embeddings_for(1000)
memory = EpisodicMemory(store=ChromaEpisodeStore(path={path!r}), embeddings=embeddings)
hits = memory.recall("query 7", top_k=3, current_time=speed.NOW)
print("ours after restart:", len(memory), "episodes,",
      "short-term", [e.episode_id for e in memory.short_term][-2:], ",",
      "recall", [h.episode.episode_id for h in hits])
retriever = TimeWeightedVectorStoreRetriever(
    vectorstore=speed.twvsr_vectorstore(memory.store.client, embeddings), k=3,
    search_kwargs={{"k": 6}})
try:
    print("time-weighted after restart:", retriever.invoke("query 7"))
except Exception as error:
    print("time-weighted after restart:", type(error).__name__ + ":", error)
"""


def bench_restart() -> str:
    here = Path(__file__).resolve().parent
    path = CACHE / "restart"
    shutil.rmtree(path, ignore_errors=True)
    lines = []
    for script in (RESTART_WRITE, RESTART_READ):
        code = textwrap.dedent(
            script.format(bench=str(here), root=str(here.parent), path=str(path))
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        lines += [line for line in done.stdout.splitlines() if line.strip()]
    shutil.rmtree(path, ignore_errors=True)
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="what", required=True)
    recall = sub.add_parser("recall")
    recall.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    recall.add_argument("--queries", type=int, default=200)
    record = sub.add_parser("record")
    record.add_argument("--batch-sizes", type=int, nargs="+", default=[1, 32, 256, 5_000])
    footprint = sub.add_parser("footprint")
    footprint.add_argument("--size", type=int, default=100_000)
    sub.add_parser("restart")
    everything = sub.add_parser("all")
    everything.add_argument("--sizes", type=int, nargs="+", default=[1_000, 10_000, 100_000])
    everything.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()

    sections: list[tuple[str, str]] = []
    if args.what in ("recall", "all"):
        sections.append(("Recall latency", bench_recall(args.sizes, args.queries)))
    if args.what in ("record", "all"):
        batch_sizes = getattr(args, "batch_sizes", [1, 32, 256, 5_000])
        sections.append(("Record throughput", bench_record(batch_sizes)))
    if args.what in ("footprint", "all"):
        size = getattr(args, "size", max(getattr(args, "sizes", [100_000])))
        sections.append(("Memory footprint", bench_footprint(size)))
    if args.what in ("restart", "all"):
        sections.append(("Restart", bench_restart()))
    report = "\n\n".join(f"## {title}\n\n{body}" for title, body in sections)
    print("\n" + report)
    if args.what == "all":
        RESULTS.mkdir(parents=True, exist_ok=True)
        (RESULTS / "speed.md").write_text(report + "\n")
        print(f"\nwritten to {RESULTS / 'speed.md'}")


if __name__ == "__main__":
    np.seterr(all="ignore")
    main()
