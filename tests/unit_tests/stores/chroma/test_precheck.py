"""The checks before Chroma opens a folder, and the record of files found sound."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StoreDamagedError
from langchain_episodic.stores.chroma.precheck import (
    CHECKED_FILE,
    check_before_open,
    damage_from_chroma,
)
from tests.helpers.damage import damage, segment_of
from tests.helpers.episodes import corpus


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(1_050))
    return path


def test_the_last_close_records_the_segments_found_sound(folder: Path) -> None:
    record = json.loads((folder / CHECKED_FILE).read_text("utf-8"))
    assert record["format"] == 1
    assert list(record["segments"]) == [segment_of(folder).name]


def test_a_record_that_no_longer_matches_is_checked_again(folder: Path) -> None:
    damage(folder, "hnsw header garbled")
    with pytest.raises(StoreDamagedError) as caught:
        check_before_open(str(folder))
    assert caught.value.path == str(folder)
    (problem,) = caught.value.problems
    assert problem.startswith(f"vector index file {segment_of(folder).name}/header.bin")


def test_a_copied_folder_is_checked_afresh(folder: Path, tmp_path: Path) -> None:
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)  # new inodes: the copied record matches nothing
    damage(copy, "hnsw links garbled")
    with pytest.raises(StoreDamagedError, match=r"link_lists\.bin is damaged"):
        check_before_open(str(copy))


def test_a_new_folder_is_not_checked(tmp_path: Path) -> None:
    check_before_open(str(tmp_path))  # no database yet: Chroma creates it
    assert not (tmp_path / CHECKED_FILE).exists()


def test_chromas_error_is_translated_with_the_files_at_fault(folder: Path) -> None:
    damage(folder, "hnsw pickle garbled")
    error = damage_from_chroma(str(folder), RuntimeError("Error loading hnsw index"))
    assert error.chroma_said == "Error loading hnsw index"
    assert "index_metadata.pickle is damaged" in str(error)
    assert "(Chroma said: Error loading hnsw index)" in str(error)
