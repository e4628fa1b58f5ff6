"""An MCP server of the tests' own that keeps state between calls, as a browser, a shell or a database connection
would: it appends its pid to the file named by STARTS_LOG when it starts, counts its calls, and asks its client
for input in the way the client's era has (a 2026-07-28 client: an input-required round; a session-era client: an
elicitation request). With `--handshake-only` it is an old server: it speaks only the session era, so a
2026-07-28 client reaches it through the gateway's handshake, and it asks by elicitation request whoever calls."""

from __future__ import annotations

import os
import sys
from typing import Annotated

import anyio
import mcp_types as mt
from fastmcp import Context, FastMCP
from fastmcp.server.context import set_transport
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import Field
from subscribing import track_subscriptions  # (run as a script: its folder is on sys.path)

if os.environ.get("STARTS_LOG"):
    with open(os.environ["STARTS_LOG"], "a", encoding="utf-8") as log:
        log.write(f"{os.getpid()}\n")

server = FastMCP("stateful")
subscribed = track_subscriptions(server)
calls = {"n": 0}
COUNT = "state://count"


@server.tool(description="Count this call among the calls this server process has answered.")
async def tick(ctx: Context) -> str:
    calls["n"] += 1
    if COUNT in subscribed:  # a session-era subscriber hears of the change
        await ctx.session.send_resource_updated(COUNT)
    return f"call {calls['n']} in pid {os.getpid()}"


@server.resource(COUNT, name="count", description="How many calls this process has answered")
def count() -> str:
    return str(calls["n"])


@server.tool(description="Say where a request was routed (2026-07-28 mirrors `region` into an Mcp-Param header).")
def route(region: Annotated[str, Field(json_schema_extra={"x-mcp-header": "Region"})]) -> str:
    return f"routed to {region}"


def asks_by_round(ctx: Context) -> bool:
    """A 2026-07-28 client is asked by input-required rounds; a session-era one by requests."""
    return ctx.request_context is not None and ctx.request_context.protocol_version in MODERN_PROTOCOL_VERSIONS


@server.tool(description="Ask the user for a colour and answer with it.")
async def colour(ctx: Context) -> str | mt.InputRequiredResult:
    if asks_by_round(ctx):
        answers = ctx.input_responses
        if not answers:
            ask = mt.ElicitRequest(params=mt.ElicitRequestFormParams(
                message="Which colour?", requested_schema={"type": "object", "properties": {
                    "colour": {"type": "string"}}, "required": ["colour"]}))
            return mt.InputRequiredResult(input_requests={"colour": ask}, request_state="asked")
        answer = answers["colour"]
        content = answer.content if isinstance(answer, mt.ElicitResult) else None
        return f"colour {content['colour'] if content else 'none'} (input-required round)"
    result = await ctx.elicit("Which colour?", response_type=str)
    return f"colour {getattr(result, 'data', None) or 'none'} (elicitation request)"


@server.tool(description="Ask the client for its roots and answer with them.")
async def roots(ctx: Context) -> str | mt.InputRequiredResult:
    if asks_by_round(ctx):
        answers = ctx.input_responses
        if not answers:
            return mt.InputRequiredResult(input_requests={"roots": mt.ListRootsRequest()})
        listed = answers["roots"]
        found = listed.roots if isinstance(listed, mt.ListRootsResult) else []
    else:
        found = (await ctx.session.list_roots()).roots  # the session era's roots request
    return "roots " + " ".join(str(r.uri) for r in found)


async def handshake_only() -> None:
    """The session era alone over stdio (the SDK's handshake loop, which refuses 2026-07-28 requests)."""
    set_transport("stdio")
    low = server._mcp_server
    async with server._lifespan_manager(), low.lifespan(low) as state, stdio_server() as (read, write):
        await serve_loop(low, read, write, lifespan_state=state, init_options=low.create_initialization_options())


if __name__ == "__main__":
    if "--handshake-only" in sys.argv:
        anyio.run(handshake_only)
    else:
        server.run(show_banner=False)
