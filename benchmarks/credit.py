"""Does credit pay off, and what does it cost? Simulated reward with and without utility.

Three sections, each printed as it ends; ``all`` writes them together to
``results/credit.md``:

* ``simulate``: the simulated credit world
  (`benchmarks/simulation/credit_world.py`): episodes differ in how much
  they help when shown (transferable fixes, lucky successes, warnings, plain
  failures, misleading look-alikes), and a control world where every episode helps
  equally. Four agents on the same tasks and luck per seed: no memory, the article's
  ranking, relevance-first without utility, relevance-first with utility; plus a
  diagnostic oracle that orders the relevant candidates by their true effect (the
  most any utility estimate could add). Mean reward per task with 95% t-intervals
  over seeds; utility vs no utility paired per seed. The numbers are simulated.
* ``explore``: the same comparison with credit's constants (``ADVANTAGE_SCALE``,
  ``UTILITY_POWER``, ``PRIOR_HELPED`` / ``PRIOR_HURT``) monkeypatched for the run and
  restored after, and with recall options that give utility more candidates to
  reorder. Exploratory only: the package's defaults are not changed here.
* ``cost``: recall latency with vs without utility, interleaved, on Chroma (temp
  dir) and ``InMemoryEpisodeStore`` holding 2,000 episodes and a journal of 1,000
  credited runs; and the write cost of one ``note_injection`` and one ``credit``
  next to one ``record``. Medians and ratios, no assertions.

Usage::

    python benchmarks/credit.py            # all sections: about 3 min on 2 shared cores
    python benchmarks/credit.py simulate --seeds 10 --tasks 500
    python benchmarks/credit.py simulate --embedder static
    python benchmarks/credit.py cost
"""

from __future__ import annotations

import argparse
import functools
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")  # keep Chroma's client offline

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _fixtures import PrecomputedEmbeddings, make_episodes, unit_vectors
from langchain_core.embeddings import Embeddings

import langchain_episodic.scoring.credit as credit_module
import langchain_episodic.scoring.decay as decay_module
import langchain_episodic.scoring.ranking as ranking_module
from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, HashingEmbeddings, RecallOptions
from langchain_episodic.embeddings.static import StaticEmbeddings
from langchain_episodic.stores import EpisodeStore, InMemoryEpisodeStore
from simulation import (
    CREDIT_VARIANT_DESCRIPTIONS,
    CREDIT_VARIANTS,
    ORACLE_VARIANT,
    WORLDS,
    CreditComparison,
    CreditRun,
    compare_credit_variants,
    format_credit_report,
)

RESULTS = Path(__file__).resolve().parent / "results"


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "section", nargs="?", default="all", choices=("simulate", "explore", "cost", "all")
    )
    parser.add_argument("--tasks", type=int, default=300, help="tasks per run (default 300)")
    parser.add_argument("--seeds", type=int, default=5, help="seeds 0..N-1 (default 5)")
    parser.add_argument(
        "--embedder",
        choices=("hashing", "static"),
        default="hashing",
        help="simulate with HashingEmbeddings (default) or the default StaticEmbeddings "
        "('all' runs both)",
    )
    parser.add_argument("--episodes", type=int, default=2000, help="cost: episodes stored")
    parser.add_argument("--runs", type=int, default=1000, help="cost: credited runs journaled")
    parser.add_argument("--repeats", type=int, default=300, help="cost: timed recalls per arm")
    parser.add_argument(
        "--out", type=Path, default=None, help="markdown file (default: results/credit.md for all)"
    )
    args = parser.parse_args(argv)
    if args.tasks < 1 or args.seeds < 1:
        parser.error("--tasks and --seeds must be at least 1")
    return args


def _progress(run: CreditRun) -> None:
    print(
        f"  {run.world:<15} {run.variant:<18} seed {run.seed}: "
        f"reward {run.mean_reward:.3f}  {run.seconds:5.1f} s",
        flush=True,
    )


# ------------------------------------------------------------------------ simulate


def simulate(args: argparse.Namespace) -> str:
    embeddings: Embeddings = (
        StaticEmbeddings() if args.embedder == "static" else HashingEmbeddings()
    )
    seeds = tuple(range(args.seeds))
    variants = (*CREDIT_VARIANTS, ORACLE_VARIANT)
    print(
        f"simulate: {len(WORLDS)} worlds x {len(variants)} variants x {len(seeds)} seeds x "
        f"{args.tasks} tasks, {type(embeddings).__name__}",
        flush=True,
    )
    started = time.perf_counter()
    comparisons = compare_credit_variants(
        WORLDS, args.tasks, seeds, variants, embeddings=embeddings, progress=_progress
    )
    elapsed = time.perf_counter() - started
    print()
    print(format_credit_report(comparisons))
    for comparison in comparisons:
        print(_goal_line(comparison))
    lines = [
        f"### Simulated reward ({type(embeddings).__name__})",
        "",
        format_credit_report(comparisons, markdown=True),
        *(f"- {_goal_line(c)}" for c in comparisons),
        "",
        f"Wall-clock: {elapsed:.1f} s.",
    ]
    return "\n".join(lines)


