"""``langchain-episodic recall``: the table and JSON agree with the library's ranking."""

from __future__ import annotations

import json
import math
import re
from pathlib import Path
from typing import Any

import pytest

from langchain_episodic import (
    Episode,
    RecallOptions,
    ReplayWeights,
)
from langchain_episodic.cli import parse_duration
from langchain_episodic.scoring.priority import SearchResult, compute_priority, temporal_decay
from langchain_episodic.scoring.ranking import RecallReport
from langchain_episodic.scoring.relevance import episode_value, relevance_priority
from tests.helpers.cli import (
    QUERY,
    assert_one_line_error,
    open_memory,
    run,
    table_rows,
)

DAY = 86_400.0
TABLE_START = ["#", "episode", "status", "similarity", "recency", "reward", "outcome"]
"""The first columns of both recall tables: rank, episode, status and the four signals."""


def test_recall_json_equals_memory_recall_and_compute_priority(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    now, half_life = 2 * DAY, 12 * 3600.0
    code, out, err = run(
        capsys,
        *("--path", str(store_path), "recall", QUERY, "-k", "4", "--fetch-k", "10"),
        *("--phase", "late", "--half-life", "12h", "--now", str(now), "--json"),
        *("--ranking", "article"),
    )
    assert (code, err) == (0, "")
    payload = json.loads(out)
    weights = ReplayWeights.for_phase("late")
    expected = open_memory(store_path).recall(
        QUERY,
        top_k=4,
        current_time=now,
        weights=weights,
        half_life=half_life,
        fetch_k=10,
        ranking="article",
    )
    got = payload["results"]
    assert [r["episode_id"] for r in got] == [r.episode.episode_id for r in expected]
    assert len(got) == 4
    assert (payload["ranking"], payload["half_life"]) == ("article", half_life)
    assert [r["relevant"] for r in got] == [r.relevant for r in expected]
    assert (payload["nearest_rejected"], payload["rejected"]) == (None, [])
    assert payload["weights"] == {
        "similarity": 0.3,
        "recency": 0.4,
        "reward": 0.2,
        "outcome_bonus": 0.1,
    }
    outcome_scores = {"success": 1.0, "partial": 0.5, "failure": 0.0}
    for rank, (row, result) in enumerate(zip(got, expected, strict=True), start=1):
        episode = result.episode
        assert row["rank"] == rank
        assert Episode.from_dict(row["episode"]) == episode
        assert row["similarity"] == result.similarity
        assert row["priority"] == result.priority
        assert (
            row["priority"]
            == compute_priority(
                SearchResult(episode, row["similarity"]), now, weights, half_life
            ).priority
        )
        assert row["recency"] == temporal_decay(1.0, episode.timestamp, now, half_life)
        assert row["reward"] == episode.feedback.reward
        assert row["outcome_score"] == outcome_scores[episode.outcome.value]
        parts = row["contributions"]
        assert parts["similarity"] == 0.3 * max(0.0, row["similarity"])
        assert parts["recency"] == 0.4 * row["recency"]
        assert parts["reward"] == 0.2 * row["reward"]
        assert parts["outcome"] == 0.1 * row["outcome_score"]
        assert math.isclose(sum(parts.values()), row["priority"], abs_tol=1e-12)
    priorities = [r["priority"] for r in got]
    assert priorities == sorted(priorities, reverse=True)


def test_recall_table_shows_every_signal_and_the_priority(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    now = DAY
    code, out, err = run(
        capsys,
        "--path",
        str(store_path),
        "recall",
        QUERY,
        "--now",
        str(now),
        "--ranking",
        "article",
    )
    assert (code, err) == (0, "")
    assert "priority   0.4*max(0, similarity) + 0.3*recency + 0.2*reward + 0.1*outcome" in out
    assert "half-life 1d (86400 s)" in out  # the article's own half-life by default
    assert "article: top 3 of 6 candidates" in out
    header = next(line for line in out.splitlines() if line.startswith("#"))
    parts = ["w*sim", "w*rec", "w*rew", "w*out", "priority"]
    assert re.split(r"\s{2,}", header) == [*TABLE_START, *parts, "task"]
    rows = table_rows(out, "#")
    expected = open_memory(store_path).recall(QUERY, top_k=3, current_time=now, ranking="article")
    assert [row[1] for row in rows] == [r.episode.episode_id for r in expected]
    for row, result in zip(rows, expected, strict=True):
        episode = result.episode
        recency = temporal_decay(1.0, episode.timestamp, now)
        outcome = {"success": 1.0, "partial": 0.5, "failure": 0.0}[episode.outcome.value]
        assert row[2] == episode.outcome.value
        assert row[3:7] == [
            f"{result.similarity:.4f}",
            f"{recency:.4f}",
            f"{episode.feedback.reward:.4f}",
            f"{outcome:.4f}",
        ]
        assert row[7:11] == [
            f"{0.4 * max(0.0, result.similarity):.4f}",
            f"{0.3 * recency:.4f}",
            f"{0.2 * episode.feedback.reward:.4f}",
            f"{0.1 * outcome:.4f}",
        ]
        priority = compute_priority(SearchResult(episode, result.similarity), now).priority
        assert row[11] == f"{priority:.4f}"
        assert row[12] == episode.task.description


def test_recall_filters_by_category_and_outcome(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    base = ("--path", str(store_path), "recall", "login", "-k", "12", "--now", "0", "--json")
    article = (*base, "--ranking", "article")  # every candidate: the filters alone decide
    _, out, _ = run(capsys, *article, "--category", "debugging", "--category", "testing")
    categories = {r["episode"]["task"]["category"] for r in json.loads(out)["results"]}
    assert categories == {"debugging", "testing"}
    _, out, _ = run(capsys, *article, "--outcome", "success")
    results = json.loads(out)["results"]
    assert len(results) == 4
    assert {r["episode"]["outcome"] for r in results} == {"success"}


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (["-k", "0"], "argument -k/--top-k: '0' is invalid: must be an integer >= 1"),
        (["-k", "3", "--fetch-k", "2"], "fetch_k=2 is invalid"),
        (["--phase", "middle"], "invalid choice: 'middle'"),
        (["--ranking", "best"], "invalid choice: 'best'"),
        (["--half-life", "soon"], "'soon' is not a duration"),
        (["--now", "yesterday"], "'yesterday' is not a time"),
        (["--min-similarity", "2"], "min_similarity=2.0 is invalid"),
        (["--category", "cooking"], "invalid choice: 'cooking'"),
    ],
)
def test_recall_argument_mistakes_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], store_path: Path, argv: list[str], fragment: str
) -> None:
    code, out, err = run(capsys, "--path", str(store_path), "recall", QUERY, *argv)
    assert code == 2
    assert out == ""
    assert_one_line_error(err, fragment)


