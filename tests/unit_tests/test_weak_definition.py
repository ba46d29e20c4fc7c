"""One definition of weak: every place that says "weak" flags the same categories.

The strategy rule (levels 2 of both the default and the article's hierarchy),
``identify_weak_skills``, the CLI's ``skills`` command and the quickstart all call
``scoring.skills.is_weak``: a success rate below 0.5 over at least 3 episodes.
Once the quickstart and ``skills`` flagged a category after a single 9/10 attempt
while the strategy rule needed 3 episodes (issue 25).
"""

from __future__ import annotations

import re
import runpy
import sys
from pathlib import Path

import pytest

from langchain_episodic import Episode, TaskCategory, TaskDescription, episode_from_tests
from langchain_episodic.scoring.skills import SkillProfile, identify_weak_skills
from langchain_episodic.scoring.strategy import strategy_from_evidence, strategy_from_results
from tests.helpers.cli import filled, open_memory, run

QUICKSTART = Path(__file__).resolve().parents[2] / "examples" / "quickstart.py"
C = TaskCategory

# (category, tests passed of 10) per episode.
HISTORY = [
    (C.TESTING, 9),  # one partial success: too few episodes to judge
    (C.CODE_GENERATION, 7),  # three partials: never finished, weak
    (C.CODE_GENERATION, 7),
    (C.CODE_GENERATION, 7),
    (C.DEBUGGING, 2),  # three failures: weak
    (C.DEBUGGING, 3),
    (C.DEBUGGING, 4),
    (C.ARCHITECTURE, 1),  # two failures: too few to judge
    (C.ARCHITECTURE, 0),
    (C.REFACTORING, 10),  # one success in four: weak
    (C.REFACTORING, 4),
    (C.REFACTORING, 1),
    (C.REFACTORING, 3),
]
WEAK = {C.CODE_GENERATION, C.DEBUGGING, C.REFACTORING}


def episodes() -> list[Episode]:
    return [
        episode_from_tests(
            TaskDescription(f"{category.value} task number {i}", category, 0.5),
            "...",
            passed,
            10,
            strategy_used="iterative",
            episode_id=f"ep-{i}",
            timestamp=1_780_000_000.0 + i,
        )
        for i, (category, passed) in enumerate(HISTORY)
    ]


def rule_says_weak(profiles: tuple[SkillProfile, ...]) -> set[TaskCategory]:
    """Categories for which the strategy rule's level 2 answers "defensive"."""
    weak = set()
    for category in TaskCategory:
        task = TaskDescription("anything", category, 0.5)
        default = strategy_from_evidence(task, [], profiles)
        article = strategy_from_results(task, (), profiles)
        assert default == article  # both hierarchies share level 2
        if default.reason == "weak_category":
            weak.add(category)
    return weak


def cli_says_weak(capsys: pytest.CaptureFixture[str], path: Path) -> set[TaskCategory]:
    code, out, err = run(capsys, "--path", str(path), "skills")
    assert (code, err) == (0, "")
    flagged = re.findall(r"^(\w+)\s.*\sWEAK\s*$", out, flags=re.MULTILINE)
    return {TaskCategory(name) for name in flagged}


def test_every_place_agrees_on_the_same_episodes(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    path = filled(tmp_path / "memory", episodes())
    profiles = open_memory(path).skill_profiles()
    assert {p.category for p in identify_weak_skills(profiles)} == WEAK
    assert rule_says_weak(profiles) == WEAK
    assert cli_says_weak(capsys, path) == WEAK
    # The article's rule (any number of episodes) would also flag the single 9/10 attempt
    # and the two failures.
    article = {p.category for p in profiles if p.success_rate < 0.5}
    assert article == WEAK | {C.TESTING, C.ARCHITECTURE}


def test_the_quickstart_flags_what_the_rule_and_the_cli_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "quickstart-memory"
    monkeypatch.setattr(sys, "argv", [str(QUICKSTART), "--path", str(path)])
    runpy.run_path(str(QUICKSTART), run_name="__main__")
    out = capsys.readouterr().out
    flagged = {TaskCategory(name) for name in re.findall(r"^(\w+)\s.*<- weak", out, re.M)}
    profiles = open_memory(path).skill_profiles()
    # The quickstart's testing category is one 9/10 attempt: never weak.
    assert next(p for p in profiles if p.category is C.TESTING).total_episodes == 1
    assert flagged == {C.DEBUGGING}
    assert flagged == {p.category for p in identify_weak_skills(profiles)}
    assert flagged == rule_says_weak(profiles)
    assert flagged == cli_says_weak(capsys, path)
