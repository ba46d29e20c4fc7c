"""The replay pipeline: one recall per replay, in every integration, with the caller's options."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from langchain_core.embeddings import Embeddings
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage
from numpy.typing import NDArray

from langchain_episodic import (
    EpisodeFilter,
    EpisodicMemory,
    HashingEmbeddings,
    RecallOptions,
    ReplayWeights,
    TaskDescription,
    abuild_replay,
    build_replay,
    create_recall_tool,
    create_replay_runnable,
)
from langchain_episodic.pipeline import choose_strategy
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import build_replay_context, format_replay_prompt
from langchain_episodic.scoring.strategy import (
    DEFAULT_EVIDENCE_K,
    StrategyChoice,
    strategy_for_report,
    strategy_from_results,
)
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import StoredHit
from tests.unit_tests.factories import make_episode

NOW = 10 * 86_400.0
TASK = TaskDescription("Implement a login form with validation", "code_generation", 0.5)


class CountingEmbeddings(Embeddings):
    """Hashing embeddings that count query embeddings."""

    def __init__(self) -> None:
        self.inner = HashingEmbeddings()
        self.queries = 0

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return self.inner.embed_documents(texts)

    def embed_query(self, text: str) -> list[float]:
        self.queries += 1
        return self.inner.embed_query(text)


class CountingStore(InMemoryEpisodeStore):
    """An in-memory store that counts searches."""

    def __init__(self) -> None:
        super().__init__()
        self.searches = 0

    def search_hits(
        self,
        namespace: str,
        embedding: NDArray[np.float32],
        k: int,
        filters: EpisodeFilter | None = None,
        *,
        query_text: str | None = None,
    ) -> list[StoredHit]:
        self.searches += 1
        return super().search_hits(namespace, embedding, k, filters, query_text=query_text)


@pytest.fixture
def counted() -> tuple[EpisodicMemory, CountingEmbeddings, CountingStore]:
    embeddings, store = CountingEmbeddings(), CountingStore()
    memory = EpisodicMemory(store=store, embeddings=embeddings, clock=lambda: NOW)
    for i, (outcome, strategy) in enumerate(
        [("success", "defensive"), ("success", "defensive"), ("failure", "exploratory")]
        + [("success", "iterative")] * 3
    ):
        memory.record(
            make_episode(
                episode_id=f"login-{i}",
                description=f"Implement a login form with validation, variant {i}",
                outcome=outcome,
                strategy=strategy,
                reward=1.0 if outcome == "success" else 0.1,
                timestamp=NOW - (6 - i) * 3600.0,
            )
        )
    embeddings.queries = store.searches = 0
    return memory, embeddings, store


def calls(counters: tuple[EpisodicMemory, CountingEmbeddings, CountingStore]) -> tuple[int, int]:
    _, embeddings, store = counters
    return embeddings.queries, store.searches


def test_a_replay_with_a_strategy_embeds_once_and_searches_once(counted: Any) -> None:
    memory = counted[0]
    replay = build_replay(memory, TASK, include_strategy=True)
    assert calls(counted) == (1, 1)
    assert replay.strategy is not None
    assert replay.text.endswith(replay.strategy.prompt_line)
    assert replay.text.startswith(replay.prompt)


async def test_the_async_replay_embeds_once_and_searches_once(counted: Any) -> None:
    replay = await abuild_replay(counted[0], TASK, include_strategy=True)
    assert calls(counted) == (1, 1)
    assert replay == build_replay(counted[0], TASK, include_strategy=True)


def test_the_replay_is_the_prompt_and_strategy_of_those_same_results(counted: Any) -> None:
    memory = counted[0]
    replay = build_replay(memory, TASK, top_k=4, max_tokens=400, include_strategy=True)
    assert replay.results == memory.recall(TASK, top_k=4)
    rendered = CompactRenderer()(replay.results, TASK, max_tokens=400)
    assert (replay.prompt, replay.shown) == (rendered.text, rendered.shown)
    report = memory.replay.report(TASK, RecallOptions(top_k=4), evidence_k=DEFAULT_EVIDENCE_K)
    assert replay.strategy == strategy_for_report(TASK, report, memory.skill_profiles())
    # iterative 3/3 beats defensive 2/2 and exploratory 0/1 among the relevant neighbours.
    assert replay.strategy == StrategyChoice("iterative", "evidence")
    assert replay.strategy == choose_strategy(TASK, memory)
    article = build_replay(memory, TASK, top_k=4, include_strategy=True, ranking="article")
    assert article.strategy == strategy_from_results(TASK, article.results, memory.skill_profiles())
    # The article's ranking keeps the article's prompt, exactly.
    assert article.prompt == format_replay_prompt(build_replay_context(article.results), TASK)
    # Without include_strategy the text is the prompt alone.
    plain = build_replay(memory, TASK, top_k=4, max_tokens=400)
    assert (plain.strategy, plain.text) == (None, replay.prompt)


def test_the_callers_filters_time_and_weights_reach_the_strategy(counted: Any) -> None:
    memory = counted[0]
    # Only the failed exploratory episode passes the filter: nothing beats the fallback.
    failures = build_replay(memory, TASK, include_strategy=True, outcome="failure")
    assert [r.episode.outcome.value for r in failures.results] == ["failure"]
    assert failures.strategy == StrategyChoice("iterative", "complexity")
    # Only the defensive successes pass: their record beats the untried fallback.
    defensive = build_replay(
        memory, TASK, include_strategy=True, filters=EpisodeFilter(strategy_used="defensive")
    )
    assert defensive.strategy == StrategyChoice("defensive", "evidence")
    # The caller's time and weights rank the results the strategy is read from.
    options = RecallOptions(current_time=NOW + 86_400.0, weights=ReplayWeights.for_phase("late"))
    replay = build_replay(memory, TASK, options, include_strategy=True)
    assert replay.results == memory.recall(TASK, options=options)


IntegrationCall = Callable[[EpisodicMemory], str]


def through_runnable(memory: EpisodicMemory) -> str:
    runnable = create_replay_runnable(memory, include_strategy=True, top_k=3)
    return runnable.invoke(TASK.description)


def through_retriever(memory: EpisodicMemory) -> str:
    return memory.as_retriever(k=3).invoke(TASK.description)[0].page_content


def through_tool(memory: EpisodicMemory) -> str:
    return str(create_recall_tool(memory).invoke({"query": TASK.description}))


def through_classic(memory: EpisodicMemory) -> str:
    from langchain_episodic import EpisodicChainMemory  # noqa: PLC0415

    chain_memory = EpisodicChainMemory(memory=memory, include_strategy=True)
    return chain_memory.load_memory_variables({"input": TASK.description})["experience"]


def through_middleware(memory: EpisodicMemory) -> str:
    from langchain.agents import create_agent  # noqa: PLC0415

    from langchain_episodic import EpisodicMemoryMiddleware  # noqa: PLC0415

    seen: list[str] = []

    class SystemRecordingModel(GenericFakeChatModel):
        def _generate(self, messages: list[BaseMessage], *args: Any, **kwargs: Any) -> Any:
            seen.append(messages[0].text)
            return super()._generate(messages, *args, **kwargs)

    model = SystemRecordingModel(messages=iter(["def login(): ..."]))
    middleware = EpisodicMemoryMiddleware(memory, include_strategy=True)
    agent = create_agent(model, tools=[], middleware=[middleware])
    agent.invoke({"messages": [{"role": "user", "content": TASK.description}]})
    [system_prompt] = seen
    return system_prompt


@pytest.mark.parametrize(
    "call",
    [through_runnable, through_retriever, through_tool, through_classic, through_middleware],
)
def test_every_integration_recalls_once_per_replay(counted: Any, call: IntegrationCall) -> None:
    text = call(counted[0])
    assert "login form" in text
    # The middleware also embeds the task's opening words, to infer its category.
    assert calls(counted) == ((2, 1) if call is through_middleware else (1, 1))


def test_integrations_inject_the_pipelines_text(counted: Any) -> None:
    memory = counted[0]
    expected = build_replay(memory, TASK.description, include_strategy=True).text
    assert through_runnable(memory) == expected
    assert through_classic(memory) == expected
    assert through_middleware(memory) == expected


def test_choose_strategy_alone_recalls_once(counted: Any) -> None:
    memory = counted[0]
    choice = choose_strategy(TASK, memory)
    assert calls(counted) == (1, 1)
    report = memory.replay.report(TASK, RecallOptions(top_k=5), evidence_k=DEFAULT_EVIDENCE_K)
    assert choice == strategy_for_report(TASK, report, memory.skill_profiles())
    # ranking="article" keeps the article's hierarchy over its five best-ranked.
    article = choose_strategy(TASK, memory, ranking="article")
    assert article == strategy_from_results(
        TASK, memory.recall(TASK, top_k=5, ranking="article"), memory.skill_profiles()
    )


def test_unknown_or_ill_typed_options_are_refused_before_recalling(counted: Any) -> None:
    memory = counted[0]
    with pytest.raises(TypeError, match=r"unknown recall option\(s\) \['k'\]"):
        build_replay(memory, TASK, k=3)
    with pytest.raises(TypeError, match="must be a RecallOptions"):
        build_replay(memory, TASK, {"top_k": 3})  # type: ignore[arg-type]
    assert calls(counted) == (0, 0)
