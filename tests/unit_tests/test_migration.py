"""``migrate_namespace``: what a namespace holds arrives in another, embedded again by the
target's model."""

from __future__ import annotations

import numpy as np
import pytest

from langchain_episodic import (
    EpisodicMemory,
    HashingEmbeddings,
    StaticEmbeddings,
)
from langchain_episodic.migration import migrate_namespace
from langchain_episodic.model.lesson import (
    Lesson,
    LessonSource,
)
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.embeddings import TableEmbeddings
from tests.helpers.lessons import LOGIN, NOW, lesson, lessons_memory
from tests.unit_tests.factories import make_episode


@pytest.fixture
def memory() -> EpisodicMemory:
    return lessons_memory()


def test_lessons_migrated_from_another_models_namespace_are_recalled_and_merged(
    memory: EpisodicMemory,
) -> None:
    old = lesson()
    memory.lessons.add([old])  # 384-d vectors of the default model
    twin = lesson(("login-2",), title="Strip e-mails before validating them")
    table = {
        LOGIN: [1.0, 0.0, 0.0],
        old.embedding_text: [1.0, 0.0, 0.0],
        twin.embedding_text: [0.99, 0.14, 0.0],
    }
    target = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=TableEmbeddings(table), clock=lambda: NOW
    )
    migrate_namespace(memory, target)
    assert target.lessons.list() == (old,)
    assert target.lessons.recall(LOGIN) == (old,)  # embedded again with the 3-d model
    target.lessons.add([twin])
    (merged,) = target.lessons.consolidate()  # a 384-d and a 3-d lesson: no crash
    assert set(merged.supersedes) == {old.lesson_id, twin.lesson_id}
    assert target.lessons.consolidate() == ()


def test_lessons_migrated_to_another_model_of_the_same_dimension_are_embedded_again() -> None:
    # HashingEmbeddings and the default StaticEmbeddings both give 384 numbers: only the
    # model tag stored with each lesson's vector says the vectors do not compare.
    source = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: 1e9
    )
    source.record(make_episode(episode_id="login-1", description="Implement a login form"))
    (kept,) = [
        Lesson.create(
            title="Strip e-mail addresses before validating them",
            applies_when="a sign-in form checks the e-mail address",
            do="call .strip() first",
            sources=(LessonSource("login-1"),),
            created_at=1e9,
        )
    ]
    source.lessons.add([kept])
    target = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=StaticEmbeddings(), clock=lambda: 1e9
    )
    migrate_namespace(source, target)

    query = "Build a log-in page that verifies the email"
    assert target.lessons.recall(query) == (kept,)
    # Compared with the stored (hashing) vector, the paraphrase would not reach the floor.
    stored = target.journal.lessons.book.vectors[kept.lesson_id]
    static = np.asarray(StaticEmbeddings().embed_query(query), dtype=np.float32)
    assert float(stored @ (static / np.linalg.norm(static))) < target.calibration.floor
