"""The eraser under faults: an erasure cut short is reported and finished by forgetting
again, and an erasure between a writer's check and its write wins."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    EpisodicValueError,
    StoreConfigurationError,
)
from langchain_episodic.errors import EpisodeForgottenError
from langchain_episodic.model.credit import CreditEvent, Injection, encode_credit, encode_injection
from langchain_episodic.model.episode import Episode
from langchain_episodic.model.erasure import ERASURE_RUN, is_erasure_entry
from langchain_episodic.scoring.retention import Retention
from langchain_episodic.service.journal import replayed_checkpoint
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import JournalEntry
from langchain_episodic.stores.chroma import store as chroma
from tests.helpers.credit import log_state, replayed_log
from tests.helpers.episodes import corpus
from tests.helpers.forgetting import NOW, memory_with
from tests.unit_tests.factories import logins_memory, make_episode


def test_an_erasure_cut_short_is_reported_and_finished_by_forgetting_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    memory = memory_with()
    memory.runs.note("r1", ["ep-1", "ep-2"], "secret task text")
    memory.runs.credit("r1", 0.9)
    store = memory.store
    assert isinstance(store, InMemoryEpisodeStore)

    def killed(namespace: str, entry_ids: object) -> int:
        raise KeyboardInterrupt  # the process stops here

    monkeypatch.setattr(store, "delete_journal", killed)
    with pytest.raises(KeyboardInterrupt):
        memory.forget(["ep-1"], reason="user asked")
    monkeypatch.undo()
    fresh = EpisodicMemory(store=store, clock=lambda: NOW)
    (unfinished,) = fresh.forgetting.unfinished()
    assert "ep-1" in fresh.forgetting.forgotten(["ep-1"])  # the tombstone was written first
    assert any("secret task text" in e.payload for e in fresh.journal.entries())
    receipt = fresh.forget(["ep-1"], reason="user asked")
    assert receipt.already_forgotten == 1
    assert fresh.forgetting.unfinished() == []
    assert not any("secret task text" in e.payload for e in fresh.journal.entries())
    (outcome,) = fresh.runs.log()
    assert outcome.episode_ids == ("ep-2",)
    assert unfinished in {r.erasure_id for r in fresh.forgetting.receipts()}


def test_an_erasure_between_the_writers_check_and_its_write_wins() -> None:
    memory = memory_with(2)
    other = EpisodicMemory(store=memory.store, clock=lambda: NOW)
    victim = make_episode(episode_id="late", description="Rotate the API keys")
    other.record(victim)
    other.forget("late", reason="user asked")
    # This memory has not seen the tombstone's erasure: its guard reads the journal.
    with pytest.raises(EpisodeForgottenError):
        memory.record(victim)
    assert "late" not in memory.get_episodes("late")


class JournalReadsCounted(InMemoryEpisodeStore):
    """Counts reads of the whole journal (from its first entry) and of the namespace."""

    whole_reads = 0
    namespace_reads = 0

    def read_journal_from(self, namespace: str, start: int) -> list[JournalEntry]:
        if start == 0:
            self.whole_reads += 1
        return super().read_journal_from(namespace, start)

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        self.namespace_reads += 1
        return super().iter_episodes(namespace, page_size, start)


def test_an_episode_no_run_was_shown_is_erased_without_reading_the_journal() -> None:
    store = JournalReadsCounted()
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.record_many(corpus(6))
    memory.runs.note("r1", ["ep-1", "ep-2"], "a task")
    memory.runs.credit("r1", 0.9)
    memory.forget(["ep-5"], reason="user asked")  # the journal is read up to here
    before = [e for e in memory.journal.entries() if not is_erasure_entry(e.entry_id)]
    reads = store.whole_reads
    receipt = memory.forget(["ep-4"], reason="user asked")
    assert store.whole_reads == reads
    assert receipt.episodes == 1
    assert receipt.journal_entries_removed == receipt.injections_redacted == 0
    assert "ep-4" in memory.forgetting.forgotten(["ep-4"])
    assert [e for e in memory.journal.entries() if not is_erasure_entry(e.entry_id)] == before
    assert replayed_checkpoint(store, memory.namespace) == []
    # What the erasure left is what a memory opened afresh folds from the journal.
    fresh = EpisodicMemory(store=store, clock=lambda: NOW)
    assert fresh.runs.utilities() == memory.runs.utilities()
    # An episode a run was shown is found in the journal and redacted there.
    receipt = memory.forget(["ep-1"], reason="user asked")
    assert receipt.injections_redacted == receipt.outcomes_redacted == 1
    (outcome,) = memory.runs.log()
    assert outcome.episode_ids == ("ep-2",)


def test_on_write_retention_plans_what_a_full_read_of_the_store_plans() -> None:
    hour = 3600.0
    policy = Retention(max_age=90 * hour, max_episodes=20, on_write=True)
    store = JournalReadsCounted()
    memory = EpisodicMemory(store=store, clock=lambda: NOW, retention=policy)
    other = EpisodicMemory(store=store, clock=lambda: NOW)  # another writer, no policy
    episodes = [
        replace(e, timestamp=NOW - (i * 37 % 120) * hour)  # out of time order, some expired
        for i, e in enumerate(corpus(130))
    ]
    for i, episode in enumerate(episodes[:120]):
        memory.record(episode)
        if i % 9 == 8:  # a run shown two recent episodes: the one it helped, and another
            shown = memory.get_episodes([episode.episode_id, episodes[i - 1].episode_id])
            memory.runs.note(f"r{i}", list(shown), "a task")
            memory.runs.credit(f"r{i}", 1.0 if i % 2 else 0.1)
        if i == 40:
            other.record_many(episodes[120:125])
            other.forget([episodes[39].episode_id], reason="user asked")
        if i == 60:
            oldest = sorted(memory.episodes(), key=lambda e: e.timestamp)
            memory.quarantine.pin(oldest[0].episode_id, reason="keep")
            memory.quarantine.add(oldest[1].episode_id, reason="suspect")
        if i % 10 == 9:
            planned, _ = memory.forgetting.prune(dry_run=True)
            fresh = EpisodicMemory(store=store, clock=lambda: NOW, retention=policy)
            assert planned == fresh.forgetting.prune(dry_run=True)[0]  # read from the store
    assert len(memory) <= 22
    assert set(memory.get_episodes([e.episode_id for e in episodes])) == {
        e.episode_id for e in memory.episodes()
    }
    reads = store.namespace_reads
    for i, episode in enumerate(corpus(200)[130:]):  # recent ones: the cap prunes, in turn
        memory.record(replace(episode, timestamp=NOW - i))
    assert store.namespace_reads == reads  # no prune read the namespace again
    assert len(memory) <= 22


def test_on_write_retention_on_a_new_namespace_never_reads_it() -> None:
    store = JournalReadsCounted()
    policy = Retention(max_episodes=10, on_write=True)
    memory = EpisodicMemory(store=store, clock=lambda: NOW, retention=policy)
    reads = store.namespace_reads
    for episode in corpus(40):
        memory.record(episode)
    assert store.namespace_reads == reads
    assert 10 <= len(memory) <= 11
    planned, _ = memory.forgetting.prune(dry_run=True)
    fresh = EpisodicMemory(store=store, clock=lambda: NOW, retention=policy)
    assert planned == fresh.forgetting.prune(dry_run=True)[0]
    kept = sorted(e.episode_id for e in memory.episodes())
    assert kept == sorted(f"ep-{i}" for i in range(40 - len(kept), 40))  # the newest stay


def _runs_showing_the_victim(memory: EpisodicMemory) -> None:
    """Closed and open runs, some shown ``ep-2`` (the victim) beside other episodes."""
    memory.runs.note("r1", ["ep-1", "ep-2"], "a task")
    memory.runs.credit("r1", 0.9)
    memory.runs.note("r2", ["ep-2"], "a task")
    memory.runs.credit("r2", 0.1)
    memory.runs.note("r3", ["ep-3"], "another task")
    memory.runs.credit("r3", 0.5)
    memory.runs.note("r4", ["ep-2"], "a task")
    memory.runs.note("r4", ["ep-2", "ep-4"], "a task")  # one run, two prompts
    memory.runs.note("r5", ["ep-2"], "a task")
    memory.runs.note("r6", [], "a task", holdout=True)
    memory.runs.credit("r6", 0.4)


@pytest.mark.parametrize("backend", ["in-memory", "chroma"])
def test_an_erasure_of_a_shown_episode_leaves_what_a_replay_of_the_journal_builds(
    backend: str, tmp_path: Path
) -> None:
    store = JournalReadsCounted() if backend == "in-memory" else ChromaEpisodeStore(path=tmp_path)
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.record_many(corpus(6))
    _runs_showing_the_victim(memory)
    log = memory.journal.credit
    assert "ep-2" in log.book.rows
    version = log.book.version
    reads = store.whole_reads if isinstance(store, JournalReadsCounted) else 0
    receipt = memory.forget(["ep-2"], reason="user asked")
    assert (receipt.injections_redacted, receipt.outcomes_redacted) == (5, 2)
    if isinstance(store, JournalReadsCounted):
        # Read by the sync before the erasure (this memory wrote every entry itself, so
        # it reads from the start) and to plan; not a third time to fold the result in.
        assert store.whole_reads == reads + 2
    assert "ep-2" not in log.book.rows
    assert log.book.changed_since(version) == {"ep-2"}  # what derives from it is stale
    assert log_state(log) == log_state(replayed_log(memory))
    assert [i.episode_ids for i in log.injections["r4"]] == [(), ("ep-4",)]
    assert replayed_checkpoint(store, memory.namespace) == []
    # The memory goes on as one opened afresh would.
    memory.runs.credit("r4", 1.0)
    fresh = EpisodicMemory(store=store, clock=lambda: NOW)
    assert fresh.runs.utilities() == memory.runs.utilities()
    assert log_state(fresh.journal.credit) == log_state(replayed_log(memory))


class OtherWriterBetween(InMemoryEpisodeStore):
    """Another writer's run naming the victim lands just before the erasure reads."""

    armed = False

    def read_journal_from(self, namespace: str, start: int) -> list[JournalEntry]:
        if self.armed and start == 0:
            self.armed = False
            shown = Injection("theirs", ("ep-2", "ep-5"), "their task", "debugging", NOW)
            event = CreditEvent("theirs", 0.8, ("ep-2", "ep-5"), "debugging", NOW)
            entries = [JournalEntry(*encode_injection(shown)), JournalEntry(*encode_credit(event))]
            self.append_journal(namespace, entries)
        return super().read_journal_from(namespace, start)


