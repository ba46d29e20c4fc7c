"""EpisodicRetriever: the memory as a LangChain ``BaseRetriever``."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Literal

from langchain_core.callbacks import (
    AsyncCallbackManagerForRetrieverRun,
    CallbackManagerForRetrieverRun,
)
from langchain_core.documents import Document
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from pydantic import ConfigDict, Field, ModelWrapValidatorHandler, PrivateAttr, model_validator

from langchain_episodic._fields import RecallOptionsFields
from langchain_episodic._run import RUN_ID_KEY
from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.filters import EpisodeFilter
from langchain_episodic.prompting.compact import COMPACT_NOTICE, CompactRenderer
from langchain_episodic.prompting.episodes import DATA_NOTICE, render_episode_as_data
from langchain_episodic.prompting.renderers import RendererArg, resolve_renderer
from langchain_episodic.prompting.sanitize import STRATEGY_CHARS, TASK_CHARS, bounded
from langchain_episodic.scoring.options import RECALL_OPTION_NAMES, RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import RecallReport, why_recalled
from langchain_episodic.service.replay import Replay, ReplaySource, replay_renderer

__all__ = [
    "SEARCH_TYPES",
    "EpisodicRetriever",
    "SearchType",
    "options_from_search",
    "replay_to_documents",
    "report_to_documents",
    "result_to_document",
    "retriever_for",
]

SearchType = Literal["similarity", "similarity_score_threshold"]
SEARCH_TYPES: tuple[str, ...] = ("similarity", "similarity_score_threshold")


def options_from_search(
    search_type: str, search_kwargs: Mapping[str, Any] | None
) -> dict[str, Any]:
    """Recall options from LangChain's ``VectorStore.as_retriever`` arguments.

    ``search_kwargs`` as a LangChain user writes them: ``k`` (how many), ``fetch_k``
    (candidates ranked), ``filter`` (Chroma's ``where`` syntax over ``category``,
    ``outcome``, ``strategy_used``, ``reward``, ``pass_rate`` and ``timestamp``:
    ``{"outcome": "success"}``, ``{"reward": {"$gte": 0.5}}``, ``$and`` / ``$or``;
    see `EpisodeFilter.from_where`; or an `EpisodeFilter`),
    ``score_threshold`` (the least similarity, with ``search_type=
    "similarity_score_threshold"``), and any other recall option by its name.
    ``search_type="similarity"`` is recall as the memory ranks it (relevance, then
    value and credit). ``"mmr"`` is refused: the memory's ranking already spreads
    what it shows by value, and its candidates carry no vectors to diversify by.

    Examples:
        >>> options = options_from_search("similarity", {"k": 2, "filter": {"outcome": "success"}})
        >>> options["top_k"], [o.value for o in options["filters"].outcomes]
        (2, ['success'])

    Raises:
        EpisodicValueError: An unknown ``search_type``, or ``score_threshold`` without
            ``"similarity_score_threshold"`` (or that search type without it), or a
            ``filter`` that names an unknown field or operator, or a value that does
            not fit it; the message names it.
        TypeError: A ``search_kwargs`` key that is no recall option.
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
        raise EpisodicValueError(msg)
    return EpisodeFilter.from_where(value)


