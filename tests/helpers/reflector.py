"""A fake chat model with structured output that writes scripted lessons (reflection tests).

``langchain-episodic lessons reflect --model tests.helpers.reflector:make_model`` loads
:func:`make_model`, which answers from :data:`SCRIPT` (tests set it with monkeypatch).
An answer is a :class:`LessonDrafts`, a dict, an exception (raised), or a callable
taking the messages sent and returning one of those (:func:`citing_batch` writes a
lesson citing the episodes the prompt shows).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import BaseMessage
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import Field

from langchain_episodic.reflection import LessonDraft, LessonDrafts

EPISODE_ID_LINE = re.compile(r"^episode_id: (?P<id>.+)$", re.MULTILINE)

SCRIPT: list[Any] = []
"""What the next model :func:`make_model` builds answers, in order (then no lessons);
building it empties the list."""

MADE: list[StructuredChatModel] = []
"""Every model :func:`make_model` built, so a test can read what it was sent."""


class StructuredChatModel(GenericFakeChatModel):
    """Answers ``with_structured_output`` calls from ``answers``; records every prompt."""

    answers: list[Any] = Field(default_factory=list)
    received: list[list[BaseMessage]] = Field(default_factory=list)

    def with_structured_output(self, schema: Any, **kwargs: Any) -> Runnable[Any, Any]:  # type: ignore[override]
        del schema, kwargs
        return RunnableLambda(self._answer)

    def _answer(self, messages: Sequence[BaseMessage]) -> Any:
        self.received.append(list(messages))
        answer = self.answers.pop(0) if self.answers else LessonDrafts()
        if callable(answer) and not isinstance(answer, type):
            answer = answer(messages)
        if isinstance(answer, BaseException):
            raise answer
        return answer


def episode_ids(messages: Sequence[BaseMessage]) -> list[str]:
    """The episode ids a reflection prompt shows, in order."""
    return [match["id"] for match in EPISODE_ID_LINE.finditer(messages[-1].text)]


def citing_batch(
    title: str, *, extra: Sequence[str] = ()
) -> Callable[[Sequence[BaseMessage]], LessonDrafts]:
    """An answer: one lesson titled ``title`` citing every episode shown (and ``extra``)."""

    def answer(messages: Sequence[BaseMessage]) -> LessonDrafts:
        return LessonDrafts(
            lessons=[
                LessonDraft(
                    title=title,
                    applies_when="a form validates an e-mail address",
                    do="strip the address before validating it",
                    avoid="validating the raw input",
                    source_episode_ids=[*episode_ids(messages), *extra],
                )
            ]
        )

    return answer


def make_model() -> StructuredChatModel:
    """A structured-output fake answering :data:`SCRIPT` (what ``--model`` loads)."""
    model = StructuredChatModel(messages=iter([]), answers=list(SCRIPT))
    SCRIPT.clear()  # each answer is given once
    MADE.append(model)
    return model
