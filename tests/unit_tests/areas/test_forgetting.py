"""Forgetting: bad input, an erasure cut short, the writer's race, retention, the CLI.

The behaviour on every store kind is in tests/store_suite/test_forgetting.py; on disk
and under SIGKILL in tests/integration_tests/test_erasure_on_disk.py.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from langchain_episodic import EpisodicMemory, EpisodicValueError, StoreConfigurationError
from langchain_episodic.errors import EpisodeForgottenError
from langchain_episodic.model.erasure import ForgetReceipt, decode_receipt, encode_receipt
from langchain_episodic.scoring.credit import EpisodeUtility
from langchain_episodic.scoring.retention import Retention, plan_prune
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.cli import open_memory, run
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

NOW = 1_000_000.0


def memory_with(count: int = 6, **kwargs: Any) -> EpisodicMemory:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW, **kwargs)
    memory.record_many(corpus(count))
    return memory


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


# ------------------------------------------------------------------ faults


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


def test_the_receipt_round_trips_and_never_holds_the_ids() -> None:
    receipt = ForgetReceipt(
        "abc", "alice", "user asked", 5.0, "ops", episodes=2, episode_ids=("private-id",)
    )
    entry_id, _, payload = encode_receipt(receipt)
    assert "private-id" not in payload
    again = decode_receipt(entry_id, payload)
    assert again is not None
    assert again.to_dict() == receipt.to_dict()


# ------------------------------------------------------------------ retention


def test_plan_prune_removes_the_least_valuable_first() -> None:
    helpful = EpisodeUtility("helpful", helped=3.0, hurt=0.0, credited_runs=3, updated_at=NOW)
    harmful = EpisodeUtility("harmful", helped=0.0, hurt=3.0, credited_runs=3, updated_at=NOW)
    episodes = [("helpful", 1.0), ("old", 2.0), ("harmful", 3.0), ("new", 4.0), ("pinned", 0.0)]
    rows = {"helpful": helpful, "harmful": harmful}
    plan = plan_prune(episodes, rows, {"pinned"}, Retention(max_episodes=2), NOW)
    assert plan.over_cap == ("harmful", "old", "new")
    assert plan.kept == 2
    plan = plan_prune(episodes, rows, {"pinned"}, Retention(max_age=NOW - 2.5), NOW)
    assert plan.expired == ("helpful", "old")
    assert plan.protected == ("pinned",)


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


# ------------------------------------------------------------------ the command line


def test_cli_forget_prints_a_receipt_and_refuses_unknown_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory"
    memory = open_memory(path)
    memory.record_many(corpus(6))
    memory.store.close()  # type: ignore[attr-defined]
    code, out, err = run(capsys, "forget", "ep-1", "nope", "--reason", "x", "--path", str(path))
    assert code == 2
    assert "'nope'" in err
    assert "nothing was removed" in err
    code, out, _ = run(capsys, "forget", "ep-1", "--reason", "x", "--dry-run", "--path", str(path))
    assert code == 0
    assert "to remove (dry run): 1" in out
    code, out, _ = run(
        capsys, "forget", "ep-1", "--reason", "asked", "--by", "me", "--json", "--path", str(path)
    )
    assert code == 0
    receipt = json.loads(out)
    assert (receipt["episodes"], receipt["reason"], receipt["by"]) == (1, "asked", "me")
    code, out, _ = run(capsys, "stats", "--path", str(path))
    assert "5" in out


def test_cli_forget_all_asks_unless_yes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "memory"
    memory = open_memory(path, "alice")
    memory.record_many(corpus(4))
    memory.store.close()  # type: ignore[attr-defined]
    argv = ["forget", "--all", "--namespace", "alice", "--reason", "left", "--path", str(path)]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "--yes" in err
    code, _, err = run(
        capsys,
        "forget",
        "--all",
        "--namespace",
        "nobody",
        "--reason",
        "x",
        "--yes",
        "--path",
        str(path),
    )
    assert code == 2
    assert "nobody" in err
    code, out, _ = run(capsys, *argv, "--yes")
    assert code == 0
    assert "episodes removed: 4" in out
    code, _, err = run(capsys, "forget", "ep-1", "--all", "--reason", "x", "--path", str(path))
    assert code == 2
    assert "not both" in err


def test_cli_prune_lists_what_would_go(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "memory"
    memory = open_memory(path)
    memory.record_many(corpus(6))
    memory.store.close()  # type: ignore[attr-defined]
    code, out, _ = run(capsys, "prune", "--max-episodes", "4", "--dry-run", "--path", str(path))
    assert code == 0
    assert "would remove: ep-0, ep-1" in out
    code, out, _ = run(capsys, "prune", "--max-episodes", "4", "--json", "--path", str(path))
    assert json.loads(out)["plan"]["kept"] == 4
    code, _, err = run(capsys, "prune", "--path", str(path))
    assert code == 2
    assert "--max-age" in err


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
