"""``RelevanceTest``: the similarity a stored episode or lesson must reach for a task."""

from __future__ import annotations

import numpy as np

from langchain_episodic.embeddings.builtin import default_embeddings
from langchain_episodic.scoring.relevance import Calibration, relevance_threshold
from langchain_episodic.service.relevance import RelevanceTest

EVERYDAY = ["Bake a chocolate cake", "Walk the dog in the park", "Book a table for two"]


def _query(test: RelevanceTest, text: str) -> np.ndarray:
    return np.asarray(test.embeddings.embed_query(text), dtype=np.float32)


def test_the_background_bar_is_a_similarity_and_none_without_background() -> None:
    embeddings = default_embeddings()
    with_background = RelevanceTest(embeddings, Calibration(0.2, 0.05), EVERYDAY)
    bar = with_background.background_bar(_query(with_background, "Fix the login bug"))
    assert bar is not None
    assert -1.0 <= bar <= 1.0
    assert RelevanceTest(embeddings, Calibration(0.2, 0.0)).background_bar(np.ones(3)) is None


def test_an_everyday_task_sets_a_higher_bar_than_a_technical_one() -> None:
    test = RelevanceTest(default_embeddings(), Calibration(0.2, 0.0), EVERYDAY)
    everyday = test.background_bar(_query(test, "Bake a lemon cake for the party"))
    technical = test.background_bar(_query(test, "Fix the null pointer in the login handler"))
    assert everyday is not None
    assert technical is not None
    assert everyday > technical


def test_the_bar_is_the_floor_or_the_background_whichever_asks_more() -> None:
    test = RelevanceTest(default_embeddings(), Calibration(0.2, 0.0), EVERYDAY)
    vector = _query(test, "Bake a lemon cake for the party")
    background = test.background_bar(vector)
    assert test.bar(vector) == relevance_threshold(0.2, background=background)
    assert test.bar(vector, floor=0.99) == relevance_threshold(0.99, background=background)
    plain = RelevanceTest(default_embeddings(), Calibration(0.3, 0.0))
    assert plain.bar(vector) == relevance_threshold(0.3, background=None)
