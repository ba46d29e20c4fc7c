"""The public API: exactly the documented names, all importable."""

from __future__ import annotations

import importlib
import importlib.metadata

import pytest

import langchain_episodic

EXPECTED_ALL = sorted(
    [
        "STRATEGY_POOL",
        "InMemoryEpisodeStore",
        "MigrationError",
        "MigrationReport",
        "QuarantineEvent",
        "VectorStoreEpisodeStore",
        "migrate_namespace",
        "ChromaEpisodeStore",
        "Episode",
        "EpisodeConflictError",
        "EpisodeFilter",
        "EpisodeSource",
        "EpisodeStore",
        "EpisodeValidationError",
        "EpisodicMemory",
        "EpisodicRetriever",
        "EpisodicValueError",
        "Feedback",
        "HashingEmbeddings",
        "LearningSnapshot",
        "MalformedRecordWarning",
        "OutcomeStatus",
        "PrioritizedResult",
        "PriorityBreakdown",
        "ReplayContext",
        "ReplayWeights",
        "SearchResult",
        "SkillProfile",
        "StoreConfigurationError",
        "StoreLockedError",
        "StrategyChoice",
        "TaskCategory",
        "TaskDescription",
        "__version__",
        "approximate_token_count",
        "areplay_prompt",
        "build_replay_context",
        "choose_strategy",
        "compute_learning_curve",
        "compute_priority",
        "compute_skill_profiles",
        "cosine_similarity",
        "create_recall_tool",
        "create_replay_runnable",
        "episode_from_tests",
        "explain_priority",
        "feedback_from_tests",
        "format_replay_prompt",
        "identify_weak_skills",
        "outcome_for_pass_rate",
        "render_episode",
        "replay_prompt",
        "result_to_document",
        "select_strategy",
        "select_strategy_thompson",
        "temporal_decay",
    ]
)

SUBMODULES = [
    "classic",
    "cli",
    "diagnostics",
    "embeddings",
    "episode",
    "errors",
    "feedback",
    "filters",
    "in_memory_store",
    "local_models",
    "memory",
    "middleware",
    "migration",
    "prompting",
    "quarantine",
    "recall_options",
    "replay",
    "retriever",
    "runnable",
    "scoring",
    "simulation",
    "skills",
    "store",
    "store_base",
    "strategy",
    "tools",
    "vectorstore_store",
]


def test_all_is_exactly_the_expected_names() -> None:
    assert sorted(langchain_episodic.__all__) == EXPECTED_ALL


def test_all_has_no_duplicates() -> None:
    assert len(set(langchain_episodic.__all__)) == len(langchain_episodic.__all__)


@pytest.mark.parametrize("name", EXPECTED_ALL)
def test_every_public_name_is_importable(name: str) -> None:
    namespace: dict[str, object] = {}
    exec(f"from langchain_episodic import {name}", namespace)
    assert namespace[name] is getattr(langchain_episodic, name)


def test_star_import_gives_exactly_all() -> None:
    namespace: dict[str, object] = {}
    exec("from langchain_episodic import *", namespace)
    assert sorted(k for k in namespace if k != "__builtins__") == EXPECTED_ALL


def test_public_names_come_from_their_submodules() -> None:
    for module_name in SUBMODULES:
        module = importlib.import_module(f"langchain_episodic.{module_name}")
        for name in getattr(module, "__all__", ()):
            if name in langchain_episodic.__all__:
                assert getattr(langchain_episodic, name) is getattr(module, name)


@pytest.mark.parametrize("module_name", SUBMODULES)
def test_submodule_all_names_exist(module_name: str) -> None:
    module = importlib.import_module(f"langchain_episodic.{module_name}")
    assert module.__all__
    for name in module.__all__:
        assert hasattr(module, name), f"{module_name}.__all__ lists missing {name!r}"


def test_version_matches_the_installed_distribution() -> None:
    assert langchain_episodic.__version__ == importlib.metadata.version("langchain-episodic")
    assert langchain_episodic.__version__ == "0.1.0"


def test_errors_subclass_builtins() -> None:
    assert issubclass(langchain_episodic.EpisodicValueError, ValueError)
    assert issubclass(langchain_episodic.EpisodeValidationError, ValueError)
    assert issubclass(langchain_episodic.EpisodeConflictError, ValueError)
    assert issubclass(langchain_episodic.StoreConfigurationError, RuntimeError)
