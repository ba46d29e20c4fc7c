"""memory.as_runnable(): task in, replay prompt out, inside LCEL chains."""

from __future__ import annotations

import pytest
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate
from langchain_core.runnables import RunnablePassthrough

from langchain_episodic import (
    EpisodicMemory,
    EpisodicValueError,
    TaskCategory,
    TaskDescription,
    build_replay,
)
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import (
    DEFAULT_MAX_TOKENS,
    DetailedRenderer,
    approximate_token_count,
)
from langchain_episodic.scoring.strategy import STRATEGY_POOL
from tests.helpers.models import RecordingChatModel
from tests.unit_tests.factories import make_episode

NOW = 10_000.0


# Overrides conftest's: a password-reset and a plotting episode, just before NOW.
@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(
                episode_id="reset-1",
                description="Implement password reset by email",
                message="token expiry untested",
                strategy="defensive",
                timestamp=NOW - 60,
            ),
            make_episode(
                episode_id="plot-1",
                description="Plot monthly revenue as a bar chart",
                category="unknown",
                timestamp=NOW - 120,
            ),
        ]
    )
    return memory


def expected_prompt(memory: EpisodicMemory, task: TaskDescription) -> str:
    results = memory.recall(task, top_k=3)
    return CompactRenderer()(results, task, max_tokens=DEFAULT_MAX_TOKENS).text


@pytest.mark.parametrize(
    "given",
    [
        "Implement password change by email",
        TaskDescription("Implement password change by email"),
        {"task": "Implement password change by email", "other": 1},
        {"task": {"description": "Implement password change by email"}},
    ],
)
def test_runnable_accepts_every_task_shape(memory: EpisodicMemory, given: object) -> None:
    text = memory.as_runnable().invoke(given)
    task = TaskDescription("Implement password change by email")
    assert text == expected_prompt(memory, task)
    assert "Task: Implement password reset by email\n<solution>" in text


def test_runnable_keeps_task_category(memory: EpisodicMemory) -> None:
    task = TaskDescription("Implement password change", TaskCategory.CODE_GENERATION, 0.4)
    text = memory.as_runnable(renderer="detailed").invoke(task)
    assert text.startswith("Task: Implement password change\nCategory: code_generation\n")
    results = memory.recall(task, top_k=3)
    assert text == DetailedRenderer()(results, task).text


def test_custom_input_key_and_options(memory: EpisodicMemory) -> None:
    runnable = memory.as_runnable(input_key="question", top_k=1, max_tokens=400)
    text = runnable.invoke({"question": "password reset email"})
    assert text == build_replay(memory, "password reset email", top_k=1, max_tokens=400).text
    assert text.count("<experience") == 1
    with pytest.raises(EpisodicValueError, match="'question'"):
        runnable.invoke({"task": "password reset"})


def test_the_prompt_has_a_default_budget(memory: EpisodicMemory) -> None:
    task = "Implement password reset by email and SMS"
    memory.record(
        make_episode(
            episode_id="huge", description=task, timestamp=NOW, solution="x = 1\n" * 200_000
        )
    )
    text = memory.as_runnable().invoke(task)
    assert "\n\u2026 [truncated]\n</solution>" in text
    assert approximate_token_count(text) <= DEFAULT_MAX_TOKENS
    assert text == build_replay(memory, task).text
    assert len(memory.as_runnable(max_tokens=None).invoke(task)) > 1_200_000


def test_strategy_instruction_is_appended_on_request(memory: EpisodicMemory) -> None:
    text = memory.as_runnable(include_strategy=True).invoke("Implement password reset")
    assert any(text.endswith(f"{name} - {line}") for name, line in STRATEGY_POOL.items())


@pytest.mark.parametrize(
    ("bad", "named"),
    [
        (42, "input=42 is invalid"),
        (None, "input=None is invalid"),
        ("", "input='' is invalid"),
        ({"task": 3}, r"input\['task'\]=3 is invalid"),
        ({"task": " "}, r"input\['task'\]=' ' is invalid"),
    ],
)
def test_bad_input_is_named(memory: EpisodicMemory, bad: object, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        memory.as_runnable().invoke(bad)


async def test_ainvoke_matches_invoke(memory: EpisodicMemory) -> None:
    runnable = memory.as_runnable()
    assert await runnable.ainvoke("password reset") == runnable.invoke("password reset")


def test_prompt_reaches_the_model_through_lcel(memory: EpisodicMemory) -> None:
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a coding agent.\n\n{replay}"), ("human", "{task}")]
    )
    model = RecordingChatModel(messages=iter([AIMessage(content="done")]))
    chain = {"replay": memory.as_runnable(), "task": RunnablePassthrough()} | prompt | model
    assert chain.invoke("Implement password change by email").content == "done"
    system, human = model.received[0]
    assert system.content.startswith("You are a coding agent.\n\nPast experience")
    assert "Task: Implement password reset by email\n<solution>" in system.content
    assert human.content == "Implement password change by email"
