"""What FastMCP's proxy does not relay, relayed by hand: argument completion and resource subscriptions, in
both eras (`resources/subscribe` in the session era, `subscriptions/listen` in 2026-07-28).

Each request goes to the upstream that owns its name or URI, over the current client's own session: the server
whose prompts include the prompt, or whose resources or templates match the URI (first match, in config order).
Nobody's: an empty completion, or an error naming the URI. A 2026-07-28 client's listen stream is the SDK's
`ListenHandler` over the gateway's bus, which carries every upstream's list changes and resource updates; the
URIs it asks for are subscribed at their owner for as long as the stream is open (a session-era upstream by
`resources/subscribe`, a 2026-07-28 one by a listen stream of its own).
"""

from __future__ import annotations

import contextlib
import logging
import re
from collections.abc import AsyncIterator, Iterable
from typing import Any

import anyio
import mcp_types as mt
from fastmcp.exceptions import ResourceError
from fastmcp.server.dependencies import bind_request_context
from mcp.client.subscriptions import listen
from mcp.server.subscriptions import InMemorySubscriptionBus, ListenHandler
from mcp.shared.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ServerEvent,
    ToolsListChanged,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from .upstreams import UpstreamServer

log = logging.getLogger("ctxsieve.gateway")
EVENTS: dict[type[Any], Any] = {  # an upstream's notification -> the event a listen stream carries
    mt.ToolListChangedNotification: lambda _: ToolsListChanged(),
    mt.PromptListChangedNotification: lambda _: PromptsListChanged(),
    mt.ResourceListChangedNotification: lambda _: ResourcesListChanged(),
    mt.ResourceUpdatedNotification: lambda n: ResourceUpdated(uri=str(n.params.uri)),
}


def event_of(message: Any) -> ServerEvent | None:
    """The listen event an upstream's notification is, if it is one."""
    make = EVENTS.get(type(message))
    return make(message) if make is not None else None


def install(mcp: Any, servers: Iterable[UpstreamServer], bus: InMemorySubscriptionBus) -> None:
    ordered = list(servers)
    streams = ListenHandler(bus)

    async def listen_handler(ctx: Any, params: mt.SubscriptionsListenRequestParams) -> mt.SubscriptionsListenResult:
        uris = list(params.notifications.resource_subscriptions or ())
        async with contextlib.AsyncExitStack() as held:
            with bind_request_context(ctx):
                for uri in uris:
                    await held.enter_async_context(_subscribed(await _owner(ordered, uri), uri, bus))
            return await streams(ctx, params)

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
    mcp._mcp_server.add_request_handler("subscriptions/listen", mt.SubscriptionsListenRequestParams, listen_handler)
    mcp._mcp_server.add_request_handler("resources/subscribe", mt.SubscribeRequestParams,
                                        relay("subscribe_resource"))
    mcp._mcp_server.add_request_handler("resources/unsubscribe", mt.UnsubscribeRequestParams,
                                        relay("unsubscribe_resource"))


@contextlib.asynccontextmanager
async def _subscribed(client: Any, uri: str, bus: InMemorySubscriptionBus) -> AsyncIterator[None]:
    """`uri` subscribed at its owner while the block runs; its updates reach the bus."""
    async with client:
        if client.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            await client.session.subscribe_resource(uri)  # updates come as notifications: the listener publishes
            try:
                yield
            finally:
                with anyio.CancelScope(shield=True), contextlib.suppress(Exception):
                    await client.session.unsubscribe_resource(uri)
            return
        async with anyio.create_task_group() as group:
            group.start_soon(_forward_listen, client, uri, bus)
            try:
                yield
            finally:
                group.cancel_scope.cancel()


async def _forward_listen(client: Any, uri: str, bus: InMemorySubscriptionBus) -> None:
    try:
        async with listen(client.session, resource_subscriptions=[uri]) as stream:
            async for event in stream:
                await bus.publish(event)
    except Exception as exc:  # an upstream that cannot listen: the client's stream stays open, without its updates
        log.warning("updates of %s cannot be followed: %s: %s", uri, type(exc).__name__, exc)


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
