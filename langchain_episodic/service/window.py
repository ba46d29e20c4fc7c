"""The short-term window: the last N episodes recorded, and a few spares behind them.

The window is what `short_term` shows: the
last ``maxlen`` episodes this memory recorded or found in the store when it opened.
Behind it sit the few episodes recorded just before (the *spares*, as many as the
window holds): an erasure that removes episodes of the window refills it from them,
checked by id, instead of reading the last records by number, a read whose cost grows
with the folder on Chroma (a metadata filter). Only when the spares run out (more
erasures of recent episodes than the window holds, with no record in between) is the
store read again.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Collection, Iterable

from langchain_episodic.model.episode import Episode
from langchain_episodic.stores.base import EpisodeStore

__all__ = ["ShortTermWindow"]


class ShortTermWindow(deque[Episode]):
    """The last ``maxlen`` episodes, oldest first, with up to ``maxlen`` spares behind.

    A `deque` with a ``maxlen``: an episode pushed out at the left
    by `append` or `extend` becomes the newest spare.

    Args:
        episodes: The latest episodes, oldest first; all but the last ``maxlen`` are
            kept as spares.
        maxlen: How many episodes the window shows.
    """

    def __init__(self, episodes: Iterable[Episode] = (), maxlen: int = 0) -> None:
        items = list(episodes)
        size = max(min(maxlen, len(items)), 0)
        super().__init__(items[len(items) - size :], maxlen=max(maxlen, 0))
        self.spares: deque[Episode] = deque(items[: len(items) - size], maxlen=max(maxlen, 0))

    @classmethod
    def read(cls, store: EpisodeStore, namespace: str, maxlen: int, total: int) -> ShortTermWindow:
        """The window of ``namespace`` with its spares, from its last records (of ``total``)."""
        return cls(store.latest(namespace, 2 * maxlen, total), maxlen)

    def append(self, episode: Episode) -> None:
        """Add ``episode`` at the right; the oldest, when the window is full, becomes a spare."""
        if self.maxlen and len(self) == self.maxlen:
            self.spares.append(self[0])
        super().append(episode)

    def extend(self, episodes: Iterable[Episode]) -> None:
        """`append` each of ``episodes`` in turn."""
        for episode in list(episodes):
            self.append(episode)

    def __iadd__(self, episodes: Iterable[Episode]) -> ShortTermWindow:
        self.extend(episodes)
        return self

    def clear(self) -> None:
        """Empty the window and its spares."""
        super().clear()
        self.spares.clear()

    def drop(
        self, erased: Collection[str], store: EpisodeStore, namespace: str, total: int
    ) -> None:
        """Remove the ``erased`` ids; refill the window from the spares, else the store.

        The spares taken are checked by id (another memory may have erased them); when
        one is gone or too few are left, the window and its spares are read afresh from
        the store's last records (of ``total`` numbered).
        """
        spares = [e for e in self.spares if e.episode_id not in erased]
        kept = [e for e in self if e.episode_id not in erased]
        missing = len(self) - len(kept)
        if not missing or len(self) < (self.maxlen or 0):
            # A window that was not full has nothing behind it (and no spares).
            self._take(kept, spares)
            return
        if missing <= len(spares):
            taken = spares[len(spares) - missing :]
            if len(store.get(namespace, [e.episode_id for e in taken])) == missing:
                self._take(taken + kept, spares[: len(spares) - missing])
                return
        fresh = self.read(store, namespace, self.maxlen or 0, total)
        self._take(fresh, fresh.spares)

    def _take(self, window: Iterable[Episode], spares: Iterable[Episode]) -> None:
        super().clear()
        super().extend(window)
        self.spares = deque(spares, maxlen=self.spares.maxlen)
