"""Run in a core-only install (``pip install .``, no extra): what must work, and what must
fail with an ImportError that names its extra. ``.ci/run`` runs it in its own venv.

    python3 -m venv .venv-core && .venv-core/bin/pip install . \\
        && .venv-core/bin/python tests/core_install/check_core_install.py
"""

from __future__ import annotations

import importlib.util
import pydoc
import sys
import tempfile

EXTRAS = {
    "EpisodicMemoryMiddleware": "agents",
    "EpisodicChainMemory": "classic",
}


def expect_extra(name: str, extra: str, load: object) -> None:
    try:
        load()  # type: ignore[operator]
    except ImportError as error:
        message = str(error)
        assert f'"{extra}" extra' in message, message
        assert f'pip install "langchain-episodic[{extra}]"' in message, message
        assert "from a checkout" in message, message
        print(f"ok: {name} -> {message}")
        return
    raise AssertionError(f"{name} imported without the {extra!r} extra")


def main() -> int:
    for module in ("langchain", "langgraph", "langchain_classic"):
        assert importlib.util.find_spec(module) is None, f"{module} is installed: not a core venv"
    import langchain_episodic  # noqa: PLC0415 - after checking this is a core venv

    namespace: dict[str, object] = {}
    exec("from langchain_episodic import *", namespace)
    assert "EpisodicMemory" in namespace
    assert not set(EXTRAS) & set(namespace), "import * offered a name that needs an extra"
    assert "EpisodicMemory" in pydoc.render_doc(langchain_episodic)
    print("ok: import * and help()")

    from langchain_episodic import ChromaEpisodeStore, EpisodicMemory, episode_from_tests  # noqa: PLC0415

    with tempfile.TemporaryDirectory() as folder:
        memory = EpisodicMemory(store=ChromaEpisodeStore(path=folder))
        memory.record(
            episode_from_tests("Implement a login form", "def login(): ...", 5, 5, timestamp=1.7e9)
        )
        assert memory.recall("Build a login page", top_k=1)
        documents = memory.as_retriever(search_kwargs={"k": 1}).invoke("login page")
        assert len(documents) == 1
        assert memory.as_runnable().invoke("login page").count("<experience") == 1
        memory.store.close()
    print("ok: record, recall, retriever, runnable on embedded Chroma")

    for name, extra in EXTRAS.items():
        expect_extra(name, extra, lambda name=name: getattr(langchain_episodic, name))
    expect_extra(
        "from langchain_episodic.integrations.middleware import ...",
        "agents",
        lambda: __import__("langchain_episodic.integrations.middleware"),
    )
    expect_extra(
        "LangGraphEpisodeStore",
        "agents",
        lambda: __import__("langchain_episodic.stores", fromlist=["x"]).LangGraphEpisodeStore,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
