"""How precise is the relevance test, and how much of a task's topic does it keep?

The goal set for the relevance stage: topic recall >= 0.9 at precision >= 0.95, with
at most 0.05 episodes per off-topic query (``relevance.py`` measures the last). On the
labelled paraphrase set of ``retrieval_data.py`` (64 tasks in 10 topic sections, 2
paraphrases each, 20 distractors that share surface words), one episode per task and
distractor, for each paraphrase asked:

* **own kept**: its own task passes the relevance test (among the 24 most similar);
* **topic recall**: the share of its topic's stored tasks that pass;
* **precision**: the share of the episodes that pass that are of its topic (its own
  task or another task of its section; a distractor never counts);
* **returned per query** and the share of queries given nothing;
* **the embedder's bound**: the best any single similarity threshold could do on the
  same candidates (for each threshold: topic recall and precision pooled over queries;
  the highest topic recall whose precision reaches 0.95), with the topic as the section
  and with the topic as the query's own task only. A relevance rule that reads only
  similarity cannot beat it, so where it is below the goal, the embedder is why.

Topics are the sections of ``retrieval_data.py`` (its ``# ---`` comments).

    python benchmarks/relevance_precision.py [--out FILE]
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_core.embeddings import Embeddings  # noqa: E402
from retrieval_data import TASKS  # noqa: E402
from retrieval_quality import build_episodes, queries  # noqa: E402

from langchain_episodic import EpisodicMemory, RecallOptions, StaticEmbeddings  # noqa: E402
from langchain_episodic.stores import InMemoryEpisodeStore  # noqa: E402

POOL = 24
GOAL_RECALL, GOAL_PRECISION = 0.9, 0.95


def topics() -> dict[str, str]:
    """Each labelled task's topic: the ``# ---`` section of ``retrieval_data.py`` it is in."""
    found: dict[str, str] = {}
    section = ""
    keys = {task.key for task in TASKS}
    source = (Path(__file__).resolve().parent / "retrieval_data.py").read_text(encoding="utf-8")
    for line in source.splitlines():
        heading = re.match(r"\s*# --- (.+)", line)
        if heading:
            section = heading.group(1).strip()
            continue
        key = re.match(r'\s*"([a-z0-9-]+)",\s*$', line)
        if key and key.group(1) in keys and key.group(1) not in found:
            found[key.group(1)] = section
    missing = keys - set(found)
    if missing:
        msg = f"no section found for {sorted(missing)[:3]}"
        raise RuntimeError(msg)
    return found


def measure(name: str, embeddings: Embeddings) -> list[str]:
    episodes = build_episodes(span_days=14.0)
    now = max(e.timestamp for e in episodes) + 3600.0
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), embeddings=embeddings)
    memory.record_many(episodes)
    topic_of = topics()
    members: dict[str, set[str]] = {}
    for key, topic in topic_of.items():
        members.setdefault(topic, set()).add(key)
    own = recall = precision_sum = returned = nothing = 0.0
    kept_total = on_topic_total = 0
    scored: list[tuple[float, bool, str]] = []  # (similarity, on topic, query) for the bound
    own_scored: list[tuple[float, bool, str]] = []  # the same with its own task as the topic
    asked = queries()
    for text, key in asked:
        topic = members[topic_of[key]]
        report = memory.recall(
            text, options=RecallOptions(top_k=POOL, fetch_k=POOL, current_time=now), explain=True
        )
        kept = [r.episode.episode_id for r in report.results if r.relevant]
        on = [i for i in kept if i in topic]
        own += key in kept
        recall += len(on) / len(topic)
        precision_sum += len(on) / len(kept) if kept else 1.0
        returned += len(kept)
        nothing += not kept
        kept_total += len(kept)
        on_topic_total += len(on)
        scored += [(r.similarity, r.episode.episode_id in topic, text) for r in report.results]
        own_scored += [(r.similarity, r.episode.episode_id == key, text) for r in report.results]
    n = len(asked)
    topic_size = {text: len(members[topic_of[key]]) for text, key in asked}
    pooled_precision = on_topic_total / kept_total if kept_total else 1.0
    return [
        f"| {name} | {own / n:.2f} | {recall / n:.2f} | {pooled_precision:.2f} "
        f"({precision_sum / n:.2f}) | {returned / n:.2f} | {nothing / n:.2f} | "
        f"{bound(scored, topic_size)} | {bound(own_scored, dict.fromkeys(topic_size, 1))} |"
    ]


def bound(scored: Sequence[tuple[float, bool, str]], sizes: dict[str, int]) -> str:
    """The highest recall any single similarity threshold reaches at the goal's precision."""
    best = (0.0, 0.0, 0.0)  # (recall, precision, threshold)
    for threshold in sorted({round(s, 3) for s, _, _ in scored}):
        above = [(on, text) for s, on, text in scored if s >= threshold]
        if not above:
            continue
        precision = sum(on for on, _ in above) / len(above)
        per_query: dict[str, int] = {}
        for on, text in above:
            per_query[text] = per_query.get(text, 0) + on
        recall = sum(per_query.get(t, 0) / size for t, size in sizes.items()) / len(sizes)
        if precision >= GOAL_PRECISION and recall > best[0]:
            best = (recall, precision, threshold)
    return f"{best[0]:.2f} (similarity >= {best[2]:.3f})"


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    models: list[tuple[str, Embeddings]] = [("StaticEmbeddings (default)", StaticEmbeddings())]
    try:
        from langchain_episodic.embeddings.minilm import minilm_embeddings  # noqa: PLC0415

        models.append(("all-MiniLM-L6-v2", minilm_embeddings()))
    except ImportError:  # the huggingface extra is not installed
        pass
    lines = [
        "# Relevance test: topic recall and precision (no model)",
        "",
        "Produced by `python benchmarks/relevance_precision.py`. Goal: topic recall >= "
        f"{GOAL_RECALL} at precision >= {GOAL_PRECISION}. Precision pooled over every episode "
        "kept (mean per query in brackets).",
        "",
        "| embedder | own task kept | topic recall | precision | kept per query | "
        "queries given nothing | embedder's bound: topic recall at precision 0.95 | "
        "the same, own task as the topic |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name, embeddings in models:
        lines += measure(name, embeddings)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
