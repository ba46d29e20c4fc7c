"""``plan_prune``: what a retention policy removes, least valuable first."""

from __future__ import annotations

from langchain_episodic.scoring.credit import EpisodeUtility
from langchain_episodic.scoring.retention import Retention, plan_prune
from tests.helpers.forgetting import NOW


def test_plan_prune_removes_the_least_valuable_first() -> None:
    helpful = EpisodeUtility("helpful", helped=3.0, hurt=0.0, credited_runs=3, updated_at=NOW)
    harmful = EpisodeUtility("harmful", helped=0.0, hurt=3.0, credited_runs=3, updated_at=NOW)
    episodes = [("helpful", 1.0), ("old", 2.0), ("harmful", 3.0), ("new", 4.0), ("pinned", 0.0)]
    rows = {"helpful": helpful, "harmful": harmful}
    plan = plan_prune(episodes, rows, {"pinned"}, Retention(max_episodes=2), NOW)
    assert plan.over_cap == ("harmful", "old", "new")
    assert plan.kept == 2
    plan = plan_prune(episodes, rows, {"pinned"}, Retention(max_age=NOW - 2.5), NOW)
    assert plan.expired == ("helpful", "old")
    assert plan.protected == ("pinned",)
