"""What the middleware keeps of an agent run in its state, and reads back from it.

The replay a run injects is fixed at its start and kept in the agent state (private
key `STATE_KEY`), so every model call of
the run, a resumed run and the recording after it see the same task, run id, turn and
namespace. Requires LangGraph (the ``agents`` extra), imported by the middleware only.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from typing import Any, cast

from langgraph.config import get_config
from typing_extensions import NotRequired, TypedDict  # typing has them from 3.11 only

from langchain_episodic._run import (
    RUN_ID_KEY,
    STATE_KEY,
    agent_name,
    given_text,
    run_from_config,
)
from langchain_episodic.integrations._messages import human_texts
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import EpisodeSource, TaskDescription
from langchain_episodic.pipeline import Replay

__all__ = [
    "EpisodicReplay",
    "current_config",
    "new_run_id",
    "replay_of",
    "run_state",
    "source_of",
    "thread_of",
]


class EpisodicReplay(TypedDict):
    """What the middleware injects during one agent run, fixed at the run's start.

    Attributes:
        task: The run's task, as `TaskDescription.to_dict` (JSON-safe, so it
            survives checkpointing).
        prompt: The text appended to the system prompt: the replay prompt, then the
            strategy line when ``include_strategy=True``.
        strategy: The selected strategy (a key of ``STRATEGY_POOL``), or ``None`` when
            ``include_strategy=False``.
        run_id: The run the shown episodes were noted under, for the credit loop
            (absent in states checkpointed by earlier versions).
        namespace: The namespace the run recalled from and records to.
        holdout: The run is a holdout run (``EpisodicMemory(holdout=...)``): shown
            no memory by chance, the baseline of credit and the lift report.
        thread_task: The task of the thread's first turn, as
            `TaskDescription.to_dict` (the run's own task on a first turn).
        turn: Which turn of its thread the run is: 1, then 2 for the first follow-up.
        thread_id: LangGraph's ``thread_id`` of the run, if it has one.
        agent: The agent's name (``create_agent(name=...)``), if it has one.
        principal: Who the run acts for, from its context (the middleware's
            ``principal=``): recorded as the episode's ``EpisodeSource.principal``.
    """

    task: dict[str, Any]
    prompt: str
    strategy: str | None
    run_id: NotRequired[str | None]
    namespace: NotRequired[str]
    holdout: NotRequired[bool]
    thread_task: NotRequired[dict[str, Any]]
    turn: NotRequired[int]
    thread_id: NotRequired[str | None]
    agent: NotRequired[str | None]
    principal: NotRequired[str | None]


def replay_of(state: Mapping[str, Any]) -> EpisodicReplay | None:
    """The run's `EpisodicReplay` kept in ``state``, or ``None`` if there is none."""
    return cast("EpisodicReplay | None", state.get(STATE_KEY))


def source_of(state: Mapping[str, Any]) -> EpisodeSource | None:
    """The run's provenance kept in ``state``; ``None`` when it holds no replay."""
    replay = replay_of(state)
    if replay is None:
        return None
    return EpisodeSource(
        agent=replay.get("agent"),
        run_id=replay.get("run_id"),
        thread_id=replay.get("thread_id"),
        turn=replay.get("turn"),
        namespace=replay.get("namespace"),
        principal=replay.get("principal"),
    )


def run_state(
    replay: Replay, memory: EpisodicMemory, thread_task: TaskDescription, turn: int
) -> EpisodicReplay:
    """What a run keeps of ``replay``, built from ``memory`` for the run's thread turn."""
    config = current_config()
    return EpisodicReplay(
        task=replay.task.to_dict(),
        prompt=replay.text,
        strategy=None if replay.strategy is None else replay.strategy.strategy,
        run_id=replay.run_id,
        namespace=memory.namespace,
        holdout=replay.holdout,
        thread_task=thread_task.to_dict(),
        turn=turn,
        thread_id=run_from_config(config)[1],
        agent=agent_name(config),
    )


def thread_of(state: Mapping[str, Any]) -> tuple[TaskDescription | None, int]:
    """``(thread_task, turn)``: the task of the thread's first turn (``None`` on a first turn)."""
    previous = replay_of(state)
    if previous is not None and isinstance(previous.get("turn"), int) and "thread_task" in previous:
        return TaskDescription.from_dict(previous["thread_task"]), previous["turn"] + 1
    # No earlier turn on record (no checkpointer, or a state from before turns were
    # kept): the human messages the run was given are its thread so far.
    texts = human_texts(state.get("messages", ()))
    if len(texts) < 2:
        return None, 1
    return TaskDescription(texts[0]), len(texts)


def new_run_id() -> str:
    """The caller's run id (``configurable["run_id"]``), else a new one."""
    configurable = (current_config() or {}).get("configurable") or {}
    return given_text(configurable.get(RUN_ID_KEY)) or uuid.uuid4().hex


def current_config() -> Mapping[str, Any] | None:
    """The current LangGraph run's configuration; ``None`` outside a run."""
    try:
        return get_config()
    except RuntimeError:  # called outside a LangGraph run (a direct call, a test)
        return None
