"""``langchain-episodic lift``: what a memory without holdout runs reports, and its options.

The lift of credited holdout runs, printed and as JSON, is tested with the holdout
itself in scoring/test_lift.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import assert_one_line_error, filled, run
from tests.unit_tests.factories import make_episode


@pytest.fixture
def uncredited(tmp_path: Path) -> Path:
    return filled(tmp_path / "memory", [make_episode()])


def test_without_holdout_runs_lift_says_how_to_get_some(
    capsys: pytest.CaptureFixture[str], uncredited: Path
) -> None:
    code, out, err = run(capsys, "--path", str(uncredited), "lift")
    assert (code, err) == (0, "")
    assert "0 holdout runs (shown no memory)" in out
    assert "not enough holdout runs yet: 0 of the 10 needed" in out
    assert "holdout=0.1" in out


def test_the_json_report_has_no_lift_yet(
    capsys: pytest.CaptureFixture[str], uncredited: Path
) -> None:
    code, out, _ = run(capsys, "--path", str(uncredited), "lift", "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["enough"] is False
    assert payload["overall"]["holdout"]["runs"] == 0
    assert payload["overall"]["reward_lift"] is None


def test_bad_options_and_a_missing_memory_are_one_line_errors(
    capsys: pytest.CaptureFixture[str], uncredited: Path, tmp_path: Path
) -> None:
    code, _, err = run(capsys, "--path", str(uncredited), "lift", "--min-holdout", "0")
    assert code == 2
    assert_one_line_error(err, "--min-holdout", "must be an integer >= 1")
    code, _, err = run(capsys, "--path", str(tmp_path / "nothing"), "lift")
    assert code == 2
    assert_one_line_error(err, "no episodic memory at")
