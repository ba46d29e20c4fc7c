"""EpisodicChainMemory: the replay prompt as a classic-chain ``BaseMemory``.

Classic chains (``langchain_classic``: ``LLMChain`` and every ``Chain`` with a
``memory=``) call ``load_memory_variables`` before each run and ``save_context``
after it. This module plugs `EpisodicMemory` into that
protocol: before a run the chain receives the replay prompt for its task; after a
run nothing is recorded, because a chain's output carries no test feedback. Record
the run once its tests have been run, with
`EpisodicChainMemory.record_outcome`.

Needs the ``classic`` extra: ``pip install "langchain-episodic[classic]"``.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping
from typing import Any

from pydantic import Field, PrivateAttr
from typing_extensions import Unpack  # typing has it from 3.11 only

from langchain_episodic._async import async_twin, in_executor
from langchain_episodic._extras import missing_extra

try:
    from langchain_classic.base_memory import BaseMemory
except ImportError as error:
    raise missing_extra("EpisodicChainMemory", "classic") from error

from langchain_episodic._fields import RecallOptionsFields
from langchain_episodic._run import RUN_ID_KEY, given_text
from langchain_episodic.errors import EpisodicValueError
from langchain_episodic.memory import EpisodicMemory
from langchain_episodic.model.episode import Episode, EpisodeSource, TaskDescription
from langchain_episodic.model.feedback import EpisodeOptions, episode_from_tests
from langchain_episodic.pipeline import build_replay
from langchain_episodic.prompting.episodes import DEFAULT_MAX_TOKENS, approximate_token_count
from langchain_episodic.runnable import task_from_input

__all__ = ["EpisodicChainMemory"]

# Inputs a classic chain passes that never hold the task ("stop" as in langchain_classic).
_NOT_TASK_KEYS = frozenset({"stop", RUN_ID_KEY})
# Runs whose prompt was loaded and whose outcome is not recorded yet, per task: bounded,
# so a chain whose outcomes are never recorded does not grow without end.
_MAX_PENDING_RUNS = 1024
_DEFAULT_INPUT_KEY = "input"


class EpisodicChainMemory(BaseMemory, RecallOptionsFields):
    r"""Past episodes as a classic chain's memory: the replay prompt under one key.

    Before each run, `load_memory_variables` recalls the ``top_k`` episodes
    most worth replaying for the chain's task and returns the replay prompt (see
    `build_replay(...).text`) under `memory_key`.

    After each run, `save_context` records **nothing**: the chain's output is a
    candidate solution, not feedback. An episode needs a reward and an outcome, and
    inventing them (say, "the model answered, so it succeeded") would teach the memory
    that every answer works. Run the tests on the output, then call
    `record_outcome` with their counts: it builds the episode with
    `episode_from_tests` (reward = pass rate) and records it.

    The episodes a loaded prompt shows are noted for the credit loop under the run
    named by a ``run_id`` chain input (else a new run per task), and
    `record_outcome` credits the run's reward to them
    (`credit`).

    `clear` deletes nothing: episodes are immutable, and this memory keeps no
    state between runs of its own. To start afresh, use a new ``namespace`` of
    `EpisodicMemory`.

    Setup:
        ```bash
        pip install "langchain-episodic[classic]"
        ```

    Instantiate:
        >>> from langchain_episodic import EpisodicMemory
        >>> from langchain_episodic.integrations.classic import EpisodicChainMemory
        >>> chain_memory = EpisodicChainMemory(memory=EpisodicMemory(), top_k=2)
        >>> chain_memory.memory_variables
        ['experience']

    Record an outcome (after the tests ran):
        >>> episode = chain_memory.record_outcome(
        ...     {"input": "Implement a login form"},
        ...     {"text": "def login(email, password): ..."},
        ...     tests_passed=9,
        ...     tests_total=10,
        ...     message="empty password accepted",
        ...     strategy_used="iterative",
        ... )
        >>> episode.outcome.value, episode.feedback.reward
        ('partial', 0.9)

    Load the replay prompt:
        >>> passed = chain_memory.record_outcome(
        ...     {"input": "Implement a login form with validation"},
        ...     {"text": "def login(email, password): validate(email)"},
        ...     tests_passed=10,
        ...     tests_total=10,
        ... )
        >>> prompt = chain_memory.load_memory_variables({"input": "Implement a signup form"})
        >>> print("\n".join(prompt["experience"].splitlines()[1:5]))
        <experience index="1" outcome="success">
        Task: Implement a login form with validation
        <solution>
        def login(email, password): validate(email)

    In a chain:
        ```python
        from langchain_classic.chains import LLMChain
        from langchain_core.prompts import PromptTemplate

        prompt = PromptTemplate.from_template("{experience}\n\nNew task: {input}")
        chain = LLMChain(llm=llm, prompt=prompt, memory=chain_memory)
        result = chain.invoke({"input": "Implement a signup form"})
        passed, total = run_tests(result["text"])
        chain_memory.record_outcome(result, result["text"], passed, total)
        ```

    Async:
        ```python
        variables = await chain_memory.aload_memory_variables({"input": "Add OAuth"})
        await chain_memory.arecord_outcome(inputs, outputs, passed, total)
        ```

    The task is read from the chain input named `input_key`; with no
    ``input_key``, from the only input, or from ``"input"`` when there are several.
    Its value may be a string, a `TaskDescription` (whose
    category and complexity are then kept) or a dict of ``TaskDescription`` fields.
    """

    memory: EpisodicMemory = Field(exclude=True)
    """Where episodes are recalled from and recorded to."""
    memory_key: str = Field(default="experience", min_length=1)
    """The one key this memory adds to the chain's inputs: the replay prompt."""
    input_key: str | None = None
    """Chain input holding the task; ``None``: the only input, else ``"input"``."""
    output_key: str | None = None
    """Chain output holding the solution, for `record_outcome`; ``None``: the only one."""
    max_tokens: int | None = Field(default=DEFAULT_MAX_TOKENS, ge=1)
    """Token budget of the replay prompt:
    `DEFAULT_MAX_TOKENS` by default, ``None``
    for no budget."""
    token_counter: Callable[[str], int] = Field(default=approximate_token_count, exclude=True)
    """Counts tokens for ``max_tokens``, e.g. ``llm.get_num_tokens``."""
    include_strategy: bool = False
    """Append a line naming the strategy chosen from the replayed episodes."""
    renderer: Any = Field(default="auto", exclude=True)
    """How episodes become text (`renderers`):
    ``"auto"`` (default), ``"compact"``, ``"detailed"``, or your own."""
    _pending_runs: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def top_k(self) -> int:
        """How many past episodes the prompt replays (``options.top_k``)."""
        return self.options.top_k

    @property
    def memory_variables(self) -> list[str]:
        """The keys `load_memory_variables` returns: ``[memory_key]``."""
        return [self.memory_key]

    # ------------------------------------------------------------------ load

    def _task(self, inputs: Mapping[str, Any]) -> TaskDescription:
        if not isinstance(inputs, Mapping):
            msg = f"inputs={inputs!r} is invalid: must be a dict of chain inputs"
            raise EpisodicValueError(msg)
        keys = sorted(map(str, inputs))
        if self.input_key is not None:
            if self.input_key not in inputs:
                msg = f"input_key={self.input_key!r} is not among the chain inputs {keys}"
                raise EpisodicValueError(msg)
            return task_from_input(inputs, self.input_key)
        candidates = [key for key in keys if key != self.memory_key and key not in _NOT_TASK_KEYS]
        if len(candidates) == 1:
            return task_from_input(inputs, candidates[0])
        if _DEFAULT_INPUT_KEY in candidates:
            return task_from_input(inputs, _DEFAULT_INPUT_KEY)
        if not candidates:
            msg = f"the chain inputs {keys} hold no task: pass the task as 'input'"
        else:
            msg = (
                f"cannot tell which chain input holds the task among {candidates}: "
                "set EpisodicChainMemory(input_key=...) or name it 'input'"
            )
        raise EpisodicValueError(msg)

    def load_memory_variables(self, inputs: dict[str, Any]) -> dict[str, str]:
        """The replay prompt for the chain's task, under `memory_key`.

        Args:
            inputs: The chain's inputs; the task is read as the class docstring says.

        Returns:
            ``{memory_key: replay_prompt}``.

        Raises:
            EpisodicValueError: No input, or more than one, could hold the task, or it
                holds no usable task.
        """
        task = self._task(inputs)
        replay = build_replay(
            self.memory,
            task,
            self.options,
            run_id=self._open_run(inputs, task),
            max_tokens=self.max_tokens,
            token_counter=self.token_counter,
            include_strategy=self.include_strategy,
            renderer=self.renderer,
        )
        return {self.memory_key: replay.text}

    async def aload_memory_variables(self, inputs: dict[str, Any]) -> dict[str, str]:
        """Async twin of `load_memory_variables`."""
        return await in_executor(self.load_memory_variables, inputs)

    def _open_run(self, inputs: Mapping[str, Any], task: TaskDescription) -> str:
        """The run a loaded prompt is for: the ``run_id`` input, else a new one per task."""
        given = given_text(inputs.get(RUN_ID_KEY))
        if given is not None:
            return given
        run_id = uuid.uuid4().hex
        self._pending_runs.pop(task.description, None)
        self._pending_runs[task.description] = run_id
        while len(self._pending_runs) > _MAX_PENDING_RUNS:
            self._pending_runs.pop(next(iter(self._pending_runs)))
        return run_id

    # ------------------------------------------------------------------ save

    def save_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Record nothing: a chain's output carries no test feedback.

        The classic ``Chain`` calls this after every run with the run's inputs and
        outputs. An `Episode` needs a reward and an
        outcome that only the tests can give, so no episode is built here. Call
        `record_outcome` once the tests have run.
        """

    async def asave_context(self, inputs: dict[str, Any], outputs: dict[str, str]) -> None:
        """Record nothing, like `save_context`."""

    def clear(self) -> None:
        """Delete nothing: episodes are immutable and this memory keeps no per-run state.

        To start with an empty memory, use another ``namespace`` of
        `EpisodicMemory`.
        """

    async def aclear(self) -> None:
        """Delete nothing, like `clear`."""

    # ------------------------------------------------------------------ record

    def _solution(self, outputs: Mapping[str, Any] | str) -> str:
        if isinstance(outputs, str):
            return outputs
        if not isinstance(outputs, Mapping):
            msg = f"outputs={outputs!r} is invalid: must be a dict of chain outputs or a str"
            raise EpisodicValueError(msg)
        keys = sorted(map(str, outputs))
        if self.output_key is not None:
            key = self.output_key
            if key not in outputs:
                msg = f"output_key={key!r} is not among the chain outputs {keys}"
                raise EpisodicValueError(msg)
        elif len(keys) == 1:
            key = keys[0]
        else:
            msg = (
                f"cannot tell which chain output holds the solution among {keys}: "
                "set EpisodicChainMemory(output_key=...) or pass the solution as a str"
            )
            raise EpisodicValueError(msg)
        solution = outputs[key]
        if not isinstance(solution, str):
            msg = f"outputs[{key!r}]={solution!r} is invalid: the solution must be a str"
            raise EpisodicValueError(msg)
        return solution

    def record_outcome(
        self,
        inputs: Mapping[str, Any],
        outputs: Mapping[str, Any] | str,
        tests_passed: int,
        tests_total: int,
        message: str = "",
        **options: Unpack[EpisodeOptions],
    ) -> Episode:
        """Record a finished run as an episode, with the feedback of its tests.

        The reward is the pass rate and the outcome follows
        `feedback_from_tests`: success when every test
        passed, partial from half, failure below half or when no test ran.

        Examples:
            ```python
            result = chain.invoke({"input": "Implement a signup form"})
            passed, total = run_tests(result["text"])
            chain_memory.record_outcome(result, result["text"], passed, total)
            ```

        Args:
            inputs: The chain's inputs; the task is read as in `load_memory_variables`.
            outputs: The chain's outputs (the solution under `output_key`, or the
                only output) or the solution itself as a str.
            tests_passed: Tests that passed.
            tests_total: Tests that ran.
            message: What the tests said, e.g. the first failing assertion.
            **options: Keyword-only, as for `episode_from_tests`
                (`EpisodeOptions`):
                ``strategy_used``, ``iterations``, ``episode_id``, ``success_at``,
                ``partial_at``, and ``timestamp``, when the run finished, in seconds:
                now by the memory's clock (``memory.now()``) when ``None``. Pass a
                fixed ``timestamp`` when a script with a fixed ``episode_id`` may run
                again: a later "now" makes a different episode, which the memory
                refuses.

        Returns:
            The episode, as stored. Recording an identical episode again is a no-op.

        Raises:
            EpisodicValueError: The task or the solution cannot be read, or a count
                or threshold is invalid.
            EpisodeConflictError: ``episode_id`` already holds a different episode.
            TypeError: An unknown keyword argument.
        """
        # Refused before the run is closed, as Python refuses it for a named parameter.
        for name in sorted(options.keys() - EpisodeOptions.__optional_keys__):
            msg = (
                f"EpisodicChainMemory.record_outcome() got an unexpected keyword argument {name!r}"
            )
            raise TypeError(msg)
        task = self._task(inputs)
        pending = self._pending_runs.pop(task.description, None)
        given = given_text(inputs.get(RUN_ID_KEY))
        if options.get("timestamp") is None:
            # The memory's clock, so recency is measured on the same time line as recall.
            options["timestamp"] = self.memory.now()
        episode = episode_from_tests(
            task,
            self._solution(outputs),
            tests_passed,
            tests_total,
            message,
            **options,
            # Only a run id the caller gave is stable enough to become part of the
            # (immutable) episode: a re-run with a fixed episode_id must match it.
            source=EpisodeSource("EpisodicChainMemory", given, namespace=self.memory.namespace),
        )
        self.memory.record(episode)  # credits the run when the source names it
        if pending is not None and given is None:
            self.memory.runs.close(pending, episode.feedback.reward, by="EpisodicChainMemory")
        # As stored: with the category the memory inferred for a task that named none.
        return self.memory.get_episodes(episode.episode_id).get(episode.episode_id, episode)

    arecord_outcome = async_twin(record_outcome)
