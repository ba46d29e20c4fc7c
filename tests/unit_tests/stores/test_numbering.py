"""``RecordNumbers``: a collection's record numbers, taken before a write, never twice."""

from __future__ import annotations

from langchain_episodic.stores._numbering import RecordNumbers


def test_numbers_count_on_from_the_last_given_or_from_the_count_when_ahead() -> None:
    numbers = RecordNumbers()
    assert numbers.take(0, 3) == [0, 1, 2]
    assert numbers.take(0, 2) == [3, 4]  # a second handle's memory said 0: counts on
    assert numbers.take(9, 1) == [9]  # another writer's records: its count is ahead


def test_the_last_numbers_given_back_are_simply_not_given() -> None:
    numbers = RecordNumbers()
    numbers.take(0, 2)
    batch = numbers.take(0, 3)
    numbers.give_back(batch[1:])  # wrote its first record only
    assert numbers.take(0, 1) == [3]


def test_numbers_given_back_under_later_ones_are_taken_first() -> None:
    numbers = RecordNumbers()
    failed, written = numbers.take(0, 2), numbers.take(0, 1)
    numbers.give_back(failed)
    assert written == [2]
    assert numbers.take(0, 3) == [0, 1, 3]  # the gap first, then on from the last


def test_a_batch_failing_after_a_later_one_also_failed_leaves_no_gap() -> None:
    numbers = RecordNumbers()
    first, second = numbers.take(0, 2), numbers.take(0, 2)
    numbers.give_back(first)  # under the second's: kept for the next batch
    numbers.give_back(second)  # the last given: and with it, the first's
    assert numbers.take(0, 1) == [0]
    assert numbers.take(0, 4) == [1, 2, 3, 4]
