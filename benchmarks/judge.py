"""The real-model benchmark's judge: run an attempt's tests in a subprocess.

Each test is one statement (an ``assert``), run on its own, so an attempt gets a count
of tests passed, and the message names the first failure the way a test runner would:
``count_vowels('xyz') returned 1, expected 0``. The subprocess has a time limit, so an
attempt that loops forever fails its tests rather than the benchmark. The same code
under the same tests is judged once per process (a model that copies what it is shown
writes the same code again and again; the tests are deterministic).
"""

from __future__ import annotations

import functools
import json
import os
import re
import subprocess
import sys
import tempfile
from typing import Protocol

__all__ = ["TIME_LIMIT", "run_tests"]

TIME_LIMIT = 10.0
"""Seconds an attempt's tests may take in all."""

_EQUALITY = re.compile(r"^assert (?P<call>.+?) == (?P<expected>.+)$", re.S)

_RUNNER = r"""
import json, sys
results = []
namespace = {}
try:
    exec(compile(SOLUTION, "<solution>", "exec"), namespace)
except BaseException as error:  # the attempt does not even define its function
    print(json.dumps({"load_error": type(error).__name__ + ": " + str(error)[:200]}))
    sys.exit(0)
for call, expected, statement in TESTS:
    try:
        if call is None:
            exec(compile(statement, "<test>", "exec"), namespace)
            results.append([True, ""])
            continue
        got = eval(call, namespace)
        want = eval(expected, namespace)
        ok = got == want if not isinstance(want, float) else abs(got - want) < 1e-6
        results.append([bool(ok), "" if ok else f"{call} returned {got!r}, expected {want!r}"])
    except BaseException as error:
        why = f"{type(error).__name__}: {str(error)[:120]}"
        results.append([False, f"{(call or 'test')} raised {why}"])
print(json.dumps({"results": results}))
"""


class _Testable(Protocol):
    tests: tuple[str, ...]


def run_tests(
    task: _Testable, solution: str, time_limit: float = TIME_LIMIT
) -> tuple[int, int, str]:
    """Run ``task.tests`` against ``solution``: ``(passed, total, message)``.

    The message is empty when every test passed, else the first failure; an attempt
    still running after ``time_limit`` seconds fails every test.
    """
    tests = []
    for statement in task.tests:
        match = _EQUALITY.match(statement.strip())
        if match:
            tests.append((match["call"], match["expected"], statement))
        else:
            tests.append((None, None, statement))
    script = f"SOLUTION = {solution!r}\nTESTS = {tests!r}\n{_RUNNER}"
    return _judged(script, len(tests), time_limit)


@functools.lru_cache(maxsize=4096)
def _judged(script: str, total: int, time_limit: float) -> tuple[int, int, str]:
    """Run the test ``script`` in a subprocess: ``(passed, total, message)``."""
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(script)
        path = handle.name
    try:
        done = subprocess.run(
            [sys.executable, "-I", path],
            capture_output=True,
            text=True,
            timeout=time_limit,
            check=False,
            cwd=tempfile.gettempdir(),
        )
    except subprocess.TimeoutExpired:
        return 0, total, f"timed out after {time_limit:g} s"
    finally:
        os.unlink(path)
    lines = done.stdout.strip().splitlines()
    try:
        report = json.loads(lines[-1]) if lines else {}
    except json.JSONDecodeError:
        report = {}
    if "load_error" in report:
        return 0, total, f"the code does not run: {report['load_error']}"
    results = report.get("results")
    if not isinstance(results, list) or len(results) != total:
        tail = (done.stderr or done.stdout).strip().splitlines()[-1:] or ["no output"]
        return 0, total, f"the tests did not finish: {tail[0][:200]}"
    passed = sum(1 for ok, _ in results if ok)
    message = next((why for ok, why in results if not ok), "")
    return passed, total, message
