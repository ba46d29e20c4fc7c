"""Scrubbing: the bytes of deleted records zeroed, so a forgotten episode is gone from disk."""

from __future__ import annotations

from pathlib import Path

from langchain_episodic.stores.chroma_scrub import (
    SCRUB_PENDING,
    deleted_since_scrub,
    note_deleting,
    scrub_folder,
    scrub_hnsw,
    scrub_pending,
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
