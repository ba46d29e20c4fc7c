"""Count and replay the store calls one memory run makes (for ``many_agents.py``).

:class:`StoreCalls` wraps the store clients' own methods in a benchmark process (never
the package): Chroma's ``Collection`` and client methods (embedded and server alike;
on a server, also each HTTP request), and LangGraph ``PostgresStore.batch`` plus the
SQL a store runs on its connections itself (PostgreSQL's advisory locks). Each call is
kept as a small *shape* (which call, on what, how many ids or results), so that
:class:`ChromaReplay` and :class:`PostgresReplay` can issue the same number and kinds
of raw calls, of the same sizes, through the store's own client: the "raw, same
calls" baseline, which measures what the memory adds beyond its store calls.
"""

from __future__ import annotations

import asyncio
import functools
import json
import threading
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

Shape = dict[str, Any]
"""One store call: ``{"op": ..., "role": ...}`` and its sizes."""

_COLLECTION_METHODS = ("query", "get", "add", "upsert", "update", "delete", "count", "modify")
_CLIENT_METHODS = (
    "get_collection",
    "get_or_create_collection",
    "create_collection",
    "list_collections",
    "count_collections",
    "delete_collection",
)


def _role(name: str) -> str:
    if name.endswith("-journal-head"):
        return "head"  # the journal's head (stores.chroma_journal_head)
    return "journal" if name.endswith("-journal") else "episodes"


def _size(value: object) -> int | None:
    return None if value is None else len(value)  # type: ignore[arg-type]


def _chroma_shape(op: str, name: str, kwargs: dict[str, Any], args: tuple[Any, ...]) -> Shape:
    shape: Shape = {"op": op, "role": _role(name)}
    if op == "query":
        shape["n"] = kwargs.get("n_results", 10)
        shape["include"] = list(kwargs.get("include") or ["metadatas", "documents", "distances"])
        shape["where"] = kwargs.get("where") is not None
    elif op == "get":
        ids = kwargs.get("ids", args[0] if args else None)
        shape["ids"] = _size([ids] if isinstance(ids, str) else ids)
        shape["where"] = kwargs.get("where") is not None
        shape["limit"] = kwargs.get("limit")
        shape["include"] = list(kwargs.get("include") or ["metadatas", "documents"])
    elif op in ("add", "upsert", "update", "delete"):
        ids = kwargs.get("ids", args[0] if args else None)
        shape["ids"] = _size([ids] if isinstance(ids, str) else ids) or 0
    return shape


def _pg_shape(op: Any) -> Shape:
    kind = type(op).__name__
    namespace = getattr(op, "namespace", None) or getattr(op, "namespace_prefix", ())
    role = "ledger" if "ledger" in namespace else "episodes"
    shape: Shape = {"op": kind, "role": role}
    if kind == "PutOp":
        shape["delete"] = op.value is None
        shape["index"] = op.index is not False and op.value is not None
    elif kind == "SearchOp":
        shape["query"] = op.query is not None
        shape["limit"] = op.limit
    return shape


