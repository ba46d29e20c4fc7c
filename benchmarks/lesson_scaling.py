"""What many lessons cost a replay, side by side with the same replay without lessons.

Two memories over the same ``--episodes`` episodes (on-disk Chroma, the default
``StaticEmbeddings``, embedding included as in real use): one holds no lessons, the
other ``N`` active lessons (varied texts, each citing an episode). Interleaved rounds of
``build_replay(memory, task)`` (which shows up to 2 lessons above the episodes), with
credit run between rounds so that what recall derives from credit is fresh each time;
medians per replay, and the ratio to the replay without lessons. The first
``--warmup`` rounds are not counted (both memories' Chroma indexes load on their first
queries); the first replay after the lessons were added, which builds the lesson
index, is timed on its own. A third variant
replays the memory with lessons asking for none (``lesson_k=0``): the same Chroma
collection, so its ratio is the lessons' cost alone, without the difference between
two collections' vector indexes (two builds of the same episodes answer at somewhat
different speeds).

    python benchmarks/lesson_scaling.py [--lessons 1000 10000] [--episodes 5000] [--queries 100]
        [--rounds 7] [--warmup 1]
"""

from __future__ import annotations

import argparse
import tempfile
import time

from _fixtures import RESULTS, make_episodes, median, table

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    StaticEmbeddings,
    TaskDescription,
    build_replay,
)
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.pipeline import DEFAULT_LESSON_K

NOW = 1_780_000_000.0 + 60.0 * 20_000
TOPICS = ("login form", "CSV parser", "payment retries", "cache expiry", "session cookies")
VERBS = ("Validate", "Strip", "Retry", "Cache", "Escape", "Log", "Time out", "Paginate")


def lessons_for(count: int, episode_ids: list[str]) -> list[Lesson]:
    return [
        Lesson.create(
            title=f"{VERBS[i % len(VERBS)]} {TOPICS[i % len(TOPICS)]} inputs, case {i}",
            applies_when=f"a task about the {TOPICS[(i // 3) % len(TOPICS)]} of module {i % 97}",
            do=f"{VERBS[(i // 5) % len(VERBS)].lower()} before saving (variant {i})",
            sources=(LessonSource(episode_ids[i % len(episode_ids)]),),
            created_at=NOW - count + i,
        )
        for i in range(count)
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--lessons", type=int, nargs="+", default=[1_000, 10_000])
    parser.add_argument("--episodes", type=int, default=5_000)
    parser.add_argument("--queries", type=int, default=100)
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--warmup", type=int, default=1)
    args = parser.parse_args()
    embeddings = StaticEmbeddings()
    episodes = make_episodes(0, args.episodes)
    tasks = [
        TaskDescription(f"implement feature {j % 97} of module {j % 13} again", "unknown", 0.5)
        for j in range(args.queries)
    ]
    rows = []
    for count in args.lessons:
        with tempfile.TemporaryDirectory() as bare_folder, tempfile.TemporaryDirectory() as folder:
            bare = EpisodicMemory(
                store=ChromaEpisodeStore(path=bare_folder), embeddings=embeddings, clock=lambda: NOW
            )
            taught = EpisodicMemory(
                store=ChromaEpisodeStore(path=folder), embeddings=embeddings, clock=lambda: NOW
            )
            for memory in (bare, taught):
                memory.record_many(episodes)
            taught.lessons.add(lessons_for(count, [e.episode_id for e in episodes]))
            assert len(taught.lessons.list("active")) == count
            began = time.perf_counter()
            build_replay(taught, tasks[0])  # builds the lesson index
            first_ms = (time.perf_counter() - began) * 1e3
            variants = {
                "without lessons": (bare, DEFAULT_LESSON_K),
                "none asked for": (taught, 0),
                "with lessons": (taught, DEFAULT_LESSON_K),
            }
            samples: dict[str, list[float]] = {name: [] for name in variants}
            run = 0
            for round_number in range(args.warmup + args.rounds):
                order = list(variants.items())
                if round_number % 2:
                    order.reverse()
                for name, (memory, lesson_k) in order:
                    began = time.perf_counter()
                    for task in tasks:
                        build_replay(memory, task, lesson_k=lesson_k)
                    if round_number >= args.warmup:
                        samples[name].append((time.perf_counter() - began) / len(tasks) * 1e3)
                for memory in (bare, taught):  # credit between rounds: its effects are fresh
                    run += 1
                    replay = build_replay(memory, tasks[run % len(tasks)], run_id=f"run-{run}")
                    memory.runs.credit(replay.run_id or f"run-{run}", reward=0.7)
            bare_ms, taught_ms = median(samples["without lessons"]), median(samples["with lessons"])
            asked_none_ms = median(samples["none asked for"])
            shown = build_replay(taught, tasks[0]).lessons
            rows.append(
                [
                    f"{count:,}",
                    f"{bare_ms:.2f}",
                    f"{taught_ms:.2f}",
                    f"{taught_ms / bare_ms:.2f}x",
                    f"{asked_none_ms:.2f}",
                    f"{taught_ms / asked_none_ms:.2f}x",
                    str(len(shown)),
                    f"{first_ms:.1f}",
                ]
            )
            print(rows[-1], flush=True)
    result = table(
        [
            "active lessons",
            "replay without (ms)",
            "replay with (ms)",
            "ratio",
            "same memory, lesson_k=0 (ms)",
            "with ÷ lesson_k=0",
            "lessons shown",
            "first replay with lessons (ms)",
        ],
        rows,
    )
    print(result)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "lesson_scaling.md").write_text(
        "# What many lessons cost a replay\n\n"
        f"`python benchmarks/lesson_scaling.py --lessons {' '.join(map(str, args.lessons))} "
        f"--episodes {args.episodes} --queries {args.queries} --rounds {args.rounds} "
        f"--warmup {args.warmup}` (median per replay over {args.rounds} interleaved rounds "
        f"after {args.warmup} not counted)\n\n{result}\n"
    )


if __name__ == "__main__":
    main()
