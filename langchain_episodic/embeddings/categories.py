"""The labelled example tasks the memory infers a task's category from.

300 short software tasks written for this package, 60 per category (code generation,
debugging, refactoring, testing, architecture), in ``data/categories_en.txt``: plain
imperative tasks, and requests, questions, ticket titles and error reports over many
kinds of software (web, mobile, games, embedded, data, infrastructure). Their
vectors are computed once per model (the cache of
`background_vectors`).

Examples:
    >>> examples = default_category_examples()
    >>> len(examples), examples[0]
    (300, ('code_generation', 'Implement a login form with email and password validation'))
"""

from __future__ import annotations

from functools import lru_cache
from importlib import resources

__all__ = ["CATEGORY_FILE", "default_category_examples"]

CATEGORY_FILE = "data/categories_en.txt"
"""The packaged examples, ``category<TAB>task`` a line, relative to this package."""


@lru_cache(maxsize=1)
def default_category_examples() -> tuple[tuple[str, str], ...]:
    """The packaged ``(category, task)`` examples."""
    raw = resources.files("langchain_episodic.embeddings").joinpath(CATEGORY_FILE)
    lines = raw.read_text(encoding="utf-8").splitlines()
    pairs = (line.split("\t", 1) for line in lines if line.strip() and not line.startswith("#"))
    return tuple((category.strip(), text.strip()) for category, text in pairs)
