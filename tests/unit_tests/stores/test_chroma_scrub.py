"""Scrubbing: the bytes of deleted records zeroed, so a forgotten episode is gone from disk."""

from __future__ import annotations

from pathlib import Path

from langchain_episodic.stores.chroma_scrub import scrub_hnsw, zero_from


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
