"""The pure credit statistic (`langchain_episodic.scoring.credit`).

The advantage is measured against runs *without* the episode; counts move the estimate
more than one lucky run; evidence is forgotten; the table does not depend on the
order events are read in.
"""

from __future__ import annotations

import random

import pytest

from langchain_episodic.model.credit import (
    CreditEvent,
    Injection,
)
from langchain_episodic.scoring.credit import (
    ADVANTAGE_SCALE,
    PRIOR_HELPED,
    PRIOR_HURT,
    UTILITY_HALF_LIFE,
    UTILITY_POWER,
    EpisodeUtility,
    book_from,
    utility_factor,
    utility_table,
)

HALF_LIFE = UTILITY_HALF_LIFE


def credit(
    run_id: str,
    reward: float | None,
    episode_ids: tuple[str, ...] = (),
    category: str = "debugging",
    at: float = 0.0,
) -> CreditEvent:
    return CreditEvent(run_id, reward, episode_ids, category, at)


# ---------------------------------------------------------------- the statistic


def reference_advantages(credits: list[CreditEvent], episode_id: str) -> list[float]:
    """Advantages of ``episode_id``'s runs, written out from the module's definition.

    The baseline is the mean reward of the category's earlier credited runs that did
    not show the episode, shrunk (weight 1) towards a neutral 0.5.
    """
    found = []
    earlier: list[CreditEvent] = []
    for event in sorted(credits, key=lambda e: (e.at, e.run_id)):
        assert event.reward is not None
        same = [e for e in earlier if e.category == event.category]
        if episode_id in event.episode_ids:
            without = [e.reward or 0.0 for e in same if episode_id not in e.episode_ids]
            baseline = (sum(without) + 0.5) / (len(without) + 1)
            found.append(event.reward - baseline)
        earlier.append(event)
    return found


def test_an_episode_shown_only_on_easy_tasks_gains_nothing_for_their_ease() -> None:
    # Easy tasks: every run earns 1.0, with or without "easy-rider".
    easy = [credit(f"easy-{i}", 1.0, (), "easy", at=float(i)) for i in range(20)]
    easy += [credit(f"easy-x-{i}", 1.0, ("easy-rider",), "easy", at=20.0 + i) for i in range(5)]
    # Hard tasks: runs without "real-fix" earn 0.2, runs with it 0.9.
    hard = [credit(f"hard-{i}", 0.2, (), "hard", at=float(i)) for i in range(20)]
    hard += [credit(f"hard-x-{i}", 0.9, ("real-fix",), "hard", at=20.0 + i) for i in range(5)]
    table = utility_table(easy + hard, half_life=HALF_LIFE)
    rider, fix = table["easy-rider"], table["real-fix"]
    assert rider.mean_reward == 1.0 > fix.mean_reward == pytest.approx(0.9)  # type: ignore[operator]
    assert rider.mean_advantage == pytest.approx(0.0, abs=0.03)
    assert fix.mean_advantage == pytest.approx(0.7, abs=0.05)
    now = 30.0
    assert rider.estimate(now) == pytest.approx(0.5, abs=0.03)
    assert fix.estimate(now) > 0.7
    assert fix.estimate(now) > rider.estimate(now) + 0.2


def test_the_baseline_leaves_out_the_runs_that_showed_the_episode() -> None:
    # "x" is in every good run; runs without it fail. If its own runs entered its
    # baseline, its advantage would shrink run after run; it does not.
    rng = random.Random(7)
    credits = []
    for i in range(40):
        shown = rng.random() < 0.5
        credits.append(
            credit(f"run-{i:02d}", 1.0 if shown else 0.0, ("x",) if shown else ("y",), at=float(i))
        )
    table = utility_table(credits)
    expected = reference_advantages(credits, "x")
    assert table["x"].credited_runs == len(expected) > 10
    assert table["x"].advantage_sum == pytest.approx(sum(expected), rel=1e-12)
    # With its own runs in the baseline (all runs of the category), it would be lower.
    everyone = 0.0
    for index, event in enumerate(credits):
        if "x" in event.episode_ids:
            before = [e.reward or 0.0 for e in credits[:index]]
            everyone += 1.0 - (sum(before) + 0.5) / (len(before) + 1)
    assert table["x"].advantage_sum > everyone + 1.0
    # ... and "y", shown only in failing runs, is marked as hurting.
    assert table["y"].estimate(40.0) < 0.3 < 0.8 < table["x"].estimate(40.0)


