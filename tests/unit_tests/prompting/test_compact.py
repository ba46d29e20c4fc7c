"""The compact replay: what worked first, a failure only as its feedback line."""

from __future__ import annotations

from langchain_episodic import OutcomeStatus, TaskDescription
from langchain_episodic.model.episode import Episode, Feedback
from langchain_episodic.prompting.compact import CompactRenderer
from langchain_episodic.scoring.priority import PrioritizedResult

TASK = "Validate the e-mail field of the signup form"


def ranked(name: str, task: str, similarity: float, message: str = "") -> PrioritizedResult:
    worked = name.startswith("s")
    episode = Episode(
        name,
        TaskDescription(task),
        f"def {name}(): ...",
        Feedback(1.0 if worked else 0.2, message, int(worked), 1),
        OutcomeStatus.SUCCESS if worked else OutcomeStatus.FAILURE,
        timestamp=0.0,
    )
    return PrioritizedResult(episode, similarity, similarity)


RESULTS = [
    ranked("f1", "Check addresses typed into the newsletter box", 0.95, "spaces not stripped"),
    ranked("s1", "Validate the login form's e-mail", 0.9),
    ranked("s2", "Reject malformed contact addresses", 0.8),
    ranked("f2", "Validate the login form's e-mail address", 0.7, "unicode domains rejected"),
]


def ids(results: tuple[PrioritizedResult, ...]) -> list[str]:
    return [r.episode.episode_id for r in results]


def test_what_worked_comes_first_however_similar_a_failure_is() -> None:
    renderer = CompactRenderer()
    chosen = renderer.select(RESULTS, 2)
    assert ids(chosen) == ["s1", "s2"]
    rendered = renderer(chosen, TASK)
    assert rendered.shown == ("s1", "s2")
    assert "def s1" in rendered.text
    assert "spaces not stripped" not in rendered.text


def test_a_failure_is_shown_beside_its_fix_as_its_feedback_never_its_code() -> None:
    renderer = CompactRenderer()
    chosen = renderer.select(RESULTS, 4)
    assert ids(chosen) == ["s1", "s2", "f2"]  # f2's near-twin s1 fixed it; f1 has no fix
    rendered = renderer(chosen, TASK)
    assert "unicode domains rejected" in rendered.text
    assert "Fixed by: the solution of experience 1" in rendered.text
    assert "def f2" not in rendered.text
    assert "spaces not stripped" not in rendered.text


def test_feedback_mode_shows_every_failure_as_a_line_and_code_mode_its_code() -> None:
    feedback = CompactRenderer("feedback")
    text = feedback(feedback.select(RESULTS, 4), TASK).text
    assert "spaces not stripped" in text
    assert "def f1" not in text
    code = CompactRenderer("code")
    assert "def f1" in code(code.select(RESULTS, 4), TASK).text


def test_nothing_relevant_adds_nothing() -> None:
    irrelevant = [PrioritizedResult(r.episode, r.similarity, r.priority, False) for r in RESULTS]
    assert CompactRenderer()(irrelevant, TASK).text == ""