def test_an_erasure_that_read_another_writers_entries_folds_the_journal_afresh() -> None:
    store = OtherWriterBetween()
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.record_many(corpus(6))
    _runs_showing_the_victim(memory)
    store.armed = True
    receipt = memory.forget(["ep-2"], reason="user asked")
    assert receipt.outcomes_redacted == 3  # theirs too
    log = memory.journal.credit
    assert log.book.rows["ep-5"].credited_runs == 1  # their outcome, read and folded in
    assert log_state(log) == log_state(replayed_log(memory))


def test_an_id_with_quotes_and_accents_is_found_in_the_journal_however_it_was_escaped() -> None:
    odd = 'épisode "1" \\ é'
    memory = memory_with(3)
    memory.record(make_episode(episode_id=odd, description="An odd one"))
    memory.runs.note("r1", [odd, "ep-1"], "a task")
    memory.runs.credit("r1", 0.9)
    # The same run as an older writer escaped it: every non-ASCII character as \\uXXXX.
    shown = Injection("r2", (odd,), "another task", "debugging", NOW)
    entry_id, run_id, payload = encode_injection(shown)
    escaped = json.dumps(json.loads(payload))
    assert odd not in escaped
    memory.store.append_journal(memory.namespace, [JournalEntry(entry_id, run_id, escaped)])
    memory.runs.reload()
    receipt = memory.forget([odd], reason="user asked")
    assert (receipt.injections_redacted, receipt.outcomes_redacted) == (2, 1)
    left = [entry.payload for entry in memory.journal.entries() if "kind" in entry.payload]
    assert not any(odd in p or json.dumps(odd) in p for p in left)


