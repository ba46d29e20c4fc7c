"""Does the memory learn what to show? Two simulated worlds that disagree, one code.

In the reader world (``READER_WORLD``) a failure's feedback warns the next attempt; in the
copier world (``COPIER_WORLD``) a shown failure is copied and hurts, as it did on the
270M model of ``real_model.py``. Both were fixed in the repo before the presentation
chooser was tuned. On the same tasks and luck per seed:

* ``no_memory``; ``plain_top3``: the 3 most relevant episodes whatever their outcome,
  the previous prompt (``renderer="detailed"``, no credit);
* ``policy_compact`` / ``policy_feedback`` / ``policy_ranked``: credit on, one
  presentation policy pinned (``renderer="compact"`` etc.);
* ``learned``: credit on, ``renderer="auto"``: the memory chooses the policy from its
  credited runs (``langchain_episodic.scoring.presentation``), the same code in both worlds;
* ``relevance_oracle`` (diagnostic): the 3 relevant candidates with the truly largest
  hidden effect;
* ``ideal_learner`` (diagnostic, ``simulation.ideal_learner``): Bayes over each episode's
  hidden kind from the outcomes alone, knowing every other rule of the world: what
  outcomes can tell at best, the ceiling of any credit rule.

Reported per world: mean success probability of the attempts (base plus the hidden
effects of what was shown; the reward's expectation, less noisy) and reward, with 95%
t-intervals over seeds; the regret of each agent against the best pinned policy of that
world (success probability, summed over the tasks); how fast ``learned`` converges (per
window of tasks, the share of its runs that used the world's best pinned policy); and in
the reader world the share of the gap between ``plain_top3`` and the oracle that
``learned`` closes (goal: >= 50%). Goal over both worlds: ``learned``'s total regret below
that of any single pinned policy used in both. All figures are simulated.

    python benchmarks/presentation_learning.py [--seeds 10] [--tasks 300] [--out FILE]
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from langchain_episodic import (  # noqa: E402
    Episode,
    EpisodicMemory,
    HashingEmbeddings,
    build_replay,
)
from langchain_episodic.scoring.strategy import complexity_strategy  # noqa: E402
from langchain_episodic.stores import InMemoryEpisodeStore  # noqa: E402
from simulation.credit_world import (  # noqa: E402
    CREDIT_VARIANT_DESCRIPTIONS,
    KIND_ORACLE_VARIANT,
    NOISELESS_VARIANT,
    ORACLE_VARIANT,
    PRESENTATION_WORLDS,
    READER_WORLD,
    CreditRun,
    CreditWorldEnvironment,
    run_credit_variant,
    t_interval,
)
from simulation.environment import START_TIME, TASK_INTERVAL  # noqa: E402
from simulation.ideal_learner import IDEAL_LEARNER, run_ideal_learner  # noqa: E402

PINNED = ("policy_compact", "policy_feedback", "policy_ranked")
VARIANTS = (
    "no_memory",
    "plain_top3",
    *PINNED,
    "learned",
    NOISELESS_VARIANT,
    IDEAL_LEARNER,
    KIND_ORACLE_VARIANT,
    ORACLE_VARIANT,
)
WINDOW = 50
DEFAULT_OUT = Path(__file__).parent / "results" / "presentation_learning.md"


def _run(job: tuple[str, str, int, int]) -> CreditRun:
    variant, world_name, seed, tasks = job
    world = next(w for w in PRESENTATION_WORLDS if w.name == world_name)
    if variant == IDEAL_LEARNER:
        run = run_ideal_learner(world, tasks, seed)
    else:
        run = run_credit_variant(variant, world, tasks, seed)
    return dataclasses.replace(run, shown=dict(run.shown))  # a plain dict crosses processes


def run_all(seeds: int, tasks: int, workers: int) -> dict[tuple[str, str], list[CreditRun]]:
    """Every variant in every world, over ``seeds`` seeds: ``{(world, variant): runs}``."""
    jobs = [
        (v, w.name, s, tasks) for w in PRESENTATION_WORLDS for v in VARIANTS for s in range(seeds)
    ]
    with ProcessPoolExecutor(max_workers=workers) as pool:
        runs = list(pool.map(_run, jobs))
    found: dict[tuple[str, str], list[CreditRun]] = {}
    for (variant, world, _, _), run in zip(jobs, runs, strict=True):
        found.setdefault((world, variant), []).append(run)
    return found


def mean_probability(run: CreditRun) -> float:
    return float(np.mean(run.probabilities))


def best_pinned(found: dict[tuple[str, str], list[CreditRun]], world: str) -> str:
    """The pinned policy with the highest mean success probability in ``world``."""
    return max(PINNED, key=lambda v: np.mean([mean_probability(r) for r in found[world, v]]))


def regret(found: dict[tuple[str, str], list[CreditRun]], world: str, variant: str) -> float:
    """Success probability lost against the world's best pinned policy, summed over tasks
    (mean over seeds, paired by seed)."""
    best = found[world, best_pinned(found, world)]
    mine = found[world, variant]
    return float(
        np.mean(
            [sum(b.probabilities) - sum(m.probabilities) for b, m in zip(best, mine, strict=True)]
        )
    )


def convergence(runs: Sequence[CreditRun], policy: str, tasks: int) -> list[float]:
    """Per window of tasks, the share of ``learned``'s runs that used ``policy``."""
    shares = []
    for start in range(0, tasks, WINDOW):
        used = [p for run in runs for p in run.policies[start : start + WINDOW]]
        shares.append(sum(p == policy for p in used) / max(1, len(used)))
    return shares


