"""Diagnosing an embedded Chroma folder (the damaged folders themselves are in the suite
tests/unit_tests/test_damaged_folders.py); the structural checks, file by file."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.stores.chroma_health import (
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
