"""The presentation chooser: the default without evidence, Thompson sampling with it."""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.scoring.presentation import (
    DEFAULT_PRESENTATION,
    HEAD_START,
    PRESENTATIONS,
    PRIOR_RUNS,
    check_presentation,
    choose_presentation,
)


class _NoDraws:
    """A generator that fails the test when drawn from."""

    def normal(self, *args: object) -> None:
        raise AssertionError("nothing may be drawn without outcomes")


def test_without_outcomes_the_default_is_chosen_and_nothing_is_drawn() -> None:
    choice = choose_presentation({}, {}, (), rng=_NoDraws())  # type: ignore[arg-type]
    assert (choice.policy, choice.reason, choice.estimates) == ("compact", "prior", ())
    assert DEFAULT_PRESENTATION == PRESENTATIONS[0] == "compact"


def test_a_better_policy_is_learned_and_a_worse_one_is_not() -> None:
    runs = {"compact": [0.3] * 30 + [0.6] * 30, "feedback": [0.8] * 30 + [0.9] * 30}
    assert choose_presentation(runs).policy == "feedback"
    flipped = {"compact": runs["feedback"], "feedback": runs["compact"]}
    assert choose_presentation(flipped).policy == "compact"


def test_the_prior_favours_the_default_until_evidence_says_otherwise() -> None:
    # Two runs slightly better than the default's do not overturn it; fifty do.
    thin = {"compact": [0.5, 0.5, 0.4, 0.6] * 10, "ranked": [0.55, 0.56]}
    assert choose_presentation(thin).policy == "compact"
    thick = {"compact": [0.5, 0.5, 0.4, 0.6] * 10, "ranked": [0.65, 0.66] * 25}
    assert choose_presentation(thick).policy == "ranked"


def test_sampling_explores_while_unsure_and_exploits_once_sure() -> None:
    rng = np.random.default_rng(0)
    unsure = {"compact": [1.0, 0.0] * 3, "feedback": [0.0, 1.0] * 3}
    drawn = Counter(choose_presentation(unsure, rng=rng).policy for _ in range(300))
    assert drawn["compact"] > 50
    assert drawn["feedback"] > 50
    assert drawn["ranked"] > 10
    sure = {"compact": [0.2] * 150 + [0.3] * 50, "ranked": [0.7] * 150 + [0.8] * 50}
    drawn = Counter(choose_presentation(sure, rng=rng).policy for _ in range(300))
    assert drawn["ranked"] > 290


def test_sampling_is_reproducible_with_a_seed() -> None:
    runs = {"compact": [1.0, 0.0] * 3, "feedback": [0.0, 1.0] * 3}

    def draws(seed: int) -> list[str]:
        rng = np.random.default_rng(seed)
        return [choose_presentation(runs, rng=rng).policy for _ in range(40)]

    assert draws(3) == draws(3)
    assert draws(3) != draws(4)


def test_a_category_follows_the_namespace_until_its_own_runs_say_otherwise() -> None:
    namespace = {"compact": [0.8] * 100, "ranked": [0.4] * 100}
    few = {"compact": [0.2, 0.3], "ranked": [0.9, 0.8]}
    assert choose_presentation(namespace, few).policy == "compact"
    many = {"compact": [0.2, 0.3] * 30, "ranked": [0.9, 0.8] * 30}
    choice = choose_presentation(namespace, many)
    assert choice.policy == "ranked"
    assert [e.runs for e in choice.estimates] == [60, 0, 60]  # the category's own runs


def test_a_policy_credibly_below_no_memory_is_dropped() -> None:
    runs = {"compact": [0.6, 0.4] * 20, "ranked": [0.9, 0.1, 0.0, 0.0] * 10}
    holdout = [0.6, 0.4] * 10
    choice = choose_presentation(runs, holdout=holdout, rng=np.random.default_rng(1))
    dropped = {e.policy for e in choice.estimates if e.dropped}
    assert dropped == {"ranked"}
    rng = np.random.default_rng(2)
    assert all(
        choose_presentation(runs, holdout=holdout, rng=rng).policy != "ranked" for _ in range(50)
    )
    # With too few holdout runs to say so, nothing is dropped.
    assert not any(e.dropped for e in choose_presentation(runs, holdout=holdout[:8]).estimates)


def test_estimates_are_shrunk_towards_the_prior_and_narrow_with_runs() -> None:
    choice = choose_presentation({"compact": [0.5] * 10, "feedback": [1.0] * 2})
    compact, feedback, ranked = choice.estimates
    pooled = 7.0 / 12.0
    assert compact.estimate == pytest.approx((pooled * PRIOR_RUNS + 5.0) / (PRIOR_RUNS + 10))
    assert feedback.mean_reward == 1.0
    assert ranked.estimate < feedback.estimate < 1.0  # two runs move it from the prior
    assert ranked.runs == 0
    assert ranked.mean_reward is None
    assert ranked.estimate == pytest.approx(pooled - HEAD_START)  # untried: the prior
    assert compact.spread < feedback.spread < ranked.spread
    # Runs that all agree leave an untried policy's mean as unknown as ever.
    agreeing = choose_presentation({"compact": [0.3] * 20}).estimates
    assert agreeing[2].spread > 5 * agreeing[0].spread
    # The best estimate is chosen among the policies some run used.
    assert choose_presentation({"feedback": [0.0] * 5}).policy == "compact"


def test_the_runs_before_outcomes_count_but_are_no_evidence() -> None:
    # Ten credited runs shown memory (``recent``), none of them with a policy drawn.
    assert choose_presentation({}, recent=[0.4] * 9).reason == "prior"
    choice = choose_presentation({}, recent=[0.4] * 10, rng=np.random.default_rng(0))
    assert choice.reason == "sampled"
    assert [e.runs for e in choice.estimates] == [0, 0, 0]


@pytest.mark.parametrize("bad", ["detailed", "", None, 3])
def test_an_unknown_policy_name_is_refused_by_name(bad: object) -> None:
    with pytest.raises(EpisodicValueError, match="presentation="):
        check_presentation(bad)
    assert check_presentation("ranked") == "ranked"


def test_a_category_is_never_surer_than_the_namespace_evidence_behind_it() -> None:
    runs = {"compact": [0.5, 0.4, 0.6] * 4}
    namespace = choose_presentation(runs).estimates
    category = choose_presentation(runs, {}).estimates
    assert [e.spread for e in category] == pytest.approx([e.spread for e in namespace])
    assert [e.estimate for e in category] == pytest.approx([e.estimate for e in namespace])
