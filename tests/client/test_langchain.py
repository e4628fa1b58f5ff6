"""The LangChain v1 adapters with LangChain's own `create_agent` and `ContextualCompressionRetriever`, over the
real service (stand-in model); the chat model is scripted (the provider is the outside service) and makes real
tool calls, and records what it was sent."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import ToolException, tool

from ctxsieve_client import AsyncClient, Client
from ctxsieve_client.langchain import CtxsieveCompressor, CtxsieveMiddleware
from tests.client.code_repository import check_hit, definition, hits_of, make_repository
from tests.conftest import make_settings, serve_on_loopback, stub_models

LOG = "\n".join(f"10:{i // 60:02d}:{i % 60:02d} worker {i % 7} synced shard {i} to the archive" for i in range(1200)) \
    + "\n11:00:00 ERROR shard 1234 checksum mismatch, archive rejected"


class ScriptedChat(BaseChatModel):
    """Answers with the scripted messages in turn; remembers the messages and tool names of every call."""

    script: list[AIMessage]
    seen: list[tuple[list[BaseMessage], list[str]]] = []
    bound: list[str] = []

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        names = [t.name if hasattr(t, "name") else t["function"]["name"] for t in tools]
        return self.model_copy(update={"bound": names})

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        self.seen.append((list(messages), list(self.bound)))
        return ChatResult(generations=[ChatGeneration(message=self.script[len(self.seen) - 1])])


@tool
def read_log(path: str) -> str:
    """Read a log file whole."""
    return LOG


@tool
def broken_tool(path: str) -> str:
    """A tool that fails."""
    raise ToolException("Traceback (most recent call last):\n" + "frame\n" * 300 + "ValueError: disk on fire")


broken_tool.handle_tool_error = True  # LangChain turns a ToolException into a ToolMessage with status "error"


def distractors() -> list[Any]:
    made = []
    for topic in ("weather forecast", "stock prices", "flight booking", "restaurant reviews", "movie times",
                  "currency exchange", "translate text"):
        def run(query: str, _topic: str = topic) -> str:
            return f"{_topic}: nothing"
        made.append(tool(topic.replace(" ", "_"), description=f"Look up {topic}.")(run))
    return made


def call(name: str, args: dict[str, Any], i: int) -> AIMessage:
    return AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": f"call_{i}", "type": "tool_call"}])


@pytest.fixture
def client(stub_url: str) -> Iterator[Client]:
    with Client(stub_url) as c:
        yield c


def test_create_agent_with_the_middleware(client: Client) -> None:
    model = ScriptedChat(script=[
        AIMessage(content="I will read the sync log to find the checksum mismatch."),
        call("read_log", {"path": "sync.log"}, 1), call("broken_tool", {"path": "x"}, 2),
        AIMessage(content="Shard 1234 failed its checksum.")], seen=[])
    # The first scripted answer has no tool call and would end the run: start from a human turn and the AI's plan.
    model.script = model.script[1:]
    tools = [read_log, broken_tool, *distractors()]
    agent = create_agent(model, tools=tools, middleware=[CtxsieveMiddleware(client=client, k=3,
                                                                           always_include=["broken_tool"])])
    agent.invoke({"messages": [("user", "Which shard failed its checksum? Look at the sync log."),
                               ("ai", "I will read the sync log to find the checksum mismatch.")]})
    read = next(m for m in model.seen[1][0] if isinstance(m, ToolMessage) and m.name == "read_log")
    assert "checksum mismatch" in read.content and len(read.content) < len(LOG) / 4
    assert 'filter_ref(ref="src_' in read.content and read.artifact["ctxsieve_ref"].startswith("src_")
    broken = next(m for m in model.seen[2][0] if isinstance(m, ToolMessage) and m.name == "broken_tool")
    assert broken.status == "error" and broken.content.count("frame") == 300, "errors are never cut"
    for _, names in model.seen:
        own = {"filter_ref", "fetch_ref", "search_code", "broken_tool"}
        assert own <= set(names), "own tools and always_include are sent"
        assert len(set(names) - own) <= 3, "k=3: only the relevant tools"
    assert "read_log" in model.seen[0][1]


def test_the_middleware_runs_async_with_an_async_client(stub_url: str) -> None:
    model = ScriptedChat(script=[call("read_log", {"path": "sync.log"}, 1), AIMessage(content="done")], seen=[])

    async def main() -> None:
        async with AsyncClient(stub_url) as client:
            agent = create_agent(model, tools=[read_log], middleware=[CtxsieveMiddleware(client=client)])
            await agent.ainvoke({"messages": [("user", "find the checksum mismatch in the sync log")]})

    asyncio.run(main())
    read = next(m for m in model.seen[1][0] if isinstance(m, ToolMessage) and m.name == "read_log")
    assert "checksum mismatch" in read.content and len(read.content) < len(LOG) / 4


def test_the_compressor_in_langchains_own_retriever(client: Client) -> None:
    from langchain_classic.retrievers import ContextualCompressionRetriever
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever

    class Everything(BaseRetriever):  # a plain retriever that returns whole documents
        docs: list[Document]

        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return self.docs

    stations = ["Alder", "Birch", "Cedar", "Dogwood", "Elm"]
    pumps = [f"{name}{i}" for i in range(16) for name in ("Kestrel", "Osprey", "Heron", "Plover", "Curlew")]
    docs = [Document(page_content="\n\n".join(f"At {station} station the {pump} pump moved {p * 7 + s} litres."
                                               for p, pump in enumerate(pumps)),
                     metadata={"station": s}, id=f"doc-{s}") for s, station in enumerate(stations)]
    retriever = ContextualCompressionRetriever(base_compressor=CtxsieveCompressor(client=client, max_tokens=200),
                                               base_retriever=Everything(docs=docs))
    found = retriever.invoke("how many litres did the Heron7 pump at Dogwood station move")
    assert found and sum(len(d.page_content) for d in found) < sum(len(d.page_content) for d in docs) / 10
    assert all(d.metadata["ctxsieve_ref"].startswith("src_") and d.id.startswith("doc-") for d in found)
    heron7 = pumps.index("Heron7")
    assert any(d.metadata["station"] == 3 and f"Heron7 pump moved {heron7 * 7 + 3} litres" in d.page_content
               for d in found)


def test_the_middleware_compacts_before_each_model_call(client: Client) -> None:
    """compact=: older tool results reach the model as placeholders; the agent's own state keeps them whole."""
    @tool
    def read_part(n: int) -> str:
        """Read part n of the log."""
        return "\n".join(f"part {n} line {i}: worker {i % 7} synced shard {i}" for i in range(150))

    script = [call("read_part", {"n": i}, i) for i in range(4)] + [AIMessage(content="done")]
    model = ScriptedChat(script=script, seen=[])
    middleware = CtxsieveMiddleware(client=client, select_tools=False, passthrough_tokens=10**6,
                                    compact={"trigger_tokens": 3_000, "keep_tool_results": 1, "clear_at_least": 500})
    state = create_agent(model, tools=[read_part], middleware=[middleware]).invoke(
        {"messages": [("user", "read every part")]})
    last_seen = [m for m in model.seen[-1][0] if isinstance(m, ToolMessage)]
    assert len(last_seen) == 4
    assert last_seen[0].content.startswith("[ctxsieve src_") and "fetch_ref(" in last_seen[0].content
    assert not last_seen[-1].content.startswith("[ctxsieve"), "the latest result is kept"
    kept = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert all(m.content.startswith("part ") for m in kept), "the agent's state keeps every result whole"


