"""A namespace's lessons, as the memory sees them: kept in the store's journal.

`langchain_episodic.model.lesson` is the pure part; this module reads lessons back
from the journal (`read_journal`, the
entries whose id starts with ``lesson:``) and writes new ones through the store. A
lesson is one journal entry, written once: every store that keeps a journal keeps
lessons, durably, and a migration that carries the journal carries them.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from numpy.typing import NDArray

from langchain_episodic.errors import EpisodicValueError, MalformedRecordWarning
from langchain_episodic.model.lesson import (
    Lesson,
    LessonBook,
    decode_lesson,
    encode_lesson,
    is_lesson_entry,
    lesson_model,
)
from langchain_episodic.service.checkpoint import JournalPosition
from langchain_episodic.stores.base import EpisodeStore, JournalEntry

__all__ = ["LessonLog"]


class LessonLog:
    """A namespace's lessons and their vectors.

    Args:
        store: The namespace's store.
        namespace: Whose lessons these are.
        position: How far the journal has been read (shared with the credit log).
    """

    def __init__(self, store: EpisodeStore, namespace: str, position: JournalPosition) -> None:
        self._store = store
        self._namespace = namespace
        self.entry_ids: list[str] = []  # the journal ids of the lessons held: a checkpoint's
        self.book = LessonBook()
        # The embeddings model each stored vector was made with, when recorded.
        self.models: dict[str, str | None] = {}
        # Lessons stored with another model's vectors, embedded again here (by id).
        self._embedded_here: dict[str, NDArray[np.float32]] = {}
        self._position = position

    def reload(self, entries: Sequence[JournalEntry] | None = None) -> None:
        """Read every lesson back from the store's journal (or from ``entries``, just read)."""
        if entries is None:
            entries = self._store.read_journal(self._namespace)
        book, models = self.book, self.models
        self.book, self.models, self.entry_ids = LessonBook(), {}, []
        self.apply(entries)
        if self.models == models and self.book.holds_the_same(book):
            # The same lessons came back (a reload to replay credit in order): the
            # same book, so what recall built on it (the lesson index) stays valid.
            self.book = book

    def apply(self, entries: Sequence[JournalEntry]) -> int:
        """Add the lessons among ``entries`` (journal entries read since); how many were new."""
        fresh: list[tuple[str, Lesson, NDArray[np.float32], str | None]] = []
        for entry in entries:
            if not is_lesson_entry(entry.entry_id):
                continue
            try:
                lesson, vector = decode_lesson(entry.entry_id, entry.run_id, entry.payload)
            except EpisodicValueError as error:
                warnings.warn(MalformedRecordWarning(entry.entry_id, str(error)), stacklevel=3)
                continue
            if lesson.lesson_id not in self.book.lessons:
                fresh.append((entry.entry_id, lesson, vector, lesson_model(entry.payload)))
        if fresh:
            # Copy on write: a reader in another thread (a recall while a background
            # reflection stores lessons) keeps iterating the book it holds, unchanged.
            book = LessonBook(dict(self.book.lessons), dict(self.book.vectors))
            models = dict(self.models)
            for entry_id, lesson, vector, model in fresh:
                if lesson.lesson_id not in book.lessons:
                    book.add(lesson, vector)
                    models[lesson.lesson_id] = model
                    self.entry_ids.append(entry_id)
            self.models, self.book = models, book
        return len(fresh)

    def write(
        self,
        lessons: Sequence[Lesson],
        vectors: NDArray[np.floating[Any]],
        model: str | None = None,
    ) -> int:
        """Store new lessons with their vectors (made by ``model``); how many were new."""
        fresh = [
            (lesson, vector)
            for lesson, vector in zip(lessons, vectors, strict=True)
            if lesson.lesson_id not in self.book.lessons
        ]
        if not fresh:
            return 0
        entries = [JournalEntry(*encode_lesson(lesson, vector, model)) for lesson, vector in fresh]
        self._store.append_journal(self._namespace, entries)
        added = self.apply(entries)
        # Folded in first: noting them may save a checkpoint, which must hold them.
        self._position.wrote(entry.entry_id for entry in entries)
        return added

    def vectors_for(
        self,
        lessons: Sequence[Lesson],
        dimension: int,
        embed: Callable[[list[str]], NDArray[np.float32]],
        model: str | None = None,
    ) -> NDArray[np.float32]:
        """The lessons' unit vectors, ``dimension`` long, one row each.

        A lesson stored with another model's vectors (migrated from a namespace whose
        model has another dimension, or another ``model`` of the same dimension) is
        embedded again with ``embed`` (its
        `embedding_text`), once per lesson.
        """
        book = self.book

        def foreign(lesson: Lesson) -> bool:
            stored = self.models.get(lesson.lesson_id)
            other_model = model is not None and stored is not None and stored != model
            return book.vectors[lesson.lesson_id].shape != (dimension,) or other_model

        again = [
            one for one in lessons if foreign(one) and one.lesson_id not in self._embedded_here
        ]
        if again:
            fresh = np.asarray(embed([lesson.embedding_text for lesson in again]), np.float32)
            for lesson, vector in zip(again, fresh, strict=True):
                self._embedded_here[lesson.lesson_id] = vector / (np.linalg.norm(vector) or 1.0)
        rows = [
            self._embedded_here[lesson.lesson_id]
            if foreign(lesson)
            else book.vectors[lesson.lesson_id]
            for lesson in lessons
        ]
        return np.asarray(rows, dtype=np.float32).reshape(len(rows), dimension)
