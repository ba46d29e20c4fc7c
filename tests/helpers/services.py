"""One namespace's services opened over a store, as the memory opens them.

For tests of one service that need it wired with the others (its context, logs and
collaborators) without reaching into a memory's privates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from langchain_core.embeddings import Embeddings

from langchain_episodic.embeddings.background import default_background_texts
from langchain_episodic.embeddings.builtin import default_embeddings
from langchain_episodic.embeddings.fingerprint import fingerprint_embeddings
from langchain_episodic.scoring.credit import UTILITY_HALF_LIFE
from langchain_episodic.scoring.relevance import calibration_for
from langchain_episodic.service.context import NamespaceContext
from langchain_episodic.service.opening import Services, open_services
from langchain_episodic.stores.base import DEFAULT_NAMESPACE, EpisodeStore
from langchain_episodic.stores.in_memory import InMemoryEpisodeStore


def services(
    store: EpisodeStore | None = None,
    *,
    namespace: str = DEFAULT_NAMESPACE,
    embeddings: Embeddings | None = None,
    clock: Callable[[], float] = lambda: 0.0,
    background: Sequence[str] | None = None,
    short_term_limit: int = 5,
) -> Services:
    """The services of ``namespace`` in ``store`` (a fresh in-memory store when ``None``)."""
    model = embeddings if embeddings is not None else default_embeddings()
    return open_services(
        NamespaceContext(store or InMemoryEpisodeStore(), namespace, model, clock),
        short_term_limit=short_term_limit,
        open_run_ttl=None,
        half_life=UTILITY_HALF_LIFE,
        calibration=calibration_for(model),
        background=default_background_texts() if background is None else background,
        fingerprint=fingerprint_embeddings(model),
        owner=model,
    )
