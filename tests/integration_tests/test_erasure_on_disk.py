"""Erasure verified on disk: no byte of the erased text in any file of the folder.

One user's memory (episodes, lessons, injections, credits, quarantine reasons, all
holding a unique secret) beside another's in one embedded Chroma folder; the first is
erased, the store closed, and every file under the folder is searched for the secret
(the sqlite file, its journal, the vector index files), while the second user's
recall, lessons and utilities are unchanged. Then: a process killed with SIGKILL
during ``forget`` leaves each episode either stored or tombstoned, ``verify`` reports
the half-finished erasure, and running ``forget`` again finishes it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.model.credit import Injection, encode_injection
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.stores.base import JournalEntry
from langchain_episodic.stores.chroma import scrub as chroma_scrub
from langchain_episodic.stores.chroma.health import diagnose_folder, read_index_header
from tests.helpers.cli import run as run_cli
from tests.helpers.database import database_rows
from tests.helpers.episodes import QUERIES, diverse_corpus
from tests.unit_tests.factories import make_episode

REPO = Path(__file__).resolve().parents[2]
NOW = 2_000_000.0
SECRET = "Zx9-secret-4417-qv"


def files_holding(folder: Path, needle: str) -> list[str]:
    """Every file under ``folder`` whose bytes hold ``needle`` (UTF-8), as relative paths."""
    wanted = needle.encode("utf-8")
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and wanted in path.read_bytes():
            found.append(str(path.relative_to(folder)))
    return found


def kill_when(script: str, *args: str, says: str, delay: float = 0.0) -> None:
    """Run ``script`` in a child process; SIGKILL it ``delay`` seconds after it ``says`` so."""
    child = subprocess.Popen(
        [sys.executable, "-c", script, *args],
        cwd=REPO,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO)},
    )
    assert child.stdout is not None
    assert child.stdout.readline().strip() == says
    time.sleep(delay)
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=60)
    child.stdout.close()


def fill(memory: EpisodicMemory, prefix: str, secret: str, count: int = 60) -> None:
    episodes = [
        make_episode(
            episode_id=f"{prefix}-{i}",
            description=f"{episode.task.description} for {secret}",
            category=episode.task.category,
            solution=f"def solve(): return '{secret}'",
            message=f"tests of {secret} passed",
            timestamp=NOW - 1_000 + i,
        )
        for i, episode in enumerate(diverse_corpus(count))
    ]
    memory.record_many(episodes)
    memory.lessons.add(
        [
            Lesson.create(
                title=f"Lesson about {secret}",
                applies_when=f"working for {secret}",
                do=f"remember {secret}",
                sources=[LessonSource(f"{prefix}-1")],
                created_at=NOW,
            )
        ]
    )
    for run in range(5):
        memory.runs.note(f"{prefix}-run-{run}", [f"{prefix}-{run}"], f"task of {secret}")
        memory.runs.credit(f"{prefix}-run-{run}", 0.8)
    memory.runs.note(f"{prefix}-open", [f"{prefix}-9"], f"open task of {secret}")
    memory.quarantine.add([f"{prefix}-3"], reason=f"bad output about {secret}")


def bob_view(memory: EpisodicMemory) -> tuple[object, ...]:
    return (
        [[hit.episode.episode_id for hit in memory.recall(q, top_k=5)] for q in QUERIES],
        memory.lessons.list(None),
        memory.runs.utilities(),
        memory.quarantine.list().keys(),
        len(memory),
    )


def test_an_erased_user_leaves_no_byte_in_the_folder(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    alice = EpisodicMemory(store=store, namespace="alice", clock=lambda: NOW)
    bob = EpisodicMemory(store=store, namespace="bob", clock=lambda: NOW)
    fill(alice, "a", SECRET)
    fill(bob, "b", "bob-public-text")
    alice.flush()
    bob.flush()
    before = bob_view(bob)
    assert files_holding(folder, SECRET)  # the search finds what is there

    receipt = alice.forgetting.forget_all(reason="account deleted", by="gdpr")
    assert receipt.episodes == 60
    # Honest in between: the scrub is batched, and the bytes are still there until it runs.
    assert receipt.scrub_pending
    assert "until the folder is scrubbed" in receipt.storage
    assert files_holding(folder, SECRET)
    assert bob_view(bob) == before
    store.close()

    assert files_holding(folder, SECRET) == []
    assert files_holding(folder, "bob-public-text")  # bob's data is still there
    again = ChromaEpisodeStore(path=folder)
    reopened = EpisodicMemory(store=again, namespace="bob", clock=lambda: NOW)
    assert bob_view(reopened) == before
    alice_again = EpisodicMemory(store=again, namespace="alice", clock=lambda: NOW)
    assert len(alice_again) == 0
    (done,) = alice_again.forgetting.receipts()
    assert not done.scrub_pending
    assert "vacuumed" in done.storage
    again.close()


def test_compact_scrubs_an_open_folder_at_once(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: NOW)
    fill(memory, "a", "common-text")
    memory.record(make_episode(episode_id="private-1", description=f"Handle {SECRET}"))
    receipt = memory.forget(["private-1"], reason="user asked")
    assert receipt.scrub_pending
    assert files_holding(folder, SECRET)

    said = memory.forgetting.compact()

    assert "vacuumed" in said
    assert files_holding(folder, SECRET) == []  # while the store is still open
    (done,) = memory.forgetting.receipts()
    assert (done.scrub_pending, done.storage) == (False, said)
    store.close()
    assert files_holding(folder, SECRET) == []


def test_forgetting_some_episodes_leaves_no_byte_of_theirs(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: NOW)
    fill(memory, "a", "common-text")
    secret_one = make_episode(
        episode_id="private-1", description=f"Handle {SECRET} medical record", timestamp=NOW
    )
    memory.record(secret_one)
    memory.runs.note("private-run", ["private-1", "a-2"], f"a task naming {SECRET}")
    memory.runs.credit("private-run", 0.9)
    memory.forget(["private-1"], reason="user asked")
    store.close()
    assert files_holding(folder, SECRET) == []
    assert files_holding(folder, "common-text")


# Records episodes holding a secret, forgets them (the scrub is left pending), prints
# "forgotten" and waits: the parent kills it with SIGKILL between erasure and scrub.
KILLED_BEFORE_SCRUB = textwrap.dedent(
    """
    import sys, time
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from tests.unit_tests.factories import make_episode

    path, secret = sys.argv[1], sys.argv[2]
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=path), clock=lambda: 2_000_000.0)
    memory.record_many([
        make_episode(episode_id=f"s-{i}", description=f"Task {i} for {secret}")
        for i in range(10)
    ] + [make_episode(episode_id=f"k-{i}", description=f"Kept task {i}") for i in range(10)])
    receipt = memory.forget([f"s-{i}" for i in range(10)], reason="user asked")
    print("forgotten" if receipt.scrub_pending else "scrubbed already", flush=True)
    time.sleep(600)
    """
)


def test_a_scrub_cut_short_by_sigkill_is_reported_and_finished_on_reopen(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "memory"
    kill_when(KILLED_BEFORE_SCRUB, str(folder), SECRET, says="forgotten")
    assert files_holding(folder, SECRET)  # erased, not yet scrubbed: the bytes are there

    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    assert memory.get_episodes([f"s-{i}" for i in range(10)]) == {}  # the erasure stands
    assert len(memory) == 10
    assert memory.forgetting.unfinished() == []
    (receipt,) = memory.forgetting.receipts()
    assert receipt.scrub_pending  # the scrub did not run: still pending after the kill
    store.close()  # the reopened store's close finishes it
    assert files_holding(folder, SECRET) == []

    code, out, _ = run_cli(capsys, "verify", "--path", str(folder), "--json")
    assert code == 0, out
    assert json.loads(out)["scrub_pending"] is None
    store = ChromaEpisodeStore(path=folder)
    (receipt,) = EpisodicMemory(store=store, clock=lambda: NOW).forgetting.receipts()
    assert not receipt.scrub_pending
    store.close()


def test_verify_reports_a_pending_scrub(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder = tmp_path / "memory"
    kill_when(KILLED_BEFORE_SCRUB, str(folder), SECRET, says="forgotten")

    code, out, _ = run_cli(capsys, "verify", "--path", str(folder), "--json")
    assert code == 0, out  # not a fault: the erasure is finished, its scrub waits
    assert "until the folder is scrubbed" in json.loads(out)["scrub_pending"]
    ChromaEpisodeStore(path=folder).close()
    assert files_holding(folder, SECRET) == []


# Records episodes holding a secret, prints "forgetting", forgets them all; the parent
# kills it with SIGKILL while it runs.
FORGETTER = textwrap.dedent(
    """
    import sys
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from tests.unit_tests.factories import make_episode

    path, secret = sys.argv[1], sys.argv[2]
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=path), clock=lambda: 2_000_000.0)
    ids = [f"s-{i}" for i in range(120)]
    memory.record_many([
        make_episode(episode_id=i, description=f"Task {i} for {secret}", timestamp=float(n))
        for n, i in enumerate(ids)
    ])
    for n in range(0, 120, 2):
        memory.runs.note(f"run-{n}", ids[n : n + 2], f"run task of {secret}")
        memory.runs.credit(f"run-{n}", 0.5)
    print("forgetting", flush=True)
    memory.forget(ids[:100], reason="user asked")
    print("done", flush=True)
    """
)


# The erasure takes ~0.15 s here: kills before it starts, early in it and late in it
# (a later kill finds it finished, the case every test ends in anyway).
@pytest.mark.parametrize("delay", [0.0, 0.04, 0.1])
def test_sigkill_during_forget_leaves_episode_or_tombstone_and_forget_finishes(
    tmp_path: Path, delay: float, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "memory"
    kill_when(FORGETTER, str(folder), SECRET, says="forgetting", delay=delay)

    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    ids = [f"s-{i}" for i in range(100)]
    stored, forgotten = memory.get_episodes(ids), memory.forgetting.forgotten(ids)
    assert all(i in stored or i in forgotten for i in ids)
    assert len(memory) == 120 - len(set(forgotten) - set(stored))
    half_done = memory.forgetting.unfinished()
    store.close()
    code, out, _ = run_cli(capsys, "verify", "--path", str(folder))
    if half_done:
        assert code != 0
        assert "erasure" in out
        assert half_done[0] in out

    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    memory.forget(ids, reason="finish the job")
    assert memory.get_episodes(ids) == {}
    assert memory.forgetting.unfinished() == []
    assert len(memory) == 20
    kept_runs = {f"run-{n}" for n in range(100, 120, 2)}  # they showed only kept episodes
    naming = {entry.run_id for entry in memory.journal.entries() if SECRET in entry.payload}
    assert naming == kept_runs
    store.close()
    code, out, _ = run_cli(capsys, "verify", "--path", str(folder), "--json")
    assert code == 0, out
    assert json.loads(out)["unfinished_erasures"] == []


def vector_segments(folder: Path) -> dict[str, Path]:
    """Each collection's vector index folder, by collection name (as chroma.sqlite3 says)."""
    rows = database_rows(
        folder,
        "SELECT c.name, s.id FROM segments s JOIN collections c ON s.collection = c.id "
        "WHERE s.scope = 'VECTOR'",
    )
    return {name: folder / segment for name, segment in rows}


