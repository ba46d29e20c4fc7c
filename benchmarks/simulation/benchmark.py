"""Run strategy-selection variants on the simulated environment and report on them."""

from __future__ import annotations

import dataclasses
import math
import os
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_episodic._validation import check_int, check_number
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import Episode, Feedback, OutcomeStatus, TaskCategory
from langchain_episodic.pipeline import choose_strategy
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import ReplayWeights
from langchain_episodic.scoring.ranking import Neighbour
from langchain_episodic.scoring.relevance import Ranking
from langchain_episodic.scoring.skills import (
    MIN_WEAK_EPISODES,
    WEAK_THRESHOLD,
    LearningSnapshot,
    SkillProfile,
    compute_learning_curve,
    episode_grade,
)
from langchain_episodic.scoring.strategy import (
    DEFAULT_EVIDENCE_K,
    HIERARCHY_EVIDENCE_K,
    complexity_strategy,
    strategy_evidence,
    strategy_from_evidence,
    strategy_from_results,
    thompson_sample,
)
from simulation.environment import (
    _EXPLORE_SALT,
    DEFAULT_SEEDS,
    START_TIME,
    TASK_INTERVAL,
    CodingTaskEnvironment,
    SimulatedTask,
)

__all__ = [
    "EVIDENCE_VARIANTS",
    "VARIANTS",
    "VARIANT_DESCRIPTIONS",
    "BenchmarkReport",
    "VariantSummary",
    "compare_variants",
    "format_report",
    "plot_report",
    "run_variant",
]

# ---------------------------------------------------------------------------- variants

VARIANTS: tuple[str, ...] = (
    "no_memory",
    "similarity_only",
    "prioritized",
    "prioritized_article",
    "prioritized_explore",
    "phase_early",
    "phase_late",
    "phase_auto",
)
"""Strategy-selection variants :func:`run_variant` knows, in report order."""

VARIANT_DESCRIPTIONS: Mapping[str, str] = MappingProxyType(
    {
        "no_memory": "complexity fallback only (select_strategy with an empty memory)",
        "similarity_only": "article hierarchy, recall ranked by similarity alone (article ranking)",
        "prioritized": "the default: relevant evidence, else weakness, else complexity",
        "prioritized_article": "article hierarchy, the article's prioritized replay ranking",
        "prioritized_explore": "Thompson sampling over the 20 most similar episodes",
        "phase_early": "article hierarchy, early-phase weights (0.6/0.1/0.2/0.1)",
        "phase_late": "article hierarchy, late-phase weights (0.3/0.4/0.2/0.1)",
        "phase_auto": "article hierarchy, phase weights by experience (early<20, late>=200)",
        "prioritized_binary": "the default before graded evidence: a partial success "
        "counts as a failed trial",
        "prioritized_graded_failures": "the default, a failure also counting its pass rate",
        "prioritized_graded_weak": "the default, weak judged on the graded success rate",
        "explore_binary": "Thompson sampling before graded evidence (partial = failure)",
        "article_graded_weak": "article hierarchy, weak judged on the graded success rate",
    }
)
"""One line per variant (of :data:`VARIANTS` and :data:`EVIDENCE_VARIANTS`)."""

EVIDENCE_VARIANTS: tuple[str, ...] = (
    "no_memory",
    "prioritized",
    "prioritized_binary",
    "prioritized_graded_failures",
    "prioritized_graded_weak",
    "prioritized_explore",
    "explore_binary",
    "prioritized_article",
    "article_graded_weak",
)
"""What ``benchmarks/learning_evidence.py`` compares: how a partial success counts.

Besides the default (``prioritized``, graded evidence), the rule before it and the
alternatives measured against it; :func:`run_variant` and :func:`compare_variants`
accept them all. Not part of :data:`VARIANTS` (the demo's list)."""

_SIMILARITY_ONLY = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)

Policy = Callable[[SimulatedTask, EpisodicMemory, float, int], str]


def _binary(neighbour: Neighbour) -> Neighbour:
    # The rule before graded evidence: a success counts 1, anything else 0.
    return dataclasses.replace(neighbour, grade=float(neighbour.outcome is OutcomeStatus.SUCCESS))


