"""The ``langchain-episodic`` command, end to end on real on-disk Chroma stores.

Most tests call ``main([...])`` in-process and read stdout/stderr with ``capsys``; a
few run the real ``python -m langchain_episodic`` and the installed console script.
"""

from __future__ import annotations

import io
import json
import math
import os
import re
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from langchain_core.embeddings import DeterministicFakeEmbedding

from langchain_episodic import (
    ChromaEpisodeStore,
    Episode,
    EpisodicMemory,
    RecallOptions,
    ReplayWeights,
)
from langchain_episodic.cli import main, parse_duration
from langchain_episodic.scoring.priority import SearchResult, compute_priority, temporal_decay
from langchain_episodic.scoring.ranking import RecallReport
from langchain_episodic.scoring.relevance import episode_value, relevance_priority
from langchain_episodic.scoring.skills import (
    compute_learning_curve,
    compute_skill_profiles,
    is_weak,
)
from tests.helpers.cli import assert_one_line_error, filled, open_memory, run
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

DAY = 86_400.0
QUERY = "Fix the login session bug"
REPO = Path(__file__).resolve().parents[3]
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
TABLE_START = ["#", "episode", "status", "similarity", "recency", "reward", "outcome"]
"""The first columns of both recall tables: rank, episode, status and the four signals."""


def table_rows(out: str, first_header: str) -> list[list[str]]:
    """Rows of the table whose header starts with ``first_header``; cells split on 2+ spaces."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.lstrip().startswith(first_header))
    rows = []
    for line in lines[start + 2 :]:
        if not line.strip() or line.startswith("("):
            break
        rows.append(re.split(r"\s{2,}", line.strip()))
    return rows


@pytest.fixture(scope="module")
def store_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The 12-episode corpus on disk, shared by the tests that only read it."""
    return filled(tmp_path_factory.mktemp("shared") / "memory", corpus(12))


@pytest.fixture
def fresh_store(tmp_path: Path) -> Path:
    """The 12-episode corpus on disk, for a test that writes to it."""
    return filled(tmp_path / "memory", corpus(12))


# ------------------------------------------------------------------ stats


def test_stats(capsys: pytest.CaptureFixture[str], fresh_store: Path) -> None:
    filled(fresh_store, corpus(2), namespace="team-a")
    code, out, err = run(capsys, "--path", str(fresh_store), "stats")
    assert (code, err) == (0, "")
    fields = dict(re.split(r"\s{2,}", line, maxsplit=1) for line in out.splitlines())
    assert fields["episodes"] == "12"
    assert fields["namespace"] == "default"
    assert fields["namespaces"] == "default, team-a"
    assert fields["time span"] == (
        "1970-01-01 00:00:00 UTC .. 1970-01-01 11:00:00 UTC (11h)"
    )  # corpus: one episode an hour from t=0
    assert fields["outcomes"] == "success 4 (33.3%), partial 4 (33.3%), failure 4 (33.3%)"
    expected_reward = sum(e.feedback.reward for e in corpus(12)) / 12
    assert fields["avg reward"] == f"{expected_reward:.3f}"
    assert fields["short-term"] == "ep-7, ep-8, ep-9, ep-10, ep-11 (last 5, oldest first)"


