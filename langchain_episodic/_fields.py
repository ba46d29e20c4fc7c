"""The pydantic side of `RecallOptions` for the integrations.

The retriever and the classic chain memory are pydantic models; both hold their
recall options as one ``options: RecallOptions`` field and accept the options flat
(``k=3``, ``category="debugging"``, ...) as LangChain users expect, so the option
names and their rules live only in `langchain_episodic.scoring.options`.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, model_validator

from langchain_episodic.scoring.options import RECALL_OPTION_NAMES, RecallOptions

__all__ = ["RecallOptionsFields"]


class RecallOptionsFields(BaseModel):
    """Mixin: an ``options`` field that flat recall options are collected into."""

    model_config = ConfigDict(arbitrary_types_allowed=True)

    options: RecallOptions = Field(default_factory=RecallOptions)
    """How to recall (how many, ranked how, filtered how)."""

    top_k_name: ClassVar[str] = "top_k"
    """The flat name that sets ``options.top_k`` (``k`` on a retriever)."""

    @model_validator(mode="before")
    @classmethod
    def _collect_options(cls, data: Any) -> Any:
        if not isinstance(data, dict):
            return data
        data = dict(data)
        flat = {name: data.pop(name) for name in RECALL_OPTION_NAMES & set(data)}
        if cls.top_k_name in data:
            flat["top_k"] = data.pop(cls.top_k_name)
        if flat:
            data["options"] = RecallOptions.from_mapping(data.get("options"), flat)
        return data