def _failures_by_pass_rate(memory: EpisodicMemory, neighbour: Neighbour) -> Neighbour:
    if neighbour.outcome is not OutcomeStatus.FAILURE:
        return neighbour
    episode = memory.get_episodes(neighbour.episode_id)[neighbour.episode_id]
    return dataclasses.replace(neighbour, grade=episode.feedback.pass_rate)


class _GradedWeakness:
    """Weak judged on the graded success rate, from per-category sums of the grades.

    Reads the newest recorded episode before each choice (:func:`run_variant` records
    one per task), so it counts every episode once.
    """

    def __init__(self) -> None:
        self.sums: dict[TaskCategory, tuple[int, float]] = {}
        self.seen = ""

    def weak_profiles(self, memory: EpisodicMemory) -> tuple[SkillProfile, ...]:
        """Profiles of the weak categories only, built so that ``is_weak`` says so."""
        window = memory.short_term
        if window and window[-1].episode_id != self.seen:
            newest = window[-1]
            self.seen = newest.episode_id
            total, graded = self.sums.get(newest.task.category, (0, 0.0))
            self.sums[newest.task.category] = (total + 1, graded + episode_grade(newest))
        return tuple(
            SkillProfile(category, total, 0, 0.0, 0.0)  # success rate 0: weak
            for category, (total, graded) in self.sums.items()
            if total >= MIN_WEAK_EPISODES and graded / total < WEAK_THRESHOLD
        )


def _evidence_policy(variant: str, seed: int, evidence_k: int) -> Policy | None:
    """The policy of a variant of :data:`EVIDENCE_VARIANTS` not in :data:`VARIANTS`."""
    if variant == "explore_binary":

        def explore(simulated: SimulatedTask, memory: EpisodicMemory, now: float, _n: int) -> str:
            # What choose_strategy(exploration="thompson") recalls, counted 0/1.
            results = memory.recall(
                simulated.task.description,
                top_k=evidence_k,
                current_time=now,
                fetch_k=evidence_k,
                ranking="article",
            )
            outcomes = [
                _binary(
                    Neighbour(
                        r.episode.episode_id,
                        r.similarity,
                        r.episode.strategy_used,
                        r.episode.outcome,
                    )
                )
                for r in results
            ]
            rng = np.random.default_rng([seed, simulated.index, _EXPLORE_SALT])
            return thompson_sample(strategy_evidence(outcomes), rng)

        return explore
    if variant == "article_graded_weak":
        article_weakness = _GradedWeakness()

        def article(simulated: SimulatedTask, memory: EpisodicMemory, now: float, _n: int) -> str:
            weak = article_weakness.weak_profiles(memory)
            options = RecallOptions(top_k=HIERARCHY_EVIDENCE_K, current_time=now, ranking="article")
            results = memory.recall(simulated.task, options=options, explain=True).results
            return strategy_from_results(simulated.task, results, weak).strategy

        return article
    if variant not in (
        "prioritized_binary",
        "prioritized_graded_failures",
        "prioritized_graded_weak",
    ):
        return None
    weakness = _GradedWeakness() if variant == "prioritized_graded_weak" else None

    def default(simulated: SimulatedTask, memory: EpisodicMemory, now: float, _n: int) -> str:
        # What choose_strategy does by default, with the variant's grades or weakness.
        profiles = memory.skill_profiles() if weakness is None else weakness.weak_profiles(memory)
        options = RecallOptions(top_k=HIERARCHY_EVIDENCE_K, current_time=now)
        neighbours = memory.replay.report(simulated.task, options, evidence_k=evidence_k).neighbours
        if variant == "prioritized_binary":
            neighbours = tuple(_binary(n) for n in neighbours)
        elif variant == "prioritized_graded_failures":
            neighbours = tuple(_failures_by_pass_rate(memory, n) for n in neighbours)
        return strategy_from_evidence(simulated.task, neighbours, profiles).strategy

    return default


