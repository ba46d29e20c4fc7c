"""Salvage: a damaged folder's records, read from its database, live again in a new one.

For each kind of damage ``verify`` is tested on, the salvage recovers every episode
whose record is intact, exactly as it was recorded, with the journal (credit, lessons)
and the quarantine; the new folder verifies clean and answers recall. Where the
database itself is damaged, what is readable is recovered and the report names what is
not. The damaged folder is never changed.
"""

from __future__ import annotations

import hashlib
import shutil
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, EpisodicValueError
from langchain_episodic.model.episode import Episode
from langchain_episodic.salvage import salvage_folder
from langchain_episodic.stores.chroma._sqlite_pages import scan_pages
from tests.helpers.cli import QUERY, run
from tests.helpers.damage import KINDS, damaged_copy, garble
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import a_lesson, make_episode

BOB = [make_episode(episode_id=f"bob-{i}", description=f"Bob's task {i}") for i in range(5)]


@pytest.fixture(scope="module")
def sound_folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """1,200 episodes: past Chroma's flush threshold, so the index has all its files."""
    path = tmp_path_factory.mktemp("sound") / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(1_200))
    return path


@pytest.fixture(scope="module")
def originals(sound_folder: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Episode]:
    """Every episode of the sound folder's default namespace, by id (read from a copy)."""
    copy = tmp_path_factory.mktemp("originals") / "memory"
    shutil.copytree(sound_folder, copy)
    with ChromaEpisodeStore(path=copy) as store:
        return {e.episode_id: e for e in EpisodicMemory(store=store).episodes()}


