"""Agent runs recorded as users mean them: follow-up turns, provenance, one credited run.

Through ``create_agent`` with a checkpointer: a thread's follow-up turn is recorded and
recalled with its thread's task, every recorded episode says which agent, run, thread,
turn and namespace it came from, and a recall tool called inside a run notes under the
run the middleware credits, so one agent run is one credited run.
"""

from __future__ import annotations

import asyncio
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodeSource,
    EpisodicMemory,
    EpisodicRetriever,
    create_recall_tool,
    episode_from_tests,
)
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.integrations.middleware import FOLLOW_UP, EpisodicMemoryMiddleware
from langchain_episodic.model.episode import Episode, TaskCategory, TaskDescription
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.prompting.compact import CompactRenderer
from tests.helpers.cli import run
from tests.helpers.models import make_model, user

NOW = 1_750_000_000.0
TURNS = ("Implement a login form", "Also reject empty passwords", "And lock out after 5 tries")


def _stored(memory: EpisodicMemory, episode: Episode) -> Episode:
    """``episode`` as the memory holds it (with the provenance the middleware added)."""
    return memory.get_episodes([episode.episode_id])[episode.episode_id]


def _recorder(memory: EpisodicMemory, recorded: list[Episode], **source: Any) -> Any:
    """A ``record_episode`` that builds the run's episode from the state (9 of 10 pass);
    ``recorded`` gets each episode as built (before the middleware adds provenance)."""

    def record_episode(state: Any, runtime: Any) -> Episode | None:
        task = EpisodicMemoryMiddleware.task_of(state)
        if task is None:
            return None
        episode = episode_from_tests(
            task,
            state["messages"][-1].text,
            9,
            10,
            "one edge case fails",
            episode_id=f"ep-{len(recorded)}",
            timestamp=NOW + len(recorded),
            source=EpisodeSource(**source) if source else None,
        )
        recorded.append(episode)
        return episode

    return record_episode


def _thread_agent(memory: EpisodicMemory, recorded: list[Episode], **kwargs: Any) -> Any:
    model = make_model(*[f"def step_{i}(): ..." for i in range(len(TURNS))])
    # Each turn passes 9 of 10 tests: shown as its feedback line, which names its task.
    kwargs.setdefault("renderer", CompactRenderer("feedback"))
    middleware = EpisodicMemoryMiddleware(
        memory, record_episode=_recorder(memory, recorded), **kwargs
    )
    return create_agent(
        model, tools=[], middleware=[middleware], checkpointer=InMemorySaver(), name="coder"
    ), model


def _check_three_turns(memory: EpisodicMemory, recorded: list[Episode], model: Any) -> None:
    first, second, third = recorded
    assert first.task.description == TURNS[0]
    assert second.task.description == f"{TURNS[0]}{FOLLOW_UP}{TURNS[1]}"
    assert third.task.description == f"{TURNS[0]}{FOLLOW_UP}{TURNS[2]}"
    # Recorded meaningfully: each follow-up is stored with its thread's task ...
    stored = memory.get_episodes(["ep-1", "ep-2"])
    assert stored["ep-2"].task.description.startswith(TURNS[0])
    # ... and recalls meaningfully: the follow-ups' prompts show the login-form work.
    first_call, *follow_up_calls = model.received
    assert first_call[0].type != "system"  # nothing relevant yet: nothing injected
    for messages in follow_up_calls:
        assert messages[0].type == "system"
        assert "Task: Implement a login form" in messages[0].text
    # Which turn of which thread, by which agent, in which namespace.
    sources = [_stored(memory, e).source for e in recorded]
    assert [(s.thread_id, s.turn) for s in sources if s] == [("a-1", 1), ("a-1", 2), ("a-1", 3)]
    assert {(s.agent, s.namespace) for s in sources if s} == {("coder", "default")}
    run_ids = [s.run_id for s in sources if s]
    assert len(set(run_ids)) == 3
    # Each turn is its own credited run, credited once.
    assert sorted(e.run_id for e in memory.runs.log()) == sorted(run_ids)
    assert memory.runs.pending() == {}