def _make_policy(variant: str, seed: int, evidence_k: int) -> Policy:
    evidence = _evidence_policy(variant, seed, evidence_k)
    if evidence is not None:
        return evidence
    if variant == "no_memory":
        return lambda simulated, _memory, _now, _n: complexity_strategy(simulated.task)
    if variant == "prioritized_explore":

        def explore(simulated: SimulatedTask, memory: EpisodicMemory, now: float, _n: int) -> str:
            rng = np.random.default_rng([seed, simulated.index, _EXPLORE_SALT])
            return choose_strategy(
                simulated.task,
                memory,
                now,
                exploration="thompson",
                rng=rng,
                evidence_k=evidence_k,
            ).strategy

        return explore
    fixed: dict[str, tuple[ReplayWeights | None, Ranking]] = {
        "similarity_only": (_SIMILARITY_ONLY, "article"),
        "prioritized": (None, "relevance"),
        "prioritized_article": (None, "article"),
        "phase_early": (ReplayWeights.for_phase("early"), "article"),
        "phase_late": (ReplayWeights.for_phase("late"), "article"),
    }
    if variant == "phase_auto":

        def auto(simulated: SimulatedTask, memory: EpisodicMemory, now: float, n: int) -> str:
            weights = ReplayWeights.for_experience(n)
            choice = choose_strategy(
                simulated.task, memory, now, weights=weights, ranking="article"
            )
            return choice.strategy

        return auto
    if variant not in fixed:
        allowed = ", ".join(repr(name) for name in dict.fromkeys(VARIANTS + EVIDENCE_VARIANTS))
        msg = f"variant={variant!r} is invalid: must be one of {allowed}"
        raise EpisodicValueError(msg)
    weights, ranking = fixed[variant]

    def hierarchy(simulated: SimulatedTask, memory: EpisodicMemory, now: float, _n: int) -> str:
        choice = choose_strategy(simulated.task, memory, now, weights=weights, ranking=ranking)
        return choice.strategy

    return hierarchy


def _iterations(feedback: Feedback) -> int:
    # A fuller pass needed fewer rounds of fixing: 1 when all pass, up to 4.
    return 1 + math.ceil(3 * (1.0 - feedback.pass_rate))


def run_variant(
    variant: str,
    n_tasks: int = 300,
    seed: int = 0,
    *,
    environment: CodingTaskEnvironment | None = None,
    memory: EpisodicMemory | None = None,
    start_time: float = START_TIME,
    task_interval: float = TASK_INTERVAL,
    evidence_k: int = DEFAULT_EVIDENCE_K,
    embeddings: Embeddings | None = None,
) -> tuple[Episode, ...]:
    """Run one strategy-selection variant over ``n_tasks`` simulated tasks.

    For each task, in order: choose a strategy (from the memory, as ``variant``
    says), attempt the task, and record the episode. Task ``i`` happens at
    ``start_time + i * task_interval``, and that is "now" for its recall, so recency
    means something.

    Args:
        variant: One of :data:`VARIANTS`.
        n_tasks: Tasks to run.
        seed: Seed of the environment (when none is given) and of the exploration.
        environment: The task source; ``CodingTaskEnvironment(seed)`` when ``None``.
        memory: An empty memory to record into; a fresh in-process one (private
            Chroma collection, ``embeddings``) when ``None``.
        start_time: Timestamp of the first task, in seconds.
        task_interval: Seconds between two tasks.
        evidence_k: Similar episodes Thompson sampling counts (``prioritized_explore``).
        embeddings: The fresh memory's embedder;
            :class:`~langchain_episodic.HashingEmbeddings` when ``None``, which the
            recorded figures were measured with.

    Returns:
        The recorded episodes, in recording order.

    Raises:
        EpisodicValueError: An argument is invalid, or ``memory`` is not empty.
    """
    check_int("n_tasks", n_tasks, 0)
    check_int("seed", seed, 0)
    check_number("start_time", start_time)
    interval = check_number("task_interval", task_interval, 0.0)
    if interval <= 0:
        msg = f"task_interval={task_interval!r} is invalid: must be > 0 seconds"
        raise EpisodicValueError(msg)
    policy = _make_policy(variant, seed, check_int("evidence_k", evidence_k, 1))
    env = environment if environment is not None else CodingTaskEnvironment(seed)
    now = [start_time]
    if memory is None:
        memory = EpisodicMemory(
            embeddings=embeddings if embeddings is not None else HashingEmbeddings(),
            clock=lambda: now[0],
        )
    elif len(memory):
        msg = f"memory={memory!r} is invalid: it already holds {len(memory)} episode(s)"
        raise EpisodicValueError(msg)
    episodes: list[Episode] = []
    for index in range(n_tasks):
        now[0] = start_time + index * interval
        simulated = env.task_at(index)
        strategy = policy(simulated, memory, now[0], index)
        feedback, outcome = env.attempt(simulated, strategy)
        episode = Episode(
            episode_id=f"{variant}-{env.seed}-{index:05d}",
            task=simulated.task,
            solution=f"# {strategy} solution for: {simulated.task.description}",
            feedback=feedback,
            outcome=outcome,
            timestamp=now[0],
            iterations=_iterations(feedback),
            strategy_used=strategy,
        )
        memory.record(episode)
        episodes.append(episode)
    return tuple(episodes)