def window_gap(
    found: dict[tuple[str, str], list[CreditRun]], world: str, tasks: int, agent: str = "learned"
) -> list[float]:
    """Per window of tasks, the share of the gap between ``plain_top3`` and the oracle
    that ``agent`` closes (success probability, mean over seeds; NaN where the gap is
    under 0.02)."""

    def mean(variant: str, start: int) -> float:
        return float(
            np.mean(
                [p for r in found[world, variant] for p in r.probabilities[start : start + WINDOW]]
            )
        )

    shares = []
    for start in range(0, tasks, WINDOW):
        plain, oracle = mean("plain_top3", start), mean(ORACLE_VARIANT, start)
        gap = oracle - plain
        # A window where the oracle barely beats plain recall says nothing as a share.
        shares.append((mean(agent, start) - plain) / gap if gap >= 0.02 else float("nan"))
    return shares


def settled_by(shares: Sequence[float], level: float = 0.8) -> int | None:
    """The first task after which every window's share reaches ``level`` (None: never)."""
    for index in range(len(shares)):
        if all(share >= level for share in shares[index:]):
            return index * WINDOW
    return None


def credit_discrimination(seeds: int, tasks: int) -> list[str]:
    """How well credit's utility tells the episodes that help from those that do not.

    Reader world, the ranked policy pinned with credit on (as ``policy_ranked``): at the
    end of each run, every credited episode's utility, grouped by its hidden kind, and
    the AUC of utility for "helps" (a fix or a warning) against "does nothing" (a lucky
    success or a plain failure) by how many credited runs it had. The oracles know the
    kind; credit can only read it from the runs an episode was shown in.

    Beside it, two least-squares fits over the same runs (every run's shown episodes at
    once, ridge 1): of the rewards less their sub-topic's mean (what a joint credit
    statistic could read), and of the success probabilities less the task's base (the
    same, were outcomes free of luck). They say whether a better statistic or less noise
    would tell the kinds apart.
    """
    rows: list[tuple[str, int, float, float, float]] = []
    for seed in range(seeds):
        env = CreditWorldEnvironment(READER_WORLD, seed)
        now = [START_TIME]
        memory = EpisodicMemory(
            store=InMemoryEpisodeStore(),
            embeddings=HashingEmbeddings(),
            clock=lambda: now[0],
            rng=np.random.default_rng(seed),
        )
        hidden = {}
        runs: list[tuple[str, tuple[str, ...], float, float]] = []
        for index in range(tasks):
            now[0] = START_TIME + index * TASK_INTERVAL
            task = env.task_at(index)
            run_id = f"run-{index}"
            replay = build_replay(memory, task.task, run_id=run_id, renderer="ranked")
            attempt = env.attempt(task, [hidden[i] for i in replay.shown])
            episode_id = f"e-{index}"
            memory.record(
                Episode(
                    episode_id,
                    task.task,
                    "# solution",
                    attempt.feedback,
                    attempt.outcome,
                    now[0],
                    strategy_used=complexity_strategy(task.task),
                )
            )
            hidden[episode_id] = env.hidden_episode(episode_id, task, attempt.outcome)
            memory.runs.credit(run_id, attempt.feedback.reward)
            runs.append(
                (
                    task.subtopic,
                    tuple(replay.shown),
                    attempt.feedback.reward,
                    attempt.probability - env.base_probability(task),
                )
            )
        by_reward, by_chance = _joint_fits(runs)
        for episode_id, row in memory.runs.utilities("episode").items():
            if row.credited_runs:
                rows.append(
                    (
                        hidden[episode_id].kind,
                        row.credited_runs,
                        row.estimate(now[0]),
                        by_reward[episode_id],
                        by_chance[episode_id],
                    )
                )
    lines = [
        "| kind | episodes credited | credited runs each (mean) | utility (mean) |",
        "|---|---|---|---|",
    ]
    for kind in ("transferable_fix", "warning", "misleading", "lucky_success", "plain_failure"):
        chosen = [r for r in rows if r[0] == kind]
        if chosen:
            lines.append(
                f"| {kind} | {len(chosen)} | {np.mean([r[1] for r in chosen]):.1f} | "
                f"{np.mean([r[2] for r in chosen]):.3f} |"
            )
    helps, idle = ("transferable_fix", "warning"), ("lucky_success", "plain_failure")
    lines += [
        "",
        "AUC, helps vs does nothing, by the episodes' credited runs:",
        "",
        "| credited runs | episodes (helps vs nothing) | credit's utility | joint fit of rewards"
        " | joint fit of success probabilities (no luck) |",
        "|---|---|---|---|---|",
    ]
    for least in (1, 3, 6):
        chosen = [r for r in rows if r[1] >= least]
        aucs = []
        for column in (2, 3, 4):
            pos = [r[column] for r in chosen if r[0] in helps]
            neg = [r[column] for r in chosen if r[0] in idle]
            aucs.append(_auc(pos, neg))
        count = sum(r[0] in helps for r in chosen), sum(r[0] in idle for r in chosen)
        lines.append(
            f"| >= {least} | {count[0]} vs {count[1]} | "
            + " | ".join(f"{a:.2f}" for a in aucs)
            + " |"
        )
    return lines