class StoreCalls:
    """The store calls made in this process while :meth:`installed`, by run.

    Only the outermost call counts (a Chroma ``add`` that asks the client for its
    batch size is one call); calls from every thread count, so run the runs being
    counted one at a time.
    """

    def __init__(self) -> None:
        self.shapes: list[Shape] = []
        self.http: Counter[str] = Counter()
        self._depth = threading.local()
        self._lock = threading.Lock()

    def take(self) -> tuple[list[Shape], Counter[str]]:
        """The calls since the last ``take`` (and the HTTP requests), then forget them."""
        with self._lock:
            shapes, http = self.shapes, self.http
            self.shapes, self.http = [], Counter()
        return shapes, http

    def _note(self, shape: Shape) -> None:
        with self._lock:
            self.shapes.append(shape)

    def _wrap(
        self, owner: type, name: str, shape_of: Callable[..., Shape | None]
    ) -> Callable[[], None]:
        original = getattr(owner, name)

        @functools.wraps(original)
        def counted(*args: Any, **kwargs: Any) -> Any:
            depth = getattr(self._depth, "value", 0)
            if depth == 0:
                shape = shape_of(*args, **kwargs)
                if shape is not None:
                    self._note(shape)
            self._depth.value = depth + 1
            try:
                return original(*args, **kwargs)
            finally:
                self._depth.value = depth

        setattr(owner, name, counted)
        return lambda: setattr(owner, name, original)

    @contextmanager
    def installed(self, backend: str) -> Iterator[StoreCalls]:
        """Count the calls of ``backend``'s client while inside."""
        undo: list[Callable[[], None]] = [self._install_hops()]
        try:
            if backend == "PostgreSQL":
                undo += self._install_postgres()
            else:
                undo += self._install_chroma()
            yield self
        finally:
            for step in reversed(undo):
                step()

    def _install_hops(self) -> Callable[[], None]:
        """Mark each executor hop of the event loop: the calls after it ran in it."""
        from asyncio.base_events import BaseEventLoop

        original = BaseEventLoop.run_in_executor
        calls = self

        def run_in_executor(loop: Any, executor: Any, func: Any, *args: Any) -> Any:
            calls._note({"op": "hop"})
            return original(loop, executor, func, *args)

        BaseEventLoop.run_in_executor = run_in_executor  # type: ignore[method-assign]
        return lambda: setattr(BaseEventLoop, "run_in_executor", original)

    def _install_chroma(self) -> list[Callable[[], None]]:
        from chromadb.api.client import Client
        from chromadb.api.fastapi import FastAPI
        from chromadb.api.models.Collection import Collection

        undo = []
        for op in _COLLECTION_METHODS:

            def shape_of(collection: Any, *args: Any, _op: str = op, **kwargs: Any) -> Shape:
                return _chroma_shape(_op, collection.name, kwargs, args)

            undo.append(self._wrap(Collection, op, shape_of))
        for op in _CLIENT_METHODS:

            def client_shape(client: Any, *args: Any, _op: str = op, **kwargs: Any) -> Shape:
                name = kwargs.get("name", args[0] if args else "")
                return {"op": _op, "role": _role(name) if isinstance(name, str) else "client"}

            undo.append(self._wrap(Client, op, client_shape))

        original = FastAPI._make_request
        calls = self

        def request(api: Any, method: str, path: str, **kwargs: Any) -> Any:
            # /api/v2/tenants/t/databases/d/collections/<uuid>/query -> .../collections/*/query
            parts = [
                "*" if len(part) == 36 and part.count("-") == 4 else part
                for part in path.split("/")
            ]
            with calls._lock:
                calls.http[f"{method} {'/'.join(parts[-2:])}"] += 1
            return original(api, method, path, **kwargs)

        FastAPI._make_request = request  # type: ignore[method-assign]
        undo.append(lambda: setattr(FastAPI, "_make_request", original))
        return undo

    def _install_postgres(self) -> list[Callable[[], None]]:
        import psycopg
        from langgraph.store.postgres import PostgresStore

        undo = []
        original_batch = PostgresStore.batch

        def batch(store: Any, ops: Any) -> Any:
            ops = list(ops)
            depth = getattr(self._depth, "value", 0)
            if depth == 0:
                self._note({"op": "batch", "ops": [_pg_shape(op) for op in ops]})
            self._depth.value = depth + 1
            try:
                return original_batch(store, ops)
            finally:
                self._depth.value = depth

        PostgresStore.batch = batch  # type: ignore[method-assign]
        undo.append(lambda: setattr(PostgresStore, "batch", original_batch))

        def sql_shape(connection: Any, query: Any, *args: Any, **kwargs: Any) -> Shape:
            text = str(query).split("(")[0].strip().lower()
            return {"op": "sql", "sql": text}

        undo.append(self._wrap(psycopg.Connection, "execute", sql_shape))
        return undo


def summarise(runs: Sequence[Sequence[Shape]]) -> dict[str, float]:
    """Calls per run by kind (``"query episodes"``, ``"batch"``, ...), averaged over ``runs``."""
    counts: Counter[str] = Counter()
    for shapes in runs:
        for group in hops(shapes):
            counts["executor hops with a call"] += 1 if group else 0
        for shape in shapes:
            if shape["op"] == "hop":
                continue
            if shape["op"] == "batch":
                counts["batch (round trip)"] += 1
                for op in shape["ops"]:
                    counts[f"batch: {op['op']} {op['role']}"] += 1
            elif shape["op"] == "sql":
                counts[f"sql {shape['sql']}"] += 1
            else:
                counts[f"{shape['op']} {shape['role']}"] += 1
    total = max(1, len(runs))
    return {kind: counts[kind] / total for kind in sorted(counts)}


def round_trips(runs: Sequence[Sequence[Shape]]) -> float:
    """Store round trips per run: each call (a Postgres batch counts once)."""
    calls = sum(1 for shapes in runs for shape in shapes if shape["op"] != "hop")
    return calls / max(1, len(runs))


def hops(shapes: Sequence[Shape]) -> list[list[Shape]]:
    """A run's calls grouped by the executor hop they ran in (a hop without one: empty)."""
    groups: list[list[Shape]] = []
    for shape in shapes:
        if shape["op"] == "hop" or not groups:
            groups.append([])
        if shape["op"] != "hop":
            groups[-1].append(shape)
    return groups


