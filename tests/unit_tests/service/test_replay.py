"""The replay service: what build_replay and every integration call, reached as memory.replay."""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import numpy as np
import pytest

from langchain_episodic import EpisodicMemory, RecallOptions, build_replay, episode_from_tests
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.scoring.strategy import DEFAULT_EVIDENCE_K
from langchain_episodic.service.replay import Replay, Replays
from langchain_episodic.stores import InMemoryEpisodeStore

NOW = 10 * 86_400.0


@pytest.fixture
def memory() -> EpisodicMemory:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW)
    memory.record_many(
        [
            episode_from_tests("Parse the yaml config and check its keys", "def parse(): ...",
                               5, 5, "ok", episode_id="yaml-ok", timestamp=NOW - 60),
            episode_from_tests("Parse the yaml config file", "def parse_file(): ...",
                               1, 5, "KeyError: 'name'", episode_id="yaml-bad",
                               timestamp=NOW - 30),
            episode_from_tests("Render the invoice as a PDF", "def render(): ...", 4, 4, "ok",
                               episode_id="pdf-ok", timestamp=NOW - 90),
        ]
    )  # fmt: skip
    return memory


def test_the_facade_reaches_the_service_and_build_replay_is_the_function_over_it(
    memory: EpisodicMemory,
) -> None:
    assert isinstance(memory.replay, Replays)
    direct = memory.replay.build("Parse the yaml settings", top_k=2, include_strategy=True)
    through = build_replay(memory, "Parse the yaml settings", top_k=2, include_strategy=True)
    assert isinstance(direct, Replay)
    assert direct == through
    assert direct.shown
    assert "yaml" in direct.text
    assert direct.strategy is not None


def test_the_async_twin_builds_the_same_replay(memory: EpisodicMemory) -> None:
    again = asyncio.run(memory.replay.abuild("Parse the yaml settings", top_k=2))
    assert again == memory.replay.build("Parse the yaml settings", top_k=2)


def test_report_is_recall_explained_with_strategy_evidence(memory: EpisodicMemory) -> None:
    options = RecallOptions(top_k=2)
    report = memory.replay.report("Parse the yaml settings", options, evidence_k=DEFAULT_EVIDENCE_K)
    assert report.results == memory.recall("Parse the yaml settings", options=options)
    assert {n.episode_id for n in report.neighbours} >= {"yaml-ok"}
    assert memory.replay.report("Parse the yaml settings", options).neighbours == ()


def test_a_named_run_is_noted_and_a_holdout_run_is_shown_nothing() -> None:
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), clock=lambda: NOW, holdout=0.5, rng=np.random.default_rng(0)
    )
    memory.record(episode_from_tests("Parse the yaml config", "def parse(): ...", 5, 5, "ok",
                                     episode_id="yaml-ok", timestamp=NOW - 60))  # fmt: skip
    held = next(f"run-{i}" for i in range(100) if memory.runs.is_holdout(f"run-{i}"))
    replay = memory.replay.build("Parse the yaml config", run_id=held)
    assert replay.holdout
    assert (replay.text, replay.shown, replay.report) == ("", (), None)
    assert memory.runs.pending()[held][0].holdout
    shown = next(f"run-{i}" for i in range(100) if not memory.runs.is_holdout(f"run-{i}"))
    replay = memory.replay.build("Parse the yaml config", run_id=shown)
    assert replay.shown == ("yaml-ok",)
    assert memory.runs.pending()[shown][0].episode_ids == ("yaml-ok",)


def test_bad_arguments_are_refused_by_name(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match="lesson_k"):
        memory.replay.build("Parse the yaml config", lesson_k=-1)
    with pytest.raises(EpisodicValueError, match="near_misses"):
        memory.replay.build("Parse the yaml config", near_misses=0.8, renderer="detailed")
    with pytest.raises(TypeError, match="nope"):
        memory.replay.build("Parse the yaml config", nope=1)


def test_no_module_outside_the_facade_touches_a_private_of_it() -> None:
    # An underscore name of the façade's, read elsewhere: a module reaches a service
    # through the façade's public sub-objects, never its privates.
    package = Path(__file__).resolve().parents[3] / "langchain_episodic"
    offences = []
    for path in package.rglob("*.py"):
        if path.name == "memory.py" and path.parent == package:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in {"memory", "mem", "m", "target", "source"}
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                offences.append(f"{path.relative_to(package)}:{node.lineno} .{node.attr}")
    assert offences == []
