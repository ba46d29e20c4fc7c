"""Forgetting on every store (see ``harness`` in conftest.py).

An erasure removes the episodes, their vectors, the lessons derived from them and
what the journal and the logs say of them, leaves tombstones that keep the ids out,
and survives reopening; ``forget_all`` empties one namespace and no other; a
retention policy prunes the least valuable first and never a pinned episode; and a
migration after an erasure carries the tombstones, never the content.
"""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory, EpisodicValueError
from langchain_episodic.errors import EpisodeForgottenError
from langchain_episodic.migration import migrate_namespace
from langchain_episodic.model.erasure import ERASED_TASK
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.retention import Retention
from langchain_episodic.stores import EpisodeStore, ForgetsRecords, InMemoryEpisodeStore
from tests.helpers.episodes import DAY, QUERIES, corpus
from tests.helpers.stores import StoreHarness
from tests.unit_tests.factories import make_episode

NOW = 3 * DAY
SECRET = "zq-7731-secret"


def memory_on(
    harness: StoreHarness,
    namespace: str = "alice",
    store: EpisodeStore | None = None,
    **kwargs: object,
) -> EpisodicMemory:
    return EpisodicMemory(
        store=store if store is not None else harness.open(),
        namespace=namespace,
        clock=lambda: NOW,
        **kwargs,  # type: ignore[arg-type]
    )


def lesson(*sources: str, title: str) -> Lesson:
    return Lesson.create(
        title=title,
        applies_when="a form validates an e-mail address",
        do="call .strip() first",
        sources=[LessonSource(i) for i in sources],
        created_at=NOW,
    )


@pytest.fixture
def filled(harness: StoreHarness) -> EpisodicMemory:
    """Eight episodes; ep-1 and ep-2 shown in credited run r1, ep-3 in open run r2."""
    memory = memory_on(harness)
    memory.record_many(corpus(8))
    memory.runs.note("r1", ["ep-1", "ep-2"], f"{SECRET} login task")
    memory.runs.credit("r1", 0.9)
    memory.runs.note("r2", ["ep-3"], "payment task")
    return memory


def test_every_store_can_forget(harness: StoreHarness) -> None:
    assert isinstance(harness.open(), ForgetsRecords)


