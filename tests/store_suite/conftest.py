"""Every store the package ships, behind one fixture, for the shared behaviour suite.

``harness`` gives a :class:`~tests.helpers.stores.StoreHarness` for each kind of store;
the harnesses themselves live in tests/helpers/stores.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers.stores import (
    StoreHarness,
    chroma_embedded_harness,
    chroma_server_harness,
    faiss_harness,
    in_memory_harness,
    langchain_chroma_harness,
    langgraph_memory_harness,
    langgraph_postgres_harness,
)

STORE_KINDS = [
    "chroma-embedded",
    "chroma-server",
    "in-memory",
    "faiss",
    "langchain-chroma",
    "langgraph-memory",
    "langgraph-postgres",
]
# No "langgraph-sqlite": SqliteStore's vector index loads the sqlite-vec extension, and
# the Python of this project's machines is built without sqlite3 extension loading
# (``enable_load_extension``).


@pytest.fixture(params=STORE_KINDS)
def harness(request: pytest.FixtureRequest, tmp_path: Path) -> StoreHarness:
    kind = request.param
    if kind == "chroma-embedded":
        return chroma_embedded_harness(tmp_path)
    if kind == "chroma-server":
        return chroma_server_harness(request)
    if kind == "in-memory":
        return in_memory_harness()
    if kind == "faiss":
        return faiss_harness(tmp_path)
    if kind == "langchain-chroma":
        return langchain_chroma_harness(tmp_path)
    if kind == "langgraph-memory":
        return langgraph_memory_harness()
    if kind == "langgraph-postgres":
        return langgraph_postgres_harness(request)
    raise AssertionError(kind)
