"""Foreign records in a namespace's collection never crash a read (GitHub issue 5).

Another tool may write into the same Chroma collection. Recall, ``get``,
``episodes()`` and reopening skip each record that is not a valid episode, with a
``MalformedRecordWarning`` naming its id, and keep returning the good ones;
``ChromaEpisodeStore.verify`` lists them. Real in-process Chroma throughout.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, EpisodicValueError
from langchain_episodic.errors import MalformedRecordWarning
from tests.unit_tests.factories import make_episode

QUERY = "Implement login form"
GOOD = make_episode(episode_id="good", description=QUERY)


def episode_json(record_id: str, **changes: Any) -> str:
    data = make_episode(episode_id=record_id, description=QUERY).to_dict()
    for path, value in changes.items():
        owner, _, key = path.rpartition("__")
        target = data[owner] if owner else data
        if value is None:
            target.pop(key)
        else:
            target[key] = value
    return json.dumps(data)  # allow_nan: writes NaN, as other tools do


FOREIGN: dict[str, dict[str, Any] | None] = {
    "no-metadata": None,
    "no-episode-key": {"seq": 1, "note": "written by another tool"},
    "episode-not-a-string": {"episode": 42, "seq": 1},
    "bad-json": {"episode": '{"episode_id": "bad-json", ', "seq": 1},
    "json-list": {"episode": '["good", 1]', "seq": 1},
    "json-string": {"episode": '"just text"', "seq": 1},
    "missing-ranking-fields": {"episode": json.dumps({"episode_id": "x"}), "seq": 1},
    "missing-solution": {"episode": episode_json("missing-solution", solution=None), "seq": 1},
    "missing-task": {"episode": episode_json("missing-task", task=None), "seq": 1},
    "task-not-a-dict": {"episode": episode_json("task-not-a-dict", task=[1]), "seq": 1},
    "nan-reward": {"episode": episode_json("nan-reward", feedback__reward=math.nan), "seq": 1},
    "inf-timestamp": {"episode": episode_json("inf-timestamp", timestamp=math.inf), "seq": 1},
    "wrong-outcome": {"episode": episode_json("wrong-outcome", outcome="won"), "seq": 1},
    "id-not-a-string": {"episode": episode_json("x", episode_id=7), "seq": 1},
    "reward-7": {"episode": episode_json("reward-7", feedback__reward=7), "seq": 1},
    "negative-iterations": {
        "episode": episode_json("negative-iterations", iterations=-3),
        "seq": 1,
    },
    "timestamp-as-text": {"episode": episode_json("timestamp-as-text", timestamp="12"), "seq": 1},
    "blank-description": {
        "episode": episode_json("blank-description", task__description="  "),
        "seq": 1,
    },
    "unknown-category": {
        "episode": episode_json("unknown-category", task__category="cooking"),
        "seq": 1,
    },
    "passed-over-total": {
        "episode": episode_json("passed-over-total", feedback__tests_passed=9),
        "seq": 1,
    },
    "source-not-a-dict": {"episode": episode_json("source-not-a-dict", source="me"), "seq": 1},
}


def seeded(record_id: str) -> tuple[ChromaEpisodeStore, EpisodicMemory]:
    """A memory holding GOOD, plus one foreign record as near the query as GOOD is."""
    store = ChromaEpisodeStore()
    memory = EpisodicMemory(store=store, clock=lambda: 0.0)
    memory.record(GOOD)
    metadata = FOREIGN[record_id]
    store.collection("default").add(
        ids=[record_id],
        embeddings=[memory.embeddings.embed_query(QUERY)],
        metadatas=None if metadata is None else [metadata],
    )
    return store, memory


def named(record: pytest.WarningsRecorder, record_id: str) -> bool:
    return any(
        isinstance(w.message, MalformedRecordWarning) and w.message.record_id == record_id
        for w in record
    )


@pytest.mark.parametrize("record_id", list(FOREIGN))
def test_recall_skips_a_foreign_record_and_names_it(record_id: str) -> None:
    _, memory = seeded(record_id)
    with pytest.warns(MalformedRecordWarning) as record:
        results = memory.recall(QUERY, top_k=3, current_time=0.0)
    assert named(record, record_id)
    assert [r.episode for r in results] == [GOOD]


@pytest.mark.parametrize("record_id", list(FOREIGN))
def test_get_skips_a_foreign_record_and_names_it(record_id: str) -> None:
    store, _ = seeded(record_id)
    with pytest.warns(MalformedRecordWarning) as record:
        found = store.get("default", [record_id, "good"])
    assert named(record, record_id)
    assert found == {"good": GOOD}


@pytest.mark.parametrize(
    "record_id", [r for r, metadata in FOREIGN.items() if metadata is not None]
)
def test_episodes_and_reopen_skip_a_foreign_record_and_name_it(record_id: str) -> None:
    store, memory = seeded(record_id)
    with pytest.warns(MalformedRecordWarning) as record:
        assert list(memory.episodes()) == [GOOD]
    assert named(record, record_id)
    with pytest.warns(MalformedRecordWarning) as record:
        reopened = EpisodicMemory(store=store)  # reads the latest records and recounts
    assert named(record, record_id)
    assert reopened.short_term == (GOOD,)
    assert [(p.category, p.total_episodes) for p in reopened.skill_profiles()] == [
        (GOOD.task.category, 1)
    ]


@pytest.mark.parametrize("record_id", list(FOREIGN))
def test_verify_lists_the_foreign_record(record_id: str) -> None:
    store, _ = seeded(record_id)
    findings = store.verify("default")
    assert {finding.record_id for finding in findings} == {record_id}
    assert all(finding.reason for finding in findings)


def test_a_recorded_episode_after_a_foreign_record_is_still_read_in_order() -> None:
    store, memory = seeded("bad-json")
    later = make_episode(episode_id="later", description="Fix the parser bug", timestamp=5.0)
    memory.record(later)
    with pytest.warns(MalformedRecordWarning, match="bad-json"):
        assert list(memory.episodes()) == [GOOD, later]
    with pytest.warns(MalformedRecordWarning, match="bad-json"):
        assert EpisodicMemory(store=store).short_term == (GOOD, later)


def test_recording_under_an_id_a_malformed_record_holds_is_refused_not_lost() -> None:
    memory = EpisodicMemory()
    collection = memory.store.collection("default")  # type: ignore[attr-defined]
    vector = memory.embeddings.embed_query("Implement login form")
    collection.add(ids=["taken"], embeddings=[vector], metadatas=[{"episode": "nope", "seq": 0}])
    with (
        pytest.warns(MalformedRecordWarning, match="id='taken'"),
        pytest.raises(
            EpisodicValueError, match=r"episode_id='taken' is held .* nothing was written"
        ),
    ):
        memory.record(make_episode(episode_id="taken"))
    assert collection.get(ids=["taken"])["metadatas"] == [{"episode": "nope", "seq": 0}]
    assert memory.record(make_episode(episode_id="free")) is True
