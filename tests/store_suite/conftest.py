"""Every store the package ships, behind one fixture, for the shared behaviour suite.

A :class:`StoreHarness` opens a store over the same data as often as a test asks, the
way a new process would see it: a new client object for Chroma on disk and on a
server, reloaded files for FAISS, the same object for the in-memory store (which has
nothing to reload).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import chromadb
import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodeStore


@dataclass
class StoreHarness:
    """How a test reaches one kind of store."""

    kind: str
    open: Callable[[], EpisodeStore]
    """A store over the same data, as a fresh process would open it."""
    persistent: bool


def _chroma_embedded(tmp_path: Path) -> StoreHarness:
    return StoreHarness(
        "chroma-embedded", lambda: ChromaEpisodeStore(path=tmp_path / "chroma"), True
    )


def _chroma_server(request: pytest.FixtureRequest) -> StoreHarness:
    host, port = request.getfixturevalue("chroma_server_address")
    name = request.getfixturevalue("unique_name")
    return StoreHarness(
        "chroma-server",
        lambda: ChromaEpisodeStore(
            client=chromadb.HttpClient(host=host, port=port), collection_name=name
        ),
        True,
    )


def _in_memory() -> StoreHarness:
    from langchain_episodic.in_memory_store import InMemoryEpisodeStore  # noqa: PLC0415

    store = InMemoryEpisodeStore()
    return StoreHarness("in-memory", lambda: store, False)


STORE_KINDS = ["chroma-embedded", "chroma-server"]


@pytest.fixture(params=STORE_KINDS)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> StoreHarness:
    kind = request.param
    if kind == "chroma-embedded":
        return _chroma_embedded(tmp_path)
    if kind == "chroma-server":
        return _chroma_server(request)
    if kind == "in-memory":
        return _in_memory()
    raise AssertionError(kind)
