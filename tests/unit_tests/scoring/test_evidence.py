"""What credit says of each candidate at recall: near-duplicates share, exploration draws."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from langchain_episodic import EpisodicMemory, HashingEmbeddings, RecallOptions
from langchain_episodic.scoring.credit import EpisodeUtility, utility_factor
from langchain_episodic.scoring.evidence import candidate_utilities, near_duplicate_groups
from langchain_episodic.scoring.ranking import why_recalled
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import make_episode

NOW = 1_800_000_000.0
FIX = "Retry the payment gateway call with exponential backoff"
TASK = "Retry the payment gateway call with backoff"


def test_near_duplicates_are_grouped_by_shared_words_transitively() -> None:
    texts = [
        "Fix the login crash on empty passwords",
        "fix the LOGIN crash on empty passwords!",
        "Write unit tests for the CSV parser",
        "Fix the login crash on empty passwords today",
        "Fix the login crash on empty passwords today please",
    ]
    # The last shares 7 of 9 words with the first (0.78), 8 of 9 with the fourth.
    assert near_duplicate_groups(texts) == [0, 0, 2, 0, 0]
    assert near_duplicate_groups(texts, overlap=1.0) == [0, 0, 2, 3, 4]
    assert near_duplicate_groups([]) == []


def test_pooled_evidence_is_the_groups_and_the_prior_without_any() -> None:
    rows = {
        "a": EpisodeUtility("a", helped=2.0, hurt=0.0, updated_at=NOW),
        "b": EpisodeUtility("b", helped=1.0, hurt=1.0, updated_at=NOW),
    }
    # Pooled: 3 helped, 1 hurt, over the ranking's prior of 8 pseudo-runs a side.
    assert candidate_utilities(["a", "b", "c"], [0, 0, 2], rows, NOW) == pytest.approx(
        [11 / 20, 11 / 20, 0.5]
    )


def ticking_memory(**settings: object) -> EpisodicMemory:
    ticks = itertools.count(NOW)
    return EpisodicMemory(
        store=InMemoryEpisodeStore(),
        embeddings=HashingEmbeddings(),
        clock=lambda: next(ticks),
        **settings,  # type: ignore[arg-type]
    )


def test_a_fix_recorded_five_times_earns_its_credit_once() -> None:
    memory = ticking_memory()
    memory.record_many(
        [make_episode(episode_id=f"fix-{i}", description=FIX, timestamp=NOW) for i in range(5)]
        + [
            make_episode(
                episode_id="look-alike",
                description="Retry the payment gateway call with linear backoff",
                timestamp=NOW,
            )
        ]
    )
    # Only the first copy was ever shown; runs with it succeed, runs with the
    # look-alike fail.
    for index in range(4):
        memory.runs.note(f"fix-run-{index}", ["fix-0"], TASK)
        memory.runs.credit(f"fix-run-{index}", 1.0)
        memory.runs.note(f"other-run-{index}", ["look-alike"], TASK)
        memory.runs.credit(f"other-run-{index}", 0.0)
    report = memory.recall(TASK, options=RecallOptions(top_k=6), explain=True)
    estimates = report.estimates
    assert {estimates[f"fix-{i}"] for i in range(5)} == {estimates["fix-0"]}
    assert estimates["fix-0"] > 0.5 > estimates["look-alike"]
    assert memory.runs.utility("fix-3").credited_runs == 0  # its own row stays empty
    assert report.results[-1].episode.episode_id == "look-alike"
    copy = next(r for r in report.results if r.episode.episode_id == "fix-3")
    assert why_recalled(copy, report).endswith(
        f"by utility {estimates['fix-3']:.2f}: never shown in a run, "
        "evidence shared with near-duplicates)"
    )
    own = next(r for r in report.results if r.episode.episode_id == "fix-0")
    assert "4 credited)" in why_recalled(own, report)


def test_exploration_draws_from_the_posterior_with_the_memorys_seeded_rng() -> None:
    def orders(seed: int, explore: bool) -> list[list[str]]:
        memory = ticking_memory(rng=np.random.default_rng(seed))
        memory.record_many(
            [
                make_episode(episode_id=f"e{i}", description=text, timestamp=NOW)
                for i, text in enumerate(
                    [
                        "Retry the payment gateway call",
                        "Add backoff to the gateway client",
                        "Payment call retries with jitter",
                        "Backoff for payment webhooks",
                        "Gateway timeouts on payment calls",
                        "Retry failed payments nightly",
                    ]
                )
            ]
        )
        memory.runs.note("r0", ["e5"], TASK)
        memory.runs.credit("r0", 0.6)
        options = RecallOptions(top_k=6, explore=explore)
        return [
            [r.episode.episode_id for r in memory.recall(TASK, options=options)] for _ in range(8)
        ]

    assert orders(3, explore=True) == orders(3, explore=True)  # reproducible
    explored = orders(3, explore=True) + orders(4, explore=True)
    assert len({tuple(order) for order in explored}) > 1  # the draws reorder
    plain = orders(3, explore=False)
    assert len({tuple(order) for order in plain}) == 1  # the mean never does


def test_explore_is_a_flag() -> None:
    with pytest.raises(TypeError, match="explore='yes'"):
        RecallOptions(explore="yes")  # type: ignore[arg-type]


def test_one_credited_run_moves_rank_a_little_and_runs_that_agree_move_it_a_lot() -> None:
    # One run at reward 0.4 against a baseline of 0.8: h = 0.1 (the example).
    one = {"a": EpisodeUtility("a", helped=0.1, hurt=0.9, credited_runs=1, updated_at=NOW)}
    [shrunk] = candidate_utilities(["a"], [0], one, NOW)
    assert 0.89 * utility_factor(shrunk) > 0.69  # still above the one at 0.69
    assert utility_factor(one["a"].estimate(NOW)) < 0.69 / 0.89  # the prior of 1 swung it
    ten = {"a": EpisodeUtility("a", helped=1.0, hurt=9.0, credited_runs=10, updated_at=NOW)}
    [agreed] = candidate_utilities(["a"], [0], ten, NOW)
    assert 0.89 * utility_factor(agreed) < 0.69
