"""The saved summary: reopening reads only the short-term window and the summary, a lagging
or stale summary is caught up, and a malformed record does not make every open rescan."""

from __future__ import annotations

import gc
import json
import math
from collections.abc import Iterator
from pathlib import Path

import pytest

import langchain_episodic.service.summary as summary_module
from langchain_episodic import (
    ChromaEpisodeStore,
    Episode,
    EpisodicMemory,
)
from langchain_episodic.errors import MalformedRecordWarning
from langchain_episodic.scoring.skills import compute_skill_profiles
from tests.helpers.episodes import corpus


def stored_summary(store: ChromaEpisodeStore) -> dict[str, object]:
    packed = store.read_state("default", "summary")
    return {} if packed is None else dict(json.loads(packed))


class CountingStore(ChromaEpisodeStore):
    """A real store that counts the episodes it reads by scanning."""

    scanned = 0

    def iter_episodes(
        self, namespace: str, page_size: int = 1000, start: int = 0
    ) -> Iterator[Episode]:
        for episode in super().iter_episodes(namespace, page_size, start):
            CountingStore.scanned += 1
            yield episode


def test_reopening_reads_only_the_window_and_summary(tmp_path: Path) -> None:
    first = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path), short_term_limit=4)
    episodes = corpus(500, spacing=60.0)
    first.record_many(episodes)
    first.flush()
    CountingStore.scanned = 0
    reopened = EpisodicMemory(store=CountingStore(path=tmp_path), short_term_limit=4)
    assert CountingStore.scanned == 0
    assert reopened.short_term == tuple(episodes[-4:])
    assert reopened.skill_profiles() == compute_skill_profiles(episodes)


@pytest.fixture
def no_timed_saves(monkeypatch: pytest.MonkeyPatch) -> None:
    """Summary saves by episode count only, so the tests don't depend on machine speed."""
    monkeypatch.setattr(summary_module, "SUMMARY_INTERVAL_SECONDS", math.inf)


@pytest.mark.usefixtures("no_timed_saves")
def test_a_lagging_summary_is_caught_up_from_the_newer_episodes_only(tmp_path: Path) -> None:
    first = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    episodes = corpus(2_300, spacing=1.0)
    for start in range(0, 2_300, 100):  # saved at 1,000 and 2,000 episodes, not after
        first.record_many(episodes[start : start + 100])
    assert stored_summary(first.store)["count"] == 2_000
    CountingStore.scanned = 0
    reopened = EpisodicMemory(store=CountingStore(path=tmp_path))
    assert CountingStore.scanned == 300
    assert reopened.skill_profiles() == compute_skill_profiles(episodes)
    assert stored_summary(ChromaEpisodeStore(path=tmp_path))["count"] == 2_300


@pytest.mark.usefixtures("no_timed_saves")
def test_summary_is_saved_when_the_memory_is_collected(tmp_path: Path) -> None:
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    memory.record_many(corpus(10))
    assert stored_summary(memory.store) == {}
    store = memory.store
    del memory
    gc.collect()
    assert stored_summary(store)["count"] == 10


def test_stale_summary_is_recounted_on_open(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path)
    EpisodicMemory(store=store).record_many(corpus(10))
    store.write_state("default", "summary", '{"count": 3}')
    reopened = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    assert reopened.skill_profiles() == compute_skill_profiles(corpus(10))
    assert stored_summary(ChromaEpisodeStore(path=tmp_path))["count"] == 10


def test_a_malformed_record_does_not_make_every_open_rescan(tmp_path: Path) -> None:
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    memory.record_many(corpus(20))
    memory.store.collection("default").add(  # type: ignore[attr-defined]
        ids=["foreign"],
        embeddings=[memory.embeddings.embed_query("x")],
        metadatas=[{"episode": "not json", "seq": 20}],
    )
    store = CountingStore(path=tmp_path)
    store.collection("default")  # opened outside pytest.warns, which re-raises Chroma's own
    with pytest.warns(MalformedRecordWarning, match="foreign"):
        EpisodicMemory(store=store)  # recounts once, saves "skipped"
    CountingStore.scanned = 0
    store = CountingStore(path=tmp_path)
    store.collection("default")
    with pytest.warns(MalformedRecordWarning, match="foreign"):  # in the short-term window
        again = EpisodicMemory(store=store)
    assert CountingStore.scanned == 0
    assert len(again) == 21
    assert again.skill_profiles() == compute_skill_profiles(corpus(20))


@pytest.mark.parametrize("other_erases", [False, True])
def test_an_erasure_beside_another_writer_leaves_a_summary_the_next_open_gets_right(
    tmp_path: Path, other_erases: bool
) -> None:
    # The erasure saves its summary without counting the store: what another writer
    # did meanwhile (records, and perhaps an erasure) is found by the next open.
    store = ChromaEpisodeStore(path=tmp_path)
    ours = EpisodicMemory(store=store)
    ours.record_many(corpus(10))
    theirs = EpisodicMemory(store=store)
    extra = [
        Episode.from_dict({**e.to_dict(), "episode_id": f"theirs-{i}"})
        for i, e in enumerate(corpus(3))
    ]
    theirs.record_many(extra)
    if other_erases:
        theirs.forget(["ep-2"], reason="their user asked")
    ours.forget(["ep-1"], reason="our user asked")
    held = list(ChromaEpisodeStore(path=tmp_path).iter_episodes("default"))
    assert len(held) == 12 - other_erases
    reopened = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))
    assert len(reopened) == len(held)
    assert reopened.skill_profiles() == compute_skill_profiles(held)
