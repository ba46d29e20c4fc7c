"""What are lessons worth, and what does reflection cost? Simulated reward with and without.

Two sections, each printed as it ends; ``all`` writes both to ``results/lessons.md``:

* ``simulate``: the simulated lesson world
  (`benchmarks/simulation/lesson_world.py`, built on the credit world): a
  good lesson (sources share the sub-topic's fix) adds +0.35 to the success
  probability of tasks of its sub-topic, more than one raw episode; a bad one (mixed
  sources) -0.30. A scripted fake reflector, called through the real ``reflect()``
  and ``LessonWriter``, writes one lesson per call, good with probability
  ``quality``. Relevance-first recall without lessons against recall with
  ``lesson_k=2`` at quality 0.9 / 0.5 / 0.2, reflecting after every 5th episode (and
  after every episode at 0.9), and with ``consolidate_lessons()`` every 50 episodes.
  Mean reward per task with 95% t-intervals over seeds, gains paired per seed, and
  the reflector's model calls per 100 episodes. The numbers are simulated.
* ``sweep``: the paired gain over no lessons for quality 0.0 to 1.0 (reflection
  after every 5th episode): where lessons start to pay.

Usage::

    python benchmarks/lessons.py            # both sections: about 1.5 min on 2 shared cores
    python benchmarks/lessons.py simulate --seeds 10 --tasks 500
    python benchmarks/lessons.py simulate --embedder static
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from langchain_core.embeddings import Embeddings

from langchain_episodic import HashingEmbeddings
from langchain_episodic.embeddings.static import StaticEmbeddings
from simulation import (
    BASELINE_LESSON_VARIANT,
    DEFAULT_LESSON_WORLD,
    LESSON_VARIANTS,
    LessonRun,
    LessonVariant,
    compare_lesson_variants,
    format_lesson_report,
)

RESULTS = Path(__file__).resolve().parent / "results"
SWEEP = tuple(q / 10 for q in range(11))


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("section", nargs="?", default="all", choices=("simulate", "sweep", "all"))
    parser.add_argument("--tasks", type=int, default=300, help="tasks per run (default 300)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    parser.add_argument(
        "--embedder",
        choices=("hashing", "static"),
        default="hashing",
        help="HashingEmbeddings (default) or the default StaticEmbeddings",
    )
    parser.add_argument(
        "--out", type=Path, default=None, help="markdown file (default: results/lessons.md for all)"
    )
    args = parser.parse_args(argv)
    if args.tasks < 1 or args.seeds < 1:
        parser.error("--tasks and --seeds must be at least 1")
    return args


def _embeddings(args: argparse.Namespace) -> Embeddings:
    return StaticEmbeddings() if args.embedder == "static" else HashingEmbeddings()


def _progress(run: LessonRun) -> None:
    print(
        f"  {run.variant:<24} seed {run.seed}: reward {run.mean_reward:.3f}  "
        f"model calls {run.model_calls:4d}  {run.seconds:5.1f} s",
        flush=True,
    )


def simulate(args: argparse.Namespace) -> str:
    embeddings = _embeddings(args)
    seeds = tuple(range(args.seeds))
    print(
        f"simulate: {len(LESSON_VARIANTS)} variants x {len(seeds)} seeds x {args.tasks} tasks, "
        f"{type(embeddings).__name__}",
        flush=True,
    )
    started = time.perf_counter()
    comparison = compare_lesson_variants(
        LESSON_VARIANTS, None, args.tasks, seeds, embeddings=embeddings, progress=_progress
    )
    elapsed = time.perf_counter() - started
    print()
    print(format_lesson_report(comparison))
    lines = []
    for s in comparison.summaries:
        if s.gain is None or s.relative_gain is None:
            continue
        line = (
            f"{s.variant}: {s.gain.format('+.3f')} reward per task "
            f"({s.relative_gain.format('+.1f', 100)} %) vs no lessons, "
            f"{s.calls_per_100:.0f} model calls per 100 episodes"
        )
        lines.append(line)
        print(line)
    legend = "\n".join(f"- `{v.name}`: {v.description}" for v in LESSON_VARIANTS)
    return "\n".join(
        [
            f"### Simulated reward ({type(embeddings).__name__})",
            "",
            legend,
            "",
            format_lesson_report(comparison, markdown=True),
            *(f"- {line}" for line in lines),
            "",
            f"Wall-clock: {elapsed:.1f} s.",
        ]
    )


def sweep(args: argparse.Namespace) -> str:
    embeddings = _embeddings(args)
    seeds = tuple(range(args.seeds))
    variants: Sequence[LessonVariant] = (
        BASELINE_LESSON_VARIANT,
        *(LessonVariant(f"q{q:.1f}", q) for q in SWEEP),
    )
    print(
        f"sweep: quality {SWEEP[0]:g}..{SWEEP[-1]:g}, {len(seeds)} seeds x {args.tasks} tasks, "
        f"{type(embeddings).__name__}",
        flush=True,
    )
    started = time.perf_counter()
    comparison = compare_lesson_variants(variants, None, args.tasks, seeds, embeddings=embeddings)
    elapsed = time.perf_counter() - started
    headers = (
        "quality",
        "reward",
        "gain vs no_lessons (paired)",
        "relative gain %",
        "good % of shown",
    )
    rows = []
    for s in comparison.summaries[1:]:
        assert s.gain is not None
        assert s.relative_gain is not None
        rows.append(
            (
                s.variant.removeprefix("q"),
                s.reward.format(),
                s.gain.format("+.3f"),
                s.relative_gain.format("+.1f", 100),
                "-" if s.good_share_shown is None else f"{s.good_share_shown:.0%}",
            )
        )
        print("  " + "  ".join(rows[-1]), flush=True)
    base = comparison.summaries[0].reward.format()
    return "\n".join(
        [
            "### Sweep: lesson quality (simulated)",
            "",
            f"{len(seeds)} seeds x {args.tasks} tasks, `{type(embeddings).__name__}`, reflection "
            "after every 5th episode (20 model calls per 100 episodes), `lesson_k=2`; "
            f"no lessons: {base}.",
            "",
            "| " + " | ".join(headers) + " |",
            "|" + "---|" * len(headers),
            *("| " + " | ".join(row) + " |" for row in rows),
            "",
            f"Wall-clock: {elapsed:.1f} s.",
        ]
    )


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = "python benchmarks/lessons.py" + (
        " " + " ".join(sys.argv[1:]) if argv is None and sys.argv[1:] else ""
    )
    runners: Sequence[Callable[[argparse.Namespace], str]] = {
        "simulate": [simulate],
        "sweep": [sweep],
        "all": [simulate, sweep],
    }[args.section]
    started = time.perf_counter()
    parts = []
    for runner in runners:
        parts.append(runner(args))
        print(flush=True)
    elapsed = time.perf_counter() - started
    out = args.out
    if out is None and args.section == "all":
        out = RESULTS / "lessons.md"
    if out is not None:
        world = DEFAULT_LESSON_WORLD
        markdown = "\n\n".join(
            [
                "# Lessons: what are they worth, and what does reflection cost?",
                f"Produced by `{command}` in {elapsed:.0f} s on a shared 2-core machine. "
                "Every reward figure is **simulated** "
                "(`benchmarks/simulation/lesson_world.py`, built on the credit world), "
                "not measured on a model; the reflector is a scripted fake, so the model "
                "calls are counted, not made.",
                "Hidden truth: a good lesson (its sources share the sub-topic's fix) adds "
                f"{world.good:+.2f} to the success probability of every task of the "
                "sub-topic it describes (one raw episode adds at most +0.30, about +0.10 on "
                f"average); a bad lesson (mixed sources) adds {world.bad:+.2f} there; a "
                "lesson does nothing on another sub-topic. Lessons are recalled by "
                "`build_replay(..., lesson_k=2)` and credited with the run's reward like "
                "episodes.",
                *parts,
            ]
        )
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(markdown.rstrip() + "\n", encoding="utf-8")
        print(f"wrote {out}")
    print(f"total: {elapsed:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