def test_the_scrub_clears_length_slots_in_use_of_an_index_that_never_reads_them(
    tmp_path: Path,
) -> None:
    # chroma-hnswlib keeps in length.bin one float per element, its vector's norm, set
    # and read only for cosine. For the journal's l2 index it never sets them: each
    # saved element's slot is written from uncleared memory, whatever the process held
    # there (seen: a forgotten user's journal text, inside the element count). Here that
    # memory is planted in a slot in use; the scrub must clear it, keep the cosine
    # index's norms, and leave a folder that opens, verifies and answers as before.
    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: NOW)
    corpus = diverse_corpus(12)
    memory.record_many(  # Chroma saves an index to files once 1,000 records are logged
        [
            make_episode(
                episode_id=f"a-{i}",
                description=f"{corpus[i % 12].task.description} number {i}",
                category=corpus[i % 12].task.category,
                timestamp=NOW - 2_000 + i,
            )
            for i in range(1_000)
        ]
    )
    shown = [Injection(f"run-{i}", (f"a-{i}",), "a task", "debugging", NOW) for i in range(1_000)]
    store.append_journal("alice", [JournalEntry(*encode_injection(run)) for run in shown])
    store.close()
    segments = vector_segments(folder)
    journal = next(path for name, path in segments.items() if name.endswith("-journal"))
    episodes = next(path for name, path in segments.items() if not name.endswith("-journal"))
    header, episodes_header = read_index_header(str(journal)), read_index_header(str(episodes))
    assert header is not None
    assert header.count == 1_000  # saved: the slots in use hold what memory held
    assert episodes_header is not None
    assert episodes_header.count == 1_000
    with open(journal / "length.bin", "r+b") as handle:
        handle.seek(4 * 500)  # a slot in use
        handle.write(SECRET.encode("utf-8"))
    norms = (episodes / "length.bin").read_bytes()[: 4 * episodes_header.count]
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: NOW)
    before = answers(memory, store)
    store.close()
    assert files_holding(folder, SECRET) == [str((journal / "length.bin").relative_to(folder))]

    chroma_scrub.scrub_hnsw(str(folder))

    assert files_holding(folder, SECRET) == []
    assert (episodes / "length.bin").read_bytes()[: 4 * episodes_header.count] == norms
    assert diagnose_folder(str(folder)) == []
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: NOW)
    assert answers(memory, store) == before
    later = Injection("run-later", ("a-1",), "a task", "debugging", NOW)
    store.append_journal("alice", [JournalEntry(*encode_injection(later))])
    assert len(store.read_journal("alice", "run-later")) == 1
    store.close()


