"""Pure maths of recall: decay, priority, relevance, ranking, credit, strategy, skills.

* :mod:`~langchain_episodic.scoring.decay`: the one half-life decay and Beta mean.
* :mod:`~langchain_episodic.scoring.priority`: the article's priority and its weights.
* :mod:`~langchain_episodic.scoring.relevance`: "about this task?", then value.
* :mod:`~langchain_episodic.scoring.ranking`: candidates ranked and explained, lessons too.
* :mod:`~langchain_episodic.scoring.options`: :class:`RecallOptions`.
* :mod:`~langchain_episodic.scoring.credit`: injections, outcomes, utility.
* :mod:`~langchain_episodic.scoring.strategy`: strategy rules from evidence.
* :mod:`~langchain_episodic.scoring.skills`: skill profiles and learning curves.

Names of the former ``langchain_episodic.scoring`` module still resolve here, with a
:class:`DeprecationWarning`, for one release: import them from
:mod:`~langchain_episodic.scoring.priority`.
"""

from __future__ import annotations

import warnings
from importlib import import_module
from typing import Any

_PRIORITY = "langchain_episodic.scoring.priority"


def __getattr__(name: str) -> Any:
    module = import_module(_PRIORITY)
    if name.startswith("__") or not hasattr(module, name):
        msg = f"module 'langchain_episodic.scoring' has no attribute {name!r}"
        raise AttributeError(msg)
    warnings.warn(
        f"langchain_episodic.scoring.{name} moved to {_PRIORITY}.{name}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(module, name)
