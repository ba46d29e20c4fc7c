"""EpisodicChainMemory: a langchain_classic BaseMemory over a real in-process Chroma."""

from __future__ import annotations

import importlib
import sys
from typing import Any

import pytest
from langchain_classic.base_memory import BaseMemory
from langchain_classic.chains import LLMChain
from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.language_models.fake import FakeListLLM
from langchain_core.messages import AIMessage
from langchain_core.prompts import ChatPromptTemplate, PromptTemplate
from langchain_core.runnables import RunnableLambda, RunnablePassthrough
from pydantic import Field, ValidationError

from langchain_episodic import (
    EpisodeConflictError,
    EpisodicMemory,
    EpisodicValueError,
    Feedback,
    OutcomeStatus,
    TaskCategory,
    TaskDescription,
    build_replay,
)
from langchain_episodic.integrations.classic import EpisodicChainMemory
from langchain_episodic.prompting.compact import COMPACT_NOTICE, CompactRenderer
from langchain_episodic.prompting.episodes import (
    DEFAULT_MAX_TOKENS,
    NO_EXPERIENCE,
    approximate_token_count,
)
from tests.helpers.models import RecordingChatModel
from tests.unit_tests.factories import make_episode

NOW = 1_780_000_000.0
HOUR = 3600.0

# LLMChain is deprecated in langchain-classic (it warns on construction); it is still the
# classic chain users plug a BaseMemory into, so these tests silence exactly that warning.
IGNORE_LLMCHAIN_DEPRECATION = pytest.mark.filterwarnings(
    "ignore:The class `LLMChain` was deprecated:DeprecationWarning"
)


