"""Lessons: short, reusable experience distilled from episodes, with lineage (pure logic).

An episode is raw: one solution and what its tests said. A `Lesson` says what
to do (and what to avoid) when a kind of task comes up, and names the episodes it was
distilled from. It is immutable: a revision is a new lesson that ``supersedes`` the
old one, which is then *archived* (kept, listable, never recalled).

Trust follows lineage: a lesson is never more trusted than its least trusted source,
so a lesson whose source episode is quarantined is quarantined with it (and released
with it); a lesson can also be quarantined itself (`lesson_status`).

Consolidation (`plan_consolidation`) merges near-duplicate lessons into one that
carries the union of their sources and their counters; nothing is deleted. It links
lessons whose vectors reach a cosine threshold, so after one pass no two active
lessons do: a second pass changes nothing.

The prompt's "Lessons" section is rendered by `langchain_episodic.prompting.lessons`.

Examples:
    >>> lesson = Lesson.create(
    ...     title="Strip e-mail addresses before validating them",
    ...     applies_when="a form validates an e-mail address",
    ...     do="call .strip() on the address first",
    ...     avoid="validating the raw input",
    ...     sources=(LessonSource("login-1"),),
    ...     created_at=0.0,
    ... )
    >>> lesson.lesson_id.startswith("lesson-"), lesson.source_ids
    (True, ('login-1',))
    >>> decode_lesson(*encode_lesson(lesson, [1.0, 0.0]))[0] == lesson
    True
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import numpy as np
from numpy.typing import NDArray

from langchain_episodic._validation import finite_float
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.model.credit import check_text
from langchain_episodic.model.episode import LESSON_ID_PREFIX, plain_dict

__all__ = [
    "LESSON_PREFIX",
    "MERGE_SIMILARITY",
    "Lesson",
    "LessonBook",
    "LessonSource",
    "LessonStatus",
    "decode_lesson",
    "encode_lesson",
    "is_lesson_entry",
    "is_lesson_id",
    "lesson_model",
    "lesson_status",
    "merge_lessons",
    "plan_consolidation",
]

LESSON_PREFIX = LESSON_ID_PREFIX
"""Every lesson id starts with it; `Episode` refuses ids that do."""

MERGE_SIMILARITY = 0.9
"""Cosine similarity at which two lessons are near-duplicates and consolidation merges them."""

_ENTRY_PREFIX = "lesson:"
_MAX_FIELD = 2_000

LessonStatus = Literal["active", "archived", "quarantined"]
"""``active``: recalled; ``archived``: superseded by a revision or a merge;
``quarantined``: itself, or one of its sources, is quarantined."""


def is_lesson_id(identifier: str) -> bool:
    """Whether ``identifier`` names a lesson (not an episode)."""
    return identifier.startswith(LESSON_PREFIX)


@dataclass(frozen=True)
class LessonSource:
    """One episode a lesson was distilled from, with the episode's provenance.

    Attributes:
        episode_id: The source episode.
        agent: Its ``EpisodeSource.agent``, when it had one.
        run_id: Its ``EpisodeSource.run_id``, when it had one.
    """

    episode_id: str
    agent: str | None = None
    run_id: str | None = None

    def __post_init__(self) -> None:
        check_text("LessonSource", "episode_id", self.episode_id)


def _field(name: str, value: object, *, optional: bool = False) -> str:
    if optional and isinstance(value, str) and not value.strip():
        return ""
    check_text("Lesson", name, value)
    assert isinstance(value, str)
    if len(value) > _MAX_FIELD:
        msg = f"Lesson.{name} is invalid: {len(value)} characters, at most {_MAX_FIELD}"
        raise EpisodicValueError(msg)
    return value.strip()


@dataclass(frozen=True)
class Lesson:
    """A distilled, reusable piece of experience, and the episodes it came from.

    Build one with `create` (which derives the id from the content).

    Attributes:
        lesson_id: ``"lesson-"`` and a digest of the content and sources.
        title: What the lesson is, in a line.
        applies_when: The kind of task it applies to.
        do: What to do.
        avoid: What not to do (may be empty).
        sources: The episodes it was distilled from, with their provenance.
        created_at: When, in seconds (the memory's clock).
        supersedes: The lessons it replaces (a revision, or a merge).
        helped: "Helped" credit carried over from the lessons it merged.
        hurt: "Hurt" credit carried over from the lessons it merged.
        by: Who wrote it (a model's name, a person).
    """

    lesson_id: str
    title: str
    applies_when: str
    do: str
    avoid: str
    sources: tuple[LessonSource, ...]
    created_at: float
    supersedes: tuple[str, ...] = ()
    helped: float = 0.0
    hurt: float = 0.0
    by: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.lesson_id, str) or not is_lesson_id(self.lesson_id):
            rule = f"must start with {LESSON_PREFIX!r}"
            raise EpisodicValueError(f"Lesson.lesson_id={self.lesson_id!r} is invalid: {rule}")
        for name in ("title", "applies_when", "do"):
            object.__setattr__(self, name, _field(name, getattr(self, name)))
        object.__setattr__(self, "avoid", _field("avoid", self.avoid, optional=True))
        sources = tuple(self.sources)
        if not sources or not all(isinstance(s, LessonSource) for s in sources):
            msg = "Lesson.sources is invalid: must name at least one source episode"
            raise EpisodicValueError(msg)
        object.__setattr__(self, "sources", tuple({s.episode_id: s for s in sources}.values()))
        object.__setattr__(self, "supersedes", tuple(dict.fromkeys(self.supersedes)))
        for name in ("created_at", "helped", "hurt"):
            number = finite_float(getattr(self, name))
            if number is None or (name != "created_at" and number < 0):
                msg = f"Lesson.{name}={getattr(self, name)!r} is invalid: must be a finite number"
                raise EpisodicValueError(msg)
            object.__setattr__(self, name, number)

    @classmethod
    def create(
        cls,
        *,
        title: str,
        applies_when: str,
        do: str,
        avoid: str = "",
        sources: Sequence[LessonSource],
        created_at: float,
        supersedes: Sequence[str] = (),
        helped: float = 0.0,
        hurt: float = 0.0,
        by: str | None = None,
    ) -> Lesson:
        """A lesson whose id is a digest of its content, sources and what it supersedes.

        The digest is taken over the checked fields (text stripped, sources without
        repeats), so the same lesson spelled with other whitespace has the same id.
        """
        lesson = cls(
            f"{LESSON_PREFIX}pending",
            title,
            applies_when,
            do,
            avoid,
            tuple(sources),
            created_at,
            tuple(supersedes),
            helped,
            hurt,
            by,
        )
        content = [lesson.title, lesson.applies_when, lesson.do, lesson.avoid]
        key = [*content, sorted(lesson.source_ids), sorted(lesson.supersedes)]
        digest = hashlib.sha256(json.dumps(key, ensure_ascii=False).encode("utf-8")).hexdigest()
        object.__setattr__(lesson, "lesson_id", f"{LESSON_PREFIX}{digest[:20]}")
        return lesson

    @property
    def source_ids(self) -> tuple[str, ...]:
        """The source episodes' ids."""
        return tuple(s.episode_id for s in self.sources)

    @property
    def embedding_text(self) -> str:
        """What the lesson is recalled by: its title and when it applies."""
        return f"{self.title}. {self.applies_when}"


# ---------------------------------------------------------------- journal entries


def encode_lesson(
    lesson: Lesson, vector: Sequence[float], model: str | None = None
) -> tuple[str, str, str]:
    """``(entry_id, run_id, payload)``: the journal entry of ``lesson`` with its vector.

    ``model`` names the embeddings model that made the vector (a digest of its
    fingerprint), so a namespace read with another model embeds the lesson again.
    """
    data: dict[str, Any] = {"kind": "lesson"}
    data.update((name, getattr(lesson, name)) for name in lesson.__dataclass_fields__)
    data["sources"] = [plain_dict(source) for source in lesson.sources]  # None left out
    packed = np.asarray(vector, dtype=np.float32).tobytes()
    data["vector"] = base64.b64encode(packed).decode("ascii")
    if model is not None:
        data["model"] = model
    entry = _ENTRY_PREFIX + lesson.lesson_id
    return entry, entry, json.dumps(data, ensure_ascii=False, separators=(",", ":"))


def is_lesson_entry(entry_id: str) -> bool:
    """Whether a journal entry id holds a lesson."""
    return entry_id.startswith(_ENTRY_PREFIX)


def decode_lesson(entry_id: str, run_id: str, payload: str) -> tuple[Lesson, NDArray[np.float32]]:
    """Read a journal entry written by `encode_lesson`.

    Raises:
        EpisodicValueError: The entry was not written by this package.
    """
    del run_id
    try:
        data: Any = json.loads(payload)
        if not isinstance(data, dict) or data.pop("kind", None) != "lesson":
            raise TypeError("not a lesson")
        vector = np.frombuffer(base64.b64decode(data.pop("vector")), dtype=np.float32).copy()
        data.pop("model", None)  # see lesson_model
        data["sources"] = tuple(LessonSource(**s) for s in data["sources"])
        data["supersedes"] = tuple(data["supersedes"])
        lesson = Lesson(**data)
        if _ENTRY_PREFIX + lesson.lesson_id != entry_id or not len(vector):
            raise TypeError(f"entry {entry_id!r} does not hold lesson {lesson.lesson_id!r}")
    except (TypeError, ValueError, KeyError) as error:
        msg = f"lesson entry {entry_id!r} is damaged ({error}); it was not written by this package"
        raise EpisodicValueError(msg) from None
    return lesson, vector


def lesson_model(payload: str) -> str | None:
    """The embeddings model an entry's vector was made with (``None``: not recorded)."""
    try:
        model = json.loads(payload).get("model")
    except (ValueError, AttributeError):
        return None
    return model if isinstance(model, str) else None


# ---------------------------------------------------------------- trust and lineage


def lesson_status(
    lesson: Lesson, superseded: Iterable[str], quarantined: Mapping[str, object] | Iterable[str]
) -> LessonStatus:
    """A lesson's status: quarantined (itself or a source), archived, or active.

    Examples:
        >>> lesson = Lesson.create(title="t", applies_when="w", do="d",
        ...                        sources=(LessonSource("e1"),), created_at=0.0)
        >>> lesson_status(lesson, set(), {"e1"}), lesson_status(lesson, set(), set())
        ('quarantined', 'active')
    """
    # Sets and mappings answer `in` as they are: copying them per lesson made deriving
    # every lesson's status quadratic.
    hidden = quarantined if isinstance(quarantined, (set, frozenset, Mapping)) else set(quarantined)
    if lesson.lesson_id in hidden or any(s in hidden for s in lesson.source_ids):
        return "quarantined"
    archived = superseded if isinstance(superseded, (set, frozenset)) else set(superseded)
    return "archived" if lesson.lesson_id in archived else "active"


# ---------------------------------------------------------------- consolidation


def plan_consolidation(
    lessons: Sequence[Lesson],
    vectors: NDArray[np.floating[Any]],
    threshold: float = MERGE_SIMILARITY,
) -> list[list[Lesson]]:
    """Groups of near-duplicate lessons (cosine >= ``threshold``, linked transitively).

    Only groups of two or more come back, each oldest first; `merge_lessons`
    turns each into one lesson. A group's lessons are linked by a chain of
    near-duplicate pairs, so no two lessons of different groups (nor a merged lesson,
    which takes one member's text, and any other) reach the threshold: running it
    again on the result finds nothing.
    """
    count = len(lessons)
    if count < 2:
        return []
    matrix = np.asarray(vectors, dtype=np.float64)
    unit = matrix / np.linalg.norm(matrix, axis=1, keepdims=True)
    close = unit @ unit.T >= threshold
    parent = list(range(count))

    def root(i: int) -> int:
        while parent[i] != i:
            parent[i] = parent[parent[i]]
            i = parent[i]
        return i

    for i, j in zip(*np.nonzero(np.triu(close, k=1)), strict=True):
        parent[root(int(i))] = root(int(j))
    groups: dict[int, list[Lesson]] = {}
    for index, lesson in enumerate(lessons):
        groups.setdefault(root(index), []).append(lesson)
    kept = [group for group in groups.values() if len(group) > 1]
    return [sorted(group, key=lambda one: (one.created_at, one.lesson_id)) for group in kept]


def merge_lessons(
    group: Sequence[Lesson],
    credit: Mapping[str, tuple[float, float]],
    created_at: float,
) -> Lesson:
    """One lesson for a group of near-duplicates: nothing of their evidence is lost.

    It takes the text of the member with the most sources (the newest on a tie),
    the union of all members' sources, and their credit counters
    (``credit[lesson_id] = (helped, hurt)``, plus what each carried over), and
    supersedes every member.
    """
    keeper = max(group, key=lambda one: (len(one.sources), one.created_at, one.lesson_id))
    sources: dict[str, LessonSource] = {}
    for lesson in group:
        for source in lesson.sources:
            sources.setdefault(source.episode_id, source)
    helped = sum(lesson.helped + credit.get(lesson.lesson_id, (0.0, 0.0))[0] for lesson in group)
    hurt = sum(lesson.hurt + credit.get(lesson.lesson_id, (0.0, 0.0))[1] for lesson in group)
    return Lesson.create(
        title=keeper.title,
        applies_when=keeper.applies_when,
        do=keeper.do,
        avoid=keeper.avoid,
        sources=tuple(sources.values()),
        created_at=created_at,
        supersedes=tuple(lesson.lesson_id for lesson in group),
        helped=helped,
        hurt=hurt,
        by="consolidation",
    )


@dataclass
class LessonBook:
    """Every lesson of a namespace with its vector, and which are superseded.

    Attributes:
        lessons: By id.
        vectors: By id, unit length.
    """

    lessons: dict[str, Lesson] = field(default_factory=dict)
    vectors: dict[str, NDArray[np.float32]] = field(default_factory=dict)

    def add(self, lesson: Lesson, vector: NDArray[np.floating[Any]]) -> None:
        """Keep ``lesson`` (the first one under an id)."""
        if lesson.lesson_id in self.lessons:
            return
        unit = np.asarray(vector, dtype=np.float32)
        self.lessons[lesson.lesson_id] = lesson
        self.vectors[lesson.lesson_id] = unit / (np.linalg.norm(unit) or 1.0)

    def holds_the_same(self, other: LessonBook) -> bool:
        """Whether ``other`` holds the same lessons with the same vectors."""
        return self.lessons == other.lessons and all(
            np.array_equal(vector, other.vectors[lesson_id])
            for lesson_id, vector in self.vectors.items()
        )

    @property
    def superseded(self) -> set[str]:
        """Ids of lessons a later lesson supersedes."""
        return {old for lesson in self.lessons.values() for old in lesson.supersedes}

    def with_status(
        self, quarantined: Mapping[str, object] | Iterable[str]
    ) -> list[tuple[Lesson, LessonStatus]]:
        """Every lesson with its status, oldest first."""
        superseded, hidden = self.superseded, set(quarantined)
        ordered = sorted(self.lessons.values(), key=lambda one: (one.created_at, one.lesson_id))
        return [(lesson, lesson_status(lesson, superseded, hidden)) for lesson in ordered]
