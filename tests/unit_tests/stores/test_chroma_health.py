"""Diagnosing an embedded Chroma folder (the damaged folders themselves are in the suite
tests/unit_tests/test_damaged_folders.py)."""

from __future__ import annotations

from pathlib import Path

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.stores.chroma_health import diagnose_folder, free_bytes
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
