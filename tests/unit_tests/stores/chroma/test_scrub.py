"""Scrubbing: the bytes of deleted records zeroed, so a forgotten episode is gone from disk."""

from __future__ import annotations

import sqlite3
import struct
from pathlib import Path

import chromadb

from langchain_episodic.stores import ChromaEpisodeStore
from langchain_episodic.stores.chroma.scrub import (
    SCRUB_PENDING,
    deleted_since_scrub,
    note_deleting,
    pending_status,
    scrub_folder,
    scrub_hnsw,
    scrub_pending,
    scrubbed_sentence,
    sqlite_folder,
    unreachable_files,
    zero_from,
)


def test_zero_from_zeroes_the_tail_and_says_whether_it_changed(tmp_path: Path) -> None:
    path = tmp_path / "data.bin"
    path.write_bytes(b"keep" + b"secret")
    assert zero_from(str(path), 4) == 1
    assert path.read_bytes() == b"keep" + bytes(6)
    assert zero_from(str(path), 10) == 0  # nothing at or past the end to zero
    assert zero_from(str(tmp_path / "missing.bin"), 0) == 0


def test_a_folder_without_a_vector_index_changes_nothing(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("no index here", encoding="utf-8")
    assert scrub_hnsw(str(tmp_path)) == 0
    assert (tmp_path / "notes.txt").read_text(encoding="utf-8") == "no index here"


def test_a_deletion_marks_the_folder_and_counts_until_a_scrub(tmp_path: Path) -> None:
    folder = str(tmp_path)
    assert deleted_since_scrub(folder) is None
    assert not scrub_pending(folder)
    note_deleting(folder, 3)
    note_deleting(folder, 4)
    assert deleted_since_scrub(folder) == 7
    assert scrub_pending(folder)
    scrub_folder(folder)  # no database here: the index part runs, the mark goes
    assert deleted_since_scrub(folder) is None


def test_an_unreadable_mark_still_means_a_scrub_is_pending(tmp_path: Path) -> None:
    (tmp_path / SCRUB_PENDING).write_text("not a number", encoding="ascii")
    assert deleted_since_scrub(str(tmp_path)) == 0
    assert scrub_pending(str(tmp_path))


_HEADER = struct.Struct("<iQQQQQQiIQQQdQ")  # chroma-hnswlib's header.bin, format 1


def _index(folder: Path, segment: str, lengths: bytes) -> Path:
    """A two-element index (room for four) whose ``length.bin`` holds ``lengths``."""
    path = folder / segment
    path.mkdir()
    (path / "header.bin").write_bytes(_HEADER.pack(1, 0, 4, 2, 16, 8, 4, 0, 0, 1, 1, 1, 1.0, 10))
    (path / "data_level0.bin").write_bytes(bytes(64))
    (path / "length.bin").write_bytes(lengths)
    return path


def test_the_norms_of_an_index_not_in_cosine_space_are_zeroed_whole(tmp_path: Path) -> None:
    # length.bin holds per element its vector's norm, which chroma-hnswlib sets and
    # reads only for cosine: elsewhere even the slots in use hold uncleared memory.
    connection = sqlite3.connect(tmp_path / "chroma.sqlite3")
    connection.executescript(
        """
        CREATE TABLE collections (id TEXT, name TEXT, config_json_str TEXT, schema_str TEXT);
        CREATE TABLE segments (id TEXT, type TEXT, scope TEXT, collection TEXT);
        CREATE TABLE collection_metadata (collection_id TEXT, key TEXT, str_value TEXT);
        """
    )
    spaces = {  # collection: (configuration, schema, hnsw:space metadata)
        "cosine": ("{}", '{"keys": {"#embedding": {"config": {"space": "cosine"}}}}', None),
        "l2": ("{}", '{"defaults": {"config": {"space": "l2"}}}', None),
        "ip-legacy": (None, None, "ip"),
        "unsaid": ("{}", "{}", None),
        "both": ('{"hnsw": {"space": "l2"}}', "not json", "cosine"),
    }
    for name, (configuration, schema, metadata) in spaces.items():
        connection.execute(
            "INSERT INTO collections VALUES (?, ?, ?, ?)", (name, name, configuration, schema)
        )
        connection.execute(
            "INSERT INTO segments VALUES (?, 'hnsw', 'VECTOR', ?)", (f"seg-{name}", name)
        )
        if metadata is not None:
            connection.execute(
                "INSERT INTO collection_metadata VALUES (?, 'hnsw:space', ?)", (name, metadata)
            )
    connection.commit()
    connection.close()
    held = b"in use: secret!!"  # two slots in use, two spare
    indexes = {name: _index(tmp_path, f"seg-{name}", held) for name in spaces}

    scrub_hnsw(str(tmp_path))

    lengths = {name: (path / "length.bin").read_bytes() for name, path in indexes.items()}
    assert lengths["l2"] == lengths["ip-legacy"] == bytes(16)
    for kept in ("cosine", "unsaid", "both"):  # norms, or a space not known for sure
        assert lengths[kept] == held[:8] + bytes(8)


def test_a_settle_cut_short_gives_the_thresholds_back_at_the_next_close(tmp_path: Path) -> None:
    # A process killed inside settle_indexes leaves its collections saving the index on
    # every write (sync_threshold 1) and the file naming what they had.
    import json  # noqa: PLC0415

    import chromadb  # noqa: PLC0415

    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory  # noqa: PLC0415
    from langchain_episodic.stores.chroma.scrub import SETTLING  # noqa: PLC0415
    from tests.unit_tests.factories import make_episode  # noqa: PLC0415

    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    EpisodicMemory(store=store).record(make_episode(episode_id="kept"))
    name = store.collection_name_for("default")
    store.close()
    client = chromadb.PersistentClient(path=str(folder))
    client.get_collection(name, embedding_function=None).modify(
        configuration={"hnsw": {"sync_threshold": 1}}
    )
    client.close()
    (folder / SETTLING).write_text(json.dumps({name: 1000, "gone-since": 7}), encoding="utf-8")

    ChromaEpisodeStore(path=folder).close()

    assert not (folder / SETTLING).exists()
    client = chromadb.PersistentClient(path=str(folder))
    hnsw = client.get_collection(name, embedding_function=None).configuration["hnsw"]
    assert hnsw["sync_threshold"] == 1000
    client.close()
    again = ChromaEpisodeStore(path=folder)
    assert EpisodicMemory(store=again).get_episodes(["kept"])
    again.close()


def test_the_scrubbed_folder_is_the_stores_path_or_its_clients_and_none_in_memory(
    tmp_path: Path,
) -> None:
    with ChromaEpisodeStore(path=tmp_path / "store") as store:
        store.collection("default")
        assert sqlite_folder(str(tmp_path / "store"), store.client) == str(tmp_path / "store")
    client = chromadb.PersistentClient(path=str(tmp_path / "client"))
    client.get_or_create_collection("probe", embedding_function=None)
    assert sqlite_folder(None, client) == str(tmp_path / "client")
    assert sqlite_folder(str(tmp_path / "nothing-here"), client) is None  # no database
    ephemeral = chromadb.EphemeralClient()
    assert sqlite_folder(None, ephemeral) is None
    assert unreachable_files(None, ephemeral).startswith("Chroma in process memory")
    assert unreachable_files(str(tmp_path), ephemeral).startswith("Chroma server")


def test_the_sentences_say_whether_the_bytes_wait_and_until_when(tmp_path: Path) -> None:
    folder = str(tmp_path)
    assert pending_status(folder, 1_000) == (False, scrubbed_sentence(folder))
    assert "vacuumed (no free page keeps them)" in scrubbed_sentence(folder)
    note_deleting(folder, 7)
    pending, sentence = pending_status(folder, 1_000)
    assert pending
    assert "1000 deleted records are pending (7 now)" in sentence
