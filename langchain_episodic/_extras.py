"""Optional integrations and the extra that brings each: one message when one is missing.

A core install (``pip install langchain-episodic``) has the memory, the retriever, the
runnable and the recall tool. The rest needs an extra; importing it without the extra
raises ``ImportError`` naming the extra and how to install it, from PyPI or a checkout.

Examples:
    >>> message = str(missing_extra("EpisodicMemoryMiddleware", "agents"))
    >>> message.startswith('EpisodicMemoryMiddleware needs the "agents" extra')
    True
    >>> 'pip install "langchain-episodic[agents]"' in message
    True
"""

from __future__ import annotations

from importlib.util import find_spec

__all__ = ["EXTRA_OF", "available", "missing_extra"]

EXTRA_OF: dict[str, tuple[str, tuple[str, ...]]] = {
    "EpisodicMemoryMiddleware": ("agents", ("langchain", "langgraph")),
    "LangGraphEpisodeStore": ("agents", ("langgraph",)),
    "EpisodicChainMemory": ("classic", ("langchain_classic",)),
}
"""Public name -> (the extra that brings it, the top-level modules it imports)."""


def available(name: str) -> bool:
    """Whether ``name``'s extra is installed (its modules can be found; none is imported)."""
    _, modules = EXTRA_OF.get(name, ("", ()))
    return all(find_spec(module) is not None for module in modules)


def missing_extra(feature: str, extra: str) -> ImportError:
    """The ``ImportError`` for ``feature`` used without ``extra`` installed."""
    msg = (
        f'{feature} needs the "{extra}" extra: pip install "langchain-episodic[{extra}]" '
        f'(from a checkout: pip install -e ".[{extra}]")'
    )
    return ImportError(msg)