def _simulate_static(args: argparse.Namespace) -> str:
    return simulate(argparse.Namespace(**{**vars(args), "embedder": "static"}))


def _goal_line(comparison: CreditComparison) -> str:
    relevance = comparison.summary("relevance").reward.mean
    no_memory = comparison.summary("no_memory").reward.mean
    gain = comparison.utility_gain
    relative = comparison.utility_relative_gain
    assert gain is not None
    assert relative is not None
    oracle = comparison.summary(ORACLE_VARIANT).reward.mean - relevance
    memory_gain = relevance - no_memory
    share = f"{gain.mean / memory_gain:+.1%}" if memory_gain > 0 else "n/a"
    captured = f"{gain.mean / oracle:.0%}" if oracle > 0.001 else "n/a"
    return (
        f"{comparison.world}: utility vs no utility {relative.format('+.2f', 100)} % of reward "
        f"(goal: >= +15 % in the differentiated world, ~0 in the equal one), "
        f"{share} on top of memory's own gain over no memory; the oracle ordering adds "
        f"{oracle / relevance:+.2%} (the ceiling of any utility estimate), of which "
        f"utility gets {captured}"
    )


# ------------------------------------------------------------------------- explore


@contextmanager
def patched_credit(scale: float, power: float, prior: float) -> Iterator[None]:
    """Credit's constants set for the block, restored after (exploration only).

    The ranking imported ``utility_factor`` by name (and it binds ``UTILITY_POWER``
    as a default): it is replaced there too; the prior lives in ``scoring.decay``
    (one Beta mean for episodes and lessons).
    """
    patches = {
        (credit_module, "ADVANTAGE_SCALE"): scale,
        (decay_module, "PRIOR_HELPED"): prior,
        (decay_module, "PRIOR_HURT"): prior,
        (ranking_module, "utility_factor"): functools.partial(
            credit_module.utility_factor, power=power
        ),
    }
    saved = {key: getattr(*key) for key in patches}
    for (module, name), value in patches.items():
        setattr(module, name, value)
    try:
        yield
    finally:
        for (module, name), value in saved.items():
            setattr(module, name, value)


EXPLORE_CONSTANTS = (
    # (ADVANTAGE_SCALE, UTILITY_POWER, PRIOR_HELPED = PRIOR_HURT)
    (1.0, 4.0, 1.0),
    (2.0, 4.0, 1.0),
    (1.0, 1.0, 1.0),
    (1.0, 8.0, 1.0),
    (1.0, 4.0, 0.5),
)
EXPLORE_RECALL = (
    # (fetch_k, relevance_margin): None = the defaults (4 * top_k, no margin)
    (None, None),
    (6, None),
    (6, 0.15),
)


