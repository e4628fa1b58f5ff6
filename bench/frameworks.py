"""ctxsieve inside the agent frameworks: the LangChain middleware on a scripted session, the retriever adapters
against the frameworks' plain pipelines, and the Claude Code hook's cost per call.

Usage: python -m bench.frameworks [--questions 60] [--calls 20]

- Middleware: a LangChain `create_agent` agent (a scripted chat model: the provider is the outside service) with
  `read_article` (a whole SQuAD article, the shared data) and 12 other tools answers SQuAD test questions, one
  tool call each; per turn, the tokens of what the model is sent (messages and tool definitions, tiktoken
  o200k_base) and the tools sent, with and without `CtxsieveMiddleware`; evidence kept: the gold answer in the
  tool message the model sees.
- Retrievers: each question's article split into its paragraphs, embedded with the default model in the
  frameworks' own in-memory indexes (LangChain's InMemoryVectorStore, LlamaIndex's VectorStoreIndex). Plain
  pipeline: the top 4 paragraphs. With ctxsieve: the top 8 cut by `CtxsieveCompressor` /
  `CtxsieveNodePostprocessor` to max_tokens 200 and 300. Evidence recall and tokens of what reaches the model.
- Hook: `ctxsieve-hook claude-code` on a Read of a ~35k-token file (a fresh file each call, the process start
  included), the same payload POSTed to the http hook (`/v1/hooks/claude-code`, another fresh file), against
  `/v1/filter` on a same-size file, p50 of each.

`--parts middleware,retrievers,hook` runs only those parts.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx

from bench.datasets import Case, found, squad_cases
from bench.loadtest import scratch_service
from bench.models import dense_model
from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client

CACHE = Path.home() / ".cache" / "ctxsieve"
TOKENS = load_tokenizer("o200k_base", CACHE / "tiktoken")
load_tokenizer("cl100k_base", CACHE / "tiktoken")  # LlamaIndex's splitter counts with it: installed offline
BIN = Path(sys.executable).parent


def middleware(url: str, cases: list[Case]) -> None:
    from langchain.agents import create_agent
    from langchain_core.language_models.chat_models import BaseChatModel
    from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langchain_core.utils.function_calling import convert_to_openai_tool

    from ctxsieve_client.langchain import CtxsieveMiddleware

    articles = {c.question: c.text for c in cases}

    @tool
    def read_article(question: str) -> str:
        """Read the whole encyclopedia article a question is about."""
        return articles[question]

    others = []
    for topic in ("weather", "stock prices", "flights", "hotels", "restaurants", "movies", "currency", "translation",
                  "calendar", "email", "maps", "news"):
        def run(query: str, _topic: str = topic) -> str:  # noqa: ARG001 - the tool's argument
            return f"{_topic}: nothing found"
        others.append(tool(topic.replace(" ", "_"), description=f"Look up {topic}.")(run))

    class Scripted(BaseChatModel):
        question: str = ""
        sent: list[tuple[int, int, str]] = []  # tokens sent, tools sent, the tool message text
        bound: list[dict[str, Any]] = []

        @property
        def _llm_type(self) -> str:
            return "scripted"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:  # noqa: ARG002 - LangChain's signature
            return self.model_copy(update={"bound": [convert_to_openai_tool(t) for t in tools]})

        def _generate(self, messages: list[BaseMessage], stop: Any = None,  # noqa: ARG002 - LangChain's
                      run_manager: Any = None, **kwargs: Any) -> ChatResult:  # noqa: ARG002
            text = "\n".join(str(m.content) for m in messages) + json.dumps(self.bound)
            seen = next((str(m.content) for m in messages if isinstance(m, ToolMessage)), "")
            self.sent.append((TOKENS.count(text), len(self.bound), seen))
            done = any(isinstance(m, ToolMessage) for m in messages)
            reply = AIMessage(content="Answered.") if done else AIMessage(content="", tool_calls=[
                {"name": "read_article", "args": {"question": self.question}, "id": "c1", "type": "tool_call"}])
            return ChatResult(generations=[ChatGeneration(message=reply)])

    client = Client(url, timeout=300)
    for label, extra in (("without the middleware", []), ("with CtxsieveMiddleware", [CtxsieveMiddleware(
            client=client, k=5)])):
        model = Scripted(sent=[])
        agent = create_agent(model, tools=[read_article, *others], middleware=extra)
        kept = 0
        for case in cases:
            model.question = case.question
            start = len(model.sent)
            agent.invoke({"messages": [("user", case.question)]})
            kept += found(case.answers, model.sent[-1][2])
            assert len(model.sent) - start == 2
        per_turn = [s[0] for s in model.sent]
        tools = [s[1] for s in model.sent]
        print(f"middleware {label}: {len(cases)} questions, 2 turns each; tokens sent per turn median "
              f"{statistics.median(per_turn):.0f} (total {sum(per_turn)}); tools sent per turn median "
              f"{statistics.median(tools):.0f}; gold answer in the tool message {kept / len(cases):.3f}", flush=True)


def retrievers(url: str, cases: list[Case], cuts: tuple[int, ...] = (200, 300)) -> None:
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.documents import Document as LCDocument
    from langchain_core.embeddings import Embeddings
    from langchain_core.vectorstores import InMemoryVectorStore
    from llama_index.core import Document as LIDocument
    from llama_index.core import VectorStoreIndex
    from llama_index.core.base.embeddings.base import BaseEmbedding

    from ctxsieve_client.langchain import CtxsieveCompressor
    from ctxsieve_client.llamaindex import CtxsieveNodePostprocessor

    model = dense_model()

    class E5(Embeddings):  # the default model, for the frameworks' own indexes
        def embed_documents(self, texts: list[str]) -> list[list[float]]:
            return model.embed_passages(texts).tolist()  # type: ignore[no-any-return]

        def embed_query(self, text: str) -> list[float]:
            return model.embed_queries([text])[0].tolist()  # type: ignore[no-any-return]

    class E5Index(BaseEmbedding):
        def _get_text_embedding(self, text: str) -> list[float]:
            return model.embed_passages([text])[0].tolist()  # type: ignore[no-any-return]

        def _get_text_embeddings(self, texts: list[str]) -> list[list[float]]:
            return model.embed_passages(texts).tolist()  # type: ignore[no-any-return]

        def _get_query_embedding(self, query: str) -> list[float]:
            return model.embed_queries([query])[0].tolist()  # type: ignore[no-any-return]

        async def _aget_query_embedding(self, query: str) -> list[float]:
            return self._get_query_embedding(query)

    client = Client(url, timeout=300)
    results: dict[str, list[tuple[bool, int]]] = {}
    stores: dict[str, Any] = {}
    for case in cases:
        paragraphs = [p for p in case.text.split("\n\n") if p.strip()]
        key = case.text[:64]
        if key not in stores:
            lc = InMemoryVectorStore(E5())
            lc.add_documents([LCDocument(page_content=p, metadata={"paragraph": i}) for i, p in enumerate(paragraphs)])
            li = VectorStoreIndex.from_documents([LIDocument(text=p) for p in paragraphs], embed_model=E5Index())
            stores[key] = (lc, li)
        lc, li = stores[key]
        plain = lc.as_retriever(search_kwargs={"k": 4}).invoke(case.question)
        li_plain = li.as_retriever(similarity_top_k=4).retrieve(case.question)
        runs = [("LangChain plain top 4", [d.page_content for d in plain]),
                ("LlamaIndex plain top 4", [n.node.get_content() for n in li_plain])]
        for cut in cuts:
            compressed = ContextualCompressionRetriever(
                base_compressor=CtxsieveCompressor(client=client, max_tokens=cut),
                base_retriever=lc.as_retriever(search_kwargs={"k": 8})).invoke(case.question)
            li_cut = CtxsieveNodePostprocessor(client=client, max_tokens=cut).postprocess_nodes(
                li.as_retriever(similarity_top_k=8).retrieve(case.question), query_str=case.question)
            runs += [(f"LangChain top 8 + CtxsieveCompressor(max_tokens={cut})", [d.page_content for d in compressed]),
                     (f"LlamaIndex top 8 + CtxsieveNodePostprocessor(max_tokens={cut})",
                      [n.node.get_content() for n in li_cut])]
        for name, texts in runs:
            shown = "\n\n".join(texts)
            results.setdefault(name, []).append((found(case.answers, shown), TOKENS.count(shown)))
    for name, rows in results.items():
        print(f"retriever {name}: evidence recall {sum(r for r, _ in rows) / len(rows):.3f}, tokens per question "
              f"median {statistics.median(t for _, t in rows):.0f}", flush=True)


def hook(url: str, cases: list[Case], calls: int, root: Path) -> None:
    texts = list(dict.fromkeys(c.text for c in cases))
    client = Client(url, timeout=300)
    hook_ms, http_ms, direct_ms = [], [], []

    def read(content: str) -> dict[str, Any]:
        return {"session_id": "bench", "transcript_path": "/nonexistent", "cwd": str(root),
                "hook_event_name": "PostToolUse", "tool_name": "Read",
                "tool_input": {"file_path": "a.txt", "description": "when did it happen"},  # one intent for all
                "tool_response": {"type": "text", "file": {"filePath": "a.txt", "content": content}},
                "tool_use_id": "t"}

    def command_hook(content: str) -> None:
        subprocess.run([str(BIN / "ctxsieve-hook"), "claude-code", "--url", url], input=json.dumps(read(content)),
                       capture_output=True, text=True, check=True)

    def http_hook(content: str) -> None:
        httpx.post(f"{url}/v1/hooks/claude-code", json=read(content), timeout=300).raise_for_status()

    def direct(content: str) -> None:
        client.filter("when did it happen", content, k=50, max_tokens=1500, placeholder="tools")

    kinds = [(command_hook, hook_ms, 0), (http_hook, http_ms, 4), (direct, direct_ms, 2)]
    for i in range(calls):  # the order turns each call: each kind follows each other as often (background work)
        for run, times, shift in kinds[i % 3:] + kinds[:i % 3]:
            content = "\n\n".join(texts[(i * 5 + j + shift) % len(texts)] for j in range(5)) + f"\n\n({shift} {i})"
            started = time.perf_counter()
            run(content)
            times.append((time.perf_counter() - started) * 1000)
    p50 = statistics.median
    print(f"hook: ctxsieve-hook claude-code on a ~35k-token Read, p50 {p50(hook_ms):.0f} ms (process start "
          f"included); /v1/filter on a same-size file p50 {p50(direct_ms):.0f} ms; overhead "
          f"+{p50(hook_ms) - p50(direct_ms):.0f} ms (target <= 150), {calls} calls", flush=True)
    print(f"hook over http: POST /v1/hooks/claude-code, the same payload, p50 {p50(http_ms):.0f} ms; overhead "
          f"+{p50(http_ms) - p50(direct_ms):.0f} ms against /v1/filter (target <= 30), {calls} calls", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--calls", type=int, default=20)
    parser.add_argument("--parts", default="middleware,retrievers,hook")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    cases = squad_cases(args.questions)
    with scratch_service("bench-frameworks-") as (url, root):
        if "middleware" in parts:
            middleware(url, cases)
        if "retrievers" in parts:
            retrievers(url, cases)
        if "hook" in parts:
            hook(url, cases, args.calls, root)

if __name__ == "__main__":
    main()