def test_recall_accepts_iso_times(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    base = ("--path", str(store_path), "recall", QUERY, "--json", "--now")
    _, iso, _ = run(capsys, *base, "1970-01-02T00:00:00Z")
    _, seconds, _ = run(capsys, *base, "86400")
    assert json.loads(iso) == json.loads(seconds)
    assert parse_duration("2d") == 2 * DAY


def relevance_report(store_path: Path, query: str, now: float, **options: Any) -> RecallReport:
    """What the command's default ranking recalls, straight from the memory."""
    return open_memory(store_path).recall(
        query, options=RecallOptions(current_time=now, **options), explain=True
    )


def test_recall_relevance_json_says_why_each_made_it_and_the_nearest_did_not(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    now = DAY
    code, out, err = run(
        capsys, "--path", str(store_path), "recall", QUERY, "-k", "4", "--now", str(now), "--json"
    )
    assert (code, err) == (0, "")
    payload = json.loads(out)
    report = relevance_report(store_path, QUERY, now, top_k=4)
    assert report.results  # some relevant,
    assert report.rejected  # some turned away
    assert payload["ranking"] == "relevance"
    assert payload["threshold"] == report.threshold
    assert payload["floor"] == open_memory(store_path).calibration.floor
    assert payload["margin"] is None  # no margin below the best unless asked
    assert payload["background"] == report.background
    assert payload["half_life"] == RecallOptions().recency_half_life  # the ranking's own: 30d
    assert payload["fetch_k"] == 8
    got = payload["results"]
    assert [r["episode_id"] for r in got] == [r.episode.episode_id for r in report.results]
    for rank, (row, result) in enumerate(zip(got, report.results, strict=True), start=1):
        episode = result.episode
        assert row["rank"] == rank
        assert Episode.from_dict(row["episode"]) == episode
        assert (row["similarity"], row["priority"]) == (result.similarity, result.priority)
        assert row["relevant"] is True
        assert row["similarity"] >= payload["threshold"]
        value = episode_value(
            episode.timestamp,
            episode.feedback.reward,
            episode.outcome,
            now,
            half_life=payload["half_life"],
        )
        assert row["value"] == value
        assert row["priority"] == pytest.approx(relevance_priority(row["similarity"], value))
        assert row["why"].startswith(
            f"similarity {result.similarity:.2f} >= threshold {report.threshold:.2f}"
        )
    nearest = report.nearest_rejected
    assert nearest is not None
    assert payload["nearest_rejected"] == {
        "episode_id": nearest.episode_id,
        "task": nearest.task,
        "similarity": nearest.similarity,
        "reason": nearest.reason,
    }
    assert [r["episode_id"] for r in payload["rejected"]] == [r.episode_id for r in report.rejected]
    assert nearest.episode_id not in {r["episode_id"] for r in got}


def test_recall_relevance_table_states_the_rule_why_and_the_nearest_rejected(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    now = DAY
    code, out, err = run(capsys, "--path", str(store_path), "recall", QUERY, "--now", str(now))
    assert (code, err) == (0, "")
    report = relevance_report(store_path, QUERY, now)
    assert report.threshold is not None
    assert report.nearest_rejected is not None
    memory = open_memory(store_path)
    floor, offset = memory.calibration.floor, memory.calibration.offset
    assert report.background is not None
    assert (
        f"relevant   similarity >= threshold = max(floor {floor:.4f}, background"
        f" {report.background:.4f}) = {report.threshold:.4f}"
    ) in out
    assert (
        "background the task's mean similarity to its 5 nearest everyday texts (the memory's "
        f"background), {offset:+g} for this embedder"
    ) in out
    assert "half-life 30d (2592000 s), never below 0.5" in out
    assert "value      (0.3*recency + 0.2*reward + 0.1*outcome) / 0.6  (phase normal)" in out
    assert "priority   similarity * (0.8 + 0.2*value)" in out
    header = next(line for line in out.splitlines() if line.startswith("#"))
    assert re.split(r"\s{2,}", header) == [*TABLE_START, "value", "utility", "priority", "task"]
    rows = table_rows(out, "#")
    assert [row[1] for row in rows] == [r.episode.episode_id for r in report.results]
    for row, result in zip(rows, report.results, strict=True):
        episode = result.episode
        value = episode_value(
            episode.timestamp,
            episode.feedback.reward,
            episode.outcome,
            now,
            half_life=RecallOptions().recency_half_life,
        )
        assert row[3] == f"{result.similarity:.4f}"
        assert row[7:10] == [f"{value:.4f}", "0.5000", f"{result.priority:.4f}"]  # never credited
    lines = out.splitlines()
    why = lines.index("why each made it:")
    for rank, result in enumerate(report.results, start=1):
        assert lines[why + rank] == (
            f"  #{rank} {result.episode.episode_id}: similarity {result.similarity:.2f} >= "
            f"threshold {report.threshold:.2f}; priority {result.priority:.2f} "
            "(similarity scaled by value)"
        )
    nearest = report.nearest_rejected
    assert (
        f"why the nearest rejected one did not ({len(report.rejected)} rejected):\n"
        f"  {nearest.episode_id}: {nearest.reason}  ({nearest.task})\n"
    ) in out


def test_recall_says_plainly_when_nothing_is_relevant(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    query = "Bake a chocolate cake for the birthday party"
    report = relevance_report(store_path, query, DAY)
    assert report.results == ()
    assert report.threshold is not None
    nearest = report.nearest_rejected
    assert nearest is not None
    code, out, err = run(capsys, "--path", str(store_path), "recall", query, "--now", str(DAY))
    assert (code, err) == (0, "")
    assert (
        f"nothing relevant: none of the {len(report.rejected)} candidates reached the "
        f"threshold {report.threshold:.4f}\n"
    ) in out
    assert f"  {nearest.episode_id}: {nearest.reason}  (" in out
    assert "empty" not in out
    assert "#  episode" not in out  # no table
    _, out, _ = run(capsys, "--path", str(store_path), "recall", query, "--now", str(DAY), "--json")
    payload = json.loads(out)
    assert (payload["results"], payload["threshold"]) == ([], report.threshold)
    assert payload["nearest_rejected"]["reason"] == nearest.reason


def test_recall_says_when_no_candidate_was_rejected(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    argv = ("--path", str(store_path), "recall", QUERY, "-k", "1", "--fetch-k", "1", "--now", "0")
    report = relevance_report(store_path, QUERY, 0.0, top_k=1, fetch_k=1)
    assert len(report.results) == 1
    assert report.rejected == ()
    _, out, _ = run(capsys, *argv)
    assert "nearest rejected: none, every candidate fetched was relevant" in out
    _, out, _ = run(capsys, *argv, "--json")
    payload = json.loads(out)
    assert (payload["nearest_rejected"], payload["rejected"]) == (None, [])
    assert [r["episode_id"] for r in payload["results"]] == [report.results[0].episode.episode_id]


def test_recall_article_table_flags_the_episodes_the_relevance_test_would_reject(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    query = "architecture for notifications"  # one episode about it; the rest are not
    argv = ("--path", str(store_path), "recall", query, "--now", str(DAY), "--ranking", "article")
    memory = open_memory(store_path)
    report = memory.recall(
        query, options=RecallOptions(current_time=DAY, ranking="article"), explain=True
    )
    below = [f"#{i}" for i, r in enumerate(report.results, start=1) if not r.relevant]
    assert below  # the article's ranking returns episodes the relevance test rejects
    _, out, _ = run(capsys, *argv)
    assert out.endswith(f"returned by the article's ranking anyway: {', '.join(below)}\n")
    _, out, _ = run(capsys, *argv, "--json")
    for row, result in zip(json.loads(out)["results"], report.results, strict=True):
        assert row["relevant"] is result.relevant
        assert ("not relevant" in row["why"]) is not result.relevant
