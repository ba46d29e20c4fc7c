"""The façade's own promises: one idempotent close of a run, typed credit subjects,
async twins of every read that embeds or touches the store, the public reads that
reflection, migration and the CLI use, and old module paths served with a warning."""

from __future__ import annotations

import importlib
import inspect
import logging
import sys

import pytest

from langchain_episodic import EpisodicMemory, HashingEmbeddings
from langchain_episodic.areas import (
    MemoryForgetting,
    MemoryJournal,
    MemoryLessons,
    MemoryQuarantine,
    MemoryRuns,
)
from langchain_episodic.errors import CreditError, EpisodeValidationError, EpisodicValueError
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.options import RecallOptions
from langchain_episodic.stores import InMemoryEpisodeStore
from langchain_episodic.stores.base import JournalEntry
from tests.unit_tests.factories import make_episode

NOW = 1_700_000_000.0


@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: NOW
    )
    memory.record_many(
        [
            make_episode(episode_id="login-1", description="Implement a login form"),
            make_episode(episode_id="login-2", description="Fix the login form crash"),
        ]
    )
    return memory


def a_lesson(source: str = "login-1", title: str = "Strip e-mails first") -> Lesson:
    return Lesson.create(
        title=title,
        applies_when="a login form validates an e-mail address",
        do="call .strip() first",
        sources=(LessonSource(source),),
        created_at=NOW,
    )


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


def test_an_episode_id_that_looks_like_a_lesson_id_is_refused() -> None:
    with pytest.raises(EpisodeValidationError, match=r"episode_id='lesson-1'.*lesson ids"):
        make_episode(episode_id="lesson-1")


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


def test_quarantine_of_something_not_ids_names_the_argument(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match="episode_ids=5"):
        memory.quarantine.add(5, "why")  # type: ignore[arg-type]


# ------------------------------------------------------------------ public reads


def test_get_episodes_reads_by_id(memory: EpisodicMemory) -> None:
    found = memory.get_episodes(["login-1", "nope"])
    assert list(found) == ["login-1"]
    assert memory.get_episodes("login-2").keys() == {"login-2"}
    assert memory.namespaces() == ("default",)


def test_journal_entries_merge_into_another_namespace_and_conflicts_are_named(
    memory: EpisodicMemory,
) -> None:
    memory.runs.note("run-1", ["login-1"], "Implement a login form")
    memory.runs.credit("run-1", 0.8)
    other = memory.for_namespace("other")
    other.record_many(memory.episodes())
    entries = memory.journal.entries()
    assert other.journal.merge(entries) == []
    assert [e.run_id for e in other.runs.log()] == ["run-1"]
    assert other.journal.merge(entries) == []  # again: nothing new, nothing wrong
    clash = JournalEntry("outcome:run-1", "run-1", '{"reward": 0.1}')
    assert other.journal.merge([clash]) == ["outcome:run-1"]
    assert other.runs.log()[0].reward == 0.8


# ------------------------------------------------------------------ async twins

TWINS = [
    (EpisodicMemory, "arecord", "record"),
    (EpisodicMemory, "arecord_many", "record_many"),
    (EpisodicMemory, "aget_episodes", "get_episodes"),
    (EpisodicMemory, "arecall", "recall"),
    (EpisodicMemory, "atask", "task"),
    (EpisodicMemory, "aforget", "forget"),
    (MemoryRuns, "anote", "note"),
    (MemoryRuns, "acredit", "credit"),
    (MemoryRuns, "aclose", "close"),
    (MemoryRuns, "aexpire", "expire"),
    (MemoryRuns, "areload", "reload"),
    (MemoryLessons, "aadd", "add"),
    (MemoryLessons, "arevise", "revise"),
    (MemoryLessons, "aconsolidate", "consolidate"),
    (MemoryLessons, "arecall", "recall"),
    (MemoryQuarantine, "aadd", "add"),
    (MemoryQuarantine, "arelease", "release"),
    (MemoryQuarantine, "apin", "pin"),
    (MemoryQuarantine, "aunpin", "unpin"),
    (MemoryForgetting, "aforget_all", "forget_all"),
    (MemoryForgetting, "aprune", "prune"),
    (MemoryForgetting, "areceipts", "receipts"),
    (MemoryJournal, "acheckpoint", "checkpoint"),
]


