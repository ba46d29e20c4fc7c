"""Agent middleware for LangChain 1.x ``create_agent``: replay before, record after.

`EpisodicMemoryMiddleware` recalls past episodes for the task an agent run was
given, appends the replay prompt to the system prompt of every model call of the run,
and, when the run finishes, records the episode your ``record_episode`` callable builds
from it (typically from test results, with
`episode_from_tests`). Given a
`LessonWriter`, it also distils lessons from the
recorded episode, in the run or in a background thread, off the agent's hot path.

Requires the ``agents`` extra: ``pip install "langchain-episodic[agents]"``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Annotated, Any, Literal

from langchain_core.embeddings import Embeddings
from typing_extensions import NotRequired  # typing has it from 3.11 only

from langchain_episodic._async import async_twin
from langchain_episodic._extras import missing_extra
from langchain_episodic._run import STATE_KEY
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.integrations._background import EXIT_FLUSH_TIMEOUT
from langchain_episodic.integrations._messages import (
    FOLLOW_UP,
    append_to_system,
    latest_human_text,
)
from langchain_episodic.integrations._scope import NamespaceScope, check_scope, resolve_namespace
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import EpisodeSource, TaskDescription
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from langchain_episodic.prompting.renderers import RendererArg
from langchain_episodic.reflection import LessonWriter
from langchain_episodic.scoring.options import RecallOptions

try:
    from langchain.agents.middleware.types import (
        AgentMiddleware,
        AgentState,
        ContextT,
        ModelRequest,
        ModelResponse,
        PrivateStateAttr,
        ResponseT,
    )
except ImportError as error:
    raise missing_extra("EpisodicMemoryMiddleware", "agents") from error

# The run's parts, after the guard above: they need LangGraph (the agents extra).
from langchain_episodic.integrations._memories import RunMemories
from langchain_episodic.integrations._recording import RecordEpisode, RunRecorder
from langchain_episodic.integrations._replaying import FollowUps, RunReplayer, TaskExtractor
from langchain_episodic.integrations._run_state import (
    EpisodicReplay,
    new_run_id,
    replay_of,
    source_of,
)

if TYPE_CHECKING:
    from langchain_core.messages import AIMessage
    from langgraph.runtime import Runtime

__all__ = [
    "EXIT_FLUSH_TIMEOUT",  # importable from here as before; the exit hook reads _background's
    "FOLLOW_UP",
    "STATE_KEY",
    "EpisodicMemoryMiddleware",
    "EpisodicMemoryState",
    "EpisodicReplay",
    "FollowUps",
    "RecordEpisode",
    "TaskExtractor",
    "latest_human_text",
]


class EpisodicMemoryState(AgentState[ResponseT]):
    """Agent state extended with the run's replay (private: not in input or output)."""

    episodic_replay: NotRequired[Annotated[EpisodicReplay | None, PrivateStateAttr]]


