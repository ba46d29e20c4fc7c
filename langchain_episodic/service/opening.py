"""Opening a namespace: the memory's settings checked, the namespace found, the model checked.

The embedding model is part of the namespace. Opening embeds one fixed probe text and
compares the model's `EmbedderFingerprint`
with the one recorded when the namespace was created (`checked_embeddings`). A
namespace that holds episodes but no fingerprint (written before fingerprints) is
checked once against its data: the model must find its latest episode again by
re-embedding its task.
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from langchain_core.embeddings import Embeddings

from langchain_episodic._finalizing import finalize_elsewhere
from langchain_episodic._validation import check_int, check_number, describe, encodes
from langchain_episodic.embeddings.builtin import builtin_expression
from langchain_episodic.embeddings.fingerprint import (
    SAME_MODEL_SIMILARITY,
    EmbedderFingerprint,
    RefusingEmbeddings,
    fingerprint_embeddings,
)
from langchain_episodic.embeddings.hashing import HashingEmbeddings
from langchain_episodic.errors import (
    EmbeddingMismatchError,
    EpisodicValueError,
    NamespaceNotFoundError,
    ReadOnlyMemoryError,
    StoreReadOnlyError,
)
from langchain_episodic.model.quarantine import QuarantineEvent
from langchain_episodic.scoring.relevance import Calibration
from langchain_episodic.scoring.retention import Retention
from langchain_episodic.scoring.sharing import PRINCIPAL_RUNS
from langchain_episodic.service.context import NamespaceContext, check_vectors
from langchain_episodic.service.credit import Runs
from langchain_episodic.service.credit_log import recorded_by
from langchain_episodic.service.erasure import Eraser
from langchain_episodic.service.journal import Journal
from langchain_episodic.service.lessons import Lessons
from langchain_episodic.service.quarantine import Quarantine
from langchain_episodic.service.recall import Recall
from langchain_episodic.service.relevance import RelevanceTest
from langchain_episodic.service.replay import Replays
from langchain_episodic.service.summary import Summary
from langchain_episodic.service.window import ShortTermWindow
from langchain_episodic.service.writing import EpisodeWriter
from langchain_episodic.stores.base import EpisodeStore, JournalEntry, ListsCollections

__all__ = [
    "EMBEDDER_STATE_KEY",
    "MismatchPolicy",
    "Services",
    "check_background",
    "check_holdout",
    "check_settings",
    "checked_embeddings",
    "open_services",
    "require_namespace",
]

EMBEDDER_STATE_KEY = "embedder"
"""The store state key under which a namespace keeps its embedder's fingerprint."""

MismatchPolicy = Literal["raise", "read-only"]
_MISMATCH_POLICIES = ("raise", "read-only")
_UNKNOWN_MODEL = "a model whose fingerprint was never recorded (an earlier version wrote it)"


def check_holdout(holdout: object, rng: object = None) -> float:
    """The holdout fraction, checked: a number in [0, 1) (1 would show memory to no run).

    Raises:
        EpisodicValueError: ``holdout`` is outside [0, 1).
        TypeError: ``rng`` is not a ``numpy.random.Generator``.
    """
    fraction = check_number("holdout", holdout, 0.0, 1.0)
    if fraction >= 1.0:
        msg = f"holdout={holdout!r} is invalid: must be in [0, 1) (1: memory shown to no run)"
        raise EpisodicValueError(msg)
    if rng is not None and not isinstance(rng, np.random.Generator):
        msg = f"rng={rng!r} is invalid: must be a numpy.random.Generator (default_rng(seed))"
        raise TypeError(msg)
    return fraction


