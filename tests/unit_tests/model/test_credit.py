"""A run's credit events and their journal entries (`langchain_episodic.model.credit`).

Validation names the field; journal entries round-trip and refuse damage.
"""

from __future__ import annotations

import json
import math

import pytest

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.credit import (
    CreditEvent,
    Injection,
    decode_entry,
    encode_credit,
    encode_injection,
    outcome_entry_id,
)


def credit(
    run_id: str,
    reward: float | None,
    episode_ids: tuple[str, ...] = (),
    category: str = "debugging",
    at: float = 0.0,
) -> CreditEvent:
    return CreditEvent(run_id, reward, episode_ids, category, at)


# ---------------------------------------------------------------- validation


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"run_id": ""}, "Injection.run_id=''"),
        ({"run_id": "   "}, "Injection.run_id='   '"),
        ({"run_id": 7}, "Injection.run_id=7"),
        ({"task": ""}, "Injection.task=''"),
        ({"category": None}, "Injection.category=None"),
        ({"thread_id": ""}, "Injection.thread_id=''"),
        ({"episode_ids": "ep-1"}, "Injection.episode_ids='ep-1'"),
        ({"episode_ids": None}, "Injection.episode_ids=None"),
        ({"episode_ids": ("ep-1", "")}, "Injection.episode_ids[1]=''"),
        ({"episode_ids": ["ep-1", 3]}, "Injection.episode_ids[1]=3"),
        ({"at": math.nan}, "Injection.at=nan"),
        ({"at": math.inf}, "Injection.at=inf"),
        ({"at": "soon"}, "Injection.at='soon'"),
    ],
)
def test_a_bad_injection_names_its_field(kwargs: dict[str, object], named: str) -> None:
    fields: dict[str, object] = {
        "run_id": "run-1",
        "episode_ids": ("ep-1",),
        "task": "Fix the login",
        "category": "debugging",
        "at": 0.0,
    }
    with pytest.raises(EpisodicValueError, match="^" + named.replace("[", r"\[")):
        Injection(**{**fields, **kwargs})  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("kwargs", "named"),
    [
        ({"run_id": ""}, "CreditEvent.run_id=''"),
        ({"category": ""}, "CreditEvent.category=''"),
        ({"by": ""}, "CreditEvent.by=''"),
        ({"episode_ids": "ep-1"}, "CreditEvent.episode_ids='ep-1'"),
        ({"at": math.nan}, "CreditEvent.at=nan"),
        ({"reward": 1.5}, "reward=1.5"),
        ({"reward": -0.1}, "reward=-0.1"),
        ({"reward": math.nan}, "reward=nan"),
        ({"reward": math.inf}, "reward=inf"),
        ({"reward": True}, "reward=True"),
        ({"reward": "0.5"}, "reward='0.5'"),
    ],
)
def test_a_bad_credit_event_names_its_field(kwargs: dict[str, object], named: str) -> None:
    fields: dict[str, object] = {
        "run_id": "run-1",
        "reward": 0.5,
        "episode_ids": ("ep-1",),
        "category": "debugging",
        "at": 0.0,
    }
    with pytest.raises(EpisodicValueError, match="^" + named):
        CreditEvent(**{**fields, **kwargs})  # type: ignore[arg-type]


def test_valid_events_are_normalised() -> None:
    shown = Injection("run-1", ["b", "a", "b"], "Fix it", "debugging", at=3)  # type: ignore[arg-type]
    assert shown.episode_ids == ("b", "a")  # deduplicated, order kept
    assert shown.at == 3.0
    assert isinstance(shown.at, float)
    event = CreditEvent("run-1", 1, ["a", "a"], "debugging", 4)  # type: ignore[arg-type]
    assert event.reward == 1.0
    assert isinstance(event.reward, float)
    assert event.episode_ids == ("a",)
    assert not event.closed_without_credit
    assert credit("run-2", None).closed_without_credit
    for edge in (0.0, 1.0):
        assert credit("run-3", edge).reward == edge


# ---------------------------------------------------------------- journal entries


def test_injections_and_credits_round_trip_through_their_entries() -> None:
    items: list[Injection | CreditEvent] = [
        Injection("run ü/1", ("ep-1", "ep 🙂"), 'Fix "the" login\n', "debugging", 1.25, "t-1"),
        Injection("run-2", (), "Nothing shown", "code_generation", 0.0),
        CreditEvent("run ü/1", 0.3, ("ep-1", "ep 🙂"), "debugging", 9.5, by="ci"),
        CreditEvent("run-2", None, (), "code_generation", 10.0, by="open_run_ttl"),
        CreditEvent("run-3", 0.1 + 0.2, ("x",), "debugging", 1_700_000_000.123456789),
    ]
    for item in items:
        encoded = encode_injection(item) if isinstance(item, Injection) else encode_credit(item)
        entry_id, run_id, payload = encoded
        assert run_id == item.run_id
        assert json.loads(payload)["kind"] in ("injection", "credit")
        decoded = decode_entry(entry_id, run_id, payload)
        assert decoded == item
        assert type(decoded) is type(item)


def test_a_run_has_one_outcome_id_and_one_id_per_distinct_injection() -> None:
    good = credit("run-1", 0.9, ("a",))
    other = credit("run-1", 0.1, ("a",), at=5.0)
    assert encode_credit(good)[0] == encode_credit(other)[0] == outcome_entry_id("run-1")
    assert outcome_entry_id("run-1") != outcome_entry_id("run-2")
    first = Injection("run-1", ("a",), "Fix it", "debugging", 1.0)
    again = Injection("run-1", ("a",), "Fix it", "debugging", 1.0)
    later = Injection("run-1", ("b",), "Fix it", "debugging", 2.0)
    assert encode_injection(first) == encode_injection(again)  # the same record: one entry
    assert encode_injection(first)[0] != encode_injection(later)[0]  # a second showing
    assert encode_injection(first)[0] != outcome_entry_id("run-1")


@pytest.mark.parametrize(
    "payload",
    [
        "not json",
        "[1, 2]",
        '"a string"',
        '{"kind": "gossip", "run_id": "run-1"}',
        '{"run_id": "run-1"}',
        '{"kind": "credit", "run_id": "run-1"}',  # fields missing
        '{"kind": "credit", "run_id": "run-1", "reward": 2.0, "episode_ids": [],'
        ' "category": "debugging", "at": 0.0, "by": null}',  # reward out of range
        '{"kind": "injection", "run_id": "run-1", "episode_ids": "a", "task": "t",'
        ' "category": "debugging", "at": 0.0, "thread_id": null}',
        '{"kind": "injection", "run_id": "run-1", "episode_ids": [], "task": "t",'
        ' "category": "debugging", "at": 0.0, "thread_id": null, "extra": 1}',
    ],
)
def test_a_damaged_entry_is_refused_with_its_id(payload: str) -> None:
    with pytest.raises(EpisodicValueError, match=r"entry 'outcome:run-1' is damaged"):
        decode_entry("outcome:run-1", "run-1", payload)


def test_an_entry_filed_under_another_run_is_damaged() -> None:
    entry_id, _, payload = encode_credit(credit("run-1", 0.5))
    with pytest.raises(EpisodicValueError, match=r"damaged.*run_id 'run-1'.*'run-2'"):
        decode_entry(entry_id, "run-2", payload)
