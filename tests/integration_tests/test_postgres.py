"""The agent's own store on a real PostgreSQL with pgvector: processes, kills, exactness.

The behaviour suite (tests/store_suite, kind ``langgraph-postgres``) runs every store
test on LangGraph's ``PostgresStore``; these tests add what needs processes: two
writers on one namespace, writers racing to credit one run, and a writer killed with
SIGKILL at random moments.
"""

from __future__ import annotations

import dataclasses
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from langchain_episodic import Episode, EpisodicMemory
from langchain_episodic.scoring.skills import compute_skill_profiles
from langchain_episodic.stores import LangGraphEpisodeStore
from tests.helpers.episodes import article_recall, diverse_corpus
from tests.helpers.stores import postgres_graph_store
from tests.postgres_server import fresh_database

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}

# One writer process: records its slice of the corpus, one by one and in batches, and
# credits runs of its own; prints "ready", waits for a line, then "ack <id>" per write.
WRITER = textwrap.dedent(
    """
    import os, sys
    from langchain_episodic import Episode, EpisodicMemory
    from langchain_episodic.stores import LangGraphEpisodeStore
    from tests.helpers.episodes import diverse_corpus
    from tests.helpers.stores import postgres_graph_store

    uri, index, per_writer, total = sys.argv[1], *map(int, sys.argv[2:5])
    episodes = diverse_corpus(total)[index * per_writer : (index + 1) * per_writer]
    graph_store, connection = postgres_graph_store(uri)
    memory = EpisodicMemory(store=LangGraphEpisodeStore(graph_store), namespace="shared")
    print("ready", flush=True)
    sys.stdin.readline()
    position = 0
    while position < len(episodes):
        batch = episodes[position : position + (1 if position % 20 < 10 else 10)]
        if len(batch) == 1:
            memory.record(batch[0])
        else:
            memory.record_many(batch)
        run = f"run-{index}-{os.getpid()}-{position}"
        memory.runs.note(run, [batch[0].episode_id], batch[0].task)
        memory.runs.credit(run, 0.5 + 0.05 * (position % 10), by=f"w{index}")
        position += len(batch)
        print("".join(f"ack {e.episode_id}\\n" for e in batch), end="", flush=True)
    print("done", flush=True)
    """
)


def runs_of(per_writer: int) -> int:
    """How many runs a writer credits for ``per_writer`` episodes (one per write)."""
    position = runs = 0
    while position < per_writer:
        position += 1 if position % 20 < 10 else 10
        runs += 1
    return runs


def start_writer(uri: str, index: int, per_writer: int, total: int) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", WRITER, uri, str(index), str(per_writer), str(total)],
        cwd=REPO,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=ENV,
    )


@contextmanager
def open_memory(uri: str) -> Iterator[EpisodicMemory]:
    """A memory over the database, as a fresh process opens it; its connection closed after."""
    graph_store, connection = postgres_graph_store(uri)
    with connection:
        yield EpisodicMemory(store=LangGraphEpisodeStore(graph_store), namespace="shared")


def test_two_writer_processes_on_one_namespace_lose_and_duplicate_nothing(
    postgres_uri: str,
) -> None:
    uri = fresh_database(postgres_uri)
    with open_memory(uri):
        pass  # the store's tables made once: two first setups at once race in LangGraph
    writers_count, per_writer = 2, 120
    total = writers_count * per_writer
    writers = [start_writer(uri, i, per_writer, total) for i in range(writers_count)]
    try:
        for writer in writers:
            assert writer.stdout is not None
            assert writer.stdout.readline() == "ready\n"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        outputs = [writer.communicate(timeout=300)[0] for writer in writers]
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    assert all(output.endswith("done\n") for output in outputs), outputs

    episodes = diverse_corpus(total)
    with open_memory(uri) as memory:
        check_everything_once(memory, episodes, writers_count * runs_of(per_writer))


