"""Ranking's report: why each result was recalled, in one sentence."""

from __future__ import annotations

from langchain_episodic.scoring.priority import PrioritizedResult
from langchain_episodic.scoring.ranking import RecallReport, why_recalled
from tests.unit_tests.factories import make_episode


def test_a_relevance_result_states_the_threshold_it_reached() -> None:
    result = PrioritizedResult(make_episode(), 0.62, 0.58)
    report = RecallReport((result,), (), 0.47, "relevance")
    assert why_recalled(result, report) == (
        "similarity 0.62 >= threshold 0.47; priority 0.58 (similarity scaled by value)"
    )


def test_an_article_result_below_the_threshold_says_so() -> None:
    result = PrioritizedResult(make_episode(), 0.30, 0.41, relevant=False)
    report = RecallReport((result,), (), 0.47, "article")
    assert why_recalled(result, report).startswith(
        "not relevant (similarity 0.30 < threshold 0.47), kept by the article's ranking"
    )
    kept = PrioritizedResult(make_episode(), 0.62, 0.41)
    assert why_recalled(kept, report) == "similarity 0.62 >= threshold 0.47; article priority 0.41"
