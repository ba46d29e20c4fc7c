"""Before an agent run: read its task and build the replay it will inject.

`RunReplayer` holds the middleware's replay settings (recall options, budget,
renderer, strategy line, how a task is read) and turns an agent state into the
`EpisodicReplay` the run keeps.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from langchain_episodic._run import run_from_config
from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.integrations._messages import follow_up, latest_human_text
from langchain_episodic.integrations._run_state import (
    EpisodicReplay,
    current_config,
    run_state,
    thread_of,
)
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import TaskDescription, as_task
from langchain_episodic.pipeline import build_replay
from langchain_episodic.prompting.renderers import RendererArg, resolve_renderer
from langchain_episodic.scoring.options import RecallOptions

__all__ = ["FollowUps", "RunReplayer", "TaskExtractor"]

FollowUps = Literal["thread", "alone"]
"""How a follow-up turn's task is read: with its thread's task, or on its own."""

TaskExtractor = Callable[[Any], str | TaskDescription | None]
"""``task_extractor(state) -> str | TaskDescription | None``: the task of a run.

``state`` is the agent state at the start of the run (a dict with ``"messages"`` and
any custom keys). ``None`` or a blank string means "no task": nothing is injected.
"""


@dataclass(frozen=True, kw_only=True)
class RunReplayer:
    """The replay settings of a middleware, and the replay they build for a run.

    Args and their checks are `EpisodicMemoryMiddleware`'s
    of the same names; every one is checked here, once, when the middleware is built.
    """

    options: RecallOptions
    max_tokens: int | None
    token_counter: Callable[[str], int]
    include_strategy: bool
    renderer: RendererArg
    task_extractor: TaskExtractor | None
    infer_category: bool
    follow_ups: FollowUps

    def __post_init__(self) -> None:
        if self.follow_ups not in ("thread", "alone"):
            msg = f"follow_ups={self.follow_ups!r} is invalid: must be 'thread' or 'alone'"
            raise EpisodicValueError(msg)
        if self.max_tokens is not None:
            check_int("max_tokens", self.max_tokens, 1)
        for name in ("token_counter", "task_extractor"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                msg = f"{name}={value!r} is invalid: must be callable"
                raise TypeError(msg)
        if not isinstance(self.infer_category, bool):
            msg = f"infer_category={self.infer_category!r} is invalid: must be a bool"
            raise TypeError(msg)
        resolve_renderer(self.renderer, self.options.ranking)  # refuse a bad one now, not per run

    def task(self, state: Mapping[str, Any]) -> tuple[TaskDescription, TaskDescription, int] | None:
        """``(task, thread_task, turn)`` of the run, or ``None`` when it has no task."""
        current = self._own_task(state)
        if current is None:
            return None
        thread_task, turn = thread_of(state)
        if thread_task is None:
            return current, current, turn
        alone = self.follow_ups == "alone"
        return current if alone else follow_up(thread_task, current), thread_task, turn

    def _own_task(self, state: Mapping[str, Any]) -> TaskDescription | None:
        if self.task_extractor is None:
            task: object = latest_human_text(state.get("messages", ()))
        else:
            task = self.task_extractor(state)
        # None or a blank string: the run has no task, so nothing is injected.
        if task is None or (isinstance(task, str) and not task.strip()):
            return None
        if isinstance(task, (str, TaskDescription)):
            return as_task(task, "task_extractor")
        msg = f"task_extractor returned {task!r}: expected a str, a TaskDescription or None"
        raise TypeError(msg)

    def build(
        self,
        memory: EpisodicMemory,
        found: tuple[TaskDescription, TaskDescription, int],
        run_id: str | None,
        principal: str | None = None,
    ) -> EpisodicReplay:
        """Recall once from ``memory`` for the run's task ``found`` (see `task`).

        ``principal``: who the run acts for (its own episodes are not capped in a
        shared memory).
        """
        task, thread_task, turn = found
        if self.infer_category:
            task, thread_task = memory.task(task), memory.task(thread_task)
        replay = build_replay(
            memory,
            task,
            self.options if principal is None else self.options.replace(principal=principal),
            run_id=run_id,
            thread_id=None if run_id is None else run_from_config(current_config())[1],
            max_tokens=self.max_tokens,
            token_counter=self.token_counter,
            include_strategy=self.include_strategy,
            renderer=self.renderer,
        )
        return run_state(replay, memory, thread_task, turn)
