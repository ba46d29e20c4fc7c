"""Record numbers of one Chroma collection, as this process gives them out.

A batch takes its numbers before it writes and writes without a lock, so batches from
several threads are written at once. A batch that fails gives back the numbers it did
not use: the last ones given are taken back, and any others (a later batch took
numbers since) are handed to the next batches first, so the numbers stay without a
gap. A number filled that way is lower than those of records written just before it,
and a gap stays when this process writes nothing after such a failure.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["RecordNumbers"]


class RecordNumbers:
    """The numbers given out for one collection; the caller holds a lock around each call.

    Examples:
        >>> numbers = RecordNumbers()
        >>> first, second = numbers.take(0, 2), numbers.take(0, 1)
        >>> first, second
        ([0, 1], [2])
        >>> numbers.give_back(first[1:])  # the batch wrote its first record only
        >>> numbers.take(0, 2)  # the gap is filled first
        [1, 3]
    """

    def __init__(self) -> None:
        self._next = 0
        self._returned: set[int] = set()

    def take(self, first: int, count: int) -> list[int]:
        """``count`` numbers: those given back first, then new ones from ``first`` on.

        New numbers count on from the last given when that is ahead of ``first``
        (the memory's count: another handle on the collection may have written).
        """
        reused = sorted(self._returned)[:count]
        self._returned.difference_update(reused)
        start = max(first, self._next)
        self._next = start + count - len(reused)
        return [*reused, *range(start, self._next)]

    def give_back(self, numbers: Sequence[int]) -> None:
        """Numbers taken for records that were not written."""
        self._returned.update(numbers)
        while self._next - 1 in self._returned:  # the last given: simply not given
            self._returned.remove(self._next - 1)
            self._next -= 1
