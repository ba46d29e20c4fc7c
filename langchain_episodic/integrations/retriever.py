"""EpisodicRetriever: the memory as a LangChain ``BaseRetriever``."""

from __future__ import annotations

from typing import Any, ClassVar

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict

from langchain_episodic.integrations._fields import RecallOptionsFields
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.prompting.episodes import render_episode
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import RecallReport, why_recalled

__all__ = ["EpisodicRetriever", "report_to_documents", "result_to_document"]


def result_to_document(result: PrioritizedResult, report: RecallReport | None = None) -> Document:
    """A recalled episode as a ``Document``: rendered text plus its scores as metadata.

    With the ``report`` it came from, the metadata also says why it was recalled:
    ``relevant``, ``ranking``, ``relevance_threshold``, ``why`` and
    ``nearest_rejected`` (``{"episode_id", "similarity", "reason"}`` of the most
    similar candidate that failed the relevance test, or ``None``). An episode with
    provenance has it under ``source`` (:meth:`EpisodeSource.to_dict`: agent, run,
    thread and turn, namespace).
    """
    episode = result.episode
    metadata: dict[str, Any] = {
        "episode_id": episode.episode_id,
        "similarity": result.similarity,
        "priority": result.priority,
        "relevant": result.relevant,
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
    }
    if episode.source is not None:
        metadata["source"] = episode.source.to_dict()
    if report is not None:
        nearest = report.nearest_rejected
        metadata.update(
            ranking=report.ranking,
            relevance_threshold=report.threshold,
            why=why_recalled(result, report),
            nearest_rejected=None
            if nearest is None
            else {
                "episode_id": nearest.episode_id,
                "similarity": nearest.similarity,
                "reason": nearest.reason,
            },
        )
    return Document(id=episode.episode_id, page_content=render_episode(episode), metadata=metadata)


def report_to_documents(report: RecallReport) -> list[Document]:
    """Every result of ``report`` as a ``Document``, best first (:func:`result_to_document`)."""
    return [result_to_document(result, report) for result in report.results]


class EpisodicRetriever(BaseRetriever, RecallOptionsFields):
    """Past episodes relevant to the query, ranked by replay priority, as ``Document``s.

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
            docs[0].metadata["why"], docs[0].metadata["nearest_rejected"]

    Async:
        .. code-block:: python

            docs = await retriever.ainvoke("Fix the login crash")

    Each document's ``page_content`` renders the episode (task, outcome, reward,
    strategy, pass rate, feedback, solution) and its ``metadata`` holds
    ``episode_id``, ``similarity``, ``priority``, ``outcome``, ``reward``,
    ``strategy_used``, ``timestamp``, ``category`` and the other scalar fields, and
    why it was recalled: ``relevant``, ``ranking``, ``relevance_threshold``, ``why``
    (e.g. ``"similarity 0.62 >= threshold 0.47; ..."``) and ``nearest_rejected``
    (``{"episode_id", "similarity", "reason"}`` of the most similar candidate that
    failed the relevance test, or ``None``). By default only relevant episodes come
    back, possibly fewer than ``k``; ``ranking="article"`` ranks by the article's
    priority and returns the top ``k`` whatever their relevance, flagged by
    ``relevant``.
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
        return report_to_documents(self.memory.recall_report(query, self._options(k, kwargs)))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        options = self._options(k, kwargs)
        report = await run_in_executor(None, self.memory.recall_report, query, options)
        return report_to_documents(report)
