"""``memory.runs``: one idempotent close of a run, typed credit subjects (episode or lesson
rows), and ids refused when they are not a list of ids."""

from __future__ import annotations

import logging

import pytest

from langchain_episodic import EpisodicMemory
from langchain_episodic.errors import CreditError, EpisodicValueError
from tests.unit_tests.factories import a_lesson, make_episode

# ------------------------------------------------------------------ close_run


def test_close_run_is_idempotent_and_returns_the_runs_outcome(memory: EpisodicMemory) -> None:
    memory.runs.note("run-1", ["login-1"], "Implement a login form")
    first = memory.runs.close("run-1", 0.9, by="agent")
    assert first is not None
    assert first.reward == 0.9
    assert first.episode_ids == ("login-1",)
    # Again, from anyone, with another reward: the first outcome stands and is returned.
    assert memory.runs.close("run-1", 0.1) == first
    assert memory.runs.log() == (first,)
    with pytest.raises(CreditError, match="already credited"):
        memory.runs.credit("run-1", 0.5)


def test_close_run_of_a_run_shown_nothing_is_none_and_writes_nothing(
    memory: EpisodicMemory,
) -> None:
    assert memory.runs.close("never-noted", 0.5) is None
    assert memory.runs.log() == ()


def test_close_run_refuses_a_bad_reward_naming_it(memory: EpisodicMemory) -> None:
    memory.runs.note("run-1", ["login-1"], "Implement a login form")
    with pytest.raises(EpisodicValueError, match=r"reward=1\.5"):
        memory.runs.close("run-1", 1.5)
    with pytest.raises(EpisodicValueError, match="run_id=''"):
        memory.runs.credit("", 0.5)
    assert memory.runs.pending().keys() == {"run-1"}


def test_a_journal_that_fails_while_closing_is_logged_not_raised(
    memory: EpisodicMemory, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    memory.runs.note("run-1", ["login-1"], "Implement a login form")

    def broken(*_: object, **__: object) -> None:
        raise OSError("disk gone")

    monkeypatch.setattr(memory.store, "append_journal", broken)
    with caplog.at_level(logging.WARNING):
        assert memory.runs.close("run-1", 0.9) is None
    assert "could not credit run_id='run-1'" in caplog.text


def test_recording_the_runs_episode_closes_it_once(memory: EpisodicMemory) -> None:
    from langchain_episodic.model.episode import EpisodeSource  # noqa: PLC0415

    memory.runs.note("run-9", ["login-1"], "Implement a login form")
    episode = make_episode(episode_id="login-3", reward=0.7)
    sourced = type(episode)(**{**episode.__dict__, "source": EpisodeSource("agent", "run-9")})
    memory.record(sourced)
    assert [(e.run_id, e.reward) for e in memory.runs.log()] == [("run-9", 0.7)]
    assert memory.runs.close("run-9", 0.2) == memory.runs.log()[0]


# ------------------------------------------------------------------ typed subjects


def test_utility_rows_say_their_kind_and_can_be_kept_by_kind(memory: EpisodicMemory) -> None:
    lesson = a_lesson()
    memory.lessons.add([lesson])
    for run in range(3):
        memory.runs.note(f"run-{run}", [lesson.lesson_id, "login-2"], "Fix a login form")
        memory.runs.credit(f"run-{run}", 0.0)
    rows = memory.runs.utilities()
    assert {i: row.kind for i, row in rows.items()} == {
        lesson.lesson_id: "lesson",
        "login-2": "episode",
    }
    assert set(memory.runs.utilities(kind="episode")) == {"login-2"}
    assert set(memory.runs.utilities(kind="lesson")) == {lesson.lesson_id}
    assert {row.kind for row in memory.runs.harmful(min_runs=3, max_utility=1.0)} == {
        "lesson",
        "episode",
    }
    assert [r.episode_id for r in memory.runs.harmful(3, 1.0, kind="lesson")] == [lesson.lesson_id]
    with pytest.raises(EpisodicValueError, match="kind='episodes'"):
        memory.runs.utilities(kind="episodes")  # type: ignore[arg-type]


def test_one_string_of_ids_is_refused_not_read_as_letters(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match="episode_ids='b1'"):
        memory.runs.note("run", "b1", "task")
    assert memory.runs.pending() == {}


# ------------------------------------------------------------------ public reads


# ------------------------------------------------------------------ async twins


# ------------------------------------------------------------------ old module paths