def test_fetch_ref_takes_the_lines_a_placeholder_names(client: Client) -> None:
    """The placeholder of a log, a diff, grep output or code tells the model `fetch_ref(ref, lines="A-B")`: the
    middleware's own fetch_ref takes them."""
    ref = client.filter("checksum", LOG, max_tokens=200).ref
    fetch = next(t for t in CtxsieveMiddleware(client=client).tools if t.name == "fetch_ref")
    assert fetch.invoke({"ref": ref, "lines": "2-3"}) == "\n".join(LOG.split("\n")[1:3])
    assert fetch.invoke({"ref": ref}) == LOG


def test_create_agent_offers_search_code_and_it_answers(tmp_path_factory: pytest.TempPathFactory,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """The middleware's search_code in LangChain's own agent: offered to the model, and its answer (the repository
    around the working folder, indexed on first use) read back with true line numbers."""
    work = tmp_path_factory.mktemp("lc-code")
    root = make_repository(work)
    url, stop = serve_on_loopback(make_settings(tmp_path_factory.mktemp("lc-code-data"), read_roots=str(work)),
                                  stub_models())
    monkeypatch.chdir(root)
    model = ScriptedChat(script=[call("search_code", {"query": "compute_invoice_total"}, 1),
                                 call("search_code", {"query": "invoice", "repo": "no-such-repo"}, 2),
                                 AIMessage(content="billing/invoices.py")], seen=[])
    try:
        with Client(url) as client:
            create_agent(model, tools=distractors(), middleware=[CtxsieveMiddleware(client=client, k=3)]).invoke(
                {"messages": [("user", "Where is the invoice total computed?")]})
    finally:
        stop()
    assert all("search_code" in names for _, names in model.seen), "offered on every call"
    answers = [m for m in model.seen[-1][0] if isinstance(m, ToolMessage) and m.name == "search_code"]
    hits = hits_of(answers[0].content)
    check_hit(root, hits[0], definition(root, "billing/invoices.py", "compute_invoice_total"))
    assert answers[1].status == "error" and "ctxsieve index PATH --name no-such-repo" in answers[1].content
