"""LangChain integrations of the memory, each in its own module, none loaded eagerly.

* `tools`: ``create_recall_tool``, a tool the
  agent calls itself.
* `middleware`: ``EpisodicMemoryMiddleware`` for
  ``create_agent`` (the ``agents`` extra).
* `classic`: ``EpisodicChainMemory`` for classic
  chains (the ``classic`` extra).

The memory's own faces sit beside it, as ``memory.as_retriever()`` and
``memory.as_runnable()`` build them: `langchain_episodic.retriever`
(`EpisodicRetriever`, a ``BaseRetriever``) and `langchain_episodic.runnable`
(``create_replay_runnable``, an LCEL ``Runnable`` from task to replay prompt).

All of them build their prompt with `langchain_episodic.build_replay` and take
their recall options as `langchain_episodic.RecallOptions`.
"""
