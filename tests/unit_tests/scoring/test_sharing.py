"""The rules of a shared memory's replay, as pure functions."""

from __future__ import annotations

import pytest

from langchain_episodic.scoring.sharing import (
    NORMAL_TASK_CHARS,
    length_factor,
    principal_slots,
    shared_order,
)


def test_a_task_of_normal_length_keeps_its_similarity_a_longer_one_loses_by_the_root() -> None:
    assert length_factor(0) == length_factor(NORMAL_TASK_CHARS) == 1.0
    assert length_factor(4 * NORMAL_TASK_CHARS) == pytest.approx(0.5)
    assert length_factor(12_000) == pytest.approx(0.204, abs=1e-3)
    factors = [length_factor(n) for n in (600, 1_000, 5_000, 50_000)]
    assert factors == sorted(factors, reverse=True)


@pytest.mark.parametrize(("top_k", "slots"), [(1, 1), (2, 1), (3, 1), (6, 2), (10, 3)])
def test_one_principal_fills_a_third_of_a_replay_at_least_one(top_k: int, slots: int) -> None:
    assert principal_slots(top_k) == slots


def test_near_duplicates_collapse_to_the_best_and_each_principal_is_capped() -> None:
    rows = [
        ("flood-1", "fix the login bug in the handler now", "eve"),
        ("flood-2", "fix the login bug in the handler now please", "eve"),
        ("eve-other", "parse the yaml config and check keys", "eve"),
        ("bob", "export the invoices to csv", "bob"),
        ("anon-1", "rotate the api keys", None),
        ("anon-2", "rename the settings module", None),
    ]
    kept = shared_order(rows, lambda r: r[1], lambda r: r[2], top_k=3)
    assert [r[0] for r in kept] == ["flood-1", "bob", "anon-1", "anon-2"]
    wider = shared_order(rows, lambda r: r[1], lambda r: r[2], top_k=6)
    assert [r[0] for r in wider] == ["flood-1", "eve-other", "bob", "anon-1", "anon-2"]
    assert shared_order([], lambda r: "", lambda r: None, top_k=3) == []
