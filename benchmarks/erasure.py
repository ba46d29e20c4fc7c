"""What an erasure costs on an embedded Chroma folder, beside a write, before and after.

For folders holding ``N`` episodes (one namespace, 100 credited runs in its journal)
and, beside it, a second user's namespace of 500 episodes, built once per size and
copied for each side. The **before** side runs the package at another checkout
(``--before PATH``, e.g. a ``git worktree`` of the commit before batched scrubbing),
the **after** side this tree; the two sides take turns, a few repetitions each, in one
run, each in its own process. Each repetition times:

* **record**: one ``memory.record`` of a new episode (the baseline of every ratio);
* **forget old**: ``memory.forget([one id])`` of an episode recorded long ago;
* **forget newest**: ``memory.forget`` of the episode just recorded (a run credited
  it; it sits in the short-term window, which is refilled from the store);

and, once per side, at the end: **forget_all** of the second user's namespace and
**close** (where the batched scrub runs). Ratios are per repetition (the forget over
the record just before it), then the median; times are medians. **files clean**:
after ``close``, whether any file under the folder holds the erased text (it must not).
**pending**: whether the receipt of a ``forget`` said the scrub is still to come.

Then, on the same folders, **retention on write**: a fresh namespace filled with
``CAP`` episodes (2,000) under ``Retention(max_episodes=CAP, on_write=True)`` and
another without a policy, then ``WRITES`` (600) single ``record`` calls to each, in
turns, in one process per side (a prune every 200 writes, each removing 200
episodes): the mean cost per write with the policy against without, and the slowest
write with it (a prune).

    python benchmarks/erasure.py --before /tmp/erasure-before [--sizes 10000 100000]
        [--rounds 3] [--reps 3] [--out benchmarks/results/erasure.md]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import cast

from _fixtures import RESULTS, make_episodes, table

HERE = Path(__file__).resolve().parent
TREE = HERE.parent
SECRET = "erasure-bench-secret-9931"
OLD_STRIDE = 37  # the old ids forgotten: every 37th of the built ones, from the end


def build(size: int, folder: Path) -> None:
    """Build the folder: ``size`` episodes with credited runs, and bob's 500."""
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, TaskDescription

    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: 2e9)
    for start in range(0, size, 2000):
        memory.record_many(make_episodes(start, min(size, start + 2000)))
    for run in range(0, 500, 5):
        shown = [f"ep-{i:07d}" for i in range(run, run + 3)]
        memory.runs.note(f"run-{run}", shown, TaskDescription(f"task {run}"))
        memory.runs.credit(f"run-{run}", 0.7)
    bob = EpisodicMemory(store=store, namespace="bob", clock=lambda: 2e9)
    bob.record_many(
        [
            dataclasses.replace(e, task=dataclasses.replace(e.task, description=f"{SECRET} {i}"))
            for i, e in enumerate(make_episodes(10_000_000, 10_000_500))
        ]
    )
    store.close()


def worker(folder: Path, size: int, round_: int, reps: int, final: bool) -> dict[str, object]:
    """One side's turn on its copy of the folder: ``reps`` repetitions; the end if final."""
    import langchain_episodic
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, TaskDescription

    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: 2e9)
    times: dict[str, list[float]] = {"record": [], "old": [], "newest": []}
    pending: list[bool] = []
    for rep in range(reps):
        n = 20_000_000 + 1000 * round_ + 2 * rep
        victim, plain = make_episodes(n, n + 2)
        victim = dataclasses.replace(
            victim, task=dataclasses.replace(victim.task, description=f"task {n} {SECRET}")
        )
        memory.record(victim)
        memory.runs.note(f"victim-{n}", [victim.episode_id], TaskDescription(f"task {SECRET}"))
        memory.runs.credit(f"victim-{n}", 0.9)
        start = time.perf_counter()
        memory.record(plain)
        times["record"].append(time.perf_counter() - start)
        old = f"ep-{size - 1 - OLD_STRIDE * (round_ * reps + rep):07d}"
        start = time.perf_counter()
        receipt = memory.forget([old], reason="benchmark")
        times["old"].append(time.perf_counter() - start)
        pending.append(bool(getattr(receipt, "scrub_pending", False)))
        start = time.perf_counter()
        memory.forget([victim.episode_id], reason="benchmark")
        times["newest"].append(time.perf_counter() - start)
    out: dict[str, object] = {
        "times": times,
        "pending": pending,
        "package": langchain_episodic.__file__,
    }
    if final:
        bob = EpisodicMemory(store=store, namespace="bob", clock=lambda: 2e9)
        start = time.perf_counter()
        bob.forgetting.forget_all(reason="benchmark")
        out["forget_all"] = time.perf_counter() - start
    start = time.perf_counter()
    store.close()
    out["close"] = time.perf_counter() - start
    return out


