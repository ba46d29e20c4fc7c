"""``VectorStoreEpisodeStore``: any LangChain vector store as the long-term tier.

Every store kind runs the behaviour suite in tests/store_suite/; these are its own rules.
"""

from __future__ import annotations

from langchain_core.vectorstores import InMemoryVectorStore

from langchain_episodic import EpisodicMemory, HashingEmbeddings
from langchain_episodic.stores.vectorstore import VectorStoreEpisodeStore
from tests.unit_tests.factories import make_episode


def memory_on(vectorstore: InMemoryVectorStore) -> EpisodicMemory:
    return EpisodicMemory(
        store=VectorStoreEpisodeStore(vectorstore),
        embeddings=HashingEmbeddings(),
        clock=lambda: 100.0,
    )


def test_episodes_round_trip_and_are_recalled_nearest_first() -> None:
    memory = memory_on(InMemoryVectorStore(HashingEmbeddings()))
    login = make_episode(episode_id="login", description="Fix the login form validation")
    csv = make_episode(episode_id="csv", description="Parse a CSV file with quoted fields")
    memory.record_many([login, csv])
    assert memory.get_episodes(["login"]) == {"login": login}
    (first, *_) = memory.recall("Fix the login form", top_k=2, ranking="article")
    assert first.episode == login


def test_namespaces_in_one_vector_store_never_meet() -> None:
    vectorstore = InMemoryVectorStore(HashingEmbeddings())
    memory_on(vectorstore).for_namespace("a").record(make_episode(episode_id="only-a"))
    other = memory_on(vectorstore).for_namespace("b")
    assert other.recall("Implement login form", top_k=5, ranking="article") == ()
    assert len(other) == 0
