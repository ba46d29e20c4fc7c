"""The journal checkpoint: a memory opens from it and the entries after it, never wrongly.

Every test compares what a memory opened from a checkpoint holds with what a full
replay of the same journal gives (the previous way to open, still used where there is
no checkpoint or it does not fit the journal).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from langchain_episodic import ChromaEpisodeStore, EpisodicMemory
from langchain_episodic.model.credit import (
    CreditEvent,
    Injection,
    decode_entry,
    encode_credit,
    encode_injection,
)
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.scoring.credit import UTILITY_HALF_LIFE, UtilityBook, book_from
from langchain_episodic.service import checkpoint as checkpoint_module
from langchain_episodic.service.checkpoint import Checkpoint, decode_checkpoint
from langchain_episodic.service.journal import replayed_checkpoint
from langchain_episodic.stores import InMemoryEpisodeStore, OrderedJournal
from langchain_episodic.stores.base import JournalEntry
from tests.helpers.cli import run as run_cli
from tests.unit_tests.factories import make_episode

NOW = 1_750_000_000.0
NAMESPACE = "default"


class CountingStore(InMemoryEpisodeStore):
    """An in-memory store that counts how its journal is read."""

    def __init__(self) -> None:
        super().__init__()
        self.full_reads = 0
        self.reads_from: list[int] = []

    def read_journal(self, namespace: str, run_id: str | None = None) -> list[JournalEntry]:
        if run_id is None:
            self.full_reads += 1
        return super().read_journal(namespace, run_id)

    def read_journal_from(self, namespace: str, start: int) -> list[JournalEntry]:
        self.reads_from.append(start)
        return super().read_journal_from(namespace, start)


def journal_of(runs: int, first: int = 0) -> list[JournalEntry]:
    """Credited runs (one injection and one outcome each) over ten episodes."""
    entries = []
    for run in range(first, first + runs):
        shown = (f"ep-{run % 10}", f"ep-{(run * 3 + 1) % 10}")
        at = NOW - 10_000 + run
        injection = Injection(f"run-{run}", shown, "a task", "code_generation", at)
        entries.append(JournalEntry(*encode_injection(injection)))
        if run % 7 != 6:  # every seventh run stays open
            event = CreditEvent(f"run-{run}", (run % 5) / 4, shown, "code_generation", at + 1)
            entries.append(JournalEntry(*encode_credit(event)))
    return entries


def replayed_book(store: InMemoryEpisodeStore) -> UtilityBook:
    """The utility book a full replay of the stored journal gives."""
    items = [
        decode_entry(e.entry_id, e.run_id, e.payload)
        for e in store.read_journal(NAMESPACE)
        if not e.entry_id.startswith("lesson:")
    ]
    credits = [i for i in items if isinstance(i, CreditEvent)]
    injections = [i for i in items if isinstance(i, Injection)]
    return book_from(credits, injections, half_life=UTILITY_HALF_LIFE)


def record_shown(memory: EpisodicMemory, *episode_ids: str) -> None:
    """Store the episodes a test's runs are shown (a run is shown stored episodes only)."""
    memory.record_many(
        [make_episode(episode_id=i, description=f"Implement login form {i}") for i in episode_ids]
    )


def open_memory(store: InMemoryEpisodeStore | ChromaEpisodeStore) -> EpisodicMemory:
    return EpisodicMemory(store=store, clock=lambda: NOW, open_run_ttl=None)


def login_lesson() -> Lesson:
    """A lesson drawn from the episode ``login-1``."""
    return Lesson.create(
        title="Strip e-mail addresses before validating them",
        applies_when="Implement a form with email validation",
        do="call .strip() on the address first",
        avoid="validating the raw input",
        sources=(LessonSource("login-1"),),
        created_at=NOW,
    )


@pytest.fixture
def small_checkpoints(monkeypatch: pytest.MonkeyPatch) -> int:
    monkeypatch.setattr(checkpoint_module, "CHECKPOINT_EVERY", 20)
    return 20


def test_the_stores_that_keep_their_journal_in_order_say_so(tmp_path: Path) -> None:
    assert isinstance(InMemoryEpisodeStore(), OrderedJournal)
    assert isinstance(ChromaEpisodeStore(path=tmp_path / "m"), OrderedJournal)


def test_a_long_journal_is_checkpointed_on_open_and_the_next_open_reads_only_what_follows(
    small_checkpoints: int,
) -> None:
    store = CountingStore()
    store.append_journal(NAMESPACE, journal_of(30))
    first = open_memory(store)
    assert store.full_reads == 0
    assert store.reads_from == [0]  # no checkpoint yet: a replay
    saved = decode_checkpoint(store.read_checkpoint(NAMESPACE))
    assert saved is not None
    assert saved.position == len(store.read_journal_from(NAMESPACE, 0))
    store.append_journal(NAMESPACE, journal_of(3, first=30))  # another writer, later
    store.reads_from.clear()

    second = open_memory(store)

    assert store.full_reads == 0
    assert store.reads_from == [saved.position - 1]  # the last covered entry, then the tail
    second.flush()  # saves a checkpoint that covers the tail too
    store.reads_from.clear()
    third = open_memory(store)
    assert store.reads_from == []  # nothing written since: a count and a read by id
    assert third.runs.utilities() == second.runs.utilities()
    assert second.runs.utilities() == {
        subject: row for subject, row in replayed_book(store).rows.items()
    }
    assert set(second.runs.pending()) == {f"run-{r}" for r in range(33) if r % 7 == 6}
    assert first.runs.utilities() != second.runs.utilities()  # the tail was folded in
    assert replayed_checkpoint(store, NAMESPACE) == []


