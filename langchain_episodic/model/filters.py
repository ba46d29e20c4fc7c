"""Which stored episodes a recall may consider: a pure, validated description.

`EpisodeFilter` keeps episodes by category, outcome and strategy (what every store
filters natively), and takes Chroma's ``where`` syntax over every filterable field
(`EpisodeFilter.from_where`): ``category``, ``outcome``, ``strategy_used``,
``reward``, ``pass_rate`` and ``timestamp``, with ``$eq $ne $in $nin $gt $gte $lt $lte``
and ``$and`` / ``$or``. What a store filters natively is pushed down to it
(`EpisodeFilter.pushdown`); the rest (`EpisodeFilter.where`) is applied to the
candidates it returns, the same on every store.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import Enum
from operator import ge, gt, le, lt
from typing import Any

from langchain_episodic._validation import describe
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.episode import OutcomeStatus, TaskCategory

__all__ = ["WHERE_FIELDS", "WHERE_OPERATORS", "AllOf", "AnyOf", "Condition", "EpisodeFilter"]

WHERE_FIELDS: dict[str, str] = {
    "category": "category",
    "outcome": "outcome",
    "strategy_used": "text",
    "reward": "number",
    "pass_rate": "number",
    "timestamp": "number",
}
"""The fields a filter may name, each with its kind (a category, an outcome, text, a number)."""

WHERE_OPERATORS = ("$eq", "$ne", "$in", "$nin", "$gt", "$gte", "$lt", "$lte")
"""Chroma's comparison operators; ``$gt`` and the like compare numbers only."""

_ORDERING = {"$gt": gt, "$gte": ge, "$lt": lt, "$lte": le}
_LOGICAL = ("$and", "$or")
_NATIVE: dict[str, type[Enum] | None] = {  # in the order EpisodeFilter.matches takes them
    "category": TaskCategory,
    "outcome": OutcomeStatus,
    "strategy_used": None,
}
_MAX_DEPTH = 32


@dataclass(frozen=True)
class Condition:
    """One field compared with a value: ``{"reward": {"$gte": 0.5}}``.

    Attributes:
        field: One of `WHERE_FIELDS`.
        operator: One of `WHERE_OPERATORS`.
        value: A number, a string (a category's or outcome's value), or a tuple of them
            for ``$in`` / ``$nin``.
    """

    field: str
    operator: str
    value: float | str | tuple[float | str, ...]

    def holds(self, fields: Mapping[str, object]) -> bool:
        """Whether the episode whose ``fields`` these are passes."""
        found = fields.get(self.field)
        op, value = self.operator, self.value
        if op == "$eq":
            return bool(found == value)
        if op == "$ne":
            return bool(found != value)
        if op == "$in":
            return found in value  # type: ignore[operator]
        if op == "$nin":
            return found not in value  # type: ignore[operator]
        if not isinstance(found, (int, float)) or not isinstance(value, (int, float)):
            return False
        return bool(_ORDERING.get(op, le)(found, value))


@dataclass(frozen=True)
class AllOf:
    """Every clause holds (``$and``, or several keys in one mapping)."""

    clauses: tuple[Condition | AllOf | AnyOf, ...]

    def holds(self, fields: Mapping[str, object]) -> bool:
        """Whether every clause holds for ``fields``."""
        return all(clause.holds(fields) for clause in self.clauses)


@dataclass(frozen=True)
class AnyOf:
    """At least one clause holds (``$or``)."""

    clauses: tuple[Condition | AllOf | AnyOf, ...]

    def holds(self, fields: Mapping[str, object]) -> bool:
        """Whether some clause holds for ``fields``."""
        return any(clause.holds(fields) for clause in self.clauses)


Where = Condition | AllOf | AnyOf


def _error(path: str, rule: str) -> EpisodicValueError:
    return EpisodicValueError(f"filter {path} is invalid: {rule}")


def _operand(path: str, field: str, operator: str, value: object) -> float | str:
    if WHERE_FIELDS[field] == "number":
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise _error(path, f"{field} compares with a number, not {describe(value)}")
        if not math.isfinite(value):
            raise _error(path, f"{field} compares with a finite number, not {value!r}")
        return float(value)
    if operator in _ORDERING:
        raise _error(path, f"{operator} compares numbers; {field} is not one")
    if isinstance(value, Enum):
        value = value.value
    if not isinstance(value, str) or not value:
        raise _error(path, f"{field} takes a non-empty string, not {describe(value)}")
    allowed = [member.value for member in _NATIVE.get(field) or ()]
    if allowed and value not in allowed:
        raise _error(path, f"{field} {value!r} is none of {allowed}")
    return value