def test_three_turns_of_a_thread_are_recorded_with_the_threads_task() -> None:
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, model = _thread_agent(memory, recorded)
    config: Any = {"configurable": {"thread_id": "a-1"}}
    for text in TURNS:
        agent.invoke(user(text), config)

    _check_three_turns(memory, recorded, model)


def test_three_turns_of_a_thread_async() -> None:
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, model = _thread_agent(memory, recorded)
    config: Any = {"configurable": {"thread_id": "a-1"}}

    async def run() -> None:
        for text in TURNS:
            await agent.ainvoke(user(text), config)

    asyncio.run(run())
    _check_three_turns(memory, recorded, model)


def test_a_new_thread_starts_over() -> None:
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, _ = _thread_agent(memory, recorded)
    agent.invoke(user(TURNS[0]), {"configurable": {"thread_id": "a-1"}})
    agent.invoke(user("Write a CSV parser"), {"configurable": {"thread_id": "b-1"}})

    assert recorded[1].task.description == "Write a CSV parser"
    source = _stored(memory, recorded[1]).source
    assert source is not None
    assert (source.thread_id, source.turn) == ("b-1", 1)


def test_follow_ups_alone_reads_every_turn_by_itself() -> None:
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, _ = _thread_agent(memory, recorded, follow_ups="alone")
    config: Any = {"configurable": {"thread_id": "a-1"}}
    for text in TURNS[:2]:
        agent.invoke(user(text), config)

    assert [e.task.description for e in recorded] == list(TURNS[:2])
    sources = [_stored(memory, e).source for e in recorded]
    assert [s.turn for s in sources if s] == [1, 2]  # still says the turn


def test_the_thread_task_is_kept_even_if_the_first_message_is_gone() -> None:
    # A trimming or summarising middleware may drop the first request from the
    # messages: the thread's task lives in the middleware's private state.
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, _ = _thread_agent(memory, recorded)
    config: Any = {"configurable": {"thread_id": "a-1"}}
    agent.invoke(user(TURNS[0]), config)
    messages = agent.get_state(config).values["messages"]
    from langchain_core.messages import RemoveMessage  # noqa: PLC0415

    agent.update_state(config, {"messages": [RemoveMessage(id=m.id) for m in messages]})
    agent.invoke(user(TURNS[1]), config)

    assert recorded[1].task.description == f"{TURNS[0]}{FOLLOW_UP}{TURNS[1]}"


def test_several_human_messages_without_a_checkpointer_are_a_thread() -> None:
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    middleware = EpisodicMemoryMiddleware(memory, record_episode=_recorder(memory, recorded))
    agent = create_agent(make_model("def f(): ..."), tools=[], middleware=[middleware])
    history = [HumanMessage(TURNS[0]), AIMessage("def login(): ..."), HumanMessage(TURNS[1])]
    agent.invoke({"messages": history})

    assert recorded[0].task.description == f"{TURNS[0]}{FOLLOW_UP}{TURNS[1]}"
    source = _stored(memory, recorded[0]).source
    assert source is not None
    assert source.turn == 2


def test_a_follow_up_keeps_the_threads_category_unless_it_names_its_own() -> None:
    def extractor(state: Any) -> TaskDescription | str:
        text = state["messages"][-1].text
        if text == TURNS[0]:
            return TaskDescription(text, TaskCategory.CODE_GENERATION, 0.7)
        if text == TURNS[2]:
            return TaskDescription(text, TaskCategory.DEBUGGING, 0.2)
        return text

    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, _ = _thread_agent(memory, recorded, task_extractor=extractor)
    config: Any = {"configurable": {"thread_id": "a-1"}}
    for text in TURNS:
        agent.invoke(user(text), config)

    assert [(e.task.category, e.task.complexity) for e in recorded] == [
        (TaskCategory.CODE_GENERATION, 0.7),
        (TaskCategory.CODE_GENERATION, 0.7),
        (TaskCategory.DEBUGGING, 0.2),
    ]