@pytest.mark.parametrize("shown", ["before", "after"])
def test_a_checkpoint_that_sums_up_none_of_the_removed_entries_is_kept(
    shown: str, tmp_path: Path
) -> None:
    store = ChromaEpisodeStore(path=tmp_path)
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.record_many(corpus(6))
    memory.runs.note("r1", ["ep-1", "ep-2"], "a task")
    memory.runs.credit("r1", 0.9)
    memory.journal.checkpoint()
    memory.runs.note("r2", ["ep-3", "ep-4"], "a task")
    memory.runs.credit("r2", 0.4)
    saved = store.read_checkpoint(memory.namespace)
    victim = "ep-1" if shown == "before" else "ep-3"
    memory.forget([victim], reason="user asked")
    after = store.read_checkpoint(memory.namespace)
    # Shown after the checkpoint: what it sums up is untouched, and it stays as it was.
    assert (after == saved) is (shown == "after")
    assert after
    assert victim not in (after or "")
    assert replayed_checkpoint(store, memory.namespace) == []
    fresh = EpisodicMemory(store=store, clock=lambda: NOW)
    assert fresh.runs.utilities() == memory.runs.utilities()
    assert victim not in fresh.runs.utilities()
    assert log_state(fresh.journal.credit) == log_state(replayed_log(memory))


