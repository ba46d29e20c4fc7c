"""langchain-episodic: episodic memory with prioritized experience replay for LangChain.

An agent records each finished task as an :class:`Episode`; on a new task,
:class:`EpisodicMemory` recalls the few past episodes that matter most (similar,
recent, rewarded, successful) and :func:`format_replay_prompt` turns them into context
for the model. Episodes live in ChromaDB: on disk, in memory, or on a Chroma server.
"""

from langchain_episodic.diagnostics import LearningSnapshot, compute_learning_curve
from langchain_episodic.embeddings import HashingEmbeddings
from langchain_episodic.episode import (
    Episode,
    EpisodeSource,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
)
from langchain_episodic.errors import (
    EpisodeConflictError,
    EpisodeValidationError,
    EpisodicValueError,
    StoreConfigurationError,
    StoreLockedError,
)
from langchain_episodic.feedback import (
    episode_from_tests,
    feedback_from_tests,
    outcome_for_pass_rate,
)
from langchain_episodic.filters import EpisodeFilter
from langchain_episodic.in_memory_store import InMemoryEpisodeStore
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.migration import MigrationError, MigrationReport, migrate_namespace
from langchain_episodic.prompting import areplay_prompt, replay_prompt
from langchain_episodic.quarantine import QuarantineEvent
from langchain_episodic.replay import (
    ReplayContext,
    approximate_token_count,
    build_replay_context,
    format_replay_prompt,
    render_episode,
)
from langchain_episodic.retriever import EpisodicRetriever, result_to_document
from langchain_episodic.runnable import create_replay_runnable
from langchain_episodic.scoring import (
    PrioritizedResult,
    PriorityBreakdown,
    ReplayWeights,
    SearchResult,
    compute_priority,
    cosine_similarity,
    explain_priority,
    temporal_decay,
)
from langchain_episodic.skills import (
    SkillProfile,
    compute_skill_profiles,
    identify_weak_skills,
)
from langchain_episodic.store import ChromaEpisodeStore
from langchain_episodic.store_base import EpisodeStore, MalformedRecordWarning
from langchain_episodic.strategy import (
    STRATEGY_POOL,
    StrategyChoice,
    choose_strategy,
    select_strategy,
    select_strategy_thompson,
)
from langchain_episodic.tools import create_recall_tool
from langchain_episodic.vectorstore_store import VectorStoreEpisodeStore

__version__ = "0.1.0"

__all__ = [
    "STRATEGY_POOL",
    "ChromaEpisodeStore",
    "Episode",
    "EpisodeConflictError",
    "EpisodeFilter",
    "EpisodeSource",
    "EpisodeStore",
    "EpisodeValidationError",
    "EpisodicMemory",
    "EpisodicRetriever",
    "EpisodicValueError",
    "Feedback",
    "HashingEmbeddings",
    "InMemoryEpisodeStore",
    "LearningSnapshot",
    "MalformedRecordWarning",
    "MigrationError",
    "MigrationReport",
    "OutcomeStatus",
    "PrioritizedResult",
    "PriorityBreakdown",
    "QuarantineEvent",
    "ReplayContext",
    "ReplayWeights",
    "SearchResult",
    "SkillProfile",
    "StoreConfigurationError",
    "StoreLockedError",
    "StrategyChoice",
    "TaskCategory",
    "TaskDescription",
    "VectorStoreEpisodeStore",
    "__version__",
    "approximate_token_count",
    "areplay_prompt",
    "build_replay_context",
    "choose_strategy",
    "compute_learning_curve",
    "compute_priority",
    "compute_skill_profiles",
    "cosine_similarity",
    "create_recall_tool",
    "create_replay_runnable",
    "episode_from_tests",
    "explain_priority",
    "feedback_from_tests",
    "format_replay_prompt",
    "identify_weak_skills",
    "migrate_namespace",
    "outcome_for_pass_rate",
    "render_episode",
    "replay_prompt",
    "result_to_document",
    "select_strategy",
    "select_strategy_thompson",
    "temporal_decay",
]
