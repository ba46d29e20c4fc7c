"""Recall and format in one step: the replay prompt every integration injects."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from langchain_core.runnables.config import run_in_executor

from langchain_episodic.episode import TaskDescription
from langchain_episodic.replay import (
    approximate_token_count,
    build_replay_context,
    format_replay_prompt,
)
from langchain_episodic.strategy import STRATEGY_POOL, StrategyChoice, choose_strategy

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory

__all__ = [
    "areplay_prompt",
    "astrategy_instruction",
    "replay_prompt",
    "strategy_instruction",
    "strategy_line",
]


def replay_prompt(
    memory: EpisodicMemory,
    task: TaskDescription | str,
    *,
    top_k: int = 3,
    max_tokens: int | None = None,
    token_counter: Callable[[str], int] = approximate_token_count,
    **recall_kwargs: Any,
) -> str:
    r"""Recall for ``task`` and format the replay prompt.

    Args:
        memory: Where to recall from.
        task: The new task.
        top_k: Episodes to recall.
        max_tokens: Token budget of the prompt (see :func:`format_replay_prompt`).
        token_counter: Counts tokens for the budget.
        **recall_kwargs: Passed on to :meth:`EpisodicMemory.recall` (weights,
            half_life, fetch_k, min_similarity, filters, current_time, ...).

    Example:
        .. code-block:: python

            system_prompt += "\\n\\n" + replay_prompt(memory, "Add OAuth login", max_tokens=600)
    """
    task = TaskDescription(task) if isinstance(task, str) else task
    results = memory.recall(task, top_k=top_k, **recall_kwargs)
    context = build_replay_context(results)
    return format_replay_prompt(context, task, max_tokens=max_tokens, token_counter=token_counter)


async def areplay_prompt(
    memory: EpisodicMemory,
    task: TaskDescription | str,
    *,
    top_k: int = 3,
    max_tokens: int | None = None,
    token_counter: Callable[[str], int] = approximate_token_count,
    **recall_kwargs: Any,
) -> str:
    """Async twin of :func:`replay_prompt`."""
    task = TaskDescription(task) if isinstance(task, str) else task
    results = await memory.arecall(task, top_k=top_k, **recall_kwargs)
    context = build_replay_context(results)
    return format_replay_prompt(context, task, max_tokens=max_tokens, token_counter=token_counter)


def strategy_line(choice: StrategyChoice) -> str:
    """The prompt line for a chosen strategy: ``Strategy: <name> - <instruction>``."""
    return f"Strategy: {choice.strategy} - {STRATEGY_POOL[choice.strategy]}"


def strategy_instruction(
    memory: EpisodicMemory, task: TaskDescription | str, current_time: float | None = None
) -> str:
    """A prompt line naming the selected strategy and its instruction from the pool."""
    return strategy_line(choose_strategy(task, memory, current_time))


async def astrategy_instruction(
    memory: EpisodicMemory, task: TaskDescription | str, current_time: float | None = None
) -> str:
    """Async twin of :func:`strategy_instruction` (the recall runs in a thread)."""
    return await run_in_executor(None, strategy_instruction, memory, task, current_time)
