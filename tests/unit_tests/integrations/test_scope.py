"""One compiled agent, many users: the namespace of each run comes from its context."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.store.memory import InMemoryStore

from langchain_episodic import (
    EpisodicMemory,
    EpisodicValueError,
    StaticEmbeddings,
    StoreConfigurationError,
    create_recall_tool,
    episode_from_tests,
)
from langchain_episodic.integrations._scope import check_scope, resolve_namespace
from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.models import make_model, user
from tests.unit_tests.factories import make_episode

NOW = 1_750_000_000.0
TASK = "Implement a login form with email validation"


@dataclass
class Context:
    user_id: str


@pytest.fixture
def memory() -> EpisodicMemory:
    """A shared store where alice and bob each have one login episode with a secret."""
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW)
    for name in ("alice", "bob"):
        memory.for_namespace(f"user-{name}").record(
            make_episode(
                episode_id=f"{name}-login",
                description=TASK,
                solution=f"def login(): ...  # {name.upper()}-SECRET",
                timestamp=NOW - 60,
            )
        )
    return memory


def _record(state: Any, runtime: Any) -> Any:
    return episode_from_tests(
        EpisodicMemoryMiddleware.task_of(state),
        state["messages"][-1].text,
        10,
        10,
        message=f"passed for {runtime.context.user_id}",
        episode_id=f"{runtime.context.user_id}-run",
        timestamp=NOW,
    )


def test_two_users_through_one_agent_concurrently_never_meet(memory: EpisodicMemory) -> None:
    model = make_model("def login(): ...", "def login(): ...")
    middleware = EpisodicMemoryMiddleware(
        memory, namespace="user-{user_id}", record_episode=_record
    )
    agent = create_agent(model, tools=[], middleware=[middleware], context_schema=Context)

    async def both() -> None:
        await asyncio.gather(
            agent.ainvoke(user(TASK), context=Context("alice")),
            agent.ainvoke(user(TASK), context=Context("bob")),
        )

    asyncio.run(both())

    prompts = model.system_texts()
    assert len(prompts) == 2
    for prompt in prompts:  # each run saw its own user's episode, never the other's
        assert ("ALICE-SECRET" in prompt) != ("BOB-SECRET" in prompt)
    for name, other in (("alice", "bob"), ("bob", "alice")):
        mine = memory.for_namespace(f"user-{name}")
        assert {e.episode_id for e in mine.episodes()} == {f"{name}-login", f"{name}-run"}
        (event,) = mine.runs.log()
        assert event.episode_ids == (f"{name}-login",)
        assert f"{other}-login" not in mine.runs.utilities()
    assert len(memory) == 0  # nothing lands in the memory's own (shared) namespace
    assert memory.runs.log() == ()


def test_a_run_without_the_context_field_fails_and_touches_nothing(
    memory: EpisodicMemory,
) -> None:
    middleware = EpisodicMemoryMiddleware(
        memory, namespace="user-{user_id}", record_episode=_record
    )
    agent = create_agent(make_model("def login(): ..."), tools=[], middleware=[middleware])
    before = memory.store.namespaces()

    with pytest.raises(EpisodicValueError, match=r"needs runtime\.context field 'user_id'"):
        agent.invoke(user(TASK))

    assert memory.store.namespaces() == before
    assert len(memory) == 0


def test_a_callable_scope_picks_the_namespace(memory: EpisodicMemory) -> None:
    model = make_model("def login(): ...")
    middleware = EpisodicMemoryMiddleware(
        memory, namespace=lambda runtime: f"user-{runtime.context['user_id']}"
    )
    agent = create_agent(model, tools=[], middleware=[middleware])
    agent.invoke(user(TASK), context={"user_id": "bob"})

    (prompt,) = model.system_texts()
    assert "BOB-SECRET" in prompt
    assert "ALICE-SECRET" not in prompt


def test_the_recall_tool_recalls_in_the_runs_namespace(memory: EpisodicMemory) -> None:
    tool = create_recall_tool(memory, namespace="user-{user_id}")
    call = {"name": tool.name, "args": {"query": "login form"}, "id": "call-1"}
    model = make_model(AIMessage("", tool_calls=[call]), AIMessage("done"))
    agent = create_agent(model, tools=[tool], context_schema=Context)
    result = agent.invoke(user(TASK), context=Context("alice"))

    answer = result["messages"][2].content
    assert "ALICE-SECRET" in answer
    assert "BOB-SECRET" not in answer


@pytest.mark.parametrize(
    ("scope", "error", "fragment"),
    [
        ("shared", EpisodicValueError, "names no runtime.context field"),
        ("user-{user_id!r}", EpisodicValueError, "must name a context field"),
        ("user-{0}", EpisodicValueError, "must name a context field"),
        ("user-{user_id", EpisodicValueError, "is not a valid template"),
        (42, TypeError, "must be a template string or a callable"),
    ],
)
def test_bad_scopes_are_refused_when_built(scope: object, error: type, fragment: str) -> None:
    with pytest.raises(error, match=fragment):
        check_scope(scope)


@pytest.mark.parametrize(
    ("context", "fragment"),
    [
        (None, "this run has no context"),
        ({"team": "x"}, "has no such field"),
        ({"user_id": ""}, "user_id=''"),
        (Context(""), "user_id=''"),
    ],
)
def test_a_missing_or_empty_field_names_it(context: object, fragment: str) -> None:
    with pytest.raises(EpisodicValueError, match=fragment):
        resolve_namespace("user-{user_id}", SimpleNamespace(context=context))


def test_a_callable_must_return_a_namespace() -> None:
    with pytest.raises(EpisodicValueError, match="a namespace must be a non-empty string"):
        resolve_namespace(lambda runtime: "", object())


def test_the_agents_own_store_is_the_long_term_tier() -> None:
    embeddings = StaticEmbeddings()
    graph_store = InMemoryStore(index={"dims": 384, "embed": embeddings})
    model = make_model("def login(): ...", "def login(): ...", "def login(): ...")
    # The detailed renderer shows each episode's feedback, which names its user.
    middleware = EpisodicMemoryMiddleware(
        namespace="user-{user_id}", record_episode=_record, renderer="detailed"
    )
    agent = create_agent(
        model, tools=[], middleware=[middleware], context_schema=Context, store=graph_store
    )
    agent.invoke(user(TASK), context=Context("alice"))
    agent.invoke(user(TASK), context=Context("alice"))
    agent.invoke(user(TASK), context=Context("bob"))

    first, second, third = model.system_texts()
    assert "No relevant experiences available." in first
    assert "passed for alice" in second  # alice's first run, recalled from the graph store
    assert "passed for alice" not in third  # bob never sees it
    alice = middleware.memory_for(SimpleNamespace(store=graph_store, context=Context("alice")))
    assert [e.episode_id for e in alice.episodes()] == ["alice-run"]
    assert len(alice.runs.log()) == 2
    assert graph_store.search(("langchain_episodic",), limit=1)  # it lives in the agent's store

    no_store = create_agent(make_model("x"), tools=[], middleware=[EpisodicMemoryMiddleware()])
    with pytest.raises(StoreConfigurationError, match="this run has none"):
        no_store.invoke(user(TASK))


def test_a_per_user_run_on_the_agents_store_writes_no_other_namespace() -> None:
    from langchain_episodic.stores import LangGraphEpisodeStore  # noqa: PLC0415

    graph_store = InMemoryStore(index={"dims": 384, "embed": StaticEmbeddings()})
    middleware = EpisodicMemoryMiddleware(namespace="user-{user_id}", record_episode=_record)
    agent = create_agent(
        make_model("def login(): ...", "def login(): ..."),
        tools=[],
        middleware=[middleware],
        context_schema=Context,
        store=graph_store,
    )
    no_context = create_agent(
        make_model("def login(): ..."), tools=[], middleware=[middleware], store=graph_store
    )
    with pytest.raises(EpisodicValueError, match="user_id"):
        no_context.invoke(user(TASK))
    assert graph_store.search(("langchain_episodic",), limit=5) == []  # nothing written
    agent.invoke(user(TASK), context=Context("alice"))
    assert LangGraphEpisodeStore(graph_store).namespaces() == ("user-alice",)


def test_a_failing_record_episode_keeps_the_answer_unless_asked_to_raise(
    memory: EpisodicMemory, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(state: Any, runtime: Any) -> Any:
        raise RuntimeError("the test harness is down")

    for policy in ("log", "raise"):
        middleware = EpisodicMemoryMiddleware(
            memory, namespace="user-{user_id}", record_episode=broken, on_record_error=policy
        )
        agent = create_agent(
            make_model("def login(): ...", "def login(): ..."),
            tools=[],
            middleware=[middleware],
            context_schema=Context,
        )
        if policy == "log":
            result = agent.invoke(user(TASK), context=Context("alice"))
            assert result["messages"][-1].text == "def login(): ..."
            assert "could not record the finished run" in caplog.text
            assert "the test harness is down" in caplog.text
            answer = asyncio.run(agent.ainvoke(user(TASK), context=Context("alice")))
            assert answer["messages"][-1].text == "def login(): ..."
        else:
            with pytest.raises(RuntimeError, match="harness is down"):
                agent.invoke(user(TASK), context=Context("alice"))
    with pytest.raises(EpisodicValueError, match="on_record_error"):
        EpisodicMemoryMiddleware(memory, on_record_error="ignore")  # type: ignore[arg-type]
