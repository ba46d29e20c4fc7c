"""The kind of a task that names a function: its signature's name and shape.

Two tasks that ask for the same function are of one kind even when every word of their
descriptions differs ("count_keys(mapping): return the number of keys" and
"dict_size(d): how many entries the dict d holds"); a task that names a function with
another number of parameters is another function. Whole-text similarity misses both,
most of all with a small embedder, so recall ranks a candidate of the relevance ranking
by its **kind similarity** when the task and the candidate both name a signature:

* the whole text's similarity and the similarity of the two function names, read as
  words (``dict_size`` is "dict size"), mixed ``1 : NAME_WEIGHT``;
* times `ARITY_MISMATCH` when their numbers of parameters differ.

The relevance test still reads the whole text's similarity (a name never makes an
off-topic episode relevant), and a task without a signature is ranked as before.

Measured (``benchmarks/family_recall.py``, 5 seeds; constants chosen on the tuning
families, reported on 30 families held out from tuning): with one passing episode per
family in memory and the other variants asked, the replay's first episode is the task's
own family for 0.61 -> 0.78 of the tuning families' tasks and 0.42 -> 0.69 of the
held-out ones with the packaged default embedder (all-MiniLM-L6-v2: 0.92 -> 0.95 and
0.80 -> 0.85). Both figures include the replay's wider candidate pool (``build_replay``).

Examples:
    >>> signature_of("Write a Python function dict_size(d): how many entries d holds.")
    Signature(name='dict_size', words='dict size', arity=1)
    >>> signature_of("Implement `mergeSorted(left: list[int], right: list[int]) -> list`")
    Signature(name='mergeSorted', words='merge sorted', arity=2)
    >>> signature_of("Fix the crash (again) when the form is empty") is None
    True
    >>> round(kind_similarity(0.5, 0.8, same_arity=True), 3)
    0.6
    >>> round(kind_similarity(0.5, 0.8, same_arity=False), 3)
    0.36
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["ARITY_MISMATCH", "NAME_WEIGHT", "Signature", "kind_similarity", "signature_of"]

NAME_WEIGHT = 0.5
"""Weight of the two function names' similarity beside the whole text's (which weighs 1)."""

ARITY_MISMATCH = 0.6
"""Factor on the kind similarity of a candidate whose signature has another number of
parameters (0.5-0.7 measured alike on the tuning families; 0.9 kept most of the loss)."""

# An identifier directly followed by a parenthesised list, not part of a dotted call.
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][A-Za-z0-9_]*)\(([^()]*)\)")
_PARAMETER = re.compile(r"\s*\*{0,2}[A-Za-z_]\w*\s*(?::[^=]+)?(?:=.+)?\s*", re.S)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class Signature:
    """A function a task names.

    Attributes:
        name: The function's name, as written.
        words: The name read as words: snake_case and camelCase split, lower case.
        arity: How many parameters it takes.
    """

    name: str
    words: str
    arity: int


def _parameters(text: str) -> list[str] | None:
    """The parameters of a signature's parenthesised text, or ``None`` if it is no list."""
    if not text.strip():
        return []
    parts, depth, start = [], 0, 0
    for index, char in enumerate(text):
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        elif char == "," and depth == 0:
            parts.append(text[start:index])
            start = index + 1
    parts.append(text[start:])
    if parts and not parts[-1].strip():  # a trailing comma
        parts.pop()
    # Python's markers for positional-only and keyword-only parameters take no value.
    parameters = [part for part in parts if part.strip() not in ("*", "/")]
    if not parameters or not all(_PARAMETER.fullmatch(part) for part in parameters):
        return None
    return parameters


def signature_of(text: str) -> Signature | None:
    """The first function signature ``text`` names (``name(a, b)``), or ``None``.

    The parentheses must hold a parameter list: names, each with an optional
    annotation and default (``f(3, 'x')``, a call with values, is no signature).
    """
    for match in _CALL.finditer(text):
        parameters = _parameters(match.group(2))
        if parameters is None:
            continue
        name = match.group(1)
        words = " ".join(_CAMEL.sub(" ", name).replace("_", " ").lower().split())
        return Signature(name, words or name.lower(), len(parameters))
    return None


def kind_similarity(similarity: float, name_similarity: float, *, same_arity: bool) -> float:
    """The similarity a candidate is ranked by when it and the task both name a signature."""
    mixed = (similarity + NAME_WEIGHT * name_similarity) / (1.0 + NAME_WEIGHT)
    return mixed if same_arity else mixed * ARITY_MISMATCH
