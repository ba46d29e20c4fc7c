"""Choosing a renderer by name (``"auto"``: by the ranking) or taking a callable."""

from __future__ import annotations

import pytest

from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import DetailedRenderer, approximate_token_count
from langchain_episodic.prompting.renderers import RENDERER_NAMES, render, resolve_renderer
from langchain_episodic.scoring.priority import PrioritizedResult
from tests.unit_tests.factories import make_episode


def test_auto_is_compact_for_relevance_and_detailed_for_the_article() -> None:
    assert "auto" in RENDERER_NAMES
    assert isinstance(resolve_renderer("auto", "relevance"), CompactRenderer)
    assert isinstance(resolve_renderer("auto", "article"), DetailedRenderer)
    assert isinstance(resolve_renderer("detailed", "relevance"), DetailedRenderer)


def test_an_unknown_name_is_refused_listing_the_names() -> None:
    with pytest.raises(TypeError, match=r"renderer='fancy'.*'compact'"):
        resolve_renderer("fancy")


def test_a_plain_string_from_a_callable_counts_every_result_as_shown() -> None:
    results = (PrioritizedResult(make_episode(episode_id="a"), 0.9, 0.8),)

    def plain(*args: object, **kwargs: object) -> str:
        return "my prompt"

    assert resolve_renderer(plain) is plain  # type: ignore[comparison-overlap]
    rendered = render(
        plain,  # type: ignore[arg-type]
        results,
        "Fix the login form",
        max_tokens=None,
        token_counter=approximate_token_count,
    )
    assert rendered.text == "my prompt"
    assert rendered.shown == ("a",)


def test_a_renderer_returning_anything_else_is_a_type_error() -> None:
    def broken(*args: object, **kwargs: object) -> int:
        return 42

    with pytest.raises(TypeError, match="returned int"):
        render(
            broken,  # type: ignore[arg-type]
            (),
            "Fix the login form",
            max_tokens=None,
            token_counter=approximate_token_count,
        )
