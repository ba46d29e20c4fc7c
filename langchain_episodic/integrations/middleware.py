"""Agent middleware for LangChain 1.x ``create_agent``: replay before, record after.

:class:`EpisodicMemoryMiddleware` recalls past episodes for the task an agent run was
given, appends the replay prompt to the system prompt of every model call of the run,
and, when the run finishes, records the episode your ``record_episode`` callable builds
from it (typically from test results, with
:func:`~langchain_episodic.episode_from_tests`). Given a
:class:`~langchain_episodic.reflection.LessonWriter`, it also distils lessons from the
recorded episode, in the run or in a background thread, off the agent's hot path.

Requires the ``agents`` extra: ``pip install "langchain-episodic[agents]"``.
"""

from __future__ import annotations

import inspect
import logging
import threading
import uuid
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from typing import TYPE_CHECKING, Annotated, Any, Literal, cast

from langchain_core.embeddings import Embeddings
from langchain_core.runnables.config import run_in_executor
from typing_extensions import NotRequired, TypedDict  # typing has them from 3.11 only

from langchain_episodic._extras import missing_extra
from langchain_episodic._validation import check_int
from langchain_episodic.errors import EpisodicValueError, StoreConfigurationError
from langchain_episodic.integrations._background import EXIT_FLUSH_TIMEOUT, BackgroundWorker
from langchain_episodic.integrations._messages import (
    FOLLOW_UP,
    append_to_system,
    follow_up,
    human_texts,
    latest_human_text,
)
from langchain_episodic.integrations._run import (
    RUN_ID_KEY,
    STATE_KEY,
    agent_name,
    run_from_config,
)
from langchain_episodic.integrations._scope import (
    NamespaceScope,
    check_scope,
    resolve_namespace,
)
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import (
    Episode,
    EpisodeSource,
    TaskDescription,
    as_task,
)
from langchain_episodic.pipeline import Replay, abuild_replay, build_replay
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from langchain_episodic.prompting.renderers import RendererArg, resolve_renderer
from langchain_episodic.reflection import LessonWriter, reflect
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.stores.base import DEFAULT_NAMESPACE

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
    from langgraph.config import get_config
except ImportError as error:
    raise missing_extra("EpisodicMemoryMiddleware", "agents") from error

from langchain_episodic.stores.langgraph_store import LangGraphEpisodeStore

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

_log = logging.getLogger(__name__)
_CREDITED_BY = "EpisodicMemoryMiddleware"

FollowUps = Literal["thread", "alone"]
"""How a follow-up turn's task is read: with its thread's task, or on its own."""

TaskExtractor = Callable[[Any], str | TaskDescription | None]
"""``task_extractor(state) -> str | TaskDescription | None``: the task of a run.

``state`` is the agent state at the start of the run (a dict with ``"messages"`` and
any custom keys). ``None`` or a blank string means "no task": nothing is injected.
"""

RecordEpisode = Callable[[Any, Any], Episode | Awaitable[Episode | None] | None]
"""``record_episode(state, runtime) -> Episode | None``: the episode of a finished run.

Called once after the agent finishes, with the final agent state and the LangGraph
``Runtime``. Return the :class:`Episode` to record, or ``None`` to record nothing. It
may be a coroutine function (awaited under ``ainvoke``; refused under ``invoke``).
An episode built without a timestamp is dated now by the wall clock (``time.time()``);
pass ``timestamp=memory.now()`` to date it on the memory's own (injectable) clock.
"""


class EpisodicReplay(TypedDict):
    """What the middleware injects during one agent run, fixed at the run's start.

    Attributes:
        task: The run's task, as :meth:`TaskDescription.to_dict` (JSON-safe, so it
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
            :meth:`TaskDescription.to_dict` (the run's own task on a first turn).
        turn: Which turn of its thread the run is: 1, then 2 for the first follow-up.
        thread_id: LangGraph's ``thread_id`` of the run, if it has one.
        agent: The agent's name (``create_agent(name=...)``), if it has one.
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


class EpisodicMemoryState(AgentState[ResponseT]):
    """Agent state extended with the run's replay (private: not in input or output)."""

    episodic_replay: NotRequired[Annotated[EpisodicReplay | None, PrivateStateAttr]]


