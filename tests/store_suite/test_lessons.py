"""Lessons on every store (see ``harness`` in conftest.py).

Lessons live in the store's journal: a reopened store gives back the same lessons
with the same status, trust follows lineage (and survives reopening), a refused
batch writes nothing, consolidation converges, and a migration carries lessons,
their archive and their quarantine to another store.
"""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory, EpisodicValueError
from langchain_episodic.migration import migrate_namespace
from langchain_episodic.model.lesson import Lesson, LessonSource, is_lesson_entry
from langchain_episodic.stores import EpisodeStore, InMemoryEpisodeStore
from tests.helpers.episodes import DAY, corpus
from tests.helpers.stores import StoreHarness

NOW = 3 * DAY
NAMESPACE = "lessons"
LOGIN = "Implement a login form with email validation"


def memory_on(harness: StoreHarness, store: EpisodeStore | None = None) -> EpisodicMemory:
    return EpisodicMemory(
        store=store if store is not None else harness.open(),
        namespace=NAMESPACE,
        clock=lambda: NOW,
    )


def lesson(*sources: str, title: str = "Strip e-mail addresses before validating them") -> Lesson:
    return Lesson.create(
        title=title,
        applies_when="Implement a form with email validation",
        do="call .strip() on the address first",
        avoid="validating the raw input",
        sources=[LessonSource(i, agent="coder", run_id=f"run-{i}") for i in sources],
        created_at=NOW - len(title),
    )


def statuses(memory: EpisodicMemory) -> dict[str, str]:
    return {
        one.lesson_id: memory.lessons.status(one.lesson_id) for one in memory.lessons.list(None)
    }


@pytest.fixture
def filled(harness: StoreHarness) -> EpisodicMemory:
    """Six episodes; lessons a (ep-0), b (ep-0, ep-4), c (ep-1), c revised into d."""
    memory = memory_on(harness)
    memory.record_many(corpus(6))
    a, b, c = lesson("ep-0"), lesson("ep-0", "ep-4", title="b"), lesson("ep-1", title="c")
    assert memory.lessons.add([a, b, c]) == 3
    memory.lessons.revise(c.lesson_id, do="call .strip() and .lower() first")
    return memory


def test_lessons_and_their_status_survive_reopening(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    before = statuses(filled)
    assert sorted(before.values()) == ["active", "active", "active", "archived"]
    again = memory_on(harness)
    assert again.lessons.list(None) == filled.lessons.list(None)
    assert statuses(again) == before
    assert again.lessons.recall(LOGIN, k=4) == filled.lessons.recall(LOGIN, k=4)
    assert again.lessons.recall(LOGIN, k=4)
    (revised,) = (one for one in again.lessons.list() if one.title == "c")
    assert revised.do == "call .strip() and .lower() first"
    assert revised.sources[0] == LessonSource("ep-1", agent="coder", run_id="run-ep-1")
    # Another namespace of the same store has none of them.
    assert EpisodicMemory(store=harness.open(), namespace="other").lessons.list(None) == ()


def test_trust_follows_lineage_and_survives_reopening(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    a, b = (one for one in filled.lessons.list() if one.title in {lesson("ep-0").title, "b"})
    filled.quarantine.add("ep-0", "poisoned tool output", by="ops")
    assert set(filled.lessons.list("quarantined")) == {a, b}
    again = memory_on(harness)
    assert set(again.lessons.list("quarantined")) == {a, b}
    assert [one.title for one in again.lessons.list()] == ["c"]
    assert {one.title for one in again.lessons.recall(LOGIN, k=4)} <= {"c"}
    again.quarantine.release("ep-0", "false alarm", by="ops")
    again.quarantine.add(b.lesson_id, "misleading", by="ops")
    third = memory_on(harness)
    assert third.lessons.status(a.lesson_id) == "active"
    assert third.lessons.status(b.lesson_id) == "quarantined"
    assert "ep-0" not in third.quarantine.list()


def test_a_refused_batch_writes_nothing(harness: StoreHarness) -> None:
    memory = memory_on(harness)
    memory.record_many(corpus(2))
    EpisodicMemory(store=memory.store, namespace="other").record_many(corpus(4)[2:])
    for bad in ("ghost", "ep-3"):  # unknown, and stored in another namespace only
        with pytest.raises(EpisodicValueError, match="no lesson was stored"):
            memory.lessons.add([lesson("ep-0"), lesson("ep-1", bad, title="bad")])
    again = memory_on(harness)
    assert again.lessons.list(None) == ()
    assert not any(is_lesson_entry(e.entry_id) for e in again.store.read_journal(NAMESPACE))


def test_consolidation_converges_and_survives_reopening(harness: StoreHarness) -> None:
    memory = memory_on(harness)
    memory.record_many(corpus(4))
    twins = [lesson("ep-0"), lesson("ep-1"), lesson("ep-2")]  # same text, other sources
    apart = lesson("ep-3", title="Write unit tests for every CSV parser edge case")
    memory.lessons.add([*twins, apart])
    (merged,) = memory.lessons.consolidate()
    assert set(merged.source_ids) == {"ep-0", "ep-1", "ep-2"}
    assert set(merged.supersedes) == {one.lesson_id for one in twins}
    assert memory.lessons.consolidate() == ()
    again = memory_on(harness)
    assert set(again.lessons.list()) == {merged, apart}
    assert set(again.lessons.list("archived")) == set(twins)
    assert again.lessons.consolidate() == ()


def test_migration_carries_lessons_their_archive_and_quarantine(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    a, b, d = filled.lessons.list()
    filled.quarantine.add("ep-4", "bad run")  # b, by lineage
    filled.quarantine.add(d.lesson_id, "misleading")  # d, by its own id
    before = statuses(filled)
    assert (before[a.lesson_id], before[b.lesson_id], before[d.lesson_id]) == (
        "active",
        "quarantined",
        "quarantined",
    )
    for source, target in (
        (filled, EpisodicMemory(store=InMemoryEpisodeStore(), namespace="copy", clock=lambda: NOW)),
        (
            EpisodicMemory(store=InMemoryEpisodeStore(), namespace="copy", clock=lambda: NOW),
            memory_on(harness, harness.open()).for_namespace("copy"),
        ),
    ):
        if source is not filled:  # into the harness's store, from an in-memory copy
            migrate_namespace(filled, source)
        migrate_namespace(source, target)
        assert target.lessons.list(None) == filled.lessons.list(None)
        assert statuses(target) == before
        migrate_namespace(source, target)  # again: nothing twice
        assert target.lessons.list(None) == filled.lessons.list(None)
    reopened = EpisodicMemory(store=harness.open(), namespace="copy", clock=lambda: NOW)
    assert statuses(reopened) == before
    assert reopened.lessons.recall(LOGIN, k=3) == (a,)