def explore(args: argparse.Namespace) -> str:
    seeds = tuple(range(args.seeds))
    default = (
        credit_module.ADVANTAGE_SCALE,
        credit_module.UTILITY_POWER,
        credit_module.PRIOR_HELPED,
    )
    print(
        f"explore: credit constants monkeypatched per row (defaults {default}), "
        f"{len(seeds)} seeds x {args.tasks} tasks, HashingEmbeddings",
        flush=True,
    )
    headers = (
        "fetch_k / margin",
        "ADVANTAGE_SCALE",
        "UTILITY_POWER",
        "prior",
        "differentiated: utility vs none, %",
        "equal: utility vs none, %",
        "oracle vs none, % (diff.)",
    )
    rows: list[tuple[str, ...]] = []
    ceilings: dict[tuple[int | None, float | None], float] = {}
    started = time.perf_counter()
    for fetch_k, margin in EXPLORE_RECALL:
        for scale, power, prior in EXPLORE_CONSTANTS:
            with patched_credit(scale, power, prior):
                found = compare_credit_variants(
                    WORLDS,
                    args.tasks,
                    seeds,
                    ("relevance", "relevance_utility"),
                    fetch_k=fetch_k,
                    relevance_margin=margin,
                )
                key = (fetch_k, margin)
                if key not in ceilings:
                    oracle = compare_credit_variants(
                        WORLDS[:1],
                        args.tasks,
                        seeds,
                        (ORACLE_VARIANT,),
                        fetch_k=fetch_k,
                        relevance_margin=margin,
                    )[0]
                    base = found[0].summary("relevance").reward.mean
                    ceilings[key] = oracle.summary(ORACLE_VARIANT).reward.mean / base - 1
            cells = [c.utility_relative_gain for c in found]
            row = (
                f"{fetch_k or 'default'} / {margin or 'default'}",
                f"{scale:g}",
                f"{power:g}",
                f"{prior:g}",
                *("-" if cell is None else cell.format("+.2f", 100) for cell in cells),
                f"{100 * ceilings[key]:+.2f}",
            )
            rows.append(row)
            print("  " + "  ".join(row), flush=True)
    elapsed = time.perf_counter() - started
    table = [
        "| " + " | ".join(headers) + " |",
        "|" + "---|" * len(headers),
        *("| " + " | ".join(row) + " |" for row in rows),
    ]
    return "\n".join(
        [
            "### Exploration: credit's constants and recall options (not the defaults)",
            "",
            f"{len(seeds)} seeds x {args.tasks} tasks, `HashingEmbeddings`; relative gain of "
            "mean reward, utility vs no utility, paired per seed [95% CI]. Credit's "
            "constants were monkeypatched for each row and restored after; "
            f"the package's defaults are ADVANTAGE_SCALE={default[0]:g}, "
            f"UTILITY_POWER={default[1]:g}, prior {default[2]:g}/{default[2]:g}. "
            "The oracle orders the same candidates "
            "by their true effect: the ceiling of any utility estimate for that row's pool.",
            "",
            *table,
            "",
            f"Wall-clock: {elapsed:.1f} s.",
        ]
    )


# ---------------------------------------------------------------------------- cost


def _median_ms(samples: Sequence[float]) -> float:
    return 1000 * statistics.median(samples)


def _credited_memory(
    store: EpisodeStore, embeddings: Embeddings, episodes: int, runs: int
) -> tuple[EpisodicMemory, list[float]]:
    now = [1_780_000_000.0 + 60.0 * episodes]
    memory = EpisodicMemory(
        store=store, embeddings=embeddings, clock=lambda: now[0], open_run_ttl=None
    )
    memory.record_many(make_episodes(0, episodes))
    for run in range(runs):
        now[0] += 60.0
        shown = [f"ep-{(run * 7 + k * 13) % episodes:07d}" for k in range(3)]
        memory.runs.note(f"setup-{run}", shown, f"task {run % episodes} setup")
        memory.runs.credit(f"setup-{run}", (run % 11) / 10)
    return memory, now


