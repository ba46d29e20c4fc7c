"""Shared pieces of the speed benchmarks: fixed vectors, episodes, timing helpers."""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskCategory, TaskDescription

os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")

DIM = 384
CACHE = Path(__file__).resolve().parent / ".cache"
RESULTS = Path(__file__).resolve().parent / "results"
CATEGORIES = list(TaskCategory)
OUTCOMES = list(OutcomeStatus)


def unit_vectors(n: int, seed: int) -> np.ndarray:
    """``n`` fixed random unit vectors of 384 dimensions (float32), same for a seed."""
    rng = np.random.default_rng(seed)
    vectors = rng.standard_normal((n, DIM)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


class PrecomputedEmbeddings(Embeddings):
    """Looks texts up in a fixed table, so embedding costs nothing in the timings.

    Text ``"task <i> ..."`` maps to row ``i`` of the episode vectors and
    ``"query <j>"`` to row ``j`` of the query vectors.
    """

    def __init__(self, episodes: np.ndarray, queries: np.ndarray) -> None:
        self.episodes = episodes
        self.queries = queries

    def _vector(self, text: str) -> list[float]:
        head = text.split(" ", 2)
        if len(head) < 2 or head[0] not in ("task", "query") or not head[1].isdigit():
            # Any other text (the memory's fingerprint probe when it opens) gets row 0.
            fallback: list[float] = self.queries[0].tolist()
            return fallback
        table = self.queries if head[0] == "query" else self.episodes
        result: list[float] = table[int(head[1])].tolist()
        return result

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        return [self._vector(text) for text in texts]

    def embed_query(self, text: str) -> list[float]:
        return self._vector(text)


def make_episodes(start: int, stop: int) -> list[Episode]:
    """Episodes ``start..stop-1`` with a realistic amount of text, one per minute."""
    return [
        Episode(
            episode_id=f"ep-{i:07d}",
            task=TaskDescription(
                f"task {i} implement feature {i % 97} of module {i % 13}",
                CATEGORIES[i % len(CATEGORIES)],
                (i % 10) / 10,
            ),
            solution=f"def feature_{i}(x):\n    return helper_{i % 17}(x) + {i}\n" * 4,
            feedback=Feedback(
                reward=(i % 11) / 10,
                message=f"{i % 11} of 10 tests passed; see assertion {i % 7}",
                tests_passed=i % 11,
                tests_total=10,
            ),
            outcome=OUTCOMES[i % 3],
            timestamp=1_780_000_000.0 + 60.0 * i,
            iterations=1 + i % 4,
            strategy_used=["iterative", "defensive", "exploratory", "conservative"][i % 4],
        )
        for i in range(start, stop)
    ]


def timed(function: Callable[[], object]) -> float:
    """Seconds one call takes."""
    start = time.perf_counter()
    function()
    return time.perf_counter() - start


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile (0-100) of ``values``."""
    return float(np.percentile(np.asarray(values), q))


def median(values: Sequence[float]) -> float:
    return statistics.median(values)


def table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    """A markdown table whose columns line up in a terminal too."""
    cells = [[str(h) for h in headers], *[[str(c) for c in row] for row in rows]]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = [
        "| " + " | ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + " |"
        for row in cells
    ]
    lines.insert(1, "|" + "|".join("-" * (w + 2) for w in widths) + "|")
    return "\n".join(lines)


def run_worker(script: str, args: Sequence[str], pythonpath: str | None) -> object:
    """Run ``script --worker ARGS`` in its own process; the JSON of its last line.

    ``pythonpath``: the checkout whose package the process imports (``None``: this one).
    Run from the benchmarks folder, so that no checkout's package shadows it.
    """
    env = dict(os.environ, ANONYMIZED_TELEMETRY="False")
    if pythonpath is not None:
        env["PYTHONPATH"] = pythonpath
    out = subprocess.run(
        [sys.executable, script, "--worker", *args],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=Path(script).resolve().parent,
    ).stdout
    return json.loads(out.strip().splitlines()[-1])


def sides_taking_turns(script: str, before: str | None, rounds: int) -> dict[str, list[Any]]:
    """Each side's ``script --worker`` results, ``rounds`` times, the sides taking turns.

    The sides: ``"before"`` (the checkout at ``before``, when given), then ``"now"`` (this
    one); taking turns, a drift of the machine's speed falls on both alike.
    """
    sides = {"now": str(Path(script).resolve().parent.parent)}
    if before:
        sides = {"before": before, **sides}
    runs: dict[str, list[Any]] = {side: [] for side in sides}
    for _ in range(rounds):
        for side, path in sides.items():
            runs[side].append(run_worker(script, [], path))
    return runs
