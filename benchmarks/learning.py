"""Does memory make an agent better? Learning curves of every strategy-selection variant.

Runs `simulation.compare_variants` on the simulated coding
tasks, prints the summary table side by side (``no_memory`` is the baseline), and
writes ``learning_curves.png`` and ``learning_curves.md`` to the output folder.

Usage::

    python benchmarks/learning.py   # 300 tasks x 5 seeds: 3-6 min on 2 shared cores
    python benchmarks/learning.py --tasks 1000 --seeds 3 --out /tmp/learning
    python benchmarks/learning.py --embedder static  # learning_curves_static.md
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # keep Chroma's client offline

from langchain_episodic import HashingEmbeddings
from langchain_episodic.embeddings.static import StaticEmbeddings
from simulation import (
    VARIANT_DESCRIPTIONS,
    VARIANTS,
    compare_variants,
    format_report,
    plot_report,
)

DEFAULT_OUT = Path(__file__).resolve().parent / "results"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=300, help="tasks per run (default 300)")
    parser.add_argument("--seeds", type=int, default=5, help="number of seeds, 0..N-1 (default 5)")
    parser.add_argument(
        "--window", type=int, default=20, help="rolling success window (default 20)"
    )
    parser.add_argument(
        "--variants",
        default=",".join(VARIANTS),
        help="comma-separated variants (default: all)",
    )
    parser.add_argument(
        "--out", type=Path, default=DEFAULT_OUT, help=f"output folder (default {DEFAULT_OUT})"
    )
    parser.add_argument(
        "--embedder",
        choices=("hashing", "static"),
        default="hashing",
        help="the memories' embedder: HashingEmbeddings (default, the recorded figures) or "
        "the package's default StaticEmbeddings",
    )
    args = parser.parse_args(argv)
    if args.tasks < 1 or args.seeds < 1:
        parser.error("--tasks and --seeds must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    variants = tuple(name.strip() for name in args.variants.split(",") if name.strip())
    seeds = tuple(range(args.seeds))
    print(
        f"{len(variants)} variants x {len(seeds)} seeds x {args.tasks} tasks, "
        f"embedder {args.embedder}",
        flush=True,
    )

    def progress(variant: str, seed: int, seconds: float) -> None:
        print(f"  {variant:<20} seed {seed}: {seconds:6.1f} s", flush=True)

    started = time.perf_counter()
    embeddings = StaticEmbeddings() if args.embedder == "static" else HashingEmbeddings()
    report = compare_variants(
        args.tasks, seeds, variants, args.window, progress=progress, embeddings=embeddings
    )
    elapsed = time.perf_counter() - started

    table = format_report(report)
    print()
    print(table)
    print(f"\ntotal: {elapsed:.1f} s")

    args.out.mkdir(parents=True, exist_ok=True)
    stem = "learning_curves" if args.embedder == "hashing" else f"learning_curves_{args.embedder}"
    png = args.out / f"{stem}.png"
    plot_report(report, png)
    legend = "\n".join(f"- `{name}`: {VARIANT_DESCRIPTIONS[name]}" for name in variants)
    markdown = (
        "# Learning curves: does memory make an agent better?\n\n"
        f"Embedder: `{type(embeddings).__name__}`.\n\n"
        f"{format_report(report, markdown=True)}\n\n"
        f"Total wall-clock time: {elapsed:.1f} s.\n\n"
        f"Variants:\n\n{legend}\n\n![learning curves]({png.name})\n"
    )
    md = args.out / f"{stem}.md"
    md.write_text(markdown, encoding="utf-8")
    print(f"wrote {png} and {md}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
