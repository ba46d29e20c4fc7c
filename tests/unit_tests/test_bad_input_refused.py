"""The last bad inputs the held-out run found accepted are refused, naming the argument.

Each case below was accepted (or failed with a bare ``TypeError``) before: noting a
run shown episodes the namespace does not hold, asking the utility of an id nothing
names, all-zero ``ReplayWeights``, a negative ``current_time`` (recency above 1), a
``relevance_margin`` the article's ranking ignores, and a ``token_counter`` that
returns -1, NaN or a string. Nothing is written on a refusal.
"""

from __future__ import annotations

import math

import pytest

from langchain_episodic import (
    EpisodicMemory,
    EpisodicValueError,
    RecallOptions,
    ReplayWeights,
    build_replay,
)
from langchain_episodic.prompting.episodes import (
    build_replay_context,
    checked_token_counter,
    format_replay_prompt,
)
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import make_episode

NOW = 1_000_000.0


@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW)
    memory.record(make_episode(episode_id="e1", description="Implement login form"))
    return memory


def test_a_run_cannot_be_shown_an_episode_the_namespace_does_not_hold(
    memory: EpisodicMemory,
) -> None:
    with pytest.raises(EpisodicValueError, match=r"episode_ids=\['ghost'\].*nothing was noted"):
        memory.runs.note("run-1", ["e1", "ghost"], "Implement login form")
    assert memory.runs.pending() == {}
    assert memory.store.read_journal(memory.namespace) == []
    with pytest.raises(EpisodicValueError, match="one string"):
        memory.runs.note("run-1", "e1", "Implement login form")
    memory.runs.note("run-1", ["e1"], "Implement login form")
    assert memory.runs.pending().keys() == {"run-1"}


def test_the_utility_of_an_id_nothing_names_is_refused(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match="episode_id='nope' is not stored"):
        memory.runs.utility("nope")
    assert memory.runs.utility("e1").estimate(NOW) == 0.5  # stored, never shown: the prior


def test_all_zero_weights_are_refused() -> None:
    with pytest.raises(EpisodicValueError, match=r"ReplayWeights\(0, 0, 0, 0\)"):
        ReplayWeights(0, 0, 0, 0)
    assert ReplayWeights(0, 0, 0, 0.1).outcome_bonus == 0.1


@pytest.mark.parametrize("now", [-5.0, -1e-9, math.inf, math.nan])
def test_a_current_time_before_1970_or_not_finite_is_refused(
    memory: EpisodicMemory, now: float
) -> None:
    with pytest.raises(EpisodicValueError, match="current_time="):
        memory.recall("Implement login form", current_time=now)
    assert memory.recall("Implement login form", current_time=0.0)


def test_a_relevance_margin_with_the_articles_ranking_is_refused(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match=r"relevance_margin=0\.1 is invalid with ranking"):
        memory.recall("Implement login form", ranking="article", relevance_margin=0.1)
    with pytest.raises(EpisodicValueError, match="relevance_margin"):
        RecallOptions(ranking="article", relevance_margin=0.1)
    assert RecallOptions(ranking="relevance", relevance_margin=0.1).relevance_margin == 0.1


@pytest.mark.parametrize("returned", [-1, math.nan, math.inf, "12", None, True])
def test_a_token_counter_must_return_a_count(memory: EpisodicMemory, returned: object) -> None:
    def counter(text: str) -> object:
        return returned

    with pytest.raises(EpisodicValueError, match=r"token_counter returned .* must return"):
        build_replay(memory, "Implement login form", token_counter=counter)  # type: ignore[arg-type]
    context = build_replay_context(memory.recall("Implement login form"))
    with pytest.raises(EpisodicValueError, match="token_counter returned"):
        format_replay_prompt(context, "Implement login form", token_counter=counter)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="token_counter="):
        checked_token_counter(3)
    assert build_replay(memory, "Implement login form", token_counter=lambda t: 2.5).text


@pytest.mark.parametrize("user_id", [123, True, 4.5, ["alice"]])
def test_a_namespace_template_field_must_be_a_string(user_id: object) -> None:
    from types import SimpleNamespace  # noqa: PLC0415

    from langchain_episodic.integrations._scope import resolve_namespace  # noqa: PLC0415

    with pytest.raises(EpisodicValueError, match="to be a string"):
        resolve_namespace("user-{user_id}", SimpleNamespace(context={"user_id": user_id}))
    assert resolve_namespace("user-{user_id}", SimpleNamespace(context={"user_id": "123"})) == (
        "user-123"
    )


def test_a_credit_error_names_the_date_beside_the_time(memory: EpisodicMemory) -> None:
    from langchain_episodic.errors import CreditError  # noqa: PLC0415

    memory.runs.note("run-1", ["e1"], "Implement login form")
    memory.runs.credit("run-1", 0.9)
    with pytest.raises(
        CreditError, match=r"already credited at 1000000 \(1970-01-12 13:46:40 UTC\)"
    ):
        memory.runs.credit("run-1", 0.9)


@pytest.mark.parametrize("k", ["3", 0, -1, 2.5])
def test_as_retriever_names_k(memory: EpisodicMemory, k: object) -> None:
    with pytest.raises(EpisodicValueError, match=r"^k=.* is invalid"):
        memory.as_retriever(k=k)
    assert memory.as_retriever(k=2).k == 2
