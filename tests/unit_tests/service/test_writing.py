"""``EpisodeWriter``: the write path stores what is new and says how much that was."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from langchain_episodic import (
    Episode,
    EpisodeConflictError,
    EpisodicMemory,
    EpisodicValueError,
    TaskCategory,
    TaskDescription,
    episode_from_tests,
    migrate_namespace,
)
from langchain_episodic.stores import ChromaEpisodeStore, InMemoryEpisodeStore
from tests.helpers.services import services
from tests.unit_tests.factories import make_episode


def test_the_writer_counts_only_new_episodes() -> None:
    store = InMemoryEpisodeStore()
    writer = services(store).writer
    first = [make_episode(episode_id="a"), make_episode(episode_id="b", timestamp=1.0)]
    assert writer.write(first, in_time_order=True) == 2
    assert writer.write([make_episode(episode_id="a")], in_time_order=True) == 0
    assert store.count("default") == 2


def test_written_episodes_reach_the_short_term_window_and_the_summary() -> None:
    opened = services()
    episodes = [make_episode(episode_id=f"e{i}", timestamp=float(i)) for i in range(3)]
    opened.writer.write(episodes, in_time_order=True)
    assert list(opened.window)[-1].episode_id == "e2"
    assert sum(tally.total for tally in opened.summary.tallies.values()) == 3


def test_a_non_episode_is_a_type_error() -> None:
    store = InMemoryEpisodeStore()
    with pytest.raises(TypeError):
        services(store).writer.write(["not an episode"], in_time_order=True)  # type: ignore[list-item]
    assert store.count("default") == 0


class HeldAdd(InMemoryEpisodeStore):
    """An ``add`` that waits at ``gate`` (when set) before writing: a slow round trip."""

    gate: threading.Event | None = None
    entered = threading.Event()

    def add(
        self, namespace: str, episodes: Sequence[Episode], embeddings: Any, first_seq: int
    ) -> None:
        if self.gate is not None:
            self.entered.set()
            assert self.gate.wait(10.0), "the gate never opened"
        super().add(namespace, episodes, embeddings, first_seq)


def test_runs_are_noted_and_credited_while_a_record_waits_on_the_store() -> None:
    store = HeldAdd()
    store.entered = threading.Event()
    memory = EpisodicMemory(store=store, clock=lambda: 1_000.0)
    memory.record(make_episode(episode_id="seed", description="Fix the login bug"))
    store.gate = threading.Event()
    recording = threading.Thread(
        target=memory.record, args=(make_episode(episode_id="slow", description="Parse CSV"),)
    )
    recording.start()
    assert store.entered.wait(10.0)
    # The record is inside the store's round trip; a run is noted and credited meanwhile
    # (a memory lock held across that round trip would keep both waiting).
    other = threading.Thread(
        target=lambda: (
            memory.runs.note("r1", ["seed"], "Fix the login bug"),
            memory.runs.credit("r1", 1.0),
        )
    )
    other.start()
    other.join(10.0)
    done_while_held = not other.is_alive()
    store.gate.set()
    recording.join(10.0)
    other.join(10.0)
    assert done_while_held
    assert not recording.is_alive()
    assert len(memory) == 2
    assert memory.runs.utility("seed").credited_runs == 1
    assert [e.episode_id for e in memory.short_term] == ["seed", "slow"]


def _held_first_record(store: HeldAdd) -> tuple[EpisodicMemory, threading.Thread, threading.Thread]:
    """A record held inside the store's add, and a second record started after it."""
    store.entered = threading.Event()
    memory = EpisodicMemory(store=store, clock=lambda: 1_000.0)
    store.gate = threading.Event()
    first = threading.Thread(target=memory.record, args=(make_episode(episode_id="a"),))
    first.start()
    assert store.entered.wait(10.0)
    store.entered.clear()
    second = threading.Thread(target=memory.record, args=(make_episode(episode_id="b"),))
    second.start()
    return memory, first, second


def _finish(store: HeldAdd, *threads: threading.Thread) -> None:
    assert store.gate is not None
    store.gate.set()
    for thread in threads:
        thread.join(10.0)
        assert not thread.is_alive()


