"""Which stored episodes a recall may consider: a pure, validated description."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import Enum
from typing import TypeVar

from langchain_episodic._validation import describe
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import OutcomeStatus, TaskCategory

__all__ = ["EpisodeFilter"]

_E = TypeVar("_E", bound=Enum)


def _members(field: str, value: object, enum_type: type[_E]) -> tuple[_E, ...] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, (str, Enum)) or not isinstance(value, Iterable) else value
    members: list[_E] = []
    allowed = ", ".join(repr(m.value) for m in enum_type)
    for item in items:
        if isinstance(item, enum_type):
            members.append(item)
            continue
        try:
            # Only a string can name a member: anything else (a nested list, say) is
            # refused here, before the enum's own error message would have to print it.
            if not isinstance(item, str):
                raise ValueError
            members.append(enum_type(item))
        except ValueError:
            msg = (
                f"EpisodeFilter.{field}={describe(value)} is invalid: values must be among "
                f"{allowed}"
            )
            raise EpisodicValueError(msg) from None
    if not members:
        msg = f"EpisodeFilter.{field}={describe(value)} is invalid: must not be empty"
        raise EpisodicValueError(msg)
    return tuple(dict.fromkeys(members))


def _strings(field: str, value: object) -> tuple[str, ...] | None:
    if value is None:
        return None
    items = [value] if isinstance(value, str) or not isinstance(value, Iterable) else list(value)
    strings = [item for item in items if isinstance(item, str) and item]
    if not items or len(strings) != len(items):
        msg = f"EpisodeFilter.{field}={describe(value)} is invalid: must be non-empty strings"
        raise EpisodicValueError(msg)
    return tuple(dict.fromkeys(strings))


@dataclass(frozen=True, init=False)
class EpisodeFilter:
    """Restrict recall to episodes whose fields take one of the given values.

    Each field accepts one value or several; ``None`` means "any". Fields combine
    with AND, values within a field with OR.

    Attributes:
        categories: Task categories to keep.
        outcomes: Outcomes to keep.
        strategies: ``strategy_used`` names to keep.

    Examples:
        ```python
        EpisodeFilter(category="debugging", outcome=["success", "partial"])
        ```
    """

    categories: tuple[TaskCategory, ...] | None
    outcomes: tuple[OutcomeStatus, ...] | None
    strategies: tuple[str, ...] | None

    def __init__(
        self,
        category: TaskCategory | str | Iterable[TaskCategory | str] | None = None,
        outcome: OutcomeStatus | str | Iterable[OutcomeStatus | str] | None = None,
        strategy_used: str | Iterable[str] | None = None,
    ) -> None:
        object.__setattr__(self, "categories", _members("category", category, TaskCategory))
        object.__setattr__(self, "outcomes", _members("outcome", outcome, OutcomeStatus))
        object.__setattr__(self, "strategies", _strings("strategy_used", strategy_used))

    @property
    def is_empty(self) -> bool:
        """True when the filter keeps every episode."""
        return self.categories is None and self.outcomes is None and self.strategies is None

    def matches(
        self,
        category: TaskCategory | str,
        outcome: OutcomeStatus | str,
        strategy_used: str,
    ) -> bool:
        """True when an episode with these field values passes the filter.

        The rule stores that cannot filter natively apply in Python, so every store
        filters alike.

        Examples:
            ```python
            EpisodeFilter(outcome="success").matches("debugging", "success", "iterative")
            ```
        """
        return (
            (self.categories is None or category in self.categories)
            and (self.outcomes is None or outcome in self.outcomes)
            and (self.strategies is None or strategy_used in self.strategies)
        )
