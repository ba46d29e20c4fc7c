"""Fixtures shared by unit and integration tests."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromadb.api import ClientAPI
from hypothesis import settings

from tests.chroma_server import (
    chroma_server,
    free_port,
    server_address_from_env,
    wait_for_heartbeat,
)
from tests.postgres_server import postgres_server, server_uri_from_env

# The asserts of the shared helpers explain their failures as a test's own would.
pytest.register_assert_rewrite("tests.helpers")

# Property tests are reproducible: the same examples on every run and machine, no
# example database left behind, no per-example deadline on a shared, noisy machine.
settings.register_profile("langchain-episodic", derandomize=True, database=None, deadline=None)
settings.load_profile("langchain-episodic")


@pytest.fixture(scope="session")
def chroma_server_address(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, int]]:
    """``(host, port)`` of a running Chroma server: CI's, or one started for this session."""
    address = server_address_from_env()
    if address is not None:
        wait_for_heartbeat(*address)
        yield address
        return
    port = free_port()
    with chroma_server(tmp_path_factory.mktemp("chroma-server") / "data", port):
        yield "127.0.0.1", port


@pytest.fixture(scope="session")
def postgres_uri(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The URI of a running PostgreSQL with pgvector: CI's, or one started for this session."""
    uri = server_uri_from_env()
    if uri is not None:
        yield uri
        return
    with postgres_server(tmp_path_factory.mktemp("postgres") / "data") as started:
        yield started


@pytest.fixture
def chroma_server_client(chroma_server_address: tuple[str, int]) -> ClientAPI:
    """A client of the shared Chroma server; give each test its own collection names."""
    return wait_for_heartbeat(*chroma_server_address)


@pytest.fixture
def unique_name() -> str:
    """A collection name no other test uses (the shared server outlives each test)."""
    return f"t-{uuid.uuid4().hex[:20]}"


@pytest.fixture
def server_data_path(tmp_path: Path) -> Path:
    """Where a private server of one test keeps its data."""
    return tmp_path / "server-data"
