"""A tool the agent calls to search its own past experiences."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool, StructuredTool
from pydantic import BaseModel, Field

from langchain_episodic._async import async_twin
from langchain_episodic._run import agent_run, run_from_config
from langchain_episodic.integrations._scope import (
    NamespaceScope,
    check_scope,
    resolve_namespace,
)
from langchain_episodic.model.episode import OutcomeStatus, TaskCategory
from langchain_episodic.pipeline import build_replay, replay_renderer
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS
from langchain_episodic.prompting.renderers import RendererArg, resolve_renderer
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.scoring.priority import PrioritizedResult

if TYPE_CHECKING:
    from langchain_episodic.memory import EpisodicMemory

try:  # LangChain 1.x agents (the `agents` extra): the agent run's state and context
    from langchain.tools import ToolRuntime
except ImportError:  # pragma: no cover - exercised only without the extra
    ToolRuntime = None  # type: ignore[assignment,misc]

__all__ = ["NEAR_MISS_SHARE", "NO_MATCH", "RecallInput", "create_recall_tool", "withheld_line"]

NO_MATCH = "No matching past experiences."
"""What the tool answers when recall finds nothing relevant."""

NEAR_MISS_SHARE = 0.8
"""A failed or partial attempt whose tests passed at least this share is shown by the
tool, with its code, marked as a near miss (``CompactRenderer(near_misses=...)``)."""


def withheld_line(withheld: Sequence[PrioritizedResult]) -> str:
    """The tool's one line for relevant episodes recall found and the replay withheld.

    Examples:
        >>> from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskDescription
        >>> def attempt(name, outcome):
        ...     feedback = Feedback(0.3, tests_passed=3, tests_total=10)
        ...     episode = Episode(name, TaskDescription("Parse dates"), "...", feedback, outcome,
        ...                       timestamp=0.0)
        ...     return PrioritizedResult(episode, 0.9, 0.9)
        >>> print(withheld_line([attempt("a", "failure"), attempt("b", "partial"),
        ...                      attempt("c", "failure")]))  # doctest: +NORMALIZE_WHITESPACE
        3 relevant past attempts found but not shown (1 partial, 2 failure): none passed or came
        close; ask with outcome="failure" to see what went wrong.
    """
    counts = Counter(r.episode.outcome.value for r in withheld)
    parts = ", ".join(f"{counts[o]} {o}" for o in ("success", "partial", "failure") if counts[o])
    noun = "attempt" if len(withheld) == 1 else "attempts"
    if counts["success"]:
        why = "they do not fit in the answer's token budget"
    else:
        why = 'none passed or came close; ask with outcome="failure" to see what went wrong'
    return f"{len(withheld)} relevant past {noun} found but not shown ({parts}): {why}."


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


def create_recall_tool(
    memory: EpisodicMemory,
    *,
    name: str = "recall_past_experiences",
    description: str = (
        "Search your own past attempts at similar tasks: what was tried, which strategy, "
        "what the tests said, and the solution. Use it before writing code for a task "
        "that resembles earlier work, or after a failure to see how similar ones were fixed."
    ),
    options: RecallOptions | None = None,
    max_tokens: int | None = DEFAULT_MAX_TOKENS,
    namespace: NamespaceScope | None = None,
    renderer: RendererArg = "auto",
    principal: NamespaceScope | None = None,
) -> BaseTool:
    """A LangChain tool over ``memory``'s recall, with optional category/outcome filters.

    Each call is one `build_replay` for the query: the
    model gets the same replay prompt (stored text shown as data, within
    ``max_tokens``) that the other integrations inject, plus the near misses a search
    on purpose deserves (a failed attempt whose tests passed at least
    `NEAR_MISS_SHARE`, with its code, marked ``near_miss="true"``). When recall
    found relevant episodes the replay still withholds, the answer says so in one
    line (`withheld_line`: how many, their outcomes); `NO_MATCH` only when
    recall found nothing relevant. The
    episodes shown are noted for the credit loop under the agent run's id when the
    agent has `EpisodicMemoryMiddleware` (read from the
    run's state: the run the middleware credits, once, with everything it showed;
    a holdout run's tool calls are shown nothing too), else under the run named by
    ``config={"configurable": {"run_id": ...}}``, else the tool call's own run id.

    Examples:
        ```python
        from langchain.agents import create_agent

        tool = create_recall_tool(memory)
        agent = create_agent(model, tools=[tool])
        tool.invoke({"query": "login crash", "outcome": "success"})
        ```

    Args:
        memory: Where to recall from.
        name: The tool's name.
        description: What the model is told the tool does.
        options: Recall options the model's arguments (``k``, ``category``,
            ``outcome``) are applied on top of.
        max_tokens: Token budget of the tool's answer:
            `DEFAULT_MAX_TOKENS` by default, ``None``
            for no budget.
        namespace: Memory per run, for an agent that serves many users: a template
            over the agent run's ``runtime.context`` fields (``"user-{user_id}"``) or
            a callable ``(runtime) -> str`` (the tool's ``ToolRuntime``). Each call
            recalls from that namespace of ``memory``'s store only; a run without the
            field gets an error, never another namespace. Needs LangChain 1.x agents
            (``pip install "langchain-episodic[agents]"``).
        renderer: How episodes become text
            (`renderers`): ``"auto"`` (default),
            ``"compact"``, ``"detailed"``, or your own.
        principal: Who each call recalls for, as the middleware's ``principal=``
            (``"{user_id}"``): in a shared memory its own episodes are not held to the
            cap on one principal's share of the answer. Needs LangChain 1.x agents.

    Raises:
        ImportError: ``namespace`` or ``principal`` is given and LangChain 1.x agents
            are not installed.
    """
    base = RecallOptions.from_mapping(options)
    resolve_renderer(renderer, base.ranking)  # refuse a bad renderer now, not per call
    scope = None if namespace is None else check_scope(namespace)
    on_behalf = None if principal is None else check_scope(principal, "principal")
    if (scope is not None or on_behalf is not None) and ToolRuntime is None:
        msg = (
            "create_recall_tool(namespace=..., principal=...) reads the agent run's "
            "context through LangChain 1.x's ToolRuntime: "
            'pip install "langchain-episodic[agents]"'
        )
        raise ImportError(msg)

    def recall(
        query: str,
        config: RunnableConfig,
        category: TaskCategory | None = None,
        outcome: OutcomeStatus | None = None,
        k: int = 3,
        runtime: Any = None,
    ) -> str:
        changes: dict[str, Any] = {"top_k": k}
        if category is not None or outcome is not None:
            changes.update(category=category, outcome=outcome)
        if on_behalf is not None:
            changes["principal"] = resolve_namespace(on_behalf, runtime, "principal")
        options = base.replace(**changes)
        # Noted under the agent run's id, else the call's.
        run_id, thread_id = run_from_config(config)
        noted = agent_run(runtime)
        scoped = (
            memory if scope is None else memory.for_namespace(resolve_namespace(scope, runtime))
        )
        # The tool's near misses, when the replay's renderer is compact; a renderer of
        # your own is shown as it is.
        compact = isinstance(replay_renderer(renderer, options), CompactRenderer)
        replay = build_replay(
            scoped,
            query,
            options,
            max_tokens=max_tokens,
            run_id=run_id if noted is None else noted[0],
            thread_id=thread_id,
            renderer=renderer,
            near_misses=NEAR_MISS_SHARE if isinstance(renderer, str) and compact else None,
        )
        if replay.text.strip():
            return replay.text
        return withheld_line(replay.withheld) if replay.withheld else NO_MATCH

    if ToolRuntime is not None:
        # LangChain injects the agent run's ToolRuntime into a parameter annotated so.
        recall.__annotations__["runtime"] = ToolRuntime

    return StructuredTool.from_function(
        func=recall,
        coroutine=async_twin(recall),
        name=name,
        description=description,
        args_schema=RecallInput,
    )
