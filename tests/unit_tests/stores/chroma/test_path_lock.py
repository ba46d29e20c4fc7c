"""The folder lock's registry: shares counted per process, released once, and never a
deadlock when a share is released from inside the registry's own section (what a
garbage-collector finalizer of a dropped store does when it runs mid-section)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from langchain_episodic.errors import StoreLockedError
from langchain_episodic.stores.chroma import _path_lock
from langchain_episodic.stores.chroma._path_lock import LOCK_FILE_NAME, acquire_path_lock


def _held_elsewhere(folder: Path) -> bool:
    """Whether a child process is refused the lock (i.e. this process still holds it)."""
    pid = os.fork()
    if pid == 0:  # pragma: no cover - runs in the child
        try:
            acquire_path_lock(str(folder)).release()
        except StoreLockedError:
            os._exit(1)
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status) == 1


def test_the_last_share_releases_the_folder(tmp_path: Path) -> None:
    first = acquire_path_lock(str(tmp_path))
    second = acquire_path_lock(str(tmp_path))
    assert first.first
    assert not second.first
    assert first.share is second.share
    first.release()
    first.release()  # once only: the second share still holds the folder
    assert _held_elsewhere(tmp_path)
    second.release()
    assert not _held_elsewhere(tmp_path)
    assert (tmp_path / LOCK_FILE_NAME).is_file()


def test_a_release_inside_the_registry_section_neither_deadlocks_nor_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dropped_folder = tmp_path / "dropped"
    dropped = acquire_path_lock(str(dropped_folder))
    real_try_acquire = _path_lock._try_acquire
    held_during_section: list[bool] = []

    def collected_midway(key: str, folder: str) -> tuple[_path_lock.FolderShare, bool] | None:
        # As a finalizer would: the garbage collector runs inside the section.
        dropped.release()
        held_during_section.append(bool(_path_lock._registry))
        return real_try_acquire(key, folder)

    monkeypatch.setattr(_path_lock, "_try_acquire", collected_midway)
    result: list[_path_lock.PathLock] = []
    worker = threading.Thread(
        target=lambda: result.append(acquire_path_lock(str(tmp_path / "opened"))), daemon=True
    )
    worker.start()
    worker.join(timeout=30)
    assert not worker.is_alive(), "acquiring a lock deadlocked on a nested release"
    monkeypatch.setattr(_path_lock, "_try_acquire", real_try_acquire)
    assert held_during_section == [True]  # left to the section, not released inside it
    assert not _held_elsewhere(dropped_folder)  # released as the section ended
    assert _held_elsewhere(tmp_path / "opened")
    result[0].release()
    assert not _held_elsewhere(tmp_path / "opened")


def test_a_release_nested_in_a_release_is_done_too(tmp_path: Path) -> None:
    inner = acquire_path_lock(str(tmp_path / "inner"))
    outer = acquire_path_lock(str(tmp_path / "outer"))
    outer.share.on_last_release.append(inner.release)  # runs inside outer's release
    done = threading.Event()

    def release_outer() -> None:
        outer.release()
        done.set()

    threading.Thread(target=release_outer, daemon=True).start()
    assert done.wait(timeout=30), "a release nested in a release deadlocked"
    assert not _held_elsewhere(tmp_path / "inner")
    assert not _held_elsewhere(tmp_path / "outer")
