"""``memory.forget`` and ``memory.forgetting``: bad input, the forgotten error, retention.
Erasure faults are in service/test_erasure.py, the receipt in model/test_erasure.py,
the plan in scoring/test_retention.py, the commands in cli/test_forget_commands.py.

The behaviour on every store kind is in tests/store_suite/test_forgetting.py; on disk
and under SIGKILL in tests/integration_tests/test_erasure_on_disk.py.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from langchain_episodic import EpisodicMemory, EpisodicValueError, StoreConfigurationError
from langchain_episodic.errors import EpisodeForgottenError
from langchain_episodic.scoring.retention import Retention
from langchain_episodic.stores import ChromaEpisodeStore, InMemoryEpisodeStore
from langchain_episodic.stores.chroma import store as chroma
from tests.helpers.episodes import corpus
from tests.helpers.forgetting import NOW, memory_with
from tests.unit_tests.factories import make_episode

# ------------------------------------------------------------------ bad input


@pytest.mark.parametrize("reason", ["", "   ", None, 5])
def test_an_erasure_needs_a_reason(reason: object) -> None:
    memory = memory_with()
    with pytest.raises(EpisodicValueError, match="reason="):
        memory.forget(["ep-1"], reason=reason)  # type: ignore[arg-type]
    with pytest.raises(EpisodicValueError, match="reason="):
        memory.forgetting.forget_all(reason=reason)  # type: ignore[arg-type]
    assert len(memory) == 6


@pytest.mark.parametrize("ids", [[], [""], ["ep-1", 3]])
def test_bad_ids_are_refused_before_anything_is_removed(ids: list[object]) -> None:
    memory = memory_with()
    with pytest.raises(EpisodicValueError, match="episode_ids"):
        memory.forget(ids, reason="x")  # type: ignore[arg-type]
    assert len(memory) == 6


def test_a_store_that_cannot_delete_gets_a_clear_error() -> None:
    class ReadOnlyStore(InMemoryEpisodeStore):
        delete = None  # type: ignore[assignment]

    store = ReadOnlyStore()
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.record_many(corpus(2))
    with pytest.raises(StoreConfigurationError, match=r"cannot delete.*nothing was removed"):
        memory.forget(["ep-1"], reason="x")
    assert len(memory) == 2


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
    memory = memory_with()
    gone = memory.get_episodes("ep-2")["ep-2"]
    receipt = memory.forget("ep-2", reason="user asked")
    with pytest.raises(EpisodeForgottenError) as caught:
        memory.record_many([make_episode(episode_id="fresh"), gone])
    message = str(caught.value)
    assert "'ep-2'" in message
    assert receipt.erasure_id in message
    assert "(1970-01-12 13:46:40 UTC)" in message
    assert "fresh" not in memory.get_episodes("fresh")  # nothing of the batch was written


# ------------------------------------------------------------------ retention


def test_a_capped_memory_keeps_recalling_what_it_keeps() -> None:
    memory = memory_with(0, retention=Retention(max_episodes=20, on_write=True))
    for start in range(0, 200, 10):
        memory.record_many(corpus(200)[start : start + 10])
    assert 20 <= len(memory) <= 22
    kept = {e.episode_id for e in memory.episodes()}
    for episode in memory.episodes():
        hits = memory.recall(episode.task, top_k=len(kept))
        assert {h.episode.episode_id for h in hits} <= kept
    assert len(memory.forgetting.receipts()) >= 8


def test_forget_all_on_a_namespace_that_holds_nothing_is_refused() -> None:
    memory = memory_with()
    with pytest.raises(EpisodicValueError, match="holds nothing to erase"):
        memory.for_namespace("typo").forgetting.forget_all(reason="x")
    assert len(memory) == 6
    memory.forgetting.forget_all(reason="user left")
    again = memory.forgetting.forget_all(reason="asked twice")  # tombstones remain: a no-op
    assert again.episodes == 0


def test_forget_all_keeps_no_run_id_in_its_records() -> None:
    memory = memory_with()
    memory.runs.note("run-of-alice-smith", ["ep-1"], "a task")
    memory.runs.credit("run-of-alice-smith", 0.8, by="alice-smith-reviewer")
    memory.forgetting.forget_all(reason="account closed")
    stored = memory.store.read_journal(memory.namespace)
    assert stored  # the tombstones, the erasure record and the receipt
    assert not any("alice-smith" in entry.entry_id + entry.payload for entry in stored)


def test_a_store_that_purges_at_once_gives_receipts_with_nothing_pending() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW)
    memory.record(make_episode(episode_id="a"))
    receipt = memory.forget(["a"], reason="user asked")
    assert not receipt.scrub_pending
    assert "scrub pending" not in receipt.summary()
    assert memory.forgetting.compact() == receipt.storage
    assert asyncio.run(memory.forgetting.acompact()) == receipt.storage


def test_an_embedded_folder_scrubs_at_once_when_enough_waits(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(chroma, "SCRUB_AFTER", 3)
    store = ChromaEpisodeStore(path=tmp_path / "memory")
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.record_many([make_episode(episode_id=f"e-{i}") for i in range(4)])
    first = memory.forget(["e-0"], reason="user asked")
    assert first.scrub_pending
    assert "scrub pending" in first.summary()
    assert store.purge_status()[0]
    second = memory.forget(["e-1", "e-2", "e-3"], reason="user asked")  # 4 deleted: due
    assert not second.scrub_pending
    assert "vacuumed" in second.storage
    assert store.purge_status() == (False, second.storage)
    assert [r.scrub_pending for r in memory.forgetting.receipts()] == [False, False]
    store.close()
