"""Adaptive strategy selection from experience (article, section 10, and beyond it).

**The default** (``ranking="relevance"``) decides from evidence about the task:

1. **Evidence** — count each pool strategy's graded successes among the
   `DEFAULT_EVIDENCE_K` (20) most similar past episodes that reach the
   relevance floor (no margin: a strategy's record needs more than the two or three
   episodes a prompt shows). An episode counts
   `success_grade` of a success: 1 for a
   success, 0 for a failure, its pass rate for a partial success (0.9 for 9 of 10
   tests), the rest of the trial a failure. The estimate is the mean of the Beta
   posterior, ``(successes + 1) / (trials + 2)``. The strategy levels 2-3 would pick
   keeps its place unless another has a strictly higher estimate; then the highest
   wins (pool order breaks ties). An untried strategy's estimate is 0.5, so a
   fallback that keeps failing on tasks like this one gets replaced by something not
   yet tried, while one partial success (9/10, 7/10) keeps it.
2. **Weakness** — if the task's category is weak
   (`is_weak`: success rate below 0.5 over
   at least 3 recorded episodes; a partial success is not a success there), be
   ``"defensive"``.
3. **Complexity** — above 0.7 ``"iterative"``, below 0.3 ``"exploratory"``, else
   ``"iterative"``.

Measured in the simulation (``python benchmarks/learning.py``, 300 tasks x 5
seeds, simulated): this earns more reward than the article's hierarchy on the
article's ranking, which gets most of its gain from recalling recent successes of
unrelated tasks. Graded evidence earns +4.9 ± 3.5 more than counting a partial success
as a failed trial, paired over the same 5 seeds (``python
benchmarks/learning_evidence.py``, ``benchmarks/results/strategy_evidence.md``).

**The article's hierarchy** (``ranking="article"``), exactly: recall the 5
best-ranked episodes by the article's priority; if more than 60 % of them succeeded,
reuse the strategy of the best-ranked successful one; else levels 2-3. It never
tries a strategy it has no evidence for: ``"conservative"`` and
``"example_driven"`` are only ever reused, never proposed. Level 1 counts outcomes
as the article does (a partial success is not a success); level 2 is the package's
one definition of weak (the article leaves its rule open).

Opt-in **Thompson sampling** (``choose_strategy(..., exploration="thompson", rng=rng)``
or `select_strategy_thompson`) explores instead: for each strategy of
`STRATEGY_POOL` it draws a success rate from ``Beta(1 + successes,
1 + failures)`` counted (graded, as above) over the recalled similar episodes, and
picks the highest draw. Untried strategies keep a wide ``Beta(1, 1)``, so they get
tried; strategies that keep failing are drawn low and fade out.

Examples:
    ```python
    import numpy as np

    from langchain_episodic.scoring.strategy import STRATEGY_POOL, select_strategy
    from langchain_episodic import TaskDescription
    from langchain_episodic.scoring.strategy import select_strategy_thompson

    task = TaskDescription("Fix the flaky login test", "debugging", 0.6)
    name = select_strategy(task, memory)
    instruction = STRATEGY_POOL[name]
    explored = select_strategy_thompson(task, memory, np.random.default_rng(0))
    ```
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Literal, Protocol

import numpy as np

from langchain_episodic.model.episode import Episode, OutcomeStatus, TaskDescription
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import Neighbour, RecallReport
from langchain_episodic.scoring.skills import (
    MIN_WEAK_EPISODES,
    WEAK_THRESHOLD,
    SkillProfile,
    episode_grade,
    is_weak,
    success_grade,
)

__all__ = [
    "DEFAULT_EVIDENCE_K",
    "HIERARCHY_EVIDENCE_K",
    "STRATEGY_POOL",
    "Exploration",
    "StrategyChoice",
    "StrategyEvidence",
    "StrategyOutcome",
    "complexity_strategy",
    "evidence_grade",
    "strategy_evidence",
    "strategy_for_report",
    "strategy_from_evidence",
    "strategy_from_results",
    "thompson_sample",
]

STRATEGY_POOL: MappingProxyType[str, str] = MappingProxyType(
    {
        "conservative": "Generate minimal, safe code. Avoid complexity.",
        "exploratory": "Try new approaches. Use modern patterns.",
        "defensive": "Focus on error handling and edge cases.",
        "iterative": "Start simple, extend incrementally.",
        "example_driven": "Follow successful examples.",
    }
)
"""The article's five strategies: name -> instruction for the model."""