def test_follow_ups_must_be_thread_or_alone() -> None:
    with pytest.raises(EpisodicValueError, match=r"follow_ups='both' is invalid"):
        EpisodicMemoryMiddleware(EpisodicMemory(), follow_ups="both")  # type: ignore[arg-type]


# ---------------------------------------------------------------- provenance


def test_an_episodes_own_source_fields_are_kept() -> None:
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    middleware = EpisodicMemoryMiddleware(
        memory, record_episode=_recorder(memory, recorded, agent="nightly-ci")
    )
    agent = create_agent(
        make_model("def f(): ..."),
        tools=[],
        middleware=[middleware],
        checkpointer=InMemorySaver(),
        name="coder",
    )
    agent.invoke(user(TURNS[0]), {"configurable": {"thread_id": "a-1", "run_id": "job-7"}})

    source = memory.get_episodes(["ep-0"])["ep-0"].source
    assert source == EpisodeSource(
        agent="nightly-ci", run_id="job-7", thread_id="a-1", turn=1, namespace="default"
    )


def test_provenance_is_visible_in_the_retrievers_metadata() -> None:
    memory = EpisodicMemory(clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, _ = _thread_agent(memory, recorded)
    agent.invoke(user(TURNS[0]), {"configurable": {"thread_id": "a-1"}})

    [doc] = EpisodicRetriever(memory=memory, k=1).invoke("login form")
    assert doc.metadata["source"]["thread_id"] == "a-1"
    assert doc.metadata["source"]["turn"] == 1
    assert doc.metadata["source"]["agent"] == "coder"
    source = _stored(memory, recorded[0]).source
    assert source is not None
    assert doc.metadata["source"]["run_id"] == source.run_id


# ---------------------------------------------------------------- one run, one credit


@dataclass
class Context:
    user_id: str


def _seeded(memory: EpisodicMemory, namespace: str) -> EpisodicMemory:
    scoped = memory.for_namespace(namespace)
    scoped.record(
        episode_from_tests(
            "Add a signup form with email validation",
            "def signup(email): ...",
            10,
            10,
            episode_id=f"{namespace}-signup",
            timestamp=NOW - 3600,
        )
    )
    return scoped


def _multi_user_agent(memory: EpisodicMemory, recorded: list[Episode], calls: int) -> Any:
    """The README's multi-user agent: the recall tool and the middleware, per user."""
    tool = create_recall_tool(memory, namespace="user-{user_id}")
    answers: list[AIMessage] = []
    for i in range(calls):
        call = {"name": tool.name, "args": {"query": "signup form"}, "id": f"call-{i}"}
        answers += [AIMessage("", tool_calls=[call]), AIMessage("def signup(email): ...")]
    return create_agent(
        make_model(*answers),
        tools=[tool],
        middleware=[
            EpisodicMemoryMiddleware(
                memory, namespace="user-{user_id}", record_episode=_recorder(memory, recorded)
            )
        ],
        context_schema=Context,
    )


def test_the_multi_user_agent_leaves_no_open_run() -> None:
    memory = EpisodicMemory(clock=lambda: NOW)
    alice, bob = _seeded(memory, "user-alice"), _seeded(memory, "user-bob")
    recorded: list[Episode] = []
    agent = _multi_user_agent(memory, recorded, calls=2)
    agent.invoke(user("Add a signup form"), context=Context("alice"))
    agent.invoke(user("Add a signup form"), context=Context("bob"))

    for scoped, name in ((alice, "user-alice"), (bob, "user-bob")):
        assert scoped.runs.pending() == {}
        (event,) = scoped.runs.log()  # one run, one credit
        assert event.episode_ids == (f"{name}-signup",)
        row = scoped.runs.utility(f"{name}-signup")
        # Shown by the middleware and by the tool in one run: one injection, one credit.
        assert (row.injections, row.credited_runs) == (1, 1)
        source = scoped.get_episodes(["ep-0", "ep-1"])
        (episode,) = source.values()
        assert episode.source is not None
        assert episode.source.namespace == name
        assert episode.source.run_id == event.run_id


def test_the_multi_user_agent_leaves_no_open_run_async() -> None:
    memory = EpisodicMemory(clock=lambda: NOW)
    alice = _seeded(memory, "user-alice")
    recorded: list[Episode] = []
    agent = _multi_user_agent(memory, recorded, calls=1)
    asyncio.run(agent.ainvoke(user("Add a signup form"), context=Context("alice")))

    assert alice.runs.pending() == {}
    assert alice.runs.utility("user-alice-signup").injections == 1
    assert len(alice.runs.log()) == 1


def test_a_configured_run_id_counts_one_injection() -> None:
    memory = EpisodicMemory(clock=lambda: NOW)
    alice = _seeded(memory, "user-alice")
    recorded: list[Episode] = []
    agent = _multi_user_agent(memory, recorded, calls=1)
    agent.invoke(
        user("Add a signup form"),
        {"configurable": {"run_id": "job-7"}},
        context=Context("alice"),
    )

    (event,) = alice.runs.log()
    assert event.run_id == "job-7"
    assert alice.runs.utility("user-alice-signup").injections == 1
    assert alice.runs.pending() == {}


def test_the_tool_alone_still_notes_under_the_calls_run() -> None:
    # Without the middleware there is no agent run to join: the tool call's run id.
    memory = EpisodicMemory(clock=lambda: NOW)
    alice = _seeded(memory, "user-alice")
    tool = create_recall_tool(memory, namespace="user-{user_id}")
    call = {"name": tool.name, "args": {"query": "signup form"}, "id": "call-1"}
    agent = create_agent(
        make_model(AIMessage("", tool_calls=[call]), AIMessage("done")),
        tools=[tool],
        context_schema=Context,
    )
    agent.invoke(user("Add a signup form"), context=Context("alice"))

    (run,) = alice.runs.pending().values()
    assert run[0].episode_ids == ("user-alice-signup",)


def test_provenance_is_visible_in_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path), clock=lambda: NOW + 100)
    recorded: list[Episode] = []
    agent, _ = _thread_agent(memory, recorded)
    config: Any = {"configurable": {"thread_id": "a-1"}}
    for text in TURNS[:2]:
        agent.invoke(user(text), config)
    sources = [_stored(memory, e).source for e in recorded]
    lesson = Lesson.create(
        title="Validate the password field",
        applies_when="a login form takes a password",
        do="reject empty passwords",
        sources=(LessonSource("ep-1"),),  # as a hand-written lesson: no provenance of its own
        created_at=NOW,
    )
    memory.lessons.add([lesson])
    memory.store.close()  # type: ignore[attr-defined]

    now = str(NOW + 100)
    code, out, _ = run(capsys, "--path", str(tmp_path), "recall", "login form", "--now", now)
    assert code == 0
    assert "recorded by:" in out
    for episode, source in zip(recorded, sources, strict=True):
        assert source is not None
        line = f"{episode.episode_id}: agent coder, run {source.run_id}, thread a-1 turn "
        assert line + f"{source.turn}, namespace default" in out

    code, out, _ = run(capsys, "--path", str(tmp_path), "lessons", "show", lesson.lesson_id)
    assert code == 0
    (row,) = [line for line in out.splitlines() if line.startswith("ep-1 ")]
    assert re.split(r"\s{2,}", row)[2:5] == ["coder", sources[1].run_id, "a-1 turn 2"]  # type: ignore[union-attr]
