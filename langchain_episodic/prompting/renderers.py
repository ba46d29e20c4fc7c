"""Which renderer turns recalled episodes into replay text: by name, or your own.

* ``"compact"`` (`CompactRenderer`): what
  worked first, a failed attempt as one feedback line without its code, nothing when
  nothing is relevant. For models that copy what they are shown (small and completion
  models), and the default of the default ranking.
* ``"detailed"`` (`DetailedRenderer`):
  the article's prompt, every field of every episode. For models that read; the default
  of ``ranking="article"``, so the article's prompt stays exactly reproducible.
* ``"feedback"`` and ``"ranked"``: the compact renderer's other presentation policies
  (`presentation`): what worked first then each
  unfixed failure's feedback line; the best-ranked relevant episodes whatever their
  outcome. For models that read a failure's feedback.
* ``"auto"`` (the default everywhere): ``"detailed"`` for ``ranking="article"``,
  ``"compact"`` otherwise; when the caller's filter asks for failed or partial attempts
  only (``outcome="failure"``), the compact renderer with ``failures="feedback"``: they
  were asked for, so they are shown (as their feedback, without code). A replay
  (`build_replay`) with ``"auto"`` uses the presentation
  policy the memory learned from its credited runs instead of ``"compact"``; naming a
  policy pins it.
* Any callable of the `ReplayRenderer` shape.

Examples:
    >>> resolve_renderer("auto", "article")
    DetailedRenderer()
    >>> resolve_renderer("auto", "relevance")
    CompactRenderer(failures='fixed', near_misses=None, ranked=False)
    >>> resolve_renderer("auto", "relevance", asks_for_failures=True)
    CompactRenderer(failures='feedback', near_misses=None, ranked=False)
    >>> presentation_of(resolve_renderer("ranked"))
    'ranked'
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Literal

from langchain_episodic.model.episode import TaskDescription
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.prompting.episodes import (
    DetailedRenderer,
    RenderedReplay,
    ReplayRenderer,
)
from langchain_episodic.scoring.presentation import (
    DEFAULT_PRESENTATION,
    Presentation,
    check_presentation,
)
from langchain_episodic.scoring.priority import PrioritizedResult

__all__ = [
    "RENDERER_NAMES",
    "RendererArg",
    "presentation_of",
    "presentation_renderer",
    "presentations_differ",
    "render",
    "resolve_renderer",
]

RendererName = Literal["auto", "compact", "feedback", "ranked", "detailed"]
RendererArg = RendererName | ReplayRenderer
"""A renderer's name, or a renderer."""

RENDERER_NAMES = ("auto", "compact", "feedback", "ranked", "detailed")

_POLICY_RENDERERS: dict[Presentation, CompactRenderer] = {
    "compact": CompactRenderer(),
    "feedback": CompactRenderer("feedback"),
    "ranked": CompactRenderer("feedback", ranked=True),
}


def presentation_renderer(policy: Presentation | str) -> CompactRenderer:
    """The renderer of a presentation policy (``"compact"``, ``"feedback"``, ``"ranked"``).

    Raises:
        EpisodicValueError: ``policy`` names no policy.

    Examples:
        >>> presentation_renderer("feedback")
        CompactRenderer(failures='feedback', near_misses=None, ranked=False)
    """
    return _POLICY_RENDERERS[check_presentation(policy)]


def presentations_differ(
    results: Sequence[PrioritizedResult], top_k: int, policy: Presentation
) -> bool:
    """Whether ``policy`` shows other episodes of ``results`` than another policy would.

    Against the default (``"compact"``) for another policy; for the default, against
    any other. A run where they show the same is no evidence for one over another:
    its outcome is not counted for the policy it used.

    Examples:
        >>> presentations_differ([], 3, "ranked")
        False
    """

    def picked(name: Presentation) -> frozenset[str]:
        chosen = _POLICY_RENDERERS[name].select(results, top_k)
        return frozenset(r.episode.episode_id for r in chosen)

    mine = picked(policy)
    others = [name for name in _POLICY_RENDERERS if name != policy]
    if policy != DEFAULT_PRESENTATION:  # another policy is compared with the default only
        others = [DEFAULT_PRESENTATION]
    return any(picked(name) != mine for name in others)


def presentation_of(renderer: object) -> Presentation | None:
    """The presentation policy ``renderer`` shows with, or ``None`` (not a policy's).

    Near misses (the recall tool's marking) do not change the policy.

    Examples:
        >>> presentation_of(CompactRenderer(near_misses=0.8))
        'compact'
        >>> presentation_of(CompactRenderer("code")) is None
        True
    """
    if not isinstance(renderer, CompactRenderer):
        return None
    plain = dataclasses.replace(renderer, near_misses=None)
    return next((name for name, known in _POLICY_RENDERERS.items() if known == plain), None)


def resolve_renderer(
    renderer: RendererArg, ranking: str = "relevance", *, asks_for_failures: bool = False
) -> ReplayRenderer:
    """The renderer ``renderer`` names (``"auto"``: by ``ranking``), or ``renderer`` itself.

    ``asks_for_failures``: the recall is filtered to failed or partial attempts; ``"auto"``
    then shows them as feedback lines.

    Raises:
        TypeError: ``renderer`` is neither a known name nor callable.
    """
    if isinstance(renderer, str):
        if renderer == "auto" and ranking != "article":
            return CompactRenderer("feedback") if asks_for_failures else CompactRenderer()
        if renderer in ("auto", "detailed"):
            return DetailedRenderer()
        if renderer in _POLICY_RENDERERS:
            return presentation_renderer(renderer)
    elif callable(renderer):
        return renderer
    msg = (
        f"renderer={renderer!r} is invalid: must be one of {list(RENDERER_NAMES)} or a "
        "callable (results, task, *, max_tokens, token_counter) -> RenderedReplay | str"
    )
    raise TypeError(msg)


def render(
    renderer: ReplayRenderer,
    results: Sequence[PrioritizedResult],
    task: TaskDescription | str,
    *,
    max_tokens: int | None,
    token_counter: Callable[[str], int],
) -> RenderedReplay:
    """Call ``renderer``; a plain ``str`` it returns counts every result as shown.

    Raises:
        TypeError: The renderer returned something else.
    """
    rendered = renderer(results, task, max_tokens=max_tokens, token_counter=token_counter)
    if isinstance(rendered, RenderedReplay):
        return rendered
    if isinstance(rendered, str):
        return RenderedReplay(rendered, tuple(r.episode.episode_id for r in results))
    msg = (
        f"renderer {renderer!r} returned {type(rendered).__name__}: must be a RenderedReplay or str"
    )
    raise TypeError(msg)