def _auc(pos: Sequence[float], neg: Sequence[float]) -> float:
    """The chance a random ``pos`` value ranks above a random ``neg`` one (ties half)."""
    if not pos or not neg:
        return float("nan")
    a, b = np.asarray(pos)[:, None], np.asarray(neg)[None, :]
    return float(np.mean(a > b) + 0.5 * np.mean(a == b))


def _joint_fits(
    runs: Sequence[tuple[str, tuple[str, ...], float, float]],
) -> tuple[dict[str, float], dict[str, float]]:
    """Ridge fits of each shown episode's effect: on rewards, and on success probabilities.

    ``runs`` holds (sub-topic, shown ids, reward, success probability less the base).
    """
    episodes = sorted({e for run in runs for e in run[1]})
    column = {e: i for i, e in enumerate(episodes)}
    design = np.zeros((len(runs), len(episodes)))
    for row, run in enumerate(runs):
        for episode_id in run[1]:
            design[row, column[episode_id]] = 1.0
    means = {s: np.mean([r[2] for r in runs if r[0] == s]) for s in {r[0] for r in runs}}
    rewards = np.array([r[2] - means[r[0]] for r in runs])
    chances = np.array([r[3] for r in runs])
    gram = design.T @ design + np.eye(len(episodes))
    fits = [np.linalg.solve(gram, design.T @ target) for target in (rewards, chances)]
    return tuple(  # type: ignore[return-value]
        {e: float(fit[column[e]]) for e in episodes} for fit in fits
    )


