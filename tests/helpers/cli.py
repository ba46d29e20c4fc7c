"""Running the ``langchain-episodic`` command in-process, on on-disk Chroma stores."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, Episode, EpisodicMemory
from langchain_episodic.cli import main


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
