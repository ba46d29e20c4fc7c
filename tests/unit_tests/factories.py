"""Shared builders for unit tests."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from langchain_episodic import EpisodicMemory, HashingEmbeddings
from langchain_episodic.model.episode import (
    Episode,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.skills import SkillProfile
from langchain_episodic.stores import InMemoryEpisodeStore

LOGINS_NOW = 1_700_000_000.0
"""The clock of :func:`logins_memory` and the creation time of :func:`a_lesson`."""


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


def assert_same_profiles(got: Sequence[SkillProfile], expected: Sequence[SkillProfile]) -> None:
    """Equal skill profiles, averages up to float rounding.

    Summaries that cross JSON or are summed in another order differ in the last bits.
    """
    assert len(got) == len(expected)
    for mine, theirs in zip(got, expected, strict=True):
        assert (mine.category, mine.total_episodes, mine.successes) == (
            theirs.category,
            theirs.total_episodes,
            theirs.successes,
        )
        assert mine.avg_reward == pytest.approx(theirs.avg_reward, rel=1e-12)
        assert mine.avg_iterations == pytest.approx(theirs.avg_iterations, rel=1e-12)


def logins_memory() -> EpisodicMemory:
    """Two login episodes (``login-1``, ``login-2``) in memory, the clock at ``LOGINS_NOW``."""
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: LOGINS_NOW
    )
    memory.record_many(
        [
            make_episode(episode_id="login-1", description="Implement a login form"),
            make_episode(episode_id="login-2", description="Fix the login form crash"),
        ]
    )
    return memory


def a_lesson(source: str = "login-1", title: str = "Strip e-mails first") -> Lesson:
    """A lesson about ``logins_memory``'s login form, drawn from ``source``."""
    return Lesson.create(
        title=title,
        applies_when="a login form validates an e-mail address",
        do="call .strip() first",
        sources=(LessonSource(source),),
        created_at=LOGINS_NOW,
    )
