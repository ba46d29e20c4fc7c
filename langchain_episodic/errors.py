"""Every exception and warning raised by langchain-episodic, under one root.

Catch `EpisodicError` for anything the package raises on purpose. Each class
also subclasses the built-in that callers already catch, so ``except ValueError``
keeps working for bad input::

    EpisodicError
     ├── EpisodicValueError (ValueError)   bad input: names the field and the value
     │    ├── EpisodeValidationError       an Episode (or part of one) breaks a rule
     │    ├── EpisodeConflictError         another episode already holds that episode_id
     │    ├── EpisodeForgottenError        an erased episode_id, given to be stored again
     │    └── NamespaceNotFoundError       a namespace that must exist does not
     ├── StoreConfigurationError (RuntimeError)  a store cannot hold episodes as configured
     │    └── EmbeddingMismatchError       the namespace was built with another embedding model
     │         └── ReadOnlyMemoryError     a write or recall on a memory opened read-only
     │    ├── StoreDamagedError            a file of an embedded store's folder is damaged
     │    └── StoreReadOnlyError           a write to a folder that opened read-only
     ├── StoreLockedError (RuntimeError)   another process holds the embedded store's folder
     ├── MigrationError (RuntimeError)     the target lacks what the source holds
     └── MalformedRecordWarning (UserWarning)  a stored record was skipped as unreadable

The rule for bad arguments: a scalar (a number, a string, an enum value) that is out
of range or not a usable value of its kind raises `EpisodicValueError` naming
the argument and the value; an argument that must be an object of a given class (a
store, embeddings, ``ReplayWeights``, ``EpisodeFilter``, ``RecallOptions``, a
memory, a callable) and is something else raises the built-in ``TypeError``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone

__all__ = [
    "CreditError",
    "EmbeddingMismatchError",
    "EpisodeConflictError",
    "EpisodeForgottenError",
    "EpisodeValidationError",
    "EpisodicError",
    "EpisodicValueError",
    "MalformedRecordWarning",
    "MigrationError",
    "NamespaceNotFoundError",
    "ReadOnlyMemoryError",
    "StoreConfigurationError",
    "StoreDamagedError",
    "StoreLockedError",
    "StoreReadOnlyError",
    "StoreResourceError",
]


class EpisodicError(Exception):
    """The root of every exception and warning langchain-episodic raises."""


class EpisodicValueError(EpisodicError, ValueError):
    """A value given to langchain-episodic is out of range or of the wrong shape."""


class EpisodeValidationError(EpisodicValueError):
    """An episode, task or feedback breaks one of the data model's rules."""


class EpisodeConflictError(EpisodicValueError):
    """A different episode is already stored under the same ``episode_id``.

    Episodes are immutable: recording the identical episode again is a no-op, but
    recording other content under an existing id is refused and the stored episode
    is left as it was. The message names each differing field with both values.

    A missing timestamp means now, so a script that records fixed ids without a
    timestamp makes a different episode on every run: pass a fixed ``timestamp=`` to
    make such re-runs no-ops.

    Attributes:
        episode_id: The contested id.
        namespace: The namespace it is held in.
        differences: ``(field, held value, new value)`` for each differing field, as
            `Episode.differences` gives
            them; empty when not known.
        in_batch: Whether the id is held by an earlier episode of the same batch
            rather than by a stored one.
    """

    def __init__(
        self,
        episode_id: str,
        namespace: str,
        differences: Sequence[tuple[str, str, str]] = (),
        *,
        in_batch: bool = False,
    ) -> None:
        self.episode_id = episode_id
        self.namespace = namespace
        self.differences = tuple(differences)
        self.in_batch = in_batch
        held, new = ("first", "later") if in_batch else ("stored", "new")
        where = (
            f"is given twice in one batch, with different content, for namespace={namespace!r}"
            if in_batch
            else f"already holds a different episode in namespace={namespace!r}"
        )
        differing = "; ".join(
            f"{field} {a} ({held}) vs {b} ({new})" for field, a, b in self.differences
        )
        hint = ""
        if any(field == "timestamp" for field, _, _ in self.differences):
            hint = (
                "; a missing timestamp means now, so to make a re-run with fixed "
                "episode_ids a no-op pass a fixed timestamp="
            )
        super().__init__(
            f"episode_id={episode_id!r} {where}"
            + (f": {differing}" if differing else "")
            + f". Nothing of this batch was written: episodes are immutable{hint}; record "
            "a changed episode under a new episode_id"
        )


def _listed(names: Sequence[str], limit: int) -> str:
    shown = ", ".join(map(repr, names[:limit]))
    more = f", ... ({len(names) - limit} more)" if len(names) > limit else ""
    return (shown + more) or "none"


class NamespaceNotFoundError(EpisodicValueError):
    """A namespace that must exist (``create_namespace=False``) is not in the store.

    Raised before anything is written, so a mistyped ``namespace=`` or
    ``collection_name=`` does not leave a new, empty namespace behind. The message
    lists the namespaces there and, for a Chroma store, the other ``collection_name``
    values at the same path or server with their namespaces.

    Attributes:
        namespace: The namespace asked for.
        available: The namespaces the store holds, sorted.
        elsewhere: Other ``collection_name`` values, each with its namespaces.
    """

    def __init__(
        self,
        namespace: str,
        store: str,
        available: Sequence[str],
        elsewhere: Mapping[str, Sequence[str]] | None = None,
    ) -> None:
        self.namespace = namespace
        self.available = tuple(available)
        self.elsewhere = {name: tuple(spaces) for name, spaces in (elsewhere or {}).items()}
        others = "; ".join(
            f"collection_name={name!r} holds {_listed(spaces, 5)}"
            for name, spaces in list(self.elsewhere.items())[:5]
        )
        super().__init__(
            f"namespace={namespace!r} does not exist in {store} (create_namespace=False "
            f"creates nothing); namespaces there: {_listed(self.available, 20)}"
            + (f"; other collections there: {others}" if others else "")
        )


class CreditError(EpisodicValueError):
    """A run cannot be credited: no injection record names it, or its outcome is in.

    Attributes:
        run_id: The run.
        namespace: The namespace searched.
    """

    def __init__(self, run_id: str, namespace: str, reason: str) -> None:
        self.run_id = run_id
        self.namespace = namespace
        super().__init__(
            f"run_id={run_id!r} in namespace={namespace!r} {reason}; nothing was credited"
        )


class EpisodeForgottenError(EpisodicValueError):
    """An episode id that an erasure removed was given to be stored again.

    An erased episode leaves a tombstone (`langchain_episodic.model.erasure`):
    storing its id again would bring back what was erased, so it is refused.

    Attributes:
        namespace: The namespace.
        forgotten: Each refused id with ``(erasure_id, at)`` of the erasure that removed it.
    """

    def __init__(self, namespace: str, forgotten: Mapping[str, tuple[str, float]]) -> None:
        self.namespace = namespace
        self.forgotten = dict(forgotten)
        shown = ", ".join(
            f"{episode_id!r} (erasure {erasure}, {describe_moment(at)})"
            for episode_id, (erasure, at) in list(self.forgotten.items())[:5]
        )
        more = f" and {len(self.forgotten) - 5} more" if len(self.forgotten) > 5 else ""
        super().__init__(
            f"episode_ids {shown}{more} were erased from namespace={namespace!r} and are "
            "not stored again (their tombstones keep them out); nothing was written. "
            "Use new episode_ids for new episodes"
        )


def describe_moment(at: float) -> str:
    """A time as errors show it: the seconds, and the date they are.

    Examples:
        >>> describe_moment(1_700_000_000)
        'at 1700000000 (2023-11-14 22:13:20 UTC)'
    """
    try:
        moment = datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
    except (OverflowError, OSError, ValueError):
        moment = "an unknown date"
    return f"at {at:.0f} ({moment})"


class StoreConfigurationError(EpisodicError, RuntimeError):
    """A store cannot hold episodes as configured.

    For example a Chroma collection in another distance space, a vector store without
    ``get_by_ids``, or a backend whose score cannot be read as cosine similarity.
    """


class EmbeddingMismatchError(StoreConfigurationError):
    """A namespace was built with another embedding model than the one given.

    Vectors of two models are not comparable, so the memory refuses to open the
    namespace rather than mix them. It is a `StoreConfigurationError`, like a
    collection in another distance space: neither the store nor the model is wrong on
    its own, only the pair is. The message names both models and the ways on: open the
    namespace with the stored model, or re-embed it into a new namespace or collection
    with `migrate_namespace`.

    Attributes:
        namespace: The namespace opened.
        stored: The model that built it, described (or what is known of it).
        given: The model given, described.
        reason: How the two differ.
        stored_expression: Python that rebuilds the stored model, when it is one of
            the package's own (e.g. ``"HashingEmbeddings()"``, the default before 0.2).
        location: Where the namespace lives (the store, e.g. its folder), when known.
    """

    def __init__(
        self,
        namespace: str,
        stored: str,
        given: str,
        reason: str,
        stored_expression: str | None = None,
        *,
        location: str | None = None,
    ) -> None:
        self.namespace = namespace
        self.stored = stored
        self.given = given
        self.reason = reason
        self.stored_expression = stored_expression
        self.location = location
        super().__init__(self._message())

    def _message(self) -> str:
        return "\n".join(
            [
                f"namespace={self.namespace!r} was embedded with {_model_name(self.stored)}, "
                f"not with the given {_model_name(self.given)}: their vectors are not "
                "comparable.",
                *([f"  store:        {self.location}"] if self.location else []),
                f"  stored model: {self.stored}",
                f"  given model:  {self.given}",
                f"  difference:   {self.reason}",
                "Fix it in one of these ways:",
                f"  - open it with the stored model ({self._stored_argument()})",
                "  - re-embed it into a new namespace or collection: migrate_namespace(",
                f"      EpisodicMemory(store, namespace={self.namespace!r}, "
                "on_embedding_mismatch='read-only'),",
                "      EpisodicMemory(new_store_or_namespace, embeddings=<new model>))",
                "  - only read it (or migrate it): pass on_embedding_mismatch='read-only'",
            ]
        )

    def _stored_argument(self) -> str:
        return f"embeddings={self.stored_expression or '<the model that built it>'}"


class ReadOnlyMemoryError(EmbeddingMismatchError):
    """A write or a recall on a memory opened with ``on_embedding_mismatch="read-only"``.

    Such a memory reads its episodes but cannot embed: recording needs the model that
    built the namespace, and so does recalling (the query is embedded). The message
    says which operation was refused and how to open the memory writable; the
    attributes are those of the `EmbeddingMismatchError` that made it read-only
    (a subclass of it, so ``except EmbeddingMismatchError`` still catches it).

    Attributes:
        operation: What was refused, e.g. ``"record"`` or ``"recall"``.
    """

    def __init__(self, mismatch: EmbeddingMismatchError, operation: str) -> None:
        self.operation = operation
        super().__init__(
            mismatch.namespace,
            mismatch.stored,
            mismatch.given,
            mismatch.reason,
            mismatch.stored_expression,
            location=mismatch.location,
        )

    def _message(self) -> str:
        return (
            f"cannot {self.operation}: this memory is open read-only because "
            f"namespace={self.namespace!r} was embedded with {_model_name(self.stored)}, "
            f"not with the given {_model_name(self.given)}.\n"
            f"To {self.operation} here, open it writable with the stored model "
            f"({self._stored_argument()}), or re-embed it into a new namespace with "
            "migrate_namespace; reading works as it is."
        )


def _model_name(description: str) -> str:
    """The class name a model description starts with (the description if none).

    Examples:
        >>> _model_name("langchain_episodic.embeddings.hashing.HashingEmbeddings (3 dimensions)")
        'HashingEmbeddings'
        >>> _model_name("a model whose fingerprint was never recorded")
        'a model whose fingerprint was never recorded'
    """
    first = description.split(" ", 1)[0]
    if "." in first and first.replace(".", "").replace("_", "").isalnum():
        return first.rsplit(".", 1)[1]
    return description


class StoreResourceError(StoreConfigurationError):
    """The process ran out of a resource while using a store; nothing is damaged.

    Chroma reports running out of file descriptors as a failure to open its database;
    that is not damage, and restoring a backup would only bring back what was erased
    since. A `StoreConfigurationError`, like damage, so ``except
    StoreConfigurationError`` still catches it.

    Attributes:
        path: The store's folder.
        resource: What ran out, in words (``"file descriptors"``).
        in_use: How many were in use when it was seen, if known.
        limit: The process's limit, if known.
        chroma_said: Chroma's own message.
        holder: Who ran out: ``"this process"``, or the Chroma server a store's
            client talks to (``path`` then says which).
    """

    def __init__(
        self,
        path: str,
        resource: str,
        *,
        in_use: int | None = None,
        limit: int | None = None,
        chroma_said: str | None = None,
        holder: str = "this process",
    ) -> None:
        self.path = path
        self.resource = resource
        self.in_use = in_use
        self.limit = limit
        self.chroma_said = chroma_said
        self.holder = holder
        counts = f" ({in_use} in use of a limit of {limit})" if in_use and limit else ""
        said = f" (Chroma said: {chroma_said})" if chroma_said else ""
        super().__init__(
            f"path={path!r} could not be used: {holder} ran out of {resource}{counts}"
            f"{said}. Nothing is damaged and nothing was lost. What to do: raise the limit "
            "(for file descriptors: 'ulimit -n'; for memory: give the process more, or "
            "lower max_open_namespaces), or use fewer namespaces at once in one process "
            "(each one open holds a few); then retry"
        )


class StoreDamagedError(StoreConfigurationError):
    """A file of an embedded Chroma store's folder is damaged; nothing was read from it.

    Raised when the store opens the folder (its files are checked before Chroma loads
    them: a damaged vector index can crash the process that reads it) and when Chroma
    itself fails on the folder later. A `StoreConfigurationError`, like a folder
    whose database went missing, so ``except StoreConfigurationError`` still catches it.

    Attributes:
        path: The store's folder.
        problems: One line per problem found, each naming the file (relative to
            ``path``) and what is wrong with it; empty when Chroma failed and no
            check could say which file is at fault.
        chroma_said: Chroma's own message, when Chroma reported the failure.
    """

    def __init__(
        self, path: str, problems: Sequence[str], *, chroma_said: str | None = None
    ) -> None:
        self.path = path
        self.problems = tuple(problems)
        self.chroma_said = chroma_said
        found = "; ".join(self.problems) or (
            "Chroma could not read it, and no check could say which file is at fault"
        )
        said = f" (Chroma said: {chroma_said})" if chroma_said else ""
        super().__init__(
            f"path={path!r} is damaged: {found}{said}. Nothing more was read from it. What "
            "to do: restore the folder from a backup (a copy made while no process held "
            f"it); 'langchain-episodic verify --path {path}' lists every damaged file"
        )


class StoreReadOnlyError(StoreConfigurationError):
    """A write to an embedded store whose folder could only be opened for reading.

    A folder this process cannot write (a read-only mount, or no permission, or a disk
    so full that Chroma cannot open it) opens read-only: recall, counts, export and
    verify work, and each write is refused with this error, naming the write. A
    `StoreConfigurationError`: the store cannot hold new episodes as it was opened.

    Attributes:
        path: The store's folder.
        operation: The write refused, e.g. ``"record episodes"``.
        cause: Why the folder is read-only, as the operating system said it.
    """

    def __init__(self, path: str, operation: str, cause: str) -> None:
        self.path = path
        self.operation = operation
        self.cause = cause
        remedy = (
            "free space on its disk, then open the store again"
            if cause.startswith("no space left on device")
            else "open the store on a writable folder (e.g. a copy of this one)"
        )
        super().__init__(
            f"cannot {operation}: path={path!r} is read-only ({cause}), so the store "
            "opened it for reading only (recall, counts, export and verify work). To "
            f"write, {remedy}"
        )


class StoreLockedError(EpisodicError, RuntimeError):
    """Another process holds the lock on an embedded store's folder.

    Chroma's embedded mode is not safe for writers in several processes, so one
    process at a time opens a ``ChromaEpisodeStore(path=...)``; several processes
    share a Chroma server (``chroma run``) through ``chromadb.HttpClient`` instead.

    Attributes:
        path: The store's folder.
        holder: Who holds it, as ``"pid 1234"`` (``"pid unknown"`` if unreadable).
        timeout: How many seconds this process waited.
    """

    def __init__(self, path: str, holder: str, timeout: float) -> None:
        self.path = path
        self.holder = holder
        self.timeout = timeout
        waited = f" after waiting {timeout:g} s" if timeout > 0 else ""
        super().__init__(
            f"path={path!r} is locked by another process ({holder}){waited}: an embedded "
            "Chroma store takes one process at a time. Close the other process, pass "
            "lock_timeout= to wait for it, or use a Chroma server (chroma run + "
            "chromadb.HttpClient) for several processes"
        )


class MigrationError(EpisodicError, RuntimeError):
    """The target does not hold what the source holds after a migration."""


class MalformedRecordWarning(EpisodicError, UserWarning):  # noqa: N818 - a warning
    """A stored record could not be read as an episode and was skipped.

    Attributes:
        record_id: The record's id in the store.
        reason: Why it could not be read.
    """

    def __init__(self, record_id: str, reason: str) -> None:
        self.record_id = record_id
        self.reason = reason
        super().__init__(f"skipped stored record id={record_id!r}: {reason}")
