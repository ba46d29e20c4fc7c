"""The memory learns what to show from its credited runs, and keeps it as memory state.

Across the replay, the credit journal, the book, reopening, migration, erasure and the
lift report: a run's prompt notes its presentation policy, the run's outcome is
evidence for that policy, and ``renderer="auto"`` then shows with the policy that
earns most (``"compact"`` until outcomes say otherwise; a named policy stays pinned).
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    HashingEmbeddings,
    build_replay,
    migrate_namespace,
)
from langchain_episodic.model.credit import CreditEvent, Injection, decode_entry, encode_credit
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.unit_tests.factories import make_episode

NOW = 1_700_000_000.0
TASK = "Implement a login form for the admin page"
WARNING = "warn"


def seeded(store: object = None, seed: int = 0, **kwargs: object) -> EpisodicMemory:
    return EpisodicMemory(
        store=store if store is not None else InMemoryEpisodeStore(),  # type: ignore[arg-type]
        embeddings=HashingEmbeddings(),
        clock=lambda: NOW,
        rng=np.random.default_rng(seed),
        **kwargs,  # type: ignore[arg-type]
    )


def with_a_fix_and_a_warning(memory: EpisodicMemory) -> EpisodicMemory:
    """A passing login form, and a failed one whose feedback warns (nothing fixed it)."""
    memory.record(
        make_episode(
            episode_id="ok",
            description="Implement a login form with validation",
            reward=1.0,
            tests_passed=5,
            tests_total=5,
        )
    )
    memory.record(
        make_episode(
            episode_id=WARNING,
            description="Implement a login form that locks accounts",
            reward=0.2,
            outcome="failure",
            tests_passed=1,
            tests_total=5,
            message="locked accounts can still log in",
        )
    )
    return memory


def reader(shown: tuple[str, ...]) -> float:
    """A model that reads the warning: it pays to show the failure's feedback."""
    return 1.0 if WARNING in shown else 0.3


def copier(shown: tuple[str, ...]) -> float:
    """A model that copies what it sees: a shown failure is copied."""
    return 0.2 if WARNING in shown else 0.8


def run_many(
    memory: EpisodicMemory, model: Callable[[tuple[str, ...]], float], runs: int, start: int = 0
) -> list[str]:
    """``runs`` credited runs; the policy each one's replay used."""
    used = []
    for index in range(start, start + runs):
        run = f"run-{index}"
        replay = build_replay(memory, TASK, run_id=run)
        memory.runs.credit(run, model(replay.shown))
        used.append("holdout" if replay.presentation is None else replay.presentation.policy)
    return used


def test_without_outcomes_nothing_changes() -> None:
    memory = with_a_fix_and_a_warning(seeded())
    replay = build_replay(memory, TASK, run_id="run-0")
    pinned = build_replay(memory, TASK, renderer="compact")
    assert replay.presentation is not None
    assert (replay.presentation.policy, replay.presentation.reason) == ("compact", "prior")
    assert (replay.text, replay.shown) == (pinned.text, pinned.shown) == (replay.text, ("ok",))
    assert memory.runs.presentation().reason == "prior"


def test_a_reader_teaches_the_memory_to_show_failures_feedback() -> None:
    memory = with_a_fix_and_a_warning(seeded())
    used = run_many(memory, reader, 120)
    learned = memory.runs.presentation("code_generation")
    assert learned.reason == "learned"
    assert learned.policy in ("feedback", "ranked")
    late = Counter(used[-40:])
    assert late["compact"] <= 4, late
    assert build_replay(memory, TASK).shown == ("ok", WARNING)  # no run named: the learned one


def test_a_copier_keeps_the_default_and_explores_less_and_less() -> None:
    memory = with_a_fix_and_a_warning(seeded(seed=1))
    used = run_many(memory, copier, 120)
    assert memory.runs.presentation().policy == "compact"
    assert Counter(used[-40:])["compact"] >= 36
    assert Counter(used[:40])["compact"] < Counter(used[-40:])["compact"]


def test_a_named_policy_is_pinned_and_does_not_learn() -> None:
    memory = with_a_fix_and_a_warning(seeded())
    run_many(memory, reader, 60)
    pinned = build_replay(memory, TASK, run_id="pinned", renderer="compact")
    assert pinned.presentation is not None
    assert (pinned.presentation.policy, pinned.presentation.reason) == ("compact", "pinned")
    assert pinned.shown == ("ok",)


