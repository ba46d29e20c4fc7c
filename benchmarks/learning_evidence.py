"""How should a partial success count? Graded strategy evidence and the definition of weak.

Runs `simulation.compare_variants` over
`simulation.EVIDENCE_VARIANTS` on the simulated coding tasks
(the learning benchmark's: same tasks and luck per seed for every variant), and prints
each variant's reward gain over ``no_memory`` and the paired differences that decide:

* ``prioritized`` (the default: a partial success counts its pass rate as evidence for
  its strategy) against ``prioritized_binary`` (the rule before: a failed trial);
* ``prioritized_explore`` (Thompson sampling, graded) against ``explore_binary``;
* the alternatives not taken: a failure counting its pass rate too
  (``prioritized_graded_failures``), and weak judged on the graded success rate
  (``prioritized_graded_weak``, ``article_graded_weak``).

All figures are simulated. About 6 minutes on 2 shared cores.

    python benchmarks/learning_evidence.py [--tasks 300] [--seeds 5] [--out FILE]
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # keep Chroma's client offline

from langchain_episodic import HashingEmbeddings
from simulation import (
    EVIDENCE_VARIANTS,
    VARIANT_DESCRIPTIONS,
    BenchmarkReport,
    compare_variants,
    format_report,
)

DEFAULT_OUT = Path(__file__).resolve().parent / "results" / "strategy_evidence.md"

# (variant, against): the paired difference in cumulative reward that answers a question.
PAIRS = (
    ("prioritized", "prioritized_binary", "graded evidence, the default rule"),
    ("prioritized_explore", "explore_binary", "graded evidence, Thompson sampling"),
    ("prioritized_graded_failures", "prioritized", "a failure counting its pass rate too"),
    ("prioritized_graded_weak", "prioritized", "weak on the graded success rate (default)"),
    ("article_graded_weak", "prioritized_article", "weak on the graded rate (article's)"),
)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300, help="tasks per run (default 300)")
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds, 0..N-1 (default 5)")
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"markdown to write (default {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    if args.tasks < 1 or args.seeds < 1:
        parser.error("--tasks and --seeds must be at least 1")
    return args


def paired(report: BenchmarkReport, variant: str, against: str) -> tuple[float, float, str]:
    """Mean and standard deviation over seeds of the paired reward difference, per seed."""

    def rewards(name: str) -> np.ndarray:
        return np.array([curve[-1].cumulative_reward for curve in report.curves[name]])

    diff = rewards(variant) - rewards(against)
    std = float(diff.std(ddof=1)) if diff.size > 1 else 0.0
    return float(diff.mean()), std, ", ".join(f"{d:+.1f}" for d in diff)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    seeds = tuple(range(args.seeds))
    print(
        f"{len(EVIDENCE_VARIANTS)} variants x {len(seeds)} seeds x {args.tasks} tasks", flush=True
    )

    def progress(variant: str, seed: int, seconds: float) -> None:
        print(f"  {variant:<28} seed {seed}: {seconds:6.1f} s", flush=True)

    started = time.perf_counter()
    report = compare_variants(
        args.tasks, seeds, EVIDENCE_VARIANTS, 20, progress=progress, embeddings=HashingEmbeddings()
    )
    elapsed = time.perf_counter() - started

    rows = []
    for variant, against, question in PAIRS:
        mean, std, per_seed = paired(report, variant, against)
        rows.append(
            f"| {question} | `{variant}` - `{against}` | {mean:+.1f} ± {std:.1f} | {per_seed} |"
        )
    differences = "\n".join(
        [
            "| question | paired difference | cumulative reward | per seed |",
            "|:--|:--|--:|:--|",
            *rows,
        ]
    )
    print()
    print(format_report(report))
    print()
    print(differences)
    print(f"\ntotal: {elapsed:.1f} s")

    legend = "\n".join(f"- `{name}`: {VARIANT_DESCRIPTIONS[name]}" for name in EVIDENCE_VARIANTS)
    command = "python benchmarks/learning_evidence.py"
    if (args.tasks, args.seeds) != (300, 5):
        command += f" --tasks {args.tasks} --seeds {args.seeds}"
    markdown = (
        "# Strategy evidence: how a partial success counts (simulated)\n\n"
        f"Produced by `{command}` (embedder `HashingEmbeddings`, as the learning "
        "benchmark). Every variant of one seed meets the same tasks with the same luck; "
        "differences are paired per seed. All figures are simulated.\n\n"
        f"{format_report(report, markdown=True)}\n\n"
        "Paired differences in cumulative reward (mean ± std over seeds):\n\n"
        f"{differences}\n\n"
        f"Total wall-clock time: {elapsed:.1f} s.\n\n"
        f"Variants:\n\n{legend}\n"
    )
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(markdown, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
