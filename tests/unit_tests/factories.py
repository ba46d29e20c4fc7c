"""Shared builders for unit tests."""

from __future__ import annotations

from langchain_episodic.episode import (
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
    """Build a valid :class:`Episode`; override any field by keyword."""
    return Episode(
        episode_id=episode_id,
        task=TaskDescription(description=description, category=category, complexity=complexity),
        solution=solution,
        feedback=Feedback(
            reward=reward,
            message=message,
            tests_passed=tests_passed,
            tests_total=tests_total,
        ),
        outcome=outcome,
        timestamp=timestamp,
        iterations=iterations,
        strategy_used=strategy,
    )
