"""Diagnosing an embedded Chroma folder (the damaged folders themselves are in the suite
tests/unit_tests/test_damaged_folders.py); the structural checks, file by file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.stores.chroma.health import (
    diagnose_folder,
    free_bytes,
    read_index_header,
    saved_segments,
    segment_problems,
    sqlite_header_problems,
    structural_problems,
)
from tests.helpers.damage import KINDS, damage, segment_of
from tests.helpers.episodes import corpus


def test_a_sound_folder_has_no_problem(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "memory")
    EpisodicMemory(store=store).record_many(corpus(3))
    store.close()
    assert diagnose_folder(str(tmp_path / "memory")) == []


def test_free_bytes_of_a_folder_is_a_count_of_bytes(tmp_path: Path) -> None:
    free = free_bytes(str(tmp_path))
    assert isinstance(free, int)
    assert free > 0


@pytest.fixture(scope="module")
def sound(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("sound") / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(1_100))
    return path


def test_a_sound_folder_has_no_problem_and_its_segment_is_saved(sound: Path) -> None:
    assert structural_problems(str(sound)) == []
    assert saved_segments(str(sound)) == [str(segment_of(sound))]
    header = read_index_header(str(segment_of(sound)))
    assert header is not None
    assert header.consistent
    assert header.count == 1_100


@pytest.mark.parametrize("kind", sorted(kind for kind in KINDS if kind != "sqlite garbled"))
def test_each_damage_is_found_naming_the_file(sound: Path, tmp_path: Path, kind: str) -> None:
    # A garbled page inside the database is sqlite's integrity check's to find.
    path = tmp_path / "memory"
    shutil.copytree(sound, path)
    damage(path, kind)
    problems = structural_problems(str(path))
    assert len(problems) == 1, problems
    assert KINDS[kind] in problems[0]


def test_an_unsaved_segment_may_lack_files(tmp_path: Path) -> None:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(4))
    (segment,) = {header.parent for header in path.glob("*/header.bin")}
    assert not (segment / "index_metadata.pickle").exists()  # Chroma has not saved it
    assert saved_segments(str(path)) == []
    assert segment_problems(str(segment)) == []


def test_a_truncated_sqlite_file_is_found_from_its_header(sound: Path, tmp_path: Path) -> None:
    database = tmp_path / "chroma.sqlite3"
    shutil.copyfile(sound / "chroma.sqlite3", database)
    assert sqlite_header_problems(str(database)) == []
    with open(database, "r+b") as handle:
        handle.truncate(database.stat().st_size - 4096)
    assert sqlite_header_problems(str(database)) == [
        "chroma.sqlite3 is damaged: shorter than its header says (truncated)"
    ]


_CUT_SHORT = r"""
import os, sqlite3, sys
connection = sqlite3.connect(os.path.join(sys.argv[1], "chroma.sqlite3"), isolation_level=None)
connection.execute("PRAGMA cache_size=2")  # pages spill to the file: the journal is hot
connection.execute("BEGIN IMMEDIATE")
connection.execute("CREATE TABLE cut_short(x BLOB)")
for _ in range(200):
    connection.execute("INSERT INTO cut_short VALUES (?)", (os.urandom(4000),))
os._exit(9)  # killed inside the write, at a chosen point
"""


def test_a_write_cut_short_is_reported_as_interrupted_never_as_damage(tmp_path: Path) -> None:
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415

    from langchain_episodic import HashingEmbeddings, episode_from_tests  # noqa: PLC0415
    from langchain_episodic.cli import main  # noqa: PLC0415
    from langchain_episodic.stores.chroma.health import (  # noqa: PLC0415
        ROLLBACK_JOURNAL,
        interrupted_write,
    )

    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, embeddings=HashingEmbeddings())
    memory.record_many(
        [episode_from_tests(f"task {i}", "x", 1, 1, episode_id=f"e{i}") for i in range(5)]
    )
    store.close()
    subprocess.run([sys.executable, "-c", _CUT_SHORT, str(folder)], check=False, timeout=60)
    assert (folder / ROLLBACK_JOURNAL).stat().st_size > 0
    assert interrupted_write(str(folder))
    assert diagnose_folder(str(folder)) == []  # was "chroma.sqlite3 is damaged: readonly"
    assert (folder / ROLLBACK_JOURNAL).exists()  # the diagnosis changed nothing
    assert main(["--path", str(folder), "verify"]) == 0
    reopened = ChromaEpisodeStore(path=folder)
    assert len(EpisodicMemory(store=reopened, embeddings=HashingEmbeddings())) == 5
    reopened.close()
    assert not interrupted_write(str(folder))  # the open rolled it back