# ------------------------------------------------------------------ replay


class ChromaReplay:
    """Issue a recorded run's Chroma calls, shape for shape, on raw collections."""

    def __init__(self, client: Any, tag: str, embeddings: Any, seeds: Sequence[Any]) -> None:
        self.client = client
        self.embeddings = embeddings
        self.names = {"episodes": f"raw-same-{tag}", "journal": f"raw-same-{tag}-journal"}
        self.episodes = client.create_collection(
            self.names["episodes"],
            metadata={"hnsw:space": "cosine"},
            embedding_function=None,
        )
        self.journal = client.create_collection(
            self.names["journal"], metadata={"journal": "yes"}, embedding_function=None
        )
        self.names["head"] = f"raw-same-{tag}-journal-head"
        self.head = client.create_collection(
            self.names["head"], metadata={"head": "yes"}, embedding_function=None
        )
        self.head.add(ids=["head"], embeddings=[[1.0]], metadatas=[{"nonce": "0"}])
        self.seed_ids = [episode.episode_id for episode in seeds]
        self.episodes.add(
            ids=self.seed_ids,
            embeddings=embeddings.embed_documents([e.task.description for e in seeds]),
            documents=[e.task.description for e in seeds],
            metadatas=[_metadata(episode, i) for i, episode in enumerate(seeds)],
        )
        self.journal_ids = [f"seed-entry-{i}" for i in range(16)]
        self.journal.add(
            ids=self.journal_ids,
            embeddings=[[1.0]] * 16,
            metadatas=[{"run": f"run-{i}", "entry": _ENTRY} for i in range(16)],
        )
        self.counter = 0

    def call(self, shape: Shape, index: int, text: str, episode: Any) -> None:
        """One raw call of ``shape`` (run ``index``, its task ``text`` and ``episode``)."""
        op, role = shape["op"], shape["role"]
        target = {"journal": self.journal, "head": self.head}.get(role, self.episodes)
        self.counter += 1
        unique = f"{index}-{self.counter}"
        if op == "query":
            target.query(
                query_embeddings=[self.embeddings.embed_query(text)],
                n_results=shape["n"],
                include=shape["include"],
                where={"category": episode.task.category.value} if shape["where"] else None,
            )
        elif op == "get":
            ids = self.journal_ids if role == "journal" else self.seed_ids
            if shape["ids"] is not None:
                wanted = [ids[(index + i) % len(ids)] for i in range(shape["ids"])]
                target.get(ids=wanted, include=shape["include"])
            elif role == "journal":
                target.get(
                    where={"run": f"run-{index % 16}"} if shape["where"] else None,
                    limit=shape["limit"],
                    include=shape["include"],
                )
            else:
                target.get(
                    where={"seq": {"$gte": 0}} if shape["where"] else None,
                    limit=shape["limit"],
                    include=shape["include"],
                )
        elif op in ("add", "upsert"):
            count = shape["ids"]
            method = getattr(target, op)
            if role == "head":
                method(
                    ids=[f"w-{index}-{i}" for i in range(count)],
                    embeddings=[[1.0]] * count,
                    metadatas=[{"nonce": unique}] * count,
                )
            elif role == "journal":
                method(
                    ids=[f"entry-{unique}-{i}" for i in range(count)],
                    embeddings=[[1.0]] * count,
                    metadatas=[{"run": f"run-{index}", "entry": _ENTRY}] * count,
                )
            else:
                method(
                    ids=[f"{episode.episode_id}-{unique}-{i}" for i in range(count)],
                    embeddings=self.embeddings.embed_documents([episode.task.description] * count),
                    documents=[episode.task.description] * count,
                    metadatas=[_metadata(episode, 1_000_000 + index)] * count,
                )
        elif op == "delete":
            # What a run deletes is what it wrote a moment before (a head's "writing:"
            # record): the run's own small records (below).
            target.delete(ids=[f"w-{index}-{i}" for i in range(shape["ids"])])
        elif op == "update":
            ids = self.journal_ids if role == "journal" else self.seed_ids
            wanted = [ids[(index + i) % len(ids)] for i in range(shape["ids"])]
            target.update(ids=wanted, metadatas=[{"touched": index}] * len(wanted))
        elif op == "count":
            target.count()
        elif op == "modify":
            metadata = (
                {"journal": "yes", "state": str(index)}
                if role == "journal"
                else {"langchain_episodic:state": json.dumps({"run": index})}
            )
            target.modify(metadata=metadata)
        elif op in ("get_collection", "get_or_create_collection"):
            self.client.get_collection(self.names[role], embedding_function=None)
        elif op == "list_collections":
            self.client.list_collections()
        elif op == "count_collections":
            self.client.count_collections()
        else:  # create_collection, delete_collection: not in a run's steady state
            msg = f"no raw replay for a Chroma {op}"
            raise ValueError(msg)


