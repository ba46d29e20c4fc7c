"""Adaptive strategy selection from experience (article, section 10).

Three levels, first match wins:

1. **Experience** — recall the 5 most relevant episodes; if more than 60 % of them
   succeeded, reuse the strategy of the best-ranked successful one.
2. **Weakness** — if the task's category is weak (success rate below 0.5 over at
   least ``min_category_episodes`` recorded episodes), be ``"defensive"``.
3. **Complexity** — above 0.7 ``"iterative"``, below 0.3 ``"exploratory"``, else
   ``"iterative"``.

Example:
    .. code-block:: python

        from langchain_episodic import STRATEGY_POOL, TaskDescription, select_strategy

        task = TaskDescription("Fix the flaky login test", "debugging", 0.6)
        name = select_strategy(task, memory)
        instruction = STRATEGY_POOL[name]
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING, Literal

from langchain_episodic.episode import OutcomeStatus, TaskDescription
from langchain_episodic.replay import build_replay_context

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory

__all__ = ["STRATEGY_POOL", "StrategyChoice", "choose_strategy", "select_strategy"]

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

Reason = Literal["experience", "weak_category", "complexity"]


@dataclass(frozen=True)
class StrategyChoice:
    """A selected strategy and why it was chosen.

    Attributes:
        strategy: A key of :data:`STRATEGY_POOL`.
        reason: Which level of the hierarchy decided.
        instruction: The strategy's instruction text.
    """

    strategy: str
    reason: Reason

    @property
    def instruction(self) -> str:
        """The strategy's instruction for the model."""
        return STRATEGY_POOL[self.strategy]


def choose_strategy(
    task: TaskDescription | str,
    memory: EpisodicMemory,
    current_time: float | None = None,
    *,
    proven_threshold: float = 0.6,
    weak_threshold: float = 0.5,
    min_category_episodes: int = 3,
) -> StrategyChoice:
    """Like :func:`select_strategy`, but also says which level decided.

    Args:
        task: The new task.
        memory: Where past episodes are recalled from.
        current_time: "Now" in seconds; the memory's clock when ``None``.
        proven_threshold: Level 1 applies when the recalled success rate exceeds it.
        weak_threshold: A category is weak below this success rate.
        min_category_episodes: Episodes a category needs before it can count as weak.
    """
    if isinstance(task, str):
        task = TaskDescription(task)
    results = memory.recall(task.description, top_k=5, current_time=current_time)
    context = build_replay_context(results)
    if context.success_rate > proven_threshold:
        for episode in context.episodes:
            if episode.outcome is OutcomeStatus.SUCCESS and episode.strategy_used in STRATEGY_POOL:
                return StrategyChoice(episode.strategy_used, "experience")
    for profile in memory.skill_profiles():
        if (
            profile.category is task.category
            and profile.total_episodes >= min_category_episodes
            and profile.success_rate < weak_threshold
        ):
            return StrategyChoice("defensive", "weak_category")
    if task.complexity < 0.3:
        return StrategyChoice("exploratory", "complexity")
    return StrategyChoice("iterative", "complexity")


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
