"""A memory several principals share: one attacker cannot fill the others' replays.

The red team's attacks on one namespace, as an attacker who can only submit tasks:
a short task stuffed with every topic's words, one 12,000-character text, 100
near-duplicates. A plain memory shows them to many unrelated queries; a shared one
(``shared=True``) normalises similarity by length, collapses near-duplicates and caps
each principal at a third of a replay. ``benchmarks/poisoning.py`` measures the reach.
"""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage

from langchain_episodic import (
    ChromaEpisodeStore,
    Episode,
    EpisodeSource,
    EpisodicMemory,
    EpisodicMemoryMiddleware,
    EpisodicValueError,
    build_replay,
    create_recall_tool,
)
from langchain_episodic.service.journal import replayed_checkpoint
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.models import RecordingChatModel
from tests.unit_tests.factories import make_episode

NOW = 1_800_000_000.0
VICTIM_TASKS = [
    "Fix the crash when a user logs in with an empty password",
    "Export the monthly invoices of a customer to a CSV file",
    "Add pagination to the orders endpoint of the REST API",
    "Cache the exchange rates for ten minutes",
    "Write unit tests for the date parsing helper",
    "Rename the settings module and update its imports",
]
QUERIES = [
    "Login handler throws on blank credentials",
    "Download a client's bills for the month as a spreadsheet",
    "Page through the order list endpoint",
    "Keep currency conversion rates in memory for a while",
    "Cover the date parser with tests",
    "Move the configuration module to a new name",
]


def words() -> list[str]:
    return [w.lower() for task in VICTIM_TASKS for w in task.split() if len(w) > 3]


def attacks() -> dict[str, list[Episode]]:
    # Every victim's words, repeated: longer than a task (as the red team's stuffing).
    stuffed = " ".join(itertools.islice(itertools.cycle(words()), 200))
    long_text = " ".join(itertools.islice(itertools.cycle(words()), 2_000))[:12_000]
    return {
        "stuffing": [attack("stuffing", stuffed)],
        "long text": [attack("long", long_text)],
        "flood": [attack(f"flood-{i}", f"{stuffed} variant {i}") for i in range(100)],
    }


def by(principal: str, episode: Episode) -> Episode:
    """``episode`` recorded by ``principal``."""
    return Episode.from_dict({**episode.to_dict(), "source": {"principal": principal}})


def attack(episode_id: str, description: str) -> Episode:
    return by(
        "mallory",
        make_episode(
            episode_id=f"attacker-{episode_id}", description=description, reward=1.0, timestamp=NOW
        ),
    )


def memory_with(attack_episodes: list[Episode], *, shared: bool) -> EpisodicMemory:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), shared=shared, clock=lambda: NOW)
    victims = [
        by(
            f"victim-{i}",
            make_episode(
                episode_id=f"victim-{i}", description=task, reward=1.0, timestamp=NOW - 3_600.0 * i
            ),
        )
        for i, task in enumerate(VICTIM_TASKS)
    ]
    memory.record_many([*victims, *attack_episodes])
    return memory


def reached(memory: EpisodicMemory) -> int:
    """Victim queries whose replay shows an attacker episode."""
    return sum(
        any(i.startswith("attacker-") for i in build_replay(memory, query, top_k=3).shown)
        for query in QUERIES
    )


@pytest.mark.parametrize("name", ["stuffing", "long text", "flood"])
def test_an_attacker_reaches_fewer_unrelated_queries_in_a_shared_memory(name: str) -> None:
    plain = reached(memory_with(attacks()[name], shared=False))
    guarded = reached(memory_with(attacks()[name], shared=True))
    assert plain >= 2  # the attack works on a plain memory
    assert guarded < plain
    assert guarded <= 1


def test_a_flood_of_near_duplicates_takes_one_slot_and_one_principal_a_third() -> None:
    memory = memory_with(attacks()["flood"], shared=True)
    for query in QUERIES:
        shown = build_replay(memory, query, top_k=3).shown
        assert sum(i.startswith("attacker-") for i in shown) <= 1
    plain = memory_with(attacks()["flood"], shared=False)
    assert (
        max(
            sum(i.startswith("attacker-") for i in build_replay(plain, q, top_k=3).shown)
            for q in QUERIES
        )
        >= 2
    )


def test_a_short_stuffed_task_still_takes_at_most_one_slot() -> None:
    # A limit, not a defence: under NORMAL_TASK_CHARS no length rule applies, and a
    # task naming every topic stays similar to each; the cap keeps it to one slot.
    memory = memory_with([attack("short", " ".join(words()[:30]))], shared=True)
    for query in QUERIES:
        shown = build_replay(memory, query, top_k=3).shown
        assert sum(i.startswith("attacker-") for i in shown) <= 1


def test_a_later_copy_of_a_victims_task_cannot_push_the_original_out() -> None:
    copies = [attack(f"copy-{i}", f"{task} now") for i, task in enumerate(VICTIM_TASKS)]
    plain = memory_with(copies, shared=False)
    shared = memory_with(copies, shared=True)
    assert reached(plain) >= 5  # newer, so ranked above the original
    assert reached(shared) == 0
    for i, query in enumerate(QUERIES):
        assert f"victim-{i}" in build_replay(shared, query, top_k=3).shown