async def replay(
    replayer: ChromaReplay | PostgresReplay,
    shapes: Sequence[Shape],
    index: int,
    text: str,
    episode: Any,
) -> None:
    """A recorded run's raw calls, one after another, in as many executor hops as it made.

    The calls the memory made in one hop of the event loop's executor are made in one
    here too (an async app calling a sync client the way the memory does); hops that
    made no store call are not replayed.
    """
    loop = asyncio.get_running_loop()
    for group in hops(shapes):
        if group:
            await loop.run_in_executor(None, _calls, replayer, group, index, text, episode)


def _calls(
    replayer: ChromaReplay | PostgresReplay,
    group: Sequence[Shape],
    index: int,
    text: str,
    episode: Any,
) -> None:
    for shape in group:
        replayer.call(shape, index, text, episode)


class PostgresReplay:
    """Issue a recorded run's ``PostgresStore`` batches and SQL, shape for shape, raw."""

    def __init__(self, store: Any, tag: str, seeds: Sequence[Any]) -> None:
        from langgraph.store.base import PutOp

        self.store = store
        self.spaces = {"episodes": ("raw-same", tag), "ledger": ("raw-same", tag, "ledger")}
        self.seed_keys = [episode.episode_id for episode in seeds]
        store.batch(
            [
                PutOp(self.spaces["episodes"], e.episode_id, _pg_value(e, i), index=["task"])
                for i, e in enumerate(seeds)
            ]
            + [
                PutOp(self.spaces["ledger"], f"key-{i}", {"v": _ENTRY}, index=False)
                for i in range(16)
            ]
        )
        self.counter = 0

    def ops(self, shape: Shape, index: int, text: str, episode: Any) -> list[Any]:
        """The raw ops of one recorded batch."""
        from langgraph.store.base import GetOp, ListNamespacesOp, PutOp, SearchOp

        built: list[Any] = []
        for op in shape["ops"]:
            self.counter += 1
            space = self.spaces[op["role"]]
            ledger = op["role"] == "ledger"
            existing = (
                f"key-{self.counter % 16}"
                if ledger
                else self.seed_keys[self.counter % len(self.seed_keys)]
            )
            if op["op"] == "GetOp":
                built.append(GetOp(space, existing))
            elif op["op"] == "SearchOp":
                built.append(SearchOp(space, None, op["limit"], 0, text if op["query"] else None))
            elif op["op"] == "ListNamespacesOp":
                built.append(ListNamespacesOp(match_conditions=None, max_depth=None, limit=100))
            elif op["delete"]:
                built.append(PutOp(space, f"gone-{index}-{self.counter}", None))
            elif ledger:
                built.append(
                    PutOp(space, f"key-{index}-{self.counter}", {"v": _ENTRY}, index=False)
                )
            else:
                built.append(
                    PutOp(
                        space,
                        f"{episode.episode_id}-{self.counter}",
                        _pg_value(episode, index),
                        index=["task"] if op["index"] else False,
                    )
                )
        return built

    def sql(self, shape: Shape, index: int) -> None:  # noqa: ARG002 (the shape is a lock's)
        """One statement a store runs on a connection of its own (an advisory lock)."""
        # A key of its own per run: the round trip is replayed, not the waiting.
        # A transaction-level lock is gone when its statement commits, so nothing leaks.
        key = 1_000_000 + index
        with self.store.conn.connection() as connection:
            connection.execute("SELECT pg_try_advisory_xact_lock(%s)", (key,))

    def call(self, shape: Shape, index: int, text: str, episode: Any) -> None:
        """One raw call of ``shape``: a batch, or a statement on a connection of its own."""
        if shape["op"] == "batch":
            self.store.batch(self.ops(shape, index, text, episode))
        else:
            self.sql(shape, index)


_ENTRY = json.dumps({"kind": "shown", "ids": ["seed-000001", "seed-000002", "seed-000003"]})


def _metadata(episode: Any, seq: int) -> dict[str, Any]:
    return {
        "episode": json.dumps(episode.to_dict()),
        "seq": seq,
        "category": episode.task.category.value,
        "outcome": episode.outcome.value,
        "strategy_used": episode.strategy_used,
    }


def _pg_value(episode: Any, seq: int) -> dict[str, Any]:
    return {"task": episode.task.description, "episode": episode.to_dict(), "seq": seq}
