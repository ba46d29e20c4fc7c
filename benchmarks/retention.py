"""A memory capped at N, fed 10x N episodes: does it keep recalling well, and stay fast?

A simulated agent (scripted, no model) works through a stream of ``10 * N`` tasks on
the default ``StaticEmbeddings``, in-process Chroma. A fifth of the stream are the 64
labelled tasks of ``retrieval_data.py``, each coming back again and again (new
episodes of the same task); the rest are one-off filler tasks that never come back.
Before each recurring task the agent recalls with one of its paraphrases, shows the
top 3 and credits the run: reward 1.0 when an episode of the same task was shown (it
helped), 0.4 otherwise. Three memories see the same stream, side by side:

* **uncapped**: keeps everything, credit as above (the baseline);
* **capped**: ``Retention(max_episodes=N, on_write=True)``, the default value order
  (never helpful first, then low utility, then old), credit as above;
* **uncapped, no credit** and **capped, no credit**: the same without the credit
  loop, so every episode is "never helpful" and the cap removes the oldest first
  (what a plain sliding window keeps). Credit changes the ranking too, so compare
  capped with uncapped within each pair.

Reported at each tenth of the stream: episodes held, hit@1 / hit@3 of the 128
paraphrase queries (the right task's episode first / in the top 3), and the median
recall time per query, as a ratio to the uncapped memory's at the same point.

    python benchmarks/retention.py [--cap 300] [--out benchmarks/results/retention.md]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections.abc import Sequence
from pathlib import Path

from _fixtures import RESULTS, table
from retrieval_data import DISTRACTORS, TASKS

from langchain_episodic import (
    Episode,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langchain_episodic.scoring.retention import Retention

HOUR = 3_600.0
VERBS = ("Add", "Fix", "Refactor", "Document", "Test", "Speed up", "Remove", "Port")
THINGS = (
    "the invoice exporter",
    "the tag editor",
    "the search box",
    "the audit log",
    "the image resizer",
    "the sitemap builder",
    "the webhook sender",
    "the PDF report",
    "the currency formatter",
    "the feature flag loader",
    "the chat widget",
    "the cron runner",
    "the email template",
    "the GraphQL resolver",
    "the shopping cart",
    "the map tiles",
    "the backup script",
    "the metrics exporter",
    "the theme switcher",
    "the file uploader",
)
PLACES = (
    "in the admin panel",
    "for the mobile app",
    "in the billing service",
    "for the public API",
    "in the onboarding flow",
    "for the data warehouse",
    "in the CLI",
    "for the partner portal",
)


def fillers(count: int, rng: random.Random) -> list[str]:
    """``count`` one-off tasks (templates, then the distractors), none a labelled task."""
    pool = [f"{v} {t} {p}" for v in VERBS for t in THINGS for p in PLACES]
    rng.shuffle(pool)
    texts = [text for _, _, text in DISTRACTORS] + pool
    return [texts[i % len(texts)] + ("" if i < len(texts) else f" (#{i})") for i in range(count)]


def stream(size: int, seed: int) -> list[tuple[str, str, TaskCategory]]:
    """``(episode_id, task, category)`` in order: a fifth recurring labelled tasks."""
    rng = random.Random(seed)
    recurring = size // 5
    slots = set(rng.sample(range(size), recurring))
    filler = iter(fillers(size - recurring, rng))
    counts: dict[str, int] = {}
    items = []
    for index in range(size):
        if index in slots:
            task = TASKS[rng.randrange(len(TASKS))]
            counts[task.key] = counts.get(task.key, 0) + 1
            items.append((f"{task.key}#{counts[task.key]}", task.description, task.category))
        else:
            items.append((f"filler-{index}", next(filler), TaskCategory.CODE_GENERATION))
    return items


def episode(episode_id: str, text: str, category: TaskCategory, at: float) -> Episode:
    return Episode(
        episode_id,
        TaskDescription(text, category),
        "...",
        Feedback(reward=0.8),
        OutcomeStatus.SUCCESS,
        at,
    )


def key_of(episode_id: str) -> str:
    return episode_id.split("#", 1)[0]


class Agent:
    """One memory fed the stream; recalls and credits before each recurring task."""

    def __init__(self, name: str, memory: EpisodicMemory, credit: bool) -> None:
        self.name, self.memory, self.credit = name, memory, credit
        self.runs = 0

    def step(self, episode_id: str, text: str, category: TaskCategory, at: float) -> None:
        if self.credit and "#" in episode_id:
            task = next(t for t in TASKS if t.key == key_of(episode_id))
            shown = self.memory.recall(task.paraphrases[self.runs % 2], top_k=3, current_time=at)
            run = f"run-{self.runs}"
            self.runs += 1
            ids = [hit.episode.episode_id for hit in shown]
            self.memory.runs.note(run, ids, TaskDescription(task.description, category))
            helped = any(key_of(i) == task.key for i in ids)
            self.memory.runs.credit(run, 1.0 if helped else 0.4)
        self.memory.record(episode(episode_id, text, category, at))


def quality(memory: EpisodicMemory, at: float) -> tuple[float, float, float]:
    """hit@1, hit@3 of every paraphrase, and the median seconds per recall."""
    h1 = h3 = 0
    times = []
    for task in TASKS:
        for text in task.paraphrases:
            start = time.perf_counter()
            hits = memory.recall(text, top_k=3, current_time=at)
            times.append(time.perf_counter() - start)
            keys = [key_of(hit.episode.episode_id) for hit in hits]
            h1 += bool(keys) and keys[0] == task.key
            h3 += task.key in keys
    total = 2 * len(TASKS)
    return h1 / total, h3 / total, statistics.median(times)


def run(cap: int, seed: int) -> list[list[object]]:
    size = 10 * cap
    agents = [
        Agent("uncapped", EpisodicMemory(), credit=True),
        Agent("capped", EpisodicMemory(retention=Retention(max_episodes=cap, on_write=True)), True),
        Agent("uncapped, no credit", EpisodicMemory(), credit=False),
        Agent(
            "capped, no credit",
            EpisodicMemory(retention=Retention(max_episodes=cap, on_write=True)),
            credit=False,
        ),
    ]
    rows: list[list[object]] = []
    items = stream(size, seed)
    for index, (episode_id, text, category) in enumerate(items, 1):
        at = index * HOUR
        for agent in agents:
            agent.step(episode_id, text, category, at)
        if index % cap == 0:
            measured = [quality(agent.memory, at) for agent in agents]
            base_time = measured[0][2]
            for agent, (h1, h3, seconds) in zip(agents, measured, strict=True):
                rows.append(
                    [
                        index,
                        agent.name,
                        len(agent.memory),
                        f"{h1:.1%}",
                        f"{h3:.1%}",
                        f"{seconds * 1000:.2f}",
                        f"{seconds / base_time:.2f}x",
                    ]
                )
            print(f"  {index} of {size} episodes", flush=True)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cap", type=int, default=300)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--out", type=Path, default=RESULTS / "retention.md")
    args = parser.parse_args(argv)
    rows = run(args.cap, args.seed)
    headers = ["episodes fed", "memory", "held", "hit@1", "hit@3", "recall ms", "vs uncapped"]
    body = table(headers, rows)
    print(body)
    text = (
        "# Retention: a memory capped at N, fed 10x N episodes\n\n"
        f"Generated by `python benchmarks/retention.py --cap {args.cap}` (simulated agent, "
        "scripted; see the module docstring).\n\n"
        + (__doc__ or "").split("\n\n", 1)[1]
        + "\n"
        + body
        + "\n"
    )
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
