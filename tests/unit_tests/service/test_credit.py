"""The credit loop through every integration: what is shown is noted, the outcome credits it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.runnables import RunnableConfig

from langchain_episodic import (
    EpisodicMemory,
    build_replay,
    create_recall_tool,
    create_replay_runnable,
    episode_from_tests,
)
from langchain_episodic.integrations.classic import EpisodicChainMemory
from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
from langchain_episodic.model.episode import EpisodeSource
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import JournalEntry
from tests.helpers.models import make_model, user
from tests.unit_tests.factories import make_episode

NOW = 1_750_000_000.0
LOGIN_TASK = "Implement a login form with email validation"


@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: NOW)
    memory.record(make_episode(episode_id="login-1", description=LOGIN_TASK, timestamp=NOW - 3600))
    return memory


def _recorder(
    reward_passed: int | None, runs: list[str | None], *, source_from_state: bool = False
) -> Any:
    """A ``record_episode`` that notes each run's id in ``runs`` (the agent's output
    state leaves out the middleware's private key)."""

    def record_episode(state: Any, runtime: Any) -> Any:
        run_id = EpisodicMemoryMiddleware.run_id_of(state)
        runs.append(run_id)
        if reward_passed is None:
            return None
        return episode_from_tests(
            EpisodicMemoryMiddleware.task_of(state),
            state["messages"][-1].text,
            reward_passed,
            10,
            timestamp=NOW,
            source=EpisodeSource("coder", run_id) if source_from_state else None,
        )

    return record_episode


def _agent(memory: EpisodicMemory, record_episode: Any = None, runs: int = 1) -> Any:
    middleware = EpisodicMemoryMiddleware(memory, record_episode=record_episode)
    model = make_model(*["def login(): ..."] * runs)
    return create_agent(model, tools=[], middleware=[middleware])


def test_middleware_credits_the_runs_reward_to_the_episodes_it_showed(
    memory: EpisodicMemory,
) -> None:
    runs: list[str | None] = []
    _agent(memory, _recorder(9, runs)).invoke(user("Add a login form with email checks"))

    (event,) = memory.runs.log()
    assert [event.run_id] == runs
    assert event.episode_ids == ("login-1",)
    assert event.reward == pytest.approx(0.9)
    assert event.by == "EpisodicMemoryMiddleware"
    assert memory.runs.pending() == {}
    row = memory.runs.utility("login-1")
    assert (row.injections, row.credited_runs) == (1, 1)
    assert row.estimate(NOW) > 0.5


def test_middleware_credits_under_ainvoke_too(memory: EpisodicMemory) -> None:
    runs: list[str | None] = []
    asyncio.run(_agent(memory, _recorder(2, runs)).ainvoke(user("Add a login form")))

    (event,) = memory.runs.log()
    assert [event.run_id] == runs
    assert event.reward == pytest.approx(0.2)
    assert memory.runs.utility("login-1").estimate(NOW) < 0.5


def test_a_run_without_an_outcome_stays_open(memory: EpisodicMemory) -> None:
    runs: list[str | None] = []
    _agent(memory, _recorder(None, runs)).invoke(user("Add a login form"))

    assert runs[0] is not None
    assert list(memory.runs.pending()) == runs
    assert memory.runs.log() == ()


def test_each_agent_run_is_its_own_run(memory: EpisodicMemory) -> None:
    runs: list[str | None] = []
    agent = _agent(memory, _recorder(9, runs), runs=2)
    agent.invoke(user("Add a login form"))
    agent.invoke(user("Add a login form"))

    assert sorted(event.run_id for event in memory.runs.log()) == sorted(runs)  # type: ignore[type-var]
    assert len(set(runs)) == 2


def test_the_callers_run_id_and_thread_are_used(memory: EpisodicMemory) -> None:
    agent = _agent(memory, _recorder(None, []))
    agent.invoke(
        user("Add a login form"), config={"configurable": {"run_id": "job-7", "thread_id": "t1"}}
    )

    (injection,) = memory.runs.pending()["job-7"]
    assert injection.thread_id == "t1"
    assert injection.episode_ids == ("login-1",)


def test_an_episode_naming_its_run_is_credited_once(memory: EpisodicMemory) -> None:
    _agent(memory, _recorder(9, [], source_from_state=True)).invoke(user("Add a login form"))

    (event,) = memory.runs.log()
    # The middleware credits before recording; record()'s own close is then a no-op.
    assert event.by == "EpisodicMemoryMiddleware"
    assert memory.runs.utility("login-1").credited_runs == 1


def test_runnable_notes_under_the_configured_run(memory: EpisodicMemory) -> None:
    runnable = create_replay_runnable(memory)
    runnable.invoke("Add a login form", config={"configurable": {"run_id": "chain-1"}})

    (injection,) = memory.runs.pending()["chain-1"]
    assert injection.episode_ids == ("login-1",)
    memory.runs.credit("chain-1", 1.0)
    assert memory.runs.utility("login-1").credited_runs == 1


def test_runnable_without_a_run_id_notes_under_the_calls_run_id(memory: EpisodicMemory) -> None:
    asyncio.run(create_replay_runnable(memory).ainvoke("Add a login form"))

    (run_id,) = memory.runs.pending()
    assert len(run_id) >= 32  # a LangChain run id (a UUID)


def test_recall_tool_notes_each_call(memory: EpisodicMemory) -> None:
    tool = create_recall_tool(memory)
    config: RunnableConfig = {"configurable": {"run_id": "agent-3"}}
    tool.invoke({"query": "login form"}, config=config)
    tool.invoke({"query": "email validation"}, config=config)

    assert len(memory.runs.pending()["agent-3"]) == 2
    event = memory.runs.credit("agent-3", 0.5)
    assert event.episode_ids == ("login-1",)  # one credit per run, however often shown


def test_classic_memory_credits_the_loaded_prompt(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory)
    inputs = {"input": "Add a login form"}
    chain_memory.load_memory_variables(inputs)
    episode = chain_memory.record_outcome(inputs, "def login(): ...", 10, 10)

    (event,) = memory.runs.log()
    assert (event.reward, event.episode_ids, event.by) == (1.0, ("login-1",), "EpisodicChainMemory")
    # A generated run id is not part of the episode; who recorded it and where are.
    assert episode.source == EpisodeSource("EpisodicChainMemory", namespace="default")


def test_classic_memory_uses_the_run_id_input(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory)
    inputs = {"input": "Add a login form", "run_id": "nightly-12"}
    chain_memory.load_memory_variables(inputs)
    episode = chain_memory.record_outcome(inputs, "def login(): ...", 3, 10)

    assert episode.source == EpisodeSource("EpisodicChainMemory", "nightly-12", namespace="default")
    (event,) = memory.runs.log()
    assert event.run_id == "nightly-12"
    assert event.reward == pytest.approx(0.3)


class _BrokenJournal(InMemoryEpisodeStore):
    def append_journal(self, namespace: str, entries: Sequence[JournalEntry]) -> None:
        raise OSError("disk full")


def test_a_failure_to_note_never_breaks_the_prompt(caplog: pytest.LogCaptureFixture) -> None:
    memory = EpisodicMemory(store=_BrokenJournal(), clock=lambda: NOW)
    memory.record(make_episode(episode_id="login-1", description=LOGIN_TASK, timestamp=NOW))
    with caplog.at_level(logging.WARNING):
        replay = build_replay(memory, "Add a login form", run_id="run-1")

    assert [r.episode.episode_id for r in replay.results] == ["login-1"]
    assert "login-1" in replay.text or "<experience" in replay.text
    assert "could not note the injection of run_id='run-1'" in caplog.text
