"""What the memory records from agent runs: counts, not times.

Two scripted ``create_agent`` apps on a fake chat model (offline, deterministic):

* a thread of three turns with a checkpointer: the task each turn was recorded under,
  and its provenance;
* the README's multi-user agent (the middleware and the recall tool, per user), whose
  model calls the tool twice in each of ``--runs`` runs: runs left open, runs credited,
  and how many injections and credits the episode both of them show collects.

Run it on two checkouts to compare (the figures of a commit are what it prints)::

    python benchmarks/agent_runs.py
    git worktree add /tmp/before <rev> && cd /tmp/before && \\
        PYTHONPATH=. python /path/to/benchmarks/agent_runs.py
"""

from __future__ import annotations

import argparse
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver

from langchain_episodic import (
    EpisodicMemory,
    EpisodicMemoryMiddleware,
    create_recall_tool,
    episode_from_tests,
)

TURNS = ("Implement a login form", "Also reject empty passwords", "And lock out after 5 tries")


class ScriptedModel(GenericFakeChatModel):
    """Answers from a script; accepts tools like a real chat model."""

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> ScriptedModel:  # type: ignore[override]
        return self


@dataclass
class Context:
    user_id: str


def record_episode(state: Any, runtime: Any) -> Any:
    task = EpisodicMemoryMiddleware.task_of(state)
    return None if task is None else episode_from_tests(task, "def f(): ...", 9, 10)


def thread() -> None:
    memory = EpisodicMemory()
    agent = create_agent(
        ScriptedModel(messages=iter(["a", "b", "c"])),
        tools=[],
        middleware=[EpisodicMemoryMiddleware(memory, record_episode=record_episode)],
        checkpointer=InMemorySaver(),
        name="coder",
    )
    config: Any = {"configurable": {"thread_id": "a-1"}}
    for text in TURNS:
        agent.invoke({"messages": [("user", text)]}, config)
    print("a thread of three turns, recorded as:")
    for episode in sorted(memory.episodes(), key=lambda e: e.timestamp):
        source = getattr(episode.source, "to_dict", dict)()
        print(f"  task {episode.task.description!r}")
        print(f"    source {source or None}")


def multi_user(runs: int) -> None:
    memory = EpisodicMemory()
    alice = memory.for_namespace("user-alice")
    alice.record(
        episode_from_tests(
            "Add a signup form with email validation",
            "def signup(): ...",
            10,
            10,
            episode_id="seed",
        )
    )
    tool = create_recall_tool(memory, namespace="user-{user_id}")
    answers: list[AIMessage] = []
    for run in range(runs):
        for call in range(2):
            args = {"query": "signup form"}
            answers.append(
                AIMessage("", tool_calls=[{"name": tool.name, "args": args, "id": f"{run}-{call}"}])
            )
        answers.append(AIMessage("def signup(): ..."))
    agent = create_agent(
        ScriptedModel(messages=iter(answers)),
        tools=[tool],
        middleware=[
            EpisodicMemoryMiddleware(
                memory, namespace="user-{user_id}", record_episode=record_episode
            )
        ],
        context_schema=Context,
    )
    for _ in range(runs):
        agent.invoke({"messages": [("user", "Add a signup form")]}, context=Context("alice"))
    row = alice.runs.utility("seed")
    print(f"the README's multi-user agent, {runs} runs, 2 recall-tool calls each:")
    print(f"  runs left open        {len(alice.runs.pending())}")
    print(f"  runs credited         {len(alice.runs.log())}")
    print(f"  'seed' injections     {row.injections}")
    print(f"  'seed' credited runs  {row.credited_runs}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20, help="multi-user runs (default: 20)")
    args = parser.parse_args()
    thread()
    multi_user(args.runs)


if __name__ == "__main__":
    main()
