"""LangChain v1 adapters (`pip install 'ctxsieve-client[langchain]'`; LangChain is imported only here).

- `CtxsieveMiddleware`: an `AgentMiddleware` for `create_agent`. A large tool result is stored and becomes the
  snippets its call needs and a placeholder (errors untouched); only the relevant tools go to the model (a toolset
  registered once from the agent's tools, by digest; never an empty list when the agent has tools); and it adds
  the ref tools (`filter_ref`, `fetch_ref`, `search_code`) so the model can ask for more.
- `CtxsieveCompressor`: a `BaseDocumentCompressor` for `ContextualCompressionRetriever`: the retrieved documents
  become the relevant snippets within a token budget, each keeping its document's metadata.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import httpx
from langchain.agents.middleware import AgentMiddleware, ModelRequest
from langchain.agents.middleware.types import ToolCallRequest
from langchain_core.callbacks import Callbacks
from langchain_core.documents import BaseDocumentCompressor, Document
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage, convert_to_openai_messages
from langchain_core.tools import BaseTool, StructuredTool, ToolException
from langchain_core.utils.function_calling import convert_to_openai_tool

from .client import AsyncClient, Call, Client, CompactOptions, CtxsieveError
from .cutting import CutOptions, cut_request, cut_text, passes
from .intent import step_intent
from .models import Compaction, FilterResult
from .ref_tools import NAMES, REF_TOOLS, RefTool, as_function

OWN_TOOLS = NAMES


class CtxsieveMiddleware(AgentMiddleware):
    def __init__(self, client: Client | AsyncClient, *, select_tools: bool = True, k: int = 5,
                 always_include: Sequence[str] = (), max_tokens: int | None = None, passthrough_tokens: int = 1000,
                 toolset: str | None = None, compact: bool | CompactOptions = False) -> None:
        super().__init__()
        self.client = client
        self.select = select_tools
        self.k = k
        self.always = tuple(always_include)
        self.cut_options = CutOptions(passthrough_tokens=passthrough_tokens, max_tokens=max_tokens)
        self.toolset = toolset
        self._registered: set[str] = set()
        # compact: before each model call, the history as POST /v1/context/compact projects it (True: its defaults;
        # or trigger_tokens, keep_tool_results, clear_at_least...). The agent's state keeps every message whole.
        self.compacting: CompactOptions | None = (CompactOptions() if compact is True else compact) or None
        self.tools = [self._ref_tool(t) for t in REF_TOOLS]

    # --- tool results ----------------------------------------------------------------------------------

    def wrap_tool_call(self, request: ToolCallRequest, handler: Callable[[ToolCallRequest], Any]) -> Any:
        result = handler(request)
        call = self._cutting(request, result)
        if call is None:
            return result
        return self._cut(result, self._sync(lambda c: c.send(call)))

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[Any]]) -> Any:
        result = await handler(request)
        call = self._cutting(request, result)
        if call is None:
            return result
        return self._cut(result, await self._async(lambda c: c.send(call)))

    def _cutting(self, request: ToolCallRequest, result: Any) -> Call[FilterResult] | None:
        """The filter call for a large, successful tool result (`cutting`); None to leave it as it is."""
        if not isinstance(result, ToolMessage) or result.status == "error" or result.name in OWN_TOOLS:
            return None
        text = _text(result.content)
        if passes(text, self.cut_options):  # before looking for an intent
            return None
        call = request.tool_call
        args = call.get("args") or {}
        human, ai = latest_turns(request.state.get("messages", []) if isinstance(request.state, dict) else [])
        return cut_request(text, step_intent(human, ai, args), call.get("name", "tool"), args, self.cut_options)

    def _cut(self, result: ToolMessage, filtered: FilterResult) -> ToolMessage:
        shown = cut_text(filtered, self.cut_options, original=_text(result.content))
        if shown is None:
            return result
        return ToolMessage(content=shown, tool_call_id=result.tool_call_id, name=result.name, id=result.id,
                           status=result.status, artifact={"ctxsieve_ref": filtered.ref})

    # --- tools sent to the model -------------------------------------------------------------------------

    def wrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Any]) -> Any:
        if self.compacting is not None:
            options = self.compacting
            request = self._compacted(request, self._sync(lambda c: c.compact(
                convert_to_openai_messages(request.messages), placeholder="tools", **options)))
        if not self._selecting(request):
            return handler(request)
        toolset, definitions = self._toolset(request.tools)
        if toolset not in self._registered:
            self._sync(lambda c: c.register_toolset(toolset, definitions))
            self._registered.add(toolset)
        query = conversation_intent(request.messages)
        selection = self._sync(lambda c: c.select_tools(query, [toolset], k=self.k, always=self._always(request),
                                                        format="openai")) if query else None
        return handler(self._narrowed(request, selection))

    async def awrap_model_call(self, request: ModelRequest, handler: Callable[[ModelRequest], Awaitable[Any]]
                               ) -> Any:
        if self.compacting is not None:
            options = self.compacting
            request = self._compacted(request, await self._async(lambda c: c.compact(
                convert_to_openai_messages(request.messages), placeholder="tools", **options)))
        if not self._selecting(request):
            return await handler(request)
        toolset, definitions = self._toolset(request.tools)
        if toolset not in self._registered:
            await self._async(lambda c: c.register_toolset(toolset, definitions))
            self._registered.add(toolset)
        query = conversation_intent(request.messages)
        selection = await self._async(lambda c: c.select_tools(
            query, [toolset], k=self.k, always=self._always(request), format="openai")) if query else None
        return await handler(self._narrowed(request, selection))

    @staticmethod
    def _compacted(request: ModelRequest, compaction: Compaction) -> ModelRequest:
        """The request with each cleared tool result's content replaced by its placeholder (the messages are the
        agent's own objects: ids, names and the rest kept; the OpenAI form is only what the service reads)."""
        if not compaction.compacted:
            return request
        messages = list(request.messages)
        for cleared in compaction.cleared:
            original = messages[cleared.message]
            if isinstance(original, ToolMessage) and not cleared.input:
                line = compaction.messages[cleared.message]["content"]
                messages[cleared.message] = original.model_copy(update={"content": line})
        return request.override(messages=messages)

    def _selecting(self, request: ModelRequest) -> bool:
        return self.select and len([t for t in request.tools if _name(t) not in OWN_TOOLS]) > self.k

    def _toolset(self, tools: Sequence[Any]) -> tuple[str, list[dict[str, Any]]]:
        """The agent's tools (less the own ones) as a toolset named by their digest: registered once."""
        definitions = [convert_to_openai_tool(t) for t in tools if _name(t) not in OWN_TOOLS]
        digest = hashlib.sha256(json.dumps(definitions, sort_keys=True).encode()).hexdigest()[:16]
        return self.toolset or f"langchain-{digest}", definitions

    def _always(self, request: ModelRequest) -> list[str]:
        names = {_name(t) for t in request.tools}
        return [n for n in self.always if n in names]

    def _narrowed(self, request: ModelRequest, selection: Any) -> ModelRequest:
        """Only the chosen tools (with the always and own ones); all of them if nothing could be chosen."""
        chosen = {s.name for s in selection.selected} if selection is not None else set()
        if not chosen:
            return request
        keep = chosen | set(self.always) | set(OWN_TOOLS)
        return request.override(tools=[t for t in request.tools if _name(t) in keep])

    # --- the own tools -----------------------------------------------------------------------------------

    def _ref_tool(self, ref_tool: RefTool) -> BaseTool:
        """A ref tool; the service's refusal (an unknown ref, a repository not indexed) or its absence reaches the
        model as the tool's error (`handle_tool_error`), never as an exception ending the agent's run."""
        def run(**arguments: Any) -> str:
            with _as_tool_error():
                return ref_tool.answer(self._sync(lambda c: c.send(ref_tool.call(arguments))))

        async def arun(**arguments: Any) -> str:
            with _as_tool_error():
                return ref_tool.answer(await self._async(lambda c: c.send(ref_tool.call(arguments))))

        return StructuredTool.from_function(func=as_function(ref_tool, run), coroutine=as_function(ref_tool, arun),
                                            name=ref_tool.name, description=ref_tool.description,
                                            handle_tool_error=True)

    # --- one client, either kind ---------------------------------------------------------------------------

    def _sync(self, call: Callable[[Any], Any]) -> Any:
        if isinstance(self.client, AsyncClient):
            raise TypeError("CtxsieveMiddleware was given an AsyncClient: run the agent with ainvoke/astream")
        return call(self.client)

    async def _async(self, call: Callable[[Any], Any]) -> Any:
        if isinstance(self.client, AsyncClient):
            return await call(self.client)
        return await asyncio.to_thread(call, self.client)