class EpisodicMemoryMiddleware(
    AgentMiddleware[EpisodicMemoryState[ResponseT], ContextT, ResponseT]
):
    """Replay past episodes into an agent's system prompt; record the run's episode.

    **Before the model** — once per agent run (in ``before_agent``), the middleware
    finds the run's task (the latest human message, or ``task_extractor(state)``),
    recalls the ``top_k`` most relevant past episodes from ``memory`` and formats the
    replay prompt, optionally followed by the strategy chosen from those same episodes
    (one `build_replay`, one recall). The result is kept in
    the agent state (private key ``episodic_replay``), and every model call of the run
    (``wrap_model_call`` / ``awrap_model_call``) gets it appended to its system
    prompt: the user's own system prompt stays first; without one, the replay prompt
    becomes the system prompt. Requests are never mutated; ``request.override`` is used.

    Recalling once per run means a model → tool → model loop sees the same replay on
    every call, even if memory changes meanwhile, concurrent runs never share a cache,
    and an interrupted run resumed from a checkpoint keeps its replay. Each new
    ``invoke`` (also a new turn on the same thread) recalls afresh.

    **Threads** — with a checkpointer, each new ``invoke`` on a thread is one more
    turn of it, and a follow-up ("Also reject empty passwords") means nothing on its
    own. By default (``follow_ups="thread"``) the task of a follow-up carries its
    thread's task: the first turn's task, then `FOLLOW_UP` and the request
    (``Implement a login form``, a new line, ``Follow-up: Also reject empty passwords``), in the
    first turn's category unless the follow-up's own task names one. It is what the
    turn recalls for and what ``task_of(state)`` gives ``record_episode``; the
    thread's task is kept in the run's private state, so a thread's first message
    may be trimmed or summarised away. Without a checkpointer, a run given several
    human messages is read the same way (the first is the thread's task).
    ``follow_ups="alone"`` reads every turn on its own.

    **Provenance** — the episode ``record_episode`` returns is recorded with its
    `EpisodeSource` filled in: the agent's name, the run
    id, the thread id and turn, and the namespace (fields your episode sets itself
    are kept); ``self.source_of(state)`` gives it.

    **After the agent** — when the run completes, ``record_episode(state, runtime)`` is
    called (if given) with the final state; the `Episode` it returns is recorded
    with ``memory.record`` (``arecord`` under ``ainvoke``). ``None`` records nothing:
    the middleware never invents feedback. A typical implementation runs the tests and
    calls `episode_from_tests`; ``self.task_of(state)`` and
    ``self.strategy_of(state)`` give the run's task and strategy.

    **Credit** — each run's replay is noted under a run id of its own (the call's
    ``config={"configurable": {"run_id": ...}}`` when given, else a new one;
    ``self.run_id_of(state)``), and the recorded episode's reward is credited to the
    episodes the run was shown (`credit`), so
    those that help rise in later recalls. The recall tool
    (`create_recall_tool`) called inside the run notes what
    it shows under the same run id, so one agent run is one credited run. A run
    whose ``record_episode`` returns ``None`` stays open until the memory's
    ``open_run_ttl`` closes it. Noting and crediting never break the run: a failure
    is logged.

    **Reflection** — with ``reflect_with=LessonWriter(model)``, each recorded episode is
    reflected on (`reflect`: the episode and its
    same-category neighbours are shown to the model, and the lessons that pass are
    stored in the run's namespace), and later runs see those lessons above the
    episodes in their system prompt. By default it runs right after recording, inside
    ``after_agent`` (under ``ainvoke`` in a worker thread, never on the event loop);
    with ``reflect_in_background=True`` it is queued for one worker thread per
    middleware and the run returns at once: at most ``reflection_queue`` reflections
    wait or run, and one more is dropped with a logged warning. `flush` waits
    for them, `close` flushes and stops the thread. A model that fails, answers
    garbage or is slow never breaks the run: every error is logged, never raised.

    Setup:
        ```bash
        pip install "langchain-episodic[agents]"
        ```

    Examples:
        >>> from langchain.agents import create_agent
        >>> from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
        >>> from langchain_episodic import EpisodicMemory
        >>> from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
        >>> memory = EpisodicMemory()
        >>> model = GenericFakeChatModel(messages=iter(["def signup(email): ..."]))
        >>> agent = create_agent(model, tools=[], middleware=[EpisodicMemoryMiddleware(memory)])
        >>> result = agent.invoke({"messages": [{"role": "user", "content": "Add a signup form"}]})
        >>> result["messages"].pop().content
        'def signup(email): ...'

    Record the outcome of each run:
        ```python
        from langchain.chat_models import init_chat_model
        from langchain_episodic import episode_from_tests


        def record_episode(state, runtime):
            code = state["messages"][-1].text
            passed, total, log = run_my_tests(code)  # your test harness
            return episode_from_tests(
                EpisodicMemoryMiddleware.task_of(state), code, passed, total, log,
                strategy_used=EpisodicMemoryMiddleware.strategy_of(state) or "default",
                timestamp=memory.now(),  # the memory's clock; time.time() if omitted
            )


        agent = create_agent(
            init_chat_model("openai:gpt-4.1-mini"),
            tools=[...],
            system_prompt="You are a careful Python developer.",
            middleware=[
                EpisodicMemoryMiddleware(
                    memory, top_k=3, max_tokens=800, include_strategy=True,
                    record_episode=record_episode,
                )
            ],
        )
        ```

    Args:
        memory: Where episodes are recalled from and recorded to. ``None``: in the
            agent's own LangGraph store (``create_agent(..., store=...)``, read from
            ``runtime.store``; it needs a vector index whose embeddings are
            ``embeddings``), through
            `LangGraphEpisodeStore`.
        top_k: Episodes to recall per run; sets ``options.top_k`` (3 by default).
        options: Recall options (`RecallOptions`: weights,
            half-life, filters, ``current_time``, ...). They apply to the replay
            prompt and to the strategy alike: both come from one recall.
        max_tokens: Token budget of the replay prompt (the strategy line is extra):
            `DEFAULT_MAX_TOKENS` by default, ``None``
            for no budget.
        token_counter: Counts tokens for the budget, e.g. ``model.get_num_tokens``.
        include_strategy: Also append ``Strategy: <name> - <instruction>`` for the
            strategy `choose_strategy` selects.
        renderer: How episodes become text (`renderers`):
            ``"auto"`` (default: ``"compact"``, what worked first and a failure as its
            feedback line; the article's ``"detailed"`` prompt for ``ranking="article"``),
            ``"compact"``, ``"detailed"``, or your own.
        task_extractor: ``(state) -> str | TaskDescription | None``; by default the
            text of the latest human message (as a task of category ``unknown``).
            Return a `TaskDescription` to give category and complexity, which
            the prompt and the strategy selection use. ``None`` skips the replay.
        infer_category: A task without a category (the latest message's text, or a
            ``TaskDescription`` of category ``unknown``) gets the one the memory infers
            from its text (`task`), so skill
            profiles and credit's baselines are per category; ``False``: it stays
            ``unknown``, and so does the category of the episodes it records. A
            category the ``task_extractor`` gives is kept.
        follow_ups: ``"thread"`` (default): a follow-up turn's task carries its
            thread's task (see *Threads* above); ``"alone"``: every turn's task is
            what ``task_extractor`` gives for it.
        record_episode: ``(state, runtime) -> Episode | None``, sync or async, called
            once after the agent finishes; see `RecordEpisode`.
        on_record_error: What an exception raised while recording the finished run
            (by ``record_episode``, or by the memory refusing its episode) does:
            ``"log"`` (default) logs it with its traceback and keeps the run's answer,
            which the model has already given; ``"raise"`` lets it out of
            ``agent.invoke`` (the answer is then lost to the caller).
        namespace: Memory per run, for an agent that serves many users: a template
            over the run's ``runtime.context`` fields (``"user-{user_id}"``) or a
            callable ``(runtime) -> str``. Each run recalls from, records to and
            credits in that namespace of ``memory``'s store only
            (`for_namespace`). A run whose
            context lacks the field raises
            `EpisodicValueError`: it never falls back to
            a shared namespace. ``None`` (default): every run uses ``memory``.
        principal: Who each run acts for, recorded on its episode as
            ``EpisodeSource.principal``: a template over the run's ``runtime.context``
            fields (``"{user_id}"``) or a callable ``(runtime) -> str``, as
            ``namespace``. In a shared memory (``EpisodicMemory(shared=True)``) it
            bounds what one principal can put in another's replay; set it from what
            your application vouches for (the authenticated user), never from the task.
            ``None`` (default): episodes carry no principal; refused with a shared
            ``memory``.
        embeddings: With ``memory=None``, the memory's embeddings model (the
            packaged default when ``None``): the agent store's index must embed with
            the same model.
        reflect_with: Distil lessons from each recorded episode with this
            `LessonWriter` (a chat model).
            ``None`` (default): no reflection, no model call.
        reflect_in_background: Reflect in a background thread (the run does not
            wait for the model) instead of inside ``after_agent``.
        reflection_queue: Background reflections waiting or running, at most; one
            more is dropped (logged).

    Raises:
        TypeError: ``memory`` is not an `EpisodicMemory`, or a callable is not
            callable.
        TypeError: ``options`` is not a `RecallOptions`.
        TypeError: ``reflect_with`` is not a ``LessonWriter``, or
            ``reflect_in_background`` not a bool.
        EpisodicValueError: A shared ``memory`` without ``principal``.
        EpisodicValueError: ``top_k``, ``max_tokens``, ``reflection_queue``,
            ``follow_ups`` or ``on_record_error`` is invalid.
    """

    state_schema = EpisodicMemoryState  # type: ignore[assignment]

    def __init__(
        self,
        memory: EpisodicMemory | None = None,
        top_k: int | None = None,
        *,
        options: RecallOptions | None = None,
        max_tokens: int | None = DEFAULT_MAX_TOKENS,
        token_counter: Callable[[str], int] = approximate_token_count,
        include_strategy: bool = False,
        renderer: RendererArg = "auto",
        task_extractor: TaskExtractor | None = None,
        infer_category: bool = True,
        follow_ups: FollowUps = "thread",
        record_episode: RecordEpisode | None = None,
        namespace: NamespaceScope | None = None,
        principal: NamespaceScope | None = None,
        embeddings: Embeddings | None = None,
        reflect_with: LessonWriter | None = None,
        reflect_in_background: bool = False,
        reflection_queue: int = 16,
        on_record_error: Literal["log", "raise"] = "log",
    ) -> None:
        super().__init__()
        # Three parts, one job each, each checking its own settings: which memory a run
        # uses, the replay before it, the recording after it.
        self._memories = RunMemories(memory, namespace, embeddings)
        self._principal = None if principal is None else check_scope(principal, "principal")
        if principal is None and memory is not None and memory.runs.shared:
            # Else every run would be credited by the middleware's own name: one
            # principal for all, each episode's evidence capped at its few runs.
            msg = (
                "memory is shared (EpisodicMemory(shared=True)): give principal=, a "
                "template over the run's context such as '{user_id}', so that each run's "
                "episodes and credit are its principal's"
            )
            raise EpisodicValueError(msg)
        self._replayer = RunReplayer(
            options=RecallOptions.from_mapping(
                options, None if top_k is None else {"top_k": top_k}
            ),
            max_tokens=max_tokens,
            token_counter=token_counter,
            include_strategy=include_strategy,
            renderer=renderer,
            task_extractor=task_extractor,
            infer_category=infer_category,
            follow_ups=follow_ups,
        )
        self._recorder = RunRecorder(
            memories=self._memories,
            record_episode=record_episode,
            on_record_error=on_record_error,
            reflect_with=reflect_with,
            reflect_in_background=reflect_in_background,
            reflection_queue=reflection_queue,
            infer_category=infer_category,
        )

    def __repr__(self) -> str:
        return (
            f"EpisodicMemoryMiddleware(memory={self.memory!r}, namespace={self.namespace!r}, "
            f"options={self.options!r}, "
            f"max_tokens={self.max_tokens}, include_strategy={self.include_strategy})"
        )

    @property
    def memory(self) -> EpisodicMemory | None:
        """The memory runs use (``None``: each agent's own LangGraph store)."""
        return self._memories.memory

    @property
    def namespace(self) -> NamespaceScope | None:
        """The per-run namespace template or callable, or ``None``."""
        return self._memories.namespace

    @property
    def options(self) -> RecallOptions:
        """The recall options of every run's replay (``top_k`` included)."""
        return self._replayer.options

    @property
    def max_tokens(self) -> int | None:
        """The replay prompt's token budget (``None``: no budget)."""
        return self._replayer.max_tokens

    @property
    def include_strategy(self) -> bool:
        """Whether the strategy line follows the replay prompt."""
        return self._replayer.include_strategy

    # ------------------------------------------------------------------ state helpers

    @staticmethod
    def replay_of(state: Mapping[str, Any]) -> EpisodicReplay | None:
        """The run's `EpisodicReplay` kept in ``state``, or ``None`` if there is none."""
        return replay_of(state)

    @staticmethod
    def task_of(state: Mapping[str, Any]) -> TaskDescription | None:
        """The task the run's replay was built for, or ``None`` if there was none."""
        replay = replay_of(state)
        return None if replay is None else TaskDescription.from_dict(replay["task"])

    @staticmethod
    def run_id_of(state: Mapping[str, Any]) -> str | None:
        """The run id the replay's episodes were noted under (for ``EpisodeSource``)."""
        replay = replay_of(state)
        return None if replay is None else replay.get("run_id")

    @staticmethod
    def strategy_of(state: Mapping[str, Any]) -> str | None:
        """The strategy injected into the run (``include_strategy=True``), else ``None``."""
        replay = replay_of(state)
        return None if replay is None else replay["strategy"]

    @staticmethod
    def turn_of(state: Mapping[str, Any]) -> int | None:
        """Which turn of its thread the run is (1, 2, ...), or ``None`` without a replay."""
        replay = replay_of(state)
        return None if replay is None else replay.get("turn")

    @staticmethod
    def source_of(state: Mapping[str, Any]) -> EpisodeSource | None:
        """The run's provenance: agent name, run id, thread id and turn, namespace.

        What the middleware records an episode with (fields the episode's own
        source sets are kept); ``None`` when the state holds no replay.
        """
        return source_of(state)

    # ------------------------------------------------------------------ replay

    def memory_for(self, runtime: object) -> EpisodicMemory:
        """The memory a run uses: ``memory``, or its twin for the run's namespace.

        With ``memory=None``, the memory over the agent's own store
        (``runtime.store``), opened once per store.

        Raises:
            EpisodicValueError: ``namespace`` is a template and the run's context
                lacks a field it names (or it gives no usable namespace).
            StoreConfigurationError: ``memory=None`` and the agent has no store, or
                one without a vector index.
        """
        return self._memories.for_run(runtime)

    def build_replay(
        self, state: Mapping[str, Any], *, run_id: str | None = None, runtime: object = None
    ) -> EpisodicReplay | None:
        """Recall once for the task of ``state`` and build what the run will inject.

        Args:
            state: The agent state.
            run_id: Note the episodes shown under this run, for the credit loop.
            runtime: The run's LangGraph runtime (its context picks the namespace
                when ``namespace`` is set).

        Returns:
            The replay, or ``None`` when the state holds no task.
        """
        found = self._replayer.task(state)
        if found is None:
            return None
        principal = None
        if self._principal is not None:  # before anything opens: a run without it fails first
            principal = resolve_namespace(self._principal, runtime, "principal")
        replay = self._replayer.build(self.memory_for(runtime), found, run_id, principal)
        if principal is not None:
            replay["principal"] = principal
        return replay

    abuild_replay = async_twin(build_replay)

    def before_agent(
        self, state: EpisodicMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Recall once for the run's task and keep the replay in the state.

        The episodes shown are noted under a new run id (or the one the call's
        configuration names: ``config={"configurable": {"run_id": ...}}``), which
        `run_id_of` gives; the run's outcome credits them after the agent.

        Args:
            state: The agent state at the start of the run.
            runtime: The run's runtime; its context picks the namespace when
                ``namespace`` is set.

        Returns:
            The state update ``{"episodic_replay": EpisodicReplay | None}``.
        """
        return {STATE_KEY: self.build_replay(state, run_id=new_run_id(), runtime=runtime)}

    async def abefore_agent(
        self, state: EpisodicMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of `before_agent`."""
        return {STATE_KEY: await self.abuild_replay(state, run_id=new_run_id(), runtime=runtime)}

    def wrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], ModelResponse[ResponseT]],
    ) -> ModelResponse[ResponseT] | AIMessage:
        """Append the run's replay to the system prompt, then call the model.

        The replay is the one ``before_agent`` stored for this run; if the state holds
        none (the middleware was not part of the run's start), it is built now.

        Args:
            request: The model request; not mutated.
            handler: Calls the model.

        Returns:
            The model's response, unchanged.
        """
        if STATE_KEY in request.state:
            replay = replay_of(request.state)
        else:
            state = {**request.state, "messages": request.messages}
            replay = self.build_replay(state, runtime=request.runtime)
        return handler(_inject(request, replay))

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelResponse[ResponseT] | AIMessage:
        """Async twin of `wrap_model_call`."""
        if STATE_KEY in request.state:
            replay = replay_of(request.state)
        else:
            state = {**request.state, "messages": request.messages}
            replay = await self.abuild_replay(state, runtime=request.runtime)
        return await handler(_inject(request, replay))

    # ------------------------------------------------------------------ record

    def after_agent(
        self, state: EpisodicMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Record the episode ``record_episode`` builds from the finished run, if any.

        Args:
            state: The final agent state.
            runtime: The runtime context, passed on to ``record_episode``.

        Returns:
            ``None``: the state is left unchanged.

        Raises:
            TypeError: ``record_episode`` returned something other than an
                `Episode` or ``None``, or is async under a sync ``invoke``.
        """
        self._recorder.record(state, runtime)
        return None

    async def aafter_agent(
        self, state: EpisodicMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of `after_agent`; a sync ``record_episode`` runs in a thread."""
        await self._recorder.arecord(state, runtime)
        return None

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for the background reflections queued so far.

        Args:
            timeout: Seconds to wait at most; ``None`` waits until they are done.

        Returns:
            Whether none is pending any more (``False``: the timeout passed first).
        """
        return self._recorder.reflections.flush(timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Flush the background reflections, then stop the reflection thread.

        Reflections queued after ``close`` are dropped (logged). Safe to call twice.

        Args:
            timeout: Seconds to wait at most; ``None`` waits until they are done.

        Returns:
            Whether every queued reflection finished (``False``: the rest were dropped).
        """
        return self._recorder.reflections.close(timeout)


def _inject(
    request: ModelRequest[ContextT], replay: EpisodicReplay | None
) -> ModelRequest[ContextT]:
    # An empty replay (a budget too small for even its header) adds nothing.
    if replay is None or not replay["prompt"].strip():
        return request
    return request.override(
        system_message=append_to_system(request.system_message, replay["prompt"])
    )
