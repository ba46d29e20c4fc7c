"""Fake chat models that record what they are sent, and the inputs of agent tests."""

from __future__ import annotations

import threading
import time
from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatResult
from langchain_core.runnables import Runnable, RunnableLambda
from pydantic import Field

from langchain_episodic.reflection import LessonDrafts

SYSTEM = "You are a careful Python developer. Answer with code only."


class RecordingChatModel(GenericFakeChatModel):
    """A fake chat model that replays scripted answers and records every input."""

    received: list[list[BaseMessage]] = Field(default_factory=list)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        self.received.append(list(messages))
        return super()._generate(messages, stop=stop, run_manager=run_manager, **kwargs)

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> RecordingChatModel:  # type: ignore[override]
        return self

    def system_texts(self) -> list[str]:
        """The system message of every call (the first message), as text."""
        texts = []
        for messages in self.received:
            assert isinstance(messages[0], SystemMessage), messages
            texts.append(messages[0].text)
        return texts


def make_model(*answers: str | AIMessage) -> RecordingChatModel:
    return RecordingChatModel(messages=iter(answers))


def user(text: str) -> dict[str, Any]:
    return {"messages": [{"role": "user", "content": text}]}


class StructuredChatModel(GenericFakeChatModel):
    """A fake chat model whose structured output replays scripted answers.

    Each answer is returned as is (a :class:`LessonDrafts`, a dict, garbage), or raised
    when it is an exception; with no answer left it returns an empty ``LessonDrafts``.
    Every prompt is recorded in ``prompts`` (and the calling thread in ``threads``);
    ``delay`` sleeps before answering and ``gate``, when given, is waited for first.
    """

    answers: list[Any] = Field(default_factory=list)
    prompts: list[list[BaseMessage]] = Field(default_factory=list)
    threads: list[int] = Field(default_factory=list)
    delay: float = 0.0
    gate: Any = None

    def with_structured_output(  # type: ignore[override]
        self, schema: Any, **kwargs: Any
    ) -> Runnable[Any, Any]:
        def answer(messages: list[BaseMessage]) -> Any:
            self.prompts.append(list(messages))
            self.threads.append(threading.get_ident())
            if isinstance(self.gate, threading.Event):
                self.gate.wait(10)
            if self.delay:
                time.sleep(self.delay)
            found = self.answers.pop(0) if self.answers else LessonDrafts()
            if isinstance(found, BaseException):
                raise found
            return found

        return RunnableLambda(answer)


def structured_model(*answers: Any, **fields: Any) -> StructuredChatModel:
    """A :class:`StructuredChatModel` answering ``answers`` in turn."""
    return StructuredChatModel(messages=iter(()), answers=list(answers), **fields)
