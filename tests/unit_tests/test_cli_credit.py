"""The CLI's view of credit: utility in ``recall``, the ``harmful`` quarantine candidates."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.cli import main
from tests.helpers.cli import assert_one_line_error, run
from tests.unit_tests.factories import make_episode

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
