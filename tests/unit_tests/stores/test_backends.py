"""What a generic LangChain vector store is asked: its filter, its search, its scores."""

from __future__ import annotations

from langchain_core.vectorstores import InMemoryVectorStore

from langchain_episodic import HashingEmbeddings
from langchain_episodic.stores.backends import (
    is_faiss,
    namespace_filter_for,
    namespace_metadata_filter,
)


def test_the_default_namespace_filter_is_a_metadata_match() -> None:
    assert namespace_metadata_filter("team-a") == {"namespace": "team-a"}


def test_a_store_other_than_faiss_is_not_taken_for_faiss() -> None:
    assert not is_faiss(InMemoryVectorStore(HashingEmbeddings()))


def test_a_given_namespace_filter_is_used_as_given() -> None:
    def by_team(namespace: str) -> dict[str, str]:
        return {"team": namespace}

    assert namespace_filter_for(InMemoryVectorStore(HashingEmbeddings()), by_team) is by_team
