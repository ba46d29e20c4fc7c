"""A seeded, simulated coding-task environment: does memory make an agent better?

The environment stands in for an LLM agent and its test suite, so that the memory's
effect on *strategy choice* can be measured without a model:

* A task belongs to one of ten **sub-topics** (``code_generation/auth``,
  ``debugging/concurrency``, ``refactoring/legacy``, ``testing/flaky``,
  ``architecture/plugins`` ...). Its description is filled in from the sub-topic's
  templates, so tasks of one sub-topic share words (what the lexical
  :class:`~langchain_episodic.HashingEmbeddings` finds) yet read differently. Its
  complexity is drawn from the sub-topic's range.
* Each sub-topic has a **hidden success probability** per strategy of
  :data:`~langchain_episodic.STRATEGY_POOL`, with one strategy clearly best. For
  several sub-topics the best strategy is *not* what the article's complexity
  fallback picks (``"iterative"`` or ``"exploratory"``), so only experience or
  exploration can find it.
* An **attempt** runs 10 simulated tests: with the strategy's success probability
  all pass; otherwise each of 9 passes with a probability that also grows with the
  strategy's quality. :func:`~langchain_episodic.feedback_from_tests` turns the
  count into feedback and an outcome.

Randomness is *common* across strategies and variants: the task at index ``i`` and
the uniform draws of its attempt depend only on ``(seed, i)``, and a strategy
succeeds when its probability exceeds the task's draw. Two agents that pick the same
strategy for a task get the same result, and a better strategy never does worse on
the same task: differences between variants come from strategy choice, not luck.

:func:`run_variant` runs one agent (a *variant* of strategy selection, see
:data:`VARIANTS`) over a task sequence with a fresh in-process
:class:`~langchain_episodic.EpisodicMemory`; :func:`compare_variants` runs them all
over several seeds and summarises the learning curves in a :class:`BenchmarkReport`,
which :func:`format_report` prints and :func:`plot_report` draws.

Example:
    .. code-block:: python

        from simulation import compare_variants, format_report

        report = compare_variants(n_tasks=100, seeds=(0, 1))
        print(format_report(report))
"""

from simulation.benchmark import (
    EVIDENCE_VARIANTS,
    VARIANT_DESCRIPTIONS,
    VARIANTS,
    BenchmarkReport,
    VariantSummary,
    compare_variants,
    format_report,
    plot_report,
    run_variant,
)
from simulation.credit_world import (
    CREDIT_VARIANT_DESCRIPTIONS,
    CREDIT_VARIANTS,
    DIFFERENTIATED_WORLD,
    EPISODE_KINDS,
    EQUAL_WORLD,
    LEARNING_VARIANTS,
    ORACLE_VARIANT,
    WORLDS,
    CreditAttempt,
    CreditComparison,
    CreditRun,
    CreditSummary,
    CreditWorld,
    CreditWorldEnvironment,
    HiddenEffect,
    HiddenEpisode,
    Interval,
    compare_credit_variants,
    format_credit_report,
    run_credit_variant,
    t_interval,
)
from simulation.environment import (
    DEFAULT_SEEDS,
    START_TIME,
    SUBTOPICS,
    TASK_INTERVAL,
    TESTS_PER_TASK,
    CodingTaskEnvironment,
    SimulatedTask,
    Subtopic,
)
from simulation.lesson_world import (
    BASELINE_LESSON_VARIANT,
    DEFAULT_LESSON_WORLD,
    LESSON_VARIANTS,
    HiddenLesson,
    LessonComparison,
    LessonRun,
    LessonSummary,
    LessonVariant,
    LessonWorld,
    LessonWorldEnvironment,
    ScriptedReflector,
    compare_lesson_variants,
    format_lesson_report,
    run_lesson_variant,
)

__all__ = [
    "BASELINE_LESSON_VARIANT",
    "CREDIT_VARIANTS",
    "CREDIT_VARIANT_DESCRIPTIONS",
    "DEFAULT_LESSON_WORLD",
    "DEFAULT_SEEDS",
    "DIFFERENTIATED_WORLD",
    "EPISODE_KINDS",
    "EQUAL_WORLD",
    "EVIDENCE_VARIANTS",
    "LEARNING_VARIANTS",
    "LESSON_VARIANTS",
    "ORACLE_VARIANT",
    "START_TIME",
    "SUBTOPICS",
    "TASK_INTERVAL",
    "TESTS_PER_TASK",
    "VARIANTS",
    "VARIANT_DESCRIPTIONS",
    "WORLDS",
    "BenchmarkReport",
    "CodingTaskEnvironment",
    "CreditAttempt",
    "CreditComparison",
    "CreditRun",
    "CreditSummary",
    "CreditWorld",
    "CreditWorldEnvironment",
    "HiddenEffect",
    "HiddenEpisode",
    "HiddenLesson",
    "Interval",
    "LessonComparison",
    "LessonRun",
    "LessonSummary",
    "LessonVariant",
    "LessonWorld",
    "LessonWorldEnvironment",
    "ScriptedReflector",
    "SimulatedTask",
    "Subtopic",
    "VariantSummary",
    "compare_credit_variants",
    "compare_lesson_variants",
    "compare_variants",
    "format_credit_report",
    "format_lesson_report",
    "format_report",
    "plot_report",
    "run_credit_variant",
    "run_lesson_variant",
    "run_variant",
    "t_interval",
]
