"""LangChain's standard retriever suite, unchanged, against EpisodicRetriever."""

from __future__ import annotations

from typing import Any

from langchain_tests.integration_tests import RetrieversIntegrationTests

from langchain_episodic import EpisodicMemory, EpisodicRetriever
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

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


def _three_about_login() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: 86_400.0)
    tasks = [
        "build login page",
        "fix login redirect bug",
        "test login api",
        # Not about the query: the relevance test turns them away.
        "Write unit tests for the CSV parser",
        "Refactor the payment module into smaller services",
        "Design the architecture of the notification service",
    ]
    memory.record_many(
        [
            make_episode(episode_id=f"task-{i}", description=text, timestamp=3600.0 * i)
            for i, text in enumerate(tasks)
        ]
    )
    return memory


_THREE_ABOUT_LOGIN = _three_about_login()


class TestEpisodicRetrieverStandardThreeDistinctTasks(RetrieversIntegrationTests):
    """The same suite where three *different* stored tasks are about the query.

    A margin below the best match used to keep only two of them ("fix login redirect
    bug" sat 0.18 below "build login page"), so the suite's ``k=3`` got two documents.
    """

    @property
    def retriever_constructor(self) -> type[EpisodicRetriever]:
        return EpisodicRetriever

    @property
    def retriever_constructor_params(self) -> dict[str, Any]:
        return {"memory": _THREE_ABOUT_LOGIN}

    @property
    def retriever_query_example(self) -> str:
        return "login"