def answers(memory: EpisodicMemory, store: ChromaEpisodeStore) -> tuple[object, ...]:
    """What the memory recalls for each query, and its journal entries and utilities."""
    recalled = [[hit.episode.episode_id for hit in memory.recall(q, top_k=5)] for q in QUERIES]
    return recalled, store.read_journal(memory.namespace), memory.runs.utilities()


ERASED_ID = "Qv7-erased-id"

# Records 1,100 episodes (Chroma saves the vector index once 1,000 writes are applied,
# so the saved index holds every one), forgets five, scrubs while open (compact), prints
# whether the scrub is still pending, and waits to be killed.
SAVED_THEN_FORGOTTEN = textwrap.dedent(
    """
    import sys, time
    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
    from tests.unit_tests.factories import make_episode

    path, erased = sys.argv[1], sys.argv[2]
    memory = EpisodicMemory(store=ChromaEpisodeStore(path=path), clock=lambda: 2_000_000.0)
    memory.record_many([
        make_episode(
            episode_id=f"{erased}-{i}" if i < 5 else f"kept-{i}",
            description=f"Parse the config file of module {i} and check key {i % 37}",
            timestamp=float(i),
        )
        for i in range(1100)
    ])
    memory.flush()
    memory.forget([f"{erased}-{i}" for i in range(5)], reason="user asked")
    said = memory.forgetting.compact()
    print("pending" if "saved before the deletion" in said else said, flush=True)
    time.sleep(600)
    """
)


def test_no_erased_id_is_left_in_the_folder_and_a_saved_index_still_drops_it(
    tmp_path: Path,
) -> None:
    # Chroma keeps a delete row (the id in clear) in its log while a vector index saved
    # before the delete may hold the record: replayed on load, it drops the record. The
    # scrub keeps those rows while the process runs (a kill then must still find the
    # episodes gone on reopen) and the last close saves the index again and removes them.
    folder = tmp_path / "memory"
    kill_when(SAVED_THEN_FORGOTTEN, str(folder), ERASED_ID, says="pending")
    erased = [f"{ERASED_ID}-{i}" for i in range(5)]
    # The saved index predates the deletes: it and the kept delete rows still name them.
    assert files_holding(folder, ERASED_ID)

    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, clock=lambda: NOW)
    assert len(memory) == 1095
    assert memory.get_episodes(erased) == {}
    for i in range(5):
        shown = memory.recall(f"Parse the config file of module {i} and check key {i}", top_k=10)
        assert shown  # the kept episodes of the same kind are found
        assert not [hit for hit in shown if hit.episode.episode_id in erased]
    store.close()

    assert files_holding(folder, ERASED_ID) == []
    reopened = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=reopened, clock=lambda: NOW)
    assert len(memory) == 1095
    hits = memory.recall("Parse the config file of module 1 and check key 1", top_k=5)
    assert hits
    assert all(hit.episode.episode_id.startswith("kept-") for hit in hits)
    memory.record(make_episode(episode_id="after-settling", timestamp=NOW))
    assert len(memory) == 1096  # numbering goes on after the blanked last row
    reopened.close()
    again = ChromaEpisodeStore(path=folder)
    assert len(EpisodicMemory(store=again, clock=lambda: NOW)) == 1096
    again.close()


def test_forgotten_ids_of_a_never_saved_index_leave_no_byte(tmp_path: Path) -> None:
    folder = tmp_path / "memory"
    store = ChromaEpisodeStore(path=folder)
    memory = EpisodicMemory(store=store, namespace="alice", clock=lambda: NOW)
    fill(memory, ERASED_ID, "common-text", count=40)
    receipt = memory.forgetting.forget_all(reason="account deleted")
    assert receipt.episodes == 40
    bob = EpisodicMemory(store=store, namespace="bob", clock=lambda: NOW)
    bob.record(make_episode(episode_id="bob-1", timestamp=NOW))
    store.close()
    assert files_holding(folder, ERASED_ID) == []
    again = ChromaEpisodeStore(path=folder)
    assert len(EpisodicMemory(store=again, namespace="alice", clock=lambda: NOW)) == 0
    assert len(EpisodicMemory(store=again, namespace="bob", clock=lambda: NOW)) == 1
    again.close()
