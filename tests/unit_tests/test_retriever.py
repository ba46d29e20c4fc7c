"""EpisodicRetriever and memory.as_retriever: documents ranked by priority."""

from __future__ import annotations

import inspect
import re
from typing import Any

import pytest
from langchain_core.documents import Document
from langchain_core.messages import AIMessage
from langchain_core.output_parsers import StrOutputParser
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from langchain_episodic import (
    EpisodicMemory,
    EpisodicRetriever,
    EpisodicValueError,
    RecallOptions,
    ReplayWeights,
)
from tests.helpers.episodes import corpus
from tests.helpers.models import RecordingChatModel
from tests.unit_tests.factories import make_episode

NOW = 86_400.0


# Overrides conftest's: 24 corpus episodes (variants included), clock at day 1.
@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: NOW)
    memory.record_many(corpus(24))
    return memory


def test_documents_follow_recall_order_and_carry_scores(memory: EpisodicMemory) -> None:
    retriever = memory.as_retriever(k=4)
    assert isinstance(retriever, EpisodicRetriever)
    docs = retriever.invoke("Fix the login session bug")
    # Asked for 4: what worked first, then failed attempts, in recall's order within each.
    expected = [r for r in memory.recall("Fix the login session bug", top_k=50) if r.relevant]
    expected = [r for r in expected if r.episode.outcome.value == "success"] + [
        r for r in expected if r.episode.outcome.value != "success"
    ]
    expected = expected[:4]
    assert [d.metadata["episode_id"] for d in docs] == [r.episode.episode_id for r in expected]
    first, top = docs[0], expected[0]
    assert first.id == top.episode.episode_id
    assert first.metadata["similarity"] == pytest.approx(top.similarity)
    for key in ("outcome", "reward", "strategy_used", "timestamp", "category"):
        assert key in first.metadata
    assert first.metadata["outcome"] == top.episode.outcome.value
    assert top.episode.task.description in first.page_content
    assert top.episode.solution in first.page_content
    # The replay's compact block: the metadata stays in the metadata.
    assert "Strategy:" not in first.page_content
    assert first.metadata["strategy_used"] == top.episode.strategy_used


def test_invoke_kwargs_override_constructor(memory: EpisodicMemory) -> None:
    retriever = memory.as_retriever(k=5)
    assert len(retriever.invoke("payment", k=1)) == 1
    debugging = retriever.invoke("login", category="debugging")
    assert debugging
    assert {d.metadata["category"] for d in debugging} == {"debugging"}
    failures = memory.as_retriever(k=5, outcome=["failure"]).invoke("login")
    assert {d.metadata["outcome"] for d in failures} == {"failure"}


ARTICLE_KEYS = {
    "episode_id",
    "similarity",
    "priority",
    "outcome",
    "reward",
    "strategy_used",
    "timestamp",
    "category",
    "complexity",
    "task",
    "iterations",
    "tests_passed",
    "tests_total",
    "pass_rate",
}
WHY_KEYS = {"relevant", "ranking", "relevance_threshold", "why", "nearest_rejected"}


def test_metadata_says_why_each_was_recalled_and_why_the_nearest_was_not(
    memory: EpisodicMemory,
) -> None:
    query = "architecture for notifications"  # two episodes about it, the rest turned away
    docs = memory.as_retriever(k=3).invoke(query)
    report = memory.recall(query, options=RecallOptions(top_k=3), explain=True)
    nearest = report.nearest_rejected
    assert nearest is not None  # a real candidate turned away
    assert report.threshold is not None
    assert [d.metadata["episode_id"] for d in docs] == [
        r.episode.episode_id for r in report.results
    ]
    assert nearest.episode_id not in {d.metadata["episode_id"] for d in docs}
    for doc, result in zip(docs, report.results, strict=True):
        assert set(doc.metadata) == ARTICLE_KEYS | WHY_KEYS
        assert doc.metadata["relevant"] is True
        assert doc.metadata["ranking"] == "relevance"
        assert doc.metadata["relevance_threshold"] == report.threshold
        assert result.similarity >= report.threshold
        assert doc.metadata["why"].startswith(
            f"similarity {result.similarity:.2f} >= threshold {report.threshold:.2f}"
        )
        assert doc.metadata["nearest_rejected"] == {
            "episode_id": nearest.episode_id,
            "similarity": nearest.similarity,
            "reason": nearest.reason,
        }
    assert nearest.similarity < report.threshold
    assert nearest.reason.startswith(f"similarity {nearest.similarity:.2f} is ")


def test_nearest_rejected_is_none_when_every_candidate_is_relevant(
    memory: EpisodicMemory,
) -> None:
    docs = memory.as_retriever(k=1, fetch_k=1).invoke("Fix the login session bug")
    assert len(docs) == 1
    assert docs[0].metadata["relevant"] is True
    assert docs[0].metadata["nearest_rejected"] is None


def test_article_ranking_returns_k_and_flags_the_irrelevant(memory: EpisodicMemory) -> None:
    query = "architecture for notifications"
    docs = memory.as_retriever(k=3, ranking="article").invoke(query)
    expected = memory.recall(query, top_k=3, ranking="article")
    assert len(docs) == 3
    assert [d.metadata["episode_id"] for d in docs] == [r.episode.episode_id for r in expected]
    assert [d.metadata["priority"] for d in docs] == [r.priority for r in expected]
    assert [d.metadata["relevant"] for d in docs] == [r.relevant for r in expected]
    assert not all(r.relevant for r in expected)  # the article ranks the irrelevant too
    for doc in docs:
        assert set(doc.metadata) == ARTICLE_KEYS | WHY_KEYS
        assert doc.metadata["ranking"] == "article"
        assert doc.metadata["nearest_rejected"] is None  # the article rejects nothing
        assert ("not relevant" in doc.metadata["why"]) is not doc.metadata["relevant"]
        assert (
            "article priority" in doc.metadata["why"]
            or "article's ranking" in (doc.metadata["why"])
        )
    # per call, too
    assert [d.metadata for d in memory.as_retriever(k=3).invoke(query, ranking="article")] == [
        d.metadata for d in docs
    ]


