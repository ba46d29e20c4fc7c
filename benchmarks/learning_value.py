"""Does the memory learn which episodes to show? The value stage against today's default.

In the simulated credit world (`benchmarks/simulation/credit_world.py`) half
of the successes were luck, some failures carry the warning that fixes the next
attempt, and look-alikes mislead; choosing the right 3 of the 12 most similar
episodes is what pays. On the same tasks and luck per seed:

* ``no_memory``, ``article`` (the article's ranking);
* ``previous_default``: the default before this release, rebuilt for comparison
  (relevant within 0.15 of the best candidate above the model's old floor, 6
  candidates, utility factor ``1 + 0.5 (2u - 1)``); it reproduces the figures the
  previous release measured over 5 seeds (0.848 and 0.833 in the differentiated world, checked
  against that release's code);
* ``relevance_utility``: the new default (calibrated relevance test, then value and
  credit's utility ``(2u)^4`` among the 12 most similar, near-duplicates sharing
  evidence), with ``holdout=0.1`` (``relevance_holdout``: a tenth of runs see no
  memory, the causal baseline), with ``explore=True`` (``relevance_explore``) and with
  every failed attempt's feedback shown (``relevance_feedback``, ``CompactRenderer(
  "feedback")``: the simulated agent reads the warning a failure carries; the shipped
  default shows a failure only beside its fix, because the real model copied what it
  was shown, ``real_model.py``);
* ``relevance_oracle`` (diagnostic, not an agent): the 3 with the truly largest
  hidden effect among the relevant candidates the default chooses from: the headroom.

Reported: reward and success probability over the last third of the tasks (the
memory has learnt by then), mean over seeds with 95% t-intervals, and the share of
the gap between the previous default and the oracle that the new default closes
(goal: >= 50%), in the differentiated world and in the control world where every episode
helps equally (goal: no loss beyond 1%). All figures are simulated.

Twenty seeds by default: with five, the share of the gap closed moved between 39% and
50% with settings that made no difference over twenty (its standard error over twenty
seeds is about 4 points). About 8 minutes on 2 cores.

    python benchmarks/learning_value.py [--seeds 20] [--tasks 300] [--out FILE]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from langchain_episodic import HashingEmbeddings, StaticEmbeddings
from simulation import (
    CREDIT_VARIANT_DESCRIPTIONS,
    DIFFERENTIATED_WORLD,
    EQUAL_WORLD,
    ORACLE_VARIANT,
    compare_credit_variants,
    t_interval,
)

VARIANTS = (
    "no_memory",
    "article",
    "previous_default",
    "relevance_utility",
    "relevance_holdout",
    "relevance_explore",
    "relevance_feedback",
    ORACLE_VARIANT,
)
TODAY, NEW = "previous_default", "relevance_utility"
DEFAULT_OUT = Path(__file__).parent / "results" / "learning_value.md"


def last_third(values: Sequence[float]) -> float:
    return float(np.mean(values[2 * len(values) // 3 :]))


def section(embedder: str, seeds: int, tasks: int) -> list[str]:
    embeddings = StaticEmbeddings() if embedder == "static" else HashingEmbeddings()
    started = time.perf_counter()
    comparisons = compare_credit_variants(
        (DIFFERENTIATED_WORLD, EQUAL_WORLD),
        n_tasks=tasks,
        seeds=tuple(range(seeds)),
        variants=VARIANTS,
        embeddings=embeddings,
    )
    lines = [f"### {type(embeddings).__name__} ({tasks} tasks x {seeds} seeds, simulated)", ""]
    for comparison in comparisons:
        runs = comparison.runs
        reward = {v: [last_third(r.rewards) for r in runs[v]] for v in VARIANTS}
        success = {v: [last_third(r.probabilities) for r in runs[v]] for v in VARIANTS}
        lines += [
            f"world {comparison.world!r}: last third of the tasks, mean over seeds [95% CI]",
            "",
            "| variant | reward | success p | vs the previous default (paired) |",
            "|---|---|---|---|",
        ]
        for variant in VARIANTS:
            paired = t_interval(
                [a - b for a, b in zip(reward[variant], reward[TODAY], strict=True)]
            )
            lines.append(
                f"| {variant} | {t_interval(reward[variant]).format()} | "
                f"{t_interval(success[variant]).format()} | {paired.format('+.3f')} |"
            )
        gap = np.mean(reward[ORACLE_VARIANT]) - np.mean(reward[TODAY])
        closed = (np.mean(reward[NEW]) - np.mean(reward[TODAY])) / gap if gap > 0 else float("nan")
        relative = np.mean(reward[NEW]) / np.mean(reward[TODAY]) - 1.0
        goal = (
            f"the new default closes {closed:.1%} of it (goal: >= 50%)"
            if comparison.world == DIFFERENTIATED_WORLD.name
            else f"the new default vs the previous {relative:+.1%} (goal: no loss beyond -1%)"
        )
        lines += [
            "",
            f"- oracle over the previous default: {gap:+.3f} reward (the headroom of "
            f"choosing well); {goal}",
            "",
        ]
    lines.append(f"Wall-clock: {time.perf_counter() - started:.0f} s.")
    lines.append("")
    return lines


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--embedders", nargs="+", default=["static", "hashing"])
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    args = parser.parse_args(argv)
    legend = [
        f"- `{v}`: {CREDIT_VARIANT_DESCRIPTIONS.get(v, 'diagnostic oracle (see above)')}"
        for v in VARIANTS
    ]
    lines = [
        "# The value stage: does the memory learn which episodes to show?",
        "",
        f"Produced by `python benchmarks/learning_value.py --seeds {args.seeds} --tasks "
        f"{args.tasks}`. Every reward figure is **simulated** "
        "(`benchmarks/simulation/credit_world.py`), not measured on a model.",
        "",
        *legend,
        "",
    ]
    for embedder in args.embedders:
        part = section(embedder, args.seeds, args.tasks)
        print("\n".join(part))
        sys.stdout.flush()
        lines += part
    if args.out:
        args.out.write_text("\n".join(lines), encoding="utf-8")
        print(f"written to {args.out}")


if __name__ == "__main__":
    main()
