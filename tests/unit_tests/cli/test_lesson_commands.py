"""The ``lessons`` command: list, show, reflect with a named model, quarantine, release."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.model.lesson import Lesson, LessonSource
from tests.helpers import reflector
from tests.helpers.cli import assert_one_line_error, run
from tests.unit_tests.factories import make_episode

NOW = 1_750_000_000.0
MODEL = "tests.helpers.reflector:make_model"


def _memory(path: Path) -> EpisodicMemory:
    """A memory that, like the CLI, never closes stale runs when it opens."""
    return EpisodicMemory(store=ChromaEpisodeStore(path=path), open_run_ttl=None)


def _strip_lesson(sources: tuple[str, ...], created_at: float = NOW) -> Lesson:
    return Lesson.create(
        title="Strip e-mail addresses before validating them",
        applies_when="a form validates an e-mail address",
        do="call .strip() on the address first",
        avoid="validating the raw input",
        sources=tuple(LessonSource(i, agent="coder", run_id=f"run-{i}") for i in sources),
        created_at=created_at,
        by="tester",
    )


@pytest.fixture
def lesson_path(tmp_path: Path) -> Path:
    """Three login episodes (two successes, one failure), a CSV one, and one lesson
    shown in two runs, one credited."""
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path), clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(
                episode_id="login-ok",
                description="Implement a login form with email validation",
                timestamp=NOW - 300,
            ),
            make_episode(
                episode_id="login-bad",
                description="Implement a login form with email validation and a captcha",
                outcome="failure",
                reward=0.1,
                message="trailing spaces fail",
                timestamp=NOW - 200,
            ),
            make_episode(
                episode_id="signup-ok",
                description="Implement a signup form with email validation",
                timestamp=NOW - 100,
            ),
            make_episode(
                episode_id="csv",
                description="Parse a CSV file of orders and sum the totals",
                category="testing",
                timestamp=NOW - 50,
            ),
        ]
    )
    lesson = _strip_lesson(("login-ok", "login-bad"))
    memory.lessons.add([lesson])
    memory.runs.note("run-1", [lesson.lesson_id], "Implement a contact form")
    memory.runs.credit("run-1", 1.0)
    memory.runs.note("run-2", [lesson.lesson_id], "Implement a contact form")
    memory.store.close()  # type: ignore[attr-defined]
    return tmp_path


@pytest.fixture
def script(monkeypatch: pytest.MonkeyPatch) -> list[object]:
    """What the next ``--model tests.helpers.reflector:make_model`` answers, in order."""
    answers: list[object] = []
    monkeypatch.setattr(reflector, "SCRIPT", answers)
    monkeypatch.setattr(reflector, "MADE", [])
    return answers


def _lesson_id(path: Path) -> str:
    (lesson,) = _memory(path).lessons.list(None)
    return lesson.lesson_id


# --------------------------------------------------------------------------- list and show


def test_list_shows_sources_utility_and_counts(
    capsys: pytest.CaptureFixture[str], lesson_path: Path
) -> None:
    lesson_id = _lesson_id(lesson_path)
    code, out, err = run(capsys, "--path", str(lesson_path), "lessons", "list")

    assert (code, err) == (0, "")
    assert "1 active lessons in namespace 'default'" in out
    (row,) = [line for line in out.splitlines() if line.startswith(lesson_id)]
    cells = re.split(r"\s{2,}", row)
    utility = _memory(lesson_path).lessons.utility(lesson_id)
    assert cells == [
        lesson_id,
        "active",
        f"{utility:.3f}",
        "2",  # shown in two runs
        "1",  # one of them credited
        "login-ok, login-bad",
        "Strip e-mail addresses before validating them",
    ]
    assert _memory(lesson_path).runs.pending().keys() == {"run-2"}  # listing closes nothing


def test_list_json_and_status_filter(capsys: pytest.CaptureFixture[str], lesson_path: Path) -> None:
    lesson_id = _lesson_id(lesson_path)
    code, out, _ = run(capsys, "--path", str(lesson_path), "lessons", "list", "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["status"] == "active"
    (row,) = payload["lessons"]
    assert row["lesson_id"] == lesson_id
    assert row["sources"] == ["login-ok", "login-bad"]
    assert (row["shown"], row["credited"], row["status"]) == (2, 1, "active")
    assert row["utility"] > 0.5  # its one credited run was a success

    code, out, _ = run(
        capsys, "lessons", "list", "--status", "archived", "--path", str(lesson_path)
    )
    assert code == 0
    assert "0 archived lessons" in out
    assert "--status all" in out


def test_list_with_no_lessons_says_how_to_get_some(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path)).record(make_episode())
    code, out, err = run(capsys, "--path", str(tmp_path), "lessons", "list")
    assert (code, err) == (0, "")
    assert "0 active lessons" in out
    assert "lessons reflect --model" in out


def test_list_and_show_read_utility_at_now(
    capsys: pytest.CaptureFixture[str], lesson_path: Path
) -> None:
    # Evidence fades with age: read at the credit's time, the CLI agrees with the API
    # there; read at the wall clock (years later), the lesson's utility has faded.
    lesson_id = _lesson_id(lesson_path)
    at_credit = _memory(lesson_path).lessons.utility(lesson_id, current_time=NOW)
    later = _memory(lesson_path).lessons.utility(lesson_id)
    assert at_credit > later > 0.5

    _, out, _ = run(capsys, "--path", str(lesson_path), "lessons", "list", "--json")
    assert json.loads(out)["lessons"][0]["utility"] == pytest.approx(later)
    _, out, _ = run(
        capsys, "--path", str(lesson_path), "lessons", "list", "--json", "--now", str(NOW)
    )
    assert json.loads(out)["lessons"][0]["utility"] == pytest.approx(at_credit)
    code, out, err = run(
        capsys, "--path", str(lesson_path), "lessons", "show", lesson_id, "--now", str(NOW)
    )
    assert (code, err) == (0, "")
    assert f"utility        {at_credit:.3f}" in out


def test_show_gives_every_field_and_the_sources_provenance(
    capsys: pytest.CaptureFixture[str], lesson_path: Path
) -> None:
    lesson_id = _lesson_id(lesson_path)
    code, out, err = run(capsys, "--path", str(lesson_path), "lessons", "show", lesson_id)

    assert (code, err) == (0, "")
    for fragment in (
        f"lesson         {lesson_id}",
        "status         active",
        "applies when   a form validates an e-mail address",
        "do             call .strip() on the address first",
        "avoid          validating the raw input",
        "by             tester",
        "shown          2 runs, 1 credited",
        "sources (2):",
        "recalled: neither it nor a source is quarantined",
    ):
        assert fragment in out, fragment
    (row,) = [line for line in out.splitlines() if line.startswith("login-bad")]
    task = "Implement a login form with email validation and a captcha"
    assert re.split(r"\s{2,}", row) == [
        "login-bad",
        "failure",
        "coder",
        "run-login-bad",
        "-",  # no thread: recorded outside an agent
        task,
    ]


def test_show_json_names_what_supersedes_it(
    capsys: pytest.CaptureFixture[str], lesson_path: Path
) -> None:
    old = _lesson_id(lesson_path)
    memory = _memory(lesson_path)
    new = memory.lessons.revise(old, do="call .strip() and .lower() first", by="reviewer")
    memory.store.close()  # type: ignore[attr-defined]

    code, out, _ = run(capsys, "--path", str(lesson_path), "lessons", "show", old, "--json")
    payload = json.loads(out)
    assert code == 0
    assert payload["status"] == "archived"
    assert payload["superseded_by"] == [new.lesson_id]
    assert payload["why"] == [
        {"superseded_by": new.lesson_id, "by": "reviewer", "at": new.created_at}
    ]
    assert [s["episode_id"] for s in payload["sources"]] == ["login-ok", "login-bad"]
    assert payload["sources"][0] == {
        "episode_id": "login-ok",
        "agent": "coder",
        "run_id": "run-login-ok",
        "thread_id": None,
        "turn": None,
        "namespace": None,
        "task": "Implement a login form with email validation",
        "outcome": "success",
        "quarantined": False,
    }
    assert (payload["shown"], payload["credited"]) == (2, 1)

    code, out, _ = run(
        capsys, "--path", str(lesson_path), "lessons", "show", new.lesson_id, "--json"
    )
    assert json.loads(out)["supersedes"] == [old]


@pytest.mark.parametrize(
    ("lesson_id", "fragment"),
    [("lesson-nope", "'lesson-nope' is not stored"), ("login-ok", "'login-ok' is not a lesson id")],
)
def test_show_a_bad_id_is_one_line(
    capsys: pytest.CaptureFixture[str], lesson_path: Path, lesson_id: str, fragment: str
) -> None:
    code, out, err = run(capsys, "--path", str(lesson_path), "lessons", "show", lesson_id)
    assert (code, out) == (2, "")
    assert_one_line_error(err, fragment, "lessons list --status all")


# --------------------------------------------------------------------------- quarantine


def test_quarantine_and_release_change_the_status(
    capsys: pytest.CaptureFixture[str], lesson_path: Path
) -> None:
    lesson_id = _lesson_id(lesson_path)
    path = str(lesson_path)
    code, out, err = run(
        capsys,
        "--path",
        path,
        "lessons",
        "quarantine",
        lesson_id,
        "--reason",
        "wrong",
        "--by",
        "ops",
    )
    assert (code, err) == (0, "")
    assert "quarantined 1 of 1 lessons" in out
    assert f"{lesson_id}: quarantined" in out
    assert _memory(lesson_path).lessons.status(lesson_id) == "quarantined"
    (event,) = _memory(lesson_path).quarantine.log()
    assert (event.episode_id, event.reason, event.by) == (lesson_id, "wrong", "ops")

    _, out, _ = run(capsys, "--path", path, "lessons", "show", lesson_id)
    assert "the lesson itself " + lesson_id + " is quarantined by ops" in out
    _, out, _ = run(capsys, "--path", path, "lessons", "list")
    assert "0 active lessons" in out
    _, out, _ = run(capsys, "--path", path, "lessons", "list", "--status", "quarantined")
    assert lesson_id in out

    code, out, _ = run(capsys, "--path", path, "lessons", "release", lesson_id, "--reason", "fine")
    assert code == 0
    assert "released 1 of 1 lessons" in out
    assert f"{lesson_id}: active" in out
    assert _memory(lesson_path).lessons.status(lesson_id) == "active"


def test_release_says_when_a_source_keeps_it_quarantined(
    capsys: pytest.CaptureFixture[str], lesson_path: Path
) -> None:
    lesson_id = _lesson_id(lesson_path)
    memory = _memory(lesson_path)
    memory.quarantine.add("login-bad", "poisoned tool run")
    memory.store.close()  # type: ignore[attr-defined]

    _, out, _ = run(capsys, "--path", str(lesson_path), "lessons", "show", lesson_id)
    assert "status         quarantined" in out
    assert "a source login-bad is quarantined" in out
    code, out, _ = run(
        capsys, "--path", str(lesson_path), "lessons", "release", lesson_id, "--reason", "ok"
    )
    assert code == 0
    assert "released 0 of 1 lessons (1 were not)" in out
    assert f"{lesson_id}: quarantined (quarantined sources: login-bad)" in out


def test_quarantine_needs_a_lesson_id_and_a_reason(
    capsys: pytest.CaptureFixture[str], lesson_path: Path
) -> None:
    path = str(lesson_path)
    code, _, err = run(capsys, "--path", path, "lessons", "quarantine", "login-ok", "--reason", "x")
    assert code == 2
    assert_one_line_error(err, "'login-ok' is not a lesson id")
    code, _, err = run(capsys, "--path", path, "lessons", "quarantine", _lesson_id(lesson_path))
    assert code == 2
    assert_one_line_error(err, "--reason")
    code, _, err = run(capsys, "--path", path, "lessons")
    assert code == 2
    assert_one_line_error(err, "ACTION")
    assert _memory(lesson_path).quarantine.log() == ()


# --------------------------------------------------------------------------- reflect


def test_reflect_stores_lessons_and_reports_rejections(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, script: list[object]
) -> None:
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=tmp_path), clock=lambda: NOW)
    memory.record_many(
        [
            make_episode(episode_id="old", description="Parse a CSV file", timestamp=NOW - 20),
            make_episode(
                episode_id="new", description="Implement a login form", timestamp=NOW - 10
            ),
        ]
    )
    memory.store.close()  # type: ignore[attr-defined]
    script += [
        reflector.citing_batch("Strip e-mail addresses", extra=["elsewhere"]),  # rejected
        reflector.citing_batch("Read CSV files with the csv module"),
    ]

    code, out, err = run(
        capsys, "--path", str(tmp_path), "lessons", "reflect", "--model", MODEL, "--batch-size", "1"
    )

    assert (code, err) == (0, "")
    assert "reflected on 2 of 2 episodes" in out
    assert "2 model calls, 1 lessons stored, 1 rejected" in out
    assert "new: lesson 0 ('Strip e-mail addresses') cites episodes not reflected on" in out
    (lesson,) = _memory(tmp_path).lessons.list()
    assert lesson.title == "Read CSV files with the csv module"
    assert lesson.source_ids == ("old",)
    assert lesson.by == "StructuredChatModel"
    assert f"stored {lesson.lesson_id}: Read CSV files" in out
    (model,) = reflector.MADE
    assert [reflector.episode_ids(sent) for sent in model.received] == [["new"], ["old"]]

    # A second run skips the episode a lesson cites and reflects on the other one only.
    script.append(reflector.citing_batch("Strip e-mail addresses"))
    code, out, _ = run(capsys, "--path", str(tmp_path), "lessons", "reflect", "--model", MODEL)
    assert code == 0
    assert "reflected on 1 of 2 episodes" in out
    assert "(1 already cited by a lesson or quarantined): 1 model calls, 1 lessons stored" in out
    assert len(_memory(tmp_path).lessons.list()) == 2


def test_reflect_limit_and_a_failing_model(
    capsys: pytest.CaptureFixture[str], lesson_path: Path, script: list[object]
) -> None:
    script.append(RuntimeError("rate limited"))
    code, out, _ = run(
        capsys, "--path", str(lesson_path), "lessons", "reflect", "--model", MODEL, "--limit", "1"
    )
    assert code == 0
    # login-ok and login-bad are cited already: the newest other one is csv.
    assert "reflected on 1 of 4 episodes" in out
    assert "1 model calls, 0 lessons stored, 1 rejected" in out
    assert "csv: the model call failed: RuntimeError: rate limited" in out
    assert len(_memory(lesson_path).lessons.list(None)) == 1


@pytest.mark.parametrize(
    ("spec", "fragment"),
    [
        ("nomodule_xyz:make", "cannot import 'nomodule_xyz'"),
        ("tests.helpers.reflector:nothing", "has no attribute 'nothing'"),
        ("tests.helpers.reflector:SCRIPT", "gave list, not a LangChain chat model"),
        ("tests.helpers.reflector:episode_ids", "calling episode_ids() failed"),
        ("no-colon", "give MODULE:ATTR"),
    ],
)
def test_a_bad_model_is_one_line(
    capsys: pytest.CaptureFixture[str], lesson_path: Path, spec: str, fragment: str
) -> None:
    code, out, err = run(capsys, "--path", str(lesson_path), "lessons", "reflect", "--model", spec)
    assert (code, out) == (2, "")
    assert_one_line_error(err, "--model", fragment)


def test_reflect_on_a_missing_memory_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, script: list[object]
) -> None:
    code, _, err = run(
        capsys, "--path", str(tmp_path / "none"), "lessons", "reflect", "--model", MODEL
    )
    assert code == 2
    assert_one_line_error(err, "no episodic memory at")
    assert not (tmp_path / "none").exists()
