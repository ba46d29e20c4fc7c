"""Builders for test episodes."""

from __future__ import annotations

from langchain_episodic import (
    Episode,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)


def make_episode(
    *,
    episode_id: str = "e1",
    description: str = "Implement login form",
    category: TaskCategory | str = TaskCategory.CODE_GENERATION,
    complexity: float = 0.5,
    reward: float = 0.8,
    outcome: OutcomeStatus | str = OutcomeStatus.SUCCESS,
    timestamp: float = 0.0,
    iterations: int = 1,
    strategy: str = "iterative",
    message: str = "ok",
    tests_passed: int = 4,
    tests_total: int = 5,
    solution: str = "def f(): pass",
) -> Episode:
    """An episode with sensible defaults; override any field by keyword."""
    return Episode(
        episode_id=episode_id,
        task=TaskDescription(description, category, complexity),  # type: ignore[arg-type]
        solution=solution,
        feedback=Feedback(reward, message, tests_passed, tests_total),
        outcome=outcome,  # type: ignore[arg-type]
        timestamp=timestamp,
        iterations=iterations,
        strategy_used=strategy,
    )
