"""read_folder: a folder's records read from its database, without Chroma."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, EpisodicValueError
from langchain_episodic.stores.chroma.salvage import read_folder
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import a_lesson, make_episode

BOB = [make_episode(episode_id=f"bob-{i}", description=f"Bob's task {i}") for i in range(3)]


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path, collection_name="work") as store:
        memory = EpisodicMemory(store=store)
        memory.record_many(corpus(12))
        memory.lessons.add([a_lesson(source="ep-1")])
        EpisodicMemory(store=store, namespace="bob").record_many(BOB)
    return path


def test_every_namespace_its_episodes_in_order_journal_and_state(folder: Path) -> None:
    found = read_folder(folder)
    assert (found.unreadable, found.repaired, found.orphans) == ((), (), 0)
    default, bob = found.namespaces
    assert (default.namespace, default.collection, default.collection_name) == (
        "default",
        "work",
        "work",
    )
    assert bob.namespace == "bob"
    assert bob.collection.startswith("work-bob-")
    assert bob.collection_name == "work"
    assert list(default.episodes) == corpus(12)  # in recording order, exactly
    assert list(bob.episodes) == BOB
    assert [entry.entry_id.startswith("lesson:") for entry in default.journal] == [True]
    assert bob.journal == ()
    assert "embedder" in default.state
    assert "namespace" not in default.state
    assert default.damaged == {}


def test_writes_only_in_chromas_log_are_read_from_it(folder: Path, tmp_path: Path) -> None:
    # As if Chroma had logged the writes and not yet applied them to its tables.
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    with sqlite3.connect(copy / "chroma.sqlite3") as database:
        assert database.execute("SELECT count(*) FROM embeddings_queue").fetchone()[0] > 0
        database.execute("DELETE FROM embedding_metadata")
        database.execute("DELETE FROM embeddings")
        database.execute("UPDATE max_seq_id SET seq_id = 0")
    found = read_folder(copy)
    assert [list(n.episodes) for n in found.namespaces] == [corpus(12), BOB]
    assert len(found.namespaces[0].journal) == 1


def test_a_record_whose_json_is_damaged_is_named_with_why(folder: Path) -> None:
    with sqlite3.connect(folder / "chroma.sqlite3") as database:
        database.execute(
            "UPDATE embedding_metadata SET string_value = '{\"episode_id\": 3' WHERE key = "
            "'episode' AND id = (SELECT id FROM embeddings WHERE embedding_id = 'ep-3')"
        )
    default, _ = read_folder(folder).namespaces
    assert "ep-3" not in {e.episode_id for e in default.episodes}
    assert list(default.damaged) == ["ep-3"]
    assert "does not parse" in default.damaged["ep-3"]


def test_a_folder_without_a_database_is_refused(tmp_path: Path) -> None:
    with pytest.raises(EpisodicValueError, match="holds no Chroma database"):
        read_folder(tmp_path)
    (tmp_path / "chroma.sqlite3").write_bytes(b"")
    with pytest.raises(EpisodicValueError, match="missing or empty"):
        read_folder(tmp_path)