def test_weights_and_half_life_are_used(memory: EpisodicMemory) -> None:
    similarity_only = ReplayWeights(similarity=1.0, recency=0.0, reward=0.0, outcome_bonus=0.0)
    docs = memory.as_retriever(k=3, weights=similarity_only).invoke("Write unit tests")
    similarities = [d.metadata["similarity"] for d in docs]
    assert similarities == sorted(similarities, reverse=True)
    assert [d.metadata["priority"] for d in docs] == pytest.approx(similarities)


def test_unknown_option_is_refused(memory: EpisodicMemory) -> None:
    with pytest.raises(TypeError, match="colour"):
        memory.as_retriever().invoke("login", colour="red")


def test_invalid_k_is_refused(memory: EpisodicMemory) -> None:
    with pytest.raises(ValueError, match="k"):
        memory.as_retriever(k=0)
    with pytest.raises(EpisodicValueError, match="top_k=0"):
        memory.as_retriever().invoke("login", k=0)


async def test_ainvoke_matches_invoke(memory: EpisodicMemory) -> None:
    retriever = memory.as_retriever(k=3)
    sync = retriever.invoke("Implement a signup form")
    asynchronous = await retriever.ainvoke("Implement a signup form")
    assert [d.metadata for d in sync] == [d.metadata for d in asynchronous]


def test_retrieved_episodes_reach_the_model_in_a_rag_chain() -> None:
    memory = EpisodicMemory(clock=lambda: NOW)
    memory.record(
        make_episode(
            episode_id="csv-1",
            description="Fix the CSV parser dropping quoted commas",
            message="quoted fields now parse",
            solution="csv.reader(f, quotechar='\"')",
            timestamp=NOW,
        )
    )

    def format_docs(docs: list[Document]) -> str:
        return "\n\n".join(d.page_content for d in docs)

    prompt = ChatPromptTemplate.from_messages(
        [("system", "Past experience:\n{context}"), ("human", "{task}")]
    )
    model = RecordingChatModel(messages=iter([AIMessage(content="use csv.reader")]))
    chain = (
        {"context": memory.as_retriever(k=1) | format_docs, "task": RunnablePassthrough()}
        | prompt
        | model
        | StrOutputParser()
    )
    assert chain.invoke("The CSV parser splits quoted fields") == "use csv.reader"
    system = model.received[0][0].content
    assert "Fix the CSV parser dropping quoted commas" in system
    assert "csv.reader(f, quotechar='\"')" in system


# ------------------------------------------------------------------ LangChain's as_retriever


def test_search_kwargs_k_and_filter_are_honoured(memory: EpisodicMemory) -> None:
    docs = memory.as_retriever(search_kwargs={"k": 2}).invoke("login")
    assert len(docs) == 2
    failures = memory.as_retriever(search_kwargs={"k": 5, "filter": {"outcome": "failure"}})
    found = failures.invoke("login")
    assert found
    assert {d.metadata["outcome"] for d in found} == {"failure"}
    assert memory.as_retriever(search_kwargs={"fetch_k": 7}).options.fetch_k == 7


def test_a_score_threshold_is_the_least_similarity(memory: EpisodicMemory) -> None:
    retriever = memory.as_retriever(
        search_type="similarity_score_threshold", search_kwargs={"score_threshold": 0.99}
    )
    assert retriever.options.min_similarity == 0.99
    assert retriever.invoke("a request unlike anything stored") == []
    with pytest.raises(EpisodicValueError, match="needs search_kwargs\\['score_threshold'\\]"):
        memory.as_retriever(search_type="similarity_score_threshold")
    with pytest.raises(EpisodicValueError, match="needs search_type='similarity_score_threshold'"):
        memory.as_retriever(search_kwargs={"score_threshold": 0.5})


@pytest.mark.parametrize(
    ("given", "error", "named"),
    [
        ({"kk": 2}, TypeError, "kk"),
        ({"search_type": "mmr"}, EpisodicValueError, "search_type='mmr' is not supported"),
        ({"search_kwargs": {"kk": 1}}, TypeError, "kk"),
        ({"search_kwargs": {"filter": {"colour": "red"}}}, EpisodicValueError, "'colour'"),
        ({"search_kwargs": "k=2"}, TypeError, "search_kwargs='k=2'"),
        ({"k": 2, "search_kwargs": {"k": 3}}, TypeError, "either flat or in search_kwargs"),
    ],
)
def test_what_the_retriever_does_not_know_is_refused_by_name(
    memory: EpisodicMemory, given: dict[str, Any], error: type[Exception], named: str
) -> None:
    with pytest.raises(error, match=re.escape(named)):
        memory.as_retriever(**given)


def test_the_retriever_refuses_unknown_fields_and_help_shows_the_options() -> None:
    with pytest.raises(ValueError, match="kk"):
        EpisodicRetriever(memory=EpisodicMemory(), kk=2)  # type: ignore[call-arg]
    signature = inspect.signature(EpisodicMemory.as_retriever)
    assert {"k", "search_type", "search_kwargs", "options"} <= set(signature.parameters)
