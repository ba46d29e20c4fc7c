"""``Lessons``: the lessons service of one namespace: add, get, status, revise, recall."""

from __future__ import annotations

import asyncio
import math

import numpy as np
import pytest

from langchain_episodic import (
    EpisodicMemory,
    EpisodicValueError,
    build_replay,
)
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.model.lesson import (
    Lesson,
    LessonSource,
    is_lesson_entry,
)
from langchain_episodic.scoring.credit import UTILITY_HALF_LIFE, utility_factor
from langchain_episodic.scoring.decay import ranking_mean
from langchain_episodic.scoring.lesson_search import similarities_of
from langchain_episodic.scoring.ranking import top_lessons
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.embeddings import TableEmbeddings
from tests.helpers.lessons import LOGIN, NOW, STRIP, lesson, lessons_memory
from tests.unit_tests.factories import LOGINS_NOW, a_lesson, logins_memory, make_episode


def test_added_lessons_are_active_and_read_back_by_id() -> None:
    service = logins_memory().lessons
    lesson = a_lesson()
    assert service.add([lesson]) == 1
    assert service.add([lesson]) == 0  # the same lesson again adds nothing
    assert service.get(lesson.lesson_id) == lesson
    assert service.status(lesson.lesson_id) == "active"
    assert lesson.lesson_id in service.ids()


def test_revising_archives_the_old_lesson_and_activates_the_new() -> None:
    service = logins_memory().lessons
    old = a_lesson()
    service.add([old])
    new = service.revise(old.lesson_id, title="Strip every e-mail address")
    assert new.supersedes == (old.lesson_id,)
    assert (service.status(old.lesson_id), service.status(new.lesson_id)) == ("archived", "active")
    assert service.list("active") == (new,)


def test_an_unknown_lesson_id_is_refused_by_name() -> None:
    service = logins_memory().lessons
    with pytest.raises(EpisodicValueError, match="lesson-nope"):
        service.get("lesson-nope")


def clocked_memory(clock: list[float]) -> EpisodicMemory:
    """A memory of one login episode whose clock reads ``clock[0]``."""
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=HashingEmbeddings(), clock=lambda: clock[0]
    )
    memory.record_many([make_episode(episode_id="login-1", description="Implement a login")])
    return memory


@pytest.mark.parametrize("count", [6, 40])  # factors in plain floats, and vectorised
def test_factor_bounds_hold_at_every_later_time_and_the_exact_factors_are_the_rules(
    count: int,
) -> None:
    clock = [LOGINS_NOW]
    memory = clocked_memory(clock)
    lessons = [
        Lesson.create(
            title=f"Lesson {i}",
            applies_when="a login form validates an e-mail address",
            do=f"step {i}",
            sources=(LessonSource("login-1"),),
            created_at=LOGINS_NOW - 3_600.0 * i,
        )
        for i in range(count)
    ]
    memory.lessons.add(lessons)
    for i, one in enumerate(lessons[: count - 1]):  # helped, hurt, mixed; one never shown
        clock[0] += 60.0
        memory.runs.note(f"run-{i:03d}", [one.lesson_id], "Implement a login")
        memory.runs.credit(f"run-{i:03d}", (1.0, 0.0, 0.6, 0.3)[i % 4])
    service = memory.lessons
    index = service.active_index(384)
    half_life = UTILITY_HALF_LIFE
    credited = index.with_evidence.tolist()
    never = index.rows[lessons[-1].lesson_id]
    assert len(credited) == count - 1
    assert never not in credited
    start = clock[0]

    def rule(row: int, now: float) -> float:  # what recall ranks by, from scratch
        return utility_factor(ranking_mean(*service._evidence(index.lessons[row], now)))

    first = index.credit_factors(start, half_life)
    for later in (0.0, 1.0, 3_600.0, 86_400.0 * 3, 86_400.0 * 400):
        now = start + later
        credit = index.credit_factors(now, half_life)
        assert list(credit.lowest) == list(first.lowest)  # computed once, at the start
        factors = credit.exact([*credited, never])
        assert factors[-1] == 1.0  # never credited: the prior's factor
        for position, row in enumerate(credited):
            exact = rule(row, now)
            assert math.isclose(factors[position], exact, rel_tol=1e-9)
            lowest, highest = credit.lowest[position], credit.highest[position]
            assert lowest * (1 - 1e-12) <= exact <= highest * (1 + 1e-12)
        assert min(factors) < 1.0 < max(factors)
    # A clock set back before the bounds' time: the factors then, exactly.
    earlier = index.credit_factors(start - 30.0, half_life)
    for position, row in enumerate(credited):
        exact = rule(row, start - 30.0)
        assert math.isclose(earlier.lowest[position], exact, rel_tol=1e-9)
        assert math.isclose(earlier.highest[position], exact, rel_tol=1e-9)


