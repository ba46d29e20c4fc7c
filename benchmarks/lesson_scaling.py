"""What many lessons cost a replay, side by side with the same replay without lessons.

Two memories over the same ``--episodes`` episodes (on-disk Chroma, the default
``StaticEmbeddings``, embedding included as in real use), one folder copied, so both
answer from the same vector index: one holds no lessons, the other ``N`` active lessons
(varied texts, each citing an episode). A third variant replays the memory with lessons
asking for none (``lesson_k=0``): the lessons' cost alone, on the same memory. Each
round replays every task with each variant, ``build_replay(memory, task)`` (which shows
up to 2 lessons above the episodes), the three in a random order per task, so that
what one replay leaves in the caches falls on each alike (rounds of one variant after
another charged whichever came first after the other memory: the same code measured
1.1-1.45x). Credit runs between rounds, so what recall derives from credit is fresh
each round; its run ids sort in the order the runs happen (under the frozen clock the
ids order the journal; ``run-10`` before ``run-9`` would make every credit a reload of
it). Medians per replay over the rounds, the ratios, and the lessons' cost (the
replay with lessons minus the same memory's asking for none, in ms). The first
``--warmup`` rounds are not counted (the Chroma indexes load on their first queries);
the first replay after the lessons were added, which builds the lesson index, is timed
on its own.

    python benchmarks/lesson_scaling.py [--lessons 1000 10000] [--episodes 5000] [--queries 100]
        [--rounds 7] [--warmup 1]
"""

from __future__ import annotations

import argparse
import random
import shutil
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
            with ChromaEpisodeStore(path=folder) as store:
                EpisodicMemory(store=store, embeddings=embeddings, clock=lambda: NOW).record_many(
                    episodes
                )
            shutil.copytree(folder, bare_folder, dirs_exist_ok=True)
            bare = EpisodicMemory(
                store=ChromaEpisodeStore(path=bare_folder), embeddings=embeddings, clock=lambda: NOW
            )
            taught = EpisodicMemory(
                store=ChromaEpisodeStore(path=folder), embeddings=embeddings, clock=lambda: NOW
            )
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
            order = random.Random(count)
            run = 0
            for round_number in range(args.warmup + args.rounds):
                spent = dict.fromkeys(variants, 0.0)
                for task in tasks:
                    for name in order.sample(list(variants), len(variants)):
                        memory, lesson_k = variants[name]
                        began = time.perf_counter()
                        build_replay(memory, task, lesson_k=lesson_k)
                        spent[name] += time.perf_counter() - began
                if round_number >= args.warmup:
                    for name, seconds in spent.items():
                        samples[name].append(seconds / len(tasks) * 1e3)
                for memory in (bare, taught):  # credit between rounds: its effects are fresh
                    run += 1
                    replay = build_replay(memory, tasks[run % len(tasks)], run_id=f"run-{run:04d}")
                    memory.runs.credit(replay.run_id or f"run-{run:04d}", reward=0.7)
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
                    f"{taught_ms - asked_none_ms:.2f}",
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
            "the lessons' cost (ms)",
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
