"""The recall tool an agent calls to search its own experiences."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from langchain_episodic import EpisodicMemory, create_recall_tool
from tests.unit_tests.test_memory import corpus


@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: 86_400.0)
    memory.record_many(corpus(12))  # distinct descriptions
    return memory


def test_tool_schema_names_its_arguments(memory: EpisodicMemory) -> None:
    tool = create_recall_tool(memory)
    assert tool.name == "recall_past_experiences"
    assert set(tool.args) == {"query", "category", "outcome", "k"}
    assert "past attempts" in tool.description


def test_tool_returns_rendered_episodes_in_recall_order(memory: EpisodicMemory) -> None:
    text = create_recall_tool(memory).invoke({"query": "Fix the login session bug", "k": 2})
    expected = memory.recall("Fix the login session bug", top_k=2)
    assert text.count("<experience index=") == 2
    first = text.index(expected[0].episode.task.description)
    second = text.index(expected[1].episode.task.description)
    assert first < second


def test_tool_filters_by_category_and_outcome(memory: EpisodicMemory) -> None:
    tool = create_recall_tool(memory)
    text = tool.invoke({"query": "login", "category": "debugging", "k": 5})
    assert text.count("Category: debugging") == text.count("<experience index=") > 0
    text = tool.invoke({"query": "login", "outcome": "failure", "k": 5})
    assert text.count("Outcome: failure") == text.count("<experience index=") > 0


def test_tool_says_when_nothing_matches() -> None:
    assert create_recall_tool(EpisodicMemory()).invoke({"query": "x"}) == (
        "No matching past experiences."
    )


def test_tool_rejects_bad_arguments(memory: EpisodicMemory) -> None:
    tool = create_recall_tool(memory)
    with pytest.raises(ValidationError):
        tool.invoke({"query": "login", "category": "cooking"})
    with pytest.raises(ValidationError):
        tool.invoke({"query": "login", "k": 0})


async def test_tool_async_matches_sync(memory: EpisodicMemory) -> None:
    tool = create_recall_tool(memory, name="search_memory")
    args = {"query": "payment module", "k": 3}
    assert await tool.ainvoke(args) == tool.invoke(args)