def test_lessons_recalled_later_are_those_scoring_every_lesson_picks() -> None:
    clock = [LOGINS_NOW]
    memory = clocked_memory(clock)
    lessons = [
        Lesson.create(
            title=f"{('Strip', 'Check', 'Log')[i % 3]} the e-mail address, case {i}",
            applies_when=f"a login form of kind {i % 7}",
            do=f"step {i}",
            sources=(LessonSource("login-1"),),
            created_at=LOGINS_NOW,
        )
        for i in range(60)
    ]
    memory.lessons.add(lessons)
    for i, one in enumerate(lessons[::3]):
        clock[0] += 60.0
        memory.runs.note(f"run-{i:03d}", [one.lesson_id], "Implement a login")
        memory.runs.credit(f"run-{i:03d}", (1.0, 0.0, 0.8)[i % 3])
    service = memory.lessons
    half_life = UTILITY_HALF_LIFE
    query = np.asarray(
        memory.embeddings.embed_query("Implement a login form with e-mail checks"), np.float32
    )
    unit = (query / np.linalg.norm(query)).astype(np.float32)
    for later in (0.0, 3_600.0, 86_400.0 * 30, 86_400.0 * 3_000):
        clock[0] += later
        index = service.active_index(len(unit))
        utilities = index.utilities(clock[0], half_life)
        for k, floor in ((1, 0.0), (3, 0.1), (12, 0.0)):
            expected = top_lessons(
                similarities_of(index.matrix.rows, unit), utilities, index.ids, floor, k
            )
            got = service.near(query, k, floor)
            assert [one.lesson_id for one in got] == [index.ids[row] for row in expected]


# ------------------------------------------------------------------ memory.lessons
# ``memory.lessons``: the memory's lesson API.
#
# Lessons are stored all or nothing, revised by superseding, quarantined with their
# sources (or on their own), merged with their near-duplicates (a second pass finds
# nothing), shown in prompts and credited like an episode when a prompt shows them.
# The value itself is tested in model/test_lesson.py, the writer in test_reflection.py.


@pytest.fixture
def memory() -> EpisodicMemory:
    return lessons_memory()


# ---------------------------------------------------------------- the memory


def test_add_lessons_stores_and_a_reopened_memory_sees_them(memory: EpisodicMemory) -> None:
    one, two = lesson(), lesson(("login-1", "login-2"), title="second")
    assert memory.lessons.add([one, two, one]) == 2
    assert memory.lessons.add([one]) == 0  # immutable: already stored
    assert memory.lessons.list() == (one, two)
    assert memory.lessons.get(one.lesson_id) == one
    assert memory.lessons.status(one.lesson_id) == "active"
    again = EpisodicMemory(store=memory.store, clock=lambda: NOW)
    assert again.lessons.list() == (one, two)
    with pytest.raises(EpisodicValueError, match="is not stored in namespace"):
        memory.lessons.get("lesson-nope")


@pytest.mark.parametrize("bad_source", ["ghost", "theirs"])
def test_add_lessons_is_all_or_nothing(memory: EpisodicMemory, bad_source: str) -> None:
    other = memory.for_namespace("someone-else")
    other.record(make_episode(episode_id="theirs", description=LOGIN, timestamp=NOW))
    batch = [lesson(), lesson(("login-2", bad_source), title="bad")]
    with pytest.raises(EpisodicValueError, match=rf"episode_ids=\['{bad_source}'\].*no lesson"):
        memory.lessons.add(batch)
    assert memory.lessons.list(None) == ()
    assert not any(is_lesson_entry(e.entry_id) for e in memory.store.read_journal("default"))
    assert other.lessons.list(None) == ()


def test_add_lessons_refuses_unknown_supersedes_and_non_lessons(memory: EpisodicMemory) -> None:
    orphan = Lesson.create(
        **STRIP, sources=[LessonSource("login-1")], created_at=NOW, supersedes=("lesson-x",)
    )
    with pytest.raises(EpisodicValueError, match="supersede unknown lesson ids"):
        memory.lessons.add([lesson(title="fine"), orphan])
    with pytest.raises(TypeError, match=r"lessons\[0\]"):
        memory.lessons.add(["not a lesson"])  # type: ignore[list-item]
    assert memory.lessons.list(None) == ()