def _condition(path: str, field: str, spec: object) -> Condition:
    if field not in WHERE_FIELDS:
        raise _error(path, f"unknown field {field!r}; the memory filters by {sorted(WHERE_FIELDS)}")
    if not isinstance(spec, Mapping):
        return Condition(field, "$eq", _operand(path, field, "$eq", spec))
    if len(spec) != 1:
        raise _error(path, f"give one operator per field, not {sorted(map(str, spec))}")
    ((operator, value),) = spec.items()
    if operator not in WHERE_OPERATORS:
        raise _error(path, f"unknown operator {operator!r}; use one of {list(WHERE_OPERATORS)}")
    if operator in ("$in", "$nin"):
        if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
            raise _error(path, f"{operator} takes a list of values, not {describe(value)}")
        items = tuple(_operand(f"{path}[{i}]", field, operator, v) for i, v in enumerate(value))
        if not items:
            raise _error(path, f"{operator} takes at least one value")
        return Condition(field, operator, items)
    return Condition(field, operator, _operand(path, field, operator, value))


def parse_where(where: object, path: str = "", depth: int = 0) -> Where:
    """A validated expression from Chroma's ``where`` syntax.

    Raises:
        EpisodicValueError: An unknown field or operator, a value of the wrong kind,
            an empty ``$and`` / ``$or``: the message names where, and what.
    """
    if depth > _MAX_DEPTH:
        raise _error(path or "{...}", f"nests deeper than {_MAX_DEPTH} levels")
    if not isinstance(where, Mapping):
        raise _error(path or repr(where), f"must be a dict, not {describe(where)}")
    if not where:
        raise _error(path or "{}", "is empty: leave the filter out to keep everything")
    clauses: list[Where] = []
    for key, value in where.items():
        here = f"{path}[{key!r}]"
        if key in _LOGICAL:
            if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, Iterable):
                raise _error(here, f"{key} takes a list of filters, not {describe(value)}")
            parts = tuple(
                parse_where(item, f"{here}[{i}]", depth + 1) for i, item in enumerate(value)
            )
            if not parts:
                raise _error(here, f"{key} takes at least one filter")
            clauses.append(AllOf(parts) if key == "$and" else AnyOf(parts))
        elif isinstance(key, str) and key.startswith("$"):
            raise _error(here, f"unknown operator {key!r} here; use $and or $or")
        else:
            clauses.append(_condition(here, str(key), value))
    return clauses[0] if len(clauses) == 1 else AllOf(tuple(clauses))


def _conjuncts(where: Where) -> list[Where]:
    if isinstance(where, AllOf):
        return [part for clause in where.clauses for part in _conjuncts(clause)]
    return [where]


def _native_values(field: str, value: object) -> tuple[Any, ...] | None:
    """A keyword's values, checked: members of the field's enum, or strings; ``None``: any."""
    if value is None:
        return None
    enum_type = _NATIVE[field]
    items: list[object] = [value]
    if isinstance(value, Iterable) and not isinstance(value, (str, Enum)):
        items = list(value)
    if enum_type is None:
        strings = [item for item in items if isinstance(item, str) and item]
        if not items or len(strings) != len(items):
            msg = f"EpisodeFilter.{field}={describe(value)} is invalid: must be non-empty strings"
            raise EpisodicValueError(msg)
        return tuple(dict.fromkeys(strings))
    by_value = {member.value: member for member in enum_type}
    # Only a string names a member (a member by its value): anything else (a nested
    # list, say) is refused here, unhashable or not.
    named = (item.value if isinstance(item, enum_type) else item for item in items)
    members = [by_value.get(name) if isinstance(name, str) else None for name in named]
    if None in members:
        allowed = ", ".join(map(repr, by_value))
        msg = f"EpisodeFilter.{field}={describe(value)} is invalid: values must be among {allowed}"
        raise EpisodicValueError(msg)
    if not members:
        msg = f"EpisodeFilter.{field}={describe(value)} is invalid: must not be empty"
        raise EpisodicValueError(msg)
    return tuple(dict.fromkeys(members))


