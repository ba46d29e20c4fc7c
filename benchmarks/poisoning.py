"""Poisoning a shared memory: how far one attacker's episodes reach into others' replays.

Victims: the hand-written coding tasks of ``retrieval_data.TASKS`` (64), each recorded
once, successfully, by one of five victim principals, in one namespace. Queries: each
task's first paraphrase, asked through ``build_replay`` (top 3) by the victim who
recorded the task (``principal=``: its own episodes are not capped), as the victims'
agents would. An attacker who can only submit tasks then records, one attack at a time:

* **stuffing**: one short task stuffed with three words of every victim task;
* **long text**: one 12,000-character task (every victim task's words, repeated);
* **flood**: 100 near-duplicates of one stuffed task;
* **copycat**: a copy of every victim task, recorded after it (newer, so ranked higher).

Credit by the attacker is tested on utilities (``tests/unit_tests/test_shared_memory.py``).
Measured once here and left out of the table: the attacker's own wording of every victim
task, each shown in 30 of its runs credited 1.0 by it, led 42% of the victims' replays in
a plain memory against 41% uncredited (an on-topic episode leads often by itself, and the
ranking shrinks utility hard: ``RANKING_PRIOR``); shared, 41% either way.

For each attack, side by side on the same episodes: a plain memory (``shared=False``,
as before) and a shared one (``shared=True``). Reported: **reach**, the share of
victim queries whose replay shows an attacker episode (the attacker has no task of its
own: every episode it shows is poison); **shown first**, the share whose replay leads
with one; **displaced**, the share of queries whose own task
was shown without the attack and is not with it. Embeddings: the packaged
StaticEmbeddings (offline).

    python benchmarks/poisoning.py
"""

from __future__ import annotations

import argparse
import itertools
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from _fixtures import RESULTS, table
from retrieval_data import TASKS

from langchain_episodic import (
    Episode,
    EpisodeSource,
    EpisodicMemory,
    Feedback,
    OutcomeStatus,
    StaticEmbeddings,
    TaskDescription,
    build_replay,
)
from langchain_episodic.stores import InMemoryEpisodeStore

NOW = 1_800_000_000.0
ATTACKER = "mallory"
TOP_K = 3


def episode(episode_id: str, task: str, principal: str, at: float) -> Episode:
    return Episode(
        episode_id=episode_id,
        task=TaskDescription(task),
        solution="def solve():\n    return True\n",
        feedback=Feedback(reward=1.0, message="all tests passed", tests_passed=3, tests_total=3),
        outcome=OutcomeStatus.SUCCESS,
        timestamp=at,
        source=EpisodeSource(agent="coder", principal=principal),
    )


def victims() -> list[Episode]:
    return [
        episode(task.key, task.description, f"victim-{i % 5}", NOW - 3_600.0 * (i + 1))
        for i, task in enumerate(TASKS)
    ]


def _words(count: int) -> list[str]:
    picked = []
    for task in TASKS:
        words = [w.strip(".,").lower() for w in task.description.split() if len(w) > 3]
        picked += words[:count]
    return picked


def stuffing() -> list[Episode]:
    return [episode("attack-stuffing", " ".join(_words(3)), ATTACKER, NOW - 60.0)]


def long_text() -> list[Episode]:
    text = " ".join(itertools.islice(itertools.cycle(_words(12)), 2_000))[:12_000]
    return [episode("attack-long", text, ATTACKER, NOW - 60.0)]


def flood() -> list[Episode]:
    base = _words(2)
    return [
        episode(f"attack-flood-{i}", " ".join([*base, f"variant {i}"]), ATTACKER, NOW - 60.0)
        for i in range(100)
    ]


def copycat() -> list[Episode]:
    return [
        episode(f"attack-copy-{task.key}", f"{task.description} now", ATTACKER, NOW - 60.0)
        for task in TASKS
    ]


ATTACKS: dict[str, Callable[[], list[Episode]]] = {
    "stuffing": stuffing,
    "long text": long_text,
    "flood": flood,
    "copycat": copycat,
}


def shown(memory: EpisodicMemory) -> list[tuple[str, ...]]:
    """The episode ids each victim query's replay shows, asked by the victim who owns it."""
    return [
        tuple(
            build_replay(
                memory, task.paraphrases[0], top_k=TOP_K, principal=f"victim-{i % 5}"
            ).shown
        )
        for i, task in enumerate(TASKS)
    ]


def measure(
    embeddings: StaticEmbeddings, attack: Sequence[Episode], *, shared: bool
) -> tuple[float, float, float, float]:
    """``(reach, displaced, own shown before, first)`` of ``attack`` for one kind of memory."""
    clean = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=embeddings, shared=shared, clock=lambda: NOW
    )
    clean.record_many(victims())
    before = shown(clean)
    attacked = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=embeddings, shared=shared, clock=lambda: NOW
    )
    attacked.record_many([*victims(), *attack])
    after = shown(attacked)
    attacker = {e.episode_id for e in attack}
    reach = sum(bool(attacker & set(ids)) for ids in after) / len(TASKS)
    first = sum(bool(ids) and ids[0] in attacker for ids in after) / len(TASKS)
    own_before = [task.key in ids for task, ids in zip(TASKS, before, strict=True)]
    displaced = sum(
        had and task.key not in ids for task, ids, had in zip(TASKS, after, own_before, strict=True)
    ) / len(TASKS)
    return reach, displaced, sum(own_before) / len(TASKS), first


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, default=RESULTS / "poisoning.md")
    args = parser.parse_args()
    began = time.perf_counter()
    embeddings = StaticEmbeddings()
    rows = []
    for name, attack in ATTACKS.items():
        plain = measure(embeddings, attack(), shared=False)
        guarded = measure(embeddings, attack(), shared=True)
        rows.append(
            [
                name,
                f"{plain[0]:.0%}",
                f"{guarded[0]:.0%}",
                f"{plain[3]:.0%}",
                f"{guarded[3]:.0%}",
                f"{plain[1]:.0%}",
                f"{guarded[1]:.0%}",
                f"{plain[2]:.0%} / {guarded[2]:.0%}",
            ]
        )
    report = "\n\n".join(
        [
            "# Poisoning a shared memory",
            "`python benchmarks/poisoning.py`",
            table(
                [
                    "attack",
                    "reach, plain",
                    "reach, shared=True",
                    "shown first, plain",
                    "shown first, shared=True",
                    "displaced, plain",
                    "displaced, shared=True",
                    "own task shown without attack (plain / shared)",
                ],
                rows,
            ),
            f"{len(TASKS)} victim tasks (retrieval_data.TASKS), one successful episode each, "
            "from five victim principals; the queries are each task's first paraphrase "
            f"through build_replay (top {TOP_K}). Reach: share of victim queries whose "
            "replay shows an attacker episode. Displaced: share of queries whose own task "
            "was shown without the attack and is not with it. Plain and shared memories "
            "hold the same episodes, measured in the same run. StaticEmbeddings. "
            f"Run took {time.perf_counter() - began:.0f} s.",
        ]
    )
    print(report)
    args.out.write_text(report + "\n", encoding="utf-8")


if __name__ == "__main__":
    main()
