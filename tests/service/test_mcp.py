"""The MCP server with a real MCP client session over stdio: initialize, tools/list, tools/call."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys

import httpx
from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.gateway_stops import HANDSHAKE, json_rpc

LOG = "\n\n".join([f"step {i}: copied shard {i} to the archive" for i in range(80)]
                  + ["step 80: checksum mismatch on shard 17, archive rejected"])


async def session_calls(url: str, ref: str) -> tuple[list[str], str, str, bool, list[object]]:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctxsieve.service.cli", "mcp", "--url", url])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        names = [t.name for t in (await session.list_tools()).tools]
        filtered = await session.call_tool("filter_ref", {"ref": ref, "query": "why was the archive rejected?",
                                                          "k": 1})
        whole = await session.call_tool("fetch_ref", {"ref": ref})
        missing = await session.call_tool("fetch_ref", {"ref": "src_00000000000000000000"})
        refused = bool(missing.is_error) and "404 not_found" in missing.content[0].text
        answers = [filtered, whole]
        assert all(len(a.content) == 1 for a in answers), "one text block per answer"
        return names, filtered.content[0].text, whole.content[0].text, refused, [a.structured_content for a in answers]


def test_mcp_tools_over_stdio(live_url: str) -> None:
    ref = httpx.post(f"{live_url}/v1/filter", json={"query": "archive", "content": LOG}).json()["ref"]
    names, filtered, whole, missing_is_error, structured = asyncio.run(session_calls(live_url, ref))
    assert set(names) == {"search", "read_file", "filter_ref", "fetch_ref", "search_code", "select_tools",
                          "query_collection"}
    assert "checksum mismatch on shard 17" in filtered and f"[ctxsieve {ref}" in filtered
    # The model is told to call the tools it has, never a route it cannot reach.
    assert f'more: filter_ref(ref="{ref}", query="...")' in filtered and f'fetch_ref(ref="{ref}")' in filtered
    assert "/v1/" not in filtered
    assert whole == LOG
    assert missing_is_error
    assert structured == [None, None], "the answer is not sent a second time as structured content"


async def select_over_stdio(url: str, arguments: dict[str, object]) -> str:
    params = StdioServerParameters(command=sys.executable, args=["-m", "ctxsieve.service.cli", "mcp", "--url", url])
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        answer = await session.call_tool("select_tools", arguments)
        return str(answer.content[0].text)


def test_mcp_select_tools_can_abstain(live_url: str) -> None:
    crm = [{"name": "refund_order", "description": "Refund a customer's order", "input_schema": {"type": "object"}},
           {"name": "update_address", "description": "Change a customer's shipping address",
            "input_schema": {"type": "object"}},
           {"name": "create_ticket", "description": "Open a customer support ticket",
            "input_schema": {"type": "object"}}]
    assert httpx.put(f"{live_url}/v1/toolsets/mcp-crm", json={"tools": crm}).status_code == 200
    fits = json.loads(asyncio.run(select_over_stdio(live_url, {"query": "refund my order", "toolsets": ["mcp-crm"],
                                                               "k": 1, "abstain": True})))
    assert fits["tools"][0]["name"] == "refund_order" and "abstained" not in fits
    none = json.loads(asyncio.run(select_over_stdio(live_url, {"query": "what is the time complexity of heapsort",
                                                               "toolsets": ["mcp-crm"], "abstain": True})))
    assert none["tools"] == [] and none["abstained"] is True and "no tool fits" in none["reason"]


def test_an_agents_sigint_ends_the_stdio_server(live_url: str) -> None:
    """Claude Code stops an MCP server with SIGINT first: the server ends by it, not blocked on its stdin."""
    server = subprocess.Popen([sys.executable, "-m", "ctxsieve.service.cli", "mcp", "--url", live_url],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    try:
        json_rpc(server, [HANDSHAKE])
        server.send_signal(signal.SIGINT)
        assert server.wait(timeout=30) == -signal.SIGINT
    finally:
        server.kill()
        server.wait()