def test_records_reach_a_store_that_takes_concurrent_adds_at_once() -> None:
    store = HeldAdd()
    assert store.concurrent_adds
    memory, first, second = _held_first_record(store)
    # The second batch is let in while the first waits on its round trip.
    reached = store.entered.wait(10.0)
    _finish(store, first, second)
    assert reached
    assert len(memory) == store.count(memory.namespace) == 2
    assert {e.episode_id for e in store.iter_episodes(memory.namespace)} == {"a", "b"}
    assert sorted(e.episode_id for e in memory.short_term) == ["a", "b"]
    reopened = EpisodicMemory(store=store, clock=lambda: 1_000.0)
    assert len(reopened) == 2


class OneAtATime(HeldAdd):
    """A store that does not say it takes batches at once."""

    concurrent_adds = False


def test_a_store_without_concurrent_adds_gets_one_batch_at_a_time() -> None:
    store = OneAtATime()
    memory, first, second = _held_first_record(store)
    # The second is not let in while the first is inside the store's add.
    let_in = store.entered.wait(0.3)
    _finish(store, first, second)
    assert not let_in
    numbers = {e.episode_id: e for e in store.iter_episodes(memory.namespace)}
    assert list(numbers) == ["a", "b"]  # numbered in the order written
    assert len(memory) == 2


class HeldCheck(InMemoryEpisodeStore):
    """With ``hold``: holds the journal read by id that follows the next ``add`` (the
    writer's erasure re-check) until ``gate`` opens."""

    def __init__(self) -> None:
        super().__init__()
        self.hold = self.armed = False
        self.entered, self.gate = threading.Event(), threading.Event()

    def add(
        self, namespace: str, episodes: Sequence[Episode], embeddings: Any, first_seq: int
    ) -> None:
        super().add(namespace, episodes, embeddings, first_seq)
        self.armed, self.hold = self.hold, False

    def read_journal_ids(self, namespace: str, entry_ids: Sequence[str]) -> Any:
        if self.armed:
            self.armed = False
            self.entered.set()
            assert self.gate.wait(10.0), "the gate never opened"
        return super().read_journal_ids(namespace, entry_ids)


def test_an_erasure_here_waits_for_a_write_to_be_checked_and_counted() -> None:
    store = HeldCheck()
    memory = EpisodicMemory(store=store, clock=lambda: 1_000.0)
    memory.record(make_episode(episode_id="seed", description="Fix the login bug"))
    store.hold = True
    victim = make_episode(episode_id="victim", description="Rotate the API keys")
    recording = threading.Thread(target=memory.record, args=(victim,))
    recording.start()
    assert store.entered.wait(10.0)  # written, counted, its erasure re-check under way
    forgetting = threading.Thread(target=memory.forget, args=(["victim"],), kwargs={"reason": "x"})
    forgetting.start()
    forgetting.join(0.3)
    waited = forgetting.is_alive()
    store.gate.set()
    recording.join(10.0)
    forgetting.join(10.0)
    assert waited  # an erasure never meets a write half checked
    assert not recording.is_alive()
    assert not forgetting.is_alive()
    # Counted once and uncounted once: the memory agrees with its store and a fresh open.
    assert len(memory) == store.count(memory.namespace) == 1
    assert [e.episode_id for e in memory.short_term] == ["seed"]
    reopened = EpisodicMemory(store=store, clock=lambda: 1_000.0)
    assert [p.total_episodes for p in reopened.skill_profiles()] == [
        p.total_episodes for p in memory.skill_profiles()
    ]


def test_records_and_erasures_from_many_threads_leave_a_folder_that_agrees_with_itself(
    tmp_path: Path,
) -> None:
    store = ChromaEpisodeStore(path=tmp_path)
    memory = EpisodicMemory(store=store)
    recorded: list[str] = []
    forgotten: list[str] = []
    done = threading.Event()

    def record(agent: int) -> None:
        for i in range(12):
            episode_id = f"agent{agent}-{i}"
            memory.record(make_episode(episode_id=episode_id, timestamp=agent * 100 + i))
            recorded.append(episode_id)

    def forget() -> None:
        while not done.is_set() or len(forgotten) < 10:
            candidates = [i for i in recorded if i not in forgotten]
            if candidates and len(forgotten) < 10:
                memory.forget([candidates[0]], reason="test")
                forgotten.append(candidates[0])
            elif done.is_set():
                return
            else:
                threading.Event().wait(0.005)

    recorders = [threading.Thread(target=record, args=(agent,)) for agent in range(6)]
    eraser = threading.Thread(target=forget)
    for thread in [*recorders, eraser]:
        thread.start()
    for thread in recorders:
        thread.join(60.0)
    done.set()
    eraser.join(60.0)
    assert not any(thread.is_alive() for thread in [*recorders, eraser])
    assert len(forgotten) == 10
    kept = set(recorded) - set(forgotten)
    assert len(memory) == store.count("default") == len(kept) == 62
    assert {e.episode_id for e in memory.episodes()} == kept
    assert store.verify("default") == []
    reopened = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    assert len(reopened) == 62
    assert [p.total_episodes for p in reopened.skill_profiles()] == [
        p.total_episodes for p in memory.skill_profiles()
    ]