@pytest.mark.parametrize(("owner", "twin", "method"), TWINS)
def test_every_async_twin_is_a_coroutine_function_with_its_methods_signature(
    owner: type, twin: str, method: str
) -> None:
    assert inspect.iscoroutinefunction(getattr(owner, twin))
    assert getattr(owner, twin).__name__ == twin
    assert inspect.signature(getattr(owner, twin)) == inspect.signature(getattr(owner, method))


async def test_async_twins_give_what_their_methods_give(memory: EpisodicMemory) -> None:
    options = RecallOptions(top_k=2)
    assert await memory.arecall("login form", options=options, explain=True) == memory.recall(
        "login form", options=options, explain=True
    )
    assert (await memory.aget_episodes(["login-1"])).keys() == {"login-1"}
    lesson = a_lesson()
    assert await memory.lessons.aadd([lesson]) == 1
    assert await memory.lessons.arecall("login form e-mail", 1) == memory.lessons.recall(
        "login form e-mail", 1
    )
    revised = await memory.lessons.arevise(lesson.lesson_id, title="Strip every e-mail")
    assert memory.lessons.status(lesson.lesson_id) == "archived"
    assert await memory.lessons.aconsolidate() == ()
    assert memory.lessons.list() == (revised,)
    await memory.runs.anote("run-a", ["login-1"], "login form")
    event = await memory.runs.aclose("run-a", 0.6)
    assert event is not None
    assert await memory.runs.aclose("run-a", 0.1) == event


def test_as_retriever_and_as_runnable_are_wired_by_the_package(memory: EpisodicMemory) -> None:
    from langchain_episodic import EpisodicRetriever  # noqa: PLC0415

    retriever = memory.as_retriever(k=1)
    assert isinstance(retriever, EpisodicRetriever)
    assert retriever.memory is memory
    assert "login" in memory.as_runnable().invoke("Implement a login form")


# ------------------------------------------------------------------ old module paths


@pytest.mark.parametrize(
    ("old", "name", "new"),
    [
        ("langchain_episodic.episode", "Episode", "langchain_episodic.model.episode"),
        ("langchain_episodic.lessons", "render_lessons", "langchain_episodic.prompting.lessons"),
        ("langchain_episodic.lessons", "Lesson", "langchain_episodic.model.lesson"),
        ("langchain_episodic.strategy", "choose_strategy", "langchain_episodic.pipeline"),
        ("langchain_episodic.strategy", "STRATEGY_POOL", "langchain_episodic.scoring.strategy"),
        (
            "langchain_episodic.replay",
            "format_replay_prompt",
            "langchain_episodic.prompting.episodes",
        ),
        ("langchain_episodic.quarantine", "QuarantineLog", "langchain_episodic.service.quarantine"),
    ],
)
def test_an_old_module_path_still_imports_with_a_deprecation_warning(
    old: str, name: str, new: str
) -> None:
    sys.modules.pop(old, None)
    with pytest.warns(DeprecationWarning, match=f"{old} moved to .*{new}"):
        module = importlib.import_module(old)
    assert getattr(module, name) is getattr(importlib.import_module(new), name)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = module.nope


def test_a_name_of_the_old_scoring_module_warns_and_resolves() -> None:
    import langchain_episodic.scoring as scoring  # noqa: PLC0415
    from langchain_episodic.scoring.priority import ReplayWeights  # noqa: PLC0415

    with pytest.warns(DeprecationWarning, match="scoring.priority.ReplayWeights"):
        assert scoring.ReplayWeights is ReplayWeights
    with pytest.raises(AttributeError):
        _ = scoring.nope