def test_revise_supersedes_and_archives_the_old_lesson(memory: EpisodicMemory) -> None:
    old = lesson()
    memory.lessons.add([old])
    new = memory.lessons.revise(old.lesson_id, do="call .strip() and .lower() first", by="ops")
    assert new.supersedes == (old.lesson_id,)
    assert new.source_ids == old.source_ids
    assert new.by == "ops"
    assert memory.lessons.list() == (new,)
    assert memory.lessons.list("archived") == (old,)
    assert memory.lessons.status(old.lesson_id) == "archived"
    assert set(memory.lessons.list(None)) == {old, new}
    with pytest.raises(EpisodicValueError, match="is archived: only an active lesson"):
        memory.lessons.revise(old.lesson_id, title="again")
    with pytest.raises(TypeError, match="unknown fields"):
        memory.lessons.revise(new.lesson_id, sources=())
    with pytest.raises(EpisodicValueError, match=r"Lesson\.do"):
        memory.lessons.revise(new.lesson_id, do="")
    assert memory.lessons.list() == (new,)


def test_quarantining_a_source_quarantines_its_lessons_until_released(
    memory: EpisodicMemory,
) -> None:
    tainted, clean = lesson(("login-1", "login-2")), lesson(("login-2",), title="clean")
    memory.lessons.add([tainted, clean])
    assert set(memory.lessons.recall(LOGIN, k=5)) == {tainted, clean}
    memory.quarantine.add("login-1", "poisoned tool output")
    assert memory.lessons.list() == (clean,)
    assert memory.lessons.list("quarantined") == (tainted,)
    assert memory.lessons.status(tainted.lesson_id) == "quarantined"
    assert memory.lessons.recall(LOGIN, k=5) == (clean,)
    prompt = build_replay(memory, LOGIN).text
    assert "Title: clean" in prompt
    assert STRIP["title"] not in prompt
    with pytest.raises(EpisodicValueError, match="is quarantined"):
        memory.lessons.revise(tainted.lesson_id, title="x")
    memory.quarantine.release("login-1", "false alarm")
    assert memory.lessons.list() == (tainted, clean)
    assert STRIP["title"] in build_replay(memory, LOGIN).text


def test_a_lesson_is_quarantined_by_its_own_id(memory: EpisodicMemory) -> None:
    one, other = lesson(), lesson(title="other")
    memory.lessons.add([one, other])
    assert memory.quarantine.add(one.lesson_id, "misleading advice") == 1
    assert memory.lessons.list("quarantined") == (one,)
    assert memory.lessons.list() == (other,)
    assert one.lesson_id in memory.quarantine.list()
    assert "login-1" not in memory.quarantine.list()  # its source is untouched
    assert {r.episode.episode_id for r in memory.recall(LOGIN, top_k=5)} >= {"login-1"}
    again = EpisodicMemory(store=memory.store, clock=lambda: NOW)
    assert again.lessons.list("quarantined") == (one,)
    memory.quarantine.release(one.lesson_id, "fine after all")
    assert memory.lessons.list() == (one, other)
    with pytest.raises(EpisodicValueError):
        memory.quarantine.add("lesson-unknown", "no such lesson")


def near_duplicates_memory() -> tuple[EpisodicMemory, list[Lesson]]:
    """Lessons a and b at cosine 0.96, c orthogonal to both, over TableEmbeddings."""
    a = lesson(("e1",), created_at=1.0, title="a")
    b = lesson(("e2",), created_at=2.0, title="b")
    c = lesson(("e1",), created_at=3.0, title="c")
    table = {
        a.embedding_text: [1.0, 0.0, 0.0],
        b.embedding_text: [0.96, 0.28, 0.0],
        c.embedding_text: [0.0, 1.0, 0.0],
    }
    memory = EpisodicMemory(
        store=InMemoryEpisodeStore(), embeddings=TableEmbeddings(table), clock=lambda: NOW
    )
    memory.record_many(
        [make_episode(episode_id=i, description=f"task {i}", timestamp=NOW) for i in ("e1", "e2")]
    )
    memory.lessons.add([a, b, c])
    return memory, [a, b, c]