def test_other_categories_do_not_enter_the_baseline() -> None:
    other = [credit(f"other-{i}", 0.0, (), "other", at=float(i)) for i in range(10)]
    mine = credit("mine", 1.0, ("x",), "debugging", at=20.0)
    alone = utility_table([mine])["x"]
    mixed = utility_table([*other, mine])["x"]
    assert alone.advantage_sum == mixed.advantage_sum == 0.5  # baseline: the prior 0.5
    assert alone.estimate(20.0) == mixed.estimate(20.0) == pytest.approx(2 / 3)


def test_one_lucky_run_moves_the_estimate_less_than_ten() -> None:
    def after(runs: int) -> float:
        baseline = [credit(f"base-{i:02d}", 0.5, (), at=float(i)) for i in range(10)]
        lucky = [credit(f"with-{i:02d}", 1.0, ("x",), at=10.0 + i) for i in range(runs)]
        return utility_table(baseline + lucky)["x"].estimate(10.0 + runs)

    one, ten = after(1), after(10)
    assert 0.5 < one < 0.7  # a Beta(1, 1) prior against one run: at most 2/3
    assert ten > one + 0.15
    assert ten < 1.0
    # Exactly the posterior mean: h = 0.5 + advantage, over the prior.
    row = EpisodeUtility("x")
    row.add(1.0, 1.0, 0.5, at=0.0)
    expected = (PRIOR_HELPED + 1.0) / (PRIOR_HELPED + PRIOR_HURT + 1.0)
    assert row.estimate(0.0) == pytest.approx(expected)
    assert ADVANTAGE_SCALE > 0


def test_evidence_is_forgotten_towards_the_prior() -> None:
    # Runs without "fix" earn 0.2; runs with it 1.0.
    good = [credit(f"base-{i:02d}", 0.2, (), at=float(i)) for i in range(20)]
    good += [credit(f"run-{i:02d}", 1.0, ("fix",), at=float(i)) for i in range(20)]
    row = utility_table(good)["fix"]
    fresh = row.estimate(20.0)
    one = row.estimate(20.0 + HALF_LIFE)
    many = row.estimate(20.0 + 20 * HALF_LIFE)
    assert fresh > 0.85
    assert fresh > one > many > 0.5
    assert many == pytest.approx(0.5, abs=1e-4)
    # One half-life halves the evidence: the posterior mean says exactly how much.
    helped, hurt = row.helped / 2, row.hurt / 2
    assert one == pytest.approx(
        (PRIOR_HELPED + helped) / (PRIOR_HELPED + helped + PRIOR_HURT + hurt)
    )
    # A fix that stopped working: old successes fade, new failures count in full.
    later = 10 * HALF_LIFE
    broken = [credit(f"late-{i}", 0.0, ("fix",), at=later + i) for i in range(3)]
    assert utility_table(good + broken)["fix"].estimate(later + 3) < 0.5
    # A shorter half-life forgets sooner.
    quick = utility_table(good, half_life=HALF_LIFE / 10)["fix"]
    assert quick.estimate(20.0 + HALF_LIFE) < one


