"""``memory.forgetting``: whole-namespace erasure, retention, and the erasures' receipts."""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from langchain_episodic._async import async_twin
from langchain_episodic._validation import as_ids
from langchain_episodic.model.erasure import ForgetReceipt
from langchain_episodic.scoring.retention import PrunePlan, Retention

if TYPE_CHECKING:
    from langchain_episodic.service.opening import Services

__all__ = ["MemoryForgetting"]


class MemoryForgetting:
    """Forgetting beyond ``memory.forget(ids)``: a namespace, a policy, the receipts.

    Examples:
        >>> from langchain_episodic import EpisodicMemory
        >>> from langchain_episodic.scoring.retention import Retention
        >>> memory = EpisodicMemory()
        >>> plan, receipt = memory.forgetting.prune(Retention(max_episodes=100), dry_run=True)
        >>> plan.episode_ids, receipt, memory.forgetting.receipts()
        ((), None, ())
    """

    def __init__(self, services: Services) -> None:
        self._s = services

    def __repr__(self) -> str:
        return f"<forgetting of namespace {self._s.context.namespace!r}>"

    @property
    def retention(self) -> Retention | None:
        """The retention policy `prune` applies (``None``: everything is kept)."""
        return self._s.eraser.retention

    def forget_all(
        self, *, reason: str, by: str | None = None, dry_run: bool = False
    ) -> ForgetReceipt:
        """Erase this whole namespace (one user's memory); a receipt of what went.

        Every episode, lesson, injection, outcome, quarantine and pin event goes; the
        tombstones, the receipts and the embedding model's fingerprint stay, and the
        memory stays usable. Other namespaces are untouched.

        Raises:
            EpisodicValueError: ``reason`` is empty.
            StoreConfigurationError: The store cannot delete.
        """
        return self._s.eraser.forget_all(reason, by, dry_run=dry_run)

    def prune(
        self,
        retention: Retention | None = None,
        *,
        current_time: float | None = None,
        by: str | None = None,
        dry_run: bool = False,
    ) -> tuple[PrunePlan, ForgetReceipt | None]:
        """Apply a retention policy (the memory's when ``None``): the plan and its receipt.

        Expired episodes go, then, beyond ``max_episodes``, the least valuable ones
        (never helpful, then low utility, then old); pinned and quarantined ones stay
        (listed in ``plan.protected``). The receipt is ``None`` when nothing goes.

        Raises:
            EpisodicValueError: No policy is given or set.
        """
        return self._s.eraser.prune(retention, now=current_time, by=by, dry_run=dry_run)

    def receipts(self) -> tuple[ForgetReceipt, ...]:
        """The receipt of every finished erasure in this namespace, oldest first."""
        return self._s.eraser.receipts()

    def forgotten(self, episode_ids: str | Iterable[str]) -> dict[str, tuple[str, float]]:
        """The ids among ``episode_ids`` an erasure removed, each with ``(erasure_id, at)``."""
        return self._s.eraser.forgotten(as_ids(episode_ids))

    def unfinished(self) -> list[str]:
        """Erasures begun and never finished (a killed process): run ``forget`` again."""
        return self._s.eraser.unfinished()

    def compact(self) -> str:
        """Scrub what erasures left in the store's files now; what the store guarantees.

        An embedded Chroma folder is scrubbed once per batch of erasures (and on
        close), as a scrub rewrites the whole database: a receipt with
        ``scrub_pending`` says the erased bytes are still in its files. ``compact``
        scrubs now, in time proportional to the folder's size.

        Raises:
            StoreConfigurationError: The store cannot delete.
        """
        return self._s.eraser.compact()

    aforget_all, aprune, areceipts = async_twin(forget_all), async_twin(prune), async_twin(receipts)
    acompact = async_twin(compact)
