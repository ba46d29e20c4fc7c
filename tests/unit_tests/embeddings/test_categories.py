"""The packaged category examples, from which a task's category is inferred."""

from __future__ import annotations

from langchain_episodic import TaskCategory
from langchain_episodic.embeddings.categories import default_category_examples


def test_the_packaged_examples_cover_every_category_evenly() -> None:
    examples = default_category_examples()
    counts = {
        c.value: sum(1 for category, _ in examples if category == c.value) for c in TaskCategory
    }
    assert counts == {**dict.fromkeys(counts, 60), "unknown": 0}
