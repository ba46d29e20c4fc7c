"""Argument checks shared by the validating modules; each raises one precise error."""

from __future__ import annotations

import math
import numbers

from langchain_episodic.errors import EpisodicValueError

__all__ = ["check_int", "check_number", "finite_float"]


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


def check_int(name: str, value: object, minimum: int) -> int:
    """``value`` if it is an integer >= ``minimum``; otherwise raise naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        msg = f"{name}={value!r} is invalid: must be an integer >= {minimum}"
        raise EpisodicValueError(msg)
    return value


def check_number(name: str, value: object, low: float = -math.inf, high: float = math.inf) -> float:
    """``value`` as a float if it is finite and in [low, high]; otherwise raise naming it."""
    number = finite_float(value)
    if number is None or not low <= number <= high:
        bounds = "" if math.isinf(low) and math.isinf(high) else f" in [{low:g}, {high:g}]"
        msg = f"{name}={value!r} is invalid: must be a finite number{bounds}"
        raise EpisodicValueError(msg)
    return number