def check_background(background: object) -> tuple[str, ...]:
    """The background texts, checked: a sequence (not one string) of non-empty strings.

    Raises:
        TypeError: ``background`` is a single string or not a sequence of strings.
        EpisodicValueError: A text is empty or blank; the message names its index.
    """
    if isinstance(background, (str, bytes)) or not isinstance(background, Sequence):
        msg = (
            f"background={describe(background)} is invalid: must be a sequence of texts "
            "(a list of strings), or None for the packaged one"
        )
        raise TypeError(msg)
    for index, text in enumerate(background):
        if not isinstance(text, str):
            msg = f"background[{index}]={describe(text)} is invalid: must be a string"
            raise TypeError(msg)
        if not text.strip() or not encodes(text):
            msg = (
                f"background[{index}]={describe(text)} is invalid: must be non-empty "
                "text of valid Unicode"
            )
            raise EpisodicValueError(msg)
    return tuple(background)


def check_settings(
    store: object,
    embeddings: object,
    short_term_limit: object,
    namespace: object,
    on_embedding_mismatch: object,
    open_run_ttl: object,
    utility_half_life: object,
    create_namespace: object,
) -> float:
    """Refuse a bad memory setting before anything is opened; the half-life, checked.

    Raises:
        EpisodicValueError: A number out of range, an unknown policy, an empty or
            invalid namespace; the message names the argument and its value.
        TypeError: ``store`` or ``embeddings`` is not of its protocol.
    """
    check_int("short_term_limit", short_term_limit, 0)
    if open_run_ttl is not None:
        check_number("open_run_ttl", open_run_ttl, 0.0)
    half_life = check_number("utility_half_life", utility_half_life, 0.0)
    if half_life <= 0:
        msg = f"utility_half_life={half_life!r} is invalid: must be positive"
        raise EpisodicValueError(msg)
    if on_embedding_mismatch not in _MISMATCH_POLICIES:
        msg = (
            f"on_embedding_mismatch={on_embedding_mismatch!r} is invalid: must be "
            "'raise' or 'read-only'"
        )
        raise EpisodicValueError(msg)
    if not isinstance(namespace, str) or not namespace.strip() or not encodes(namespace):
        msg = (
            f"namespace={describe(namespace)} is invalid: must be a non-empty string "
            "of valid Unicode"
        )
        raise EpisodicValueError(msg)
    if embeddings is not None and not isinstance(embeddings, Embeddings):
        msg = f"embeddings={embeddings!r} is invalid: must be a LangChain Embeddings"
        raise TypeError(msg)
    if store is not None and not isinstance(store, EpisodeStore):
        msg = (
            f"store={store!r} is invalid: must implement EpisodeStore (e.g. a "
            "ChromaEpisodeStore, InMemoryEpisodeStore or VectorStoreEpisodeStore)"
        )
        raise TypeError(msg)
    if not isinstance(create_namespace, bool):
        msg = f"create_namespace={create_namespace!r} is invalid: must be True or False"
        raise EpisodicValueError(msg)
    return half_life


def require_namespace(store: EpisodeStore, namespace: str) -> None:
    """Raise unless ``store`` lists ``namespace`` (``create_namespace=False``).

    Checked before the fingerprint check, whose first write would create it.

    Raises:
        NamespaceNotFoundError: Listing the namespaces there and, for a store that
            lists the other collections in its place, theirs.
    """
    available = store.namespaces()
    if namespace in available:
        return
    elsewhere = {}
    if isinstance(store, ListsCollections):
        own = store.collection_name
        elsewhere = {n: s for n, s in store.collection_names().items() if n != own}
    raise NamespaceNotFoundError(namespace, repr(store), available, elsewhere)