def test_store_options_may_follow_the_command_and_come_from_the_environment(
    capsys: pytest.CaptureFixture[str], store_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, before, _ = run(capsys, "--path", str(store_path), "stats")
    _, after, _ = run(capsys, "stats", "--path", str(store_path))
    monkeypatch.setenv("LANGCHAIN_EPISODIC_PATH", str(store_path))
    _, from_env, _ = run(capsys, "stats")
    assert before == after == from_env
    assert "episodes    12" in before


def test_default_path_is_episodic_memory_in_the_working_directory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("LANGCHAIN_EPISODIC_PATH", raising=False)
    monkeypatch.chdir(tmp_path)
    source = tmp_path / "in.jsonl"
    source.write_text(json.dumps(make_episode().to_dict()) + "\n", encoding="utf-8")
    code, out, _ = run(capsys, "import", str(source))
    assert code == 0
    assert "imported 1," in out
    assert len(open_memory(tmp_path / "episodic-memory")) == 1


# ------------------------------------------------------------------ recall


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


# ------------------------------------------------------------------ skills


def test_skills_table_and_weak_flags(capsys: pytest.CaptureFixture[str], store_path: Path) -> None:
    code, out, err = run(capsys, "--path", str(store_path), "skills", "--threshold", "0.4")
    assert (code, err) == (0, "")
    rows = {row[0]: row for row in table_rows(out, "category")}
    profiles = compute_skill_profiles(corpus(12))
    assert set(rows) == {p.category.value for p in profiles}
    for profile in profiles:
        row = rows[profile.category.value]
        assert row[1:6] == [
            str(profile.total_episodes),
            str(profile.successes),
            f"{100 * profile.success_rate:.1f}%",
            f"{profile.avg_reward:.3f}",
            f"{profile.avg_iterations:.2f}",
        ]
        # The one definition of weak (scoring.skills.is_weak), as the strategy rule uses.
        assert (row[-1] == "WEAK") == is_weak(profile, 0.4)
    weak = sorted(p.category.value for p in profiles if is_weak(p, 0.4))
    assert weak  # the corpus has weak categories, so the flag is exercised
    rule = "success rate below 40% over at least 3 episode(s)"
    assert f"{len(weak)} weak skill(s), {rule}: {', '.join(weak)}" in out

    _, out, _ = run(capsys, "--path", str(store_path), "skills", "--threshold", "0")
    assert "WEAK" not in out
    assert "no weak skills" in out


def test_skills_threshold_out_of_range(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    code, _, err = run(capsys, "--path", str(store_path), "skills", "--threshold", "1.5")
    assert code == 2
    assert_one_line_error(err, "threshold=1.5 is invalid")


# ------------------------------------------------------------------ curve


def test_curve_table_equals_compute_learning_curve(
    capsys: pytest.CaptureFixture[str], store_path: Path
) -> None:
    code, out, err = run(capsys, "--path", str(store_path), "curve", "--window", "3")
    assert (code, err) == (0, "")
    rows = table_rows(out, "episode")
    curve = compute_learning_curve(corpus(12), window=3)
    assert rows == [
        [
            str(p.episode_number),
            f"{100 * p.rolling_success_rate:.1f}%",
            f"{p.rolling_avg_reward:.3f}",
            f"{p.cumulative_reward:.3f}",
        ]
        for p in curve
    ]
    assert f"cumulative reward     {curve[-1].cumulative_reward:.3f} over 12 episodes" in out
    assert "showing" not in out


def test_curve_summarises_long_histories(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = filled(tmp_path / "long", corpus(60))
    code, out, _ = run(capsys, "--path", str(path), "curve", "--rows", "7")
    assert code == 0
    numbers = [int(row[0]) for row in table_rows(out, "episode")]
    assert numbers[0] == 1
    assert numbers[-1] == 60
    assert len(numbers) == 7
    assert numbers == sorted(numbers)
    assert "(showing 7 of 60 episodes, evenly spaced; --rows 0: all)" in out
    _, out, _ = run(capsys, "--path", str(path), "curve", "--rows", "0")
    assert len(table_rows(out, "episode")) == 60


def test_curve_plot_writes_a_png(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    plot = tmp_path / "curve.png"
    code, out, err = run(capsys, "--path", str(store_path), "curve", "--plot", str(plot))
    assert (code, err) == (0, "")
    assert f"plot saved to {plot}" in out
    data = plot.read_bytes()
    assert data.startswith(PNG_MAGIC)
    assert len(data) > 10_000  # two axes with lines and labels, not an empty canvas


def test_curve_plot_without_matplotlib_says_how_to_install_it(
    capsys: pytest.CaptureFixture[str],
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # makes `import matplotlib` fail
    plot = tmp_path / "curve.png"
    code, out, err = run(capsys, "--path", str(store_path), "curve", "--plot", str(plot))
    assert code == 2
    assert out == ""
    assert_one_line_error(err, 'pip install "langchain-episodic[plot]"')
    assert not plot.exists()


def test_curve_plot_to_an_unwritable_place(
    capsys: pytest.CaptureFixture[str], store_path: Path, tmp_path: Path
) -> None:
    plot = tmp_path / "missing-dir" / "curve.png"
    code, out, err = run(capsys, "--path", str(store_path), "curve", "--plot", str(plot))
    assert code == 2
    assert out == ""  # the plot is saved before anything is printed
    assert_one_line_error(err, "cannot save the plot")


# ------------------------------------------------------------------ export / import


def tricky_episodes() -> list[Episode]:
    tricky = make_episode(
        episode_id="tricky id/ü",
        description='Ünïcode task with "quotes" and\nnewlines',
        solution="def f():\n    return '</solution>'\n" * 3,
        reward=0.1 + 0.2,
        timestamp=1_700_000_000.123456789,
    )
    return [*corpus(12), tricky]


def test_export_import_round_trip_is_exact(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    episodes = tricky_episodes()
    source = filled(tmp_path / "source", episodes)
    exported = tmp_path / "episodes.jsonl"
    code, out, err = run(capsys, "--path", str(source), "export", str(exported))
    assert (code, err) == (0, "")
    assert f"exported {len(episodes)} episodes from namespace 'default' to {exported}" in out
    lines = exported.read_text(encoding="utf-8").splitlines()
    assert [Episode.from_dict(json.loads(line)) for line in lines] == episodes
    assert not list(tmp_path.glob(".*partial"))  # the temporary file is gone

    code, stdout, err = run(capsys, "--path", str(source), "export", "-")
    assert code == 0
    assert stdout == exported.read_text(encoding="utf-8")
    assert err.strip() == f"exported {len(episodes)} episodes from namespace 'default' to stdout"

    target = tmp_path / "target"
    code, out, err = run(capsys, "--path", str(target), "import", str(exported))
    assert (code, err) == (0, "")
    assert out.startswith(f"imported {len(episodes)}, already present 0, rejected 0 ")
    copy = open_memory(target)
    assert list(copy.episodes()) == list(open_memory(source).episodes()) == episodes
    assert copy.short_term == open_memory(source).short_term
    assert copy.skill_profiles() == compute_skill_profiles(episodes)


def test_reimport_reports_already_present(
    capsys: pytest.CaptureFixture[str], fresh_store: Path, tmp_path: Path
) -> None:
    exported = tmp_path / "episodes.jsonl"
    run(capsys, "--path", str(fresh_store), "export", str(exported), "--quiet")
    code, out, err = run(capsys, "--path", str(fresh_store), "import", str(exported))
    assert (code, err) == (0, "")
    assert out.startswith("imported 0, already present 12, rejected 0 (of 12 lines")
    assert len(open_memory(fresh_store)) == 12


GOOD = [
    make_episode(episode_id=f"good-{i}", description=f"Good task {i}", timestamp=float(i))
    for i in range(6)
]
STORED = make_episode(episode_id="stored-1", description="Already stored", reward=0.5)


def bad_file(path: Path) -> tuple[Path, dict[int, str]]:
    """A JSONL file of good and bad lines; returns it and the expected error per line."""
    no_outcome = GOOD[2].to_dict()
    del no_outcome["outcome"]
    too_rewarding = make_episode(episode_id="bad-reward").to_dict()
    too_rewarding["feedback"]["reward"] = 1.5
    clashing = {**GOOD[0].to_dict(), "solution": "something else"}
    against_store = {**STORED.to_dict(), "feedback": {**STORED.feedback.to_dict(), "reward": 0.9}}
    lines = [
        json.dumps(GOOD[0].to_dict()),  # 1
        '{"episode_id": "broken",',  # 2  bad JSON
        json.dumps(too_rewarding),  # 3  reward 1.5
        json.dumps(GOOD[1].to_dict()),  # 4
        json.dumps(no_outcome),  # 5  missing field
        "",  # 6  blank: ignored
        json.dumps(clashing),  # 7  same id as line 1, different content
        json.dumps(against_store),  # 8  conflicts with the stored episode
        json.dumps(GOOD[3].to_dict()),  # 9
        json.dumps(GOOD[0].to_dict()),  # 10 identical repeat of line 1: already present
        json.dumps(STORED.to_dict()),  # 11 identical to the stored one: already present
        "[1, 2, 3]",  # 12 not an object
        json.dumps(GOOD[4].to_dict()),  # 13
        json.dumps(GOOD[5].to_dict()),  # 14
    ]
    path.write_bytes(("\n".join(lines) + "\n").encode() + b'{"episode_id": "\xff"}\n')  # 15
    expected = {
        2: "invalid JSON: Expecting property name enclosed in double quotes (column 25)",
        3: "Feedback.reward=1.5 is invalid: must be between 0 and 1",
        5: "Episode data is missing field(s) ['outcome']",
        7: "episode_id='good-0' conflicts with line 1: same id, different solution",
        8: (
            "episode_id='stored-1' conflicts with the episode already stored in "
            "namespace 'default': same id, different feedback.reward"
        ),
        12: "Episode data=[1, 2, 3] is invalid: must be a mapping",
        15: "not valid UTF-8: invalid start byte at byte 16",
    }
    return path, expected


@pytest.mark.parametrize("batch_size", ["1", "3", "1000"])
def test_import_reports_bad_lines_and_keeps_every_good_one(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, batch_size: str
) -> None:
    target = filled(tmp_path / "target", [STORED])
    source, expected = bad_file(tmp_path / "mixed.jsonl")
    code, out, err = run(
        capsys, "--path", str(target), "import", str(source), "--batch-size", batch_size
    )
    assert code == 1
    reported = err.strip().splitlines()
    assert [int(line.split(":")[1]) for line in reported] == sorted(expected)
    for line, (number, message) in zip(reported, sorted(expected.items()), strict=True):
        assert line.startswith(f"{source}:{number}: {message}")
    assert "Traceback" not in err
    assert out.strip() == (
        f"imported 5, already present 2, rejected 7 (of 14 lines in {source}, namespace 'default')"
    )
    memory = open_memory(target)
    assert len(memory) == 6
    good_lines = [GOOD[0], GOOD[1], GOOD[3], GOOD[4], GOOD[5]]  # GOOD[2] only without outcome
    assert memory.store.get("default", [e.episode_id for e in GOOD]) == {
        e.episode_id: e for e in good_lines
    }
    assert memory.store.get("default", ["stored-1"]) == {"stored-1": STORED}


def test_import_from_stdin(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = "".join(json.dumps(e.to_dict()) + "\n" for e in GOOD[:3])
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data.encode())))
    code, out, _ = run(capsys, "--path", str(tmp_path / "m"), "import", "-")
    assert code == 0
    assert out.startswith("imported 3, already present 0, rejected 0 (of 3 lines in <stdin>")


def test_missing_file_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "never-created"
    missing = tmp_path / "missing.jsonl"
    code, out, err = run(capsys, "--path", str(target), "import", str(missing))
    assert code == 2
    assert out == ""
    assert_one_line_error(err, f"cannot read {str(missing)!r}", "No such file or directory")
    assert not target.exists()  # nothing is created for a failed import


@pytest.mark.parametrize("command", [["stats"], ["recall", "x"], ["skills"], ["curve"]])
def test_read_commands_never_create_a_memory(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    target = tmp_path / "nothing-here"
    code, _, err = run(capsys, "--path", str(target), *command)
    assert code == 2
    assert_one_line_error(err, f"no episodic memory at {str(target)!r}")
    assert not target.exists()


def test_export_from_a_missing_memory(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--path", str(tmp_path / "no"), "export", str(tmp_path / "x"))
    assert code == 2
    assert_one_line_error(err, "no episodic memory")
    assert not (tmp_path / "x").exists()


def test_progress_bar_only_on_a_terminal_and_never_with_quiet(
    capsys: pytest.CaptureFixture[str],
    store_path: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    exported = tmp_path / "e.jsonl"
    run(capsys, "--path", str(store_path), "export", str(exported))
    assert capsys.readouterr().err == ""  # capsys's stderr is not a terminal

    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    assert main(["--path", str(store_path), "export", str(exported)]) == 0
    assert "exporting: 100%" in terminal.getvalue()
    assert "12/12" in terminal.getvalue()
    assert main(["--path", str(tmp_path / "copy"), "import", str(exported)]) == 0
    assert "importing: 100%" in terminal.getvalue()
    capsys.readouterr()

    quiet = Terminal()
    monkeypatch.setattr(sys, "stderr", quiet)
    assert main(["--path", str(store_path), "export", str(exported), "--quiet"]) == 0
    assert main(["--path", str(tmp_path / "copy"), "import", str(exported), "-q"]) == 0
    assert quiet.getvalue() == ""
    assert capsys.readouterr().out == ""  # --quiet: no summary either


# ------------------------------------------------------------------ namespaces, options


def test_namespaces_are_isolated(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    path = str(tmp_path / "shared")
    team_a = tmp_path / "a.jsonl"
    team_a.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in GOOD[:2]), "utf-8")
    team_b = tmp_path / "b.jsonl"
    team_b.write_text("".join(json.dumps(e.to_dict()) + "\n" for e in corpus(3)), "utf-8")
    assert run(capsys, "--path", path, "--namespace", "team-a", "import", str(team_a))[0] == 0
    assert run(capsys, "--path", path, "import", str(team_b), "--namespace", "team-b")[0] == 0

    code, _, err = run(capsys, "--path", path, "stats")
    assert code == 2
    assert_one_line_error(err, "namespace 'default' not found", "'team-a', 'team-b'")

    _, out, _ = run(capsys, "--path", path, "--namespace", "team-a", "stats")
    assert "episodes    2\n" in out
    assert "namespaces  team-a, team-b\n" in out
    _, out, _ = run(
        capsys,
        *("--path", path, "--namespace", "team-b", "recall", "Good task", "-k", "5", "--json"),
        *("--ranking", "article"),  # every candidate of the namespace, relevant or not
    )
    assert {r["episode_id"] for r in json.loads(out)["results"]} == {"ep-0", "ep-1", "ep-2"}
    _, out, _ = run(capsys, "--path", path, "--namespace", "team-a", "export", "-")
    assert [json.loads(line)["episode_id"] for line in out.splitlines()] == ["good-0", "good-1"]


def test_a_collection_of_another_embedding_model_is_a_one_line_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = tmp_path / "other-model"
    EpisodicMemory(
        store=ChromaEpisodeStore(path=path), embeddings=DeterministicFakeEmbedding(size=16)
    ).record_many(corpus(3))
    code, out, err = run(capsys, "--path", str(path), "recall", QUERY)
    assert (code, out) == (2, "")
    assert_one_line_error(err, "dimension of 16", "use another --collection")


def test_conflicting_store_options(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, _, err = run(capsys, "--path", str(tmp_path), "--host", "localhost", "stats")
    assert code == 2
    assert_one_line_error(err, "--path", "--host/--port", "not both")


def test_unreachable_server_is_a_one_line_error(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code, _, err = run(capsys, "--host", "127.0.0.1", "--port", str(port), "stats")
    assert code == 2
    assert_one_line_error(err, f"cannot reach the Chroma server at 127.0.0.1:{port}")


def test_help_version_and_no_command(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == 0
    for name in ("stats", "recall", "skills", "curve", "export", "import", "exit codes"):
        assert name in out
    code, out, _ = run(capsys, "--version")
    assert (code, out.strip()) == (0, "langchain-episodic 0.1.0")
    code, out, err = run(capsys)
    assert code == 2
    assert out == ""
    assert "usage: langchain-episodic" in err
    code, _, err = run(capsys, "frobnicate")
    assert code == 2
    assert_one_line_error(err, "invalid choice: 'frobnicate'")


# ------------------------------------------------------------------ real processes


def test_real_processes_python_dash_m_and_console_script(
    store_path: Path, fresh_store: Path, tmp_path: Path
) -> None:
    script = Path(sys.executable).with_name("langchain-episodic")
    assert script.is_file(), f"console script missing: {script} (pip install -e .)"
    source = tmp_path / "in.jsonl"
    source.write_text(
        json.dumps(GOOD[0].to_dict()) + "\nnot json\n" + json.dumps(GOOD[1].to_dict()) + "\n",
        encoding="utf-8",
    )
    env = {**os.environ, "LANGCHAIN_EPISODIC_PATH": str(tmp_path / "unused")}
    commands = [
        [sys.executable, "-m", "langchain_episodic", "--path", str(store_path), "stats"],
        [str(script), "--path", str(fresh_store), "import", str(source)],
    ]
    # Started together: each spends seconds importing chromadb and langchain-core.
    processes = [
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env
        )
        for command in commands
    ]
    (module_out, module_err), (script_out, script_err) = (
        process.communicate(timeout=120) for process in processes
    )
    module_code, script_code = (process.returncode for process in processes)

    assert module_code == 0, module_err
    assert "episodes    12\n" in module_out
    assert "short-term  ep-7, ep-8, ep-9, ep-10, ep-11" in module_out

    assert script_code == 1  # one line rejected
    assert script_err == f"{source}:2: invalid JSON: Expecting value (column 1)\n"
    assert script_out.startswith("imported 2, already present 0, rejected 1 (of 3 lines")
    assert len(open_memory(fresh_store)) == 14
    assert not (tmp_path / "unused").exists()