def test_forgetting_removes_episodes_and_redacts_the_journal(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    before_e3 = filled.runs.utility("ep-3")
    receipt = filled.forget(["ep-1", "ep-5"], reason="user asked", by="support")
    assert (receipt.episodes, receipt.vectors, receipt.already_forgotten) == (2, 2, 0)
    assert (receipt.injections_redacted, receipt.outcomes_redacted) == (1, 1)
    assert receipt.reason == "user asked"
    assert receipt.by == "support"
    assert receipt.at == NOW
    assert SECRET not in repr(receipt.to_dict())
    for memory in (filled, memory_on(harness)):  # and as a fresh process sees it
        assert len(memory) == 6
        assert memory.get_episodes(["ep-1", "ep-5", "ep-2"]).keys() == {"ep-2"}
        assert [e.episode_id for e in memory.episodes()] == [f"ep-{i}" for i in (0, 2, 3, 4, 6, 7)]
        assert [e.episode_id for e in memory.short_term] == ["ep-2", "ep-3", "ep-4", "ep-6", "ep-7"]
        for query in QUERIES:
            shown = {hit.episode.episode_id for hit in memory.recall(query, top_k=8)}
            assert not shown & {"ep-1", "ep-5"}
        assert "ep-1" not in memory.runs.utilities()
        assert "ep-2" in memory.runs.utilities()
        assert memory.runs.utility("ep-3") == before_e3
        (outcome,) = memory.runs.log()
        assert outcome.episode_ids == ("ep-2",)
        assert outcome.reward == 0.9
        assert memory.runs.pending().keys() == {"r2"}
        payloads = [e.payload for e in memory.journal.entries()]
        assert not any(SECRET in p for p in payloads)
        assert any(ERASED_TASK in p for p in payloads)
        assert sum(p.total_episodes for p in memory.skill_profiles()) == 6
        assert memory.forgetting.receipts()[-1].erasure_id == receipt.erasure_id
        assert memory.forgetting.unfinished() == []


def test_new_episodes_after_an_erasure_are_numbered_and_found(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    filled.forget(["ep-6", "ep-7"], reason="user asked")
    filled.record(make_episode(episode_id="new-1", description="Plan a database migration"))
    for memory in (filled, memory_on(harness)):
        ids = [e.episode_id for e in memory.episodes()]
        assert ids == [f"ep-{i}" for i in range(6)] + ["new-1"]
        assert memory.short_term[-1].episode_id == "new-1"
        assert len(memory) == 7


def test_tombstones_keep_ids_out_and_unknown_ids_are_refused(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    gone = filled.get_episodes("ep-1")["ep-1"]
    filled.forget("ep-1", reason="user asked")
    again = memory_on(harness)
    with pytest.raises(EpisodeForgottenError, match="ep-1"):
        again.record(gone)
    assert len(again) == 7
    repeat = again.forget(["ep-1"], reason="asked twice")
    assert (repeat.already_forgotten, repeat.episodes) == (1, 0)
    with pytest.raises(EpisodicValueError, match=r"\['never-stored'\].*nothing was removed"):
        again.forget(["ep-2", "never-stored"], reason="x")
    assert len(again) == 7
    assert "ep-2" in again.get_episodes("ep-2")
    with pytest.raises(EpisodicValueError, match="reason"):
        again.forget(["ep-2"], reason="  ")
    assert len(again) == 7


def test_derived_lessons_and_log_events_go_with_their_episode(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    derived, kept = lesson("ep-1", "ep-4", title="derived"), lesson("ep-4", title="kept")
    filled.lessons.add([derived, kept])
    revision = filled.lessons.revise(derived.lesson_id, do="call .strip() and .lower()")
    filled.quarantine.add(["ep-1", "ep-4"], reason=f"bad tool run {SECRET}")
    filled.quarantine.pin(["ep-1"], reason="keep")
    receipt = filled.forget(["ep-1"], reason="user asked")
    assert set(receipt.lessons_removed) == {derived.lesson_id, revision.lesson_id}
    assert (receipt.quarantine_entries, receipt.pin_entries) == (1, 1)
    for memory in (filled, memory_on(harness)):
        assert [one.lesson_id for one in memory.lessons.list(None)] == [kept.lesson_id]
        assert memory.quarantine.list().keys() == {"ep-4"}
        assert memory.quarantine.pinned() == {}
        assert all(
            SECRET not in event.reason or event.episode_id == "ep-4"
            for event in memory.quarantine.log()
        )
    # A lesson id may be forgotten by itself.
    assert filled.forget(kept.lesson_id, reason="wrong").lessons_removed == (kept.lesson_id,)
    assert filled.lessons.list(None) == ()


def test_forget_all_empties_one_namespace_and_no_other(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    bob = memory_on(harness, namespace="bob", store=filled.store)
    bob.record_many(corpus(5))
    bob.lessons.add([lesson("ep-0", title="bob's lesson")])
    bob.runs.note("b1", ["ep-0"], "bob's task")
    bob.runs.credit("b1", 0.7)
    bob_before = (
        [h.episode.episode_id for h in bob.recall(QUERIES[0], top_k=5)],
        bob.lessons.list(None),
        bob.runs.utilities(),
    )
    filled.lessons.add([lesson("ep-1", title="alice's lesson")])
    receipt = filled.forgetting.forget_all(reason="account deleted", by="gdpr-bot")
    assert receipt.episodes == 8
    assert len(receipt.lessons_removed) == 1
    for store in (filled.store, harness.open()):
        alice, bob_again = memory_on(harness, store=store), memory_on(harness, "bob", store)
        assert len(alice) == 0
        assert alice.lessons.list(None) == ()
        assert alice.runs.utilities() == {}
        assert alice.runs.pending() == {}
        assert alice.runs.log() == ()
        assert not alice.recall(QUERIES[0])
        assert alice.skill_profiles() == ()
        assert [e for e in alice.journal.entries() if "task" in e.payload] == []
        bob_now = (
            [h.episode.episode_id for h in bob_again.recall(QUERIES[0], top_k=5)],
            bob_again.lessons.list(None),
            bob_again.runs.utilities(),
        )
        assert bob_now == bob_before
    with pytest.raises(EpisodeForgottenError):
        filled.record(corpus(1)[0])
    # The memory stays usable: a new episode under a new id is stored.
    filled.record(make_episode(episode_id="fresh", description="Write a changelog entry"))
    assert len(filled) == 1


def test_retention_prunes_the_least_valuable_and_never_a_pinned_episode(
    harness: StoreHarness,
) -> None:
    memory = memory_on(harness, retention=Retention(max_episodes=5))
    memory.record_many(corpus(8))
    memory.runs.note("r1", ["ep-0"], "login task")
    memory.runs.credit("r1", 1.0)
    memory.quarantine.pin(["ep-1"], reason="reference solution")
    plan, preview = memory.forgetting.prune(dry_run=True)
    assert preview is not None
    assert preview.dry_run
    assert len(memory) == 8
    assert len(plan.episode_ids) == 3
    assert not {"ep-0", "ep-1"} & set(plan.episode_ids)
    assert plan.episode_ids == ("ep-2", "ep-3", "ep-4")  # never helpful, then oldest
    plan, receipt = memory.forgetting.prune()
    assert receipt is not None
    assert receipt.episodes == 3
    assert "retention" in receipt.reason
    assert len(memory_on(harness)) == 5
    old = memory.forgetting.prune(Retention(max_age=NOW - 5 * 3_600 + 1))[0]
    assert "ep-1" in old.protected
    assert "ep-1" in memory.get_episodes("ep-1")


def test_retention_on_write_keeps_a_namespace_near_its_cap(harness: StoreHarness) -> None:
    memory = memory_on(harness, retention=Retention(max_episodes=10, on_write=True))
    for start in range(0, 40, 4):
        memory.record_many(corpus(40)[start : start + 4])
        assert len(memory) <= 11
    assert len(memory_on(harness)) <= 11


def test_a_migration_after_an_erasure_carries_tombstones_not_content(
    harness: StoreHarness, filled: EpisodicMemory
) -> None:
    kept_copy = EpisodicMemory(store=InMemoryEpisodeStore(), namespace="alice", clock=lambda: NOW)
    migrate_namespace(filled, kept_copy)  # an old copy, made before the erasure
    filled.forget(["ep-1"], reason="user asked")
    target = EpisodicMemory(store=InMemoryEpisodeStore(), namespace="alice", clock=lambda: NOW)
    report = migrate_namespace(filled, target)
    assert report.target_count == 7
    assert "ep-1" not in target.get_episodes("ep-1")
    assert not any(SECRET in e.payload for e in target.journal.entries())
    with pytest.raises(EpisodeForgottenError):
        target.record(kept_copy.get_episodes("ep-1")["ep-1"])
    # Into the old copy: the tombstone travels and erases what the copy still held.
    migrate_namespace(filled, kept_copy)
    assert "ep-1" not in kept_copy.get_episodes("ep-1")
    assert not any(SECRET in e.payload for e in kept_copy.journal.entries())