CAP = 2_000  # the retention benchmark's cap
WRITES = 600  # its timed writes: three prunes of 200 episodes


def retention_worker(folder: Path) -> dict[str, object]:
    """Two fresh namespaces filled to the cap, one with the policy; single writes in turns."""
    import langchain_episodic
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from langchain_episodic.scoring.retention import Retention

    store = ChromaEpisodeStore(path=folder)
    memories, streams = {}, {}
    for name, start, policy in (
        ("free", 40_000_000, None),
        ("capped", 30_000_000, Retention(max_episodes=CAP, on_write=True)),
    ):
        memory = EpisodicMemory(
            store=store, namespace=f"carol-{name}", clock=lambda: 2e9, retention=policy
        )
        memory.record_many(make_episodes(start, start + CAP))
        memories[name], streams[name] = memory, make_episodes(start + CAP, start + CAP + WRITES)
    times: dict[str, list[float]] = {"free": [], "capped": []}
    for i in range(WRITES):  # in turns: both see the same load on the machine
        for name in ("free", "capped") if i % 2 == 0 else ("capped", "free"):
            begin = time.perf_counter()
            memories[name].record(streams[name][i])
            times[name].append(time.perf_counter() - begin)
    out = {
        "times": times,
        "kept": len(memories["capped"]),
        "package": langchain_episodic.__file__,
    }
    store.close()
    return out


def folder_size(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.rglob("*") if path.is_file())


def holds(folder: Path, text: str) -> bool:
    needle = text.encode("utf-8")
    return any(needle in path.read_bytes() for path in folder.rglob("*") if path.is_file())


def turn(
    tree: Path, folder: Path, size: int, round_: int, reps: int, final: bool
) -> dict[str, object]:
    command = [sys.executable, str(HERE / "erasure.py"), "--worker", str(folder)]
    command += ["--size", str(size), "--round", str(round_), "--reps", str(reps)]
    command += ["--final"] if final else []
    return run(tree, command)


def run(tree: Path, command: list[str]) -> dict[str, object]:
    """Run a worker with ``tree``'s package; its result (checked to come from ``tree``)."""
    env = {**os.environ, "PYTHONPATH": str(tree)}
    done = subprocess.run(command, env=env, cwd=HERE, capture_output=True, text=True, check=True)
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    if not str(result["package"]).startswith(str(tree)):
        msg = f"the worker imported {result['package']}, not the package under {tree}"
        raise RuntimeError(msg)
    return result


def against(times: list[float], record: list[float]) -> str:
    """Median ms, and the median of the per-repetition ratios to the record before it."""
    ratio = statistics.median(t / r for t, r in zip(times, record, strict=True))
    return f"{statistics.median(times) * 1000:.0f} ({ratio:.1f}x)"


