"""``Lessons``: the lessons service of one namespace: add, get, status, revise."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory, StaticEmbeddings
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.lesson_bounds import MIN_LESSONS, LessonBounds
from langchain_episodic.service import lessons as lessons_module
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


def test_many_lessons_recall_the_same_lessons_with_and_without_bounds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """From ``MIN_LESSONS`` on, bounds skip lessons: never one the full scan would show."""
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=StaticEmbeddings(), clock=lambda: LOGINS_NOW
    )
    memory.record_many([make_episode(episode_id="e-1", description="Implement a login form")])
    topics = ("login form", "CSV parser", "payment retries", "cache expiry", "session cookies")
    verbs = ("Validate", "Strip", "Retry", "Cache", "Escape", "Log", "Time out", "Paginate")
    count = MIN_LESSONS + 100
    service = memory._s.lessons
    service.add(
        Lesson.create(
            title=f"{verbs[i % 8]} {topics[i % 5]} inputs, case {i}",
            applies_when=f"a task about the {topics[(i // 3) % 5]} of module {i % 97}",
            do=f"{verbs[(i // 5) % 8].lower()} before saving (variant {i})",
            sources=(LessonSource("e-1"),),
            created_at=LOGINS_NOW - count + i,
            helped=float(i % 7 == 0) * (i % 5),  # some carry evidence: utility factors vary
            hurt=float(i % 11 == 0) * 3,
        )
        for i in range(count)
    )
    demoted = {lesson.lesson_id for lesson in service.of_status("active")[::50]}
    monkeypatch.setattr(service, "_demoted", lambda: demoted)
    queries = [
        service._context.embed_query(f"{verb} the {topic} of module {j}")
        for j, (verb, topic) in enumerate(zip(verbs * 5, topics * 8, strict=True))
    ]
    pruned = [0]
    candidates = LessonBounds.candidates

    def counting(self: LessonBounds, *args: object, **kwargs: object) -> object:
        found = candidates(self, *args, **kwargs)  # type: ignore[arg-type]
        pruned[0] += found is not None
        return found

    monkeypatch.setattr(LessonBounds, "candidates", counting)
    cases = [(query, k, floor) for query in queries for k in (1, 2, 5) for floor in (0.2, 0.5)]
    with_bounds = [service.near(query, k, floor) for query, k, floor in cases]
    assert pruned[0] > len(cases) // 2  # the bounds were used, not given up on
    monkeypatch.setattr(lessons_module._LazyBounds, "get", lambda self: None)
    assert [service.near(query, k, floor) for query, k, floor in cases] == with_bounds
    assert any(with_bounds)
