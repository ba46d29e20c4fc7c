"""``python -m langchain_episodic``: the ``langchain-episodic`` command."""

from langchain_episodic.cli import main

if __name__ == "__main__":
    raise SystemExit(main())