def measure(
    size: int,
    workdir: Path,
    built: Path,
    before: Path,
    rounds: int,
    reps: int,
    retention_rows: list[list[object]],
) -> list[list[object]]:
    if not built.exists():  # kept between runs with --built: the 100k folder takes a while
        start = time.perf_counter()
        build(size, built)
        print(f"built {size} episodes in {time.perf_counter() - start:.0f}s", flush=True)
    mb = folder_size(built) / 1e6
    sides = {"before": before, "after": TREE}
    folders = {name: workdir / f"{name}-{size}" for name in sides}
    for folder in folders.values():
        shutil.copytree(built, folder)
    got: dict[str, list[dict[str, object]]] = {name: [] for name in sides}
    for round_ in range(rounds):
        order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
        for name in order:
            final = round_ == rounds - 1
            got[name].append(turn(sides[name], folders[name], size, round_, reps, final))
    rows = []
    for name in sides:
        turns = got[name]
        record, old, newest = (
            [t for r in turns for t in r["times"][key]]  # type: ignore[index]
            for key in ("record", "old", "newest")
        )
        pending = [p for r in turns for p in r["pending"]]  # type: ignore[attr-defined]
        last = turns[-1]
        rows.append(
            [
                size,
                f"{mb:.0f}",
                name,
                f"{statistics.median(record) * 1000:.0f}",
                against(old, record),
                against(newest, record),
                f"{float(last['forget_all']):.2f}",  # type: ignore[arg-type]
                f"{float(last['close']):.2f}",  # type: ignore[arg-type]
                "yes" if all(pending) else ("no" if not any(pending) else "some"),
                "NO" if holds(folders[name], SECRET) else "yes",
            ]
        )
        print(rows[-1], flush=True)
    for name, tree in sides.items():  # retention on write, on the same folders
        command = [sys.executable, str(HERE / "erasure.py"), "--retention-worker"]
        got_policy = run(tree, [*command, str(folders[name])])
        times = cast("dict[str, list[float]]", got_policy["times"])
        free, capped = statistics.mean(times["free"]), statistics.mean(times["capped"])
        retention_rows.append(
            [
                size,
                name,
                f"{free * 1000:.1f}",
                f"{capped * 1000:.1f} ({capped / free:.2f}x)",
                f"{max(times['capped']) * 1000:.0f}",
                got_policy["kept"],
            ]
        )
        print(retention_rows[-1], flush=True)
    for folder in folders.values():
        shutil.rmtree(folder)
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--before", type=Path, help="the checkout the baseline rows run")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--reps", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS / "erasure.md")
    parser.add_argument("--built", type=Path, help="keep the built folders here, for reruns")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--size", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--final", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--retention-worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.retention_worker is not None:
        print(json.dumps(retention_worker(args.retention_worker)))
        return
    if args.worker is not None:
        print(json.dumps(worker(args.worker, args.size, args.round, args.reps, args.final)))
        return
    if args.before is None:
        parser.error("--before PATH is required: a checkout of the baseline, e.g. a git worktree")
    retention_rows: list[list[object]] = []
    with tempfile.TemporaryDirectory() as workdir:
        rows = []
        for size in args.sizes:
            kept = args.built / f"built-{size}" if args.built else Path(workdir) / f"built-{size}"
            before = args.before.resolve()
            rows += measure(
                size, Path(workdir), kept, before, args.rounds, args.reps, retention_rows
            )
    headers = [
        "episodes (alice)",
        "folder MB",
        "code",
        "record ms",
        "forget old ms (vs record)",
        "forget newest ms (vs record)",
        "forget_all 500 s",
        "close s",
        "pending",
        "files clean",
    ]
    body = table(headers, rows)
    retention_headers = [
        "episodes (alice)",
        "code",
        f"write ms, no policy ({WRITES} writes)",
        f"write ms, on_write cap {CAP} (vs none)",
        "slowest write ms (a prune)",
        "kept",
    ]
    body += "\n\nRetention on write:\n\n" + table(retention_headers, retention_rows)
    print(body)
    command = f"python benchmarks/erasure.py --before PATH --sizes {' '.join(map(str, args.sizes))}"
    command += f" --rounds {args.rounds} --reps {args.reps}"
    text = (
        "# Erasure cost on an embedded Chroma folder, before and after batched scrubbing\n\n"
        f"Generated by `{command}` (PATH: a worktree of the baseline commit).\n\n"
        + (__doc__ or "").split("\n\n", 1)[1]
        + "\n"
        + body
        + "\n"
    )
    args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
