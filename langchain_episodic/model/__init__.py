"""The data model: frozen episodes, lessons and quarantine events, with their rules.

* `episode`: `Episode` and its parts, validated.
* `filters`: `EpisodeFilter`, what a recall may keep.
* `feedback`: an episode from a test run's figures.
* `lesson`: lessons with lineage, their journal codec.
* `quarantine`: quarantine events and the active set.

Pure: no I/O, nothing of the package above `langchain_episodic.errors`.
"""