class RecordingLLM(FakeListLLM):
    """A fake completion model that keeps every prompt it is given."""

    prompts: list[str] = Field(default_factory=list)

    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        self.prompts.append(prompt)
        return super()._call(prompt, stop, run_manager, **kwargs)

    async def _acall(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        self.prompts.append(prompt)
        return await super()._acall(prompt, stop, run_manager, **kwargs)


def new_memory() -> EpisodicMemory:
    return EpisodicMemory(clock=lambda: NOW)


# Overrides conftest's: holds episodes (see the docstring), clock at NOW.
@pytest.fixture
def memory() -> EpisodicMemory:
    """A memory holding one login episode and two unrelated ones."""
    memory = new_memory()
    memory.record_many(
        [
            make_episode(
                episode_id="login",
                description="Implement a login form with email validation",
                solution="def login(email, password): validate(email)",
                message="empty password was accepted",
                strategy="iterative",
                timestamp=NOW - HOUR,
            ),
            make_episode(
                episode_id="csv",
                description="Write unit tests for the CSV parser",
                category=TaskCategory.TESTING,
                solution="def test_quoted_fields(): ...",
                strategy="defensive",
                timestamp=NOW - 2 * HOUR,
            ),
            make_episode(
                episode_id="crash",
                description="Debug the crash in the payment webhook handler",
                category=TaskCategory.DEBUGGING,
                outcome=OutcomeStatus.FAILURE,
                reward=0.1,
                solution="retry()",
                strategy="exploratory",
                timestamp=NOW - 3 * HOUR,
            ),
        ]
    )
    return memory


# ------------------------------------------------------------------ memory_variables


def test_is_a_classic_base_memory_with_one_configurable_key(memory: EpisodicMemory) -> None:
    default = EpisodicChainMemory(memory=memory)
    custom = EpisodicChainMemory(memory=memory, memory_key="past")
    assert isinstance(default, BaseMemory)
    assert default.memory_variables == ["experience"]
    assert custom.memory_variables == ["past"]
    assert list(custom.load_memory_variables({"input": "Implement a login form"})) == ["past"]


def test_fields_are_validated(memory: EpisodicMemory) -> None:
    with pytest.raises(ValidationError, match="top_k"):
        EpisodicChainMemory(memory=memory, top_k=0)
    with pytest.raises(ValidationError, match="max_tokens"):
        EpisodicChainMemory(memory=memory, max_tokens=0)
    with pytest.raises(ValidationError, match="memory_key"):
        EpisodicChainMemory(memory=memory, memory_key="")
    with pytest.raises(ValidationError, match="memory"):
        EpisodicChainMemory(memory="not a memory")  # type: ignore[arg-type]


# ------------------------------------------------------------------ load_memory_variables


def test_load_replays_the_relevant_past_episode(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory, top_k=1)
    text = chain_memory.load_memory_variables({"input": "Implement a login form"})["experience"]
    assert text.startswith(COMPACT_NOTICE + "\n")
    assert '<experience index="1" outcome="success">' in text
    assert "Task: Implement a login form with email validation\n<solution>" in text
    assert "def login(email, password): validate(email)" in text
    assert "CSV parser" not in text
    assert "payment webhook" not in text
    assert text == build_replay(memory, "Implement a login form", top_k=1).text
    detailed = EpisodicChainMemory(memory=memory, top_k=1, renderer="detailed")
    text = detailed.load_memory_variables({"input": "Implement a login form"})["experience"]
    assert text.startswith("Task: Implement a login form\n")
    assert "Relevant experiences (1):" in text
    assert "<feedback>empty password was accepted</feedback>" in text


def test_load_replays_top_k_episodes_best_first(memory: EpisodicMemory) -> None:
    query = {"input": "Implement a login form"}
    # The article's ranking replays the top 3 whatever their relevance, best first...
    article = EpisodicChainMemory(memory=memory, top_k=3, ranking="article")
    text = article.load_memory_variables(query)["experience"]
    assert text.index("email validation") < text.index("CSV parser")
    assert text.index("email validation") < text.index("payment webhook")
    # ...the default only the episodes about the task.
    relevant = EpisodicChainMemory(memory=memory, top_k=3).load_memory_variables(query)
    expected = memory.recall("Implement a login form", top_k=3)
    assert relevant["experience"].count("<experience") == len(expected)
    assert "email validation" in relevant["experience"]
    assert "CSV parser" not in relevant["experience"]


def test_load_on_an_empty_memory_gives_nothing_or_says_there_is_no_experience() -> None:
    text = EpisodicChainMemory(memory=new_memory()).load_memory_variables({"input": "Anything"})
    assert text == {"experience": ""}
    detailed = EpisodicChainMemory(memory=new_memory(), renderer="detailed")
    text = detailed.load_memory_variables({"input": "Anything"})
    assert text == {"experience": f"Task: Anything\n{NO_EXPERIENCE}"}


def test_recall_options_reach_recall(memory: EpisodicMemory) -> None:
    query = {"input": "Implement a login form"}
    debugging = EpisodicChainMemory(memory=memory, category="debugging", ranking="article")
    text = debugging.load_memory_variables(query)["experience"]
    # The only debugging episode is about a payment webhook: replayed, but not as relevant.
    assert "Recalled but not relevant (1):" in text
    assert "payment webhook" in text
    assert "email validation" not in text

    failures = EpisodicChainMemory(memory=memory, outcome=OutcomeStatus.FAILURE, ranking="article")
    assert "Past task: Debug the crash" in failures.load_memory_variables(query)["experience"]

    floor = EpisodicChainMemory(memory=memory, min_similarity=0.99)
    assert floor.load_memory_variables(query)["experience"] == ""


def test_max_tokens_bounds_the_prompt() -> None:
    memory = new_memory()
    memory.record_many(
        make_episode(
            episode_id=f"long-{i}",
            description=f"Implement a login form variant {i}",
            solution="x = 1\n" * 200,
            timestamp=NOW - i,
        )
        for i in range(3)
    )
    unlimited = EpisodicChainMemory(memory=memory, max_tokens=None).load_memory_variables(
        {"input": "login form"}
    )
    budgeted = EpisodicChainMemory(memory=memory, max_tokens=300).load_memory_variables(
        {"input": "login form"}
    )
    assert approximate_token_count(unlimited["experience"]) > 300
    assert approximate_token_count(budgeted["experience"]) <= 300
    assert budgeted["experience"].count("<experience") == 3


def test_the_prompt_has_a_default_budget() -> None:
    memory = new_memory()
    memory.record(
        make_episode(
            description="Implement a login form", timestamp=NOW, solution="x = 1\n" * 200_000
        )
    )
    inputs = {"input": "Implement a login form"}
    chain_memory = EpisodicChainMemory(memory=memory)
    assert chain_memory.max_tokens == DEFAULT_MAX_TOKENS
    text = chain_memory.load_memory_variables(inputs)["experience"]
    assert "\n\u2026 [truncated]\n</solution>" in text
    assert approximate_token_count(text) <= DEFAULT_MAX_TOKENS
    unlimited = EpisodicChainMemory(memory=memory, max_tokens=None).load_memory_variables(inputs)
    assert len(unlimited["experience"]) > 1_200_000


def test_include_strategy_appends_the_selected_strategy(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory, include_strategy=True)
    plain = EpisodicChainMemory(memory=memory)
    inputs = {"input": "Implement a login form with email validation"}
    text = chain_memory.load_memory_variables(inputs)["experience"]
    assert text.startswith(plain.load_memory_variables(inputs)["experience"] + "\n\n")
    assert text.endswith("Strategy: iterative - Start simple, extend incrementally.")
    assert "Strategy: iterative -" not in plain.load_memory_variables(inputs)["experience"]


async def test_aload_memory_variables_matches_the_sync_one(memory: EpisodicMemory) -> None:
    for options in ({}, {"top_k": 1}, {"include_strategy": True}, {"max_tokens": 250}):
        chain_memory = EpisodicChainMemory(memory=memory, **options)
        inputs = {"input": "Implement a login form"}
        loaded = await chain_memory.aload_memory_variables(inputs)
        assert loaded == chain_memory.load_memory_variables(inputs)
        assert "email validation" in loaded["experience"]


# ------------------------------------------------------------------ input keys


def test_the_single_input_holds_the_task_whatever_its_name(memory: EpisodicMemory) -> None:
    # The detailed renderer's first line is the task recalled for.
    chain_memory = EpisodicChainMemory(memory=memory, renderer="detailed")
    text = chain_memory.load_memory_variables({"question": "Implement a login form"})
    assert text["experience"].startswith("Task: Implement a login form\n")


def test_input_is_the_default_among_several_inputs(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory, renderer="detailed")
    inputs = {"language": "python", "input": "Debug the webhook crash", "stop": ["\n"]}
    assert chain_memory.load_memory_variables(inputs)["experience"].startswith(
        "Task: Debug the webhook crash\n"
    )


def test_the_memory_key_and_stop_are_not_task_inputs(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory, renderer="detailed")
    inputs = {"experience": "stale", "stop": ["\n"], "ask": "Write tests for the CSV parser"}
    assert chain_memory.load_memory_variables(inputs)["experience"].startswith(
        "Task: Write tests for the CSV parser\n"
    )


def test_explicit_input_key_picks_the_task(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory, input_key="task", ranking="article")
    inputs = {"input": "ignored text", "task": "Write tests for the CSV parser"}
    text = chain_memory.load_memory_variables(inputs)["experience"]
    assert text.startswith("Task: Write tests for the CSV parser\n")
    assert text.index("CSV parser", 40) < text.index("email validation")


def test_a_task_description_or_dict_keeps_its_category(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory, renderer="detailed")
    task = TaskDescription("Fix the webhook crash", TaskCategory.DEBUGGING, 0.8)
    for value in (task, task.to_dict()):
        text = chain_memory.load_memory_variables({"input": value})["experience"]
        assert text.startswith("Task: Fix the webhook crash\nCategory: debugging\n")


def test_ambiguous_inputs_are_refused_with_a_clear_error(memory: EpisodicMemory) -> None:
    chain_memory = EpisodicChainMemory(memory=memory)
    with pytest.raises(EpisodicValueError, match=r"\['query', 'question'\].*input_key"):
        chain_memory.load_memory_variables({"question": "a", "query": "b"})


def test_missing_inputs_are_refused_with_a_clear_error(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match=r"input_key='task' is not among .*\['input'\]"):
        EpisodicChainMemory(memory=memory, input_key="task").load_memory_variables(
            {"input": "Implement a login form"}
        )
    with pytest.raises(EpisodicValueError, match="hold no task"):
        EpisodicChainMemory(memory=memory).load_memory_variables({"stop": ["\n"]})
    # as_task refuses a blank task, naming the chain input that holds it.
    with pytest.raises(
        EpisodicValueError, match=r"input\['input'\]='  ' is invalid: must be a non-empty string"
    ):
        EpisodicChainMemory(memory=memory).load_memory_variables({"input": "  "})
    with pytest.raises(EpisodicValueError, match=r"input\['input'\]=42 is invalid: expected a str"):
        EpisodicChainMemory(memory=memory).load_memory_variables({"input": 42})


async def test_async_load_refuses_the_same_inputs(memory: EpisodicMemory) -> None:
    with pytest.raises(EpisodicValueError, match="input_key"):
        await EpisodicChainMemory(memory=memory).aload_memory_variables({"a": "x", "b": "y"})


# ------------------------------------------------------------------ save_context / clear


async def test_save_context_and_clear_leave_the_episodes_alone(memory: EpisodicMemory) -> None:
    before = list(memory.episodes())
    short_term = memory.short_term
    chain_memory = EpisodicChainMemory(memory=memory)
    inputs = {"input": "Implement a signup form"}
    outputs = {"text": "def signup(): ..."}
    chain_memory.save_context(inputs, outputs)
    await chain_memory.asave_context(inputs, outputs)
    chain_memory.clear()
    await chain_memory.aclear()
    assert len(memory) == 3
    assert list(memory.episodes()) == before
    assert memory.short_term == short_term
    text = chain_memory.load_memory_variables(inputs)["experience"]
    assert "signup" not in text.split("\n", 1)[1]


# ------------------------------------------------------------------ record_outcome


def test_record_outcome_records_the_tests_feedback() -> None:
    memory = new_memory()
    chain_memory = EpisodicChainMemory(memory=memory)
    task = TaskDescription("Implement a signup form", TaskCategory.CODE_GENERATION, 0.4)
    episode = chain_memory.record_outcome(
        {"input": task},
        {"text": "def signup(email): ..."},
        tests_passed=7,
        tests_total=10,
        message="3 edge cases fail",
        strategy_used="defensive",
        iterations=2,
        episode_id="signup-1",
    )
    assert episode.feedback == Feedback(
        reward=0.7, message="3 edge cases fail", tests_passed=7, tests_total=10
    )
    assert episode.outcome is OutcomeStatus.PARTIAL
    assert episode.task == task
    assert episode.solution == "def signup(email): ..."
    assert episode.strategy_used == "defensive"
    assert episode.iterations == 2
    assert episode.timestamp == NOW  # the memory's clock
    assert memory.store.get(memory.namespace, ["signup-1"]) == {"signup-1": episode}
    assert memory.short_term == (episode,)


@pytest.mark.parametrize(
    ("passed", "total", "outcome", "reward"),
    [
        (5, 5, OutcomeStatus.SUCCESS, 1.0),
        (1, 4, OutcomeStatus.FAILURE, 0.25),
        (0, 0, OutcomeStatus.FAILURE, 0.0),
    ],
)
def test_record_outcome_follows_the_feedback_rule(
    passed: int, total: int, outcome: OutcomeStatus, reward: float
) -> None:
    memory = new_memory()
    episode = EpisodicChainMemory(memory=memory).record_outcome(
        {"input": "Implement a signup form"}, "def signup(): ...", passed, total
    )
    assert (episode.outcome, episode.feedback.reward) == (outcome, reward)
    assert list(memory.episodes()) == [episode]


def test_record_outcome_thresholds_and_timestamp_are_passed_on() -> None:
    memory = new_memory()
    episode = EpisodicChainMemory(memory=memory).record_outcome(
        {"input": "Implement a signup form"},
        "def signup(): ...",
        9,
        10,
        success_at=0.9,
        timestamp=NOW - 5.0,
    )
    assert episode.outcome is OutcomeStatus.SUCCESS
    assert episode.timestamp == NOW - 5.0


def test_record_outcome_reads_the_solution_from_the_outputs() -> None:
    memory = new_memory()
    inputs = {"input": "Implement a signup form"}
    chain_memory = EpisodicChainMemory(memory=memory, output_key="code")
    episode = chain_memory.record_outcome(inputs, {"code": "def f(): ...", "notes": "n"}, 1, 1)
    assert episode.solution == "def f(): ..."
    with pytest.raises(EpisodicValueError, match=r"output_key='code' is not among .*\['text'\]"):
        chain_memory.record_outcome(inputs, {"text": "x"}, 1, 1)
    with pytest.raises(EpisodicValueError, match=r"among \['notes', 'text'\].*output_key"):
        EpisodicChainMemory(memory=memory).record_outcome(inputs, {"text": "x", "notes": "n"}, 1, 1)
    with pytest.raises(EpisodicValueError, match="solution must be a str"):
        EpisodicChainMemory(memory=memory).record_outcome(inputs, {"text": 3}, 1, 1)
    with pytest.raises(EpisodicValueError, match=r"cannot tell which chain input"):
        EpisodicChainMemory(memory=memory).record_outcome({"a": "x", "b": "y"}, "s", 1, 1)
    assert len(memory) == 1


def test_record_outcome_refuses_an_unknown_keyword_before_anything_happens() -> None:
    memory = new_memory()
    chain_memory = EpisodicChainMemory(memory=memory)
    inputs = {"input": "Implement a signup form"}
    with pytest.raises(TypeError, match="unexpected keyword argument 'colour'"):
        chain_memory.record_outcome(inputs, "s", 1, 1, colour="red")  # type: ignore[call-arg]
    # source is episode_from_tests' own: the chain memory sets it from the run id.
    with pytest.raises(TypeError, match="unexpected keyword argument 'source'"):
        chain_memory.record_outcome(inputs, "s", 1, 1, source=None)  # type: ignore[call-arg]
    assert len(memory) == 0


def test_record_outcome_keeps_episodes_immutable() -> None:
    memory = new_memory()
    chain_memory = EpisodicChainMemory(memory=memory)
    inputs = {"input": "Implement a signup form"}
    first = chain_memory.record_outcome(inputs, "v1", 1, 2, episode_id="same")
    again = chain_memory.record_outcome(inputs, "v1", 1, 2, episode_id="same")
    assert again == first
    assert len(memory) == 1
    with pytest.raises(EpisodeConflictError):
        chain_memory.record_outcome(inputs, "v2", 2, 2, episode_id="same")
    assert list(memory.episodes()) == [first]


def test_record_outcome_dates_by_the_memory_clock_and_says_how_to_re_run() -> None:
    clock = [NOW]
    memory = EpisodicMemory(clock=lambda: clock[0])
    chain_memory = EpisodicChainMemory(memory=memory)
    inputs = {"input": "Implement a signup form"}
    first = chain_memory.record_outcome(inputs, "v1", 1, 2, episode_id="run-1")
    assert first.timestamp == NOW
    clock[0] = NOW + HOUR  # the script runs again an hour later
    with pytest.raises(EpisodeConflictError) as caught:
        chain_memory.record_outcome(inputs, "v1", 1, 2, episode_id="run-1")
    assert "timestamp 1780000000.0 (stored) vs 1780003600.0 (new)" in str(caught.value)
    assert "fixed timestamp=" in str(caught.value)
    again = chain_memory.record_outcome(inputs, "v1", 1, 2, episode_id="run-1", timestamp=NOW)
    assert again == first
    assert list(memory.episodes()) == [first]
    with pytest.raises(EpisodicValueError, match=r"Episode\.timestamp=.*milliseconds"):
        chain_memory.record_outcome(inputs, "v2", 1, 2, timestamp=NOW * 1000)
    assert len(memory) == 1


async def test_arecord_outcome_records_like_the_sync_one() -> None:
    memory = new_memory()
    chain_memory = EpisodicChainMemory(memory=memory)
    episode = await chain_memory.arecord_outcome(
        {"input": "Implement a signup form"},
        {"text": "def signup(): ..."},
        3,
        4,
        "one fails",
        strategy_used="iterative",
        episode_id="a-1",
    )
    assert episode.feedback == Feedback(
        reward=0.75, message="one fails", tests_passed=3, tests_total=4
    )
    assert episode.outcome is OutcomeStatus.PARTIAL
    assert list(memory.episodes()) == [episode]


# ------------------------------------------------------------------ in a chain


@IGNORE_LLMCHAIN_DEPRECATION
def test_llm_chain_sends_the_replay_prompt_to_the_model(memory: EpisodicMemory) -> None:
    llm = RecordingLLM(responses=["def signup(email, password): validate(email)"])
    chain_memory = EpisodicChainMemory(memory=memory, top_k=2)
    prompt = PromptTemplate.from_template("{experience}\n\nNew task: {input}\nCode:")
    chain = LLMChain(llm=llm, prompt=prompt, memory=chain_memory)

    result = chain.invoke({"input": "Implement a signup form with email validation"})

    assert len(llm.prompts) == 1
    received = llm.prompts[0]
    assert received.startswith(COMPACT_NOTICE + "\n")
    assert "Task: Implement a login form with email validation\n<solution>" in received
    assert "def login(email, password): validate(email)" in received
    assert received.endswith("\n\nNew task: Implement a signup form with email validation\nCode:")
    assert result["text"] == "def signup(email, password): validate(email)"
    assert result["experience"] in received
    assert len(memory) == 3  # save_context ran after the chain and recorded nothing

    # The learning loop: test the output, record the outcome, and the next run sees it.
    chain_memory.record_outcome(result, result["text"], 4, 4, "all pass", episode_id="signup")
    chain.invoke({"input": "Implement a signup form with email validation"})
    # The signup episode that passed is shown as a solution that worked.
    assert "\nTask: Implement a signup form with email validation\n<solution>\n" in llm.prompts[1]
    assert "def signup(email, password): validate(email)" in llm.prompts[1]


@IGNORE_LLMCHAIN_DEPRECATION
async def test_llm_chain_ainvoke_sends_the_replay_prompt_to_the_model(
    memory: EpisodicMemory,
) -> None:
    llm = RecordingLLM(responses=["ok"])
    chain_memory = EpisodicChainMemory(memory=memory, top_k=1, memory_key="past")
    prompt = PromptTemplate.from_template("{past}\n---\n{task}")
    chain = LLMChain(llm=llm, prompt=prompt, memory=chain_memory)

    await chain.ainvoke({"task": "Write unit tests for the CSV parser"})

    assert len(llm.prompts) == 1
    assert "Task: Write unit tests for the CSV parser" in llm.prompts[0]
    assert "email validation" not in llm.prompts[0]
    assert llm.prompts[0].endswith("\n---\nWrite unit tests for the CSV parser")
    assert len(memory) == 3


async def test_lcel_chain_with_a_chat_model_receives_the_replay_prompt(
    memory: EpisodicMemory,
) -> None:
    # The one episode about the task failed: shown as its feedback when asked to.
    chain_memory = EpisodicChainMemory(memory=memory, top_k=1, renderer=CompactRenderer("feedback"))
    model = RecordingChatModel(messages=iter([AIMessage("one"), AIMessage("two")]))
    prompt = ChatPromptTemplate.from_messages(
        [("system", "You are a coding agent.\n\n{experience}"), ("human", "{input}")]
    )
    chain = (
        RunnablePassthrough.assign(
            experience=RunnableLambda(
                lambda inputs: chain_memory.load_memory_variables(inputs)["experience"],
                afunc=lambda inputs: _aexperience(chain_memory, inputs),
            )
        )
        | prompt
        | model
    )

    sync_reply = chain.invoke({"input": "Debug the crash in the webhook handler"})
    async_reply = await chain.ainvoke({"input": "Debug the crash in the webhook handler"})

    assert (sync_reply.content, async_reply.content) == ("one", "two")
    assert len(model.received) == 2
    for system, human in model.received:
        assert system.type == "system"
        assert system.text.startswith("You are a coding agent.\n\n" + COMPACT_NOTICE)
        assert "Task: Debug the crash in the payment webhook handler" in system.text
        assert 'outcome="failure"' in system.text  # its feedback, not its code
        assert human.text == "Debug the crash in the webhook handler"


async def _aexperience(chain_memory: EpisodicChainMemory, inputs: dict[str, Any]) -> str:
    return (await chain_memory.aload_memory_variables(inputs))["experience"]


# ------------------------------------------------------------------ optional dependency


def test_missing_langchain_classic_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain_classic", None)
    monkeypatch.setitem(sys.modules, "langchain_classic.base_memory", None)
    monkeypatch.delitem(sys.modules, "langchain_episodic.integrations.classic")
    with pytest.raises(ImportError, match=r'pip install "langchain-episodic\[classic\]"'):
        importlib.import_module("langchain_episodic.integrations.classic")
