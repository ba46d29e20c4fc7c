"""Quickstart: record coding-task episodes to an on-disk memory and learn from them.

Runs offline: on-disk Chroma, the packaged default embedder (a static model distilled
from all-MiniLM-L6-v2: no torch, no download), no API keys.

    python examples/quickstart.py [--path ./quickstart-memory]
"""

from __future__ import annotations

import argparse

from langchain_episodic import (
    ChromaEpisodeStore,
    EpisodicMemory,
    TaskCategory,
    TaskDescription,
    build_replay,
    choose_strategy,
    episode_from_tests,
)
from langchain_episodic.scoring.skills import compute_learning_curve, identify_weak_skills

HOUR = 3600.0
START = 1_780_000_000.0  # fixed times, so a re-run records the very same episodes
NOW = START + 48 * HOUR

# (task, category, complexity, strategy, tests passed of 10, iterations, solution, message)
HISTORY = [
    (
        "Implement a login form with email validation",
        TaskCategory.CODE_GENERATION,
        0.5,
        "iterative",
        6,
        3,
        "def login(email, password): validate(email); ...",
        "4 tests failed: empty password accepted",
    ),
    (
        "Fix the session timeout bug in the auth service",
        TaskCategory.DEBUGGING,
        0.6,
        "exploratory",
        3,
        4,
        "SESSION_TTL = 3600",
        "race condition remains on refresh",
    ),
    (
        "Write unit tests for the CSV parser",
        TaskCategory.TESTING,
        0.3,
        "defensive",
        9,
        2,
        "def test_parse_quoted_fields(): ...",
        "one flaky test on Windows paths",
    ),
    (
        "Implement a signup form with password strength validation",
        TaskCategory.CODE_GENERATION,
        0.5,
        "iterative",
        10,
        2,
        "def signup(email, password): check_strength(password); ...",
        "all tests pass",
    ),
    (
        "Debug the crash in the login handler on empty passwords",
        TaskCategory.DEBUGGING,
        0.4,
        "iterative",
        4,
        3,
        "if not password: raise ValueError",
        "crash fixed, 6 regressions",
    ),
    (
        "Refactor the payment module into smaller services",
        TaskCategory.REFACTORING,
        0.8,
        "conservative",
        10,
        5,
        "class PaymentGateway: ...",
        "all tests pass",
    ),
    (
        "Implement password reset by email",
        TaskCategory.CODE_GENERATION,
        0.6,
        "iterative",
        10,
        2,
        "def send_reset_link(user): token = sign(user.id); ...",
        "all tests pass",
    ),
    (
        "Fix the off-by-one error in the CSV parser pagination",
        TaskCategory.DEBUGGING,
        0.3,
        "exploratory",
        2,
        4,
        "for i in range(1, n): ...",
        "first row still skipped",
    ),
]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--path", default="./quickstart-memory", help="Chroma folder")
    args = parser.parse_args()

    memory = EpisodicMemory(store=ChromaEpisodeStore(path=args.path))
    # Reward = pass rate; outcome: success when all 10 tests passed, partial from 5.
    episodes = [
        episode_from_tests(
            TaskDescription(task, category, complexity),
            solution,
            tests_passed=passed,
            tests_total=10,
            message=message,
            strategy_used=strategy,
            iterations=iterations,
            episode_id=f"quickstart-{i}",
            timestamp=START + i * 6 * HOUR,
        )
        for i, (
            task,
            category,
            complexity,
            strategy,
            passed,
            iterations,
            solution,
            message,
        ) in enumerate(HISTORY)
    ]
    added = memory.record_many(episodes)  # a re-run adds nothing: episodes are immutable
    print(f"Memory at {args.path}: {len(memory)} episodes ({added} new this run)")
    print("Short-term window:", ", ".join(e.episode_id for e in memory.short_term))

    task = TaskDescription(
        "Implement a password change form with validation", TaskCategory.CODE_GENERATION, 0.5
    )
    # One recall gives the ranked episodes, the replay prompt and (asked for) a strategy.
    replay = build_replay(
        memory, task, top_k=3, current_time=NOW, max_tokens=600, include_strategy=True
    )
    print("\n=== Recalled (relevant only; priority = similarity scaled by value) ===")
    for hit in replay.results:
        print(
            f"{hit.priority:.3f}  similarity={hit.similarity:.2f}  {hit.episode.task.description}"
        )
    print("\n=== Replay prompt, with the strategy chosen from the same recall ===")
    print(replay.text)

    # The default embedder is semantic: a task worded differently still finds its match.
    print("\n=== Recall of a paraphrase (no word in common with the stored task) ===")
    paraphrase = "Build a sign-in page that checks the e-mail address"
    print(f"query: {paraphrase}")
    for hit in memory.recall(paraphrase, top_k=1, current_time=NOW):
        print(f"similarity={hit.similarity:.2f}  {hit.episode.task.description}")

    print("\n=== Skill profiles ===")
    profiles = memory.skill_profiles()
    # Weak as the strategy rule means it (scoring.skills.is_weak): a success rate below
    # 50% over at least 3 episodes; one 9/10 attempt is not enough to call a skill weak.
    weak = {p.category for p in identify_weak_skills(profiles)}
    for p in profiles:
        flag = "  <- weak" if p.category in weak else ""
        print(
            f"{p.category.value:<16} episodes={p.total_episodes:<3} "
            f"success={p.success_rate:>4.0%} reward={p.avg_reward:.2f} "
            f"iterations={p.avg_iterations:.1f}{flag}"
        )

    print("\n=== Strategy (choose_strategy: its own recall, and why) ===")
    for new_task in (
        task,
        TaskDescription("Fix the flaky CSV export", TaskCategory.DEBUGGING, 0.5),
        TaskDescription("Sketch a plugin system", TaskCategory.ARCHITECTURE, 0.2),
    ):
        choice = choose_strategy(new_task, memory, current_time=NOW)
        print(
            f"{new_task.description!r}: {choice.strategy} ({choice.reason}) - {choice.instruction}"
        )

    print("\n=== Learning curve (window 3) ===")
    for point in compute_learning_curve(memory.episodes(), window=3):
        bar = "#" * round(point.rolling_success_rate * 20)
        print(
            f"{point.episode_number:>3}  cumulative={point.cumulative_reward:5.2f}  "
            f"rolling success={point.rolling_success_rate:>4.0%} {bar}"
        )


if __name__ == "__main__":
    main()
