"""``forget`` and ``prune``: a receipt printed, unknown ids refused, ``--all`` asks first."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers.cli import open_memory, run
from tests.helpers.episodes import corpus


def test_cli_forget_prints_a_receipt_and_refuses_unknown_ids(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory"
    memory = open_memory(path)
    memory.record_many(corpus(6))
    memory.store.close()  # type: ignore[attr-defined]
    code, out, err = run(capsys, "forget", "ep-1", "nope", "--reason", "x", "--path", str(path))
    assert code == 2
    assert "'nope'" in err
    assert "nothing was removed" in err
    code, out, _ = run(capsys, "forget", "ep-1", "--reason", "x", "--dry-run", "--path", str(path))
    assert code == 0
    assert "to remove (dry run): 1" in out
    code, out, _ = run(
        capsys, "forget", "ep-1", "--reason", "asked", "--by", "me", "--json", "--path", str(path)
    )
    assert code == 0
    receipt = json.loads(out)
    assert (receipt["episodes"], receipt["reason"], receipt["by"]) == (1, "asked", "me")
    code, out, _ = run(capsys, "stats", "--path", str(path))
    assert "5" in out


def test_cli_forget_all_asks_unless_yes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "memory"
    memory = open_memory(path, "alice")
    memory.record_many(corpus(4))
    memory.store.close()  # type: ignore[attr-defined]
    argv = ["forget", "--all", "--namespace", "alice", "--reason", "left", "--path", str(path)]
    code, _, err = run(capsys, *argv)
    assert code == 2
    assert "--yes" in err
    code, _, err = run(
        capsys,
        "forget",
        "--all",
        "--namespace",
        "nobody",
        "--reason",
        "x",
        "--yes",
        "--path",
        str(path),
    )
    assert code == 2
    assert "nobody" in err
    code, out, _ = run(capsys, *argv, "--yes")
    assert code == 0
    assert "episodes removed: 4" in out
    code, _, err = run(capsys, "forget", "ep-1", "--all", "--reason", "x", "--path", str(path))
    assert code == 2
    assert "not both" in err


def test_cli_prune_lists_what_would_go(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "memory"
    memory = open_memory(path)
    memory.record_many(corpus(6))
    memory.store.close()  # type: ignore[attr-defined]
    code, out, _ = run(capsys, "prune", "--max-episodes", "4", "--dry-run", "--path", str(path))
    assert code == 0
    assert "would remove: ep-0, ep-1" in out
    code, out, _ = run(capsys, "prune", "--max-episodes", "4", "--json", "--path", str(path))
    assert json.loads(out)["plan"]["kept"] == 4
    code, _, err = run(capsys, "prune", "--path", str(path))
    assert code == 2
    assert "--max-age" in err
