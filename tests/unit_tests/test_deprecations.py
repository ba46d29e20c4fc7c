"""The façade's face: a small core, one sub-object per area, old names for one release."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import sys
import warnings
from typing import Any

import pytest

from langchain_episodic import EpisodicMemory, RecallOptions, episode_from_tests
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.retention import Retention

CORE = {
    "record", "arecord", "record_many", "arecord_many", "recall", "arecall", "episodes",
    "get_episodes", "aget_episodes", "skill_profiles", "namespaces", "for_namespace",
    "short_term", "task", "atask", "forget", "aforget", "as_retriever", "as_runnable",
    "now", "flush", "calibration", "background", "store", "embeddings", "namespace",
    "short_term_limit",
}  # fmt: skip
AREAS = {"runs", "lessons", "quarantine", "forgetting", "journal"}


def public_members(memory: EpisodicMemory) -> dict[str, Any]:
    members = {name: getattr(type(memory), name, None) for name in dir(memory)}
    members.update({name: getattr(memory, name) for name in AREAS})
    return {name: value for name, value in members.items() if not name.startswith("_")}


def deprecated(value: Any) -> bool:
    doc = inspect.getdoc(value.fget if isinstance(value, property) else value) or ""
    return doc.startswith("Deprecated:")


def test_the_facade_is_a_core_of_verbs_and_one_sub_object_per_area() -> None:
    memory = EpisodicMemory()
    current = {
        name
        for name, value in public_members(memory).items()
        if name in AREAS or not deprecated(value)
    }
    assert current == CORE | AREAS
    assert len(current) <= 34  # 21 verbs (6 async), 4 settings, 4 properties, 5 areas


@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: 100.0)
    memory.record(
        episode_from_tests("Add a login form", "def login(): ...", 7, 10, "empty e-mail",
                           episode_id="login-1", timestamp=1.0)
    )  # fmt: skip
    return memory


# (old call, new call): each given the same fresh memory, they return the same.
MOVES = [
    ("note_injection", "runs.note", ("run-1", ["login-1"], "Add a signup form")),
    ("open_runs", "runs.pending", ()),
    ("credit_log", "runs.log", ()),
    ("utilities", "runs.utilities", ()),
    ("utility", "runs.utility", ("login-1",)),
    ("harmful", "runs.harmful", ()),
    ("demoted", "runs.demoted", ()),
    ("is_holdout", "runs.is_holdout", ("run-1",)),
    ("expire_open_runs", "runs.expire", ()),
    ("reload_credit", "runs.reload", ()),
    ("quarantine", "quarantine.add", ("login-1", "poisoned")),
    ("release", "quarantine.release", ("login-1", "fine")),
    ("pin", "quarantine.pin", ("login-1", "keep")),
    ("unpin", "quarantine.unpin", ("login-1", "no")),
    ("pinned", "quarantine.pinned", ()),
    ("quarantined", "quarantine.list", ()),
    ("quarantine_log", "quarantine.log", ()),
    ("merge_quarantine_log", "quarantine.merge_log", ((),)),
    ("lessons", "lessons.list", ()),
    ("recall_lessons", "lessons.recall", ("Add a login form",)),
    ("consolidate_lessons", "lessons.consolidate", ()),
    ("erasures", "forgetting.receipts", ()),
    ("forgotten", "forgetting.forgotten", ("login-1",)),
    ("unfinished_erasures", "forgetting.unfinished", ()),
    ("journal_entries", "journal.entries", ()),
    ("checkpoint_journal", "journal.checkpoint", ()),
]


def call(memory: EpisodicMemory, path: str, args: tuple[Any, ...]) -> Any:
    target: Any = memory
    for part in path.split("."):
        target = getattr(target, part)
    return target(*args)


@pytest.mark.parametrize(("old", "new", "args"), MOVES)
def test_an_old_name_warns_naming_the_new_one_and_does_the_same(
    old: str, new: str, args: tuple[Any, ...], memory: EpisodicMemory
) -> None:
    twin = EpisodicMemory(store=None, clock=lambda: 100.0)
    twin.record(memory.get_episodes("login-1")["login-1"])
    with pytest.warns(DeprecationWarning, match=rf"EpisodicMemory\.{old}\b.*memory\.{new}"):
        before = call(memory, old, args)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        after = call(twin, new, args)
    assert type(before) is type(after)
    if not hasattr(before, "run_id"):  # an injection carries its own timestamp and ids
        assert before == after
    # The old name says so on the first line of its docstring.
    # (memory.lessons and memory.quarantine are callable sub-objects: their call is the
    # old method)
    old_member = type(getattr(memory, old)).__call__ if old in AREAS else getattr(type(memory), old)
    assert deprecated(old_member), old


def test_old_properties_and_recall_spellings_still_work_with_a_warning(
    memory: EpisodicMemory,
) -> None:
    options = RecallOptions(top_k=1)
    with pytest.warns(DeprecationWarning, match=r"memory\.runs\.holdout"):
        assert memory.holdout == memory.runs.holdout
    with pytest.warns(DeprecationWarning, match=r"memory\.forgetting\.retention"):
        assert memory.retention is memory.forgetting.retention is None
    with pytest.warns(DeprecationWarning, match=r"recall\(query, options=options\)"):
        old = memory.recall_with("Add a login form", options)
    assert old == memory.recall("Add a login form", options=options)
    with pytest.warns(DeprecationWarning, match=r"explain=True"):
        report = memory.recall_report("Add a login form", options)
    assert report == memory.recall("Add a login form", options=options, explain=True)
    with pytest.warns(DeprecationWarning, match=r"memory\.runs\.anote"):
        noting = memory.anote_injection("run-2", ["login-1"], "x")
    asyncio.run(noting)
    with pytest.warns(DeprecationWarning, match=r"memory\.runs\.acredit"):
        crediting = memory.acredit("run-2", 0.5)
    asyncio.run(crediting)
    assert memory.runs.log()[-1].reward == 0.5
    with pytest.warns(DeprecationWarning, match=r"memory\.calibration\.floor"):
        assert memory.relevance_floor == memory.calibration.floor


def test_lessons_and_forgetting_through_their_sub_objects(memory: EpisodicMemory) -> None:
    lesson = Lesson.create(
        title="Reject an empty e-mail", applies_when="a form takes an e-mail",
        do="check for '' first", sources=[LessonSource("login-1")], created_at=50.0,
    )  # fmt: skip
    assert memory.lessons.add([lesson]) == 1
    assert memory.lessons.get(lesson.lesson_id) == lesson
    assert memory.lessons.status(lesson.lesson_id) == "active"
    revised = memory.lessons.revise(lesson.lesson_id, do="strip, then check for ''")
    assert memory.lessons.status(lesson.lesson_id) == "archived"
    assert [one.lesson_id for one in memory.lessons.list()] == [revised.lesson_id]
    plan, receipt = memory.forgetting.prune(Retention(max_age=10.0), dry_run=True)
    assert plan.episode_ids == ("login-1",)
    assert receipt is not None
    assert len(memory) == 1  # a dry run removes nothing
    receipt = memory.forgetting.forget_all(reason="account closed")
    assert (receipt.episodes, len(memory), memory.lessons.list(None)) == (1, 0, ())
    assert [r.erasure_id for r in memory.forgetting.receipts()] == [receipt.erasure_id]


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