# ---------------------------------------------------------------------------- reports


@dataclass(frozen=True)
class VariantSummary:
    """One variant's results, as mean and standard deviation over seeds.

    Standard deviations are sample deviations (``ddof=1``); 0.0 for a single seed.

    Attributes:
        variant: The variant's name.
        final_success_mean: Rolling success rate at the last task (window of the report).
        final_success_std: Its standard deviation over seeds.
        last100_success_mean: Success rate over the last 100 tasks (all tasks if fewer).
        last100_success_std: Its standard deviation over seeds.
        cumulative_reward_mean: Sum of rewards over all tasks.
        cumulative_reward_std: Its standard deviation over seeds.
        reward_gain_mean: Cumulative reward minus the baseline's on the same seed
            (paired: same tasks, same luck), averaged over seeds.
        reward_gain_std: Its standard deviation over seeds.
        best_choice_rate: Share of tasks on which the variant chose the sub-topic's
            hidden best strategy, averaged over seeds.
        seconds: Wall-clock seconds the variant took, summed over seeds.
    """

    variant: str
    final_success_mean: float
    final_success_std: float
    last100_success_mean: float
    last100_success_std: float
    cumulative_reward_mean: float
    cumulative_reward_std: float
    reward_gain_mean: float
    reward_gain_std: float
    best_choice_rate: float
    seconds: float


@dataclass(frozen=True)
class BenchmarkReport:
    """Learning curves of every variant on every seed, and their summary.

    Attributes:
        n_tasks: Tasks per run.
        seeds: The seeds, one run per variant and seed.
        window: Window of the rolling success rate.
        variants: The variants, in report order.
        baseline: The variant reward gains are measured against (``"no_memory"``
            when it was run, else the first variant).
        curves: Per variant, one learning curve per seed (in ``seeds`` order).
        summaries: One summary per variant, in ``variants`` order.
    """

    n_tasks: int
    seeds: tuple[int, ...]
    window: int
    variants: tuple[str, ...]
    baseline: str
    curves: Mapping[str, tuple[tuple[LearningSnapshot, ...], ...]]
    summaries: tuple[VariantSummary, ...]

    def summary(self, variant: str) -> VariantSummary:
        """The summary of ``variant``.

        Raises:
            EpisodicValueError: ``variant`` is not in this report.
        """
        for summary in self.summaries:
            if summary.variant == variant:
                return summary
        msg = f"variant={variant!r} is not in this report: {', '.join(self.variants)}"
        raise EpisodicValueError(msg)


def _mean_std(values: Sequence[float]) -> tuple[float, float]:
    array = np.asarray(values, dtype=np.float64)
    std = float(array.std(ddof=1)) if array.size > 1 else 0.0
    return float(array.mean()), std


@dataclass(frozen=True)
class _Run:
    curve: tuple[LearningSnapshot, ...]
    last100: float
    best_rate: float
    seconds: float


