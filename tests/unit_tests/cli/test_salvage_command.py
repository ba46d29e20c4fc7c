"""langchain-episodic salvage PATH --to NEW: the report, and an exit code that says it all."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from tests.helpers.cli import assert_one_line_error, run
from tests.helpers.episodes import corpus


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(corpus(12))
    for segment in {header.parent for header in path.glob("*/header.bin")}:
        shutil.rmtree(segment)  # Chroma can no longer answer: only salvage reads it
    return path


def test_a_full_recovery_prints_the_report_and_exits_0(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "salvage", str(folder), "--to", str(tmp_path / "new"))
    assert (code, err) == (0, "")
    lines = out.splitlines()
    assert lines[0] == f"salvaged {str(folder)!r} into {str(tmp_path / 'new')!r}:"
    assert lines[1].startswith("  namespace 'default': 12 episodes")
    assert lines[-1] == "everything was recovered"
    code, out, _ = run(capsys, "stats", "--path", str(tmp_path / "new"))
    assert code == 0
    assert "12" in out


def test_json_says_the_same(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "salvage", str(folder), "--to", str(tmp_path / "new"), "--json")
    assert code == 0
    report = json.loads(out)
    assert report["complete"] is True
    assert [(n["namespace"], n["episodes"], n["damaged"]) for n in report["namespaces"]] == [
        ("default", 12, {})
    ]


def test_a_partial_recovery_exits_1_and_says_what_was_lost(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    database = folder / "chroma.sqlite3"
    database.write_bytes(database.read_bytes()[: database.stat().st_size // 3])
    code, out, err = run(capsys, "salvage", str(folder), "--to", str(tmp_path / "new"))
    assert code == 1
    assert "Traceback" not in out + err
    assert "unreadable: chroma.sqlite3: it is truncated" in out
    assert out.splitlines()[-1].startswith("what is listed above was not recovered")


def test_refusals_are_one_line_and_exit_2(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep.txt").write_text("mine")
    code, _, err = run(capsys, "salvage", str(folder), "--to", str(tmp_path / "used"))
    assert code == 2
    assert_one_line_error(err, "exists and is not an empty folder")
    code, _, err = run(capsys, "salvage", str(tmp_path / "nowhere"), "--to", str(tmp_path / "n"))
    assert code == 2
    assert_one_line_error(err, "is not a folder")
    code, _, err = run(capsys, "salvage", str(folder))
    assert code == 2
    assert_one_line_error(err, "--to")


def test_the_folder_may_come_from_path_as_for_every_command_but_not_twice(
    folder: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(capsys, "--path", str(folder), "salvage", "--to", str(tmp_path / "a"))
    assert (code, err) == (0, "")
    assert out.splitlines()[0] == f"salvaged {str(folder)!r} into {str(tmp_path / 'a')!r}:"
    same = run(capsys, "salvage", str(folder), "--path", str(folder), "--to", str(tmp_path / "b"))
    assert same[0] == 0  # the same folder said twice is no conflict
    code, _, err = run(
        capsys,
        "salvage",
        str(folder),
        "--path",
        str(tmp_path / "other"),
        "--to",
        str(tmp_path / "c"),
    )
    assert code == 2
    assert_one_line_error(err, "two folders")
    assert not (tmp_path / "c").exists()  # refused before anything was written
    code, _, err = run(capsys, "salvage", "--host", "localhost", "--to", str(tmp_path / "d"))
    assert code == 2
    assert_one_line_error(err, "on-disk folder")
