"""``check_vectors``: embeddings checked row by row before anything is stored."""

from __future__ import annotations

import math

import numpy as np
import pytest

from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.service.context import check_vectors


def test_vectors_become_one_float32_matrix() -> None:
    matrix = check_vectors([[1.0, 2.0], [3.0, 4.0]], ["a", "b"])
    assert matrix.dtype == np.float32
    assert matrix.tolist() == [[1.0, 2.0], [3.0, 4.0]]


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_a_vector_that_is_not_finite_is_refused_naming_its_row(bad: float) -> None:
    with pytest.raises(EpisodicValueError, match="embedding of second"):
        check_vectors([[1.0, 2.0], [bad, 0.0]], ["first", "second"])