class ErasureReadsCounted(InMemoryEpisodeStore):
    """Counts reads of the erasure records (every record and receipt)."""

    erasure_reads = 0

    def read_journal(self, namespace: str, run_id: str | None = None) -> list[JournalEntry]:
        if run_id == ERASURE_RUN:
            self.erasure_reads += 1
        return super().read_journal(namespace, run_id)


def test_the_erasure_records_are_read_only_while_one_may_be_unfinished(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    store = ErasureReadsCounted()
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.record_many(corpus(8))
    memory.runs.note("r1", ["ep-1", "ep-2"], "a task")
    memory.runs.credit("r1", 0.9)
    memory.forget(["ep-7"], reason="user asked")  # the first: looks once
    reads = store.erasure_reads
    memory.forget(["ep-6"], reason="user asked")
    memory.forget(["ep-1"], reason="user asked")  # shown to a run: the journal path
    assert store.erasure_reads == reads
    # Another writer's erasure, cut short after its record: found and finished here.
    other = EpisodicMemory(store=store, clock=lambda: NOW)

    def killed(namespace: str, episode_ids: object) -> int:
        raise KeyboardInterrupt

    monkeypatch.setattr(store, "delete", killed)
    with pytest.raises(KeyboardInterrupt):
        other.forget(["ep-2"], reason="user asked")
    monkeypatch.undo()
    reads = store.erasure_reads  # (the other memory's first erasure looked too)
    memory.forget(["ep-5"], reason="user asked")
    assert store.erasure_reads == reads + 1
    assert memory.forgetting.unfinished() == []
    assert "ep-2" in memory.forgetting.forgotten(["ep-2"])
    # One cut short here is finished by this memory's next erasure too.
    monkeypatch.setattr(store, "delete", killed)
    with pytest.raises(KeyboardInterrupt):
        memory.forget(["ep-4"], reason="user asked")
    monkeypatch.undo()
    assert memory.forgetting.unfinished() != []
    memory.forget(["ep-3"], reason="user asked")
    assert memory.forgetting.unfinished() == []


class ErasedWhileAdding(InMemoryEpisodeStore):
    """Runs ``during_add`` (once) after the writer's checks, before its records land."""

    during_add: object = None

    def add(
        self, namespace: str, episodes: Sequence[Episode], embeddings: Any, first_seq: int
    ) -> None:
        hook, self.during_add = self.during_add, None
        if callable(hook):
            hook()
        super().add(namespace, episodes, embeddings, first_seq)


def test_an_erasure_landing_between_the_writers_check_and_its_write_is_undone_after() -> None:
    store = ErasedWhileAdding()
    memory = EpisodicMemory(store=store, clock=lambda: NOW, short_term_limit=3)
    memory.record_many(corpus(4))
    other = EpisodicMemory(store=store, clock=lambda: NOW)
    victim = make_episode(episode_id="late", description="Rotate the API keys")
    kept = make_episode(episode_id="kept", description="Write the changelog")

    def another_process_erases() -> None:
        other.record(victim)
        other.forget("late", reason="user asked")

    store.during_add = another_process_erases
    with pytest.raises(EpisodeForgottenError, match="late"):
        memory.record_many([victim, kept])
    assert "late" not in memory.get_episodes("late")
    assert "kept" in memory.get_episodes("kept")
    # Counted and windowed as the store holds them: the erased one is in neither.
    assert len(memory) == store.count(memory.namespace) == 5
    window = [episode.episode_id for episode in memory.short_term]
    assert "late" not in window
    assert window == ["ep-2", "ep-3", "kept"]
    reopened = EpisodicMemory(store=store, clock=lambda: NOW)
    assert [p.total_episodes for p in reopened.skill_profiles()] == [
        p.total_episodes for p in memory.skill_profiles()
    ]


# ------------------------------------------------------------------ memory.forgetting
# ``memory.forget`` and ``memory.forgetting``: bad input, the forgotten error, retention.
# Erasure faults are in service/test_erasure.py, the receipt in model/test_erasure.py,
# the plan in scoring/test_retention.py, the commands in cli/test_forget_commands.py.
#
# The behaviour on every store kind is in tests/store_suite/test_forgetting.py; on disk
# and under SIGKILL in tests/integration_tests/test_erasure_on_disk.py.


@pytest.fixture
def logins() -> EpisodicMemory:
    """Two login episodes, the clock standing still."""
    return logins_memory()


# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("reason", ["", "   ", None, 5])
def test_an_erasure_needs_a_reason(reason: object) -> None:
    logins = memory_with()
    with pytest.raises(EpisodicValueError, match="reason="):
        logins.forget(["ep-1"], reason=reason)  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="reason="):
        logins.forgetting.forget_all(reason=reason)  # type: ignore[arg-type]
    assert len(logins) == 6