def test_each_victims_own_task_is_still_found_in_a_shared_memory() -> None:
    memory = memory_with(attacks()["long text"], shared=True)
    for i, query in enumerate(QUERIES):
        assert f"victim-{i}" in build_replay(memory, query, top_k=3).shown, query


def test_the_requesters_own_episodes_are_not_capped() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), shared=True, clock=lambda: NOW)
    memory.record_many(
        [
            by(
                "alice",
                make_episode(episode_id=f"alice-{i}", description=task, timestamp=NOW - i),
            )
            for i, task in enumerate(
                [
                    "Parse the yaml config and check the host key",
                    "Load the yaml settings file and validate its ports",
                    "Read a yaml configuration, verify the user field is set",
                ]
            )
        ]
    )
    query = "Parse the yaml config and check its keys"
    assert len(build_replay(memory, query, top_k=3).shown) == 1  # a third, for anyone else
    assert len(build_replay(memory, query, top_k=3, principal="alice").shown) == 3
    with pytest.raises(EpisodicValueError, match="principal=''"):
        build_replay(memory, query, top_k=3, principal="")


def test_shared_is_kept_by_for_namespace_and_refused_when_not_a_bool() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), shared=True)
    assert memory.runs.shared
    assert memory.for_namespace("team-b").runs.shared
    assert not EpisodicMemory(store=InMemoryEpisodeStore()).runs.shared
    with pytest.raises(EpisodicValueError, match="shared='yes' is invalid"):
        EpisodicMemory(store=InMemoryEpisodeStore(), shared="yes")  # type: ignore[arg-type]


def test_the_middleware_records_the_principal_from_the_runs_context() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), shared=True, clock=lambda: NOW)
    middleware = EpisodicMemoryMiddleware(
        memory,
        principal="{user_id}",
        record_episode=lambda state, runtime: make_episode(
            episode_id="from-the-run", description="Parse the yaml config", timestamp=NOW
        ),
    )
    agent = create_agent(
        RecordingChatModel(messages=iter([AIMessage(content="done")] * 2)),
        middleware=[middleware],
        context_schema=dict,
    )
    agent.invoke(
        {"messages": [HumanMessage("Parse the yaml config")]}, context={"user_id": "alice"}
    )
    stored = memory.get_episodes(["from-the-run"])["from-the-run"]
    assert stored.source is not None
    assert stored.source.principal == "alice"
    with pytest.raises(EpisodicValueError, match="principal='\\{user_id\\}' needs"):
        agent.invoke({"messages": [HumanMessage("Parse the yaml config")]}, context={})


def test_a_shared_memory_needs_the_middleware_to_name_each_runs_principal() -> None:
    with pytest.raises(EpisodicValueError, match="give principal="):
        EpisodicMemoryMiddleware(EpisodicMemory(store=InMemoryEpisodeStore(), shared=True))
    with pytest.raises(TypeError, match="principal=42 is invalid"):
        EpisodicMemoryMiddleware(EpisodicMemory(store=InMemoryEpisodeStore()), principal=42)  # type: ignore[arg-type]


def test_a_principal_is_validated_and_described() -> None:
    source = EpisodeSource(agent="coder", principal="alice")
    assert source.describe() == "agent coder, principal alice"
    assert EpisodeSource.from_dict(source.to_dict()) == source
    with pytest.raises(EpisodicValueError, match="principal"):
        EpisodeSource(principal="")


def credited_by_attacker(*, shared: bool) -> EpisodicMemory:
    """The attacker's poison, shown in 30 of its own runs, each credited 1.0 by it."""
    memory = memory_with([attack("poison", VICTIM_TASKS[0] + " quickly")], shared=shared)
    for run in range(30):
        run_id = f"mallory-run-{run}"
        memory.runs.note(run_id, ["attacker-poison"], VICTIM_TASKS[0])
        memory.runs.credit(run_id, 1.0, by="mallory")
    # A victim's run shown it and crediting it counts in both memories.
    memory.runs.note("victim-run", ["attacker-poison"], VICTIM_TASKS[0])
    memory.runs.credit("victim-run", 0.0, by="victim-1")
    return memory


def test_a_principal_cannot_raise_its_own_episodes_with_its_own_runs() -> None:
    plain = credited_by_attacker(shared=False).runs.utility("attacker-poison")
    shared = credited_by_attacker(shared=True).runs.utility("attacker-poison")
    assert plain.credited_runs == 31
    assert plain.estimate(NOW) > 0.7  # 30 runs at 1.0 raise it on a plain memory
    assert shared.credited_runs == 1  # only the victim's run is evidence
    assert shared.estimate(NOW) < 0.5