@contextmanager
def _as_tool_error() -> Iterator[None]:
    try:
        yield
    except CtxsieveError as exc:
        raise ToolException(f"ctxsieve: {exc.status} {exc.type}: {exc.message}") from exc
    except httpx.HTTPError as exc:
        raise ToolException(f"the ctxsieve service did not answer ({type(exc).__name__}: {exc})") from exc


def latest_turns(messages: Sequence[BaseMessage]) -> tuple[str | None, str | None]:
    """The latest human message and the last AI message's text (the conversation now, not its first request)."""
    human = next((m for m in reversed(messages) if isinstance(m, HumanMessage)), None)
    ai = next((m for m in reversed(messages) if isinstance(m, AIMessage) and _text(m.content)), None)
    return (_text(human.content) if human else None), (_text(ai.content) if ai else None)


def conversation_intent(messages: Sequence[BaseMessage]) -> str | None:
    """What the agent is doing now, for tool selection: the one intent rule without a call."""
    return step_intent(*latest_turns(messages), {})


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(b if isinstance(b, str) else str(b.get("text", "")) for b in content
                         if isinstance(b, str) or (isinstance(b, dict) and b.get("type") == "text"))
    return ""


def _name(tool: Any) -> str:
    return str(tool.name if isinstance(tool, BaseTool) else convert_to_openai_tool(tool)["function"]["name"])


class CtxsieveCompressor(BaseDocumentCompressor):
    """The documents a retriever found, cut to the query within `max_tokens` (ctxsieve ranks their chunks
    together); each snippet is a Document with its source document's metadata and id, plus where it came from."""

    client: Any
    max_tokens: int = 1500
    k: int = 20

    def compress_documents(self, documents: Sequence[Document], query: str,
                           callbacks: Callbacks | None = None,  # noqa: ARG002 - LangChain's signature
                           ) -> Sequence[Document]:
        if not documents:
            return []
        sent = [{"text": d.page_content, "metadata": {"index": i}} for i, d in enumerate(documents)]
        result = self.client.filter(query, documents=sent, k=self.k, max_tokens=self.max_tokens,
                                    order="score", placeholder="tools")
        return [_document(documents[s.document], s, result.ref) for s in result.snippets]


def _document(source: Document, snippet: Any, ref: str) -> Document:
    metadata = {**source.metadata, "ctxsieve_ref": ref, "ctxsieve_snippet": snippet.id,
                "ctxsieve_score": snippet.score}
    return Document(page_content=snippet.text, metadata=metadata, id=source.id)