def test_runs_noted_and_credited_checkpoint_as_they_go_and_agree_with_a_replay(
    small_checkpoints: int,
) -> None:
    store = InMemoryEpisodeStore()
    memory = open_memory(store)
    record_shown(memory, "ep-0", "ep-1", "ep-2", "ep-3", "ep-9")
    for run in range(25):
        memory.runs.note(f"r{run}", [f"ep-{run % 4}", "ep-9"], "Implement login form")
        if run % 5:
            memory.runs.credit(f"r{run}", (run % 3) / 2)
    saved = decode_checkpoint(store.read_checkpoint(NAMESPACE))
    assert saved is not None
    assert 0 < saved.position <= len(store.read_journal(NAMESPACE))
    assert replayed_checkpoint(store, NAMESPACE) == []

    reopened = open_memory(store)

    assert reopened.runs.utilities() == memory.runs.utilities() == replayed_book(store).rows
    assert reopened.runs.pending() == memory.runs.pending()
    assert [e.run_id for e in reopened.runs.log()] == [e.run_id for e in memory.runs.log()]


def test_another_writers_entries_are_in_the_checkpoint_this_memory_writes(
    small_checkpoints: int,
) -> None:
    store = InMemoryEpisodeStore()
    mine, theirs = open_memory(store), open_memory(store)
    record_shown(mine, "ep-1", "ep-2")
    for run in range(small_checkpoints + 5):
        theirs.runs.note(f"theirs-{run}", ["ep-1"], "Fix the login redirect")
        theirs.runs.credit(f"theirs-{run}", 1.0)
        mine.runs.note(f"mine-{run}", ["ep-2"], "Fix the login redirect")
        mine.runs.credit(f"mine-{run}", 0.0)

    reopened = open_memory(store)

    assert replayed_checkpoint(store, NAMESPACE) == []
    assert reopened.runs.utilities() == replayed_book(store).rows
    assert reopened.runs.utility("ep-1").credited_runs == small_checkpoints + 5
    assert reopened.runs.utility("ep-2").credited_runs == small_checkpoints + 5


def test_a_run_noted_by_another_memory_is_credited_with_its_injections() -> None:
    store = InMemoryEpisodeStore()
    noting, crediting = open_memory(store), open_memory(store)
    record_shown(noting, "ep-1", "ep-2")
    noting.runs.note("shared-run", ["ep-1", "ep-2"], "Implement login form")

    event = crediting.runs.credit("shared-run", 1.0)

    assert event.episode_ids == ("ep-1", "ep-2")
    assert crediting.runs.utility("ep-1").credited_runs == 1
    with pytest.raises(Exception, match="already credited"):
        noting.runs.credit("shared-run", 0.0)


def test_a_checkpoint_that_does_not_fit_the_journal_is_ignored(small_checkpoints: int) -> None:
    store = CountingStore()
    store.append_journal(NAMESPACE, journal_of(30))
    open_memory(store)
    saved = decode_checkpoint(store.read_checkpoint(NAMESPACE))
    assert saved is not None
    wrong = Checkpoint(
        saved.position, "injection:someone-else:0", saved.book, (), None, 0, saved.lesson_ids
    )
    store.write_checkpoint(NAMESPACE, wrong.encode())
    [problem] = replayed_checkpoint(store, NAMESPACE)
    assert "ending at 'injection:someone-else:0', which the journal does not hold" in problem
    store.reads_from.clear()

    reopened = open_memory(store)

    assert store.reads_from == [0]  # the checkpoint refused: a replay from the start
    assert reopened.runs.utilities() == replayed_book(store).rows
    assert replayed_checkpoint(store, NAMESPACE) == []  # the replay saved a fresh one


@pytest.mark.parametrize("damage", ["{not json", '{"format": 99}', '{"format": 1}', ""])
def test_a_damaged_checkpoint_is_replayed_not_fatal(damage: str) -> None:
    store = InMemoryEpisodeStore()
    store.append_journal(NAMESPACE, journal_of(12))
    store.write_checkpoint(NAMESPACE, damage)

    memory = open_memory(store)

    assert memory.runs.utilities() == replayed_book(store).rows
    problems = replayed_checkpoint(store, NAMESPACE)
    assert problems == ([] if damage == "" else [problems[0]])
    if damage:
        assert "unreadable" in problems[0]


