"""Running the ``langchain-episodic`` command in-process, on on-disk Chroma stores."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, Episode, EpisodicMemory
from langchain_episodic.cli import main
from tests.unit_tests.factories import make_episode

QUERY = "Fix the login session bug"
"""A query that the 12-episode corpus answers, for the command's tests."""

GOOD = [
    make_episode(episode_id=f"good-{i}", description=f"Good task {i}", timestamp=float(i))
    for i in range(6)
]
"""Six valid episodes, for the command's export and import tests."""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def open_memory(path: Path, namespace: str = "default") -> EpisodicMemory:
    return EpisodicMemory(store=ChromaEpisodeStore(path=path), namespace=namespace)


def filled(path: Path, episodes: Sequence[Episode], namespace: str = "default") -> Path:
    open_memory(path, namespace).record_many(episodes)
    return path


def assert_one_line_error(err: str, *fragments: str) -> None:
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("error: ")
    assert "Traceback" not in err
    for fragment in fragments:
        assert fragment in lines[0]


def table_rows(out: str, first_header: str) -> list[list[str]]:
    """Rows of the table whose header starts with ``first_header``; cells split on 2+ spaces."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(first_header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith("("):
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows
