"""Several processes: one at a time on an embedded store (a lock), many through a server.

Chroma's embedded mode is not safe for writers in several processes, so
``ChromaEpisodeStore(path=...)`` locks the folder (``_path_lock``); processes that share
episodes go through a Chroma server, where concurrent writers must lose nothing: no
episode, and no credit (processes crediting one run store one outcome; the others are
told so).
"""

from __future__ import annotations

import gc
import json
import math
import os
import re
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest
from chromadb.api import ClientAPI

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.errors import CreditError, StoreLockedError
from langchain_episodic.scoring.credit import book_from
from langchain_episodic.scoring.skills import compute_skill_profiles
from langchain_episodic.stores.chroma._path_lock import LOCK_FILE_NAME
from tests.helpers.episodes import article_recall, corpus, diverse_corpus, relevance_recall
from tests.unit_tests.factories import assert_same_profiles

REPO = Path(__file__).resolve().parents[2]
ENV = {**os.environ, "ANONYMIZED_TELEMETRY": "False"}

# Another process, driven line by line: "open <timeout>" opens a store on the folder
# (kept open), "close" closes the last one; each answers one JSON line.
PROBE = textwrap.dedent(
    """
    import json, sys
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from langchain_episodic.errors import StoreLockedError
    from tests.helpers.episodes import corpus

    path = sys.argv[1]
    stores = []
    print(json.dumps({"ready": True}), flush=True)
    for line in sys.stdin:
        command, _, argument = line.strip().partition(" ")
        if command == "open":
            try:
                stores.append(ChromaEpisodeStore(path=path, lock_timeout=float(argument)))
            except StoreLockedError as error:
                answer = {"locked": str(error), "holder": error.holder}
            else:
                memory = EpisodicMemory(store=stores[-1])
                answer = {"opened": len(memory)}
                memory.record_many(corpus(len(memory) + 3)[len(memory):])
        elif command == "close":
            stores.pop().close()
            answer = {"closed": True}
        print(json.dumps(answer), flush=True)
    """
)