@dataclass(frozen=True, init=False)
class EpisodeFilter:
    """Restrict recall to episodes whose fields pass a test.

    By keyword: each of ``category``, ``outcome`` and ``strategy_used`` takes one value
    or several; ``None`` means "any". Fields combine with AND, values within a field
    with OR. ``where`` takes Chroma's ``where`` syntax over every filterable field
    (`WHERE_FIELDS`), combined with the keywords by AND.

    Attributes:
        categories: Task categories to keep.
        outcomes: Outcomes to keep.
        strategies: ``strategy_used`` names to keep.
        where: The rest of the test, applied to the candidates a store returns
            (``None``: none); the three fields above are what stores filter natively.

    Examples:
        >>> EpisodeFilter(category="debugging", outcome=["success", "partial"]).is_empty
        False
        >>> rich = EpisodeFilter.from_where(
        ...     {"$and": [{"outcome": {"$ne": "failure"}}, {"reward": {"$gte": 0.5}}]})
        >>> rich.admits({"outcome": "partial", "reward": 0.7}), rich.admits(
        ...     {"outcome": "partial", "reward": 0.2})
        (True, False)
        >>> EpisodeFilter.from_where({"category": "debugging", "outcome": {"$in": ["success"]}})
        EpisodeFilter(categories=(<TaskCategory.DEBUGGING: 'debugging'>,), \
outcomes=(<OutcomeStatus.SUCCESS: 'success'>,), strategies=None, where=None)
    """

    categories: tuple[TaskCategory, ...] | None
    outcomes: tuple[OutcomeStatus, ...] | None
    strategies: tuple[str, ...] | None
    where: Where | None

    def __init__(
        self,
        category: TaskCategory | str | Iterable[TaskCategory | str] | None = None,
        outcome: OutcomeStatus | str | Iterable[OutcomeStatus | str] | None = None,
        strategy_used: str | Iterable[str] | None = None,
        where: Mapping[str, Any] | None = None,
    ) -> None:
        given = {"category": category, "outcome": outcome, "strategy_used": strategy_used}
        native = {field: _native_values(field, value) for field, value in given.items()}
        rest: list[Where] = []
        for clause in [] if where is None else _conjuncts(parse_where(where)):
            if (
                isinstance(clause, Condition)
                and clause.field in _NATIVE
                and clause.operator in ("$eq", "$in")
                and native[clause.field] is None
            ):
                values = clause.value if isinstance(clause.value, tuple) else (clause.value,)
                native[clause.field] = _native_values(clause.field, values)
            else:
                rest.append(clause)
        object.__setattr__(self, "categories", native["category"])
        object.__setattr__(self, "outcomes", native["outcome"])
        object.__setattr__(self, "strategies", native["strategy_used"])
        residual = None if not rest else rest[0] if len(rest) == 1 else AllOf(tuple(rest))
        object.__setattr__(self, "where", residual)

    @classmethod
    def from_where(cls, where: Mapping[str, Any]) -> EpisodeFilter:
        """A filter from Chroma's ``where`` syntax alone (what LangChain users write).

        ``{"outcome": "success"}``, ``{"reward": {"$gte": 0.5}}``,
        ``{"$or": [{"category": "debugging"}, {"pass_rate": {"$gt": 0.8}}]}``: fields
        `WHERE_FIELDS`, operators `WHERE_OPERATORS`, ``$and`` / ``$or``; several
        keys in one dict are joined by AND.

        Raises:
            EpisodicValueError: Naming the field or operator that is unknown, or the
                value that does not fit it.
        """
        return cls(where=where)

    @property
    def is_empty(self) -> bool:
        """True when the filter keeps every episode."""
        parts = (self.categories, self.outcomes, self.strategies, self.where)
        return all(part is None for part in parts)

    def pushdown(self) -> EpisodeFilter | None:
        """The part every store filters natively (category, outcome, strategy); ``None``: none."""
        if self.where is None:
            return None if self.is_empty else self
        part = EpisodeFilter(self.categories, self.outcomes, self.strategies)
        return None if part.is_empty else part

    def matches(
        self,
        category: TaskCategory | str,
        outcome: OutcomeStatus | str,
        strategy_used: str,
    ) -> bool:
        """True when an episode with these field values passes the natively filtered part.

        The rule stores that cannot filter natively apply in Python, so every store
        filters alike; `where` is applied apart (`admits`).

        Examples:
            >>> EpisodeFilter(outcome="success").matches("debugging", "success", "iterative")
            True
        """
        return (
            (self.categories is None or category in self.categories)
            and (self.outcomes is None or outcome in self.outcomes)
            and (self.strategies is None or strategy_used in self.strategies)
        )

    def admits(self, fields: Mapping[str, object]) -> bool:
        """True when an episode whose `WHERE_FIELDS` values are ``fields`` passes it all.

        Categories and outcomes by their string values.
        """
        native = self.matches(*(str(fields.get(name, "")) for name in _NATIVE))
        return native and (self.where is None or self.where.holds(fields))