def report(
    found: dict[tuple[str, str], list[CreditRun]], seeds: int, tasks: int, seconds: float
) -> str:
    lines = [
        "# Presentation learning: two simulated worlds that disagree (simulated, not a model)",
        "",
        f"Produced by `python benchmarks/presentation_learning.py --seeds {seeds} --tasks {tasks}`"
        f" ({seconds / 60:.1f} min). Success = the attempt's success probability (base plus the"
        " hidden effects of what was shown), mean over all tasks; 95% t-intervals over seeds."
        " Regret = success probability lost against the world's best pinned policy, summed"
        " over the tasks (mean over seeds). Before the presentation chooser the memory did"
        " what `policy_compact` does (the compact policy always, credit on): it is the"
        " *before* of every *after* (`learned`) below.",
        "",
    ]
    totals = {v: 0.0 for v in (*PINNED, "learned", "plain_top3")}
    for world in PRESENTATION_WORLDS:
        best = best_pinned(found, world.name)
        lines += [
            f"## {world.name} world: {world.description}",
            "",
            "| agent | success | reward | regret vs best pinned |",
            "|---|---|---|---|",
        ]
        for variant in VARIANTS:
            runs = found[world.name, variant]
            success = t_interval([mean_probability(r) for r in runs])
            reward = t_interval([r.mean_reward for r in runs])
            cost = regret(found, world.name, variant)
            if variant in totals:
                totals[variant] += cost
            lines.append(f"| {variant} | {success.format()} | {reward.format()} | {cost:+.1f} |")
        runs = found[world.name, "learned"]
        shares = convergence(runs, best.removeprefix("policy_"), tasks)
        settled = settled_by(shares)
        where = (
            f"at least 0.8 in every window from task {settled} on"
            if settled is not None
            else "not at 0.8 in every later window"
        )
        mixes = "; ".join(
            f"{name} " + " ".join(f"{share:.2f}" for share in convergence(runs, name, tasks))
            for name in ("compact", "feedback", "ranked")
        )
        failures_shown = convergence(runs, "feedback", tasks)
        ranked_share = convergence(runs, "ranked", tasks)
        showing = [a + b for a, b in zip(failures_shown, ranked_share, strict=True)]
        lines += [
            "",
            "Share of `learned`'s runs shown with a policy that shows failures (feedback or "
            f"ranked), per {WINDOW} tasks: {', '.join(f'{v:.2f}' for v in showing)}.",
        ]
        lines += [
            "",
            f"Best pinned policy here: `{best}`. Share of `learned`'s runs that used it, per "
            f"{WINDOW} tasks: {', '.join(f'{s:.2f}' for s in shares)} ({where}). Every "
            f"policy's share per window: {mixes}.",
        ]
        if world.name == "reader":
            plain = np.mean([mean_probability(r) for r in found[world.name, "plain_top3"]])
            oracle = np.mean([mean_probability(r) for r in found[world.name, ORACLE_VARIANT]])
            for agent in ("learned", IDEAL_LEARNER):
                lines.append(
                    f"Gap closed by `{agent}` per {WINDOW} tasks: "
                    + ", ".join(
                        "-" if np.isnan(v) else f"{v:.0%}"
                        for v in window_gap(found, world.name, tasks, agent)
                    )
                    + "."
                )
            notes = {
                "learned": " (goal: >= 50%)",
                NOISELESS_VARIANT: " (outcomes without luck)",
                IDEAL_LEARNER: " (what outcomes can tell at best: the ceiling of any credit rule)",
            }
            for agent, goal in notes.items():
                mine = np.mean([mean_probability(r) for r in found[world.name, agent]])
                closed = (mine - plain) / (oracle - plain) if oracle != plain else float("nan")
                lines.append(
                    f"Gap closed between `plain_top3` ({plain:.3f}) and the oracle ({oracle:.3f})"
                    f" by `{agent}` ({mine:.3f}): **{closed:.0%}**{goal}."
                )
        lines.append("")
    lines += [
        "## Total regret over both worlds (the goal: `learned` below every single pinned policy)",
        "",
        "| agent | total regret |",
        "|---|---|",
    ]
    lines += [f"| {v} | {totals[v]:+.1f} |" for v in totals]
    for pinned in PINNED:
        paired = [
            sum(
                sum(found[w.name, "learned"][i].probabilities)
                - sum(found[w.name, pinned][i].probabilities)
                for w in PRESENTATION_WORLDS
            )
            for i in range(seeds)
        ]
        lines.append(
            f"\n`learned` minus `{pinned}`, success summed over both worlds' tasks, paired by "
            f"seed: {t_interval(paired).format('+.1f')} (positive: `learned` earns more)."
        )
    lines += [
        "",
        f"## Why the oracles' gap stays (reader world, {min(seeds, 5)} seeds)",
        "",
        "The oracles know each episode's hidden kind, drawn independently of anything the "
        "memory can see; credit can only read it from the outcomes of the runs an episode "
        f"was shown in, and in {tasks} tasks most episodes are credited a few times:",
        "",
        *credit_discrimination(min(seeds, 5), tasks),
        "",
        "The joint fit of rewards asks whether a better statistic would tell the kinds apart"
        " from the same outcomes; the fit of success probabilities, whether less luck in the"
        " outcomes would. `learned_noiseless` (above) is the memory itself credited without"
        " luck.",
    ]
    lines += ["", "Agents:", ""]
    oracles = {
        KIND_ORACLE_VARIANT: "diagnostic, not an agent: of the relevant candidates, up to 3 "
        "whose hidden kind helps on average (a fix, a warning where warnings help)",
        ORACLE_VARIANT: "diagnostic, not an agent: of the relevant candidates, the 3 with the "
        "largest hidden effect on this task (it also knows the hidden variant)",
        IDEAL_LEARNER: "diagnostic, not an agent: Bayes over each episode's hidden kind from "
        "the outcomes of the runs that showed it, knowing everything else about the world "
        "(sub-topics, base rates, the kind mix, each kind's effect, the outcome model); of "
        "the same relevant candidates of its sub-topic, up to 3 with the largest positive "
        "expected effect (`benchmarks/simulation/ideal_learner.py`)",
    }
    lines += [f"- `{v}`: {oracles.get(v) or CREDIT_VARIANT_DESCRIPTIONS[v]}" for v in VARIANTS]
    lines.append("")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--tasks", type=int, default=300)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument(
        "--out", type=Path, default=None, help=f"markdown report (e.g. {DEFAULT_OUT})"
    )
    args = parser.parse_args(argv)
    started = time.perf_counter()
    found = run_all(args.seeds, args.tasks, args.workers)
    text = report(found, args.seeds, args.tasks, time.perf_counter() - started)
    print(text)
    if args.out is not None:
        args.out.write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
