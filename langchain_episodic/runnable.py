"""The replay prompt as an LCEL ``Runnable``: task in, prompt text out."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from langchain_core.runnables import RunnableConfig, RunnableLambda

from langchain_episodic._async import in_executor
from langchain_episodic._run import run_from_config
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import TaskDescription, as_task
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from langchain_episodic.prompting.renderers import RendererArg, resolve_renderer
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.service.replay import ReplaySource

__all__ = ["create_replay_runnable", "task_from_input"]


def task_from_input(value: Any, input_key: str = "task") -> TaskDescription:
    """Read the task from a runnable's input: a str, a TaskDescription or a dict.

    A dict holds the task under ``input_key``, as a str, a TaskDescription or a dict
    of ``TaskDescription`` fields. A str becomes a task through
    `as_task`.

    Raises:
        EpisodicValueError: The input holds no usable task (the error names the input,
            ``input`` or ``input['task']``, and its value).
    """
    name = "input"
    if isinstance(value, Mapping):
        if input_key not in value:
            msg = f"input has no key {input_key!r} (keys: {sorted(map(str, value))})"
            raise EpisodicValueError(msg)
        name = f"input[{input_key!r}]"
        value = value[input_key]
        if isinstance(value, Mapping):
            return TaskDescription.from_dict(value)
    if isinstance(value, (str, TaskDescription)):
        return as_task(value, name)
    msg = f"{name}={value!r} is invalid: expected a str, a TaskDescription or a dict"
    raise EpisodicValueError(msg)


def create_replay_runnable(
    memory: ReplaySource,
    *,
    input_key: str = "task",
    options: RecallOptions | None = None,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    token_counter: Callable[[str], int] = approximate_token_count,
    include_strategy: bool = False,
    renderer: RendererArg = "auto",
    **option_fields: Any,
) -> RunnableLambda[Any, str]:
    r"""A runnable mapping a task to its replay prompt, sync and async.

    Each invocation is one `build_replay`: one recall for
    the prompt and, with ``include_strategy``, the strategy line. The episodes shown
    are noted for the credit loop under the run named by
    ``config={"configurable": {"run_id": ...}}`` (else the call's LangChain run
    id); credit the outcome with ``memory.runs.credit(run_id, reward)``.

    Examples:
        ```python
        from langchain_core.prompts import ChatPromptTemplate
        from langchain_core.runnables import RunnablePassthrough

        prompt = ChatPromptTemplate.from_messages([
            ("system", "You are a coding agent.\n\n{replay}"),
            ("human", "{task}"),
        ])
        chain = {"replay": memory.as_runnable(), "task": RunnablePassthrough()} | prompt | model
        chain.invoke(
            "Add password reset to the login form",
            config={"configurable": {"run_id": "job-42"}},
        )
        memory.runs.credit("job-42", reward=0.9)  # once the tests have run
        ```

    Args:
        memory: Where to recall from.
        input_key: Key of the task when the input is a dict.
        options: Recall options; the defaults when ``None``.
        max_tokens: Token budget of the prompt:
            `DEFAULT_MAX_TOKENS` by default, ``None``
            for no budget.
        token_counter: Counts tokens for the budget.
        include_strategy: Append the selected strategy's instruction.
        renderer: How episodes become text
            (`renderers`): ``"auto"`` (default),
            ``"compact"``, ``"detailed"``, or your own.
        **option_fields: Recall options on top of ``options`` (``top_k=3``, ...).

    Raises:
        TypeError: An unknown recall option, or one of the wrong type.
        EpisodicValueError: A recall option's value is invalid.
    """
    options = RecallOptions.from_mapping(options, option_fields)
    resolve_renderer(renderer, options.ranking)  # refuse a bad renderer now, not per call

    def _invoke(value: Any, config: RunnableConfig) -> str:
        run_id, thread_id = run_from_config(config)
        return memory.replay.build(
            task_from_input(value, input_key),
            options,
            run_id=run_id,
            thread_id=thread_id,
            max_tokens=max_tokens,
            token_counter=token_counter,
            include_strategy=include_strategy,
            renderer=renderer,
        ).text

    async def _ainvoke(value: Any, config: RunnableConfig) -> str:
        return await in_executor(_invoke, value, config)

    return RunnableLambda(_invoke, afunc=_ainvoke, name="episodic_replay")
