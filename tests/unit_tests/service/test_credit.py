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
from langchain_episodic.errors import CreditError, EpisodicValueError
from langchain_episodic.integrations.classic import EpisodicChainMemory
from langchain_episodic.integrations.middleware import EpisodicMemoryMiddleware
from langchain_episodic.model.episode import EpisodeSource
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import JournalEntry
from tests.helpers.models import make_model, user
from tests.unit_tests.factories import a_lesson, logins_memory, make_episode

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


# ------------------------------------------------------------------ memory.runs
# ``memory.runs``: one idempotent close of a run, typed credit subjects (episode or lesson
# rows), and ids refused when they are not a list of ids.


@pytest.fixture
def logins() -> EpisodicMemory:
    """Two login episodes, the clock standing still."""
    return logins_memory()


# ------------------------------------------------------------------ close_run


def test_close_run_is_idempotent_and_returns_the_runs_outcome(logins: EpisodicMemory) -> None:
    logins.runs.note("run-1", ["login-1"], "Implement a login form")
    first = logins.runs.close("run-1", 0.9, by="agent")
    assert first is not None
    assert first.reward == 0.9
    assert first.episode_ids == ("login-1",)
    # Again, from anyone, with another reward: the first outcome stands and is returned.
    assert logins.runs.close("run-1", 0.1) == first
    assert logins.runs.log() == (first,)
    with pytest.raises(CreditError, match="already credited"):
        logins.runs.credit("run-1", 0.5)


def test_close_run_of_a_run_shown_nothing_is_none_and_writes_nothing(
    logins: EpisodicMemory,
) -> None:
    assert logins.runs.close("never-noted", 0.5) is None
    assert logins.runs.log() == ()


def test_close_run_refuses_a_bad_reward_naming_it(logins: EpisodicMemory) -> None:
    logins.runs.note("run-1", ["login-1"], "Implement a login form")
    with pytest.raises(EpisodicValueError, match=r"reward=1\.5"):
        logins.runs.close("run-1", 1.5)
    with pytest.raises(EpisodicValueError, match="run_id=''"):
        logins.runs.credit("", 0.5)
    assert logins.runs.pending().keys() == {"run-1"}


def test_a_journal_that_fails_while_closing_is_logged_not_raised(
    logins: EpisodicMemory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    logins.runs.note("run-1", ["login-1"], "Implement a login form")

    def broken(*_: object, **__: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(logins.store, "append_journal", broken)
    with caplog.at_level(logging.WARNING):
        assert logins.runs.close("run-1", 0.9) is None
    assert "could not credit run_id='run-1'" in caplog.text


def test_recording_the_runs_episode_closes_it_once(logins: EpisodicMemory) -> None:
    from langchain_episodic.model.episode import EpisodeSource  # noqa: PLC0415

    logins.runs.note("run-9", ["login-1"], "Implement a login form")
    episode = make_episode(episode_id="login-3", reward=0.7)
    sourced = type(episode)(**{**episode.__dict__, "source": EpisodeSource("agent", "run-9")})
    logins.record(sourced)
    assert [(e.run_id, e.reward) for e in logins.runs.log()] == [("run-9", 0.7)]
    assert logins.runs.close("run-9", 0.2) == logins.runs.log()[0]


# ------------------------------------------------------------------ typed subjects


def test_utility_rows_say_their_kind_and_can_be_kept_by_kind(logins: EpisodicMemory) -> None:
    lesson = a_lesson()
    logins.lessons.add([lesson])
    for run in range(3):
        logins.runs.note(f"run-{run}", [lesson.lesson_id, "login-2"], "Fix a login form")
        logins.runs.credit(f"run-{run}", 0.0)
    rows = logins.runs.utilities()
    assert {i: row.kind for i, row in rows.items()} == {
        lesson.lesson_id: "lesson",
        "login-2": "episode",
    }
    assert set(logins.runs.utilities(kind="episode")) == {"login-2"}
    assert set(logins.runs.utilities(kind="lesson")) == {lesson.lesson_id}
    assert {row.kind for row in logins.runs.harmful(min_runs=3, max_utility=1.0)} == {
        "lesson",
        "episode",
    }
    assert [r.episode_id for r in logins.runs.harmful(3, 1.0, kind="lesson")] == [lesson.lesson_id]
    with pytest.raises(EpisodicValueError, match="kind='episodes'"):
        logins.runs.utilities(kind="episodes")  # type: ignore[arg-type]


def test_one_string_of_ids_is_refused_not_read_as_letters(logins: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match="episode_ids='b1'"):
        logins.runs.note("run", "b1", "task")
    assert logins.runs.pending() == {}


# ------------------------------------------------------------------ public reads


# ------------------------------------------------------------------ async twins


# ------------------------------------------------------------------ old module paths