def cost(args: argparse.Namespace) -> str:
    episodes, runs, repeats = args.episodes, args.runs, args.repeats
    embeddings = PrecomputedEmbeddings(unit_vectors(episodes + 400, 11), unit_vectors(200, 12))

    # Every fetched candidate must pass the relevance test, or utility is never looked up:
    # with random vectors none would (the worst case for utility's cost).
    def opened(**fields: object) -> RecallOptions:
        return RecallOptions(min_similarity=-1.0, relevance_margin=2.0, **fields)  # type: ignore[arg-type]

    arms = {
        # The same 2 * top_k candidates either way: the difference is utility's lookups.
        "off": opened(use_utility=False),
        "on": opened(use_utility=True),
    }
    print(
        f"cost: {episodes} episodes, {runs} credited runs, {repeats} recalls per arm "
        f"(interleaved, rotating order), top_k=3, every candidate relevant; arms {list(arms)}",
        flush=True,
    )
    rows: list[tuple[str, ...]] = []
    writes: list[tuple[str, ...]] = []
    with tempfile.TemporaryDirectory(prefix="credit-bench-") as folder:
        stores: list[tuple[str, Callable[[], EpisodeStore]]] = [
            ("chroma", lambda: ChromaEpisodeStore(path=folder)),
            ("in-memory", InMemoryEpisodeStore),
        ]
        for name, make in stores:
            started = time.perf_counter()
            memory, now = _credited_memory(make(), embeddings, episodes, runs)
            setup = time.perf_counter() - started
            timed: dict[str, list[float]] = {arm: [] for arm in arms}
            names = list(arms)
            for warm in range(20):
                for options in arms.values():
                    memory.recall(f"query {warm % 200}", options=options)
            for repeat in range(repeats):
                query = f"query {repeat % 200}"
                shift = repeat % len(names)
                for arm in names[shift:] + names[:shift]:
                    start = time.perf_counter()
                    memory.recall(query, options=arms[arm])
                    timed[arm].append(time.perf_counter() - start)
            off, on = (_median_ms(timed[arm]) for arm in names)
            rows.append(
                (
                    name,
                    f"{len(memory):,}",
                    f"{len(memory.runs.log()):,}",
                    f"{off:.3f}",
                    f"{on:.3f}",
                    f"{on / off:.3f}x",
                    f"{setup:.1f}",
                )
            )
            print("  recall " + "  ".join(rows[-1]), flush=True)
            record_t: list[float] = []
            note_t: list[float] = []
            credit_t: list[float] = []
            fresh = make_episodes(episodes, episodes + min(repeats, 400))
            for i, episode in enumerate(fresh):
                now[0] += 60.0
                start = time.perf_counter()
                memory.record(episode)
                record_t.append(time.perf_counter() - start)
                shown = [f"ep-{(i * 5 + k) % episodes:07d}" for k in range(3)]
                start = time.perf_counter()
                memory.runs.note(f"timed-{i}", shown, episode.task)
                note_t.append(time.perf_counter() - start)
                start = time.perf_counter()
                memory.runs.credit(f"timed-{i}", episode.feedback.reward)
                credit_t.append(time.perf_counter() - start)
            rec, note, cred = (_median_ms(t) for t in (record_t, note_t, credit_t))
            writes.append(
                (
                    name,
                    f"{len(fresh)}",
                    f"{rec:.3f}",
                    f"{note:.3f}",
                    f"{cred:.3f}",
                    f"{note / rec:.2f}x",
                    f"{cred / rec:.2f}x",
                    f"{(note + cred) / rec:.2f}x",
                )
            )
            print("  writes " + "  ".join(writes[-1]), flush=True)
            del memory
    recall_headers = (
        "store",
        "episodes",
        "credited runs",
        "p50 ms, no utility",
        "p50 ms, utility",
        "ratio (goal <= 1.05x)",
        "setup s",
    )
    write_headers = (
        "store",
        "writes",
        "record p50 ms",
        "note_injection p50 ms",
        "credit p50 ms",
        "note / record",
        "credit / record",
        "both / record",
    )

    def table(headers: Sequence[str], body: Sequence[Sequence[str]]) -> list[str]:
        return [
            "| " + " | ".join(headers) + " |",
            "|" + "---|" * len(headers),
            *("| " + " | ".join(row) + " |" for row in body),
        ]

    return "\n".join(
        [
            "### Cost of credit",
            "",
            f"{episodes:,} episodes and a journal of {runs:,} credited runs (3 episodes shown "
            "each), fixed 384-dimension vectors (embedding excluded). Recall: top_k=3, "
            "floor and margin opened so every candidate is relevant and gets a utility "
            f"lookup (the worst case); {repeats} recalls per arm, interleaved in rotating "
            "order, after 20 warm-up rounds; both arms rank the same 2 * top_k = 6 "
            "candidates, so the difference is utility's lookups.",
            "",
            *table(recall_headers, rows),
            "",
            "Writes, interleaved per step: `record` one new episode, `note_injection` of 3 "
            "episodes for a new run, `credit` that run.",
            "",
            *table(write_headers, writes),
        ]
    )


# ---------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    command = "python benchmarks/credit.py" + (
        " " + " ".join(sys.argv[1:]) if argv is None and sys.argv[1:] else ""
    )
    runners: Sequence[Callable[[argparse.Namespace], str]] = {
        "simulate": [simulate],
        "explore": [explore],
        "cost": [cost],
        # The recorded figures: both embedders, then exploration and cost.
        "all": [simulate, _simulate_static, explore, cost],
    }[args.section]
    started = time.perf_counter()
    parts = []
    for runner in runners:
        parts.append(runner(args))
        print(flush=True)
    elapsed = time.perf_counter() - started
    out = args.out
    if out is None and args.section == "all":
        out = RESULTS / "credit.md"
    if out is not None:
        legend = "\n".join(
            f"- `{name}`: {CREDIT_VARIANT_DESCRIPTIONS[name]}" for name in CREDIT_VARIANTS
        )
        markdown = "\n\n".join(
            [
                "# Credit: does utility pay off, and what does it cost?",
                f"Produced by `{command}` in {elapsed:.0f} s on a shared 2-core machine. "
                "Reward figures are **simulated** "
                "(`benchmarks/simulation/credit_world.py`), not measured on a model.",
                f"Variants:\n\n{legend}\n- `{ORACLE_VARIANT}`: diagnostic, not an agent: "
                "relevant candidates ordered by their true hidden effect (the ceiling of "
                "any utility estimate)",
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