@pytest.mark.parametrize("ids", [[], [""], ["ep-1", 3]])
def test_bad_ids_are_refused_before_anything_is_removed(ids: list[object]) -> None:
    logins = memory_with()
    with pytest.raises(EpisodicValueError, match="episode_ids"):
        logins.forget(ids, reason="x")  # type: ignore[arg-type]
    assert len(logins) == 6


def test_a_store_that_cannot_delete_gets_a_clear_error() -> None:
    class ReadOnlyStore(InMemoryEpisodeStore):
        delete = None  # type: ignore[assignment]

    store = ReadOnlyStore()
    logins = EpisodicMemory(store=store, clock=lambda: NOW)
    logins.record_many(corpus(2))
    with pytest.raises(StoreConfigurationError, match=r"cannot delete.*nothing was removed"):
        logins.forget(["ep-1"], reason="x")
    assert len(logins) == 2


def test_a_retention_policy_that_would_keep_nothing_is_refused() -> None:
    with pytest.raises(EpisodicValueError, match="max_episodes"):
        Retention(max_episodes=0)
    with pytest.raises(EpisodicValueError, match="forget_all"):
        Retention(max_age=0)
    with pytest.raises(EpisodicValueError, match="give max_age"):
        Retention()
    with pytest.raises(TypeError, match="retention="):
        EpisodicMemory(retention={"max_episodes": 3})  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="no retention policy"):
        memory_with().forgetting.prune()