def result_to_document(
    result: PrioritizedResult, report: RecallReport | None = None, content: str | None = None
) -> Document:
    """A recalled episode as a ``Document``: framed, inert text plus its scores as metadata.

    ``page_content`` is the episode as the replay prompt shows it, framing included
    (`render_episode_as_data`): the notice
    that what follows is data, not instructions, then its ``<experience>`` block, stored
    text made inert by the sanitiser (marked ``relevant="no"`` when recall found it not
    relevant). A prompt built from the documents keeps the replay prompt's defence.

    With the ``report`` it came from, the metadata also says why it was recalled:
    ``relevant``, ``ranking``, ``relevance_threshold``, ``why`` and
    ``nearest_rejected`` (``{"episode_id", "similarity", "reason"}`` of the most
    similar candidate that failed the relevance test, or ``None``). An episode with
    provenance has it under ``source`` (`EpisodeSource.to_dict`: agent, run,
    thread and turn, namespace).

    ``content``: the ``page_content`` to use instead (the replay's own block for the
    episode, `replay_to_documents`).

    The metadata's stored text (``task``, ``strategy_used``, the strings of
    ``source``) is made as inert as ``page_content``, since a prompt may show it too:
    control, bidi, zero-width and tag characters dropped, prompt markup, HTML tags and
    Markdown images escaped, on one line, bounded (``task`` to ``TASK_CHARS``, the
    others to ``STRATEGY_CHARS``, with a marker saying the whole length). The text
    as recorded: ``memory.get_episodes([document.id])``.
    """
    episode = result.episode
    metadata: dict[str, Any] = {
        "episode_id": episode.episode_id,
        "similarity": result.similarity,
        "priority": result.priority,
        "relevant": result.relevant,
        "outcome": episode.outcome.value,
        "reward": episode.feedback.reward,
        "strategy_used": bounded(episode.strategy_used, STRATEGY_CHARS),
        "timestamp": episode.timestamp,
        "category": episode.task.category.value,
        "complexity": episode.task.complexity,
        "task": bounded(episode.task.description, TASK_CHARS),
        "iterations": episode.iterations,
        "tests_passed": episode.feedback.tests_passed,
        "tests_total": episode.feedback.tests_total,
        "pass_rate": episode.feedback.pass_rate,
    }
    if episode.source is not None:
        metadata["source"] = {
            key: bounded(value, STRATEGY_CHARS) if isinstance(value, str) else value
            for key, value in episode.source.to_dict().items()
        }
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
    if content is None:
        # The prompt's framing travels with the text: a user's own RAG prompt keeps it.
        content = render_episode_as_data(episode, relevant=result.relevant)
    return Document(id=episode.episode_id, page_content=content, metadata=metadata)


def report_to_documents(report: RecallReport) -> list[Document]:
    """Every result of ``report`` as a ``Document``, best first (`result_to_document`)."""
    return [result_to_document(result, report) for result in report.results]


# Stored text never forms an experience tag (the sanitiser escapes it), so the replay's
# tags delimit its blocks.
_BLOCK = re.compile(r"<experience\b[^>]*>.*?</experience>", re.S)


def replay_to_documents(replay: Replay) -> list[Document]:
    """The episodes a replay shows, in its order, as documents.

    Each ``page_content`` is the replay's own block for that episode after the notice
    that it is data (the compact replay's notice, or the detailed prompt's): what the
    middleware, the runnable and the tool would show, one document per episode. The
    metadata is `result_to_document`'s: every field, and why it was recalled.
    A renderer of your own whose text has no blocks gives each episode the detailed
    block (`render_episode_as_data`).
    """
    by_id = {result.episode.episode_id: result for result in replay.results}
    blocks = _BLOCK.findall(replay.prompt)
    notice = COMPACT_NOTICE if replay.prompt.startswith(COMPACT_NOTICE) else DATA_NOTICE
    framed = len(blocks) == len(replay.shown)
    return [
        result_to_document(
            by_id[episode_id], replay.report, f"{notice}\n{blocks[index]}" if framed else None
        )
        for index, episode_id in enumerate(replay.shown)
        if episode_id in by_id
    ]