DEFAULT_EVIDENCE_K = 20
"""Similar episodes strategy selection counts outcomes over (the default and Thompson)."""

HIERARCHY_EVIDENCE_K = 5
"""Episodes `choose_strategy` recalls for level 1 of the hierarchy (the article's 5)."""

Reason = Literal["evidence", "experience", "weak_category", "complexity", "thompson", "holdout"]
Exploration = Literal["thompson"]


@dataclass(frozen=True)
class StrategyChoice:
    """A selected strategy and why it was chosen.

    Attributes:
        strategy: A key of `STRATEGY_POOL`.
        reason: Which level decided: ``"evidence"`` (the default's level 1),
            ``"experience"`` (the article's level 1), ``"weak_category"``,
            ``"complexity"``, ``"thompson"`` when the opt-in exploration did, or
            ``"holdout"``: a holdout run, chosen by complexity without memory.
        instruction: The strategy's instruction text.
    """

    strategy: str
    reason: Reason

    @property
    def instruction(self) -> str:
        """The strategy's instruction for the model."""
        return STRATEGY_POOL[self.strategy]

    @property
    def prompt_line(self) -> str:
        """The line a replay appends: ``Strategy: <name> - <instruction>``."""
        return f"Strategy: {self.strategy} - {self.instruction}"


@dataclass(frozen=True)
class StrategyEvidence:
    """Graded outcomes of one strategy among recalled episodes.

    Each episode adds its grade (`evidence_grade`) to ``successes`` and the
    rest of the trial to ``failures``: a success adds 1 to ``successes``, a failure 1
    to ``failures``, a partial success passing 9 of 10 tests 0.9 and 0.1.

    Attributes:
        successes: Graded successes of the episodes that used the strategy.
        failures: The rest of their trials (one trial per episode).
    """

    successes: float = 0.0
    failures: float = 0.0

    @property
    def trials(self) -> float:
        """Episodes that used the strategy (``successes + failures``)."""
        return self.successes + self.failures

    @property
    def estimate(self) -> float:
        """Estimated success rate, ``(successes + 1) / (trials + 2)``: 0.5 when untried.

        The mean of the Beta posterior from a ``Beta(1, 1)`` prior.

        Examples:
            >>> StrategyEvidence(successes=3, failures=1).estimate
            0.6666666666666666
            >>> round(StrategyEvidence(successes=0.9, failures=0.1).estimate, 3)  # one 9/10
            0.633
        """
        return (self.successes + 1) / (self.trials + 2)


class StrategyOutcome(Protocol):
    """What strategy evidence counts: anything with a strategy and an outcome.

    An `Episode`, or a
    `Neighbour` from a recall report
    (both graded by their pass rate, see `evidence_grade`).
    """

    @property
    def strategy_used(self) -> str:
        """The strategy the episode used."""
        ...

    @property
    def outcome(self) -> OutcomeStatus:
        """How the episode ended."""
        ...


def complexity_strategy(task: TaskDescription) -> str:
    """Level 3 of the hierarchy: ``"exploratory"`` below complexity 0.3, else ``"iterative"``.

    This is what `select_strategy` picks with an empty memory.

    Examples:
        >>> from langchain_episodic import TaskDescription
        >>> complexity_strategy(TaskDescription("Rename a variable", complexity=0.1))
        'exploratory'
        >>> complexity_strategy(TaskDescription("Design a plugin system", complexity=0.9))
        'iterative'
    """
    return "exploratory" if task.complexity < 0.3 else "iterative"


def evidence_grade(item: StrategyOutcome) -> float:
    """How much of a success one piece of strategy evidence was, in [0, 1].

    `success_grade` of an episode's outcome
    and feedback, or a neighbour's ``grade``; anything else (or a neighbour without
    a grade) by its outcome alone.

    Examples:
        >>> n = Neighbour("e1", 0.8, "iterative", OutcomeStatus.PARTIAL, grade=0.7)
        >>> evidence_grade(n)
        0.7
    """
    if isinstance(item, Episode):
        return episode_grade(item)
    if isinstance(item, Neighbour) and item.grade is not None:
        return item.grade
    return success_grade(item.outcome)


