"""EpisodicRetriever: the memory as a LangChain ``BaseRetriever``."""

from __future__ import annotations

from typing import Any, ClassVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from pydantic import ConfigDict

from langchain_episodic.integrations._fields import RecallOptionsFields
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.recall_options import RecallOptions
from langchain_episodic.replay import render_episode
from langchain_episodic.scoring import PrioritizedResult

__all__ = ["EpisodicRetriever", "result_to_document"]


def result_to_document(result: PrioritizedResult) -> Document:
    """A recalled episode as a ``Document``: rendered text plus its scores as metadata."""
    episode = result.episode
    return Document(
        id=episode.episode_id,
        page_content=render_episode(episode),
        metadata={
            "episode_id": episode.episode_id,
            "similarity": result.similarity,
            "priority": result.priority,
            "outcome": episode.outcome.value,
            "reward": episode.feedback.reward,
            "strategy_used": episode.strategy_used,
            "timestamp": episode.timestamp,
            "category": episode.task.category.value,
            "complexity": episode.task.complexity,
            "task": episode.task.description,
            "iterations": episode.iterations,
            "tests_passed": episode.feedback.tests_passed,
            "tests_total": episode.feedback.tests_total,
            "pass_rate": episode.feedback.pass_rate,
        },
    )


class EpisodicRetriever(BaseRetriever, RecallOptionsFields):
    """Past episodes ranked by replay priority, as LangChain ``Document``s.

    Setup:
        .. code-block:: bash

            pip install langchain-episodic

    Instantiate:
        .. code-block:: python

            from langchain_episodic import EpisodicMemory, EpisodicRetriever

            memory = EpisodicMemory()
            retriever = EpisodicRetriever(memory=memory, k=3)   # or memory.as_retriever(k=3)

    Usage:
        .. code-block:: python

            docs = retriever.invoke("Fix the login crash")
            docs = retriever.invoke("Fix the login crash", k=1, category="debugging")
            docs[0].metadata["priority"], docs[0].metadata["outcome"]

    Async:
        .. code-block:: python

            docs = await retriever.ainvoke("Fix the login crash")

    Each document's ``page_content`` renders the episode (task, outcome, reward,
    strategy, pass rate, feedback, solution) and its ``metadata`` holds
    ``episode_id``, ``similarity``, ``priority``, ``outcome``, ``reward``,
    ``strategy_used``, ``timestamp``, ``category`` and the other scalar fields.
    Recall options (:class:`~langchain_episodic.RecallOptions`) are given flat, as
    in ``memory.as_retriever(k=3, category="debugging")``, or as ``options=``; any of
    them can also be given per call as a keyword of ``invoke``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    memory: EpisodicMemory
    """Where episodes are recalled from."""
    top_k_name: ClassVar[str] = "k"

    @property
    def k(self) -> int:
        """How many documents to return (``options.top_k``)."""
        return self.options.top_k

    def _options(self, k: int | None, overrides: dict[str, Any]) -> RecallOptions:
        if k is not None:
            overrides = {**overrides, "top_k": k}
        return self.options.replace(**overrides) if overrides else self.options

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        results = self.memory.recall_with(query, self._options(k, kwargs))
        return [result_to_document(result) for result in results]

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        results = await self.memory.arecall_with(query, self._options(k, kwargs))
        return [result_to_document(result) for result in results]
