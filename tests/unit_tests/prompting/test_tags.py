"""The prompt's tag list is every tag the renderers write, and the sanitiser guards it."""

from __future__ import annotations

import re

import pytest

from langchain_episodic.model.episode import OutcomeStatus
from langchain_episodic.model.lesson import Lesson, LessonSource
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import (
    approximate_token_count,
    build_replay_context,
    format_replay_prompt,
    render_episode,
)
from langchain_episodic.prompting.lessons import render_lessons
from langchain_episodic.prompting.sanitize import multi_line, one_line
from langchain_episodic.prompting.tags import PROMPT_TAGS, close_tag, open_tag
from langchain_episodic.scoring.priority import PrioritizedResult
from tests.unit_tests.factories import make_episode


def test_tags_are_spelled_with_their_attributes_in_order() -> None:
    assert open_tag("lesson") == "<lesson>"
    assert open_tag("experience", index=2, relevant="no") == '<experience index="2" relevant="no">'
    assert close_tag("feedback") == "</feedback>"


def test_the_tag_list_is_every_tag_the_renderers_write() -> None:
    # Every renderer, every failure display: the tags they write are the list, no more.
    episodes = [
        PrioritizedResult(make_episode(episode_id="e1"), 0.9, 0.9),
        PrioritizedResult(
            make_episode(episode_id="e2", outcome=OutcomeStatus.FAILURE, tests_passed=0), 0.9, 0.8
        ),
    ]
    lesson = Lesson.create(
        title="t", applies_when="a", do="d", avoid="x", sources=(LessonSource("e1"),), created_at=0
    )
    texts = [
        format_replay_prompt(build_replay_context(episodes), "task", max_tokens=None),
        render_episode(episodes[0].episode, 1, relevant=False),
        render_lessons([lesson]),
        *(
            CompactRenderer(failures)(
                episodes, "task", max_tokens=None, token_counter=approximate_token_count
            ).text
            for failures in ("fixed", "feedback", "code")
        ),
    ]
    written = {name for text in texts for name in re.findall(r"</?([a-z_]+)[ >]", text)}
    assert written == set(PROMPT_TAGS)


@pytest.mark.parametrize("name", PROMPT_TAGS)
def test_stored_text_never_shows_a_tag_of_the_list(name: str) -> None:
    for tag in (open_tag(name), open_tag(name, index=1), close_tag(name)):
        assert one_line(tag) == "&lt;" + tag[1:]
        assert multi_line(tag.upper()) == "&lt;" + tag[1:].upper()
