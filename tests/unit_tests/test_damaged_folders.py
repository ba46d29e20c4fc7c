"""A folder that held a memory never opens as an empty one.

Chroma opens a zero-length or missing ``chroma.sqlite3`` as a new, empty database and
writes into it: the user's history would be gone without a word. A marker written once
the folder holds a database makes the store refuse such a folder, naming it, before
Chroma touches it; the CLI says the same in one line.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, StoreConfigurationError
from tests.helpers.cli import assert_one_line_error, run
from tests.helpers.episodes import corpus

MARKER = ".langchain-episodic-store"


def filled(path: Path) -> Path:
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(4))
    return path


@pytest.mark.parametrize("damage", ["truncate", "delete"])
def test_a_lost_database_is_refused_not_opened_empty(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: str
) -> None:
    path = filled(tmp_path / "memory")
    database = path / "chroma.sqlite3"
    if damage == "truncate":
        database.write_bytes(b"")
    else:
        database.unlink()
    with pytest.raises(StoreConfigurationError, match="held a memory, but its database"):
        ChromaEpisodeStore(path=path)
    assert not database.exists() or database.stat().st_size == 0  # nothing was written
    code, _, err = run(capsys, "stats", "--path", str(path))
    assert code == 2
    assert_one_line_error(err, "held a memory", "Restore the folder from a backup")
    # The lock was given back: a later store (after a restore) may open the folder.
    with pytest.raises(StoreConfigurationError):
        ChromaEpisodeStore(path=path)


def test_a_folder_from_before_the_marker_is_adopted(tmp_path: Path) -> None:
    path = filled(tmp_path / "memory")
    (path / MARKER).unlink()
    with ChromaEpisodeStore(path=path) as store:
        assert len(EpisodicMemory(store=store)) == 4
    assert (path / MARKER).is_file()


def test_a_new_folder_is_marked_once_chroma_created_its_database(tmp_path: Path) -> None:
    path = tmp_path / "fresh"
    with ChromaEpisodeStore(path=path):
        pass
    assert (path / "chroma.sqlite3").is_file()
    assert (path / MARKER).is_file()
