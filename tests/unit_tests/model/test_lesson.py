"""A lesson, the value: validated by field, named by a digest of its content, kept in
the journal, superseded by lineage, merged with its near-duplicates."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from langchain_episodic import (
    EpisodicValueError,
)
from langchain_episodic.model.lesson import (
    LESSON_PREFIX,
    Lesson,
    LessonBook,
    LessonSource,
    decode_lesson,
    encode_lesson,
    is_lesson_entry,
    is_lesson_id,
    lesson_status,
    merge_lessons,
    plan_consolidation,
)
from tests.helpers.lessons import STRIP, lesson


@pytest.mark.parametrize(
    ("fields", "named"),
    [
        ({"title": ""}, "Lesson.title"),
        ({"title": "   "}, "Lesson.title"),
        ({"applies_when": ""}, "Lesson.applies_when"),
        ({"do": ""}, "Lesson.do"),
        ({"do": "x" * 2_001}, "Lesson.do is invalid: 2001 characters"),
        ({"avoid": "x" * 2_001}, "Lesson.avoid is invalid"),
    ],
)
def test_an_invalid_field_is_refused_by_name(fields: dict[str, str], named: str) -> None:
    with pytest.raises(EpisodicValueError, match=named):
        lesson(**fields)


def test_other_invalid_lessons_name_their_field() -> None:
    with pytest.raises(EpisodicValueError, match=r"Lesson\.sources"):
        lesson(sources=())
    with pytest.raises(EpisodicValueError, match=r"LessonSource\.episode_id"):
        LessonSource(" ")
    with pytest.raises(EpisodicValueError, match=r"Lesson\.created_at"):
        lesson(created_at=math.nan)
    with pytest.raises(EpisodicValueError, match=r"Lesson\.helped"):
        Lesson.create(**STRIP, sources=[LessonSource("a")], created_at=0.0, helped=-1.0)
    with pytest.raises(EpisodicValueError, match=r"Lesson\.lesson_id"):
        Lesson("ep-1", "t", "w", "d", "", (LessonSource("a"),), 0.0)


def test_the_id_is_a_digest_of_content_and_sources_and_text_is_stripped() -> None:
    one = lesson(title="  Strip them  ")
    assert one.title == "Strip them"
    assert is_lesson_id(one.lesson_id)
    assert one.lesson_id.startswith(LESSON_PREFIX)
    assert not is_lesson_id("login-1")
    assert lesson(created_at=0.0).lesson_id == lesson(created_at=1.0).lesson_id
    assert lesson(("a", "b")).lesson_id == lesson(("b", "a")).lesson_id
    assert lesson(("a",)).lesson_id != lesson(("b",)).lesson_id
    assert lesson(do="other").lesson_id != lesson().lesson_id
    assert lesson(("a", "a", "b")).source_ids == ("a", "b")
    assert lesson(avoid="").avoid == ""
    assert lesson(avoid=" \n ").avoid == ""  # blank is empty: "what to avoid" is optional
    # The id is a digest of the checked fields: other whitespace, repeats, same lesson.
    assert lesson(("a", "a"), title=f"  {STRIP['title']}\n", avoid=" ") == lesson(("a",), avoid="")
    assert lesson().embedding_text == f"{STRIP['title']}. {STRIP['applies_when']}"


def test_a_lesson_round_trips_through_its_journal_entry() -> None:
    original = Lesson.create(
        title='Ünïcode "quotes" and \\ backslashes 🙂',
        applies_when="multi\nline",
        do="d",
        sources=(LessonSource("e1", agent="coder", run_id="r-1"), LessonSource("e2")),
        created_at=12.5,
        supersedes=("lesson-old",),
        helped=1.5,
        hurt=0.25,
        by="gpt",
    )
    entry_id, run_id, payload = encode_lesson(original, [0.6, 0.8, 0.0])
    assert is_lesson_entry(entry_id)
    assert not is_lesson_entry("injection:r-1:x")
    decoded, vector = decode_lesson(entry_id, run_id, payload)
    assert decoded == original
    np.testing.assert_allclose(vector, [0.6, 0.8, 0.0], rtol=1e-6)


@pytest.mark.parametrize(
    "damage",
    [
        lambda p: "not json",
        lambda p: json.dumps({**json.loads(p), "kind": "episode"}),
        lambda p: json.dumps({k: v for k, v in json.loads(p).items() if k != "title"}),
        lambda p: json.dumps({**json.loads(p), "title": ""}),
        lambda p: json.dumps({**json.loads(p), "vector": ""}),
        lambda p: json.dumps({**json.loads(p), "lesson_id": "lesson-other"}),
    ],
)
def test_a_damaged_entry_is_refused(damage: object) -> None:
    entry_id, run_id, payload = encode_lesson(lesson(), [1.0, 0.0])
    with pytest.raises(EpisodicValueError, match="is damaged"):
        decode_lesson(entry_id, run_id, damage(payload))  # type: ignore[operator]


def test_status_follows_lineage() -> None:
    one = lesson(("a", "b"))
    assert lesson_status(one, set(), set()) == "active"
    assert lesson_status(one, {one.lesson_id}, set()) == "archived"
    assert lesson_status(one, {one.lesson_id}, {"b"}) == "quarantined"
    assert lesson_status(one, set(), {one.lesson_id: object()}) == "quarantined"
    assert lesson_status(one, set(), {"c"}) == "active"


def test_plan_consolidation_links_near_duplicates_transitively() -> None:
    a, b, c, d = (lesson(title=t, created_at=i) for i, t in enumerate("abcd"))
    angle = math.radians(20)  # a-b and b-c are at 20 degrees, a-c at 40
    vectors = np.array(
        [
            [1.0, 0.0, 0.0],
            [math.cos(angle), math.sin(angle), 0.0],
            [math.cos(2 * angle), math.sin(2 * angle), 0.0],
            [0.0, 0.0, 1.0],
        ]
    )
    assert plan_consolidation([a, b, c, d], vectors, threshold=0.9) == [[a, b, c]]
    assert plan_consolidation([a, b, c, d], vectors, threshold=0.99) == []
    assert plan_consolidation([a], vectors[:1]) == []


def test_merge_keeps_every_source_and_all_credit() -> None:
    a = lesson(("e1",), created_at=1.0, title="a")
    b = lesson(("e2", "e3"), created_at=2.0, title="b")
    b = Lesson.create(
        **(STRIP | {"title": "b"}),
        sources=b.sources,
        created_at=2.0,
        helped=1.0,
        hurt=0.5,
    )
    merged = merge_lessons([a, b], {a.lesson_id: (2.0, 1.0)}, created_at=9.0)
    assert merged.title == "b"  # the member with the most sources
    assert merged.source_ids == ("e1", "e2", "e3")
    assert merged.supersedes == (a.lesson_id, b.lesson_id)
    assert (merged.helped, merged.hurt) == (3.0, 1.5)
    assert merged.by == "consolidation"
    assert merged.created_at == 9.0


def test_the_book_keeps_the_first_lesson_under_an_id_with_a_unit_vector() -> None:
    book = LessonBook()
    one = lesson()
    book.add(one, np.array([3.0, 4.0]))
    book.add(one, np.array([1.0, 0.0]))
    np.testing.assert_allclose(book.vectors[one.lesson_id], [0.6, 0.8])
