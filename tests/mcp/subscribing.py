"""Resource subscriptions for the tests' standalone MCP servers: FastMCP serves no `resources/subscribe` or
`resources/unsubscribe`, and a session-era server that announces `subscribe` must answer both."""

from __future__ import annotations

from typing import Any

import mcp_types as mt
from fastmcp import FastMCP


def track_subscriptions(server: FastMCP) -> set[str]:
    """Answer both requests on `server`; the returned set holds the subscribed URIs as they come and go."""
    subscribed: set[str] = set()

    async def subscribe(ctx: Any, params: mt.SubscribeRequestParams) -> mt.EmptyResult:
        subscribed.add(str(params.uri))
        return mt.EmptyResult()

    async def unsubscribe(ctx: Any, params: mt.UnsubscribeRequestParams) -> mt.EmptyResult:
        subscribed.discard(str(params.uri))
        return mt.EmptyResult()

    server._mcp_server.add_request_handler("resources/subscribe", mt.SubscribeRequestParams, subscribe)
    server._mcp_server.add_request_handler("resources/unsubscribe", mt.UnsubscribeRequestParams, unsubscribe)
    return subscribed
