"""The memory against a real Chroma server (``chroma run``) through ``chromadb.HttpClient``."""

from __future__ import annotations

from pathlib import Path

import chromadb
import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.scoring.skills import compute_skill_profiles
from tests.chroma_server import chroma_server
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import assert_same_profiles, make_episode


@pytest.fixture
def server(chroma_server_client: chromadb.api.ClientAPI) -> chromadb.api.ClientAPI:
    return chroma_server_client


def test_record_and_recall_through_http_client(
    server: chromadb.api.ClientAPI, unique_name: str
) -> None:
    memory = EpisodicMemory(store=ChromaEpisodeStore(client=server, collection_name=unique_name))
    episodes = corpus(24)
    assert memory.record_many(episodes) == 24
    assert memory.record(episodes[0]) is False
    local = EpisodicMemory()
    local.record_many(episodes)
    for query in ("Fix the login session bug", "payment refactoring"):
        remote_hits = memory.recall(query, top_k=3, current_time=86_400.0)
        local_hits = local.recall(query, top_k=3, current_time=86_400.0)
        assert [h.episode for h in remote_hits] == [h.episode for h in local_hits]
    assert list(memory.episodes(page_size=5)) == episodes


def test_namespaces_on_a_server_are_separate(
    server: chromadb.api.ClientAPI, unique_name: str
) -> None:
    store = ChromaEpisodeStore(client=server, collection_name=unique_name)
    ours = EpisodicMemory(store=store, namespace="ours")
    theirs = EpisodicMemory(store=store, namespace="theirs")
    ours.record_many(corpus(4))
    theirs.record(make_episode(episode_id="ep-0", description="Plot monthly sales"))
    assert (len(ours), len(theirs)) == (4, 1)
    assert store.namespaces() == ("ours", "theirs")


def test_server_restart_keeps_everything(tmp_path: Path) -> None:
    data = tmp_path / "data"
    episodes = corpus(6_000, spacing=1.0)
    with chroma_server(data) as client:
        EpisodicMemory(store=ChromaEpisodeStore(client=client)).record_many(episodes)
    with chroma_server(data) as client:
        memory = EpisodicMemory(store=ChromaEpisodeStore(client=client))
        assert len(memory) == 6_000
        assert memory.short_term == tuple(episodes[-5:])
        assert_same_profiles(memory.skill_profiles(), compute_skill_profiles(episodes))
        hits = memory.recall("Write unit tests for the CSV parser", top_k=3)
        assert hits[0].episode.task.description.startswith("Write unit tests for the CSV parser")


def test_tenants_and_databases_isolate_completely(
    chroma_server_address: tuple[str, int], unique_name: str
) -> None:
    host, port = chroma_server_address
    admin = chromadb.AdminClient(
        chromadb.Settings(
            chroma_server_host=host,
            chroma_server_http_port=port,
            chroma_api_impl="chromadb.api.fastapi.FastAPI",
        )
    )
    clients = {}
    for tenant in (f"{unique_name}-acme", f"{unique_name}-globex"):
        admin.create_tenant(tenant)
        admin.create_database("agents", tenant=tenant)
        clients[tenant] = chromadb.HttpClient(
            host=host, port=port, tenant=tenant, database="agents"
        )
    acme, globex = (EpisodicMemory(store=ChromaEpisodeStore(client=c)) for c in clients.values())
    acme.record_many(corpus(6))
    # Same collection name, same namespace, same episode id: another tenant never sees it.
    lookalike = make_episode(episode_id="ep-0", description="Plot monthly sales")
    globex.record(lookalike)
    assert (len(acme), len(globex)) == (6, 1)
    # The subject is isolation, not ranking: the article's ranking returns every
    # candidate the search finds (the default returns nothing for a query unrelated to
    # globex's one episode), so an episode leaking from acme would show up here.
    assert globex.recall("Implement a login form", top_k=5, ranking="article")[0].episode == (
        lookalike
    )
    hits = globex.recall("login form", top_k=5, ranking="article")
    assert [hit.episode.episode_id for hit in hits] == ["ep-0"]
    assert acme.store.get("default", ["ep-0"])["ep-0"] != lookalike


def test_a_running_servers_folder_takes_the_store_indexes_and_reads_the_same(
    tmp_path: Path,
) -> None:
    # What docs/scaling.md tells a server's operator to run on the server's machine.
    import sqlite3  # noqa: PLC0415

    from langchain_episodic.stores.chroma.folder import (  # noqa: PLC0415
        FOLDER_INDEXES,
        index_the_folder,
    )

    data = tmp_path / "data"
    with chroma_server(data) as client:
        store = ChromaEpisodeStore(client=client)
        users = [EpisodicMemory(store=store, namespace=f"user-{i}") for i in range(3)]
        for i, memory in enumerate(users):
            memory.record_many(corpus(6 + i))
        before = [[h.episode.episode_id for h in m.recall("Fix the login bug")] for m in users]
        index_the_folder(str(data))  # while the server runs
        connection = sqlite3.connect(data / "chroma.sqlite3")
        try:
            names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master")}
        finally:
            connection.close()
        assert set(FOLDER_INDEXES) <= names
        after = [[h.episode.episode_id for h in m.recall("Fix the login bug")] for m in users]
        assert after == before
        assert any(before)
        users[0].record(make_episode(episode_id="after-indexing"))  # the server still writes
        assert len(EpisodicMemory(store=store, namespace="user-0")) == 7
