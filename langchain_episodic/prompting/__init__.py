"""Prompt text: stored text made inert, episodes and lessons rendered within a budget.

* `sanitize`: the one sanitiser for all stored text.
* `episodes`: the replay prompt (article, section 8).
* `lessons`: the prompt's "Lessons" section.

Pure: strings in, strings out.
"""
