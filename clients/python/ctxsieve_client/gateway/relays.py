"""What FastMCP's proxy does not relay, relayed by hand: argument completion and resource subscriptions.

Each request goes to the upstream that owns its name or URI, over the current connection's own session: the
server whose prompts include the prompt, or whose resources or templates match the URI (first match, in config
order). Nobody's: an empty completion, or an error naming the URI.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any

import mcp_types as mt
from fastmcp.exceptions import ResourceError
from fastmcp.server.dependencies import bind_request_context

from .upstreams import UpstreamServer


def install(mcp: Any, servers: Iterable[UpstreamServer]) -> None:
    ordered = list(servers)

    async def complete(ref: Any, argument: mt.CompletionArgument, context: mt.CompletionContext | None
                       ) -> mt.Completion | None:
        for server in ordered:
            client = server.client()
            async with client:
                if not await _owns(client, ref):
                    continue
                arguments = context.arguments if context is not None else None
                return await client.complete(ref, {"name": argument.name, "value": argument.value}, arguments)
        return None

    def relay(method: str) -> Any:
        """resources/subscribe or /unsubscribe, sent on to the owner of the URI over this connection's session."""
        async def handle(ctx: Any, params: Any) -> mt.EmptyResult:
            with bind_request_context(ctx):
                client = await _owner(ordered, str(params.uri))
                async with client:
                    await getattr(client.session, method)(str(params.uri))
            return mt.EmptyResult()
        return handle

    mcp.add_completion_handler(complete)
    mcp._mcp_server.add_request_handler("resources/subscribe", mt.SubscribeRequestParams,
                                        relay("subscribe_resource"))
    mcp._mcp_server.add_request_handler("resources/unsubscribe", mt.UnsubscribeRequestParams,
                                        relay("unsubscribe_resource"))


async def _owns(client: Any, ref: Any) -> bool:
    if isinstance(ref, mt.PromptReference):
        return any(p.name == ref.name for p in await client.list_prompts())
    return any(t.uri_template == ref.uri for t in await client.list_resource_templates())


async def _owner(servers: list[UpstreamServer], uri: str) -> Any:
    for server in servers:
        client = server.client()
        async with client:
            if any(str(r.uri) == uri for r in await client.list_resources()) or any(
                    _matches(t.uri_template, uri) for t in await client.list_resource_templates()):
                return client
    raise ResourceError(f"no connected server offers {uri}")


def _matches(template: str, uri: str) -> bool:
    """An RFC 6570 level-1 template (`test://items/{id}`) against a URI."""
    pattern = "".join("[^/]+" if part.startswith("{") else re.escape(part)
                      for part in re.split(r"(\{[^}]+\})", template))
    return re.fullmatch(pattern, uri) is not None
