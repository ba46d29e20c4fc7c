"""ChromaEpisodeStore and persistence on a real embedded Chroma (on disk and in memory)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import threading
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import chromadb
import pytest

from langchain_episodic import (
    ChromaEpisodeStore,
    Episode,
    EpisodicMemory,
    EpisodicValueError,
    HashingEmbeddings,
    StoreConfigurationError,
    TaskCategory,
)
from langchain_episodic.errors import MalformedRecordWarning
from langchain_episodic.scoring.skills import compute_skill_profiles
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

REPO = Path(__file__).resolve().parents[4]


def run_python(code: str) -> str:
    """Run ``code`` in a fresh interpreter (new hash seed, no shared Chroma state)."""
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code)],
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
        timeout=300,
        env={**os.environ, "PYTHONHASHSEED": "random"},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_store_round_trips_episodes_exactly() -> None:
    store = ChromaEpisodeStore()
    tricky = make_episode(
        episode_id="tricky id/ü",
        description='Ünïcode task with "quotes" and\nnewlines',
        solution="def f():\n    return '</solution>'\n" * 3,
        reward=0.1 + 0.2,
        timestamp=1_700_000_000.123456789,
    )
    memory = EpisodicMemory(store=store)
    memory.record(tricky)
    assert store.get("default", ["tricky id/ü", "missing"]) == {"tricky id/ü": tricky}
    assert next(memory.episodes()) == tricky
    assert memory.recall("Ünïcode task")[0].episode == tricky


def test_chroma_default_embedding_function_is_never_attached() -> None:
    store = ChromaEpisodeStore()
    collection = store.collection("default")
    assert collection.configuration.get("embedding_function") is None
    assert collection.configuration["hnsw"]["space"] == "cosine"
    with pytest.raises(ValueError, match="embedding function"):
        collection.add(ids=["x"], documents=["would need a model download"])


def test_documents_are_task_descriptions_and_metadata_is_filterable() -> None:
    store = ChromaEpisodeStore()
    memory = EpisodicMemory(store=store)
    episode = make_episode(description="Write tests for the parser", outcome="failure")
    memory.record(episode)
    got = store.collection("default").get(include=["documents", "metadatas"])
    assert got["documents"] == ["Write tests for the parser"]
    metadata = got["metadatas"][0]
    assert metadata["outcome"] == "failure"
    assert metadata["category"] == episode.task.category.value
    assert Episode.from_dict(json.loads(metadata["episode"])) == episode


def test_existing_l2_collection_is_refused(tmp_path: Path) -> None:
    client = chromadb.PersistentClient(path=str(tmp_path))
    client.create_collection("episodes", embedding_function=None)
    with pytest.raises(StoreConfigurationError, match="space='l2'"):
        EpisodicMemory(store=ChromaEpisodeStore(client=client))


@pytest.mark.parametrize("name", ["ab", "-bad", "has space", "bad-"])
def test_invalid_collection_name_is_named(name: str) -> None:
    with pytest.raises(EpisodicValueError, match=f"collection_name={name!r}"):
        ChromaEpisodeStore(collection_name=name)


def test_path_and_client_together_are_refused(tmp_path: Path) -> None:
    with pytest.raises(EpisodicValueError, match="path="):
        ChromaEpisodeStore(path=tmp_path, client=chromadb.EphemeralClient())


def test_record_many_beyond_chromas_batch_limit() -> None:
    store = ChromaEpisodeStore()
    assert store.batch_size == store.client.get_max_batch_size() < 6_000
    memory = EpisodicMemory(store=store, short_term_limit=3)
    episodes = corpus(6_100, spacing=1.0)
    assert memory.record_many(episodes) == 6_100
    assert len(memory) == 6_100
    assert memory.short_term == tuple(episodes[-3:])
    streamed = memory.episodes(page_size=2_500)
    assert isinstance(streamed, Iterator)
    assert [e.episode_id for e in streamed] == [e.episode_id for e in episodes]
    assert memory.skill_profiles() == compute_skill_profiles(episodes)
    assert memory.record_many(episodes[::7]) == 0


def test_small_batch_size_splits_writes() -> None:
    store = ChromaEpisodeStore(max_batch_size=4)
    memory = EpisodicMemory(store=store)
    episodes = corpus(11)
    memory.record_many(episodes)
    assert list(memory.episodes(page_size=3)) == episodes


def test_memory_persists_across_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "memory")
    run_python(
        f"""
        from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
        from tests.helpers.episodes import corpus
        memory = EpisodicMemory(store=ChromaEpisodeStore(path={path!r}))
        memory.record_many(corpus(20))
        print(len(memory))
        """
    )
    output = run_python(
        f"""
        import json
        from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
        memory = EpisodicMemory(store=ChromaEpisodeStore(path={path!r}))
        hits = memory.recall("Fix the login session bug", top_k=3, current_time=86400.0)
        print(json.dumps({{
            "len": len(memory),
            "short_term": [e.episode_id for e in memory.short_term],
            "hits": [[h.episode.episode_id, h.priority] for h in hits],
            "all": [e.episode_id for e in memory.episodes()],
        }}))
        """
    )
    seen = json.loads(output)
    # The same recall in this process, over an in-memory copy of the same episodes.
    here = EpisodicMemory()
    here.record_many(corpus(20))
    expected = here.recall("Fix the login session bug", top_k=3, current_time=86400.0)
    assert seen["len"] == 20
    assert seen["short_term"] == [f"ep-{i}" for i in range(15, 20)]
    assert seen["all"] == [f"ep-{i}" for i in range(20)]
    assert [h[0] for h in seen["hits"]] == [h.episode.episode_id for h in expected]
    assert [round(h[1], 9) for h in seen["hits"]] == [round(h.priority, 9) for h in expected]


def test_embeddings_are_identical_across_processes() -> None:
    text = "Implement a login form with email validation"
    output = run_python(
        f"""
        import json
        from langchain_episodic import HashingEmbeddings
        print(json.dumps(HashingEmbeddings().embed_query({text!r})))
        """
    )
    assert json.loads(output) == HashingEmbeddings().embed_query(text)


def test_recalled_episodes_equal_the_recorded_ones_field_by_field() -> None:
    memory = EpisodicMemory()
    episodes = corpus(12)
    memory.record_many(episodes)
    by_id = {e.episode_id: e for e in episodes}
    for hit in memory.recall("Fix the login session bug", top_k=6):
        recalled = hit.episode
        original = by_id[recalled.episode_id]
        assert recalled == original
        assert recalled.to_dict() == original.to_dict()
        assert type(recalled.task.category) is TaskCategory
        assert type(recalled.feedback.tests_passed) is int
        assert hash(recalled) == hash(original)


def test_a_stored_record_that_is_not_an_episode_is_skipped_with_a_warning_naming_it() -> None:
    store = ChromaEpisodeStore()
    memory = EpisodicMemory(store=store)
    memory.record(make_episode(episode_id="good"))
    bad = {**make_episode(episode_id="bad").to_dict(), "feedback": {"reward": 7}}
    store.collection("default").add(
        ids=["bad"],
        embeddings=[memory.embeddings.embed_query("Implement login form")],
        metadatas=[
            {
                "episode": json.dumps(bad),
                "seq": 1,
                "category": "unknown",
                "outcome": "success",
                "strategy_used": "x",
            }
        ],
    )
    with pytest.warns(MalformedRecordWarning, match=r"id='bad'.*Feedback\.reward=7"):
        hits = memory.recall("Implement login form", top_k=2)
    assert [hit.episode.episode_id for hit in hits] == ["good"]


def test_memories_sharing_a_store_never_repeat_a_record_number(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path)
    agent, tool = EpisodicMemory(store=store), EpisodicMemory(store=store)
    agent.record_many([make_episode(episode_id=f"a{i}", timestamp=i) for i in range(3)])
    tool.record_many([make_episode(episode_id=f"b{i}", timestamp=10 + i) for i in range(3)])
    agent.record(make_episode(episode_id="a3", timestamp=20))
    assert store.verify("default") == []
    reopened = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path), short_term_limit=3)
    assert [e.episode_id for e in reopened.short_term] == ["b1", "b2", "a3"]
    assert [e.episode_id for e in reopened.episodes()] == ["a0", "a1", "a2", "b0", "b1", "b2", "a3"]


@pytest.mark.parametrize("n", [1, 4, 9, 40])
def test_a_small_collection_read_whole_keeps_the_window_a_seq_filter_keeps(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, n: int
) -> None:
    import langchain_episodic.stores.chroma.store as chroma_module  # noqa: PLC0415

    store = ChromaEpisodeStore(path=tmp_path / "m")
    EpisodicMemory(store=store).record_many(corpus(8))
    vector = [
        [0.1]
        * store.collection("default").get(limit=1, include=["embeddings"])["embeddings"][0].shape[0]
    ]
    foreign = {  # what several writers and other tools leave: repeated, missing, odd seqs
        "twin": {"episode": json.dumps(make_episode(episode_id="twin").to_dict()), "seq": 7},
        "no-seq": {"episode": json.dumps(make_episode(episode_id="no-seq").to_dict())},
        "bool-seq": {
            "episode": json.dumps(make_episode(episode_id="bool-seq").to_dict()),
            "seq": True,
        },
        "beyond": {"episode": json.dumps(make_episode(episode_id="beyond").to_dict()), "seq": 99},
        "broken": {"episode": "{oops", "seq": 6},
    }
    for record_id, metadata in foreign.items():
        store.collection("default").add(ids=[record_id], embeddings=vector, metadatas=[metadata])
    total = 9

    with warnings.catch_warnings(record=True) as whole_warned:
        warnings.simplefilter("always")
        whole = [e.episode_id for e in store.latest("default", n, total)]
    monkeypatch.setattr(chroma_module, "_READ_WHOLE_BELOW", 0)  # the seq filter, widening
    with warnings.catch_warnings(record=True) as filtered_warned:
        warnings.simplefilter("always")
        filtered = [e.episode_id for e in store.latest("default", n, total)]

    assert whole == filtered
    assert [str(w.message) for w in whole_warned] == [str(w.message) for w in filtered_warned]
    assert len(whole) == min(n, 9)  # ep-0..ep-7 and the twin; never the broken one
    assert not {"no-seq", "bool-seq", "beyond", "broken"} & set(whole)
    assert whole[-2:] == ["ep-7", "twin"] or whole[-2:] == ["twin", "ep-7"] or n == 1


def _seqs(store: ChromaEpisodeStore, namespace: str = "default") -> list[int]:
    metadatas = store.collection(namespace).get(include=["metadatas"])["metadatas"] or []
    return sorted(int(metadata["seq"]) for metadata in metadatas)


def _holding_one(tmp_path: Path) -> tuple[ChromaEpisodeStore, EpisodicMemory]:
    """A memory on a folder, one episode recorded (record number 0)."""
    store = ChromaEpisodeStore(path=tmp_path)
    memory = EpisodicMemory(store=store)
    memory.record(make_episode(episode_id="first", timestamp=0))
    return store, memory


def test_batches_written_at_once_from_threads_never_share_a_number(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, memory = _holding_one(tmp_path)
    # Two adds must be inside Chroma at the same time to pass this barrier: a store
    # holding its numbering lock across the write would wait here for ever.
    both_inside = threading.Barrier(2, timeout=10.0)
    real_add, entered = chromadb.Collection.add, []

    def add_when_both_inside(self: chromadb.Collection, *args: Any, **kwargs: Any) -> None:
        entered.append(kwargs["ids"])
        both_inside.wait()
        real_add(self, *args, **kwargs)

    monkeypatch.setattr(chromadb.Collection, "add", add_when_both_inside)
    batches = [
        [make_episode(episode_id=f"{t}{i}", timestamp=1 + i) for i in range(3)] for t in "xy"
    ]
    threads = [threading.Thread(target=memory.record_many, args=(batch,)) for batch in batches]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20.0)
    monkeypatch.undo()
    assert len(entered) == 2
    assert not both_inside.broken
    assert _seqs(store) == list(range(7))
    assert len(memory) == store.count("default") == 7
    assert store.verify("default") == []
    assert len(EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path))) == 7


def test_a_failed_write_gives_back_the_numbers_it_took(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, memory = _holding_one(tmp_path)

    def unreachable(self: chromadb.Collection, *args: Any, **kwargs: Any) -> None:
        raise ConnectionError("the server went away")

    monkeypatch.setattr(chromadb.Collection, "add", unreachable)
    with pytest.raises(ConnectionError):
        memory.record_many([make_episode(episode_id=f"lost{i}", timestamp=1) for i in range(4)])
    monkeypatch.undo()
    memory.record(make_episode(episode_id="b", timestamp=2))
    assert _seqs(store) == [0, 1]  # no gap where the failed batch took its numbers
    assert len(memory) == 2
    assert store.verify("default") == []


def test_numbers_a_failed_batch_leaves_under_a_written_one_go_to_the_next_record(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store, memory = _holding_one(tmp_path)
    lost_inside, later_written = threading.Event(), threading.Event()
    real_add = chromadb.Collection.add

    def fails_once_the_later_is_written(
        self: chromadb.Collection, *args: Any, **kwargs: Any
    ) -> None:
        if kwargs["ids"] == ["lost"]:  # numbered before "later", never written
            lost_inside.set()
            assert later_written.wait(10.0)
            raise ConnectionError("the server went away")
        real_add(self, *args, **kwargs)
        later_written.set()

    monkeypatch.setattr(chromadb.Collection, "add", fails_once_the_later_is_written)
    failures: list[BaseException] = []

    def record_lost() -> None:
        try:
            memory.record(make_episode(episode_id="lost", timestamp=1))
        except ConnectionError as error:
            failures.append(error)

    lost = threading.Thread(target=record_lost)
    lost.start()
    assert lost_inside.wait(10.0)
    memory.record(make_episode(episode_id="later", timestamp=2))
    lost.join(10.0)
    monkeypatch.undo()
    assert len(failures) == 1
    assert _seqs(store) == [0, 2]  # a gap where "lost" was numbered
    memory.record(make_episode(episode_id="next", timestamp=3))
    assert _seqs(store) == [0, 1, 2]  # "next" took the number "lost" gave back
    assert len(memory) == 3
    assert store.verify("default") == []


def test_a_folder_written_before_filters_by_reward_without_dropping_a_record(
    tmp_path: Path,
) -> None:
    episodes = corpus(24)
    with ChromaEpisodeStore(path=tmp_path) as store:
        EpisodicMemory(store=store).record_many(episodes)
        # As 0.1 wrote them: no reward, pass rate nor timestamp among the flat keys.
        store.collection("default").update(
            ids=[e.episode_id for e in episodes],
            metadatas=[{"reward": None, "pass_rate": None, "timestamp": None}] * len(episodes),
        )
        assert "reward" not in store.collection("default").get(limit=1)["metadatas"][0]
    with ChromaEpisodeStore(path=tmp_path) as store:
        memory = EpisodicMemory(store=store)
        got = memory.recall(
            "Fix the login bug", top_k=30, ranking="article", filters={"reward": {"$gte": 0.5}}
        )
        assert sorted(r.episode.episode_id for r in got) == sorted(
            e.episode_id for e in episodes if e.feedback.reward >= 0.5
        )
        assert store.filters_every_field("default")
        assert store.read_state("default", "filter_keys") == "1"
        stored = store.collection("default").get(include=["metadatas"])["metadatas"]
        assert all({"reward", "pass_rate", "timestamp"} <= set(m) for m in stored)