# ------------------------------------------------------------------ categories


CRASH = "Fix the crash in the login handler"


def _crash(**options: object) -> Episode:
    return episode_from_tests(CRASH, "def login(): ...", 10, 10, timestamp=1.0, **options)  # type: ignore[arg-type]


def test_an_episode_recorded_without_a_category_is_stored_with_the_one_its_text_says() -> None:
    memory = EpisodicMemory()
    given = _crash(episode_id="crash-1")
    assert given.task.category is TaskCategory.UNKNOWN
    assert memory.record(given)
    stored = memory.get_episodes("crash-1")["crash-1"]
    assert stored.task.category is TaskCategory.DEBUGGING
    assert stored.task.category == memory.task(CRASH).category  # the rule the middleware reads by
    assert [p.category for p in memory.skill_profiles()] == [TaskCategory.DEBUGGING]
    named = episode_from_tests(
        TaskDescription("Write tests for the cart", TaskCategory.REFACTORING), "...", 1, 1,
        episode_id="named", timestamp=2.0,
    )  # fmt: skip
    memory.record(named)
    assert memory.get_episodes("named")["named"].task.category is TaskCategory.REFACTORING


def test_recording_the_same_episode_again_is_a_no_op_never_a_conflict() -> None:
    memory = EpisodicMemory()
    given = _crash(episode_id="crash-1")
    assert memory.record(given)
    assert not memory.record(given)  # as given: unknown, stored as debugging
    stored = memory.get_episodes("crash-1")["crash-1"]
    assert not memory.record(stored)  # as stored
    assert not memory.record(given, infer_category=False)
    assert memory.record_many([given, _crash(episode_id="crash-2")]) == 1
    assert len(memory) == 2


def test_a_real_conflict_names_only_what_differs_not_the_unsaid_category() -> None:
    memory = EpisodicMemory()
    memory.record(_crash(episode_id="crash-1"))
    later = episode_from_tests(
        CRASH, "def login(): ...", 10, 10, episode_id="crash-1", timestamp=9.0
    )
    with pytest.raises(EpisodeConflictError) as caught:
        memory.record(later)
    assert "timestamp" in str(caught.value)
    assert "task.category" not in str(caught.value)
    assert len(memory) == 1


def test_unknown_on_purpose_per_call_or_for_the_whole_memory() -> None:
    memory = EpisodicMemory()
    assert memory.record(_crash(episode_id="as-given"), infer_category=False)
    assert memory.get_episodes("as-given")["as-given"].task.category is TaskCategory.UNKNOWN
    plain = EpisodicMemory(infer_categories=False)
    plain.record(_crash(episode_id="crash-1"))
    assert plain.get_episodes("crash-1")["crash-1"].task.category is TaskCategory.UNKNOWN
    assert plain.for_namespace("other").record(_crash(episode_id="crash-2"))
    twin = plain.for_namespace("other").get_episodes("crash-2")["crash-2"]
    assert twin.task.category is TaskCategory.UNKNOWN  # the twin keeps the setting
    with pytest.raises(EpisodicValueError, match="infer_categories='no' is invalid"):
        EpisodicMemory(infer_categories="no")  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="infer_category=1 is invalid"):
        memory.record(_crash(episode_id="bad"), infer_category=1)  # type: ignore[arg-type]
    assert "bad" not in memory.get_episodes("bad")  # refused before anything was written


def test_a_migration_copies_categories_as_they_were_stored() -> None:
    source = EpisodicMemory(infer_categories=False)
    source.record(_crash(episode_id="crash-1"))
    target = EpisodicMemory()
    migrate_namespace(source, target)
    assert target.get_episodes("crash-1")["crash-1"] == source.get_episodes("crash-1")["crash-1"]
