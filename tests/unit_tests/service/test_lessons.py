"""``Lessons``: the lessons service of one namespace: add, get, status, revise, recall."""

from __future__ import annotations

import math

import numpy as np
import pytest

from langchain_episodic import EpisodicMemory
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.credit import UTILITY_HALF_LIFE, utility_factor
from langchain_episodic.scoring.decay import ranking_mean
from langchain_episodic.scoring.lesson_search import similarities_of
from langchain_episodic.scoring.ranking import top_lessons
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import LOGINS_NOW, a_lesson, logins_memory, make_episode


def test_added_lessons_are_active_and_read_back_by_id() -> None:
    service = logins_memory()._s.lessons
    lesson = a_lesson()
    assert service.add([lesson]) == 1
    assert service.add([lesson]) == 0  # the same lesson again adds nothing
    assert service.get(lesson.lesson_id) == lesson
    assert service.status(lesson.lesson_id) == "active"
    assert lesson.lesson_id in service.ids()


def test_revising_archives_the_old_lesson_and_activates_the_new() -> None:
    service = logins_memory()._s.lessons
    old = a_lesson()
    service.add([old])
    new = service.revise(old.lesson_id, {"title": "Strip every e-mail address"})
    assert new.supersedes == (old.lesson_id,)
    assert (service.status(old.lesson_id), service.status(new.lesson_id)) == ("archived", "active")
    assert service.of_status("active") == (new,)


def test_an_unknown_lesson_id_is_refused_by_name() -> None:
    service = logins_memory()._s.lessons
    with pytest.raises(EpisodicValueError, match="lesson-nope"):
        service.get("lesson-nope")


def clocked_memory(clock: list[float]) -> EpisodicMemory:
    """A memory of one login episode whose clock reads ``clock[0]``."""
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: clock[0]
    )
    memory.record_many([make_episode(episode_id="login-1", description="Implement a login")])
    return memory


@pytest.mark.parametrize("count", [6, 40])  # factors in plain floats, and vectorised
def test_factor_bounds_hold_at_every_later_time_and_the_exact_factors_are_the_rules(
    count: int,
) -> None:
    clock = [LOGINS_NOW]
    memory = clocked_memory(clock)
    lessons = [
        Lesson.create(
            title=f"Lesson {i}",
            applies_when="a login form validates an e-mail address",
            do=f"step {i}",
            sources=(LessonSource("login-1"),),
            created_at=LOGINS_NOW - 3_600.0 * i,
        )
        for i in range(count)
    ]
    memory.lessons.add(lessons)
    for i, one in enumerate(lessons[: count - 1]):  # helped, hurt, mixed; one never shown
        clock[0] += 60.0
        memory.runs.note(f"run-{i:03d}", [one.lesson_id], "Implement a login")
        memory.runs.credit(f"run-{i:03d}", (1.0, 0.0, 0.6, 0.3)[i % 4])
    service = memory._s.lessons
    index = service.active_index(384)
    half_life = UTILITY_HALF_LIFE
    credited = index.with_evidence.tolist()
    never = index.rows[lessons[-1].lesson_id]
    assert len(credited) == count - 1
    assert never not in credited
    start = clock[0]

    def rule(row: int, now: float) -> float:  # what recall ranks by, from scratch
        return utility_factor(ranking_mean(*service._evidence(index.lessons[row], now)))

    first = index.credit_factors(start, half_life)
    for later in (0.0, 1.0, 3_600.0, 86_400.0 * 3, 86_400.0 * 400):
        now = start + later
        credit = index.credit_factors(now, half_life)
        assert list(credit.lowest) == list(first.lowest)  # computed once, at the start
        factors = credit.exact([*credited, never])
        assert factors[-1] == 1.0  # never credited: the prior's factor
        for position, row in enumerate(credited):
            exact = rule(row, now)
            assert math.isclose(factors[position], exact, rel_tol=1e-9)
            lowest, highest = credit.lowest[position], credit.highest[position]
            assert lowest * (1 - 1e-12) <= exact <= highest * (1 + 1e-12)
        assert min(factors) < 1.0 < max(factors)
    # A clock set back before the bounds' time: the factors then, exactly.
    earlier = index.credit_factors(start - 30.0, half_life)
    for position, row in enumerate(credited):
        exact = rule(row, start - 30.0)
        assert math.isclose(earlier.lowest[position], exact, rel_tol=1e-9)
        assert math.isclose(earlier.highest[position], exact, rel_tol=1e-9)


def test_lessons_recalled_later_are_those_scoring_every_lesson_picks() -> None:
    clock = [LOGINS_NOW]
    memory = clocked_memory(clock)
    lessons = [
        Lesson.create(
            title=f"{('Strip', 'Check', 'Log')[i % 3]} the e-mail address, case {i}",
            applies_when=f"a login form of kind {i % 7}",
            do=f"step {i}",
            sources=(LessonSource("login-1"),),
            created_at=LOGINS_NOW,
        )
        for i in range(60)
    ]
    memory.lessons.add(lessons)
    for i, one in enumerate(lessons[::3]):
        clock[0] += 60.0
        memory.runs.note(f"run-{i:03d}", [one.lesson_id], "Implement a login")
        memory.runs.credit(f"run-{i:03d}", (1.0, 0.0, 0.8)[i % 3])
    service = memory._s.lessons
    half_life = UTILITY_HALF_LIFE
    query = memory._s.context.embed_query("Implement a login form with e-mail checks")
    unit = (query / np.linalg.norm(query)).astype(np.float32)
    for later in (0.0, 3_600.0, 86_400.0 * 30, 86_400.0 * 3_000):
        clock[0] += later
        index = service.active_index(len(unit))
        utilities = index.utilities(clock[0], half_life)
        for k, floor in ((1, 0.0), (3, 0.1), (12, 0.0)):
            expected = top_lessons(
                similarities_of(index.matrix.rows, unit), utilities, index.ids, floor, k
            )
            got = service.near(query, k, floor)
            assert [one.lesson_id for one in got] == [index.ids[row] for row in expected]
