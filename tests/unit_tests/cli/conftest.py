"""Fixtures of the command's tests: the 12-episode corpus on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.cli import filled
from tests.helpers.episodes import corpus


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 12-episode corpus on disk, shared by the tests that only read it."""
    return filled(tmp_path_factory.mktemp("shared") / "memory", corpus(12))


@pytest.fixture
def fresh_store(tmp_path: Path) -> Path:
    """The 12-episode corpus on disk, for a test that writes to it."""
    return filled(tmp_path / "memory", corpus(12))