def test_the_forgotten_error_names_the_id_and_the_date() -> None:
    logins = memory_with()
    gone = logins.get_episodes("ep-2")["ep-2"]
    receipt = logins.forget("ep-2", reason="user asked")
    with pytest.raises(EpisodeForgottenError) as caught:
        logins.record_many([make_episode(episode_id="fresh"), gone])
    message = str(caught.value)
    assert "'ep-2'" in message
    assert receipt.erasure_id in message
    assert "(1970-01-12 13:46:40 UTC)" in message
    assert "fresh" not in logins.get_episodes("fresh")  # nothing of the batch was written


# ------------------------------------------------------------------ retention


def test_a_capped_memory_keeps_recalling_what_it_keeps() -> None:
    logins = memory_with(0, retention=Retention(max_episodes=20, on_write=True))
    for start in range(0, 200, 10):
        logins.record_many(corpus(200)[start : start + 10])
    assert 20 <= len(logins) <= 22
    kept = {e.episode_id for e in logins.episodes()}
    for episode in logins.episodes():
        hits = logins.recall(episode.task, top_k=len(kept))
        assert {h.episode.episode_id for h in hits} <= kept
    assert len(logins.forgetting.receipts()) >= 8


def test_forget_all_on_a_namespace_that_holds_nothing_is_refused() -> None:
    logins = memory_with()
    with pytest.raises(EpisodicValueError, match="holds nothing to erase"):
        logins.for_namespace("typo").forgetting.forget_all(reason="x")
    assert len(logins) == 6
    logins.forgetting.forget_all(reason="user left")
    again = logins.forgetting.forget_all(reason="asked twice")  # tombstones remain: a no-op
    assert again.episodes == 0


def test_forget_all_keeps_no_run_id_in_its_records() -> None:
    logins = memory_with()
    logins.runs.note("run-of-alice-smith", ["ep-1"], "a task")
    logins.runs.credit("run-of-alice-smith", 0.8, by="alice-smith-reviewer")
    logins.forgetting.forget_all(reason="account closed")
    stored = logins.store.read_journal(logins.namespace)
    assert stored  # the tombstones, the erasure record and the receipt
    assert not any("alice-smith" in entry.entry_id + entry.payload for entry in stored)


def test_a_store_that_purges_at_once_gives_receipts_with_nothing_pending() -> None:
    logins = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW)
    logins.record(make_episode(episode_id="a"))
    receipt = logins.forget(["a"], reason="user asked")
    assert not receipt.scrub_pending
    assert "scrub pending" not in receipt.summary()
    assert logins.forgetting.compact() == receipt.storage
    assert asyncio.run(logins.forgetting.acompact()) == receipt.storage


def test_an_embedded_folder_scrubs_at_once_when_enough_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chroma, "SCRUB_AFTER", 3)
    store = ChromaEpisodeStore(path=tmp_path / "memory")
    logins = EpisodicMemory(store=store, clock=lambda: NOW)
    logins.record_many([make_episode(episode_id=f"e-{i}") for i in range(4)])
    first = logins.forget(["e-0"], reason="user asked")
    assert first.scrub_pending
    assert "scrub pending" in first.summary()
    assert store.purge_status()[0]
    second = logins.forget(["e-1", "e-2", "e-3"], reason="user asked")  # 4 deleted: due
    assert not second.scrub_pending
    assert "vacuumed" in second.storage
    assert store.purge_status() == (False, second.storage)
    assert [r.scrub_pending for r in logins.forgetting.receipts()] == [False, False]
    store.close()
