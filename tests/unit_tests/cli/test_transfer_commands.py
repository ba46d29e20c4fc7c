"""``export`` and ``import``: exact round trips, bad lines named, good ones kept."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path

import pytest

from langchain_episodic import (
    Episode,
)
from langchain_episodic.cli import main
from langchain_episodic.scoring.skills import (
    compute_skill_profiles,
)
from tests.helpers.cli import (
    GOOD,
    assert_one_line_error,
    filled,
    open_memory,
    run,
)
from tests.helpers.episodes import corpus
from tests.unit_tests.factories import make_episode


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


def test_migrate_draws_no_progress_bar_into_a_pipe_or_a_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = filled(tmp_path / "source", corpus(6))
    code, out, err = run(capsys, "--path", str(source), "migrate", "--to-path", str(tmp_path / "t"))
    assert code == 0
    assert "6 copied" in out
    assert "migrating" not in err
    assert "\r" not in out + err  # no half-drawn bar before the summary
    assert len(open_memory(tmp_path / "t")) == 6