def test_the_table_does_not_depend_on_the_reading_order() -> None:
    rng = random.Random(11)
    credits = [
        credit(
            f"run-{i:03d}",
            rng.choice([None, 0.0, 0.25, 0.5, 0.75, 1.0]),
            tuple(rng.sample(["a", "b", "c", "d", "e"], rng.randint(0, 3))),
            rng.choice(["debugging", "refactoring"]),
            at=float(rng.randint(0, 50)),  # ties too: broken by run id
        )
        for i in range(120)
    ]
    injections = [Injection(e.run_id, e.episode_ids, "task", e.category, e.at) for e in credits]

    def snapshot(
        book_credits: list[CreditEvent], book_injections: list[Injection]
    ) -> dict[str, tuple[int, int, float, float, float]]:
        book = book_from(book_credits, book_injections)
        return {
            episode_id: (
                row.credited_runs,
                row.injections,
                round(row.reward_sum, 9),
                round(row.advantage_sum, 9),
                round(row.estimate(100.0), 12),
            )
            for episode_id, row in book.rows.items()
        }

    expected = snapshot(credits, injections)
    assert len(expected) == 5
    for _ in range(5):
        rng.shuffle(credits)
        rng.shuffle(injections)
        assert snapshot(credits, injections) == expected
    closed = sum(1 for e in credits if e.reward is None)
    assert closed > 0
    # Runs closed without credit count as injections, never as credited runs.
    shown = sum(len(e.episode_ids) for e in credits)
    credited = sum(len(e.episode_ids) for e in credits if e.reward is not None)
    assert sum(row[1] for row in expected.values()) == shown
    assert sum(row[0] for row in expected.values()) == credited < shown


def test_a_run_closed_without_credit_changes_no_estimate() -> None:
    base = [credit("run-1", 0.9, ("a",), at=1.0)]
    with_closed = [*base, credit("run-2", None, ("a", "b"), at=2.0)]
    assert utility_table(with_closed)["a"].estimate(3.0) == utility_table(base)["a"].estimate(3.0)
    assert "b" not in utility_table(with_closed)
    book = book_from(with_closed)
    assert book.estimate("b", 3.0) == 0.5
    assert book.estimate("never-seen", 3.0) == 0.5


def test_failing_streak_counts_the_latest_runs_below_their_baseline() -> None:
    runs = [credit("run-0", 1.0, ("a",), at=0.0)]
    runs += [credit(f"run-{i}", 0.0, ("a",), at=float(i)) for i in range(1, 4)]
    assert utility_table(runs)["a"].failing_streak == 3
    runs.append(credit("run-9", 1.0, ("a",), at=9.0))
    assert utility_table(runs)["a"].failing_streak == 0


def test_utility_factor_is_one_at_the_prior_and_grows_with_the_power() -> None:
    assert utility_factor(0.5) == 1.0
    assert utility_factor(1.0) == 2.0**UTILITY_POWER
    assert utility_factor(0.0) == 0.0
    assert utility_factor(0.75, power=1.0) == pytest.approx(1.5)
    assert utility_factor(0.3, power=0.0) == 1.0
    assert utility_factor(1.7) == utility_factor(1.0)  # clipped to [0, 1]
    values = [utility_factor(e / 10) for e in range(11)]
    assert values == sorted(values)
    assert len(set(values)) == 11


@pytest.mark.parametrize("harmful_first", [True, False])
def test_credit_demotes_as_fast_as_it_promotes_whichever_came_first(harmful_first: bool) -> None:
    # An episode shown in every run of a category from the start has no run to be
    # compared with but the neutral prior: it still moves, down as fast as up.
    bad_from, good_from = (0.0, 20.0) if harmful_first else (20.0, 0.0)
    bad = [credit(f"bad-{i}", 0.0, ("bad",), at=bad_from + i) for i in range(20)]
    good = [credit(f"good-{i}", 1.0, ("good",), at=good_from + i) for i in range(20)]
    table = utility_table(bad + good)
    assert table["bad"].estimate(40.0) < 0.1
    assert table["good"].estimate(40.0) > 0.9
    assert table["bad"].estimate(40.0) == pytest.approx(
        1.0 - table["good"].estimate(40.0), abs=1e-3
    )