def _legacy_mismatch(
    store: EpisodeStore, namespace: str, embeddings: Embeddings, total: int
) -> str | None:
    """Why the ``total`` stored records were not embedded by ``embeddings``, or ``None``.

    For a namespace written before fingerprints: re-embed its latest episode's task
    and search for it. Vectors of the same model find it again (similarity ~1);
    another model's do not, and a backend refuses vectors of another dimension.
    """
    latest = store.latest(namespace, 1, total)
    text = latest[0].task.description if latest else "probe"
    vector = check_vectors(embeddings.embed_documents([text]), [f"the task {text!r}"])[0]
    try:
        hits = store.search_hits(namespace, vector, 1, None, query_text=text)
    except Exception as exc:  # each backend words a dimension mismatch its own way
        detail = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
        return (
            f"its stored vectors cannot be searched with the given model's "
            f"{len(vector)}-dimensional ones ({detail})"
        )
    if latest and hits and hits[0].similarity < SAME_MODEL_SIMILARITY:
        return (
            f"re-embedding its latest episode's task finds the nearest stored vector at "
            f"similarity {hits[0].similarity:.2f}, where the model that stored it gives ~1"
        )
    return None


def checked_embeddings(
    store: EpisodeStore,
    namespace: str,
    embeddings: Embeddings,
    on_mismatch: MismatchPolicy,
) -> tuple[Embeddings, EmbedderFingerprint | None]:
    """``embeddings`` once they match the namespace's recorded model, and their fingerprint.

    A namespace seen for the first time records the model's fingerprint. The
    fingerprint is ``None`` when the model gives no usable vector for the probe.

    Args:
        store: The namespace's store.
        namespace: The namespace.
        embeddings: The model the memory was given.
        on_mismatch: ``"raise"``, or ``"read-only"``: return embeddings that raise
            the mismatch error when used, so the namespace can still be read.

    Raises:
        EmbeddingMismatchError: The namespace was built with another model (and
            ``on_mismatch="raise"``).
    """
    given = fingerprint_embeddings(embeddings)
    if given is None:
        # No usable vector for the probe: its vectors are refused where they are used.
        return embeddings, None
    packed = store.read_state(namespace, EMBEDDER_STATE_KEY)
    stored = EmbedderFingerprint.from_json(packed) if packed is not None else None
    if stored is not None:
        reason = stored.mismatch(given)
        if reason is None:
            return embeddings, given
        recorded, builtin = stored.describe(), builtin_expression(stored)
    else:
        total = store.count(namespace)
        reason = _legacy_mismatch(store, namespace, embeddings, total) if total else None
        if reason is None:
            # A folder opened read-only records nothing: the next open checks again.
            with contextlib.suppress(StoreReadOnlyError):
                store.write_state(namespace, EMBEDDER_STATE_KEY, given.to_json())
            return embeddings, given
        # The default before 0.2 (HashingEmbeddings) may have built this legacy namespace.
        old = _legacy_mismatch(store, namespace, HashingEmbeddings(), total) is None
        recorded, builtin = _UNKNOWN_MODEL, "HashingEmbeddings()" if old else None
    error = EmbeddingMismatchError(
        namespace, recorded, given.describe(), reason, builtin, location=repr(store)
    )
    if on_mismatch == "read-only":
        return _ReadOnlyEmbeddings(error), None
    raise error


class _ReadOnlyEmbeddings(RefusingEmbeddings):
    """What a memory opened read-only embeds with: every call says it is read-only.

    Recall embeds a query and nothing else does; recording episodes and lessons embeds
    documents. So the refusal names the operation by the call.
    """

    def __init__(self, error: EmbeddingMismatchError) -> None:
        super().__init__(error)
        self.mismatch = error

    def embed_documents(self, texts: list[str]) -> list[list[float]]:
        """Refuse: recording needs the stored model."""
        raise ReadOnlyMemoryError(self.mismatch, "record")

    def embed_query(self, text: str) -> list[float]:
        """Refuse: recalling needs the stored model."""
        raise ReadOnlyMemoryError(self.mismatch, "recall")


def _redact(eraser: weakref.ref[Eraser], entries: Sequence[JournalEntry]) -> list[JournalEntry]:
    found = eraser()
    return found.redact_incoming(entries) if found is not None else list(entries)


