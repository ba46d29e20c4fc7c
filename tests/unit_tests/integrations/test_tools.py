"""The recall tool an agent calls to search its own experiences."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from langchain_episodic import EpisodicMemory, RecallOptions, create_recall_tool
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode


# Overrides conftest's: the 12 corpus episodes, clock at day 1.
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
    tool = create_recall_tool(memory, options=RecallOptions(ranking="article"))
    text = tool.invoke({"query": "Fix the login session bug", "k": 2})
    expected = memory.recall("Fix the login session bug", top_k=2, ranking="article")
    assert text.count("<experience index=") == 2
    first = text.index(expected[0].episode.task.description)
    second = text.index(expected[1].episode.task.description)
    assert first < second


def test_tool_filters_by_category_and_outcome(memory: EpisodicMemory) -> None:
    detailed = create_recall_tool(memory, renderer="detailed")  # it shows each category
    text = detailed.invoke({"query": "login", "category": "debugging", "k": 5})
    assert text.count("Category: debugging") == text.count("<experience index=") > 0
    text = create_recall_tool(memory).invoke({"query": "login", "outcome": "failure", "k": 5})
    assert text.count('outcome="failure"') == text.count("<experience index=") > 0


def test_tool_says_when_nothing_matches() -> None:
    assert create_recall_tool(EpisodicMemory()).invoke({"query": "x"}) == (
        "No matching past experiences."
    )


def test_the_answer_has_a_default_budget() -> None:
    memory = EpisodicMemory(clock=lambda: 86_400.0)
    task = "Fix the login session bug"
    memory.record(make_episode(description=task, timestamp=86_000.0, solution="x = 1\n" * 200_000))
    text = create_recall_tool(memory).invoke({"query": task})
    assert "Task: Fix the login session bug\n<solution>" in text
    assert "\n\u2026 [truncated]\n</solution>" in text
    assert approximate_token_count(text) <= DEFAULT_MAX_TOKENS
    unlimited = create_recall_tool(memory, max_tokens=None).invoke({"query": task})
    assert len(unlimited) > 1_200_000
    small = create_recall_tool(memory, max_tokens=300).invoke({"query": task})
    assert approximate_token_count(small) <= 300


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


def test_an_agent_calling_the_tool_hands_the_episodes_to_the_model(
    memory: EpisodicMemory,
) -> None:
    from langchain.agents import create_agent  # noqa: PLC0415
    from langchain_core.messages import AIMessage, ToolMessage  # noqa: PLC0415

    from tests.helpers.models import make_model  # noqa: PLC0415

    call = AIMessage(
        content="",
        tool_calls=[
            {
                "name": "recall_past_experiences",
                "args": {"query": "payment module", "category": "refactoring", "k": 1},
                "id": "call-1",
            }
        ],
    )
    model = make_model(call, "Split it like last time.")
    agent = create_agent(model, tools=[create_recall_tool(memory)])
    agent.invoke({"messages": [("user", "Refactor the payment module")]})
    second_call = model.received[1]
    tool_results = [m for m in second_call if isinstance(m, ToolMessage)]
    assert len(tool_results) == 1
    answer = tool_results[0].text
    assert "Task: Refactor the payment module into smaller services\n<solution>" in answer