def test_consolidation_merges_near_duplicates_and_converges() -> None:
    memory, (a, b, c) = near_duplicates_memory()
    memory.runs.note("run-1", [a.lesson_id], "task e1")
    memory.runs.credit("run-1", 1.0)
    helped = memory.runs.utilities()[a.lesson_id].helped
    assert helped > 0
    (merged,) = memory.lessons.consolidate()
    assert set(merged.supersedes) == {a.lesson_id, b.lesson_id}
    assert set(merged.source_ids) == {"e1", "e2"}
    assert merged.helped == pytest.approx(helped)
    assert set(memory.lessons.list()) == {c, merged}
    assert set(memory.lessons.list("archived")) == {a, b}
    assert memory.lessons.consolidate() == ()  # converged
    assert memory.lessons.utility(merged.lesson_id) > memory.lessons.utility(c.lesson_id)
    again = EpisodicMemory(store=memory.store, embeddings=memory.embeddings, clock=lambda: NOW)
    assert set(again.lessons.list()) == {c, merged}
    assert again.lessons.consolidate() == ()


def test_identical_lessons_texts_merge_and_a_lone_lesson_does_not(memory: EpisodicMemory) -> None:
    assert memory.lessons.consolidate() == ()
    first = lesson(("login-1",))
    memory.lessons.add([first])
    assert memory.lessons.consolidate() == ()
    twin = lesson(("login-2",), do="strip first")  # same title and applies_when
    memory.lessons.add([twin])
    (merged,) = memory.lessons.consolidate()
    assert merged.source_ids == ("login-1", "login-2")
    assert memory.lessons.list() == (merged,)
    assert memory.lessons.consolidate() == ()
    with pytest.raises(EpisodicValueError, match="threshold"):
        memory.lessons.consolidate(threshold=2.0)


# ---------------------------------------------------------------- prompts and credit


def test_lessons_show_above_the_episodes_and_lesson_k_0_shows_none(
    memory: EpisodicMemory,
) -> None:
    memory.lessons.add([lesson()])
    shown = build_replay(memory, LOGIN)
    assert shown.lessons == (lesson(),)
    assert shown.text.startswith("Lessons (1):")
    episodes_at = shown.text.find("<experience")
    assert episodes_at == -1 or shown.text.index("Lessons (1):") < episodes_at
    hidden = build_replay(memory, LOGIN, lesson_k=0)
    assert hidden.lessons == ()
    assert "Lessons (" not in hidden.text
    assert "<lesson" not in hidden.text


def test_a_lesson_shown_in_a_credited_run_gets_a_utility_row(memory: EpisodicMemory) -> None:
    shown = lesson()
    memory.lessons.add([shown])
    replay = build_replay(memory, LOGIN, run_id="run-1")
    assert shown in replay.lessons
    assert shown.lesson_id in memory.runs.pending()["run-1"][0].episode_ids
    before = memory.lessons.utility(shown.lesson_id)
    memory.runs.credit("run-1", 1.0)
    row = memory.runs.utilities()[shown.lesson_id]
    assert row.credited_runs == 1
    assert row.helped > 0
    assert memory.lessons.utility(shown.lesson_id) > before


def test_storing_lessons_never_changes_the_book_a_reader_holds(memory: EpisodicMemory) -> None:
    # A recall iterating the lessons while a background reflection stores new ones
    # must not see the dicts change under it ("dictionary changed size").
    memory.lessons.add([lesson()])
    held = memory.journal.lessons.book
    ids = set(held.lessons)
    memory.lessons.add([lesson(title="another")])
    assert set(held.lessons) == ids
    assert set(held.vectors) == ids
    assert len(memory.lessons.list()) == 2


def test_lessons_take_at_most_half_the_budget_and_only_shown_ones_are_noted(
    memory: EpisodicMemory,
) -> None:
    wordy = lesson(do="call .strip() on the address first, " + "really " * 60)
    memory.lessons.add([wordy])
    tight = build_replay(memory, LOGIN, max_tokens=200, run_id="tight")
    assert tight.lessons == ()
    assert "Lessons (" not in tight.text
    assert wordy.lesson_id not in memory.runs.pending()["tight"][0].episode_ids
    roomy = build_replay(memory, LOGIN, max_tokens=2_000, run_id="roomy")
    assert roomy.lessons == (wordy,)
    assert wordy.lesson_id in memory.runs.pending()["roomy"][0].episode_ids


