"""The façade's face: a small core, one sub-object per area, and no 0.1 spelling left."""

from __future__ import annotations

import importlib
import inspect
from typing import Any

import pytest

import langchain_episodic
from langchain_episodic import EpisodicMemory, episode_from_tests
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.retention import Retention

CORE = {
    "record", "arecord", "record_many", "arecord_many", "recall", "arecall", "episodes",
    "get_episodes", "aget_episodes", "skill_profiles", "namespaces", "for_namespace",
    "short_term", "task", "atask", "forget", "aforget", "as_retriever", "as_runnable",
    "now", "flush", "calibration", "background", "store", "embeddings", "namespace",
    "short_term_limit",
}  # fmt: skip
AREAS = {"runs", "lessons", "quarantine", "forgetting", "journal", "replay"}

# Every name of 0.1 that moved to a sub-object in 0.2 (the CHANGELOG's move table).
OLD_NAMES = (
    "recall_with recall_report arecall_with arecall_report note_injection anote_injection "
    "credit acredit close_run aclose_run expire_open_runs aexpire_open_runs reload_credit "
    "areload_credit open_runs credit_log utility utilities harmful demoted lift is_holdout "
    "holdout open_run_ttl aquarantine release arelease pin apin unpin aunpin pinned "
    "quarantined quarantine_log merge_quarantine_log add_lessons aadd_lessons lesson "
    "lesson_status lesson_utility revise_lesson arevise_lesson consolidate_lessons "
    "aconsolidate_lessons recall_lessons arecall_lessons forget_all aforget_all prune aprune "
    "erasures aerasures forgotten unfinished_erasures retention relevance_floor "
    "journal_entries merge_journal checkpoint_journal acheckpoint_journal register_adapter"
).split()

OLD_MODULES = (
    "episode filters feedback lessons quarantine relevance ranking recall_options credit "
    "strategy skills replay summary credit_log lesson_log"
).split()


def public_names(value: Any) -> set[str]:
    return {name for name in dir(value) if not name.startswith("_")}


def test_the_facade_is_a_core_of_verbs_and_one_sub_object_per_area() -> None:
    memory = EpisodicMemory()
    assert public_names(memory) == CORE | AREAS
    assert len(public_names(EpisodicMemory)) <= 30  # the class; instances add 4 settings
    for area in AREAS:
        assert not callable(getattr(memory, area)), area  # 0.1's memory.lessons() is gone


@pytest.mark.parametrize("old", OLD_NAMES)
def test_no_name_of_0_1_is_left_on_the_facade(old: str) -> None:
    assert old not in CORE | AREAS
    with pytest.raises(AttributeError, match=old):
        getattr(EpisodicMemory(), old)


@pytest.mark.parametrize("old", OLD_MODULES)
def test_no_module_path_of_0_1_imports(old: str) -> None:
    with pytest.raises(ModuleNotFoundError, match=f"langchain_episodic.{old}"):
        importlib.import_module(f"langchain_episodic.{old}")


@pytest.mark.parametrize(
    "old", ["areas", "_adapters", "integrations.retriever", "integrations.runnable"]
)
def test_no_forwarding_layer_nor_registry_of_0_2_dev_is_left(old: str) -> None:
    with pytest.raises(ModuleNotFoundError):
        importlib.import_module(f"langchain_episodic.{old}")


def test_each_area_of_the_facade_is_the_service_that_owns_the_job() -> None:
    memory = EpisodicMemory()
    owners = {
        area: f"{type(getattr(memory, area)).__module__}.{type(getattr(memory, area)).__name__}"
        for area in sorted(AREAS)
    }
    assert owners == {
        "forgetting": "langchain_episodic.service.erasure.Eraser",
        "journal": "langchain_episodic.service.journal.Journal",
        "lessons": "langchain_episodic.service.lessons.Lessons",
        "quarantine": "langchain_episodic.service.quarantine.Quarantine",
        "replay": "langchain_episodic.service.replay.Replays",
        "runs": "langchain_episodic.service.credit.Runs",
    }
    assert memory.runs is memory.runs  # held, not rebuilt per access


def test_the_scoring_package_serves_no_old_name() -> None:
    import langchain_episodic.scoring as scoring  # noqa: PLC0415

    with pytest.raises(AttributeError, match="ReplayWeights"):
        _ = scoring.ReplayWeights  # type: ignore[attr-defined]


def test_dir_of_the_package_shows_its_public_api_only() -> None:
    assert set(dir(langchain_episodic)) - {"__version__"} <= set(langchain_episodic.__all__) | {
        name for name in dir(langchain_episodic) if name.startswith("__")
    }
    for helper in ("Any", "TYPE_CHECKING", "import_module", "annotations", "metadata"):
        assert helper not in dir(langchain_episodic), helper


def test_every_public_method_of_the_facade_documents_itself() -> None:
    for name in public_names(EpisodicMemory):
        member = inspect.getattr_static(EpisodicMemory, name)
        target = member.fget if isinstance(member, property) else member
        doc = inspect.getdoc(target) or ""
        assert doc, name
        assert not doc.startswith("Deprecated"), name


@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: 100.0)
    memory.record(
        episode_from_tests("Add a login form", "def login(): ...", 7, 10, "empty e-mail",
                           episode_id="login-1", timestamp=1.0)
    )  # fmt: skip
    return memory


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


def test_help_of_the_package_says_where_to_start_before_its_layers() -> None:
    doc = langchain_episodic.__doc__ or ""
    start, layers = doc.index("Where to start:"), doc.index("the package is layered")
    assert start < layers
    for name in ("EpisodicMemory(", "build_replay", "EpisodicMemoryMiddleware", "memory.runs"):
        assert doc.index(name) < layers, name
