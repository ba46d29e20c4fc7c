"""EpisodicRetriever: the memory as a LangChain ``BaseRetriever``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables.config import run_in_executor
from pydantic import ConfigDict, Field, model_validator

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.integrations._fields import RecallOptionsFields
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.prompting.episodes import render_episode_as_data
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import RecallReport, why_recalled

__all__ = [
    "SEARCH_TYPES",
    "EpisodicRetriever",
    "SearchType",
    "options_from_search",
    "report_to_documents",
    "result_to_document",
]

SearchType = Literal["similarity", "similarity_score_threshold"]
SEARCH_TYPES: tuple[str, ...] = ("similarity", "similarity_score_threshold")
_FILTER_KEYS = frozenset({"category", "outcome", "strategy_used"})


def options_from_search(
    search_type: str, search_kwargs: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Recall options from LangChain's ``VectorStore.as_retriever`` arguments.

    ``search_kwargs`` as a LangChain user writes them: ``k`` (how many), ``fetch_k``
    (candidates ranked), ``filter`` (a dict of ``category`` / ``outcome`` /
    ``strategy_used``, or an :class:`~langchain_episodic.EpisodeFilter`),
    ``score_threshold`` (the least similarity, with ``search_type=
    "similarity_score_threshold"``), and any other recall option by its name.
    ``search_type="similarity"`` is recall as the memory ranks it (relevance, then
    value and credit). ``"mmr"`` is refused: the memory's ranking already spreads
    what it shows by value, and its candidates carry no vectors to diversify by.

    Example:
        >>> options = options_from_search("similarity", {"k": 2, "filter": {"outcome": "success"}})
        >>> options["top_k"], [o.value for o in options["filters"].outcomes]
        (2, ['success'])

    Raises:
        EpisodicValueError: An unknown ``search_type``, or ``score_threshold`` without
            ``"similarity_score_threshold"`` (or that search type without it).
        TypeError: A ``search_kwargs`` key that is no recall option, or a ``filter`` key
            the memory cannot filter by; the message names it.
    """
    if search_type not in SEARCH_TYPES:
        hint = (
            "; the memory ranks by relevance, then value and credit: use 'similarity'"
            if search_type == "mmr"
            else ""
        )
        allowed = list(SEARCH_TYPES)
        msg = f"search_type={search_type!r} is not supported: must be one of {allowed}{hint}"
        raise EpisodicValueError(msg)
    if search_kwargs is not None and not isinstance(search_kwargs, Mapping):
        msg = f"search_kwargs={search_kwargs!r} is invalid: must be a dict"
        raise TypeError(msg)
    given = dict(search_kwargs or {})
    options: dict[str, Any] = {}
    if "k" in given:
        options["top_k"] = given.pop("k")
    if "filter" in given:
        options["filters"] = _filter(given.pop("filter"))
    threshold = given.pop("score_threshold", None)
    if search_type == "similarity_score_threshold":
        if threshold is None:
            msg = "search_type='similarity_score_threshold' needs search_kwargs['score_threshold']"
            raise EpisodicValueError(msg)
        options["min_similarity"] = threshold
    elif threshold is not None:
        msg = (
            f"search_kwargs['score_threshold']={threshold!r} needs "
            "search_type='similarity_score_threshold'"
        )
        raise EpisodicValueError(msg)
    options.update(given)  # the rest are recall options by name; RecallOptions checks them
    return options


def _filter(value: object) -> EpisodeFilter | None:
    if value is None or isinstance(value, EpisodeFilter):
        return value
    if not isinstance(value, Mapping):
        msg = f"search_kwargs['filter']={value!r} is invalid: must be a dict or an EpisodeFilter"
        raise TypeError(msg)
    unknown = sorted(set(map(str, value)) - _FILTER_KEYS)
    if unknown:
        msg = (
            f"search_kwargs['filter'] has unknown key(s) {unknown}: the memory filters by "
            f"{sorted(_FILTER_KEYS)}"
        )
        raise TypeError(msg)
    return EpisodeFilter(
        category=value.get("category"),
        outcome=value.get("outcome"),
        strategy_used=value.get("strategy_used"),
    )


def result_to_document(result: PrioritizedResult, report: RecallReport | None = None) -> Document:
    """A recalled episode as a ``Document``: framed, inert text plus its scores as metadata.

    ``page_content`` is the episode as the replay prompt shows it, framing included
    (:func:`~langchain_episodic.prompting.episodes.render_episode_as_data`): the notice
    that what follows is data, not instructions, then its ``<experience>`` block, stored
    text made inert by the sanitiser (marked ``relevant="no"`` when recall found it not
    relevant). A prompt built from the documents keeps the replay prompt's defence.

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
    # The prompt's framing travels with the text: a user's own RAG prompt keeps it.
    content = render_episode_as_data(episode, relevant=result.relevant)
    return Document(id=episode.episode_id, page_content=content, metadata=metadata)


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

    Each document's ``page_content`` renders the episode as the replay prompt does: the
    notice that it is data, not instructions, then its ``<experience>`` block (task,
    outcome, reward, strategy, pass rate, feedback, solution; stored text made inert), so
    a RAG prompt built from the documents keeps the prompt's defence. Its ``metadata`` holds
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

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: EpisodicMemory
    """Where episodes are recalled from."""
    search_type: SearchType = "similarity"
    """As in ``VectorStore.as_retriever``: ``"similarity"`` (recall as the memory ranks)
    or ``"similarity_score_threshold"`` (with ``search_kwargs["score_threshold"]``, the
    least similarity); ``"mmr"`` is refused by name."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """As in ``VectorStore.as_retriever``: ``k``, ``fetch_k``, ``filter``,
    ``score_threshold``, or any recall option by name (:func:`options_from_search`)."""
    top_k_name: ClassVar[str] = "k"

    @model_validator(mode="before")
    @classmethod
    def _collect_search(cls, data: Any) -> Any:
        """Fold ``search_type`` / ``search_kwargs`` into the flat recall options."""
        if not isinstance(data, dict) or not ({"search_type", "search_kwargs"} & set(data)):
            return data
        data = dict(data)
        search = options_from_search(
            data.get("search_type", "similarity"), data.get("search_kwargs")
        )
        clash = sorted((set(search) | ({"k"} if "top_k" in search else set())) & set(data))
        if clash:
            msg = f"give {clash} either flat or in search_kwargs, not both"
            raise TypeError(msg)
        data["options"] = RecallOptions.from_mapping(data.get("options"), search)
        return data

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
        return report_to_documents(
            self.memory.recall(query, options=self._options(k, kwargs), explain=True)
        )

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        options = self._options(k, kwargs)
        report = await run_in_executor(None, self.memory._report, query, options)
        return report_to_documents(report)