def test_the_middleware_credits_a_run_by_its_principal() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), shared=True, clock=lambda: NOW)
    memory.record(by("alice", make_episode(episode_id="alices", timestamp=NOW - 60.0)))
    middleware = EpisodicMemoryMiddleware(
        memory,
        principal="{user_id}",
        record_episode=lambda state, runtime: make_episode(
            episode_id="run-episode", reward=1.0, timestamp=NOW
        ),
    )
    agent = create_agent(
        RecordingChatModel(messages=iter([AIMessage(content="done")] * 2)),
        middleware=[middleware],
        context_schema=dict,
    )
    agent.invoke({"messages": [HumanMessage("Implement login form")]}, context={"user_id": "alice"})
    injections = [e for e in memory.journal.entries() if '"episode_ids"' in e.payload]
    assert any("alices" in e.payload for e in injections)  # the run was shown it
    (event,) = memory.runs.log()
    assert event.by == "alice"
    assert "alices" not in event.episode_ids  # shown to alice's run, no evidence for it
    assert memory.runs.utility("alices").credited_runs == 0


def test_one_principal_cannot_bury_anothers_episode_with_many_failed_runs() -> None:
    def buried(*, shared: bool) -> float:
        memory = memory_with([], shared=shared)
        for run in range(30):
            run_id = f"mallory-fails-{run}"
            memory.runs.note(run_id, ["victim-0"], VICTIM_TASKS[0])
            memory.runs.credit(run_id, 0.0, by="mallory")
        row = memory.runs.utility("victim-0")
        assert row.credited_runs == (3 if shared else 30)
        assert ("victim-0" in memory.runs.demoted()) is not shared
        return row.estimate(NOW)

    assert buried(shared=False) < 0.1  # thirty failures by one principal bury it
    assert buried(shared=True) >= 0.2  # three of them count: not on probation


def test_the_cap_on_a_principals_runs_survives_a_checkpoint_and_a_replay(
    tmp_path: Path,
) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "memory")
    memory = EpisodicMemory(store=store, shared=True, clock=lambda: NOW)
    memory.record(by("victim-0", make_episode(episode_id="victim-0", timestamp=NOW - 60.0)))
    for run in range(10):
        memory.runs.note(f"m-{run}", ["victim-0"], "Implement login form")
        memory.runs.credit(f"m-{run}", 0.0, by="mallory")
    memory.journal.checkpoint()
    before = memory.runs.utility("victim-0")
    store.close()
    again = ChromaEpisodeStore(path=tmp_path / "memory")
    reopened = EpisodicMemory(store=again, shared=True, clock=lambda: NOW)
    reopened.runs.note("m-10", ["victim-0"], "Implement login form")
    reopened.runs.credit("m-10", 0.0, by="mallory")  # a fourth... eleventh: not counted
    assert reopened.runs.utility("victim-0").credited_runs == before.credited_runs == 3
    assert replayed_checkpoint(again, "default") == []  # the checkpoint agrees with a replay
    again.close()


def test_one_principal_cannot_steer_the_presentation_learner() -> None:
    def feedback_evidence(*, shared: bool) -> int:
        memory = memory_with([], shared=shared)
        # An unfixed failure on the topic: the feedback policy shows other than compact.
        failed = make_episode(
            episode_id="failed-login",
            description="Login handler crashes when the username is left empty",
            outcome="failure",
            reward=0.0,
            message="still raises KeyError on an empty username",
            timestamp=NOW - 100.0,
        )
        memory.record(by("victim-9", failed))
        for run in range(60):
            run_id = f"mallory-{run}"
            replay = build_replay(memory, QUERIES[0], run_id=run_id, renderer="feedback")
            assert replay.shown  # the run was shown memory, with the feedback policy
            memory.runs.credit(run_id, 1.0, by="mallory")
        choice = memory.runs.presentation()
        (feedback,) = (e for e in choice.estimates if e.policy == "feedback")
        return feedback.runs

    assert feedback_evidence(shared=False) == 60
    assert feedback_evidence(shared=True) == 20  # PRINCIPAL_POLICY_RUNS


def test_the_recall_tool_recalls_on_behalf_of_the_runs_principal() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), shared=True, clock=lambda: NOW)
    tasks = [
        "Parse the yaml config and check the host key",
        "Load the yaml settings file and validate its ports",
        "Read a yaml configuration, verify the user field is set",
    ]
    memory.record_many(
        [
            by("alice", make_episode(episode_id=f"alice-{i}", description=task, timestamp=NOW))
            for i, task in enumerate(tasks)
        ]
    )

    def answer(tool: object, user_id: str) -> str:
        call = {"name": "recall_past_experiences", "args": {"query": "yaml config keys"}}
        model = RecordingChatModel(
            messages=iter([AIMessage("", tool_calls=[{**call, "id": "c1"}]), AIMessage("done")])
        )
        agent = create_agent(model, tools=[tool], context_schema=dict)
        result = agent.invoke({"messages": [HumanMessage("yaml")]}, context={"user_id": user_id})
        return str(result["messages"][2].content)

    on_behalf = create_recall_tool(memory, principal="{user_id}")
    assert sum(task in answer(on_behalf, "alice") for task in tasks) == 3  # her own: uncapped
    assert sum(task in answer(on_behalf, "bob") for task in tasks) == 1  # a third for others
