"""Memory variants on the simulated coding tasks: learning curves, printed and plotted.

Every figure is **simulated** (``benchmarks/simulation/``: a world written here, where a
shown episode's effect is a rule of the world), not measured on a model. The real-model
benchmark is ``benchmarks/real_model.py``.

Usage::

    python benchmarks/demo.py --tasks 150 --seeds 2 --plot demo.png
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from simulation import (
    VARIANT_DESCRIPTIONS,
    VARIANTS,
    compare_variants,
    format_report,
    plot_report,
)

DEFAULT_VARIANTS = ("no_memory", "similarity_only", "prioritized", "prioritized_explore")


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        msg = f"{text!r} is invalid: must be an integer >= 1"
        raise argparse.ArgumentTypeError(msg)
    return value


def build_parser() -> argparse.ArgumentParser:
    """The demo's options."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=_positive, default=150, help="tasks per run (150)")
    parser.add_argument("--seeds", type=_positive, default=2, help="runs per variant (2)")
    parser.add_argument("--variants", nargs="+", choices=VARIANTS, default=list(DEFAULT_VARIANTS))
    parser.add_argument("--window", type=_positive, default=20, help="rolling window (20)")
    parser.add_argument("--plot", metavar="FILE", default=None, help="save the curves (PNG)")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run each variant on the simulated tasks; print the report, plot it if asked."""
    args = build_parser().parse_args(argv)
    variants = list(dict.fromkeys(args.variants))
    report = compare_variants(
        n_tasks=args.tasks, seeds=range(args.seeds), variants=variants, window=args.window
    )
    print(
        f"simulated coding tasks: {args.tasks} per run, {args.seeds} seed(s), "
        f"rolling window {args.window}"
    )
    for name in variants:
        print(f"  {name:<20} {VARIANT_DESCRIPTIONS[name]}")
    print()
    print(format_report(report))
    if args.plot is not None:
        plot_report(report, str(args.plot))
        print(f"plot saved to {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
