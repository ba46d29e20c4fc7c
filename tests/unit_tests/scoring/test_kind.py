"""A task's kind: the function it names, read by its name's words and its arity."""

from __future__ import annotations

import pytest

from langchain_episodic import EpisodicMemory, build_replay, episode_from_tests
from langchain_episodic.scoring.kind import (
    ARITY_MISMATCH,
    NAME_WEIGHT,
    Signature,
    kind_similarity,
    signature_of,
)
from langchain_episodic.service.recall import Recall
from langchain_episodic.stores import InMemoryEpisodeStore


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "Write a Python function count_keys(mapping): ...",
            Signature("count_keys", "count keys", 1),
        ),
        ("def mergeSorted(left, right, *, key=None)", Signature("mergeSorted", "merge sorted", 3)),
        ("`parse(text: str, fmt: dict[str, int] = {}) -> date`", Signature("parse", "parse", 2)),
        ("Call reset() when the form opens", Signature("reset", "reset", 0)),
        ("f(*args, **kwargs,)", Signature("f", "f", 2)),
        ("HTTPServer_start(port)", Signature("HTTPServer_start", "httpserver start", 1)),
    ],
)
def test_a_signature_is_read_with_its_name_as_words_and_its_arity(
    text: str, expected: Signature
) -> None:
    assert signature_of(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "Fix the crash (again) when the form is empty",
        "Return max(3, 'x') of the list",  # a call with values is no signature
        "Fix obj.method(a) raising KeyError",  # a dotted call names no function of the task
        "Add password reset to the login form",
        "",
    ],
)
def test_text_without_a_signature_has_none(text: str) -> None:
    assert signature_of(text) is None


def test_the_first_signature_counts() -> None:
    text = "Sort with sorted(values, key=len) inside order_words(words, reverse)"
    assert signature_of(text) == Signature("sorted", "sorted", 2)


def test_kind_similarity_mixes_the_names_and_lowers_another_arity() -> None:
    same = kind_similarity(0.4, 0.9, same_arity=True)
    assert same == pytest.approx((0.4 + NAME_WEIGHT * 0.9) / (1 + NAME_WEIGHT))
    assert kind_similarity(0.4, 0.9, same_arity=False) == pytest.approx(same * ARITY_MISMATCH)
    # A near name never outweighs the whole text by itself: equal names, far texts.
    assert kind_similarity(0.1, 1.0, same_arity=True) < kind_similarity(0.7, 0.0, same_arity=True)


QUERY = (
    "Write a Python function flip_word_order(text): the words of text, last word first, "
    "joined by spaces."
)
SAME_KIND = (
    "Write a Python function reverse_words(sentence): return the words of sentence in "
    "reverse order."
)
OTHER = (
    "Write a Python function capitalize_words(text): upper-case the first letter of every "
    "word, words joined by single spaces."
)


def _memory() -> EpisodicMemory:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: 1e9)
    for episode_id, text in (("same-kind", SAME_KIND), ("other", OTHER)):
        memory.record(
            episode_from_tests(text, "...", 3, 3, "ok", episode_id=episode_id, timestamp=1e9 - 10)
        )
    return memory


def test_the_episode_of_the_same_kind_comes_first(monkeypatch: pytest.MonkeyPatch) -> None:
    memory = _memory()
    report = memory.recall(QUERY, explain=True)
    by_id = {r.episode.episode_id: r for r in report.results}
    # The whole text alone prefers the other function; its kind puts the same one first.
    assert by_id["other"].similarity > by_id["same-kind"].similarity
    assert build_replay(memory, QUERY).shown[0] == "same-kind"
    assert report.results[0].episode.episode_id == "same-kind"
    monkeypatch.setattr(Recall, "kind_similarities", lambda self, text, hits: {})
    assert build_replay(_memory(), QUERY).shown[0] == "other"


def test_a_function_of_another_arity_ranks_below_the_same_kind() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: 1e9)
    texts = {
        "largest": "Write a Python function largest(numbers): return the largest number in "
        "the non-empty list.",
        "first_n": "Write a Python function first_n(items, n): return the first n items of "
        "the list.",
    }
    for episode_id, text in texts.items():
        memory.record(
            episode_from_tests(text, "...", 3, 3, "ok", episode_id=episode_id, timestamp=1e9)
        )
    query = "Write a Python function highest(items): the highest item of the list."
    report = memory.recall(query, explain=True)
    by_id = {r.episode.episode_id: r for r in report.results}
    assert by_id["first_n"].similarity > by_id["largest"].similarity
    assert report.results[0].episode.episode_id == "largest"


def test_another_arity_ranks_lower_and_relevance_is_untouched() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore(), clock=lambda: 1e9)
    texts = {
        "one": "Write a Python function rotate(items): rotate the list items by one place.",
        "two": "Write a Python function rotate(items, n): rotate the list items by n places.",
    }
    for episode_id, text in texts.items():
        memory.record(
            episode_from_tests(text, "...", 3, 3, "ok", episode_id=episode_id, timestamp=1e9)
        )
    for query, first in (
        ("Write a Python function shift(values, k): values rotated by k places.", "two"),
        ("Write a Python function shift(values): values rotated by one place.", "one"),
    ):
        report = memory.recall(query, explain=True)
        assert report.results[0].episode.episode_id == first
        # Both stay relevant: the relevance test reads the whole text's similarity.
        assert {r.episode.episode_id for r in report.results} == {"one", "two"}
        assert report.rejected == ()


def test_a_task_naming_no_function_is_ranked_as_before(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[dict[str, float]] = []
    original = Recall.kind_similarities

    def recording(self: Recall, text: str, hits: object) -> dict[str, float]:
        found = original(self, text, hits)  # type: ignore[arg-type]
        seen.append(found)
        return found

    monkeypatch.setattr(Recall, "kind_similarities", recording)
    memory = _memory()
    memory.recall("Reverse the words of a sentence")
    memory.recall(QUERY)
    assert seen[0] == {}  # no function named: the plain ranking
    assert set(seen[1]) == {"same-kind", "other"}
