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

and, in the same run, the same number of **raw store calls of the same shape**: one
query for the task's neighbours and one add of the new record, through the store's own
client (embedded Chroma and a Chroma server: ``collection.query`` + ``collection.add``
in the event loop's executor, as an async app calls a sync client; PostgreSQL:
LangGraph ``PostgresStore.asearch`` + ``aput``). Both embed with the same
``StaticEmbeddings``; PostgreSQL uses one connection pool (8) for both.

Each measurement is a fresh process over a fresh store seeded with ``--seed-episodes``
episodes; the memory is run from this checkout ("after") and, for "before", from a
``git worktree`` of ``--before-commit`` (created and removed by this script). Raw,
before and after alternate within every round (``--rounds``), so a noisy machine hits
them alike. Per backend and N: throughput (runs/s, median over rounds), its ratio to
the raw calls', and p50/p99 of every run's latency (pooled over rounds).

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
VARIANTS = ("raw", "before", "after")
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
            return chromadb.HttpClient(host=host, port=int(port))
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


def worker(args: argparse.Namespace) -> None:
    """Measure one variant on one backend for every N; print one JSON line per N."""
    with ExitStack() as stack:
        runner = _Runner(args, stack)
        run = runner.raw_path() if args.variant == "raw" else runner.memory_path()

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
def _before_tree(commit: str) -> Iterator[Path]:
    tree = Path(tempfile.gettempdir()) / "many_agents_before"
    subprocess.run(
        ["git", "-C", str(ROOT), "worktree", "add", "--detach", str(tree), commit],
        check=True,
        capture_output=True,
    )
    try:
        yield tree
    finally:
        subprocess.run(
            ["git", "-C", str(ROOT), "worktree", "remove", "--force", str(tree)], check=True
        )


def _measure(
    args: argparse.Namespace, backend: str, variant: str, tree: Path, servers: tuple[str, str]
) -> list[dict[str, Any]]:
    command = [
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
    env = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}
    done = subprocess.run(command, check=True, capture_output=True, text=True, env=env)
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def orchestrate(args: argparse.Namespace) -> None:
    import numpy as np

    sys.path.insert(0, str(HERE))
    from _fixtures import RESULTS, table

    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as folder, ExitStack() as stack:
        servers = stack.enter_context(_servers(Path(folder)))
        before = stack.enter_context(_before_tree(args.before_commit))
        trees = {"raw": ROOT, "before": before, "after": ROOT}
        for round_ in range(args.rounds):
            for backend in args.backends:
                # Rotate the order each round: none always runs first on a cold cache.
                order = VARIANTS[round_ % 3 :] + VARIANTS[: round_ % 3]
                for variant in order:
                    found = _measure(args, backend, variant, trees[variant], servers)
                    rows.extend({**row, "round": round_} for row in found)
                    print(
                        f"round {round_} {backend:15} {variant:6} "
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
            ]
            lines.append(cells)
    headers = [
        "backend",
        "N",
        "raw runs/s",
        "raw p50/p99 ms",
        "before runs/s",
        "before p50/p99 ms",
        "after runs/s",
        "after p50/p99 ms",
        "before/raw",
        "after/raw",
    ]
    result = table(headers, lines)
    text = (
        "# Many agents at once\n\n"
        f"`python benchmarks/many_agents.py --rounds {args.rounds} --runs {args.runs} "
        f"--seed-episodes {args.seed_episodes}`: {args.runs} runs per N per round, "
        f"{args.rounds} rounds, raw/before/after interleaved; before = "
        f"`{args.before_commit}`, after = this checkout; {os.cpu_count()} CPU cores.\n\n"
        "A memory run = the middleware's `abefore_agent` (category, recall, note) + "
        "`aafter_agent` (close the run, record the episode); a raw run = one query of "
        f"{FETCH_K} neighbours + one add through the store's own client. Throughput: "
        "median over rounds; p50/p99: every run's latency, pooled over rounds.\n\n"
        f"{result}\n"
    )
    print(text)
    RESULTS.mkdir(exist_ok=True)
    (RESULTS / "many_agents.md").write_text(text)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--runs", type=int, default=64, help="runs per N per round")
    parser.add_argument("--seed-episodes", type=int, default=200)
    parser.add_argument("--before-commit", default="3608ec8")
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
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
        worker(args)
    else:
        orchestrate(args)


if __name__ == "__main__":
    main()
