"""A run's credit events and their journal entries (pure data and rules).

An `Injection` says which episodes (and lessons) a prompt showed a run; a `CreditEvent`
gives them the run's outcome. Both are checked when built, and each is one journal entry:
`encode_injection` / `encode_credit` make ``(entry_id, run_id, payload)``, `decode_entry`
reads one back; `redact_injection` / `redact_credit` drop erased ids from an entry. The
statistic over them (utility, probation, lift) is `langchain_episodic.scoring.credit`.

Examples:
    >>> shown = Injection("run-1", ("fix",), "Fix the login", "debugging", at=0.0)
    >>> decode_entry(*encode_injection(shown)) == shown
    True
    >>> outcome_entry_id("run-1")
    'outcome:run-1'
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, replace
from typing import Any

from langchain_episodic._validation import finite_float
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.erasure import ERASED_TASK, redact_ids

__all__ = [
    "CreditEvent",
    "Injection",
    "check_credit",
    "check_reward",
    "check_text",
    "decode_entry",
    "encode_credit",
    "encode_injection",
    "outcome_entry_id",
    "redact_credit",
    "redact_injection",
]

_INJECTION_PREFIX = "injection:"
_OUTCOME_PREFIX = "outcome:"


def check_text(owner: str, name: str, value: object, *, optional: bool = False) -> None:
    """Refuse ``value`` unless it is a non-empty string (or ``None`` when ``optional``).

    Raises:
        EpisodicValueError: Naming ``owner.name`` and the value.
    """
    if optional and value is None:
        return
    if not isinstance(value, str) or not value.strip():
        rule = "a non-empty string or None" if optional else "a non-empty string"
        msg = f"{owner}.{name}={value!r} is invalid: must be {rule}"
        raise EpisodicValueError(msg)


def check_reward(reward: object) -> float:
    """A run's reward as a float in [0, 1]: the one check every credit goes through.

    Raises:
        EpisodicValueError: ``reward`` is not a number in [0, 1] (a bool is not one).
    """
    number = finite_float(reward)
    if number is None or not 0.0 <= number <= 1.0 or isinstance(reward, bool):
        msg = f"reward={reward!r} is invalid: must be a number in [0, 1]"
        raise EpisodicValueError(msg)
    return number


def check_credit(run_id: object, reward: object, by: object) -> float:
    """The arguments of a credit, checked before anything is read; the reward as a float.

    The one validator behind `CreditEvent` and every way to credit a run.

    Raises:
        EpisodicValueError: ``run_id`` or ``by`` is empty (``by`` may be ``None``),
            or ``reward`` is not a number in [0, 1].
    """
    check_text("CreditEvent", "run_id", run_id)
    check_text("CreditEvent", "by", by, optional=True)
    return check_reward(reward)


def _check(
    item: Injection | CreditEvent, texts: tuple[str, ...], optional: tuple[str, ...]
) -> None:
    """The checks an injection and a credit event share, in order; ids deduplicated."""
    owner = type(item).__name__
    for name in texts + optional:
        check_text(owner, name, getattr(item, name), optional=name in optional)
    ids = item.episode_ids
    if not isinstance(ids, (tuple, list)):
        msg = f"{owner}.episode_ids={ids!r} is invalid: must be a sequence of episode ids"
        raise EpisodicValueError(msg)
    for index, episode_id in enumerate(ids):
        if not isinstance(episode_id, str) or not episode_id:
            where = f"{owner}.episode_ids[{index}]"
            msg = f"{where}={episode_id!r} is invalid: must be a non-empty string"
            raise EpisodicValueError(msg)
    object.__setattr__(item, "episode_ids", tuple(dict.fromkeys(ids)))
    at = finite_float(item.at)
    if at is None:
        msg = f"{owner}.at={item.at!r} is invalid: must be a finite number"
        raise EpisodicValueError(msg)
    object.__setattr__(item, "at", at)
    if not isinstance(item.holdout, bool):
        msg = f"{owner}.holdout={item.holdout!r} is invalid: must be True or False"
        raise EpisodicValueError(msg)
    if item.holdout and item.episode_ids:
        msg = (
            f"{owner}.episode_ids={list(item.episode_ids)!r} is invalid for a holdout run: "
            "a holdout run is shown no memory"
        )
        raise EpisodicValueError(msg)


@dataclass(frozen=True)
class Injection:
    """A prompt built from recall reached a model: which episodes one run was shown.

    Attributes:
        run_id: The run (an agent run, a chain invocation, a caller's own id).
        episode_ids: The episodes shown, in prompt order (may be empty: a run shown
            nothing still tells what runs earn without memory).
        task: The task the recall was for.
        category: The task's category (``TaskCategory`` value): runs are compared
            within it.
        at: When, in seconds (the memory's clock).
        thread_id: The conversation thread, when known (LangGraph's ``thread_id``).
        holdout: The run was shown no memory *by chance* (the memory's ``holdout``
            fraction): the baseline credit and `lift_report`
            compare the other runs with. A holdout run shows nothing.
        policy: The presentation policy the prompt was rendered with
            (`presentation`), or ``None`` (a renderer of
            the caller's own, the article's prompt, a holdout run).
    """

    run_id: str
    episode_ids: tuple[str, ...]
    task: str
    category: str
    at: float
    thread_id: str | None = None
    holdout: bool = False
    policy: str | None = None

    def __post_init__(self) -> None:
        _check(self, ("run_id", "task", "category"), ("thread_id", "policy"))


@dataclass(frozen=True)
class CreditEvent:
    """A run's outcome, credited to every episode it was shown; or its closing without one.

    Attributes:
        run_id: The run credited.
        reward: The run's reward in [0, 1]; ``None`` when the run was closed without
            credit (it stayed open longer than the memory's ``open_run_ttl``).
        episode_ids: The episodes credited: every episode the run was shown.
        category: The run's task category.
        at: When, in seconds (the memory's clock).
        by: Who credited it (a person, an agent, a tool), when known.
        holdout: The run was a holdout run (shown no memory by chance): its reward is
            the baseline, it credits no episode.
        policy: The presentation policy its first prompt used, or ``None``: its
            reward is evidence for that policy.
    """

    run_id: str
    reward: float | None
    episode_ids: tuple[str, ...]
    category: str
    at: float
    by: str | None = None
    holdout: bool = False
    policy: str | None = None

    def __post_init__(self) -> None:
        _check(self, ("run_id", "category"), ("by", "policy"))
        if self.reward is not None:
            object.__setattr__(self, "reward", check_reward(self.reward))

    @property
    def closed_without_credit(self) -> bool:
        """Whether the run was closed for staying open too long, with no reward."""
        return self.reward is None


# ---------------------------------------------------------------- journal entries


def outcome_entry_id(run_id: str) -> str:
    """The journal id of a run's outcome: one per run, so a second one is never stored."""
    return _OUTCOME_PREFIX + run_id


def redact_injection(injection: Injection, erased: frozenset[str]) -> Injection:
    """``injection`` as an erasure rewrites it: the erased ids out, the task text gone."""
    kept = redact_ids(injection.episode_ids, erased)
    return replace(injection, episode_ids=kept, task=ERASED_TASK)


def redact_credit(event: CreditEvent, erased: frozenset[str]) -> CreditEvent:
    """``event`` as an erasure rewrites it: the erased ids out."""
    return replace(event, episode_ids=redact_ids(event.episode_ids, erased))


def encode_injection(injection: Injection) -> tuple[str, str, str]:
    """``(entry_id, run_id, payload)``: the journal entry of ``injection``."""
    payload = _payload("injection", injection)
    digest = hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]
    return f"{_INJECTION_PREFIX}{injection.run_id}:{digest}", injection.run_id, payload


def encode_credit(event: CreditEvent) -> tuple[str, str, str]:
    """``(entry_id, run_id, payload)``: the journal entry of ``event``."""
    return outcome_entry_id(event.run_id), event.run_id, _payload("credit", event)


def _payload(kind: str, item: Injection | CreditEvent) -> str:
    data = {"kind": kind, **{name: getattr(item, name) for name in item.__dataclass_fields__}}
    data["episode_ids"] = list(item.episode_ids)
    # Written only when set: entries keep the bytes (and so the ids) of the journal
    # before holdout runs and presentation policies existed.
    if not item.holdout:
        del data["holdout"]
    if item.policy is None:
        del data["policy"]
    return json.dumps(data, ensure_ascii=False, separators=(",", ":"))


_KINDS: dict[str, type[Injection | CreditEvent]] = {"injection": Injection, "credit": CreditEvent}


def decode_entry(entry_id: str, run_id: str, payload: str) -> Injection | CreditEvent:
    """Read a journal entry written by `encode_injection` or `encode_credit`.

    Raises:
        EpisodicValueError: The entry was not written by this package.
    """
    try:
        data: Any = json.loads(payload)
        if not isinstance(data, dict):
            raise TypeError("not an object")
        kind = data.pop("kind", None)
        if not isinstance(kind, str) or kind not in _KINDS:
            raise TypeError(f"unknown kind {kind!r}")
        item = _KINDS[kind](**data)
        if item.run_id != run_id:
            raise TypeError(f"run_id {item.run_id!r} is not the entry's {run_id!r}")
    except (TypeError, ValueError) as error:
        msg = (
            f"credit journal entry {entry_id!r} is damaged ({error}); "
            "it was not written by this package"
        )
        raise EpisodicValueError(msg) from None
    return item