def strategy_evidence(episodes: Iterable[StrategyOutcome]) -> dict[str, StrategyEvidence]:
    """Count graded successes and failures per strategy of `STRATEGY_POOL`.

    Every pool strategy gets an entry (zero counts when no episode used it);
    strategies outside the pool are ignored. Each episode adds its
    `evidence_grade` to the successes and the rest to the failures.

    Examples:
        >>> strategy_evidence([])["defensive"]
        StrategyEvidence(successes=0.0, failures=0.0)
        >>> nine = Neighbour("e1", 0.8, "iterative", OutcomeStatus.PARTIAL, grade=0.9)
        >>> strategy_evidence([nine])["iterative"].estimate > 0.5
        True
    """
    counts = {name: [0.0, 0.0] for name in STRATEGY_POOL}
    for episode in episodes:
        tally = counts.get(episode.strategy_used)
        if tally is not None:
            grade = evidence_grade(episode)
            tally[0] += grade
            tally[1] += 1.0 - grade
    return {name: StrategyEvidence(s, f) for name, (s, f) in counts.items()}


def thompson_sample(evidence: Mapping[str, StrategyEvidence], rng: np.random.Generator) -> str:
    """Pick the strategy with the highest draw from ``Beta(1 + successes, 1 + failures)``.

    Every strategy of `STRATEGY_POOL` is eligible; one missing from
    ``evidence`` counts as untried. Draws are made in pool order, so a seeded
    ``rng`` gives a reproducible choice.

    Args:
        evidence: Outcomes per strategy, e.g. from `strategy_evidence`.
        rng: The source of randomness, e.g. ``np.random.default_rng(0)``.

    Raises:
        TypeError: ``rng`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        msg = f"rng={rng!r} is invalid: must be a numpy.random.Generator"
        raise TypeError(msg)
    draws = {}
    for name in STRATEGY_POOL:
        counts = evidence.get(name, StrategyEvidence())
        draws[name] = float(rng.beta(1.0 + counts.successes, 1.0 + counts.failures))
    return max(draws, key=draws.__getitem__)  # the first of equal draws


def strategy_for_report(
    task: TaskDescription,
    report: RecallReport,
    profiles: Iterable[SkillProfile],
    *,
    proven_threshold: float = 0.6,
    weak_threshold: float = WEAK_THRESHOLD,
    min_category_episodes: int = MIN_WEAK_EPISODES,
) -> StrategyChoice:
    """The strategy a recall report supports, by the rule of its ranking (pure).

    ``ranking="article"``: the article's hierarchy over the report's results
    (`strategy_from_results`); otherwise the evidence of its neighbours
    (`strategy_from_evidence`). `choose_strategy` and the replay
    pipeline both decide here, so they agree for the same recall.

    Args:
        task: The new task.
        report: A recall report; ask it for ``evidence_k`` neighbours when its
            ranking is ``"relevance"``.
        profiles: Skill profiles of the memory (e.g. ``memory.skill_profiles()``).
        proven_threshold: The article's level 1 threshold (``ranking="article"`` only).
        weak_threshold: A category is weak below this graded success rate
            (`is_weak`).
        min_category_episodes: Episodes a category needs before it can count as weak.
    """
    if report.ranking == "article":
        return strategy_from_results(
            task,
            report.results,
            profiles,
            proven_threshold=proven_threshold,
            weak_threshold=weak_threshold,
            min_category_episodes=min_category_episodes,
        )
    return strategy_from_evidence(
        task,
        report.neighbours,
        profiles,
        weak_threshold=weak_threshold,
        min_category_episodes=min_category_episodes,
    )


def strategy_from_evidence(
    task: TaskDescription,
    evidence: Iterable[StrategyOutcome],
    profiles: Iterable[SkillProfile],
    *,
    weak_threshold: float = WEAK_THRESHOLD,
    min_category_episodes: int = MIN_WEAK_EPISODES,
) -> StrategyChoice:
    """The default's rule: the best-supported strategy, else levels 2-3 (pure).

    Counts each pool strategy's outcomes in ``evidence``
    (`strategy_evidence`). The fallback (levels 2-3, weak category or
    complexity) stands unless another strategy's
    `StrategyEvidence.estimate` is strictly higher; then the highest wins, in
    pool order on a tie. Untried strategies estimate 0.5, so a fallback that fails
    on similar tasks gives way to one not yet tried. The reason is ``"evidence"``
    when the chosen strategy has more successes than failures among the evidence
    or beat the fallback; otherwise the fallback's own.

    Args:
        task: The new task (its category and complexity decide the fallback).
        evidence: Relevant similar episodes, e.g. ``report.neighbours``.
        profiles: Skill profiles of the memory (e.g. ``memory.skill_profiles()``).
        weak_threshold: A category is weak below this graded success rate
            (`is_weak`).
        min_category_episodes: Episodes a category needs before it can count as weak.

    Examples:
        >>> from langchain_episodic import OutcomeStatus, TaskDescription
        >>> from langchain_episodic.scoring.ranking import Neighbour
        >>> task = TaskDescription("Write a CSV importer", complexity=0.2)
        >>> strategy_from_evidence(task, [], [])
        StrategyChoice(strategy='exploratory', reason='complexity')
        >>> won = Neighbour("csv-1", 0.7, "example_driven", OutcomeStatus.SUCCESS)
        >>> lost = Neighbour("csv-2", 0.6, "exploratory", OutcomeStatus.FAILURE)
        >>> strategy_from_evidence(task, [won, lost], [])
        StrategyChoice(strategy='example_driven', reason='evidence')
    """
    fallback = _fallback(task, profiles, weak_threshold, min_category_episodes)
    counts = strategy_evidence(evidence)
    # The highest estimate; the fallback on a tie, else the first in pool order.
    best = max(counts, key=lambda name: (counts[name].estimate, name == fallback.strategy))
    if best == fallback.strategy and counts[best].estimate <= 0.5:
        return fallback  # no evidence for it, and none against it that another beats
    return StrategyChoice(best, "evidence")


def _fallback(
    task: TaskDescription,
    profiles: Iterable[SkillProfile],
    weak_threshold: float,
    min_category_episodes: int,
) -> StrategyChoice:
    """Levels 2-3: ``"defensive"`` for a weak category (`is_weak`), else by complexity."""
    for profile in profiles:
        if profile.category is task.category and is_weak(
            profile, weak_threshold, min_category_episodes
        ):
            return StrategyChoice("defensive", "weak_category")
    return StrategyChoice(complexity_strategy(task), "complexity")


def strategy_from_results(
    task: TaskDescription,
    results: Sequence[PrioritizedResult],
    profiles: Iterable[SkillProfile],
    *,
    proven_threshold: float = 0.6,
    weak_threshold: float = WEAK_THRESHOLD,
    min_category_episodes: int = MIN_WEAK_EPISODES,
) -> StrategyChoice:
    """The article's three-level hierarchy, from episodes already recalled (pure).

    Level 1 reuses the strategy of the best-ranked *successful* recalled episode
    (the article takes the first recalled strategy, which can be a failed one's).
    With ``ranking="article"``, `choose_strategy` recalls
    `HIERARCHY_EVIDENCE_K` episodes and calls this, and the replay pipeline
    calls it on the episodes its prompt shows (see `strategy_for_report`).

    Args:
        task: The new task (its category and complexity decide levels 2 and 3).
        results: Recalled episodes, best-ranked first.
        profiles: Skill profiles of the memory (e.g. ``memory.skill_profiles()``).
        proven_threshold: Level 1 applies when the results' success rate exceeds it.
        weak_threshold: A category is weak below this graded success rate
            (`is_weak`).
        min_category_episodes: Episodes a category needs before it can count as weak.

    Examples:
        >>> from langchain_episodic import TaskDescription
        >>> strategy_from_results(TaskDescription("Rename a variable", complexity=0.1), (), ())
        StrategyChoice(strategy='exploratory', reason='complexity')
    """
    # The article's level 1 reads every recalled episode, as the article does.
    episodes = [result.episode for result in results]
    successes = sum(episode.outcome is OutcomeStatus.SUCCESS for episode in episodes)
    if episodes and successes / len(episodes) > proven_threshold:
        for episode in episodes:
            if episode.outcome is OutcomeStatus.SUCCESS and episode.strategy_used in STRATEGY_POOL:
                return StrategyChoice(episode.strategy_used, "experience")
    return _fallback(task, profiles, weak_threshold, min_category_episodes)
