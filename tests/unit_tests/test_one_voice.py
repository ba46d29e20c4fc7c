"""One voice: every integration shows the same episodes for the same task and settings.

The replay (``build_replay``), the runnable, the classic chain memory, the middleware's
system prompt, the recall tool and the retriever's documents all show the replay's own
blocks. The exceptions are the ones asked for: the tool adds near misses (marked), and a
retriever asked for ``k`` documents or for failed attempts returns what it was asked for.
Once credited runs taught the memory a presentation policy, every call shows with it (a
named run may be shown another while the memory still explores: its draw).
"""

from __future__ import annotations

import re

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage

from langchain_episodic import (
    EpisodicChainMemory,
    EpisodicMemory,
    EpisodicMemoryMiddleware,
    build_replay,
    create_recall_tool,
)
from langchain_episodic.integrations.tools import NO_MATCH
from tests.helpers.models import RecordingChatModel
from tests.unit_tests.factories import make_episode

NOW = 86_400.0
TASK = "Fix the login form crash on submit"
_BLOCK = re.compile(r"<experience\b[^>]*>.*?</experience>", re.S)


def blocks(text: str) -> list[str]:
    return _BLOCK.findall(text)


@pytest.fixture
def memory() -> EpisodicMemory:
    """What worked, a near miss (9 of 10) and a failure nothing fixed, all on topic."""
    memory = EpisodicMemory(clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(
                episode_id="worked",
                description="Fix the login form crash on submit",
                solution="def submit(form):\n    return form.validate()",
                tests_passed=5,
                tests_total=5,
                reward=1.0,
                timestamp=NOW - 60,
            ),
            make_episode(
                episode_id="near",
                description="Fix the login form crash when the e-mail is empty",
                outcome="partial",
                solution="def submit(form):\n    return form.email and form.validate()",
                message="test_blank_password failed",
                tests_passed=9,
                tests_total=10,
                reward=0.9,
                timestamp=NOW - 30,
            ),
            make_episode(
                episode_id="failed",
                description="Fix the login form crash after a timeout",
                outcome="failure",
                solution="def submit(form):\n    pass",
                message="AssertionError: no session",
                tests_passed=1,
                tests_total=10,
                reward=0.1,
                timestamp=NOW - 10,
            ),
        ]
    )
    return memory


def _middleware_prompt(memory: EpisodicMemory) -> str:
    model = RecordingChatModel(messages=iter([AIMessage(content="done")]))
    agent = create_agent(model, tools=[], middleware=[EpisodicMemoryMiddleware(memory)])
    agent.invoke({"messages": [("user", TASK)]})
    return model.system_texts()[0]


def test_every_integration_shows_the_same_episodes(memory: EpisodicMemory) -> None:
    replay = build_replay(memory, TASK)
    assert replay.shown == ("worked",)  # what worked; the attempts nothing fixed withheld
    assert {r.episode.episode_id for r in replay.withheld} == {"near", "failed"}
    expected = blocks(replay.text)
    assert len(expected) == 1
    runnable = memory.as_runnable().invoke(TASK)
    classic = EpisodicChainMemory(memory=memory).load_memory_variables({"input": TASK})
    documents = memory.as_retriever().invoke(TASK)
    seen = {
        "runnable": blocks(runnable),
        "classic": blocks(next(iter(classic.values()))),
        "middleware": blocks(_middleware_prompt(memory)),
        "retriever": [b for d in documents for b in blocks(d.page_content)],
    }
    assert seen == dict.fromkeys(seen, expected)
    assert [d.id for d in documents] == list(replay.shown)
    # The tool: the same block first, then the near miss, marked; never the failure.
    tool = blocks(create_recall_tool(memory).invoke({"query": TASK}))
    assert tool[0] == expected[0]
    assert len(tool) == 2
    assert 'outcome="partial" near_miss="true"' in tool[1]
    assert "return form.email and form.validate()" in tool[1]
    assert "9 of 10 tests passed" in tool[1]


async def test_the_async_paths_show_the_same_episodes(memory: EpisodicMemory) -> None:
    sync = [d.page_content for d in memory.as_retriever().invoke(TASK)]
    assert [d.page_content for d in await memory.as_retriever().ainvoke(TASK)] == sync
    tool = create_recall_tool(memory)
    assert await tool.ainvoke({"query": TASK}) == tool.invoke({"query": TASK})