def test_aadd_lessons_is_the_async_twin(memory: EpisodicMemory) -> None:
    assert asyncio.run(memory.lessons.aadd([lesson()])) == 1
    with pytest.raises(EpisodicValueError, match="no lesson was stored"):
        asyncio.run(memory.lessons.aadd([lesson(("ghost",), title="bad")]))
    assert memory.lessons.list() == (lesson(),)


# ---------------------------------------------------------------- the index


def test_recall_keeps_an_index_of_the_active_lessons_rebuilt_only_on_change(
    memory: EpisodicMemory,
) -> None:
    lessons = [
        lesson(title=f"Lesson {i}", created_at=NOW + i, sources=("login-1", "login-2"))
        for i in range(6)
    ]
    memory.lessons.add(lessons)
    service = memory.lessons
    first = service.active_index(384)
    assert service.active_index(384) is first  # nothing changed: the same index
    assert first.ids == tuple(one.lesson_id for one in lessons)
    # Credit changes only the evidence of what it credited.
    memory.runs.note("run-1", [lessons[2].lesson_id], LOGIN)
    memory.runs.credit("run-1", 1.0)
    after_credit = service.active_index(384)
    assert after_credit.matrix is first.matrix
    utilities = after_credit.utilities(NOW, UTILITY_HALF_LIFE)
    for row, one in enumerate(lessons):
        evidence = service._evidence(service.get(one.lesson_id), NOW)
        assert math.isclose(utilities[row], ranking_mean(*evidence), rel_tol=1e-9)
    assert utilities[2] > 0.5 == utilities[0]
    assert memory.lessons.recall(LOGIN, k=1) == (lessons[2],)  # the credited one first
    # A quarantined source, a revision, a new lesson: a new index, the right lessons.
    memory.lessons.revise(lessons[0].lesson_id, title="Lesson 0, revised")
    revised = service.active_index(384)
    assert revised is not after_credit
    assert lessons[0].lesson_id not in revised.ids
    assert len(revised.ids) == 6  # the revision replaced it
    memory.quarantine.add("login-2", "poisoned run")
    assert service.active_index(384).ids == ()
    assert memory.lessons.recall(LOGIN, k=3) == ()


def test_utilities_of_many_credited_lessons_are_the_same_vectorised(
    memory: EpisodicMemory,
) -> None:
    # More lessons with evidence than the plain-float path takes: the vectorised one.
    lessons = [lesson(title=f"Lesson {i}", created_at=NOW + i) for i in range(40)]
    memory.lessons.add(lessons)
    for i, one in enumerate(lessons):
        memory.runs.note(f"run-{i:02d}", [one.lesson_id], LOGIN)
        memory.runs.credit(f"run-{i:02d}", 1.0 if i % 3 else 0.0)
    service = memory.lessons
    index = service.active_index(384)
    assert len(index.with_evidence) == 40
    later = NOW + 86_400.0 * 10
    utilities = index.utilities(later, UTILITY_HALF_LIFE)
    for row, one in enumerate(lessons):
        evidence = service._evidence(service.get(one.lesson_id), later)
        assert math.isclose(utilities[row], ranking_mean(*evidence), rel_tol=1e-9)
    assert min(utilities) < 0.5 < max(utilities)


def test_many_credits_since_the_index_read_it_rebuild_its_evidence(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from langchain_episodic.scoring import credit as credit_module  # noqa: PLC0415

    monkeypatch.setattr(credit_module, "_RECENT_CHANGES", 8)  # the book remembers 8 credits
    ticks = iter(range(10**6))
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: NOW + next(ticks))
    memory.record(make_episode(episode_id="login-1", description=LOGIN, timestamp=NOW))
    lessons = [lesson(title=f"Lesson {i}", created_at=NOW + i) for i in range(3)]
    memory.lessons.add(lessons)
    service = memory.lessons
    service.active_index(384)
    for run in range(12):  # more than the book remembers
        memory.runs.note(f"run-{run:02d}", ["login-1"], LOGIN)
        memory.runs.credit(f"run-{run:02d}", 0.5)
    memory.runs.note("run-99", [lessons[1].lesson_id], LOGIN)
    memory.runs.credit("run-99", 1.0)
    assert memory.journal.credit.book.changed_since(0) is None
    now = memory.now()
    utilities = service.active_index(384).utilities(now, UTILITY_HALF_LIFE)
    assert utilities[1] > 0.5
    evidence = service._evidence(service.get(lessons[1].lesson_id), now)
    assert math.isclose(utilities[1], ranking_mean(*evidence), rel_tol=1e-6)
