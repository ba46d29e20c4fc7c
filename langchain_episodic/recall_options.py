"""The recall options the LangChain integrations share, as pydantic fields."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from langchain_episodic.episode import OutcomeStatus, TaskCategory
from langchain_episodic.filters import EpisodeFilter
from langchain_episodic.scoring import DEFAULT_HALF_LIFE, ReplayWeights

__all__ = ["RecallOptions"]


class RecallOptions(BaseModel):
    """Fields passed on to :meth:`~langchain_episodic.EpisodicMemory.recall`.

    Mixed into :class:`~langchain_episodic.EpisodicRetriever` and
    ``EpisodicChainMemory`` so that both accept and check the same options.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    weights: ReplayWeights | None = None
    """Priority weights; the article's defaults when ``None``."""
    half_life: float = Field(default=DEFAULT_HALF_LIFE, gt=0)
    """Recency half-life in seconds."""
    fetch_k: int | None = Field(default=None, ge=1)
    """Candidates fetched by similarity before ranking; twice the result count when ``None``."""
    min_similarity: float | None = Field(default=None, ge=-1.0, le=1.0)
    """Optional similarity floor."""
    category: TaskCategory | str | list[TaskCategory | str] | None = None
    """Keep only episodes of these task categories."""
    outcome: OutcomeStatus | str | list[OutcomeStatus | str] | None = None
    """Keep only episodes with these outcomes."""
    filters: EpisodeFilter | None = None
    """A full filter (instead of ``category`` / ``outcome``)."""

    def recall_options(self) -> dict[str, Any]:
        """These fields as keyword arguments of ``EpisodicMemory.recall``."""
        return {
            "weights": self.weights,
            "half_life": self.half_life,
            "fetch_k": self.fetch_k,
            "min_similarity": self.min_similarity,
            "filters": self.filters,
            "category": self.category,
            "outcome": self.outcome,
        }
