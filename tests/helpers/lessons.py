"""Lessons about a login form, and the memory they are drawn from, for the lesson tests."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import make_episode

NOW = 1_750_000_000.0
LOGIN = "Implement a login form with email validation"
STRIP = dict(
    title="Strip e-mail addresses before validating them",
    applies_when="Implement a form with email validation",
    do="call .strip() on the address first",
    avoid="validating the raw input",
)


def lesson(
    sources: tuple[str, ...] = ("login-1",), created_at: float = NOW, **fields: str
) -> Lesson:
    return Lesson.create(
        **(STRIP | fields),
        sources=tuple(LessonSource(i) for i in sources),
        created_at=created_at,
    )


def lessons_memory() -> EpisodicMemory:
    """Two login attempts (one failed, one passed) and a CSV task, at NOW."""
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(
                episode_id="login-1",
                description=LOGIN,
                reward=0.3,
                outcome="failure",
                message="fails on trailing spaces",
                timestamp=NOW - 200,
            ),
            make_episode(
                episode_id="login-2",
                description="Implement a signup form with email validation",
                reward=1.0,
                message="all pass",
                timestamp=NOW - 100,
            ),
            make_episode(
                episode_id="csv-1",
                description="Write unit tests for the CSV parser",
                category="testing",
                timestamp=NOW - 50,
            ),
        ]
    )
    return memory