def test_explicit_retriever_settings_return_what_was_asked_for(memory: EpisodicMemory) -> None:
    asked = memory.as_retriever(search_kwargs={"k": 3}).invoke(TASK)
    # Up to k relevant episodes: what worked first, then the failed attempts, marked.
    assert asked[0].id == "worked"
    assert {d.id for d in asked} == {"worked", "near", "failed"}
    failed = next(d for d in asked if d.id == "failed")
    assert 'outcome="failure"' in failed.page_content
    assert "What went wrong: 1 of 10 tests passed" in failed.page_content
    assert "def submit(form):\n    pass" in failed.page_content
    assert failed.metadata["outcome"] == "failure"
    assert failed.metadata["tests_total"] == 10
    # k per call counts as asked for too.
    assert len(memory.as_retriever().invoke(TASK, k=2)) == 2
    failures = memory.as_retriever(search_kwargs={"filter": {"outcome": "failure"}}).invoke(TASK)
    assert [d.id for d in failures] == ["failed"]
    assert failures[0].metadata["outcome"] == "failure"


def _reset_attempts(prefix: str, outcome: str, passed: int) -> EpisodicMemory:
    """Two password-reset attempts with ``passed`` of 10 tests, nothing else in memory."""
    memory = EpisodicMemory(clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(
                episode_id=f"{prefix}-{i}",
                description=f"Add password reset to the {form} form",
                outcome=outcome,
                tests_passed=passed,
                tests_total=10,
                reward=passed / 10,
                timestamp=NOW - i,
            )
            for i, form in enumerate(("login", "signup"))
        ]
    )
    return memory


def test_the_tool_never_says_no_match_when_recall_found_relevant_episodes() -> None:
    # The docs' own run_tests returns 9 of 10: two near misses, nothing that passed.
    memory = _reset_attempts("nine", "partial", 9)
    task = "Add password reset to the admin form"
    assert build_replay(memory, task).text == ""  # the default replay shows none
    text = create_recall_tool(memory).invoke({"query": task})
    assert text != NO_MATCH
    assert text.count('near_miss="true"') == 2
    # Only attempts far from passing: withheld, and the tool says so in one line.
    far = _reset_attempts("far", "failure", 2)
    answer = create_recall_tool(far).invoke({"query": task})
    assert answer.startswith("2 relevant past attempts found but not shown (2 failure)")
    assert "\n" not in answer
    shown = create_recall_tool(far).invoke({"query": task, "outcome": "failure"})
    assert shown.count('outcome="failure"') == 2
    assert create_recall_tool(far).invoke({"query": "Bake a sourdough loaf"}) == NO_MATCH


def test_a_retriever_call_named_with_a_run_id_notes_what_it_returned(
    memory: EpisodicMemory,
) -> None:
    retriever = memory.as_retriever()
    unnamed = retriever.invoke(TASK)
    assert unnamed
    assert memory.runs.pending() == {}  # a call nobody named opens no run
    documents = retriever.invoke(TASK, config={"configurable": {"run_id": "rag-1"}})
    noted = memory.runs.pending()["rag-1"]
    assert [e for i in noted for e in i.episode_ids] == [d.id for d in documents] == ["worked"]
    memory.runs.credit("rag-1", 1.0)
    assert memory.runs.utility("worked").credited_runs == 1


def test_once_the_memory_learned_what_to_show_every_unnamed_call_shows_it(
    memory: EpisodicMemory,
) -> None:
    # A model that reads: runs shown the failure's feedback pass, the others do not.
    for index in range(80):
        run = f"teach-{index}"
        shown = build_replay(memory, TASK, run_id=run).shown
        memory.runs.credit(run, 1.0 if "failed" in shown else 0.3)
    replay = build_replay(memory, TASK)
    assert replay.presentation is not None
    assert replay.presentation.reason == "learned"
    assert "failed" in replay.shown  # learned: the failure's feedback is shown now
    expected = blocks(replay.text)
    runnable = memory.as_runnable().invoke(TASK)
    classic = EpisodicChainMemory(memory=memory).load_memory_variables({"input": TASK})
    documents = memory.as_retriever().invoke(TASK)
    seen = {
        "runnable": blocks(runnable),
        "classic": blocks(next(iter(classic.values()))),
        "retriever": [b for d in documents for b in blocks(d.page_content)],
    }
    assert seen == dict.fromkeys(seen, expected)
    # The tool shows the same episodes, the near miss with its code, marked.
    tool = create_recall_tool(memory).invoke({"query": TASK})
    assert tool.count("<experience") == len(replay.shown)
    assert 'near_miss="true"' in tool
    assert "AssertionError: no session" in tool
