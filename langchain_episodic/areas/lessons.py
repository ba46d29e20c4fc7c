"""``memory.lessons``: distilled lessons, recalled beside the episodes they came from."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from langchain_episodic._async import async_twin
from langchain_episodic._validation import check_number
from langchain_episodic.model.episode import TaskDescription, as_task
from langchain_episodic.model.lesson import MERGE_SIMILARITY, Lesson, LessonStatus
from langchain_episodic.scoring.priority import check_time

if TYPE_CHECKING:
    from langchain_episodic.service.opening import Services

__all__ = ["MemoryLessons"]


class MemoryLessons:
    """The lessons of a namespace: what to do when, each traced to its source episodes.

    Lessons come from `reflect` (a model reads
    judged episodes) or are added by hand; the active ones are recalled beside the
    episodes (``build_replay(..., lesson_k=2)``), credited like them, merged when
    near-duplicates and archived when revised, never deleted but by erasure.

    Examples:
        >>> from langchain_episodic import EpisodicMemory, episode_from_tests
        >>> from langchain_episodic.model.lesson import Lesson, LessonSource
        >>> memory = EpisodicMemory()
        >>> _ = memory.record(episode_from_tests("Add a login form", "def login(): ...", 7, 10,
        ...                                      episode_id="login-1", timestamp=1.0))
        >>> memory.lessons.add([Lesson.create(
        ...     title="Strip e-mail addresses before validating them",
        ...     applies_when="a form validates an e-mail address", do="call .strip() first",
        ...     sources=[LessonSource("login-1")], created_at=2.0)])
        1
        >>> memory.lessons.list()[0].title
        'Strip e-mail addresses before validating them'
    """

    def __init__(self, services: Services) -> None:
        self._s = services

    def __repr__(self) -> str:
        return f"<lessons of namespace {self._s.context.namespace!r}>"

    def add(self, lessons: Iterable[Lesson]) -> int:
        """Store lessons, each embedded for recall, all or nothing; how many were new.

        Every source must be an episode stored here and every superseded lesson
        stored, or nothing is written (`EpisodicValueError`).
        """
        return self._s.lessons.add(lessons)

    def list(self, status: LessonStatus | None = "active") -> tuple[Lesson, ...]:
        """Lessons of one status (``None``: all), oldest first.

        ``"active"`` ones are recalled; ``"archived"`` ones were superseded;
        ``"quarantined"`` ones are, or derive from a quarantined episode.
        """
        return self._s.lessons.of_status(status)

    def get(self, lesson_id: str) -> Lesson:
        """The stored lesson ``lesson_id`` (``EpisodicValueError`` if none)."""
        return self._s.lessons.get(lesson_id)

    def status(self, lesson_id: str) -> LessonStatus:
        """Whether ``lesson_id`` is active, archived or quarantined."""
        return self._s.lessons.status(lesson_id)

    def utility(self, lesson_id: str, current_time: float | None = None) -> float:
        """The lesson's utility: its credit plus what the lessons it merged carried.

        Read at ``current_time`` (the memory's clock when ``None``): evidence fades with age.
        """
        now = None if current_time is None else check_time("current_time", current_time)
        return self._s.lessons.utility(lesson_id, now)

    def revise(self, lesson_id: str, /, **changes: Any) -> Lesson:
        """Store a revision of an active lesson (``title``, ``applies_when``, ``do``, ...).

        The new lesson supersedes the old one, which is archived.
        """
        return self._s.lessons.revise(lesson_id, changes)

    def consolidate(self, threshold: float = MERGE_SIMILARITY) -> tuple[Lesson, ...]:
        """Merge near-duplicate active lessons (cosine >= ``threshold``), keeping evidence.

        The merges supersede them (they are archived); running it again changes nothing.
        """
        return self._s.lessons.consolidate(check_number("threshold", threshold, -1.0, 1.0))

    def recall(self, query: str | TaskDescription, k: int = 2) -> tuple[Lesson, ...]:
        """The ``k`` active lessons at the relevance floor, by similarity scaled by utility."""
        return self._s.recall.lessons(as_task(query, "query"), k)

    aadd, arevise = async_twin(add), async_twin(revise)
    aconsolidate, arecall = async_twin(consolidate), async_twin(recall)