class Probe:
    """A second process that tries to open the same folder."""

    def __init__(self, path: Path) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", PROBE, str(path)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        assert self.ask(None) == {"ready": True}

    def ask(self, command: str | None) -> dict[str, object]:
        assert self.process.stdin is not None
        assert self.process.stdout is not None
        if command is not None:
            self.process.stdin.write(command + "\n")
            self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the probe died (exit code {self.process.poll()})"
        answer: dict[str, object] = json.loads(line)
        return answer

    def send(self, command: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(command + "\n")
        self.process.stdin.flush()

    def stop(self) -> None:
        with self.process:
            self.process.kill()


@pytest.fixture
def probe(tmp_path: Path) -> Iterator[Probe]:
    started = Probe(tmp_path / "store")
    yield started
    started.stop()


def test_a_second_process_is_refused_with_the_holders_pid(tmp_path: Path, probe: Probe) -> None:
    path = tmp_path / "store"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(diverse_corpus(5))
        refused = probe.ask("open 0")
        message = str(refused["locked"])
        assert f"path={str(path)!r} is locked by another process (pid {os.getpid()})" in message
        assert "Close the other process" in message
        assert "use a Chroma server" in message
        assert refused["holder"] == f"pid {os.getpid()}"
        # With a timeout, it waits that long, then says so.
        assert "after waiting 0.2 s" in str(probe.ask("open 0.2")["locked"])
    # Closed here: the other process opens the folder and sees the five episodes.
    assert probe.ask("open 0") == {"opened": 5}
    assert (path / LOCK_FILE_NAME).read_text().strip() == str(probe.process.pid)
    with pytest.raises(StoreLockedError, match=f"pid {probe.process.pid}"):
        ChromaEpisodeStore(path=path)


def test_a_waiting_writer_gets_the_store_when_the_holder_closes(
    tmp_path: Path, probe: Probe
) -> None:
    path = tmp_path / "store"
    store = ChromaEpisodeStore(path=path)
    EpisodicMemory(store=store).record_many(diverse_corpus(4))
    assert "locked" in probe.ask("open 0")
    probe.send("open 120")  # waits for us
    store.close()
    assert probe.ask(None) == {"opened": 4}
    assert probe.ask("close") == {"closed": True}
    # Now it is ours again, with what the other process wrote.
    with ChromaEpisodeStore(path=path) as reopened:
        assert reopened.count("default") == 4 + 3


def test_the_lock_dies_with_a_sigkilled_holder(tmp_path: Path, probe: Probe) -> None:
    path = tmp_path / "store"
    assert probe.ask("open 0") == {"opened": 0}
    with pytest.raises(StoreLockedError, match=f"pid {probe.process.pid}"):
        ChromaEpisodeStore(path=path)
    probe.process.send_signal(signal.SIGKILL)
    probe.process.wait()
    with ChromaEpisodeStore(path=path) as store:
        memory = EpisodicMemory(store=store)
        assert len(memory) == 3  # the probe's records, acknowledged before the kill
        memory.record_many(diverse_corpus(10)[3:])
        assert len(memory) == 10


def test_stores_in_one_process_share_the_lock(tmp_path: Path, probe: Probe) -> None:
    path = tmp_path / "store"
    first = ChromaEpisodeStore(path=path)
    second = ChromaEpisodeStore(path=path)
    EpisodicMemory(store=first).record_many(diverse_corpus(2))
    assert len(EpisodicMemory(store=second)) == 2
    first.close()
    first.close()  # idempotent
    assert "locked" in probe.ask("open 0")  # the second store still holds it
    second_memory = EpisodicMemory(store=second)
    assert second_memory.record_many(diverse_corpus(3)) == 1
    del second, second_memory
    gc.collect()  # a collected store gives its share back
    assert probe.ask("open 0") == {"opened": 3}


def test_stores_on_a_client_take_no_lock(tmp_path: Path) -> None:
    import chromadb  # noqa: PLC0415

    client = chromadb.PersistentClient(path=str(tmp_path / "store"))
    with ChromaEpisodeStore(client=client) as store:
        assert store.count("default") == 0
    assert not (tmp_path / "store" / LOCK_FILE_NAME).exists()


# One process of the server test: ``threads`` threads share one memory, each records
# its own slice of the corpus, one by one and in batches, all released at once.
SERVER_WRITER = textwrap.dedent(
    """
    import json, sys, threading
    import chromadb
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from tests.helpers.episodes import diverse_corpus

    host, name = sys.argv[1:3]
    port, process_index, threads, per_thread, total = map(int, sys.argv[3:8])
    episodes = diverse_corpus(total)
    client = chromadb.HttpClient(host=host, port=port)
    store = ChromaEpisodeStore(client=client, collection_name=name)
    memory = EpisodicMemory(store=store, namespace="shared")
    errors = []

    def work(thread_index):
        start = (process_index * threads + thread_index) * per_thread
        mine = episodes[start : start + per_thread]
        try:
            position = 0
            while position < len(mine):
                if position % 20 < 10:
                    memory.record(mine[position])
                    position += 1
                else:
                    memory.record_many(mine[position : position + 10])
                    position += 10
        except BaseException as error:
            errors.append(repr(error))

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    print("ready", flush=True)
    sys.stdin.readline()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(json.dumps({"errors": errors}), flush=True)
    """
)


def test_concurrent_writers_through_a_server_lose_and_duplicate_nothing(
    chroma_server_address: tuple[str, int], chroma_server_client: ClientAPI, unique_name: str
) -> None:
    processes, threads, per_thread = 3, 2, 80
    total = processes * threads * per_thread
    episodes = diverse_corpus(total)
    host, port = chroma_server_address
    writers = [
        subprocess.Popen(
            [sys.executable, "-c", SERVER_WRITER, host, unique_name]
            + [str(n) for n in (port, index, threads, per_thread, total)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for index in range(processes)
    ]
    try:
        for writer in writers:  # all imported and connected before anyone writes
            assert writer.stdout is not None
            assert writer.stdout.readline() == "ready\n"
        for writer in writers:
            assert writer.stdin is not None
            writer.stdin.write("go\n")
            writer.stdin.flush()
        reports = [json.loads(writer.communicate(timeout=300)[0]) for writer in writers]
    finally:
        for writer in writers:
            writer.kill()
            writer.wait()
    assert reports == [{"errors": []}] * processes

    store = ChromaEpisodeStore(client=chroma_server_client, collection_name=unique_name)
    ids = store.collection("shared").get(include=[])["ids"]
    assert sorted(ids) == sorted(episode.episode_id for episode in episodes)  # each once
    assert store.count("shared") == total
    memory = EpisodicMemory(store=store, namespace="shared")
    assert len(memory) == total
    assert store.get("shared", ids) == {episode.episode_id: episode for episode in episodes}
    # Each process numbered its records from its own count; the reopened memory still
    # counts every episode once and fills its short-term window.
    assert_same_profiles(memory.skill_profiles(), compute_skill_profiles(episodes))
    assert sorted(e.episode_id for e in memory.episodes(page_size=64)) == sorted(ids)
    assert len(memory.short_term) == 5
    assert set(memory.short_term) <= set(episodes)
    now = float(total)
    queries = [episodes[i].task.description for i in (0, 97, 250, total - 1)]
    queries += [" ".join(words) for words in zip(*(q.split() for q in queries[:3]), strict=False)]
    # The subject is the index: a missing or duplicated record changes the candidates.
    # The article's ranking returns every top candidate, so it sees any such change;
    # the default is checked against its own brute-force reference as well.
    for query in queries:
        for ranking, reference in (("article", article_recall), ("relevance", relevance_recall)):
            got = memory.recall(query, top_k=3, current_time=now, ranking=ranking)
            expected = reference(episodes, memory.embeddings, query, 3, now)
            assert [r.episode.episode_id for r in got] == [episode_id for episode_id, _ in expected]
            for result, (_, priority) in zip(got, expected, strict=True):
                assert math.isclose(result.priority, priority, abs_tol=1e-6)


def test_lock_file_holds_only_the_pid(tmp_path: Path) -> None:
    with ChromaEpisodeStore(path=tmp_path / "store"):
        text = (tmp_path / "store" / LOCK_FILE_NAME).read_text()
    assert re.fullmatch(r"\d+\n", text)


def test_reopening_in_process_searches_what_another_process_wrote(
    tmp_path: Path, probe: Probe
) -> None:
    path = tmp_path / "store"
    with ChromaEpisodeStore(path=path) as store:
        EpisodicMemory(store=store).record_many(diverse_corpus(5))
    assert probe.ask("open 0") == {"opened": 5}  # and records three more
    assert probe.ask("close") == {"closed": True}
    with ChromaEpisodeStore(path=path) as store:
        memory = EpisodicMemory(store=store)
        assert len(memory) == 8
        # The subject is what the search sees, not ranking: the article's ranking returns
        # every candidate, so all eight must be found (the default keeps only relevant ones).
        assert len(memory.recall("Implement a login form", top_k=8, ranking="article")) == 8


def test_the_cli_reports_a_locked_store_in_one_line(
    tmp_path: Path, probe: Probe, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_episodic.cli import main  # noqa: PLC0415

    assert probe.ask("open 0") == {"opened": 0}
    assert main(["--path", str(tmp_path / "store"), "stats"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: path=")
    assert f"(pid {probe.process.pid})" in err
    assert err.count("\n") == 1


def test_a_store_chroma_cannot_open_does_not_keep_the_folder_locked(
    tmp_path: Path, probe: Probe
) -> None:
    path = tmp_path / "store"
    (path / "chroma.sqlite3").mkdir(parents=True)  # Chroma cannot open a folder as its database
    with pytest.raises(Exception, match="database"):
        ChromaEpisodeStore(path=path)
    (path / "chroma.sqlite3").rmdir()
    assert probe.ask("open 0") == {"opened": 0}  # another process gets the folder


# One process of the credit tests, on a server: "distinct" notes and credits its own
# runs (``threads`` threads share one memory); "race" credits runs the parent noted,
# which every other process credits at the same moment with another reward. Prints
# one JSON line per run: what ``credit`` returned, or the exception it raised.
CREDITOR = textwrap.dedent(
    """
    import json, sys, threading
    import chromadb
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from langchain_episodic.model.episode import TaskCategory, TaskDescription

    host, name, mode = sys.argv[1:4]
    port, process_index, threads, runs = map(int, sys.argv[4:8])
    task = TaskDescription("Fix the login session bug", TaskCategory.DEBUGGING)
    client = chromadb.HttpClient(host=host, port=port)
    memory = EpisodicMemory(
        store=ChromaEpisodeStore(client=client, collection_name=name), namespace="shared"
    )
    results, lock = [], threading.Lock()

    def work(thread_index):
        for i in range(runs):
            if mode == "distinct":
                run_id = f"p{process_index}-t{thread_index}-{i}"
                shown = [f"ep-{i % 12}", f"ep-{(i + thread_index) % 12}"]
                memory.runs.note(run_id, shown, task)
                reward = (37 * i + process_index) % 101 / 100
            else:
                run_id = f"race-{i}"
                reward = process_index / 10
            try:
                event = memory.runs.credit(run_id, reward, by=f"p{process_index}")
            except BaseException as error:
                answer = {"run": run_id, "error": type(error).__name__, "message": str(error)}
            else:
                answer = {"run": run_id, "reward": event.reward, "by": event.by}
            with lock:
                results.append(answer)

    workers = [threading.Thread(target=work, args=(i,)) for i in range(threads)]
    print("ready", flush=True)
    sys.stdin.readline()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    print(json.dumps(results), flush=True)
    """
)


def run_creditors(
    address: tuple[str, int], name: str, mode: str, processes: int, threads: int, runs: int
) -> list[list[dict[str, object]]]:
    """Start the processes, release them at once, and return each one's answers."""
    host, port = address
    creditors = [
        subprocess.Popen(
            [sys.executable, "-c", CREDITOR, host, name, mode]
            + [str(n) for n in (port, index, threads, runs)],
            cwd=REPO,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=ENV,
        )
        for index in range(processes)
    ]
    try:
        for creditor in creditors:  # all connected and reading the journal before anyone writes
            assert creditor.stdout is not None
            assert creditor.stdout.readline() == "ready\n"
        for creditor in creditors:
            assert creditor.stdin is not None
            creditor.stdin.write("go\n")
            creditor.stdin.flush()
        return [json.loads(creditor.communicate(timeout=300)[0]) for creditor in creditors]
    finally:
        for creditor in creditors:
            creditor.kill()
            creditor.wait()


def test_concurrent_credits_of_distinct_runs_through_a_server_lose_nothing(
    chroma_server_address: tuple[str, int], chroma_server_client: ClientAPI, unique_name: str
) -> None:
    processes, threads, runs = 3, 2, 15
    store = ChromaEpisodeStore(client=chroma_server_client, collection_name=unique_name)
    before = EpisodicMemory(store=store, namespace="shared")  # opened before the writes
    before.record_many(corpus(12))
    reports = run_creditors(
        chroma_server_address, unique_name, "distinct", processes, threads, runs
    )
    answers = [answer for report in reports for answer in report]
    assert [a for a in answers if "error" in a] == []
    assert len(answers) == processes * threads * runs
    returned = {str(a["run"]): a["reward"] for a in answers}
    assert len(returned) == len(answers)

    memory = EpisodicMemory(store=store, namespace="shared")
    log = memory.runs.log()
    assert {event.run_id: event.reward for event in log} == returned  # every one, once
    assert memory.runs.pending() == {}
    outcomes = [e for e in store.read_journal("shared") if e.entry_id.startswith("outcome:")]
    assert len(outcomes) == len(returned)
    # Every episode counts every run that showed it, once; the memory opened before the
    # writes sees the same table once it re-reads the journal.
    for episode_id, row in memory.runs.utilities().items():
        assert row.credited_runs == sum(episode_id in event.episode_ids for event in log)
    assert sum(row.credited_runs for row in memory.runs.utilities().values()) > len(log)
    before.runs.reload()
    assert before.runs.log() == log
    expected = book_from(log).rows
    now = memory.now()
    for episode_id, row in before.runs.utilities().items():
        assert row.credited_runs == expected[episode_id].credited_runs
        assert math.isclose(row.estimate(now), expected[episode_id].estimate(now), rel_tol=1e-12)


def test_processes_racing_to_credit_one_run_store_one_outcome(
    chroma_server_address: tuple[str, int], chroma_server_client: ClientAPI, unique_name: str
) -> None:
    processes, threads, runs = 4, 1, 25
    store = ChromaEpisodeStore(client=chroma_server_client, collection_name=unique_name)
    memory = EpisodicMemory(store=store, namespace="shared")
    memory.record_many(corpus(12))
    for i in range(runs):
        memory.runs.note(f"race-{i}", [f"ep-{i % 12}"], "Fix the login session bug")
    reports = run_creditors(chroma_server_address, unique_name, "race", processes, threads, runs)
    memory.runs.reload()
    stored = {event.run_id: event for event in memory.runs.log()}
    assert sorted(stored) == sorted(f"race-{i}" for i in range(runs))
    for i in range(runs):
        run_id = f"race-{i}"
        answers = {
            f"p{index}": next(a for a in report if a["run"] == run_id)
            for index, report in enumerate(reports)
        }
        winners = [by for by, answer in answers.items() if "error" not in answer]
        # Exactly one process was told it credited the run, and it is the stored outcome.
        assert len(winners) == 1, (run_id, answers)
        [winner] = winners
        assert (stored[run_id].by, stored[run_id].reward) == (winner, int(winner[1:]) / 10)
        for by, answer in answers.items():
            if by != winner:
                assert answer["error"] == "CreditError", answer
                assert "already credited" in str(answer["message"])
        assert len(store.read_journal("shared", run_id)) == 2  # its injection, one outcome
    # Each episode counts each run once, whoever won it.
    for episode_id, row in memory.runs.utilities().items():
        assert row.credited_runs == sum(f"ep-{i % 12}" == episode_id for i in range(runs))
    with pytest.raises(CreditError, match="already credited"):
        memory.runs.credit("race-0", 1.0)


def test_the_cli_waits_with_lock_timeout_for_a_store_another_process_holds(
    tmp_path: Path, probe: Probe, capsys: pytest.CaptureFixture[str]
) -> None:
    import threading  # noqa: PLC0415
    import time  # noqa: PLC0415

    from langchain_episodic.cli import main  # noqa: PLC0415

    path = str(tmp_path / "store")
    assert probe.ask("open 0") == {"opened": 0}  # the probe holds the folder, 3 episodes
    assert main(["--path", path, "stats"]) == 2
    err = capsys.readouterr().err
    assert f"(pid {probe.process.pid}): " in err
    assert "even to read. Wait for it with --lock-timeout SECONDS" in err
    assert main(["--path", path, "stats", "--lock-timeout", "0.2"]) == 2
    assert f"(pid {probe.process.pid}) after waiting 0.2 s" in capsys.readouterr().err
    # The holder closes a second into the wait: the command then reads what it wrote.
    closer = threading.Timer(1.0, probe.send, ["close"])
    started = time.monotonic()
    closer.start()
    try:
        assert main(["--lock-timeout", "120", "--path", path, "stats"]) == 0
    finally:
        closer.join()
    assert time.monotonic() - started >= 0.9
    assert "episodes    3\n" in capsys.readouterr().out
    assert probe.ask(None) == {"closed": True}


def test_forgetting_in_a_folder_another_process_holds_fails_clearly_and_removes_nothing(
    tmp_path: Path, probe: Probe, capsys: pytest.CaptureFixture[str]
) -> None:
    from langchain_episodic.cli import main  # noqa: PLC0415

    assert probe.ask("open 0") == {"opened": 0}
    code = main(["--path", str(tmp_path / "store"), "forget", "--all", "--reason", "x", "--yes"])
    err = capsys.readouterr().err
    assert code == 2
    assert f"(pid {probe.process.pid})" in err
    probe.stop()
    with ChromaEpisodeStore(path=tmp_path / "store") as store:
        memory = EpisodicMemory(store=store)
        assert len(memory) == 3  # what the other process recorded, all of it
        assert memory.forgetting.unfinished() == []
        assert store.read_journal("default") == []