def compare_variants(
    n_tasks: int = 300,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    variants: Sequence[str] = VARIANTS,
    window: int = 20,
    *,
    progress: Callable[[str, int, float], None] | None = None,
    embeddings: Embeddings | None = None,
) -> BenchmarkReport:
    """Run every variant on every seed and summarise the learning curves.

    All variants of one seed face the same tasks with the same attempt randomness,
    so reward gains over the baseline are paired per seed.

    Args:
        n_tasks: Tasks per run.
        seeds: One run per variant and seed.
        variants: Names from :data:`VARIANTS`.
        window: Window of the rolling success rate (``compute_learning_curve``).
        progress: Called as ``progress(variant, seed, seconds)`` after each run.
        embeddings: The memories' embedder (:func:`run_variant`'s default when ``None``).

    Raises:
        EpisodicValueError: An argument is invalid.
    """
    check_int("n_tasks", n_tasks, 1)
    check_int("window", window, 1)
    seed_list = tuple(check_int("seeds[]", s, 0) for s in seeds)
    names = tuple(dict.fromkeys(variants))
    if not seed_list or not names:
        msg = f"seeds={seeds!r} and variants={variants!r} must both be non-empty"
        raise EpisodicValueError(msg)
    for name in names:
        _make_policy(name, 0, 1)  # an unknown name raises before anything runs
    envs = {seed: CodingTaskEnvironment(seed) for seed in seed_list}
    best = {
        seed: [env.best_strategy(t.subtopic) for t in env.tasks(n_tasks)]
        for seed, env in envs.items()
    }
    runs: dict[str, list[_Run]] = {}
    for name in names:
        for seed in seed_list:
            started = time.perf_counter()
            episodes = run_variant(
                name, n_tasks, seed, environment=envs[seed], embeddings=embeddings
            )
            elapsed = time.perf_counter() - started
            if progress is not None:
                progress(name, seed, elapsed)
            tail = episodes[-100:]
            picks = [e.strategy_used == b for e, b in zip(episodes, best[seed], strict=True)]
            runs.setdefault(name, []).append(
                _Run(
                    curve=compute_learning_curve(episodes, window),
                    last100=sum(e.outcome is OutcomeStatus.SUCCESS for e in tail) / len(tail),
                    best_rate=sum(picks) / len(picks),
                    seconds=elapsed,
                )
            )
    baseline = "no_memory" if "no_memory" in names else names[0]
    base_rewards = [run.curve[-1].cumulative_reward for run in runs[baseline]]
    summaries = []
    for name in names:
        per_seed = runs[name]
        rewards = [run.curve[-1].cumulative_reward for run in per_seed]
        final = _mean_std([run.curve[-1].rolling_success_rate for run in per_seed])
        tail_stats = _mean_std([run.last100 for run in per_seed])
        cumulative = _mean_std(rewards)
        gain = _mean_std([r - b for r, b in zip(rewards, base_rewards, strict=True)])
        summaries.append(
            VariantSummary(
                variant=name,
                final_success_mean=final[0],
                final_success_std=final[1],
                last100_success_mean=tail_stats[0],
                last100_success_std=tail_stats[1],
                cumulative_reward_mean=cumulative[0],
                cumulative_reward_std=cumulative[1],
                reward_gain_mean=gain[0],
                reward_gain_std=gain[1],
                best_choice_rate=float(np.mean([run.best_rate for run in per_seed])),
                seconds=sum(run.seconds for run in per_seed),
            )
        )
    return BenchmarkReport(
        n_tasks=n_tasks,
        seeds=seed_list,
        window=window,
        variants=names,
        baseline=baseline,
        curves=MappingProxyType({name: tuple(run.curve for run in runs[name]) for name in names}),
        summaries=tuple(summaries),
    )