def test_verify_names_a_checkpoint_that_disagrees_with_the_journal(small_checkpoints: int) -> None:
    store = InMemoryEpisodeStore()
    store.append_journal(NAMESPACE, journal_of(30))
    open_memory(store)
    saved = decode_checkpoint(store.read_checkpoint(NAMESPACE))
    assert saved is not None
    book = UtilityBook.from_state(saved.book)
    book.rows["ep-1"].helped += 3.0  # what a bug in folding would leave
    forged = Checkpoint(
        saved.position,
        saved.last_id,
        book.to_state(),
        saved.open_runs[1:],
        saved.latest,
        saved.closed + 1,
        saved.lesson_ids,
    )
    store.write_checkpoint(NAMESPACE, forged.encode())

    problems = replayed_checkpoint(store, NAMESPACE)

    assert len(problems) == 3
    assert "utility differs from a replay for 1 subject(s), e.g. ['ep-1']" in problems[0]
    assert "open runs differ" in problems[1]
    assert f"counts {saved.closed + 1} outcomes" in problems[2]


def test_an_outcome_older_than_one_folded_in_replays_in_time_order() -> None:
    store = InMemoryEpisodeStore()
    clock = [NOW]
    memory = EpisodicMemory(store=store, clock=lambda: clock[0], open_run_ttl=None)
    record_shown(memory, "ep-1")
    memory.runs.note("late", ["ep-1"], "Implement login form")
    memory.runs.note("early", ["ep-1"], "Implement login form")
    memory.runs.credit("early", 1.0)
    clock[0] -= 100.0  # a clock that went back: this outcome sorts first

    memory.runs.credit("late", 0.0)

    assert memory.runs.utilities() == replayed_book(store).rows


def test_lessons_survive_an_open_from_the_checkpoint(small_checkpoints: int) -> None:
    store = InMemoryEpisodeStore()
    memory = open_memory(store)
    memory.record(make_episode(episode_id="login-1", description="Implement login form"))
    lesson = login_lesson()
    assert memory.lessons.add([lesson]) == 1
    store.append_journal(NAMESPACE, journal_of(30))
    memory.journal.checkpoint()

    reopened = open_memory(store)

    assert [one.lesson_id for one in reopened.lessons.list()] == [lesson.lesson_id]
    assert replayed_checkpoint(store, NAMESPACE) == []


def test_chroma_opens_from_its_checkpoint_after_a_restart(
    tmp_path: Path, small_checkpoints: int, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "memory"
    store = ChromaEpisodeStore(path=path)
    store.append_journal(NAMESPACE, journal_of(30))
    memory = open_memory(store)
    expected = memory.runs.utilities()
    store.close()
    del memory

    store = ChromaEpisodeStore(path=path)
    saved = decode_checkpoint(store.read_checkpoint(NAMESPACE))
    assert saved is not None
    assert saved.position == len(store.read_journal(NAMESPACE))
    reopened = open_memory(store)

    assert reopened.runs.utilities() == expected
    assert replayed_checkpoint(store, NAMESPACE) == []
    store.close()
    code, out, err = run_cli(capsys, "--path", str(path), "verify")
    assert code == 0, out + err
    assert "journal checkpoint agrees with a replay" in out


def test_chroma_reads_its_journal_in_order_and_by_id(tmp_path: Path) -> None:
    store = ChromaEpisodeStore(path=tmp_path / "m")
    entries = journal_of(40)
    store.append_journal(NAMESPACE, entries[:30])
    store.append_journal(NAMESPACE, [entries[3], *entries[30:]])  # an id again: not moved

    assert [e.entry_id for e in store.read_journal_from(NAMESPACE, 0)] == [
        e.entry_id for e in entries
    ]
    assert store.read_journal_from(NAMESPACE, len(entries) - 2) == entries[-2:]
    wanted: Sequence[str] = [entries[5].entry_id, "missing", entries[1].entry_id]
    found = store.read_journal_ids(NAMESPACE, wanted)
    assert sorted(found, key=str) == sorted([entries[5], entries[1]], key=str)
    assert store.read_checkpoint(NAMESPACE) is None
    store.write_checkpoint(NAMESPACE, "saved")
    assert store.read_checkpoint(NAMESPACE) == "saved"
    assert store.read_journal_from(NAMESPACE, 0)[0] == entries[0]  # the journal is intact


def test_a_checkpoint_saved_by_the_write_of_a_lesson_holds_that_lesson(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(checkpoint_module, "CHECKPOINT_EVERY", 1)  # every write saves one
    store = InMemoryEpisodeStore()
    memory = open_memory(store)
    memory.record(make_episode(episode_id="login-1", description="Implement login form"))
    lesson = login_lesson()
    memory.lessons.add([lesson])  # the last write: the checkpoint it saved is the last

    reopened = open_memory(store)

    assert [one.lesson_id for one in reopened.lessons.list()] == [lesson.lesson_id]
    assert replayed_checkpoint(store, NAMESPACE) == []