def test_the_policy_is_noted_with_the_run_and_credited_with_its_outcome() -> None:
    memory = with_a_fix_and_a_warning(seeded())
    replay = build_replay(memory, TASK, run_id="run-1", renderer="ranked")
    noted = memory.runs.pending()["run-1"]
    assert [i.policy for i in noted] == ["ranked"]
    event = memory.runs.credit("run-1", 0.7)
    assert event.policy == "ranked"
    assert event.episode_ids == replay.shown
    assert decode_entry(*encode_credit(event)) == event
    # Entries of runs without a policy keep the bytes they had before policies existed.
    plain = CreditEvent("r", 0.5, ("e",), "debugging", 1.0)
    assert "policy" not in encode_credit(plain)[2]
    with pytest.raises(ValueError, match="policy"):
        Injection("r", (), "task", "debugging", 1.0, policy="")


def test_the_learned_choice_survives_reopening_and_migration_and_goes_with_forget_all(
    tmp_path: Path,
) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "memory")
    memory = with_a_fix_and_a_warning(seeded(store))
    run_many(memory, reader, 80)
    learned = memory.runs.presentation()
    assert learned.policy != "compact"
    store.close()

    reopened_store = ChromaEpisodeStore(path=tmp_path / "memory")
    reopened = seeded(reopened_store)
    assert reopened.runs.presentation() == learned

    target = seeded(InMemoryEpisodeStore())
    migrate_namespace(reopened, target)
    assert target.runs.presentation() == learned

    reopened.forgetting.forget_all(reason="the user left")
    assert reopened.runs.presentation().reason == "prior"
    reopened_store.close()


def test_the_lift_report_and_the_cli_show_what_each_policy_earns(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_episodic.cli import main  # noqa: PLC0415

    store = ChromaEpisodeStore(path=tmp_path / "memory")
    memory = with_a_fix_and_a_warning(seeded(store, holdout=0.2))
    used = run_many(memory, reader, 120)
    report = memory.runs.lift()
    rows = {item.policy: item for item in report.by_presentation}
    assert set(rows) <= {"compact", "feedback", "ranked"}
    assert "compact" in rows
    # Every run shown memory but the first ten (drawn by no one: the prior) counts.
    shown_memory = 120 - used.count("holdout")
    assert sum(item.lift.with_memory.runs for item in rows.values()) == shown_memory - 10
    better = next(p for p in ("feedback", "ranked") if p in rows and rows[p].versus_default)
    low, diff, _high = rows[better].versus_default  # type: ignore[misc]
    assert diff == pytest.approx(0.7, abs=0.01)
    assert low > 0
    assert rows[better].lift.reward_lift is not None
    assert rows[better].lift.reward_lift > 0
    assert report.presentation == memory.runs.presentation()
    store.close()

    assert main(["--path", str(tmp_path / "memory"), "lift"]) == 0
    out = capsys.readouterr().out
    assert f"presentation shown now: {report.presentation.policy}" in out
    assert f"{better}: +0.700" in out
    assert "against compact" in out
    assert main(["--path", str(tmp_path / "memory"), "lift", "--json"]) == 0
    payload = json.loads(capsys.readouterr().out)["presentation"]
    assert payload["policy"] == report.presentation.policy
    assert {row["policy"] for row in payload["policies"]} == set(rows)


def test_a_bad_category_is_refused_by_name() -> None:
    with pytest.raises(ValueError, match="category='cooking'"):
        seeded().runs.presentation("cooking")


def test_near_misses_need_the_compact_renderer() -> None:
    memory = with_a_fix_and_a_warning(seeded())
    with pytest.raises(ValueError, match=r"near_misses=0\.8"):
        build_replay(memory, TASK, renderer="detailed", near_misses=0.8)


def test_a_run_is_shown_one_way_and_a_seed_reproduces_the_draws() -> None:
    def policies(seed: int) -> list[str]:
        memory = with_a_fix_and_a_warning(seeded(seed=seed))
        return run_many(memory, reader, 40)

    assert policies(5) == policies(5)
    assert policies(5) != policies(6)
    memory = with_a_fix_and_a_warning(seeded(seed=5))
    run_many(memory, reader, 40)
    first = build_replay(memory, TASK, run_id="two-prompts")
    second = build_replay(memory, "Implement a login form: the next step", run_id="two-prompts")
    assert first.presentation is not None
    assert second.presentation is not None
    assert second.presentation.policy == first.presentation.policy
    assert second.presentation.reason == "run"
    assert memory.runs.credit("two-prompts", 1.0).policy == first.presentation.policy
