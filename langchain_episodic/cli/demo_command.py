"""The demo command: memory variants on the simulated coding tasks."""

from __future__ import annotations

import argparse
import sys

from langchain_episodic.cli._shared import (
    DEMO_VARIANTS,
    PLOT_HINT,
    _int_at_least,
    _require_matplotlib,
)

# --------------------------------------------------------------------------- demo


def _configure_demo(parser: argparse.ArgumentParser) -> None:
    # No store options: the demo runs in memories of its own (cli/app.py: uses_store).
    parser.add_argument(
        "--tasks", type=_int_at_least(1), default=150, help="simulated tasks per run (default: 150)"
    )
    parser.add_argument(
        "--seeds",
        type=_int_at_least(1),
        default=2,
        help="runs per variant, seeds 0..N-1 (default: 2)",
    )
    parser.add_argument(
        "--variants",
        nargs="+",
        choices=DEMO_VARIANTS,
        default=["no_memory", "similarity_only", "prioritized", "prioritized_explore"],
        help="memory variants to compare",
    )
    parser.add_argument(
        "--window", type=_int_at_least(1), default=20, help="rolling window in tasks (default: 20)"
    )
    parser.add_argument(
        "--plot", metavar="FILE", default=None, help=f"save the learning curves ({PLOT_HINT})"
    )
    parser.add_argument("-q", "--quiet", action="store_true", help="no progress bar")


def _run_demo(args: argparse.Namespace) -> int:
    """Run the simulated coding-task environment per memory variant; print and plot."""
    from tqdm import tqdm  # noqa: PLC0415

    from langchain_episodic.simulation import (  # noqa: PLC0415
        VARIANT_DESCRIPTIONS,
        compare_variants,
        format_report,
        plot_report,
    )

    if args.plot is not None:
        _require_matplotlib()
    variants = list(dict.fromkeys(args.variants))
    runs = len(variants) * int(args.seeds)
    with tqdm(
        total=runs, desc="demo", unit="run", disable=args.quiet or not sys.stderr.isatty()
    ) as bar:
        report = compare_variants(
            n_tasks=int(args.tasks),
            seeds=range(int(args.seeds)),
            variants=variants,
            window=int(args.window),
            progress=lambda variant, seed, seconds: bar.update(1),
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