@dataclass
class Services:
    """One namespace's services, wired over one context (what the façade delegates to).

    Attributes:
        context: The namespace's store, embeddings, clock and lock.
        quarantine: The quarantine and pin logs (pinned ids are never put on probation).
        journal: The credit and lesson logs, over one read of the journal.
        runs: The credit loop.
        lessons: The lessons.
        recall: Search and ranking.
        summary: The per-category summary.
        window: The short-term window.
        writer: The write path.
        eraser: Erasure and retention.
        replay: The replay prompt, over recall, runs and the summary.
    """

    context: NamespaceContext
    quarantine: Quarantine
    journal: Journal
    runs: Runs
    lessons: Lessons
    recall: Recall
    summary: Summary
    window: ShortTermWindow
    writer: EpisodeWriter
    eraser: Eraser
    replay: Replays


def open_services(
    context: NamespaceContext,
    *,
    short_term_limit: int,
    open_run_ttl: float | None,
    half_life: float,
    calibration: Calibration,
    background: Sequence[str],
    fingerprint: EmbedderFingerprint | None,
    owner: object,
    holdout: float = 0.0,
    rng: np.random.Generator | None = None,
    retention: Retention | None = None,
    shared: bool = False,
    infer_categories: bool = True,
) -> Services:
    """Open every service of ``context``'s namespace: logs read once, stale runs closed.

    Args:
        context: The namespace (embeddings already checked).
        short_term_limit: Size of the short-term window.
        open_run_ttl: Seconds a run may stay open; ``None``: never closed.
        half_life: How fast credit evidence is forgotten, in seconds.
        calibration: The relevance test's calibration for the embedder.
        background: The texts the relevance test compares a task against.
        fingerprint: The embedder's fingerprint (keys the background's vectors).
        owner: The object whose garbage collection saves the summary.
        holdout: The fraction of runs shown no memory, by chance.
        rng: Draws the holdout runs; a fresh unseeded generator when ``None``.
        retention: The retention policy, or ``None``.
        shared: Several principals record into the namespace (see
            `sharing`).
        infer_categories: An episode recorded without a category gets the one its
            task's text says.
    """
    store, namespace = context.store, context.namespace
    journal = Journal(context, half_life, PRINCIPAL_RUNS if shared else None)
    if shared:
        journal.credit.own_episodes = functools.partial(recorded_by, store, namespace)

    # Each re-read at every call: a change replaces the dict (or the book).
    def lesson_ids() -> Collection[str]:
        return journal.lessons.book.lessons.keys()

    quarantine = Quarantine(context, lesson_ids)
    hidden, pins = quarantine.quarantine_log, quarantine.pin_log

    def active() -> dict[str, QuarantineEvent]:
        return hidden.active

    def pinned() -> Collection[str]:
        return pins.active.keys()

    runs = Runs(context, journal, pinned, open_run_ttl, holdout, rng, shared=shared)
    relevance = RelevanceTest(context.embeddings, calibration, background, fingerprint)
    lessons = Lessons(
        context, journal.lessons, journal.credit, active, relevance, runs.on_probation
    )
    recall = Recall(
        context, active, journal.credit, lessons, relevance, runs.on_probation, runs.rng, shared
    )
    if not isinstance(context.embeddings, RefusingEmbeddings):
        runs.expire()
    summary = Summary.open(store, namespace)
    finalize_elsewhere(owner, summary.save_quietly)
    window = ShortTermWindow.read(store, namespace, short_term_limit, summary.next_seq)
    eraser = Eraser(context, journal, quarantine, summary, window, retention)
    # The journal's merge redacts through the eraser, which is built over the journal:
    # a weak reference, so no cycle keeps the store (and its folder lock) alive.
    journal.redact = functools.partial(_redact, weakref.ref(eraser))
    categorize = recall.with_categories if infer_categories else None
    writer = EpisodeWriter(context, summary, window, runs, eraser, categorize)
    replay = Replays(recall, runs, summary)
    return Services(
        context, quarantine, journal, runs, lessons, recall, summary, window, writer, eraser, replay
    )
