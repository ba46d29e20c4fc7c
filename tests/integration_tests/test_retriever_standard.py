"""LangChain's standard retriever suite, unchanged, against EpisodicRetriever."""

from __future__ import annotations

from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_episodic import EpisodicMemory, EpisodicRetriever
from tests.helpers.episodes import corpus

_MEMORY = EpisodicMemory(clock=lambda: 86_400.0)
_MEMORY.record_many(corpus(36))  # three near-copies of the query task: k=3 relevant


class TestEpisodicRetrieverStandard(RetrieversIntegrationTests):
    @property
    def retriever_constructor(self) -> type[EpisodicRetriever]:
        return EpisodicRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": _MEMORY}

    @property
    def retriever_query_example(self) -> str:
        return "Fix the login bug"
