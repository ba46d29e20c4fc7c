"""The private copy a folder no one may write is read from."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from langchain_episodic import StoreConfigurationError
from langchain_episodic.stores.chroma.snapshot import readable_copy


def test_the_copy_holds_chromas_files_not_the_lock_and_goes_afterwards(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    (folder / "segment").mkdir(parents=True)
    (folder / "chroma.sqlite3").write_bytes(b"db")
    (folder / "segment" / "header.bin").write_bytes(b"h")
    (folder / ".langchain-episodic.lock").write_text("1\n", "ascii")
    with readable_copy(str(folder)) as copy:
        assert sorted(os.listdir(copy)) == ["chroma.sqlite3", "segment"]
        assert Path(copy, "segment", "header.bin").read_bytes() == b"h"
        Path(copy, "chroma.sqlite3").write_bytes(b"written")  # the copy is writable
    assert not Path(copy).exists()
    assert (folder / "chroma.sqlite3").read_bytes() == b"db"


def test_a_folder_that_cannot_be_copied_is_one_typed_error(tmp_path: Path) -> None:
    copying = readable_copy(str(tmp_path / "missing"))
    with pytest.raises(StoreConfigurationError, match=r"could not be copied to read it"):
        copying.__enter__()
