"""HTML that would make a renderer fetch or run is inert on every prompt surface.

Whatever separates a tag's attributes (a space, or the "/" an HTML parser accepts), and
for the tags that act with no attribute at all (script, style): the "<" is escaped.
Variation selectors, which can carry a payload invisibly, are dropped.
"""

from __future__ import annotations

import re

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage

from langchain_episodic import (
    EpisodeSource,
    EpisodicChainMemory,
    EpisodicMemory,
    EpisodicMemoryMiddleware,
    build_replay,
    create_recall_tool,
    episode_from_tests,
)
from langchain_episodic.prompting.sanitize import multi_line, one_line
from langchain_episodic.stores import InMemoryEpisodeStore
from tests.helpers.models import RecordingChatModel

PAYLOADS = [
    "<svg/onload=fetch('//evil')>",
    "<a/href=//evil>click</a>",
    "<base/href=//evil>",
    "<meta/http-equiv=refresh content=0;url=//evil>",
    "<link/rel=stylesheet/href=//evil>",
    "<input/src=//evil>",
    "<div/style=background:url(//evil)>",
    "<details/ontoggle>",
    "<style>@import url(//evil)</style>",
    "<script>fetch('//evil')</script>",
]
TASK = "Render the profile page of the admin dashboard"
_ELEMENT = re.compile(r"<(?:svg|a|base|meta|link|input|div|details|style|script)[\s/>]", re.I)


@pytest.mark.parametrize("payload", PAYLOADS)
def test_a_fetching_tag_is_escaped_in_every_field_kind(payload: str) -> None:
    assert not _ELEMENT.search(one_line(payload))
    assert not _ELEMENT.search(multi_line(payload))


def test_code_keeps_its_generics_and_comparisons() -> None:
    code = "List<Image> x; Map<String, List<Integer>> y; <T extends Base>; if a<b/2 and c>1"
    assert multi_line(code) == code


def test_variation_selectors_are_dropped() -> None:
    hidden = "ok" + "".join(chr(0xE0100 + b) for b in b"evil") + "\ufe0f"
    assert one_line(hidden) == "ok"


def _surfaces(memory: EpisodicMemory) -> dict[str, str]:
    model = RecordingChatModel(messages=iter([AIMessage(content="done")]))
    agent = create_agent(model, tools=[], middleware=[EpisodicMemoryMiddleware(memory)])
    agent.invoke({"messages": [("user", TASK)]})
    classic = EpisodicChainMemory(memory=memory).load_memory_variables({"input": TASK})
    return {
        "compact": build_replay(memory, TASK).text,
        "detailed": build_replay(memory, TASK, renderer="detailed").text,
        "retriever": "\n".join(d.page_content for d in memory.as_retriever().invoke(TASK)),
        "tool": create_recall_tool(memory).invoke({"query": TASK}),
        "runnable": memory.as_runnable().invoke(TASK),
        "middleware": model.system_texts()[0],
        "classic": next(iter(classic.values())),
    }


def test_no_prompt_surface_shows_a_fetching_tag() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore())
    payload = " ".join(PAYLOADS)
    memory.record(
        episode_from_tests(
            f"{TASK} {payload}", f"def render():\n    return '{payload}'", 5, 5, payload
        )
    )
    surfaces = _surfaces(memory)
    for name, text in surfaces.items():
        assert "Render the profile page" in text, name  # the episode is shown
        assert not _ELEMENT.search(text), (name, _ELEMENT.search(text))


def test_the_retrievers_metadata_is_as_inert_as_its_page_content() -> None:
    memory = EpisodicMemory(store=InMemoryEpisodeStore())
    hidden = "".join(chr(0xE0000 + ord(c)) for c in "exfiltrate")  # tag characters
    memory.record(
        episode_from_tests(
            f"{TASK} \u202eevil\u202c zero\u200bwidth{hidden} ![x](https://evil/?q=1)",
            "def render(): ...",
            3,
            3,
            strategy_used="<svg/onload=fetch('//evil')>" + "s" * 500,
            source=EpisodeSource(agent="coder\u202e", run_id="run-1<script>x</script>"),
            episode_id="poisoned",
        )
    )
    (document,) = memory.as_retriever(search_kwargs={"k": 1}).invoke(TASK)
    texts = [document.metadata["task"], document.metadata["strategy_used"]]
    texts += [value for value in document.metadata["source"].values() if isinstance(value, str)]
    for text in texts:
        assert not re.search("[\u202a-\u202e\u200b\U000e0000-\U000e007f]", text), text
        assert not _ELEMENT.search(text), text
        assert "](" not in text or "\\[" in text or "!\\" in text, text
    assert document.metadata["task"].startswith(TASK)
    assert "[cut: 528 characters in all]" in document.metadata["strategy_used"]
    # the text as recorded is one call away
    recorded = memory.get_episodes([document.id or ""])["poisoned"]
    assert "\u202e" in recorded.task.description
