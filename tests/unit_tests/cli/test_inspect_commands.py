"""``stats``, ``skills``, ``curve`` and ``harmful``: what the commands print equals the
library's figures (and ``recall``'s utility column, on the same credited memory)."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.cli import main
from langchain_episodic.scoring.skills import (
    compute_learning_curve,
    compute_skill_profiles,
    is_weak,
)
from tests.helpers.cli import assert_one_line_error, filled, run, table_rows
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode

PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


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


NOW = 1_750_000_000.0


TASK = "Implement a login form with email validation"


def _reader(path: Path) -> EpisodicMemory:
    """A memory that, like the CLI, never closes stale runs when it opens."""
    return EpisodicMemory(store=ChromaEpisodeStore(path=path), open_run_ttl=None)


@pytest.fixture
def credited_path(tmp_path: Path) -> Path:
    """A memory where ``bad`` was shown in four failing runs and ``good`` in four passing ones,
    against a baseline of runs shown nothing that earn 0.5."""
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path), clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(episode_id="good", description=TASK, timestamp=NOW - 60),
            make_episode(episode_id="bad", description=TASK + " and a captcha", timestamp=NOW),
        ]
    )
    for i in range(4):
        memory.runs.note(f"none-{i}", [], TASK)
        memory.runs.credit(f"none-{i}", 0.5)
        memory.runs.note(f"good-{i}", ["good"], TASK)
        memory.runs.credit(f"good-{i}", 1.0)
        memory.runs.note(f"bad-{i}", ["bad"], TASK)
        memory.runs.credit(f"bad-{i}", 0.0)
    memory.runs.note("open", ["bad"], TASK)  # never credited: stays open
    memory.store.close()  # type: ignore[attr-defined]
    return tmp_path


def test_harmful_lists_the_episode_whose_runs_keep_failing(
    capsys: pytest.CaptureFixture[str], credited_path: Path
) -> None:
    code, out, err = run(capsys, "--path", str(credited_path), "harmful", "--now", str(NOW))

    assert (code, err) == (0, "")
    assert "1 of 2 credited episodes in namespace 'default' have utility <= 0.4" in out
    (row,) = [line for line in out.splitlines() if line.startswith("bad ")]
    cells = re.split(r"\s{2,}", row)
    memory = _reader(credited_path)
    utility = memory.runs.utility("bad")
    assert cells[:7] == [
        "bad",
        f"{utility.estimate(NOW):.3f}",
        "5",  # shown in five runs, one of them still open
        "4",
        "0.000",
        f"{utility.mean_advantage:+.3f}",
        "4",
    ]
    assert "memory.quarantine.add(episode_id, reason)" in out
    assert memory.quarantine.list() == {}  # listing quarantines nothing
    assert list(memory.runs.pending()) == ["open"]  # and closes nothing


def test_harmful_json_and_thresholds(
    capsys: pytest.CaptureFixture[str], credited_path: Path
) -> None:
    code, out, _ = run(capsys, "--path", str(credited_path), "harmful", "--now", str(NOW), "--json")
    payload = json.loads(out)
    assert code == 0
    assert [row["episode_id"] for row in payload["harmful"]] == ["bad"]
    assert payload["harmful"][0]["credited_runs"] == 4
    assert payload["harmful"][0]["task"] == TASK + " and a captcha"

    code, out, _ = run(capsys, "--path", str(credited_path), "harmful", "--min-runs", "5")
    assert code == 0
    assert out.startswith("0 of 2 credited episodes")

    code, _, err = run(capsys, "--path", str(credited_path), "harmful", "--max-utility", "2")
    assert code == 2
    assert_one_line_error(err, "--max-utility 2 is invalid")


def test_recall_shows_utility_and_can_rank_without_it(
    capsys: pytest.CaptureFixture[str], credited_path: Path
) -> None:
    query = TASK + " and a captcha"  # closer to "bad" than to "good"
    base = ["--path", str(credited_path), "recall", query, "--now", str(NOW), "--json"]
    _, out, _ = run(capsys, *base)
    with_utility = json.loads(out)
    _, out, _ = run(capsys, *base, "--no-utility")
    without = json.loads(out)

    assert (with_utility["use_utility"], without["use_utility"]) == (True, False)
    assert [r["episode_id"] for r in with_utility["results"]] == ["good", "bad"]
    # Without credit the more similar "bad" ranks first.
    assert [r["episode_id"] for r in without["results"]] == ["bad", "good"]
    good = with_utility["results"][0]
    assert good["utility"]["credited_runs"] == 4
    assert good["utility"]["estimate"] > 0.5
    assert "by utility" in good["why"]

    code, out, _ = run(capsys, *base[:-1])
    assert code == 0
    assert "* (2*utility)^4" in out


def test_reading_never_closes_stale_runs(credited_path: Path) -> None:
    assert main(["--path", str(credited_path), "stats"]) == 0
    assert list(_reader(credited_path).runs.pending()) == ["open"]
    late = EpisodicMemory(
        store=ChromaEpisodeStore(path=credited_path), clock=lambda: NOW + 8 * 86_400.0
    )
    assert list(late.runs.pending()) == []  # a writer's memory, opened late, closes it
    (closed,) = [e for e in late.runs.log() if e.run_id == "open"]
    assert closed.closed_without_credit
