"""Many agents at once: N concurrent runs through the middleware's path, against raw store calls.

An agent server runs tens of runs at once (async), each recalling before its model call
and recording after it. This benchmark runs N concurrent agent runs (``asyncio.gather``,
N = 1, 8, 32) through exactly what :class:`~langchain_episodic.EpisodicMemoryMiddleware`
does under ``ainvoke`` (its own ``abefore_agent`` and ``aafter_agent``, the model call
left out):

* before the model: infer the task's category, recall, note the shown ids under a new
  run id (``abuild_replay``);
* after it: close the run with its reward (``memory.runs.close``), record the episode
  (``memory.arecord``);

and, in the same run, two raw baselines through the store's own client (embedded
Chroma and a Chroma server: each call in the event loop's executor, as an async app
calls a sync client; PostgreSQL: LangGraph ``PostgresStore`` through ``abatch``):

* **raw min**: one query for the task's neighbours and one add of the new record, the
  least recall + record can cost;
* **raw same**: the store calls a memory run makes, of the same number, kinds and sizes.
  They are counted first (:mod:`_store_calls` wraps the client's methods in a worker
  process: Chroma's ``Collection`` and client methods, ``PostgresStore.batch`` and the
  advisory-lock SQL, and each executor hop) on a few runs one at a time, then replayed
  call for call by the same N concurrent agents, the calls of one of the memory's
  executor hops in one hop. ``raw same (after)`` replays this checkout's calls, ``raw
  same (before)`` the before's. Memory / raw same is what the memory adds beyond its
  store calls (CPU, locks, executor hops); memory / raw min counts the calls too.

Every variant embeds with the same ``StaticEmbeddings``; PostgreSQL uses one connection
pool (8) for each. Each measurement is a fresh process over a fresh store seeded with
``--seed-episodes`` episodes; the memory is run from this checkout or ``--after-tree``
("after") and, for "before", from ``--before-tree`` or a ``git worktree`` of
``--before-commit`` (created and removed by this script). The variants alternate
within every round (``--rounds``), so a noisy machine hits them alike. Per backend and
N: throughput (runs/s, median over rounds), its ratios to both baselines, and p50/p99
of every run's latency (pooled over rounds); then the store calls per memory run, by
kind, before and after.

    python benchmarks/many_agents.py [--rounds 3] [--runs 64] [--seed-episodes 200]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Awaitable, Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
BACKENDS = ("embedded Chroma", "Chroma server", "PostgreSQL")
NS = (1, 8, 32)
VARIANTS = ("raw", "same-before", "same", "before", "after")
"""``raw``: 1 query + 1 add per run; ``same``/``same-before``: the raw calls of the same
number, kinds and sizes as an "after"/"before" memory run (counted first); the memory."""
COUNTED_RUNS = 8  # sequential runs whose store calls are counted, after the warm-up
FETCH_K = 24  # the default recall's fetch_k (top_k 3, candidates widened)


# ------------------------------------------------------------------ worker side


def _episode(index: int, tag: str) -> Any:
    from langchain_episodic import Episode, Feedback, OutcomeStatus, TaskCategory, TaskDescription

    categories = list(TaskCategory)
    return Episode(
        episode_id=f"{tag}-{index:06d}",
        task=TaskDescription(
            _task_text(index), categories[index % len(categories)], (index % 10) / 10
        ),
        solution=f"def feature_{index}(x):\n    return helper_{index % 17}(x) + {index}\n" * 4,
        feedback=Feedback(reward=(index % 11) / 10, message=f"{index % 11} of 10 tests passed"),
        outcome=list(OutcomeStatus)[index % 3],
        timestamp=1_780_000_000.0 + 60.0 * index,
        iterations=1 + index % 4,
    )


def _task_text(index: int) -> str:
    verbs = ("implement", "fix a bug in", "refactor", "add tests for", "document")
    things = ("the login form", "the CSV parser", "the cache layer", "the REST client")
    return f"{verbs[index % 5]} {things[index % 4]} of module {index % 13} (task {index})"


class _Runner:
    """One worker: a fresh store of one backend, one variant, the runs timed."""

    def __init__(self, args: argparse.Namespace, stack: ExitStack) -> None:
        from langchain_episodic import StaticEmbeddings

        self.args = args
        self.embeddings = StaticEmbeddings()
        self.tag = uuid.uuid4().hex[:8]
        self.stack = stack
        self.counter = 0

    # -- the two paths ---------------------------------------------------------

    def memory_path(self) -> Callable[[int], Awaitable[None]]:
        from langchain_core.messages import AIMessage, HumanMessage

        from langchain_episodic import EpisodicMemory, EpisodicMemoryMiddleware

        memory = EpisodicMemory(store=self._episode_store(), embeddings=self.embeddings)
        memory.record_many([_episode(i, "seed") for i in range(self.args.seed_episodes)])
        tag = self.tag

        def record_episode(state: dict[str, Any], runtime: object) -> Any:
            return _episode(state["index"], tag)

        middleware = EpisodicMemoryMiddleware(memory, record_episode=record_episode)

        async def run(index: int) -> None:
            state: dict[str, Any] = {
                "messages": [HumanMessage(_task_text(index))],
                "index": index,
            }
            update = await middleware.abefore_agent(state, None)  # type: ignore[arg-type]
            assert update is not None
            final = {**state, **update, "messages": [*state["messages"], AIMessage("done")]}
            await middleware.aafter_agent(final, None)  # type: ignore[arg-type]

        return run

    def raw_path(self) -> Callable[[int], Awaitable[None]]:
        if self.args.backend == "PostgreSQL":
            return self._raw_postgres()
        collection = self._chroma_client().create_collection(
            f"raw-{self.tag}", metadata={"hnsw:space": "cosine"}, embedding_function=None
        )
        embeddings = self.embeddings
        seeds = [_episode(i, "seed") for i in range(self.args.seed_episodes)]
        collection.add(
            ids=[e.episode_id for e in seeds],
            embeddings=embeddings.embed_documents([e.task.description for e in seeds]),
            documents=[e.task.description for e in seeds],
            metadatas=[{"episode": json.dumps(e.to_dict()), "seq": i} for i, e in enumerate(seeds)],
        )
        tag = self.tag

        def query(index: int) -> None:
            vector = embeddings.embed_query(_task_text(index))
            collection.query(
                query_embeddings=[vector],
                n_results=FETCH_K,
                include=["metadatas", "documents", "distances", "embeddings"],
            )

        def add(index: int) -> None:
            episode = _episode(index, tag)
            collection.add(
                ids=[episode.episode_id],
                embeddings=embeddings.embed_documents([episode.task.description]),
                documents=[episode.task.description],
                metadatas=[{"episode": json.dumps(episode.to_dict()), "seq": index}],
            )

        async def run(index: int) -> None:
            loop = asyncio.get_running_loop()
            await loop.run_in_executor(None, query, index)
            await loop.run_in_executor(None, add, index)

        return run

    def same_calls_path(
        self, traces: list[list[dict[str, Any]]]
    ) -> Callable[[int], Awaitable[None]]:
        """Run ``index`` issues the raw calls a counted memory run made (``index`` mod count).

        Call for call, one after another, in the event loop's executor grouped as the
        memory's were (the calls it made in one executor hop, in one here).
        """
        from _store_calls import ChromaReplay, PostgresReplay, replay

        seeds = [_episode(i, "seed") for i in range(self.args.seed_episodes)]
        tag = self.tag
        replayer: ChromaReplay | PostgresReplay
        if self.args.backend == "PostgreSQL":
            replayer = PostgresReplay(self._postgres_store(), tag, seeds)
        else:
            replayer = ChromaReplay(self._chroma_client(), tag, self.embeddings, seeds)

        async def run(index: int) -> None:
            shapes = traces[index % len(traces)]
            await replay(replayer, shapes, index, _task_text(index), _episode(index, tag))

        return run

    def _raw_postgres(self) -> Callable[[int], Awaitable[None]]:
        store = self._postgres_store()
        space = ("raw", self.tag)
        for i in range(self.args.seed_episodes):
            episode = _episode(i, "seed")
            store.put(space, episode.episode_id, {"episode": episode.to_dict(), "seq": i})
        tag = self.tag

        async def run(index: int) -> None:
            await store.asearch(space, query=_task_text(index), limit=FETCH_K)
            episode = _episode(index, tag)
            await store.aput(
                space, episode.episode_id, {"episode": episode.to_dict(), "seq": index}
            )

        return run

    # -- backends ----------------------------------------------------------------

    def _chroma_client(self) -> Any:
        import chromadb

        if self.args.backend == "Chroma server":
            host, port = self.args.chroma_server.rsplit(":", 1)
            client = chromadb.HttpClient(host=host, port=int(port))
            tag = self.tag

            def drop_collections() -> None:
                # The server outlives this worker: what a variant leaves there would slow
                # the variants measured after it.
                for collection in client.list_collections():
                    if tag in collection.name:
                        client.delete_collection(collection.name)

            self.stack.callback(drop_collections)
            return client
        folder = self.stack.enter_context(tempfile.TemporaryDirectory())
        return chromadb.PersistentClient(path=folder)

    def _postgres_store(self) -> Any:
        from langgraph.store.postgres import PostgresStore

        sys.path.append(str(ROOT))  # after --tree: the memory under test stays first
        from tests.postgres_server import fresh_database

        database = fresh_database(self.args.postgres)
        store = self.stack.enter_context(
            PostgresStore.from_conn_string(
                database,
                pool_config={"min_size": 1, "max_size": 8},
                index={
                    "dims": 384,
                    "embed": self.embeddings,
                    "fields": ["task"],
                    "distance_type": "cosine",
                },
            )
        )
        store.setup()
        return store

    def _episode_store(self) -> Any:
        from langchain_episodic.stores import ChromaEpisodeStore, LangGraphEpisodeStore

        if self.args.backend == "PostgreSQL":
            return LangGraphEpisodeStore(self._postgres_store())
        if self.args.backend == "Chroma server":
            return ChromaEpisodeStore(
                client=self._chroma_client(), collection_name=f"memory-{self.tag}"
            )
        folder = self.stack.enter_context(tempfile.TemporaryDirectory())
        store = ChromaEpisodeStore(Path(folder) / "memory")
        self.stack.callback(store.close)
        return store


async def _phase(
    run: Callable[[int], Awaitable[None]], n: int, total: int, start: int
) -> dict[str, Any]:
    """``total`` runs by ``n`` concurrent agents (each runs its share one after another)."""
    latencies: list[float] = []

    async def agent(first: int) -> None:
        for index in range(first, start + total, n):
            began = time.perf_counter()
            await run(index)
            latencies.append(time.perf_counter() - began)

    began = time.perf_counter()
    await asyncio.gather(*(agent(start + i) for i in range(n)))
    wall = time.perf_counter() - began
    return {"n": n, "runs": total, "wall": wall, "latencies": latencies}


def count_worker(args: argparse.Namespace) -> None:
    """Count the store calls of :data:`COUNTED_RUNS` memory runs, one at a time; print them.

    After the same warm-up as a measurement (4 concurrent runs), so the counted runs
    are in the steady state an agent server is in.
    """
    from _store_calls import StoreCalls

    with ExitStack() as stack:
        runner = _Runner(args, stack)
        calls = stack.enter_context(StoreCalls().installed(args.backend))
        run = runner.memory_path()

        async def main() -> list[list[dict[str, Any]]]:
            await asyncio.gather(*(run(1_000_000 + i) for i in range(4)))
            calls.take()
            traces = []
            for index in range(COUNTED_RUNS):
                await run(2_000_000 + index)
                shapes, http = calls.take()
                traces.append(shapes)
                if http:
                    print(json.dumps({"http": dict(http)}))
            return traces

        print(json.dumps({"backend": args.backend, "traces": asyncio.run(main())}))


def worker(args: argparse.Namespace) -> None:
    """Measure one variant on one backend for every N; print one JSON line per N."""
    with ExitStack() as stack:
        runner = _Runner(args, stack)
        if args.variant == "raw":
            run = runner.raw_path()
        elif args.variant.startswith("same"):
            run = runner.same_calls_path(json.loads(Path(args.trace).read_text()))
        else:
            run = runner.memory_path()

        async def main() -> list[dict[str, Any]]:
            await asyncio.gather(*(run(1_000_000 + i) for i in range(4)))  # warm up
            found = []
            for offset, n in enumerate(NS):
                found.append(await _phase(run, n, args.runs, 10_000 * (offset + 1)))
            return found

        for row in asyncio.run(main()):
            print(json.dumps({"backend": args.backend, "variant": args.variant, **row}))


# ------------------------------------------------------------------ orchestrator


@contextmanager
def _servers(folder: Path) -> Iterator[tuple[str, str]]:
    sys.path.insert(0, str(ROOT))
    from tests.chroma_server import SERVER_ENV as CHROMA_ENV
    from tests.chroma_server import chroma_server
    from tests.postgres_server import postgres_server, server_uri_from_env

    with ExitStack() as stack:
        chroma = os.environ.get(CHROMA_ENV)
        if not chroma:
            client = stack.enter_context(chroma_server(folder / "chroma"))
            settings = client.get_settings()
            chroma = f"{settings.chroma_server_host}:{settings.chroma_server_http_port}"
        postgres = server_uri_from_env() or stack.enter_context(postgres_server(folder / "pg"))
        yield chroma, postgres


@contextmanager
def _before_tree(args: argparse.Namespace) -> Iterator[Path]:
    """The "before" checkout: ``--before-tree`` as given, or a worktree made and removed here."""
    if args.before_tree:
        yield Path(args.before_tree).resolve()
        return
    tree = Path(tempfile.gettempdir()) / "many_agents_before"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), args.before_commit],
        check=True,
        capture_output=True,
    )
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True
        )


def _worker_command(
    args: argparse.Namespace, backend: str, variant: str, tree: Path, servers: tuple[str, str]
) -> list[str]:
    return [
        sys.executable,
        str(Path(__file__).resolve()),
        "--worker",
        "--tree",
        str(tree),
        "--backend",
        backend,
        "--variant",
        variant,
        "--runs",
        str(args.runs),
        "--seed-episodes",
        str(args.seed_episodes),
        "--chroma-server",
        servers[0],
        "--postgres",
        servers[1],
    ]


def _lines(command: list[str]) -> list[dict[str, Any]]:
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    if done.returncode:
        sys.stderr.write(done.stderr)
        done.check_returncode()
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _count(
    args: argparse.Namespace, backend: str, tree: Path, servers: tuple[str, str]
) -> tuple[list[list[dict[str, Any]]], dict[str, int]]:
    """The store calls of :data:`COUNTED_RUNS` memory runs of ``tree`` (and HTTP requests)."""
    found = _lines([*_worker_command(args, backend, "count", tree, servers), "--count"])
    http: dict[str, int] = {}
    for line in found:
        for key, value in line.get("http", {}).items():
            http[key] = http.get(key, 0) + value
    [traces] = [line["traces"] for line in found if "traces" in line]
    return traces, http


def _measure(
    args: argparse.Namespace,
    backend: str,
    variant: str,
    tree: Path,
    servers: tuple[str, str],
    trace: Path | None,
) -> list[dict[str, Any]]:
    command = _worker_command(args, backend, variant, tree, servers)
    if trace is not None:
        command += ["--trace", str(trace)]
    return _lines(command)


def _calls_section(
    backends: list[str], counted: dict[tuple[str, str], tuple[list[Any], dict[str, int]]]
) -> str:
    """Store calls per memory run, by kind, before and after, per backend."""
    from _store_calls import round_trips, summarise

    parts = []
    for backend in backends:
        rows = []
        summaries = {
            version: summarise(counted[backend, version][0]) for version in ("before", "after")
        }
        kinds = sorted(set(summaries["before"]) | set(summaries["after"]))
        for kind in kinds:
            rows.append(
                [
                    f"`{kind}`" if not kind.startswith("batch:") else f"↳ `{kind[7:]}` (ops in it)",
                    f"{summaries['before'].get(kind, 0):g}",
                    f"{summaries['after'].get(kind, 0):g}",
                ]
            )
        rows.append(
            [
                "**round trips**",
                f"**{round_trips(counted[backend, 'before'][0]):g}**",
                f"**{round_trips(counted[backend, 'after'][0]):g}**",
            ]
        )
        for version in ("before", "after"):
            http = counted[backend, version][1]
            if http:
                total = sum(http.values()) / COUNTED_RUNS
                rows.append(
                    [f"HTTP requests ({version})", "", f"{total:g}"]
                    if version == "after"
                    else [f"HTTP requests ({version})", f"{total:g}", ""]
                )
        from _fixtures import table

        parts.append(f"{backend}:\n\n" + table(["call per run", "before", "after"], rows))
    return "\n\n".join(parts)


def _describe_tree(tree: str) -> str:
    """A checkout by its commit (the short hash), for the results."""
    done = subprocess.run(
        ["git", "-C", tree, "rev-parse", "--short", "HEAD"],
        check=False,
        capture_output=True,
        text=True,
    )
    return f"`{done.stdout.strip()}`" if done.returncode == 0 else f"`{tree}`"


def orchestrate(args: argparse.Namespace) -> None:
    import numpy as np

    sys.path.insert(0, str(HERE))
    from _fixtures import RESULTS, table

    rows: list[dict[str, Any]] = []
    counted: dict[tuple[str, str], tuple[list[Any], dict[str, int]]] = {}
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        servers = stack.enter_context(_servers(Path(folder)))
        before = stack.enter_context(_before_tree(args))
        # The raw variants run from the after's tree too: the same episodes and embeddings.
        after = Path(args.after_tree).resolve() if args.after_tree else ROOT
        trees = {"raw": after, "same": after, "same-before": after, "before": before}
        trees["after"] = after
        traces: dict[tuple[str, str], Path] = {}
        for backend in args.backends:
            for version in ("before", "after"):
                counted[backend, version] = _count(args, backend, trees[version], servers)
                trace = Path(folder) / f"trace-{backend.replace(' ', '-')}-{version}.json"
                trace.write_text(json.dumps(counted[backend, version][0]))
                traces[backend, version] = trace
                from _store_calls import round_trips

                print(
                    f"{backend:15} {version:6} store calls per run: "
                    f"{round_trips(counted[backend, version][0]):g}",
                    flush=True,
                )
        for round_ in range(args.rounds):
            for backend in args.backends:
                # Rotate the order each round: none always runs first on a cold cache.
                shift = round_ % len(VARIANTS)
                order = VARIANTS[shift:] + VARIANTS[:shift]
                for variant in order:
                    trace = None
                    if variant == "same":
                        trace = traces[backend, "after"]
                    elif variant == "same-before":
                        trace = traces[backend, "before"]
                    found = _measure(args, backend, variant, trees[variant], servers, trace)
                    rows.extend({**row, "round": round_} for row in found)
                    print(
                        f"round {round_} {backend:15} {variant:11} "
                        + " ".join(f"N={r['n']}: {r['runs'] / r['wall']:.1f}/s" for r in found),
                        flush=True,
                    )

    def pick(backend: str, variant: str, n: int) -> list[dict[str, Any]]:
        return [r for r in rows if (r["backend"], r["variant"], r["n"]) == (backend, variant, n)]

    lines = []
    for backend in args.backends:
        for n in NS:
            cells: list[object] = [backend, n]
            throughput = {}
            for variant in VARIANTS:
                found = pick(backend, variant, n)
                throughput[variant] = float(np.median([r["runs"] / r["wall"] for r in found]))
            for variant in VARIANTS:
                found = pick(backend, variant, n)
                latencies = np.asarray([x for r in found for x in r["latencies"]]) * 1000
                cells += [
                    f"{throughput[variant]:.1f}",
                    f"{np.percentile(latencies, 50):.1f} / {np.percentile(latencies, 99):.1f}",
                ]
            cells += [
                f"{throughput['before'] / throughput['raw']:.2f}",
                f"{throughput['after'] / throughput['raw']:.2f}",
                f"{throughput['before'] / throughput['same-before']:.2f}",
                f"{throughput['after'] / throughput['same']:.2f}",
            ]
            lines.append(cells)
    headers = ["backend", "N"]
    labels = {
        "raw": "raw min",
        "same-before": "raw same (before)",
        "same": "raw same (after)",
        "before": "before",
        "after": "after",
    }
    for variant in VARIANTS:
        headers += [f"{labels[variant]} runs/s", f"{labels[variant]} p50/p99 ms"]
    headers += [
        "before / raw min",
        "after / raw min",
        "before / raw same (before)",
        "after / raw same (after)",
    ]
    result = table(headers, lines)
    before_name = (
        _describe_tree(args.before_tree) if args.before_tree else f"`{args.before_commit}`"
    )
    after_name = _describe_tree(args.after_tree) if args.after_tree else "this checkout"
    text = (
        "# Many agents at once\n\n"
        f"`python benchmarks/many_agents.py --rounds {args.rounds} --runs {args.runs} "
        f"--seed-episodes {args.seed_episodes}`: {args.runs} runs per N per round, "
        f"{args.rounds} rounds, the five variants interleaved; before = "
        f"{before_name}, after = {after_name}; {os.cpu_count()} CPU cores.\n\n"
        "A memory run = the middleware's `abefore_agent` (category, recall, note) + "
        "`aafter_agent` (close the run, record the episode). Two raw baselines, through "
        "the store's own client, issued by the same N concurrent agents:\n\n"
        f"- **raw min**: one query of {FETCH_K} neighbours + one add per run: the least a "
        "store must do for recall + record;\n"
        "- **raw same**: the same number, kinds and sizes of store calls as a memory run "
        f"makes, counted on {COUNTED_RUNS} runs one at a time after the warm-up (below), "
        "replayed call for call, grouped in the event loop's executor as the memory's were "
        "(the calls it made in one executor hop are made in one hop), a PostgreSQL "
        "advisory-lock statement as one round trip on a key of its own, so its waiting "
        "is not replayed. `raw same (after)` replays the after's calls, `raw same "
        "(before)` the before's. Memory / raw same is what the memory adds beyond its "
        "store calls (CPU, locks held across calls, executor hops without a call); "
        "memory / raw min counts the calls too.\n\n"
        "Throughput: median over rounds; p50/p99: every run's latency, pooled over "
        "rounds.\n\n"
        f"{result}\n\n"
        "## Store calls per memory run\n\n"
        f"{_calls_section(args.backends, counted)}\n"
    )
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / args.output).write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=64, help="runs per N per round")
    parser.add_argument("--seed-episodes", type=int, default=200)
    parser.add_argument("--before-commit", default="f312dbc")
    parser.add_argument(
        "--before-tree", help="a checkout of the before (default: a worktree of --before-commit)"
    )
    parser.add_argument(
        "--after-tree",
        help="a checkout of the after (default: this one; a worktree of HEAD leaves out "
        "uncommitted changes)",
    )
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--output", default="many_agents.md", help="file in benchmarks/results")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--count", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--trace", help=argparse.SUPPRESS)
    parser.add_argument("--tree", help=argparse.SUPPRESS)
    parser.add_argument("--backend", help=argparse.SUPPRESS)
    parser.add_argument("--variant", help=argparse.SUPPRESS)
    parser.add_argument("--chroma-server", help=argparse.SUPPRESS)
    parser.add_argument("--postgres", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        # The memory under test comes from --tree (this checkout, or the "before" one).
        sys.path.insert(0, args.tree)
        os.environ.setdefault("ANONYMIZED_TELEMETRY", "False")
        if args.count:
            count_worker(args)
        else:
            worker(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
