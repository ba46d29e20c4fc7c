"""Every store the package ships, opened the way a new process would see it.

A :class:`StoreHarness` opens a store over the same data as often as a test asks: a
new client object for Chroma on disk and on a server, reloaded files for FAISS, the
same object for the in-memory store (which has nothing to reload), and a
:class:`VectorStoreEpisodeStore` over FAISS (saved with ``save_local``, reloaded with
``load_local``) and over langchain-chroma on disk, each with a file ledger, and a
:class:`LangGraphEpisodeStore` over LangGraph's ``InMemoryStore`` (a new wrapper over
the same LangGraph store on every open). The ``harness`` fixture of
tests/store_suite/conftest.py gives one of each.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import chromadb
import faiss
import psycopg
import pytest
from langchain_chroma import Chroma
from langchain_classic.storage import LocalFileStore
from langchain_community.docstore.in_memory import InMemoryDocstore
from langchain_community.vectorstores import FAISS
from langgraph.store.memory import InMemoryStore
from langgraph.store.postgres import PostgresStore
from psycopg.rows import dict_row

from langchain_episodic import ChromaEpisodeStore
from langchain_episodic.embeddings.builtin import default_embeddings
from langchain_episodic.stores import (
    EpisodeStore,
    InMemoryEpisodeStore,
    LangGraphEpisodeStore,
    VectorStoreEpisodeStore,
)
from tests.postgres_server import fresh_database

# The memories of the suite embed with the package's default model; stores that embed
# texts themselves (langchain-chroma) must use the same model.
EMBEDDINGS = default_embeddings()


@dataclass
class StoreHarness:
    """How a test reaches one kind of store."""

    kind: str
    open: Callable[[], EpisodeStore]
    """A store over the same data, as a fresh process would open it."""
    persistent: bool


def chroma_embedded_harness(tmp_path: Path) -> StoreHarness:
    return StoreHarness(
        "chroma-embedded", lambda: ChromaEpisodeStore(path=tmp_path / "chroma"), True
    )


def chroma_server_harness(request: pytest.FixtureRequest) -> StoreHarness:
    host, port = request.getfixturevalue("chroma_server_address")
    name = request.getfixturevalue("unique_name")
    return StoreHarness(
        "chroma-server",
        lambda: ChromaEpisodeStore(
            client=chromadb.HttpClient(host=host, port=port), collection_name=name
        ),
        True,
    )


def in_memory_harness() -> StoreHarness:
    store = InMemoryEpisodeStore()
    return StoreHarness("in-memory", lambda: store, False)


def faiss_harness(tmp_path: Path) -> StoreHarness:
    folder, ledger = str(tmp_path / "faiss"), tmp_path / "ledger"

    def open_store() -> EpisodeStore:
        if (tmp_path / "faiss" / "index.faiss").exists():
            vectors = FAISS.load_local(folder, EMBEDDINGS, allow_dangerous_deserialization=True)
        else:
            vectors = FAISS(
                embedding_function=EMBEDDINGS,
                index=faiss.IndexFlatIP(len(EMBEDDINGS.embed_query("dimension"))),
                docstore=InMemoryDocstore(),
                index_to_docstore_id={},
            )
        return VectorStoreEpisodeStore(
            vectors,
            ledger=LocalFileStore(ledger),
            persist=lambda store: store.save_local(folder),  # type: ignore[attr-defined]
        )

    return StoreHarness("faiss", open_store, True)


def langchain_chroma_harness(tmp_path: Path) -> StoreHarness:
    def open_store() -> EpisodeStore:
        vectors = Chroma(
            collection_name="episodes",
            embedding_function=EMBEDDINGS,
            client=chromadb.PersistentClient(path=str(tmp_path / "chroma")),
            collection_configuration={"hnsw": {"space": "cosine"}},
        )
        return VectorStoreEpisodeStore(vectors, ledger=LocalFileStore(tmp_path / "ledger"))

    return StoreHarness("langchain-chroma", open_store, True)


def langgraph_memory_harness() -> StoreHarness:
    graph_store = InMemoryStore(
        index={"dims": len(EMBEDDINGS.embed_query("dimension")), "embed": EMBEDDINGS}
    )
    return StoreHarness("langgraph-memory", lambda: LangGraphEpisodeStore(graph_store), True)


POSTGRES_INDEX_KIND = "hnsw"
"""pgvector's index in the suite: the default of LangGraph's ``PostgresStore`` (approximate)."""


def postgres_graph_store(uri: str) -> tuple[PostgresStore, psycopg.Connection[dict[str, object]]]:
    """LangGraph's ``PostgresStore`` over a new connection to ``uri``, with a vector index.

    The caller closes the connection.
    """
    connection = psycopg.Connection.connect(
        uri, autocommit=True, prepare_threshold=0, row_factory=dict_row
    )
    graph_store = PostgresStore(
        connection,
        index={
            "dims": len(EMBEDDINGS.embed_query("dimension")),
            "embed": EMBEDDINGS,
            "ann_index_config": {"kind": POSTGRES_INDEX_KIND},
            "distance_type": "cosine",
        },
    )
    graph_store.setup()
    return graph_store, connection


def langgraph_postgres_harness(request: pytest.FixtureRequest) -> StoreHarness:
    uri = fresh_database(request.getfixturevalue("postgres_uri"))
    connections: list[psycopg.Connection[dict[str, object]]] = []

    def open_store() -> EpisodeStore:
        graph_store, connection = postgres_graph_store(uri)
        connections.append(connection)
        return LangGraphEpisodeStore(graph_store)

    def close_all() -> None:
        for connection in connections:
            connection.close()

    request.addfinalizer(close_all)
    return StoreHarness("langgraph-postgres", open_store, True)
