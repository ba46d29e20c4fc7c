"""LangChain integrations of the memory, each in its own module, none loaded eagerly.

* :mod:`~langchain_episodic.integrations.retriever`: :class:`EpisodicRetriever`, a
  ``BaseRetriever``.
* :mod:`~langchain_episodic.integrations.runnable`: ``create_replay_runnable``, an
  LCEL ``Runnable`` from task to replay prompt.
* :mod:`~langchain_episodic.integrations.tools`: ``create_recall_tool``, a tool the
  agent calls itself.
* :mod:`~langchain_episodic.integrations.middleware`: ``EpisodicMemoryMiddleware`` for
  ``create_agent`` (the ``agents`` extra).
* :mod:`~langchain_episodic.integrations.classic`: ``EpisodicChainMemory`` for classic
  chains (the ``classic`` extra).

All of them build their prompt with :func:`langchain_episodic.build_replay` and take
their recall options as :class:`langchain_episodic.RecallOptions`.
"""
