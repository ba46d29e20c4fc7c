"""The head of a journal in an embedded folder: renewed by every write, ``None`` while unsure."""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.stores.base import JournalEntry, JournalHead
from langchain_episodic.stores.chroma import journal_head as chroma_journal_head
from langchain_episodic.stores.chroma.journal_head import HEAD_PREFIX
from tests.unit_tests.factories import make_episode

NAMESPACE = "default"


def _entry(number: int) -> JournalEntry:
    return JournalEntry(f"e-{number}", "run", '{"x": 1}')


def _journal_name(store: ChromaEpisodeStore) -> str:
    return store.collection_name_for(NAMESPACE) + "-journal"


def test_every_write_and_deletion_renews_the_head(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "m")
    assert isinstance(store, JournalHead)
    assert store.journal_head(NAMESPACE) is None  # no journal, no head
    store.append_journal(NAMESPACE, [_entry(1)])
    first = store.journal_head(NAMESPACE)
    assert first is not None
    assert store.journal_head(NAMESPACE) == first  # reads change nothing
    store.append_journal(NAMESPACE, [_entry(2)])
    second = store.journal_head(NAMESPACE)
    assert second not in (None, first)
    store.delete_journal(NAMESPACE, ["e-1"])
    assert store.journal_head(NAMESPACE) not in (None, first, second)
    assert (tmp_path / "m" / (HEAD_PREFIX + _journal_name(store))).read_text() != "writing\n"
    store.close()


def test_a_write_in_flight_is_not_vouched_for(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "m")
    store.append_journal(NAMESPACE, [_entry(1)])
    with store._heads.writing(_journal_name(store)):
        assert store.journal_head(NAMESPACE) is None
    assert store.journal_head(NAMESPACE) is not None
    store.close()


def test_writes_in_one_block_renew_the_head_once_after_the_last(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "m")
    store.append_journal(NAMESPACE, [_entry(1)])
    before = store.journal_head(NAMESPACE)
    written: list[str] = []
    real = chroma_journal_head._write_synced

    def counted(path: str, text: str) -> None:
        written.append(text)
        real(path, text)

    monkeypatch.setattr(chroma_journal_head, "_write_synced", counted)
    with store.journal_writes(NAMESPACE):
        store.append_journal(NAMESPACE, [_entry(2)])
        assert store.journal_head(NAMESPACE) is None  # in flight throughout
        store.delete_journal(NAMESPACE, ["e-1"])
        store.append_journal(NAMESPACE, [_entry(3)])
        assert store.journal_head(NAMESPACE) is None
    assert written[0] == "writing"
    assert len(written) == 2  # one pair for the three writes
    after = store.journal_head(NAMESPACE)
    assert after not in (None, before)
    assert [e.entry_id for e in store.read_journal_from(NAMESPACE, 0)] == ["e-2", "e-3"]
    store.close()


def test_an_erasure_renews_the_head_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "m")
    memory = EpisodicMemory(store=store, clock=lambda: 1_000.0)
    memory.record_many([make_episode(episode_id=i) for i in ("a", "b")])
    memory.runs.note("r1", ["a", "b"], "a task")
    memory.runs.credit("r1", 0.9)
    written: list[str] = []
    real = chroma_journal_head._write_synced

    def counted(path: str, text: str) -> None:
        if path.endswith(_journal_name(store)):
            written.append(text)
        real(path, text)

    monkeypatch.setattr(chroma_journal_head, "_write_synced", counted)
    receipt = memory.forget(["a"], reason="user asked")
    assert receipt.outcomes_redacted == 1  # three journal writes: record, removal, copies
    assert len(written) == 2
    assert store.journal_head(NAMESPACE) is not None
    store.close()


@pytest.mark.parametrize("left", ["writing\n", "", "wri"])
def test_a_head_left_by_a_dead_writer_or_torn_is_renewed(tmp_path: Path, left: str) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "m")
    store.append_journal(NAMESPACE, [_entry(1)])
    before = store.journal_head(NAMESPACE)
    head = tmp_path / "m" / (HEAD_PREFIX + _journal_name(store))
    head.write_text(left)  # a process killed during a write (the folder lock is ours now)
    assert store.journal_head(NAMESPACE) is None  # this time: read the journal
    after = store.journal_head(NAMESPACE)
    assert after is not None
    assert after != before  # a checkpoint from before the crash never matches
    store.close()


def test_a_journal_without_a_head_gets_one_that_no_checkpoint_holds(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "m")
    store.append_journal(NAMESPACE, [_entry(1)])
    (tmp_path / "m" / (HEAD_PREFIX + _journal_name(store))).unlink()  # an older release's
    assert store.journal_head(NAMESPACE) is None  # this time: read the journal
    assert store.journal_head(NAMESPACE) is not None  # from now on: trusted
    store.close()


def test_a_store_on_a_client_keeps_no_head() -> None:
    store = ChromaEpisodeStore()  # in memory, as a server or a user's client: no folder
    store.append_journal(NAMESPACE, [_entry(1)])
    assert store.journal_head(NAMESPACE) is None
