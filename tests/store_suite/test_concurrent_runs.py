"""Many agent runs at once on one memory, on every store (see ``harness`` in conftest.py).

The memory's locks are held only around what they protect (its counters, the credit
book, one store batch at a time), not across store round trips: these tests hold it
to the invariants the wider locks gave. Each run goes through the middleware's own
async path: recall and note before the model, close and record after it.
"""

from __future__ import annotations

import asyncio
from typing import Any

from langchain_core.messages import AIMessage, HumanMessage

from langchain_episodic import Episode, EpisodicMemory, EpisodicMemoryMiddleware
from tests.helpers.episodes import corpus
from tests.helpers.stores import StoreHarness
from tests.unit_tests.factories import make_episode

RUNS = 32


def _run_episode(index: int) -> Episode:
    return make_episode(
        episode_id=f"run-{index:03d}",
        description=f"Implement login form variant {index}",
        reward=(index % 5) / 4,
        timestamp=2_000_000.0 + index,
    )


async def _agent_runs(memory: EpisodicMemory) -> list[str]:
    """``RUNS`` concurrent runs through the middleware; the run ids it noted."""

    def record_episode(state: dict[str, Any], runtime: object) -> Episode:
        return _run_episode(state["index"])

    middleware = EpisodicMemoryMiddleware(memory, record_episode=record_episode)

    async def run(index: int) -> str:
        state: dict[str, Any] = {
            "messages": [HumanMessage(f"Implement login form variant {index}")],
            "index": index,
        }
        update = await middleware.abefore_agent(state, None)  # type: ignore[arg-type]
        assert update is not None
        replay = update["episodic_replay"]
        final = {**state, **update, "messages": [*state["messages"], AIMessage("done")]}
        await middleware.aafter_agent(final, None)  # type: ignore[arg-type]
        return str(replay["run_id"])

    return list(await asyncio.gather(*(run(i) for i in range(RUNS))))


def test_concurrent_runs_store_each_episode_once_and_credit_each_run_once(
    harness: StoreHarness,
) -> None:
    memory = EpisodicMemory(store=harness.open())
    seeds = corpus()
    memory.record_many(seeds)
    run_ids = asyncio.run(_agent_runs(memory))

    assert len(set(run_ids)) == RUNS
    stored = [episode.episode_id for episode in memory.store.iter_episodes(memory.namespace)]
    assert len(stored) == len(set(stored)) == len(seeds) + RUNS
    assert memory.store.count(memory.namespace) == len(seeds) + RUNS
    assert {f"run-{i:03d}" for i in range(RUNS)} <= set(stored)

    outcomes = memory.runs.log()
    assert sorted(event.run_id for event in outcomes) == sorted(run_ids)  # each once
    assert memory.runs.pending() == {}
    # The book this memory folded as runs closed is the one the journal gives anew.
    again = EpisodicMemory(store=memory.store)
    assert again.runs.utilities() == memory.runs.utilities()
    assert [p.total_episodes for p in again.skill_profiles()] == [
        p.total_episodes for p in memory.skill_profiles()
    ]


def test_concurrent_records_of_one_episode_store_it_once(harness: StoreHarness) -> None:
    memory = EpisodicMemory(store=harness.open())
    memory.record_many(corpus())
    before = memory.store.count(memory.namespace)
    episode = _run_episode(7)

    async def record_all() -> None:
        await asyncio.gather(*(memory.arecord(episode) for _ in range(RUNS)))

    asyncio.run(record_all())
    assert memory.store.count(memory.namespace) == before + 1
    assert memory.store.get(memory.namespace, [episode.episode_id]) == {episode.episode_id: episode}
    assert sum(p.total_episodes for p in memory.skill_profiles()) == before + 1
