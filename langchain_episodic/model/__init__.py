"""The data model: frozen episodes, lessons and quarantine events, with their rules.

* :mod:`~langchain_episodic.model.episode`: :class:`Episode` and its parts, validated.
* :mod:`~langchain_episodic.model.filters`: :class:`EpisodeFilter`, what a recall may keep.
* :mod:`~langchain_episodic.model.feedback`: an episode from a test run's figures.
* :mod:`~langchain_episodic.model.lesson`: lessons with lineage, their journal codec.
* :mod:`~langchain_episodic.model.quarantine`: quarantine events and the active set.

Pure: no I/O, nothing of the package above :mod:`langchain_episodic.errors`.
"""
