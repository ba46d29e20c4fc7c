"""The CLI prints stored text inert: no control, format or separator character reaches a terminal.

Stored text (an episode id, a task, a solution, a lesson) holding ESC sequences, BEL,
backspace, C1 controls, bidi overrides and separators goes through every command that
shows it; the output holds none of them raw (they are escaped visibly), and ``--json``
output still decodes to the stored text exactly.
"""

from __future__ import annotations

import json
import unicodedata
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.cli._terminal import terminal_safe
from langchain_episodic.model.lesson import Lesson, LessonSource
from tests.helpers.cli import run
from tests.unit_tests.factories import make_episode

NOW = 1_800_000_000.0
HOSTILE = "\x1b]0;owned\x07\x1b[2J\x9b31m\x08\x85\u202e\u2066\u200b\u2028\ufff9\U000e0001"
EVIL_ID = "ep\x1b[31m-1\u202e"
UNSAFE = frozenset({"Cc", "Cf", "Zl", "Zp", "Cs"})


def raw_unsafe(text: str) -> list[str]:
    """The characters of ``text`` a terminal would act on (newline and tab aside)."""
    return [c for c in text if c not in "\n\t" and unicodedata.category(c) in UNSAFE]


def strings(data: object) -> set[str]:
    """Every string anywhere in decoded JSON."""
    if isinstance(data, str):
        return {data}
    if isinstance(data, dict):
        return set().union(*(strings(v) for v in data.values()), set(data))
    if isinstance(data, list):
        return set().union(*(strings(v) for v in data)) if data else set()
    return set()


@pytest.fixture
def hostile_path(tmp_path: Path) -> Path:
    path = tmp_path / "memory"
    with ChromaEpisodeStore(path=path) as store:
        memory = EpisodicMemory(store=store, clock=lambda: NOW)
        memory.record_many(
            [
                make_episode(
                    episode_id=EVIL_ID,
                    description=f"Implement a login form {HOSTILE}",
                    solution=f"def login(): pass  # {HOSTILE}",
                    message=f"tests {HOSTILE}",
                    strategy=f"iterative{HOSTILE}",
                    timestamp=NOW - 100,
                ),
                make_episode(
                    episode_id="plain", description="Implement a signup form", timestamp=NOW
                ),
            ]
        )
        for run_id in ("r1", "r2", "r3", "r4"):
            memory.runs.note(run_id, [EVIL_ID], "Implement a login form")
            memory.runs.credit(run_id, 0.0)
        memory.lessons.add(
            [
                Lesson.create(
                    title=f"Validate input {HOSTILE}",
                    applies_when=f"a login form {HOSTILE}",
                    do="strip it",
                    sources=[LessonSource(EVIL_ID, agent=f"agent{HOSTILE}")],
                    created_at=NOW,
                )
            ]
        )
    return path


@pytest.mark.parametrize(
    "argv",
    [
        ["recall", "Implement a login form", "--now", str(NOW)],
        ["recall", "Implement a login form", "--ranking", "article", "--now", str(NOW)],
        ["harmful", "--now", str(NOW)],
        ["lessons", "list", "--status", "all"],
        ["stats"],
        ["export", "-"],
        ["forget", EVIL_ID, "--reason", f"asked {HOSTILE}", "--dry-run"],
    ],
)
def test_no_command_prints_a_raw_control_character(
    hostile_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    code, out, err = run(capsys, *argv, "--path", str(hostile_path))
    assert code == 0, err
    assert raw_unsafe(out) == []
    assert raw_unsafe(err) == []


def test_lessons_show_and_errors_are_inert_too(
    hostile_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ChromaEpisodeStore(path=hostile_path) as store:
        (lesson,) = EpisodicMemory(store=store).lessons.list()
    code, out, err = run(capsys, "lessons", "show", lesson.lesson_id, "--path", str(hostile_path))
    assert code == 0, err
    assert raw_unsafe(out) == []
    code, out, err = run(
        capsys, "forget", f"nope{HOSTILE}", "--reason", "x", "--path", str(hostile_path)
    )
    assert code == 2
    assert raw_unsafe(err) == []


def test_json_output_still_decodes_to_the_stored_text(
    hostile_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys,
        "recall",
        "Implement a login form",
        "--json",
        "--now",
        str(NOW),
        "--path",
        str(hostile_path),
    )
    assert code == 0
    assert raw_unsafe(out) == []
    assert EVIL_ID in strings(json.loads(out))
    code, out, _ = run(capsys, "export", "-", "--path", str(hostile_path))
    exported = [json.loads(line) for line in out.splitlines()]
    assert {row["episode_id"] for row in exported} == {EVIL_ID, "plain"}
    (evil,) = (row for row in exported if row["episode_id"] == EVIL_ID)
    assert evil["solution"] == f"def login(): pass  # {HOSTILE}"


@given(st.text())
def test_terminal_safe_leaves_nothing_a_terminal_acts_on_and_keeps_the_rest(text: str) -> None:
    safe = terminal_safe(text)
    assert raw_unsafe(safe) == []
    if not raw_unsafe(text):
        assert safe == text
    # Inside a JSON string the escapes decode back to the text exactly.
    assert json.loads(terminal_safe(json.dumps(text, ensure_ascii=False))) == text
