"""Fake chat models that record what they are sent, and the inputs of agent tests."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from langchain_core.language_models.fake_chat_models import GenericFakeChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage
from langchain_core.outputs import ChatResult
from pydantic import Field

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
