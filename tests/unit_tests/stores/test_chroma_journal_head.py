"""The head of a Chroma journal: renewed by every write, ``None`` while it cannot vouch."""

from __future__ import annotations

import time

import chromadb

from langchain_episodic import ChromaEpisodeStore
from langchain_episodic.stores.base import JournalEntry, JournalHead
from langchain_episodic.stores.chroma_journal_head import ABANDONED_AFTER, JournalHeads

NAMESPACE = "default"


def _entry(number: int) -> JournalEntry:
    return JournalEntry(f"e-{number}", "run", '{"x": 1}')


def test_every_write_and_deletion_renews_the_head() -> None:
    store = ChromaEpisodeStore()
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


def test_a_write_in_flight_is_not_vouched_for() -> None:
    store = ChromaEpisodeStore()
    store.append_journal(NAMESPACE, [_entry(1)])
    with store._heads.writing(NAMESPACE):
        assert store.journal_head(NAMESPACE) is None
    assert store.journal_head(NAMESPACE) is not None


def test_a_journal_without_a_head_gets_one_that_no_checkpoint_holds() -> None:
    store = ChromaEpisodeStore()
    store.append_journal(NAMESPACE, [_entry(1)])
    head_name = store.collection_name_for(NAMESPACE) + "-journal-head"
    store.client.delete_collection(head_name)  # as a release without heads left it
    store._heads._heads.clear()
    assert store.journal_head(NAMESPACE) is None  # this time: read the journal
    assert store.journal_head(NAMESPACE) is not None  # from now on: trusted


def test_at_a_server_a_write_in_flight_counts_as_abandoned_only_when_old() -> None:
    client = chromadb.EphemeralClient()
    name = "episodes-heads-test"

    def heads() -> JournalHeads:
        return JournalHeads(client, lambda _: name, exclusive=False, writable=True)

    writer = heads()
    with writer.writing(NAMESPACE):
        pass
    before = writer.read(NAMESPACE)
    head = client.get_collection(name + "-head")
    head.upsert(ids=["writing:elsewhere"], embeddings=[[1.0]], metadatas=[{"since": time.time()}])
    assert heads().read(NAMESPACE) is None  # another process may be writing now
    old = time.time() - ABANDONED_AFTER - 1
    head.upsert(ids=["writing:elsewhere"], embeddings=[[1.0]], metadatas=[{"since": old}])
    assert heads().read(NAMESPACE) is None  # abandoned: cleared, the head renewed
    after = heads().read(NAMESPACE)
    assert after is not None
    assert after != before
    assert head.get(ids=["writing:elsewhere"])["ids"] == []
