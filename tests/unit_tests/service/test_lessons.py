"""``Lessons``: the lessons service of one namespace: add, get, status, revise."""

from __future__ import annotations

import pytest

from langchain_episodic.errors import EpisodicValueError
from tests.unit_tests.factories import a_lesson, logins_memory


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
