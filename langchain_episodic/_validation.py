"""Argument checks shared by the validating modules; each raises one precise error."""

from __future__ import annotations

import math
import numbers
import reprlib
from collections.abc import Iterable

from langchain_episodic.errors import EpisodicValueError

__all__ = ["MAX_INT", "check_int", "check_number", "describe", "encodes", "finite_float"]

MAX_INT = 2**63 - 1
"""Largest integer a field may hold: JSON readers and databases keep 64-bit integers."""

# A 1 MB bad value must not make a 1 MB error message.
_short = reprlib.Repr()
_short.maxstring = _short.maxother = 120


def encodes(text: str) -> bool:
    """Whether ``text`` is valid Unicode that UTF-8 can encode (no lone surrogates)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def describe(value: object) -> str:
    """``repr(value)``, shortened to about 120 characters for error messages."""
    try:
        return _short.repr(value)
    except ValueError:  # an int too long to print
        return f"<{type(value).__name__} too large to print>"


def finite_float(value: object) -> float | None:
    """``value`` as a finite float, or ``None`` if it is not a finite real number.

    Booleans are not numbers here, and integers too large for a float (``10**400``)
    count as not finite rather than raising ``OverflowError``.
    """
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def check_bool(name: str, value: object) -> bool:
    """``value`` if it is ``True`` or ``False``; else an error naming ``name`` and it."""
    if not isinstance(value, bool):
        msg = f"{name}={value!r} is invalid: must be True or False"
        raise EpisodicValueError(msg)
    return value


def check_int(name: str, value: object, minimum: int, maximum: int = MAX_INT) -> int:
    """``value`` if it is an integer in [minimum, maximum]; otherwise raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or not minimum <= value <= maximum:
        msg = f"{name}={describe(value)} is invalid: must be an integer in [{minimum}, {maximum}]"
        raise EpisodicValueError(msg)
    return value


def check_number(name: str, value: object, low: float = -math.inf, high: float = math.inf) -> float:
    """``value`` as a float if it is finite and in [low, high]; otherwise raise naming it."""
    number = finite_float(value)
    if number is None or not low <= number <= high:
        bounds = "" if math.isinf(low) and math.isinf(high) else f" in [{low:g}, {high:g}]"
        msg = f"{name}={describe(value)} is invalid: must be a finite number{bounds}"
        raise EpisodicValueError(msg)
    return number


def as_ids(ids: object, name: str = "episode_ids") -> list[str]:
    """One id, or an iterable of ids, as a list (the façade's ``str | Iterable[str]``).

    Raises:
        EpisodicValueError: ``ids`` is neither a string nor iterable.
    """
    if isinstance(ids, str):
        return [ids]
    if not isinstance(ids, Iterable):
        msg = f"{name}={ids!r} is invalid: must be an id or an iterable of ids"
        raise EpisodicValueError(msg)
    return list(ids)
