"""What a replay of episodes holding large stored text costs, beside one holding small text.

A prompt shows at most its token budget, however large the stored solutions are, but
every stored field is neutralised (:mod:`langchain_episodic.prompting.sanitize`) before
it is cut to fit. This times :func:`~langchain_episodic.prompting.episodes.format_replay_prompt`
of 12 recalled episodes whose solutions are 250,000 characters each, against the same
12 episodes with 2,000-character solutions (about what the default budget shows), in
the same process, for three kinds of text:

* **ascii**: Python code;
* **unicode**: the same with accents, CJK and an emoji on every line;
* **ligatures**: the same with a character that folds to two (``ﬁ``), which makes the
  sanitiser keep a map back from the folded text to the stored one.

Each side (this checkout, and ``--before PATH``, a checkout to compare with) runs in
its own process, the sides taking turns, ``--rounds`` times. Ratios are per round
(large ÷ small), then the median.

    python benchmarks/large_text.py [--before PATH] [--rounds 3] [--out FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
LINES = {
    "ascii": "def area(width, height):\n    return width * height  # rectangle\n",
    "unicode": "def área(width, height):\n    return width * height  # 矩形 é ü 😀\n",
    "ligatures": "def area(width, height):\n    return width * height  # ﬁeld é\n",
}
LARGE, SMALL, EPISODES, REPEATS = 250_000, 2_000, 12, 5


def worker() -> dict[str, dict[str, float]]:
    """Median milliseconds of a replay prompt, large and small, per kind of text."""
    from langchain_episodic import Episode, Feedback, TaskDescription
    from langchain_episodic.prompting.episodes import (
        ReplayContext,
        build_replay_context,
        format_replay_prompt,
    )
    from langchain_episodic.scoring.priority import PrioritizedResult

    def context(line: str, size: int) -> ReplayContext:
        solution = line * (size // len(line))
        episodes = [
            Episode(
                f"e{i}",
                TaskDescription(f"Compute an area {i}"),
                solution,
                Feedback(1.0),
                "success",
                timestamp=float(i),
            )
            for i in range(EPISODES)
        ]
        return build_replay_context(
            PrioritizedResult(episode=e, similarity=0.9, priority=0.9) for e in episodes
        )

    found: dict[str, dict[str, float]] = {}
    for kind, line in LINES.items():
        found[kind] = {}
        for name, size in (("small", SMALL), ("large", LARGE)):
            shown = context(line, size)
            format_replay_prompt(shown, "Compute an area")  # the fold table, built once
            times = []
            for _ in range(REPEATS):
                start = time.perf_counter()
                format_replay_prompt(shown, "Compute an area")
                times.append(time.perf_counter() - start)
            found[kind][name] = statistics.median(times) * 1000
    return found


def measure(pythonpath: str) -> dict[str, dict[str, float]]:
    env = dict(os.environ, PYTHONPATH=pythonpath, ANONYMIZED_TELEMETRY="False")
    out = subprocess.run(
        [sys.executable, __file__, "--worker"],
        env=env,
        check=True,
        capture_output=True,
        text=True,
        cwd=HERE,
    ).stdout
    result: dict[str, dict[str, float]] = json.loads(out.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", help="a checkout of the code to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--out", type=Path, help="write the table here (Markdown)")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker()))
        return
    from _fixtures import table

    sides = {"now": str(HERE.parent)}
    if args.before:
        sides = {"before": args.before, **sides}
    runs: dict[str, list[dict[str, dict[str, float]]]] = {side: [] for side in sides}
    for _ in range(args.rounds):
        for side, path in sides.items():
            runs[side].append(measure(path))
    rows = []
    for kind in LINES:
        for side, found in runs.items():
            large = statistics.median(run[kind]["large"] for run in found)
            small = statistics.median(run[kind]["small"] for run in found)
            ratio = statistics.median(run[kind]["large"] / run[kind]["small"] for run in found)
            rows.append([kind, side, f"{small:.1f}", f"{large:.1f}", f"{ratio:.1f}x"])
            print(rows[-1], flush=True)
    headers = ["text", "code", "2k solutions ms", "250k solutions ms", "large / small"]
    command = "python benchmarks/large_text.py" + (" --before PATH" if args.before else "")
    report = (
        "# A replay of 12 episodes with 250,000-character solutions, beside 2,000\n\n"
        f"Generated by `{command} --rounds {args.rounds}`.\n\n"
        + (__doc__ or "").split("\n\n", 1)[1].rsplit("\n\n", 1)[0]
        + "\n\n"
        + table(headers, rows)
        + "\n"
    )
    print(report)
    if args.out:
        args.out.write_text(report, encoding="utf-8")


if __name__ == "__main__":
    main()