def check_everything_once(memory: EpisodicMemory, episodes: list[Episode], runs: int) -> None:
    total = len(episodes)
    assert len(memory) == total
    stored = sorted(e.episode_id for e in memory.episodes(page_size=50))
    assert stored == sorted(e.episode_id for e in episodes)  # each once
    counted = {p.category: p.total_episodes for p in memory.skill_profiles()}
    assert counted == {p.category: p.total_episodes for p in compute_skill_profiles(episodes)}
    log = memory.runs.log()
    assert len(log) == runs  # every credit, once
    assert len({event.run_id for event in log}) == len(log)
    now = float(total)
    for query in [episodes[i].task.description for i in (0, 77, 150, total - 1)]:
        got = memory.recall(query, top_k=3, current_time=now, ranking="article")
        expected = article_recall(episodes, memory.embeddings, query, 3, now)
        assert [r.episode.episode_id for r in got] == [i for i, _ in expected]


def test_acknowledged_writes_survive_sigkill(postgres_uri: str, tmp_path: Path) -> None:
    uri = fresh_database(postgres_uri)
    total = 400
    rng = random.Random(5)
    acked: list[str] = []
    for _ in range(3):
        writer = start_writer(uri, 0, total, total)
        assert writer.stdout is not None
        assert writer.stdin is not None
        assert writer.stdout.readline() == "ready\n"
        writer.stdin.write("go\n")
        writer.stdin.flush()
        deadline = time.monotonic() + rng.uniform(0.5, 2.0)
        while time.monotonic() < deadline:
            line = writer.stdout.readline()
            if line.startswith("ack "):
                acked.append(line.split()[1])
            if not line or line == "done\n":
                break
        writer.send_signal(signal.SIGKILL)
        writer.communicate()  # reaps it and closes its pipes
        with open_memory(uri) as memory:
            stored = {e.episode_id for e in memory.episodes(page_size=100)}
            assert set(acked) <= stored, sorted(set(acked) - stored)[:5]
            assert len(memory) == len(stored)
            runs = [event.run_id for event in memory.runs.log()]
            assert len(runs) == len(set(runs))
    assert acked  # the writer got somewhere before the kills
    # A last writer runs to the end: what a killed one wrote but never committed (items
    # without their place in the ledger) is written again, never left half-recorded.
    writer = start_writer(uri, 0, total, total)
    assert writer.stdout is not None
    assert writer.stdout.readline() == "ready\n"
    assert writer.communicate("go\n", timeout=300)[0].endswith("done\n")
    with open_memory(uri) as memory:
        assert len(memory) == total
        assert [e.episode_id for e in memory.episodes(page_size=100)] == [
            e.episode_id for e in diverse_corpus(total)
        ]


def test_an_erased_user_has_no_row_left_in_postgres(postgres_uri: str) -> None:
    uri = fresh_database(postgres_uri)
    secret = "pg-erasure-secret-5150"
    graph_store, connection = postgres_graph_store(uri)
    try:
        store = LangGraphEpisodeStore(graph_store)
        alice = EpisodicMemory(store=store, namespace="alice")
        bob = EpisodicMemory(store=store, namespace="bob")
        for memory, text in ((alice, secret), (bob, "bob-text")):
            memory.record_many(
                [
                    dataclasses.replace(
                        e,
                        task=dataclasses.replace(
                            e.task, description=f"{e.task.description} {text}"
                        ),
                    )
                    for e in diverse_corpus(20)
                ]
            )
            memory.runs.note("run-1", ["ep-1"], f"task {text}")
            memory.runs.credit("run-1", 0.8)
        receipt = alice.forgetting.forget_all(reason="account closed")
        assert "VACUUM" in receipt.storage
        rows = connection.execute(
            "SELECT count(*) AS n FROM store WHERE value::text LIKE %s", (f"%{secret}%",)
        ).fetchone()
        assert rows is not None
        assert rows["n"] == 0
        kept = connection.execute(
            "SELECT count(*) AS n FROM store WHERE value::text LIKE '%bob-text%'"
        ).fetchone()
        assert kept is not None
        assert kept["n"] > 0
        assert len(bob) == 20
    finally:
        connection.close()
