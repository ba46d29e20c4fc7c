"""An episode dated far in the future is not forever new, and retention sees it.

The red team's case: an episode dated 2198 beside the same episode recorded honestly.
A year on, the honest one ranked 0.871 and the one from 2198 0.917 (age counted as 0
for ever), and retention by age never pruned it. The rule (``FUTURE_SKEW``): up to a
day ahead of the memory's clock is clock skew (age 0); further ahead an episode counts
as old as it is far ahead.
"""

from __future__ import annotations

from langchain_episodic import EpisodicMemory
from langchain_episodic.scoring.decay import FUTURE_SKEW
from langchain_episodic.scoring.retention import Retention
from tests.unit_tests.factories import make_episode

DAY = 86_400.0
YEAR = 365 * DAY
RECORDED = 1_700_000_000.0
YEAR_2198 = 7_128_000_000.0
TASK = "Parse the yaml config and check the required keys"


def memory_at(now: list[float]) -> EpisodicMemory:
    return EpisodicMemory(clock=lambda: now[0])


def test_an_episode_dated_2198_does_not_outrank_the_same_episode_recorded_honestly() -> None:
    now = [RECORDED]
    memory = memory_at(now)
    memory.record_many(
        [
            make_episode(episode_id="honest", description=TASK, timestamp=RECORDED),
            make_episode(episode_id="from-2198", description=TASK, timestamp=YEAR_2198),
        ]
    )
    for later in (RECORDED, RECORDED + YEAR):
        now[0] = later
        ranked = {hit.episode.episode_id: hit.priority for hit in memory.recall(TASK, top_k=2)}
        assert ranked["honest"] >= ranked["from-2198"], later
        assert [hit.episode.episode_id for hit in memory.recall(TASK, top_k=1)] == ["honest"]


def test_a_date_within_the_skew_counts_as_new() -> None:
    now = [RECORDED]
    memory = memory_at(now)
    memory.record_many(
        [
            make_episode(episode_id="skewed", description=TASK, timestamp=RECORDED + 3_600.0),
            make_episode(episode_id="last-week", description=TASK, timestamp=RECORDED - 7 * DAY),
        ]
    )
    assert [hit.episode.episode_id for hit in memory.recall(TASK, top_k=2)] == [
        "skewed",
        "last-week",
    ]


def test_retention_by_age_prunes_an_episode_dated_past_the_skew() -> None:
    now = [RECORDED]
    memory = memory_at(now)
    memory.record_many(
        [
            make_episode(episode_id="recent", description=TASK, timestamp=RECORDED - DAY),
            make_episode(episode_id="skewed", description=TASK, timestamp=RECORDED + 3_600.0),
            make_episode(episode_id="from-2198", description=TASK, timestamp=YEAR_2198),
            make_episode(
                episode_id="ahead-by-more-than-max-age",
                description=TASK,
                timestamp=RECORDED + FUTURE_SKEW + 40 * DAY,
            ),
        ]
    )
    plan, receipt = memory.forgetting.prune(Retention(max_age=30 * DAY), dry_run=True)
    assert sorted(plan.expired) == ["ahead-by-more-than-max-age", "from-2198"]
    assert receipt is not None
    assert receipt.dry_run
    assert len(memory) == 4  # a dry run removes nothing
    memory.forgetting.prune(Retention(max_age=30 * DAY))
    assert sorted(memory.get_episodes(["recent", "skewed", "from-2198"])) == ["recent", "skewed"]


def test_over_the_cap_a_far_future_date_goes_before_a_recent_one() -> None:
    now = [RECORDED]
    memory = memory_at(now)
    memory.record_many(
        [
            make_episode(episode_id="recent", description=TASK, timestamp=RECORDED - DAY),
            make_episode(episode_id="older", description=TASK, timestamp=RECORDED - 5 * DAY),
            make_episode(episode_id="from-2198", description=TASK, timestamp=YEAR_2198),
        ]
    )
    plan, _ = memory.forgetting.prune(Retention(max_episodes=1), dry_run=True)
    assert sorted(plan.episode_ids) == ["from-2198", "older"]