def fingerprint(folder: Path) -> dict[str, str]:
    return {
        str(p.relative_to(folder)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(folder.rglob("*"))
        if p.is_file() and not p.name.startswith(".langchain-episodic")
    }


def salvaged_episodes(path: Path, namespace: str = "default", **opened: Any) -> dict[str, Episode]:
    with ChromaEpisodeStore(path=path) as store:
        memory = EpisodicMemory(store=store, namespace=namespace, **opened)
        return {e.episode_id: e for e in memory.episodes()}


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_each_damage_kind_gives_back_every_intact_episode(
    sound_folder: Path,
    originals: dict[str, Episode],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
) -> None:
    damaged = damaged_copy(sound_folder, tmp_path / "damaged", kind)
    before = fingerprint(damaged)
    report = salvage_folder(damaged, tmp_path / "salvaged")
    assert fingerprint(damaged) == before, "the damaged folder is only read"
    recovered = salvaged_episodes(tmp_path / "salvaged")
    # What comes back is exactly what was recorded: same ids, same contents.
    assert set(recovered) <= set(originals)
    assert all(recovered[i] == originals[i] for i in recovered)
    (default, *_) = report.namespaces
    assert default.namespace == "default"
    assert default.episodes == len(recovered)
    if kind == "sqlite truncated":
        # The cut took every page of the records' tables: nothing is intact, and the
        # report says so (the namespace's own count says how many there were).
        assert not report.complete
        assert default.last_count == 1_200
        assert any("truncated" in line for line in report.unreadable)
        return
    # The database holds every record: all of them come back, and the folder works.
    assert set(recovered) == set(originals)
    assert report.complete, report.lines()
    with ChromaEpisodeStore(path=tmp_path / "salvaged") as store:
        assert EpisodicMemory(store=store).recall(QUERY), "recall answers from the new folder"
    code, out, _ = run(capsys, "verify", "--path", str(tmp_path / "salvaged"))
    assert code == 0, out
    assert "all readable" in out


def test_the_journal_lessons_quarantine_and_every_namespace_come_back(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        memory = EpisodicMemory(store=store)
        memory.record_many(corpus(12))
        memory.lessons.add([a_lesson(source="ep-1")])
        memory.runs.note("run-1", ["ep-1", "ep-2"], QUERY)
        memory.runs.credit("run-1", 1.0)
        memory.quarantine.add(["ep-7"], "misleads the agent")
        EpisodicMemory(store=store, namespace="bob").record_many(BOB)
        expected = {e.episode_id: e for e in memory.episodes()}
    for segment in {header.parent for header in path.glob("*/header.bin")}:
        shutil.rmtree(segment)  # every vector index gone: Chroma cannot answer
    with open(path / "chroma.sqlite3", "r+b") as handle:
        handle.write(b"NOT A DATABASE!!")  # nor can SQLite, until the copy is repaired

    report = salvage_folder(path, tmp_path / "salvaged")
    assert report.complete, report.lines()
    assert report.repaired  # the header's magic string, in the copy
    assert [(n.namespace, n.episodes) for n in report.namespaces] == [
        ("default", 12),
        ("bob", len(BOB)),
    ]
    (default, _) = report.namespaces
    assert (default.journal_entries, default.lessons) == (3, 1)
    assert salvaged_episodes(tmp_path / "salvaged") == expected
    assert salvaged_episodes(tmp_path / "salvaged", "bob") == {e.episode_id: e for e in BOB}
    with ChromaEpisodeStore(path=tmp_path / "salvaged") as store:
        memory = EpisodicMemory(store=store)
        assert [lesson.title for lesson in memory.lessons.list()] == [a_lesson().title]
        assert [event.run_id for event in memory.runs.log()] == ["run-1"]
        assert set(memory.quarantine.list()) == {"ep-7"}
        assert memory.recall(QUERY)
    code, out, _ = run(capsys, "verify", "--path", str(tmp_path / "salvaged"))
    assert code == 0, out


def test_a_partly_garbled_database_gives_back_what_is_readable_and_names_the_rest(
    sound_folder: Path, originals: dict[str, Episode], tmp_path: Path
) -> None:
    damaged = tmp_path / "damaged"
    shutil.copytree(sound_folder, damaged)
    database = damaged / "chroma.sqlite3"
    # Which episodes' records lie on which pages, read from the sound database.
    scan = scan_pages(database.read_bytes())
    names = {r.rowid: r.values[2] for r in scan.rows if len(r.values) == 5 and r.values[0] is None}
    pages = sorted({r.page for r in scan.rows if len(r.values) == 6 and r.values[1] == "episode"})
    garbled = pages[len(pages) // 3 : len(pages) // 3 + 4]  # four leaves of records
    lost = {
        names[r.values[0]]
        for r in scan.rows
        if r.page in garbled and len(r.values) == 6 and r.values[1] == "episode"
    }
    assert lost, "the garbled pages held records"
    for page in garbled:
        garble(database, (page - 1) * 4096, 4096, seed=page)
    with pytest.raises(sqlite3.DatabaseError):  # SQL alone can no longer read the table
        sqlite3.connect(database).execute("SELECT * FROM embedding_metadata").fetchall()

    report = salvage_folder(damaged, tmp_path / "salvaged")
    recovered = salvaged_episodes(tmp_path / "salvaged")
    assert set(recovered) == set(originals) - lost
    assert all(recovered[i] == originals[i] for i in recovered)
    (default,) = report.namespaces
    assert set(default.damaged) == lost  # each one not recovered is named, with why
    assert all(why for why in default.damaged.values())
    assert not report.complete
    assert any(line.startswith("table embedding_metadata:") for line in report.unreadable)
    text = "\n".join(report.lines())
    assert f"not recovered: {sorted(lost)[0]!r}" in text


def test_the_target_must_be_new_and_the_source_a_memory(sound_folder: Path, tmp_path: Path) -> None:
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "notes.txt").write_text("mine")
    with pytest.raises(EpisodicValueError, match="exists and is not an empty folder"):
        salvage_folder(sound_folder, tmp_path / "full")
    assert (tmp_path / "full" / "notes.txt").read_text() == "mine"
    with pytest.raises(EpisodicValueError, match="is the damaged folder itself"):
        salvage_folder(sound_folder, sound_folder)
    (tmp_path / "empty").mkdir()
    with pytest.raises(EpisodicValueError, match="holds no Chroma database"):
        salvage_folder(tmp_path / "empty", tmp_path / "out")
    with pytest.raises(EpisodicValueError, match="is not a folder"):
        salvage_folder(tmp_path / "nothing", tmp_path / "out")


def test_a_namespace_built_with_another_model_is_reported_not_written(tmp_path: Path) -> None:
    from langchain_episodic import HashingEmbeddings  # noqa: PLC0415

    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store, embeddings=HashingEmbeddings(dimensions=64)).record_many(BOB)
    # Given the wrong model, the namespace is read, reported, and left out.
    report = salvage_folder(path, tmp_path / "wrong", embeddings=HashingEmbeddings(dimensions=32))
    (only,) = report.namespaces
    assert only.not_written is not None
    assert "another model" in only.not_written
    assert not report.complete
    # The stored fingerprint names one of the package's models: it is rebuilt from it.
    report = salvage_folder(path, tmp_path / "right")
    assert report.complete
    model = HashingEmbeddings(dimensions=64)  # the new folder opens with the stored model
    assert salvaged_episodes(tmp_path / "right", embeddings=model).keys() == {
        e.episode_id for e in BOB
    }
