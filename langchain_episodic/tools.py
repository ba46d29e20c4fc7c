"""A tool the agent calls to search its own past experiences."""

from __future__ import annotations

from typing import TYPE_CHECKING

from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from langchain_episodic.episode import OutcomeStatus, TaskCategory
from langchain_episodic.replay import render_episode
from langchain_episodic.scoring import PrioritizedResult

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory

__all__ = ["RecallInput", "create_recall_tool"]

NO_MATCH = "No matching past experiences."


class RecallInput(BaseModel):
    """Arguments of the recall tool."""

    query: str = Field(description="What to look for: the task or problem, in words.")
    category: TaskCategory | None = Field(
        default=None, description="Only experiences of this task category."
    )
    outcome: OutcomeStatus | None = Field(
        default=None, description="Only experiences with this outcome."
    )
    k: int = Field(default=3, ge=1, le=20, description="How many experiences to return.")


def _render(results: tuple[PrioritizedResult, ...]) -> str:
    if not results:
        return NO_MATCH
    return "\n".join(
        render_episode(result.episode, index) for index, result in enumerate(results, start=1)
    )


def create_recall_tool(
    memory: EpisodicMemory,
    *,
    name: str = "recall_past_experiences",
    description: str = (
        "Search your own past attempts at similar tasks: what was tried, which strategy, "
        "what the tests said, and the solution. Use it before writing code for a task "
        "that resembles earlier work, or after a failure to see how similar ones were fixed."
    ),
) -> BaseTool:
    """A LangChain tool over ``memory``'s recall, with optional category/outcome filters.

    Example:
        .. code-block:: python

            from langchain.agents import create_agent

            tool = create_recall_tool(memory)
            agent = create_agent(model, tools=[tool])
            tool.invoke({"query": "login crash", "outcome": "success"})
    """

    def recall(
        query: str,
        category: TaskCategory | None = None,
        outcome: OutcomeStatus | None = None,
        k: int = 3,
    ) -> str:
        return _render(memory.recall(query, top_k=k, category=category, outcome=outcome))

    async def arecall(
        query: str,
        category: TaskCategory | None = None,
        outcome: OutcomeStatus | None = None,
        k: int = 3,
    ) -> str:
        results = await memory.arecall(query, top_k=k, category=category, outcome=outcome)
        return _render(results)

    return StructuredTool.from_function(
        func=recall,
        coroutine=arecall,
        name=name,
        description=description,
        args_schema=RecallInput,
    )
