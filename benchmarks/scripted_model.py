"""Scripted models for the real-model harness's own test: they copy what they are shown.

Neither is a learning figure; they keep the harness true in CI, where no real model
runs. Given a prompt, each finds the function to write (the last ``def`` of the
prompt, or of the request) and:

* when the replay shows a solution, copies the first one shown, its parameters renamed
  to the new function's (a failed attempt is copied as faithfully as a passing one:
  that is what a small real model was seen to do);
* otherwise writes the right body a quarter of the time (chosen by a hash of the task,
  so every arm gets the same luck) and ``return None`` otherwise.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.language_models.llms import LLM
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from pydantic import Field

__all__ = ["BASE_RATE", "ScriptedChatCopier", "ScriptedCopier", "scripted_body"]

BASE_RATE = 0.25
_DEF = re.compile(r"^def (\w+)\((.*?)\):", re.M)


def _uncommented(prompt: str) -> str:
    return "\n".join(
        line[2:] if line.startswith("# ") else line.lstrip("#") for line in prompt.splitlines()
    )


def _params(text: str) -> list[str]:
    return [p.split(":")[0].split("=")[0].strip() for p in text.split(",") if p.strip()]


def _first_solution(replay: str) -> str | None:
    found = re.search(r"<solution>\n(.*?)\n</solution>", replay, re.S)
    return found.group(1) if found else None


def scripted_body(prompt: str, references: Mapping[str, Any], seed: int | None = None) -> str:
    """The body the scripted copier writes for the last function of ``prompt``."""
    functions = _DEF.findall(prompt)
    if not functions:
        return "    return None\n"
    name, params = functions[-1]
    solution = _first_solution(_uncommented(prompt))
    if solution is not None:
        shown = _DEF.search(solution)
        body = [line for line in solution.splitlines()[1:] if not line.strip().startswith('"""')]
        text = "\n".join(body)
        if shown:
            for old, new in zip(_params(shown.group(2)), _params(params), strict=False):
                text = re.sub(rf"\b{re.escape(old)}\b", new, text)
        return text.rstrip() + "\n"
    task = references.get(name)
    digest = hashlib.sha256(f"{name}".encode()).digest()
    lucky = digest[0] / 256 < BASE_RATE
    if task is not None and lucky and task.reference:
        return task.reference.rstrip() + "\n"
    return "    return None\n"


class ScriptedCopier(LLM):
    """A completion model that copies the first solution its prompt shows."""

    references: dict[str, Any] = Field(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "scripted-copier"

    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        return scripted_body(prompt, self.references, kwargs.get("seed"))


class ScriptedChatCopier(BaseChatModel):
    """The same copier as a chat model: it reads the system prompt the middleware filled."""

    references: dict[str, Any] = Field(default_factory=dict)

    @property
    def _llm_type(self) -> str:
        return "scripted-chat-copier"

    def bind_tools(self, tools: Any, **kwargs: Any) -> ScriptedChatCopier:  # type: ignore[override]
        return self

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        system = "\n".join(m.text for m in messages if m.type == "system")
        request = messages[-1].text
        code = re.search(r"```python\n(.*?)```", request, re.S)
        skeleton = code.group(1) if code else ""
        body = scripted_body(system + "\n" + skeleton, self.references)
        answer = f"```python\n{skeleton}{body}```"
        return ChatResult(generations=[ChatGeneration(message=AIMessage(content=answer))])