class EpisodicRetriever(BaseRetriever, RecallOptionsFields):
    """Past episodes relevant to the query, ranked by replay priority, as ``Document``s.

    Setup:
        ```bash
        pip install langchain-episodic
        ```

    Instantiate:
        ```python
        from langchain_episodic import EpisodicMemory, EpisodicRetriever

        memory = EpisodicMemory()
        retriever = EpisodicRetriever(memory=memory, k=3)   # or memory.as_retriever(k=3)
        ```

    Usage:
        ```python
        docs = retriever.invoke("Fix the login crash")
        docs = retriever.invoke("Fix the login crash", k=1, category="debugging")
        docs[0].metadata["priority"], docs[0].metadata["outcome"]
        docs[0].metadata["why"], docs[0].metadata["nearest_rejected"]
        ```

    Async:
        ```python
        docs = await retriever.ainvoke("Fix the login crash")
        ```

    The documents are the episodes the replay shows for the query, in its order
    (`build_replay`, the path of the middleware, the runnable
    and the tool): what worked first, a failed attempt only beside its fix, nothing when
    nothing is relevant. Explicit settings win: with ``k`` given (flat, in
    ``search_kwargs`` or per call) up to ``k`` relevant episodes come back, failed
    attempts included after what worked, with their code and marked as failed; a
    ``filter`` on ``outcome`` returns those outcomes. Each ``page_content`` is the
    replay's own block for the episode after the notice that it is data, not
    instructions (stored text made inert), so a RAG prompt built from the documents
    keeps the replay's defence. A call named with ``config={"configurable": {"run_id":
    ...}}`` notes what it returned under that run, so that ``memory.runs.credit`` of
    the run's outcome credits it (as the other integrations do). Its ``metadata`` holds
    ``episode_id``, ``similarity``, ``priority``, ``outcome``, ``reward``,
    ``strategy_used``, ``timestamp``, ``category`` and the other scalar fields, and
    why it was recalled: ``relevant``, ``ranking``, ``relevance_threshold``, ``why``
    (e.g. ``"similarity 0.62 >= threshold 0.47; ..."``) and ``nearest_rejected``
    (``{"episode_id", "similarity", "reason"}`` of the most similar candidate that
    failed the relevance test, or ``None``). Only relevant episodes come back, possibly
    fewer than ``k``; ``ranking="article"`` ranks by the article's priority and returns
    the top ``k`` whatever their relevance, flagged by ``relevant``.
    Recall options (`RecallOptions`) are given flat, as
    in ``memory.as_retriever(k=3, category="debugging")``, or as ``options=``; any of
    them can also be given per call as a keyword of ``invoke``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True, extra="forbid")

    memory: ReplaySource
    """Where episodes are recalled from (an `EpisodicMemory`)."""
    search_type: SearchType = "similarity"
    """As in ``VectorStore.as_retriever``: ``"similarity"`` (recall as the memory ranks)
    or ``"similarity_score_threshold"`` (with ``search_kwargs["score_threshold"]``, the
    least similarity); ``"mmr"`` is refused by name."""
    search_kwargs: dict[str, Any] = Field(default_factory=dict)
    """As in ``VectorStore.as_retriever``: ``k``, ``fetch_k``, ``filter``,
    ``score_threshold``, or any recall option by name (`options_from_search`)."""
    renderer: Any = Field(default="auto", exclude=True)
    """How an episode becomes ``page_content``: the replay's renderer
    (`renderers`): ``"auto"`` (default),
    ``"compact"``, ``"detailed"``, or your own."""
    top_k_name: ClassVar[str] = "k"
    # ``k`` given at construction (flat or in ``search_kwargs``): up to ``k`` relevant
    # episodes come back, failed attempts included, not only what the replay shows.
    _k_given: bool = PrivateAttr(default=False)

    @model_validator(mode="wrap")
    @classmethod
    def _note_k_given(cls, data: Any, handler: ModelWrapValidatorHandler[Any]) -> Any:
        search_kwargs = data.get("search_kwargs") if isinstance(data, dict) else None
        given = isinstance(data, dict) and (
            bool({"k", "top_k"} & set(data))
            or (isinstance(search_kwargs, Mapping) and "k" in search_kwargs)
        )
        retriever = handler(data)
        if given:
            retriever._k_given = True
        return retriever

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

    @model_validator(mode="after")
    def _check_renderer(self) -> EpisodicRetriever:
        resolve_renderer(self.renderer, self.options.ranking)  # refuse a bad one now
        return self

    @property
    def k(self) -> int:
        """How many documents to return (``options.top_k``)."""
        return self.options.top_k

    def invoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Documents for ``input``; a ``run_id`` in ``config["configurable"]`` is noted."""
        return super().invoke(input, config, **{**kwargs, **_named_run(config)})

    async def ainvoke(
        self, input: str, config: RunnableConfig | None = None, **kwargs: Any
    ) -> list[Document]:
        """Async twin of `invoke`."""
        return await super().ainvoke(input, config, **{**kwargs, **_named_run(config)})

    def _replay_call(self, k: int | None, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``build_replay``'s arguments: options, run, renderer; no budget, no lessons."""
        run = _run_of(kwargs)  # taken out first: the rest of kwargs are recall options
        if k is not None:
            kwargs = {**kwargs, "top_k": k}
        options = self.options.replace(**kwargs) if kwargs else self.options
        renderer: RendererArg = self.renderer
        if self._k_given or k is not None:
            chosen = replay_renderer(renderer, options)
            if isinstance(chosen, CompactRenderer):  # asked for k: what worked, then the rest
                renderer = dataclasses.replace(chosen, failures="code")
        return {"options": options, "max_tokens": None, "lesson_k": 0, "renderer": renderer, **run}

    def _get_relevant_documents(
        self,
        query: str,
        *,
        run_manager: CallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        return replay_to_documents(self.memory.replay.build(query, **self._replay_call(k, kwargs)))

    async def _aget_relevant_documents(
        self,
        query: str,
        *,
        run_manager: AsyncCallbackManagerForRetrieverRun,
        k: int | None = None,
        **kwargs: Any,
    ) -> list[Document]:
        replay = await self.memory.replay.abuild(query, **self._replay_call(k, kwargs))
        return replay_to_documents(replay)


# LangChain's retriever takes ``run_id`` for its tracer: the named run travels apart.
_RUN_KWARGS = {"episodic_run_id": "run_id", "episodic_thread_id": "thread_id"}


def _named_run(config: RunnableConfig | None) -> dict[str, str]:
    """The run a caller named in ``config["configurable"]`` (and its thread), if any.

    Only a run named on purpose is noted: a retriever inside any chain would otherwise
    open a run under the chain's id that nobody credits.
    """
    configurable = (config or {}).get("configurable") or {}
    run_id = configurable.get(RUN_ID_KEY)
    if run_id is None or not str(run_id).strip():
        return {}
    named = {"episodic_run_id": str(run_id)}
    thread = configurable.get("thread_id")
    if thread is not None and str(thread).strip():
        named["episodic_thread_id"] = str(thread)
    return named


def _run_of(kwargs: dict[str, Any]) -> dict[str, Any]:
    """``build_replay``'s ``run_id`` / ``thread_id``, taken out of a call's ``kwargs``."""
    return {name: kwargs.pop(key) for key, name in _RUN_KWARGS.items() if key in kwargs}


def retriever_for(memory: ReplaySource, **kwargs: Any) -> EpisodicRetriever:
    """What ``memory.as_retriever(**kwargs)`` returns, each argument checked by name.

    Raises:
        TypeError: An option it does not know (named, with the known ones).
        EpisodicValueError: ``k`` or a ``search_type`` / ``search_kwargs`` is invalid.
    """
    allowed = RECALL_OPTION_NAMES | {"k", "search_type", "search_kwargs"}
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        msg = f"as_retriever() got unknown option(s) {unknown}; known: {sorted(allowed)}"
        raise TypeError(msg)
    if kwargs.get("k") is not None:  # checked here, so the error names k (its top_k)
        check_int("k", kwargs["k"], 1)
    if "search_type" in kwargs or "search_kwargs" in kwargs:
        # Checked here too, so a bad one raises its own error, not pydantic's wrapper.
        options_from_search(kwargs.get("search_type", "similarity"), kwargs.get("search_kwargs"))
    return EpisodicRetriever(memory=memory, **kwargs)
