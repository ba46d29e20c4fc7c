"""Prompt text: stored text made inert, episodes and lessons rendered within a budget.

* :mod:`~langchain_episodic.prompting.sanitize`: the one sanitiser for all stored text.
* :mod:`~langchain_episodic.prompting.episodes`: the replay prompt (article, section 8).
* :mod:`~langchain_episodic.prompting.lessons`: the prompt's "Lessons" section.

Pure: strings in, strings out.
"""
