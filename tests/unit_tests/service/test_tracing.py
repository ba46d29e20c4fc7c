"""The memory in traces: runs under the caller's run, OpenTelemetry spans, nothing stored."""

from __future__ import annotations

import asyncio
from typing import Any
from uuid import UUID

import pytest
from langchain.agents import create_agent
from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.runnables import RunnableLambda
from opentelemetry import trace as otel
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from langchain_episodic import (
    EpisodicMemory,
    EpisodicMemoryMiddleware,
    build_replay,
    episode_from_tests,
)
from langchain_episodic.service.tracing import SPAN_ATTRIBUTES, id_digest, traced
from tests.helpers.models import make_model, user

LOGIN = "Implement a login form with e-mail validation"
SECRET = "def login(form): return check_the_secret_sauce(form)"


class Capture(BaseCallbackHandler):
    """Every chain run it sees: name, parent, inputs and outputs (or the error)."""

    def __init__(self) -> None:
        self.runs: dict[UUID, dict[str, Any]] = {}

    def on_chain_start(
        self, serialized: Any, inputs: Any, *, run_id: UUID, parent_run_id: UUID | None = None,
        **kwargs: Any,
    ) -> None:  # fmt: skip
        name = kwargs.get("name") or (serialized or {}).get("name")
        self.runs[run_id] = {"name": name, "parent": parent_run_id, "inputs": inputs}

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self.runs[run_id]["outputs"] = outputs

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self.runs[run_id]["error"] = error

    def named(self, name: str) -> list[dict[str, Any]]:
        return [run for run in self.runs.values() if run["name"] == name]

    def id_of(self, name: str) -> UUID:
        return next(run_id for run_id, run in self.runs.items() if run["name"] == name)


def logins(**options: Any) -> EpisodicMemory:
    memory = EpisodicMemory(clock=lambda: 10.0, **options)
    memory.record_many(
        [
            episode_from_tests(LOGIN, SECRET, 10, 10, episode_id="login-ok", timestamp=1.0),
            episode_from_tests(
                "Implement a signup form with e-mail validation", "def signup(): pass", 1, 10,
                episode_id="login-bad", message="e-mail never checked", timestamp=2.0,
            ),
        ]
    )  # fmt: skip
    return memory


def test_a_replay_is_a_child_run_of_the_callers_with_what_was_shown_and_withheld() -> None:
    memory, capture = logins(), Capture()
    chain = RunnableLambda(lambda task: build_replay(memory, task, run_id="run-1").text)
    chain.invoke("Implement a login form", config={"callbacks": [capture], "run_name": "mine"})
    caller = capture.id_of("mine")
    (replay,) = capture.named("episodic_replay")
    (recall,) = capture.named("episodic_recall")
    assert replay["parent"] == caller
    assert recall["parent"] == capture.id_of("episodic_replay")  # the replay's own search
    out = replay["outputs"]
    assert out["shown"] == ["login-ok"]
    assert out["run_id"] == "run-1"
    assert out["holdout"] is False
    assert out["presentation"] == "compact"
    # The compact policy hides a failure nothing fixed: withheld by the policy, said so.
    (withheld,) = out["withheld"]
    assert (withheld["episode_id"], withheld["reason"]) == ("login-bad", "policy")
    assert 0.0 < withheld["similarity"] < 1.0
    assert {r["episode_id"] for r in recall["outputs"]["results"]} == {"login-ok", "login-bad"}
    assert all(isinstance(r["similarity"], float) for r in recall["outputs"]["results"])


def test_the_budget_withholds_too_and_says_so() -> None:
    memory, capture = logins(), Capture()
    chain = RunnableLambda(
        lambda task: build_replay(memory, task, renderer="ranked", max_tokens=40).text
    )
    chain.invoke("Implement a login form", config={"callbacks": [capture]})
    (replay,) = capture.named("episodic_replay")
    reasons = {w["episode_id"]: w["reason"] for w in replay["outputs"]["withheld"]}
    assert "budget" in reasons.values()
    assert set(reasons) | set(replay["outputs"]["shown"]) == {"login-ok", "login-bad"}


