"""The memory's jobs, one module each, over one namespace's context.

* :mod:`~langchain_episodic.service.context`: store, namespace, embeddings, clock, lock.
* :mod:`~langchain_episodic.service.opening`: the embedder fingerprint guard, namespace checks.
* :mod:`~langchain_episodic.service.writing`: validating and storing episodes.
* :mod:`~langchain_episodic.service.recall`: search, rank, explain.
* :mod:`~langchain_episodic.service.quarantine`: the quarantine log.
* :mod:`~langchain_episodic.service.journal`: one read of the journal for credit and lessons.
* :mod:`~langchain_episodic.service.credit_log`: runs, outcomes, utilities.
* :mod:`~langchain_episodic.service.lesson_log`: lessons and their vectors.
* :mod:`~langchain_episodic.service.lessons`: adding, revising, consolidating, recalling lessons.
* :mod:`~langchain_episodic.service.summary`: the per-category summary.

:class:`~langchain_episodic.EpisodicMemory` is the façade over them.
"""
