"""Adaptive strategy selection from experience (article, section 10).

Three levels, first match wins:

1. **Experience** — recall the 5 most relevant episodes; if more than 60 % of them
   succeeded, reuse the strategy of the best-ranked successful one.
2. **Weakness** — if the task's category is weak (success rate below 0.5 over at
   least ``min_category_episodes`` recorded episodes), be ``"defensive"``.
3. **Complexity** — above 0.7 ``"iterative"``, below 0.3 ``"exploratory"``, else
   ``"iterative"``.

The hierarchy never tries a strategy it has no evidence for: ``"conservative"`` and
``"example_driven"`` are only ever reused, never proposed. Opt-in **Thompson
sampling** (``choose_strategy(..., exploration="thompson", rng=rng)`` or
:func:`select_strategy_thompson`) explores instead: for each strategy of
:data:`STRATEGY_POOL` it draws a success rate from ``Beta(1 + successes,
1 + failures)`` counted over the recalled similar episodes, and picks the highest
draw. Untried strategies keep a wide ``Beta(1, 1)``, so they get tried; strategies
that keep failing are drawn low and fade out.

Example:
    .. code-block:: python

        import numpy as np

        from langchain_episodic.strategy import STRATEGY_POOL, select_strategy
        from langchain_episodic import TaskDescription
        from langchain_episodic.strategy import select_strategy_thompson

        task = TaskDescription("Fix the flaky login test", "debugging", 0.6)
        name = select_strategy(task, memory)
        instruction = STRATEGY_POOL[name]
        explored = select_strategy_thompson(task, memory, np.random.default_rng(0))
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

import numpy as np

from langchain_episodic._validation import check_int
from langchain_episodic.episode import Episode, OutcomeStatus, TaskDescription
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.relevance import DEFAULT_RANKING, Ranking
from langchain_episodic.scoring import PrioritizedResult, ReplayWeights
from langchain_episodic.skills import SkillProfile

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory

__all__ = [
    "DEFAULT_EVIDENCE_K",
    "HIERARCHY_EVIDENCE_K",
    "STRATEGY_POOL",
    "Exploration",
    "StrategyChoice",
    "StrategyEvidence",
    "choose_strategy",
    "complexity_strategy",
    "select_strategy",
    "select_strategy_thompson",
    "strategy_evidence",
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
"""Similar episodes Thompson sampling counts outcomes over."""

HIERARCHY_EVIDENCE_K = 5
"""Episodes :func:`choose_strategy` recalls for level 1 of the hierarchy (the article's 5)."""

Reason = Literal["experience", "weak_category", "complexity", "thompson"]
Exploration = Literal["thompson"]


@dataclass(frozen=True)
class StrategyChoice:
    """A selected strategy and why it was chosen.

    Attributes:
        strategy: A key of :data:`STRATEGY_POOL`.
        reason: Which level of the hierarchy decided, or ``"thompson"`` when the
            opt-in exploration did.
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
    """Outcomes of one strategy among recalled episodes.

    Attributes:
        successes: Episodes that used the strategy and succeeded.
        failures: Episodes that used it and did not succeed (partial or failure).
    """

    successes: int = 0
    failures: int = 0

    @property
    def trials(self) -> int:
        """Episodes that used the strategy."""
        return self.successes + self.failures


def complexity_strategy(task: TaskDescription) -> str:
    """Level 3 of the hierarchy: ``"exploratory"`` below complexity 0.3, else ``"iterative"``.

    This is what :func:`select_strategy` picks with an empty memory.

    Example:
        >>> from langchain_episodic import TaskDescription
        >>> complexity_strategy(TaskDescription("Rename a variable", complexity=0.1))
        'exploratory'
        >>> complexity_strategy(TaskDescription("Design a plugin system", complexity=0.9))
        'iterative'
    """
    return "exploratory" if task.complexity < 0.3 else "iterative"


def strategy_evidence(episodes: Iterable[Episode]) -> dict[str, StrategyEvidence]:
    """Count successes and failures per strategy of :data:`STRATEGY_POOL`.

    Every pool strategy gets an entry (zero counts when no episode used it);
    strategies outside the pool are ignored.

    Example:
        >>> strategy_evidence([])["defensive"]
        StrategyEvidence(successes=0, failures=0)
    """
    counts = {name: [0, 0] for name in STRATEGY_POOL}
    for episode in episodes:
        tally = counts.get(episode.strategy_used)
        if tally is not None:
            tally[0 if episode.outcome is OutcomeStatus.SUCCESS else 1] += 1
    return {name: StrategyEvidence(s, f) for name, (s, f) in counts.items()}


def thompson_sample(
    evidence: Mapping[str, StrategyEvidence],
    rng: np.random.Generator,
) -> str:
    """Pick the strategy with the highest draw from ``Beta(1 + successes, 1 + failures)``.

    Every strategy of :data:`STRATEGY_POOL` is eligible; one missing from
    ``evidence`` counts as untried. Draws are made in pool order, so a seeded
    ``rng`` gives a reproducible choice.

    Args:
        evidence: Outcomes per strategy, e.g. from :func:`strategy_evidence`.
        rng: The source of randomness, e.g. ``np.random.default_rng(0)``.

    Raises:
        TypeError: ``rng`` is not a ``numpy.random.Generator``.
    """
    if not isinstance(rng, np.random.Generator):
        msg = f"rng={rng!r} is invalid: must be a numpy.random.Generator"
        raise TypeError(msg)
    best_name, best_draw = "", -1.0
    for name in STRATEGY_POOL:
        counts = evidence.get(name, StrategyEvidence())
        draw = float(rng.beta(1.0 + counts.successes, 1.0 + counts.failures))
        if draw > best_draw:
            best_name, best_draw = name, draw
    return best_name


def _thompson_choice(
    task: TaskDescription,
    memory: EpisodicMemory,
    current_time: float | None,
    weights: ReplayWeights | None,
    rng: np.random.Generator | None,
    evidence_k: int,
) -> StrategyChoice:
    check_int("evidence_k", evidence_k, 1)
    # fetch_k = top_k: the evidence is the evidence_k most similar episodes. Re-ranking a
    # wider pool by priority would drop failures first (reward and outcome raise the
    # priority) and inflate every success count.
    results = memory.recall(
        task.description,
        top_k=evidence_k,
        current_time=current_time,
        weights=weights,
        fetch_k=evidence_k,
        # The evidence is the evidence_k most similar episodes, as documented: the
        # article's ranking with fetch_k == top_k only reorders them, the relevance
        # test would thin the evidence (measured: +22.3 -> +10.1 in the simulation).
        ranking="article",
    )
    evidence = strategy_evidence(result.episode for result in results)
    generator = rng if rng is not None else np.random.default_rng()
    return StrategyChoice(thompson_sample(evidence, generator), "thompson")


def choose_strategy(
    task: TaskDescription | str,
    memory: EpisodicMemory,
    current_time: float | None = None,
    *,
    proven_threshold: float = 0.6,
    weak_threshold: float = 0.5,
    min_category_episodes: int = 3,
    weights: ReplayWeights | None = None,
    exploration: Exploration | None = None,
    rng: np.random.Generator | None = None,
    evidence_k: int = DEFAULT_EVIDENCE_K,
    ranking: Ranking = DEFAULT_RANKING,
) -> StrategyChoice:
    """Like :func:`select_strategy`, but also says which level decided.

    Args:
        task: The new task.
        memory: Where past episodes are recalled from.
        current_time: "Now" in seconds; the memory's clock when ``None``.
        proven_threshold: Level 1 applies when the recalled success rate exceeds it.
        weak_threshold: A category is weak below this success rate.
        min_category_episodes: Episodes a category needs before it can count as weak.
        weights: Priority weights of the recall (e.g. ``ReplayWeights.for_phase("early")``);
            the article's defaults when ``None``.
        exploration: ``None`` (default) follows the article's hierarchy; ``"thompson"``
            replaces it by Thompson sampling over the outcomes of the ``evidence_k``
            most similar episodes (see :func:`select_strategy_thompson`).
        rng: Randomness for exploration; a fresh unseeded generator when ``None``.
        evidence_k: Episodes recalled as evidence for exploration.
        ranking: The recall's ranking for the hierarchy: ``"relevance"`` (default) or
            ``"article"``. Exploration always counts the ``evidence_k`` most similar.

    Raises:
        EpisodicValueError: ``exploration`` is not ``None`` or ``"thompson"``.
    """
    if isinstance(task, str):
        task = TaskDescription(task)
    if exploration is not None:
        if exploration != "thompson":
            msg = f"exploration={exploration!r} is invalid: must be None or 'thompson'"
            raise EpisodicValueError(msg)
        return _thompson_choice(task, memory, current_time, weights, rng, evidence_k)
    results = memory.recall(
        task.description,
        top_k=HIERARCHY_EVIDENCE_K,
        current_time=current_time,
        weights=weights,
        ranking=ranking,
    )
    return strategy_from_results(
        task,
        results,
        memory.skill_profiles(),
        proven_threshold=proven_threshold,
        weak_threshold=weak_threshold,
        min_category_episodes=min_category_episodes,
    )


def strategy_from_results(
    task: TaskDescription,
    results: Sequence[PrioritizedResult],
    profiles: Iterable[SkillProfile],
    *,
    proven_threshold: float = 0.6,
    weak_threshold: float = 0.5,
    min_category_episodes: int = 3,
) -> StrategyChoice:
    """The article's three-level hierarchy, from episodes already recalled (pure).

    :func:`choose_strategy` recalls :data:`HIERARCHY_EVIDENCE_K` episodes and calls
    this; the replay pipeline calls it on the episodes its prompt shows, so one
    recall serves both and the strategy agrees with the episodes the model sees.

    Args:
        task: The new task (its category and complexity decide levels 2 and 3).
        results: Recalled episodes, best-ranked first.
        profiles: Skill profiles of the memory (e.g. ``memory.skill_profiles()``).
        proven_threshold: Level 1 applies when the results' success rate exceeds it.
        weak_threshold: A category is weak below this success rate.
        min_category_episodes: Episodes a category needs before it can count as weak.

    Example:
        >>> from langchain_episodic import TaskDescription
        >>> strategy_from_results(TaskDescription("Rename a variable", complexity=0.1), (), ())
        StrategyChoice(strategy='exploratory', reason='complexity')
    """
    # The article's level 1 reads every recalled episode: with the default ranking
    # they are all relevant; with ranking="article" this keeps its rule exact.
    episodes = [result.episode for result in results]
    successes = sum(episode.outcome is OutcomeStatus.SUCCESS for episode in episodes)
    if episodes and successes / len(episodes) > proven_threshold:
        for episode in episodes:
            if episode.outcome is OutcomeStatus.SUCCESS and episode.strategy_used in STRATEGY_POOL:
                return StrategyChoice(episode.strategy_used, "experience")
    for profile in profiles:
        if (
            profile.category is task.category
            and profile.total_episodes >= min_category_episodes
            and profile.success_rate < weak_threshold
        ):
            return StrategyChoice("defensive", "weak_category")
    return StrategyChoice(complexity_strategy(task), "complexity")


def select_strategy(
    task: TaskDescription | str,
    memory: EpisodicMemory,
    current_time: float | None = None,
) -> str:
    """Pick a strategy name from :data:`STRATEGY_POOL` for ``task``, using ``memory``.

    Level 1 reuses the strategy of the best-ranked *successful* recalled episode
    (the article takes the first recalled strategy, which can be a failed one's).

    Returns:
        A key of :data:`STRATEGY_POOL`.
    """
    return choose_strategy(task, memory, current_time).strategy


def select_strategy_thompson(
    task: TaskDescription | str,
    memory: EpisodicMemory,
    rng: np.random.Generator,
    current_time: float | None = None,
    *,
    evidence_k: int = DEFAULT_EVIDENCE_K,
    weights: ReplayWeights | None = None,
) -> str:
    """Pick a strategy by Thompson sampling over the outcomes of similar episodes.

    Recalls the ``evidence_k`` episodes most similar to ``task``, counts each pool
    strategy's successes and failures among them (:func:`strategy_evidence`), draws
    a success rate per strategy from ``Beta(1 + successes, 1 + failures)`` and
    returns the strategy with the highest draw (:func:`thompson_sample`). Unlike
    :func:`select_strategy`, every strategy of :data:`STRATEGY_POOL` can be chosen,
    including ones no recalled episode used.

    Args:
        task: The new task.
        memory: Where past episodes are recalled from.
        rng: Randomness, e.g. ``np.random.default_rng(seed)``; seeded, the choice is
            reproducible.
        current_time: "Now" in seconds; the memory's clock when ``None``.
        evidence_k: How many similar episodes to count outcomes over.
        weights: Priority weights that order the recalled episodes.

    Returns:
        A key of :data:`STRATEGY_POOL`.
    """
    if not isinstance(rng, np.random.Generator):
        msg = f"rng={rng!r} is invalid: must be a numpy.random.Generator"
        raise TypeError(msg)
    return choose_strategy(
        task,
        memory,
        current_time,
        weights=weights,
        exploration="thompson",
        rng=rng,
        evidence_k=evidence_k,
    ).strategy