def _check_bools(**flags: object) -> None:
    for name, value in flags.items():
        if not isinstance(value, bool):
            msg = f"{name}={value!r} is invalid: must be a bool"
            raise TypeError(msg)


class EpisodicMemoryMiddleware(
    AgentMiddleware[EpisodicMemoryState[ResponseT], ContextT, ResponseT]
):
    """Replay past episodes into an agent's system prompt; record the run's episode.

    **Before the model** — once per agent run (in ``before_agent``), the middleware
    finds the run's task (the latest human message, or ``task_extractor(state)``),
    recalls the ``top_k`` most relevant past episodes from ``memory`` and formats the
    replay prompt, optionally followed by the strategy chosen from those same episodes
    (one :func:`~langchain_episodic.build_replay`, one recall). The result is kept in
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
    thread's task: the first turn's task, then :data:`FOLLOW_UP` and the request
    (``Implement a login form``, a new line, ``Follow-up: Also reject empty passwords``), in the
    first turn's category unless the follow-up's own task names one. It is what the
    turn recalls for and what ``task_of(state)`` gives ``record_episode``; the
    thread's task is kept in the run's private state, so a thread's first message
    may be trimmed or summarised away. Without a checkpointer, a run given several
    human messages is read the same way (the first is the thread's task).
    ``follow_ups="alone"`` reads every turn on its own.

    **Provenance** — the episode ``record_episode`` returns is recorded with its
    :class:`~langchain_episodic.EpisodeSource` filled in: the agent's name, the run
    id, the thread id and turn, and the namespace (fields your episode sets itself
    are kept); ``self.source_of(state)`` gives it.

    **After the agent** — when the run completes, ``record_episode(state, runtime)`` is
    called (if given) with the final state; the :class:`Episode` it returns is recorded
    with ``memory.record`` (``arecord`` under ``ainvoke``). ``None`` records nothing:
    the middleware never invents feedback. A typical implementation runs the tests and
    calls :func:`~langchain_episodic.episode_from_tests`; ``self.task_of(state)`` and
    ``self.strategy_of(state)`` give the run's task and strategy.

    **Credit** — each run's replay is noted under a run id of its own (the call's
    ``config={"configurable": {"run_id": ...}}`` when given, else a new one;
    ``self.run_id_of(state)``), and the recorded episode's reward is credited to the
    episodes the run was shown (:meth:`~langchain_episodic.areas.MemoryRuns.credit`), so
    those that help rise in later recalls. The recall tool
    (:func:`~langchain_episodic.create_recall_tool`) called inside the run notes what
    it shows under the same run id, so one agent run is one credited run. A run
    whose ``record_episode`` returns ``None`` stays open until the memory's
    ``open_run_ttl`` closes it. Noting and crediting never break the run: a failure
    is logged.

    **Reflection** — with ``reflect_with=LessonWriter(model)``, each recorded episode is
    reflected on (:func:`~langchain_episodic.reflection.reflect`: the episode and its
    same-category neighbours are shown to the model, and the lessons that pass are
    stored in the run's namespace), and later runs see those lessons above the
    episodes in their system prompt. By default it runs right after recording, inside
    ``after_agent`` (under ``ainvoke`` in a worker thread, never on the event loop);
    with ``reflect_in_background=True`` it is queued for one worker thread per
    middleware and the run returns at once: at most ``reflection_queue`` reflections
    wait or run, and one more is dropped with a logged warning. :meth:`flush` waits
    for them, :meth:`close` flushes and stops the thread. A model that fails, answers
    garbage or is slow never breaks the run: every error is logged, never raised.

    Setup:
        .. code-block:: bash

            pip install "langchain-episodic[agents]"

    Example:
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
        .. code-block:: python

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

    Args:
        memory: Where episodes are recalled from and recorded to. ``None``: in the
            agent's own LangGraph store (``create_agent(..., store=...)``, read from
            ``runtime.store``; it needs a vector index whose embeddings are
            ``embeddings``), through
            :class:`~langchain_episodic.stores.LangGraphEpisodeStore`.
        top_k: Episodes to recall per run; sets ``options.top_k`` (3 by default).
        options: Recall options (:class:`~langchain_episodic.RecallOptions`: weights,
            half-life, filters, ``current_time``, ...). They apply to the replay
            prompt and to the strategy alike: both come from one recall.
        max_tokens: Token budget of the replay prompt (the strategy line is extra):
            :data:`~langchain_episodic.prompting.episodes.DEFAULT_MAX_TOKENS` by default, ``None``
            for no budget.
        token_counter: Counts tokens for the budget, e.g. ``model.get_num_tokens``.
        include_strategy: Also append ``Strategy: <name> - <instruction>`` for the
            strategy :func:`~langchain_episodic.choose_strategy` selects.
        renderer: How episodes become text (:mod:`~langchain_episodic.prompting.renderers`):
            ``"auto"`` (default: ``"compact"``, what worked first and a failure as its
            feedback line; the article's ``"detailed"`` prompt for ``ranking="article"``),
            ``"compact"``, ``"detailed"``, or your own.
        task_extractor: ``(state) -> str | TaskDescription | None``; by default the
            text of the latest human message (as a task of category ``unknown``).
            Return a :class:`TaskDescription` to give category and complexity, which
            the prompt and the strategy selection use. ``None`` skips the replay.
        infer_category: A task without a category (the latest message's text, or a
            ``TaskDescription`` of category ``unknown``) gets the one the memory infers
            from its text (:meth:`~langchain_episodic.EpisodicMemory.task`), so skill
            profiles and credit's baselines are per category; ``False``: it stays
            ``unknown``. A category the ``task_extractor`` gives is kept.
        follow_ups: ``"thread"`` (default): a follow-up turn's task carries its
            thread's task (see *Threads* above); ``"alone"``: every turn's task is
            what ``task_extractor`` gives for it.
        record_episode: ``(state, runtime) -> Episode | None``, sync or async, called
            once after the agent finishes; see :data:`RecordEpisode`.
        on_record_error: What an exception raised while recording the finished run
            (by ``record_episode``, or by the memory refusing its episode) does:
            ``"log"`` (default) logs it with its traceback and keeps the run's answer,
            which the model has already given; ``"raise"`` lets it out of
            ``agent.invoke`` (the answer is then lost to the caller).
        namespace: Memory per run, for an agent that serves many users: a template
            over the run's ``runtime.context`` fields (``"user-{user_id}"``) or a
            callable ``(runtime) -> str``. Each run recalls from, records to and
            credits in that namespace of ``memory``'s store only
            (:meth:`~langchain_episodic.EpisodicMemory.for_namespace`). A run whose
            context lacks the field raises
            :class:`~langchain_episodic.EpisodicValueError`: it never falls back to
            a shared namespace. ``None`` (default): every run uses ``memory``.
        embeddings: With ``memory=None``, the memory's embeddings model (the
            packaged default when ``None``): the agent store's index must embed with
            the same model.
        reflect_with: Distil lessons from each recorded episode with this
            :class:`~langchain_episodic.reflection.LessonWriter` (a chat model).
            ``None`` (default): no reflection, no model call.
        reflect_in_background: Reflect in a background thread (the run does not
            wait for the model) instead of inside ``after_agent``.
        reflection_queue: Background reflections waiting or running, at most; one
            more is dropped (logged).

    Raises:
        TypeError: ``memory`` is not an :class:`EpisodicMemory`, or a callable is not
            callable.
        TypeError: ``options`` is not a :class:`~langchain_episodic.RecallOptions`.
        TypeError: ``reflect_with`` is not a ``LessonWriter``, or
            ``reflect_in_background`` not a bool.
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
        embeddings: Embeddings | None = None,
        reflect_with: LessonWriter | None = None,
        reflect_in_background: bool = False,
        reflection_queue: int = 16,
        on_record_error: Literal["log", "raise"] = "log",
    ) -> None:
        super().__init__()
        if follow_ups not in ("thread", "alone"):
            msg = f"follow_ups={follow_ups!r} is invalid: must be 'thread' or 'alone'"
            raise EpisodicValueError(msg)
        if on_record_error not in ("log", "raise"):
            msg = f"on_record_error={on_record_error!r} is invalid: must be 'log' or 'raise'"
            raise EpisodicValueError(msg)
        if memory is not None and not isinstance(memory, EpisodicMemory):
            msg = f"memory={memory!r} is invalid: must be an EpisodicMemory or None"
            raise TypeError(msg)
        if memory is not None and embeddings is not None:
            msg = "embeddings= is for memory=None (the agent's own store): give one of them"
            raise TypeError(msg)
        if embeddings is not None and not isinstance(embeddings, Embeddings):
            msg = f"embeddings={embeddings!r} is invalid: must be a LangChain Embeddings"
            raise TypeError(msg)
        options = RecallOptions.from_mapping(options, None if top_k is None else {"top_k": top_k})
        if max_tokens is not None:
            check_int("max_tokens", max_tokens, 1)
        for name, value in (
            ("token_counter", token_counter),
            ("task_extractor", task_extractor),
            ("record_episode", record_episode),
        ):
            if value is not None and not callable(value):
                msg = f"{name}={value!r} is invalid: must be callable"
                raise TypeError(msg)
        if reflect_with is not None and not isinstance(reflect_with, LessonWriter):
            msg = (
                f"reflect_with={reflect_with!r} is invalid: must be a "
                "langchain_episodic.reflection.LessonWriter or None"
            )
            raise TypeError(msg)
        _check_bools(reflect_in_background=reflect_in_background, infer_category=infer_category)
        check_int("reflection_queue", reflection_queue, 1)
        resolve_renderer(renderer, options.ranking)  # refuse a bad renderer now, not per run
        self.memory = memory
        self.embeddings = embeddings
        self.namespace = None if namespace is None else check_scope(namespace)
        # memory=None: one memory per agent store (runtime.store), opened on first use.
        self._store_memories: dict[tuple[int, str], tuple[object, EpisodicMemory]] = {}
        self._store_lock = threading.Lock()
        self.options = options
        self.max_tokens = max_tokens
        self.token_counter = token_counter
        self.include_strategy = include_strategy
        self.renderer = renderer
        self.task_extractor = task_extractor
        self.infer_category = infer_category
        self.follow_ups = follow_ups
        self.record_episode = record_episode
        self.on_record_error = on_record_error
        self.reflect_with = reflect_with
        self.reflect_in_background = reflect_in_background
        self.reflection_queue = reflection_queue
        # The reflection thread is a daemon: at exit it gets EXIT_FLUSH_TIMEOUT seconds
        # to finish (and store) what it is doing, then what is pending is abandoned.
        self._reflections = BackgroundWorker(
            reflection_queue, name="episodic-reflection", jobs="reflections", logger=_log
        )

    def __repr__(self) -> str:
        return (
            f"EpisodicMemoryMiddleware(memory={self.memory!r}, namespace={self.namespace!r}, "
            f"options={self.options!r}, "
            f"max_tokens={self.max_tokens}, include_strategy={self.include_strategy})"
        )

    # ------------------------------------------------------------------ state helpers

    @staticmethod
    def replay_of(state: Mapping[str, Any]) -> EpisodicReplay | None:
        """The run's :class:`EpisodicReplay` kept in ``state``, or ``None`` if there is none."""
        replay = state.get(STATE_KEY)
        return cast("EpisodicReplay | None", replay)

    @staticmethod
    def task_of(state: Mapping[str, Any]) -> TaskDescription | None:
        """The task the run's replay was built for, or ``None`` if there was none."""
        replay = EpisodicMemoryMiddleware.replay_of(state)
        return None if replay is None else TaskDescription.from_dict(replay["task"])

    @staticmethod
    def run_id_of(state: Mapping[str, Any]) -> str | None:
        """The run id the replay's episodes were noted under (for ``EpisodeSource``)."""
        replay = EpisodicMemoryMiddleware.replay_of(state)
        return None if replay is None else replay.get("run_id")

    @staticmethod
    def strategy_of(state: Mapping[str, Any]) -> str | None:
        """The strategy injected into the run (``include_strategy=True``), else ``None``."""
        replay = EpisodicMemoryMiddleware.replay_of(state)
        return None if replay is None else replay["strategy"]

    @staticmethod
    def turn_of(state: Mapping[str, Any]) -> int | None:
        """Which turn of its thread the run is (1, 2, ...), or ``None`` without a replay."""
        replay = EpisodicMemoryMiddleware.replay_of(state)
        return None if replay is None else replay.get("turn")

    @staticmethod
    def source_of(state: Mapping[str, Any]) -> EpisodeSource | None:
        """The run's provenance: agent name, run id, thread id and turn, namespace.

        What the middleware records an episode with (fields the episode's own
        source sets are kept); ``None`` when the state holds no replay.
        """
        replay = EpisodicMemoryMiddleware.replay_of(state)
        if replay is None:
            return None
        return EpisodeSource(
            agent=replay.get("agent"),
            run_id=replay.get("run_id"),
            thread_id=replay.get("thread_id"),
            turn=replay.get("turn"),
            namespace=replay.get("namespace"),
        )

    # ------------------------------------------------------------------ replay

    def _task(
        self, state: Mapping[str, Any]
    ) -> tuple[TaskDescription, TaskDescription, int] | None:
        """``(task, thread_task, turn)`` of the run, or ``None`` when it has no task."""
        current = self._own_task(state)
        if current is None:
            return None
        thread_task, turn = _thread_of(state)
        if thread_task is None:
            return current, current, turn
        if self.follow_ups == "alone":
            return current, thread_task, turn
        return follow_up(thread_task, current), thread_task, turn

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

    def _prompt_settings(self) -> dict[str, Any]:
        """How :func:`~langchain_episodic.build_replay` should format the prompt."""
        return {
            "max_tokens": self.max_tokens,
            "token_counter": self.token_counter,
            "include_strategy": self.include_strategy,
            "renderer": self.renderer,
        }

    @staticmethod
    def _state_of(
        replay: Replay, memory: EpisodicMemory, thread_task: TaskDescription, turn: int
    ) -> EpisodicReplay:
        config = _current_config()
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
        # Resolved first: a run without its context field fails before anything opens.
        namespace = None if self.namespace is None else resolve_namespace(self.namespace, runtime)
        return self._memory_on(runtime, namespace)

    def _memory_on(self, runtime: object, namespace: str | None) -> EpisodicMemory:
        """The memory of ``namespace`` (``None``: the memory's own) for this run."""
        if self.memory is not None:
            return self.memory if namespace is None else self.memory.for_namespace(namespace)
        store = getattr(runtime, "store", None)
        if store is None:
            msg = (
                "EpisodicMemoryMiddleware(memory=None) keeps episodes in the agent's own "
                "store, and this run has none: create_agent(..., store=InMemoryStore("
                "index={'dims': ..., 'embed': ...})), or pass memory="
            )
            raise StoreConfigurationError(msg)
        # Opened on the run's namespace itself, one memory per store and namespace: no
        # other namespace (not "default") is ever written for a per-user run.
        key = (id(store), namespace or DEFAULT_NAMESPACE)
        with self._store_lock:
            found = self._store_memories.get(key)
            if found is None or found[0] is not store:
                memory = EpisodicMemory(
                    store=LangGraphEpisodeStore(store),
                    embeddings=self.embeddings,
                    namespace=key[1],
                )
                found = self._store_memories[key] = (store, memory)
            return found[1]

    def _recording_memory(self, state: Mapping[str, Any], runtime: object) -> EpisodicMemory:
        # The namespace the run recalled from, whatever the runtime says by now.
        replay = self.replay_of(state)
        namespace = None if replay is None else replay.get("namespace")
        if namespace is not None and self.namespace is not None:
            return self._memory_on(runtime, namespace)
        return self.memory_for(runtime)

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
        found = self._task(state)
        if found is None:
            return None
        task, thread_task, turn = found
        memory = self.memory_for(runtime)
        if self.infer_category:
            task, thread_task = memory.task(task), memory.task(thread_task)
        replay = build_replay(
            memory,
            task,
            self.options,
            run_id=run_id,
            thread_id=None if run_id is None else _thread_id(),
            **self._prompt_settings(),
        )
        return self._state_of(replay, memory, thread_task, turn)

    async def abuild_replay(
        self, state: Mapping[str, Any], *, run_id: str | None = None, runtime: object = None
    ) -> EpisodicReplay | None:
        """Async twin of :meth:`build_replay`."""
        found = self._task(state)
        if found is None:
            return None
        task, thread_task, turn = found
        memory = await run_in_executor(None, self.memory_for, runtime)
        if self.infer_category:
            task, thread_task = await run_in_executor(
                None, lambda: (memory.task(task), memory.task(thread_task))
            )
        replay = await abuild_replay(
            memory,
            task,
            self.options,
            run_id=run_id,
            thread_id=None if run_id is None else _thread_id(),
            **self._prompt_settings(),
        )
        return self._state_of(replay, memory, thread_task, turn)

    def before_agent(
        self, state: EpisodicMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Recall once for the run's task and keep the replay in the state.

        The episodes shown are noted under a new run id (or the one the call's
        configuration names: ``config={"configurable": {"run_id": ...}}``), which
        :meth:`run_id_of` gives; the run's outcome credits them after the agent.

        Args:
            state: The agent state at the start of the run.
            runtime: The run's runtime; its context picks the namespace when
                ``namespace`` is set.

        Returns:
            The state update ``{"episodic_replay": EpisodicReplay | None}``.
        """
        return {STATE_KEY: self.build_replay(state, run_id=_new_run_id(), runtime=runtime)}

    async def abefore_agent(
        self, state: EpisodicMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`before_agent`."""
        return {STATE_KEY: await self.abuild_replay(state, run_id=_new_run_id(), runtime=runtime)}

    def _inject(
        self, request: ModelRequest[ContextT], replay: EpisodicReplay | None
    ) -> ModelRequest[ContextT]:
        # An empty replay (a budget too small for even its header) adds nothing.
        if replay is None or not replay["prompt"].strip():
            return request
        return request.override(
            system_message=append_to_system(request.system_message, replay["prompt"])
        )

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
            replay = self.replay_of(request.state)
        else:
            replay = self.build_replay(
                {**request.state, "messages": request.messages}, runtime=request.runtime
            )
        return handler(self._inject(request, replay))

    async def awrap_model_call(
        self,
        request: ModelRequest[ContextT],
        handler: Callable[[ModelRequest[ContextT]], Awaitable[ModelResponse[ResponseT]]],
    ) -> ModelResponse[ResponseT] | AIMessage:
        """Async twin of :meth:`wrap_model_call`."""
        if STATE_KEY in request.state:
            replay = self.replay_of(request.state)
        else:
            replay = await self.abuild_replay(
                {**request.state, "messages": request.messages}, runtime=request.runtime
            )
        return await handler(self._inject(request, replay))

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
                :class:`Episode` or ``None``, or is async under a sync ``invoke``.
        """
        if self.record_episode is None:
            return None
        try:
            self._record_finished_run(state, runtime)
        except TypeError:
            raise  # a misconfigured record_episode, not a run's data
        except Exception:
            if self.on_record_error == "raise":
                raise
            _log.exception("could not record the finished run (the answer is kept)")
        return None

    def _record_finished_run(self, state: Mapping[str, Any], runtime: object) -> None:
        assert self.record_episode is not None
        result = self.record_episode(state, runtime)
        if inspect.isawaitable(result):
            if inspect.iscoroutine(result):
                result.close()
            msg = (
                "record_episode is async: run the agent with ainvoke/astream, "
                "or pass a synchronous record_episode"
            )
            raise TypeError(msg)
        episode = _check_episode(result)
        if episode is not None:
            memory = self._recording_memory(state, runtime)
            episode = self._with_source(state, episode)
            self._credit(state, episode, memory)
            memory.record(episode)
            if self.reflect_with is not None:
                if self.reflect_in_background:
                    self._queue_reflection(memory, episode)
                else:
                    self._reflect(memory, episode)

    def _with_source(self, state: Mapping[str, Any], episode: Episode) -> Episode:
        """``episode`` with the run's provenance filling what its own source leaves unset."""
        run = self.source_of(state)
        if run is None:
            return episode
        source = run if episode.source is None else episode.source.merged_over(run)
        return episode if source == episode.source else replace(episode, source=source)

    def _credit(self, state: Mapping[str, Any], episode: Episode, memory: EpisodicMemory) -> None:
        """Close the run with its reward (idempotent, never raises: ``memory.runs.close``).

        Before the episode is recorded: recording an episode whose source names the
        run would close it too, without saying who closed it.
        """
        run_id = self.run_id_of(state)
        if run_id is not None:
            memory.runs.close(run_id, episode.feedback.reward, by=_CREDITED_BY)

    async def aafter_agent(
        self, state: EpisodicMemoryState[ResponseT], runtime: Runtime[ContextT]
    ) -> dict[str, Any] | None:
        """Async twin of :meth:`after_agent`; a sync ``record_episode`` runs in a thread."""
        if self.record_episode is None:
            return None
        try:
            await self._arecord_finished_run(state, runtime)
        except TypeError:
            raise
        except Exception:
            if self.on_record_error == "raise":
                raise
            _log.exception("could not record the finished run (the answer is kept)")
        return None

    async def _arecord_finished_run(self, state: Mapping[str, Any], runtime: object) -> None:
        assert self.record_episode is not None
        result: object
        if inspect.iscoroutinefunction(self.record_episode):
            result = self.record_episode(state, runtime)
        else:
            result = await run_in_executor(None, self.record_episode, state, runtime)
        if inspect.isawaitable(result):
            result = await result
        episode = _check_episode(result)
        if episode is not None:
            memory = await run_in_executor(None, self._recording_memory, state, runtime)
            episode = self._with_source(state, episode)
            await run_in_executor(None, self._credit, state, episode, memory)
            await memory.arecord(episode)
            if self.reflect_with is not None:
                if self.reflect_in_background:
                    self._queue_reflection(memory, episode)
                else:
                    await run_in_executor(None, self._reflect, memory, episode)

    # ------------------------------------------------------------------ reflection

    def _reflect(self, memory: EpisodicMemory, episode: Episode) -> None:
        """Reflect on a recorded episode and store its lessons; never raises."""
        writer = self.reflect_with
        if writer is None:
            return
        try:
            result = reflect(memory, writer, episode.episode_id)
        except Exception:  # reflection must never break the run it follows
            _log.warning(
                "reflection on episode_id=%r in namespace=%r failed; no lesson was stored",
                episode.episode_id,
                memory.namespace,
                exc_info=True,
            )
            return
        if result.stored:
            _log.info(
                "reflection on episode_id=%r stored lessons %s",
                episode.episode_id,
                [lesson.lesson_id for lesson in result.stored],
            )

    def _queue_reflection(self, memory: EpisodicMemory, episode: Episode) -> None:
        """Queue a background reflection; when the queue is full, drop it (logged)."""
        if not self._reflections.submit(lambda: self._reflect(memory, episode)):
            _log.warning(
                "reflection on episode_id=%r dropped: %s",
                episode.episode_id,
                "the middleware is closed"
                if self._reflections.closed
                else f"{self.reflection_queue} reflections are already pending",
            )

    def flush(self, timeout: float | None = None) -> bool:
        """Wait for the background reflections queued so far.

        Args:
            timeout: Seconds to wait at most; ``None`` waits until they are done.

        Returns:
            Whether none is pending any more (``False``: the timeout passed first).
        """
        return self._reflections.flush(timeout)

    def close(self, timeout: float | None = None) -> bool:
        """Flush the background reflections, then stop the reflection thread.

        Reflections queued after ``close`` are dropped (logged). Safe to call twice.

        Args:
            timeout: Seconds to wait at most; ``None`` waits until they are done.

        Returns:
            Whether every queued reflection finished (``False``: the rest were dropped).
        """
        return self._reflections.close(timeout)


def _new_run_id() -> str:
    """The caller's run id (``configurable["run_id"]``), else a new one."""
    configurable = (_current_config() or {}).get("configurable") or {}
    given = configurable.get(RUN_ID_KEY)
    return str(given) if given is not None and str(given).strip() else uuid.uuid4().hex


def _thread_id() -> str | None:
    return run_from_config(_current_config())[1]


def _current_config() -> Mapping[str, Any] | None:
    try:
        return get_config()
    except RuntimeError:  # called outside a LangGraph run (a direct call, a test)
        return None


def _thread_of(state: Mapping[str, Any]) -> tuple[TaskDescription | None, int]:
    """``(thread_task, turn)``: the task of the thread's first turn (``None`` on a first turn)."""
    previous = EpisodicMemoryMiddleware.replay_of(state)
    if previous is not None and isinstance(previous.get("turn"), int) and "thread_task" in previous:
        return TaskDescription.from_dict(previous["thread_task"]), previous["turn"] + 1
    # No earlier turn on record (no checkpointer, or a state from before turns were
    # kept): the human messages the run was given are its thread so far.
    texts = human_texts(state.get("messages", ()))
    if len(texts) < 2:
        return None, 1
    return TaskDescription(texts[0]), len(texts)


def _check_episode(value: object) -> Episode | None:
    if value is None or isinstance(value, Episode):
        return value
    msg = f"record_episode returned {value!r}: expected an Episode or None"
    raise TypeError(msg)