def format_report(report: BenchmarkReport, *, markdown: bool = False) -> str:
    """The report's summary as an aligned table, one row per variant.

    Args:
        report: What :func:`compare_variants` returned.
        markdown: Render a GitHub-flavoured markdown table instead of plain text.
    """
    last = min(100, report.n_tasks)
    headers = (
        "variant",
        f"final success (w={report.window})",
        f"success last {last}",
        "cumulative reward",
        f"gain vs {report.baseline}",
        "best-strategy picks",
        "seconds",
    )
    rows = [
        (
            s.variant,
            f"{s.final_success_mean:.3f} ± {s.final_success_std:.3f}",
            f"{s.last100_success_mean:.3f} ± {s.last100_success_std:.3f}",
            f"{s.cumulative_reward_mean:.1f} ± {s.cumulative_reward_std:.1f}",
            f"{s.reward_gain_mean:+.1f} ± {s.reward_gain_std:.1f}",
            f"{s.best_choice_rate:.1%}",
            f"{s.seconds:.1f}",
        )
        for s in report.summaries
    ]
    widths = [max(len(row[i]) for row in (headers, *rows)) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        padded = [
            cell.ljust(width) if i == 0 else cell.rjust(width)
            for i, (cell, width) in enumerate(zip(cells, widths, strict=True))
        ]
        return ("| " + " | ".join(padded) + " |") if markdown else "  ".join(padded)

    if markdown:
        rule = (
            "|"
            + "|".join(
                ("-" * (w + 1) + ":") if i else (":" + "-" * (w + 1)) for i, w in enumerate(widths)
            )
            + "|"
        )
    else:
        rule = "  ".join("-" * width for width in widths)
    title = (
        f"{report.n_tasks} tasks x {len(report.seeds)} seeds {list(report.seeds)}; "
        "mean ± std over seeds"
    )
    table = [line(headers), rule, *(line(row) for row in rows)]
    if markdown:
        return "\n".join([title, "", *table])
    return "\n".join([title, *table])


def plot_report(report: BenchmarkReport, path: str | os.PathLike[str]) -> None:
    """Draw the rolling success rate and the cumulative reward of every variant.

    Three panels: rolling success rate, cumulative reward, and cumulative reward
    minus the baseline's on the same seed. One line per variant (the mean over
    seeds) inside a shaded band of ±1 standard deviation. Drawn with matplotlib's
    Agg backend, without pyplot's global state.

    Args:
        report: What :func:`compare_variants` returned.
        path: Where to save the figure; the format follows the suffix (``.png``).

    Raises:
        ImportError: matplotlib is not installed
            (``pip install "langchain-episodic[plot]"``).
    """
    try:
        from matplotlib.backends.backend_agg import FigureCanvasAgg  # noqa: PLC0415
        from matplotlib.figure import Figure  # noqa: PLC0415
    except ImportError as error:
        msg = (
            "plot_report needs matplotlib, which is not installed: "
            'pip install "langchain-episodic[plot]"'
        )
        raise ImportError(msg) from error

    figure = Figure(figsize=(10, 11), layout="constrained")
    FigureCanvasAgg(figure)
    success_axes, reward_axes, gain_axes = figure.subplots(3, 1, sharex=True)
    x = np.arange(1, report.n_tasks + 1)
    base = np.array([[p.cumulative_reward for p in c] for c in report.curves[report.baseline]])
    for number, name in enumerate(report.variants):
        runs = report.curves[name]
        success = np.array([[p.rolling_success_rate for p in curve] for curve in runs])
        reward = np.array([[p.cumulative_reward for p in curve] for curve in runs])
        panels = ((success_axes, success), (reward_axes, reward), (gain_axes, reward - base))
        for axes, values in panels:
            mean = values.mean(axis=0)
            std = values.std(axis=0, ddof=1) if len(runs) > 1 else np.zeros_like(mean)
            color = f"C{number % 10}"
            axes.plot(x, mean, label=name, color=color, linewidth=1.5)
            axes.fill_between(x, mean - std, mean + std, color=color, alpha=0.12, linewidth=0)
    seeds = f"mean ± 1 std over {len(report.seeds)} seed(s)"
    success_axes.set_title(f"Rolling success rate (window {report.window}), {seeds}")
    success_axes.set_ylabel("success rate")
    success_axes.set_ylim(0.0, 1.0)
    success_axes.legend(loc="lower right", fontsize="small", ncols=2)
    reward_axes.set_title(f"Cumulative reward, {seeds}")
    reward_axes.set_ylabel("reward")
    gain_axes.set_title(f"Cumulative reward minus {report.baseline}'s on the same seed (paired)")
    gain_axes.set_ylabel("reward gain")
    gain_axes.axhline(0.0, color="black", linewidth=0.8)
    gain_axes.set_xlabel("task")
    figure.savefig(os.fspath(path), dpi=110)
