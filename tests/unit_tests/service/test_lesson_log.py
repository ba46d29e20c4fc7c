"""``LessonLog``: a namespace's lessons and their vectors, kept in the journal."""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
from tests.unit_tests.factories import a_lesson, logins_memory


def test_a_stored_lesson_is_in_the_book_with_its_entry() -> None:
    memory = logins_memory()
    lesson = a_lesson()
    memory.lessons.add([lesson])
    log = memory.journal.lessons
    assert lesson.lesson_id in log.book.lessons
    assert log.entry_ids  # the journal entry it was written as


def test_a_reopened_memory_reads_the_same_lessons_from_the_journal() -> None:
    memory = logins_memory()
    lesson = a_lesson()
    memory.lessons.add([lesson])
    reopened = EpisodicMemory(store=memory.store, embeddings=memory.embeddings)
    assert reopened.journal.lessons.book.lessons == memory.journal.lessons.book.lessons


def test_a_reload_that_brings_back_the_same_lessons_keeps_the_book() -> None:
    memory = logins_memory()
    memory.lessons.add([a_lesson()])
    log = memory.journal.lessons
    book = log.book
    memory.journal.reload()  # as when credit must be replayed in order
    assert log.book is book  # so what recall built on it (the lesson index) stays
    other = EpisodicMemory(store=memory.store, embeddings=memory.embeddings)
    other.lessons.add([a_lesson(title="Trim the password too")])
    memory.journal.reload()
    assert log.book is not book
    assert len(log.book.lessons) == 2
    assert log.book.lessons.keys() == other.journal.lessons.book.lessons.keys()