def test_credit_and_forget_are_runs_and_an_erasure_never_names_an_id() -> None:
    memory, capture = logins(), Capture()

    def work(task: str) -> str:
        build_replay(memory, task, run_id="run-2")
        memory.runs.credit("run-2", 1.0)
        memory.forget(["login-bad"], reason="user asked")
        return "ok"

    RunnableLambda(work).invoke("Implement a login form", config={"callbacks": [capture]})
    (credit,) = capture.named("episodic_credit")
    assert credit["outputs"]["credited"] == ["login-ok"]
    assert credit["outputs"]["reward"] == 1.0
    (forget,) = capture.named("episodic_forget")
    assert forget["outputs"]["episodes"] == 1
    assert forget["outputs"]["erased_digests"] == [id_digest("login-bad")]
    assert "login-bad" not in repr(forget)
    assert forget["inputs"] == {"namespace": "default", "count": 1, "dry_run": False}


def test_nothing_stored_is_in_a_trace_unless_asked() -> None:
    for content in (False, True):
        memory, capture = logins(trace_content=content), Capture()
        chain = RunnableLambda(lambda task, m=memory: build_replay(m, task).text)
        chain.invoke("Implement a login form", config={"callbacks": [capture]})
        seen = repr([run for run in capture.runs.values() if run["name"] != "RunnableLambda"])
        assert ("check_the_secret_sauce" in seen) is content, content
        assert (LOGIN in seen) is content, content


def test_outside_any_run_the_memory_makes_no_trace_of_its_own() -> None:
    memory = logins()
    with traced("recall", "default", {}) as trace:
        assert not trace.active  # no caller's run, no tracer provider: nothing built
    assert memory.recall("Implement a login form")  # and recall works as ever


def test_an_async_call_nests_under_the_callers_run_too() -> None:
    memory, capture = logins(), Capture()

    async def work(task: str) -> int:
        return len(await memory.arecall(task))

    asyncio.run(
        RunnableLambda(work).ainvoke("Implement a login form", config={"callbacks": [capture]})
    )
    (recall,) = capture.named("episodic_recall")
    assert recall["parent"] == next(
        run_id for run_id, run in capture.runs.items() if run["name"] != "episodic_recall"
    )


def test_an_agent_run_shows_the_memorys_replay_under_it() -> None:
    memory, capture = logins(), Capture()
    agent = create_agent(
        make_model("def login(): ..."), tools=[], middleware=[EpisodicMemoryMiddleware(memory)]
    )
    agent.invoke(user("Implement a login form"), config={"callbacks": [capture]})
    (replay,) = capture.named("episodic_replay")
    assert replay["parent"] in capture.runs  # inside the agent's trace
    assert replay["outputs"]["shown"] == ["login-ok"]
    assert [w["episode_id"] for w in replay["outputs"]["withheld"]] == ["login-bad"]


def test_with_an_opentelemetry_sdk_each_call_is_a_span(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(otel, "get_tracer_provider", lambda: provider)
    memory = logins()
    build_replay(memory, "Implement a login form", run_id="run-3")
    memory.forget("login-bad", reason="user asked")
    spans = {span.name: span for span in exporter.get_finished_spans()}
    assert set(spans) == {"episodic.replay", "episodic.recall", "episodic.forget"}
    assert spans["episodic.recall"].parent.span_id == spans["episodic.replay"].context.span_id
    replay = spans["episodic.replay"].attributes
    assert replay["episodic.shown.ids"] == ("login-ok",)
    assert replay["episodic.withheld.count"] == 1
    assert replay["episodic.run_id"] == "run-3"
    assert replay["episodic.namespace"] == "default"
    erased = spans["episodic.forget"].attributes
    assert erased["episodic.erased.digests"] == (id_digest("login-bad"),)
    assert "login-bad" not in repr(dict(erased))
    names = {key for span in spans.values() for key in span.attributes}
    assert names <= set(SPAN_ATTRIBUTES)  # one documented naming scheme


def test_an_error_ends_the_run_and_the_span_as_errors(monkeypatch: pytest.MonkeyPatch) -> None:
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    monkeypatch.setattr(otel, "get_tracer_provider", lambda: provider)
    memory, capture = logins(), Capture()

    def fails(task: str) -> None:
        memory.runs.credit("never-noted", 1.0)

    with pytest.raises(Exception, match="never-noted"):
        RunnableLambda(fails).invoke("x", config={"callbacks": [capture]})
    (credit,) = capture.named("episodic_credit")
    assert "never-noted" in str(credit["error"])
    (span,) = exporter.get_finished_spans()
    assert span.status.status_code is otel.StatusCode.ERROR
