"""The gateway: one MCP server (FastMCP) in front of the user's servers, with ctxsieve in each call's path.

FastMCP's proxy providers relay everything a server offers; ours are what `Gateway` here decides (each call's
output shaped, `intent` added to each listed tool, tool search, one ctxsieve client per client session), the
FastMCP middleware and renaming transform that bring each request to it (middleware.py), the own tools
(the ref tools, `find_tools`, `call_tool`: own_tools.py) and the session strategy (upstreams.py).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Hashable, Iterator, Sequence
from typing import Any

import anyio
import httpx
import mcp_types as mt
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.server.middleware import CallNext, MiddlewareContext
from fastmcp.tools.base import InputRequiredToolResult, Tool, ToolResult
from mcp.server.subscriptions import InMemorySubscriptionBus
from mcp.shared.subscriptions import ToolsListChanged

from ..client import AsyncClient, CtxsieveError
from ..names import OWN_TOOLS, intent_of
from ..ref_tools import NAMES as REF_TOOLS
from . import own_tools, relays
from .asking import Asking
from .catalog import Catalog, Listed, toolset_of
from .clients import Identities, Transport
from .config import GatewayConfig
from .middleware import Renamer, Sieve
from .shaping import UpstreamCall, shape
from .upstreams import LogsFolder, UpstreamServer

log = logging.getLogger("ctxsieve.gateway")
INSTRUCTIONS = ("Large tool outputs are kept whole outside your context: you see the part your call's `intent` "
                "asks for (or an outline) and a placeholder naming the ref. Get more with filter_ref or fetch_ref "
                "instead of calling the tool again.")
RETRY_S = 30.0
LIST_S = 120.0  # a server's start and first listing, in the background (a first `npx -y` downloads it)
REGISTER_S = 10.0  # a toolset's registration with the service, in the background: past this, tool search lacks it
DEFERS_TOOLS_ITSELF = frozenset({"claude-code"})  # clients (by clientInfo name) with their own MCP tool search
SESSION_CLIENTS = 256  # client sessions remembered (a ctxsieve client and find_tools' finds each; oldest go first)


class Gateway:
    def __init__(self, config: GatewayConfig, client: Callable[[str | None, str | None], AsyncClient]) -> None:
        self.config = config
        self.options = config.options
        self._client_for = client
        self._clients: dict[str | None, AsyncClient] = {}
        self._closing: set[asyncio.Task[None]] = set()
        self.catalog = Catalog()
        self.failed: dict[str, str] = {}  # server -> why it could not be listed
        self._retried: dict[str, float] = {}  # server -> when listing it was last tried
        self.found: dict[str | None, dict[str, str]] = {}  # session -> tool found by find_tools -> its query
        self.identities = Identities()
        self._serving: Counter[Hashable] = Counter()  # client key -> its requests being served now
        self._listing: dict[str, asyncio.Task[None]] = {}  # server -> its tools being listed (start-up, retries)
        self._registering: dict[str, asyncio.Task[None]] = {}  # server -> its toolset being registered
        self._unregistered: dict[str, str] = {}  # server -> why its toolset is not in the service (said once)
        self._started = False  # start() has returned: a server listed from now on is announced to the clients
        self._moved = asyncio.Event()  # set (and replaced) when the catalog or a server's start changes: `known`
        self.asking = Asking()
        self.bus = InMemorySubscriptionBus()  # what 2026-07-28 clients' listen streams carry (relays.py)
        self.logs = LogsFolder.make()
        self.servers = {u.name: UpstreamServer(u, self.logs.path, self.identities, self.asking, self._listener(u.name))
                        for u in config.servers}
        self.mcp: FastMCP[Any] = FastMCP("ctxsieve-gateway", instructions=INSTRUCTIONS)
        for server in self.servers.values():
            server.provider.add_transform(Renamer(self, server.name))
            self.mcp.add_provider(server.provider)
        self.mcp.add_middleware(Sieve(self))
        relays.install(self.mcp, self.servers.values(), self.bus)
        self.mcp._mcp_server.get_tool_input_schema = self.input_schema
        own_tools.register(self)

    # --- start-up and list changes ---------------------------------------------------------------------

    async def start(self) -> None:
        """List every server concurrently and return (the gateway then serves) once each has answered or its own
        start_timeout_s has passed; one that answers later is added then, its tools announced. A server that
        fails is said once, and its calls answer with why."""
        for name in self.servers:
            self._list_in_background(name)
        await asyncio.gather(*(self._until_listed(name) for name in self.servers))
        self._started = True
        late = [name for name in self.servers if not self.servers[name].listed and name not in self.failed]
        if late:
            log.info("serving without %s: not listed within its start_timeout_s; added when it answers",
                     ", ".join(late))

    async def _until_listed(self, name: str) -> None:
        task = self._listing.get(name)
        if task is not None:
            await asyncio.wait({task}, timeout=self.servers[name].upstream.options.start_timeout_s)

    def _list_in_background(self, name: str) -> None:
        running = self._listing.get(name)
        if running is None or running.done():
            self._listing[name] = asyncio.get_running_loop().create_task(self.refresh(name))

    async def refresh(self, name: str) -> None:
        server = self.servers[name]
        self._retried[name] = time.monotonic()
        try:
            definitions = await server.list_tool_definitions(max(server.upstream.options.timeout_s, LIST_S))
        except Exception as exc:  # any failure to start or list: the other servers keep working
            why = _failure(name, exc, server.stderr_tail())
            if self.failed.get(name) != why:
                log.error("%s", why)
            self.failed[name] = why
            self._catalog_moved()
            return
        self.failed.pop(name, None)
        await self.learn(name, definitions)
        log.info("%s: %d tools", name, len(definitions))
        if not server.listed:
            server.listed = True
            self._catalog_moved()
            if self._started:
                await self.announce()

    async def announce(self) -> None:
        """The tool list changed (a late server's tools arrived): session-era clients get tools/list_changed,
        2026-07-28 clients an event on their listen streams. A client that ignores it sees them at its next
        listing."""
        await self.bus.publish(ToolsListChanged())
        for connection in list(self.identities.connections):
            try:
                await connection.outbound.notify("notifications/tools/list_changed", None)
            except Exception as exc:  # a connection closing as it is told: it lists afresh if it comes back
                log.debug("tools/list_changed not sent: %s: %s", type(exc).__name__, exc)

    async def learn(self, name: str, definitions: list[dict[str, Any]]) -> None:
        """A server's tools as it just listed them (at start, or in a client's listing): the catalog now, and
        the toolset in ctxsieve in the background when they changed (registering an unchanged toolset again is
        cheap, but not free): a slow or absent service never holds up serving the tools."""
        if self.catalog.listings.get(name) == definitions:
            return
        self.catalog.update(name, definitions)
        self._catalog_moved()
        previous = self._registering.get(name)
        if previous is not None:
            previous.cancel()  # superseded by this listing
        self._registering[name] = asyncio.get_running_loop().create_task(self._register(name))

    async def _register(self, name: str) -> None:
        try:
            with anyio.fail_after(REGISTER_S):
                await self.client(None).register_toolset(toolset_of(name), self.catalog.toolset(name))
        except (TimeoutError, CtxsieveError, httpx.HTTPError, OSError) as exc:  # its tools are served all the same
            why = f"{type(exc).__name__}: {exc}" if str(exc) else f"no answer within {REGISTER_S:g} s"
            if self._unregistered.get(name) != why:
                log.warning("%s's tools are served without ctxsieve tool search (not registered with the service: "
                            "%s)", name, why)
            self._unregistered[name] = why
            return
        self._unregistered.pop(name, None)

    async def registered(self) -> None:
        """Registrations under way are over (each within REGISTER_S): what tool search needs to find them."""
        pending = [t for t in self._registering.values() if not t.done()]
        if pending:
            await asyncio.wait(pending)

    async def retry_failed(self) -> None:
        """A server that could not start is tried again, in the background, when tools are listed, at most every
        RETRY_S; its tools are announced when it answers."""
        for name in list(self.failed):
            if time.monotonic() - self._retried.get(name, 0.0) >= RETRY_S:
                self._retried[name] = time.monotonic()
                self._list_in_background(name)

    def _listener(self, name: str) -> Callable[[Any, Any], Awaitable[None]]:
        """An upstream's notifications: on tools/list_changed its tools are read again over the session that said
        so; every list change and resource update reaches the listen streams of 2026-07-28 clients."""
        async def on_message(client: Any, message: Any) -> None:
            if isinstance(message, mt.ToolListChangedNotification):
                tools = await client.list_tools()
                await self.learn(name, [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools])
            event = relays.event_of(message)
            if event is not None:
                await self.bus.publish(event)
        return on_message

    # --- clients of the service, one per client session ------------------------------------------------

    def client(self, session: str | None) -> AsyncClient:
        found = self._clients.get(session)
        if found is None:
            found = self._clients[session] = self._client_for(session, self._agent(session))
            if len(self._clients) > SESSION_CLIENTS:  # the oldest session's client is closed, not leaked
                evicted = next(iter(self._clients))
                oldest = self._clients.pop(evicted)
                self.found.pop(evicted, None)  # and what find_tools found for it: sessions come and go
                self._closing.add(asyncio.get_running_loop().create_task(oldest.aclose()))
                self._closing = {t for t in self._closing if not t.done()}
        return found

    def _agent(self, session: str | None) -> str | None:
        """The agent of a session's reads (X-Agent): its client's own name (clientInfo), e.g. "claude-code"."""
        who = self.identities.current() if session is not None else None
        return who.program if who is not None else None

    async def close(self) -> None:
        """Every upstream session closed at once (an agent stopping the gateway waits half a second before it kills
        it: cli.py), a listing under way too, then the service's clients and the log folder."""
        pending = [*self._listing.values(), *self._registering.values()]
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)
        await self.asking.close()
        async with anyio.create_task_group() as group:
            for server in self.servers.values():
                group.start_soon(server.close)
        for client in self._clients.values():
            await client.aclose()
        self.logs.remove()

    # --- the clients this gateway serves ---------------------------------------------------------------

    def serving(self, transport: Transport) -> None:
        """What identifies a client depends on the transport (clients.py); say it before serving."""
        self.identities.transport = transport

    @contextlib.contextmanager
    def request(self) -> Iterator[None]:
        """Around each request: its client is not idle while it is served (a server may be slow to start, a
        question slow to answer), and its idle time starts when the request ends."""
        who = self.identities.current()
        key = who.key if who is not None else None
        self._serving[key] += 1
        try:
            yield
        finally:
            self._serving[key] -= 1
            if self._serving[key] <= 0:
                del self._serving[key]
            for server in self.servers.values():
                server.touch(key)

    async def close_idle(self) -> int:
        """Close the upstream sessions of 2026-07-28 HTTP clients that have gone quiet (client_idle_s)."""
        closed = 0
        for server in self.servers.values():
            closed += await server.close_idle(self.options.client_idle_s, busy=set(self._serving))
        if closed:
            log.info("closed %d upstream sessions of clients idle for %g s", closed, self.options.client_idle_s)
        return closed

    def session(self, ctx: Context | None) -> str | None:
        """The ctxsieve session of the request's client (its reads in GET /v1/sessions, its tool finds)."""
        if ctx is None:
            return None
        who = self.identities.current()
        return who.name if who is not None else None

    # --- tool search -----------------------------------------------------------------------------------

    def searching(self) -> bool:
        """Tool search for this request's client: `on`; or `auto` past the threshold, unless the client defers
        MCP tools behind a search of its own (Claude Code's ToolSearch lists them by name and loads a schema when
        the model asks): a second search inside it would hide every tool's name (`python -m bench.gateway
        --parts claude`)."""
        mode = self.options.tool_search
        if mode != "auto":
            return mode == "on"
        who = self.identities.current()
        if who is not None and who.program in DEFERS_TOOLS_ITSELF:
            return False
        return len(self.catalog.tools) > self.options.tool_search_threshold

    async def find(self, query: str, k: int, session: str | None) -> dict[str, Any]:
        toolsets = [toolset_of(s) for s in self.catalog.listings]
        if not toolsets:
            return {"tools": [], "note": "no upstream server is listed yet" + self.failures()}
        await self.registered()
        client = self.client(session)
        selection = await client.select_tools(query, toolsets, k=k, format="mcp", abstain=True)
        note = None
        if selection.abstained:  # never nothing when tools exist: the closest, said to fit poorly
            note = f"none of these fits well: {selection.reason or 'they fall below these toolsets own fit'}"
            selection = await client.select_tools(query, toolsets, k=k, format="mcp")
        names = [s.name for s in selection.selected if s.name in self.catalog.tools]
        self.found.setdefault(session, {}).update(dict.fromkeys(names, query))
        answer: dict[str, Any] = {"tools": [self.catalog.tools[n].definition for n in names]}
        if note:
            answer["note"] = note
        return answer

    def failures(self) -> str:
        """Why each server that could not be listed failed, and which are still starting: the end of an answer
        that names a missing tool."""
        starting = [f"; server {name!r} has not listed its tools yet (still starting)"
                    for name, server in self.servers.items() if not server.listed and name not in self.failed]
        return "".join(f"; {why}" for why in self.failed.values()) + "".join(starting)

    # --- the listing and each upstream call --------------------------------------------------------------

    def input_schema(self, name: str) -> dict[str, Any] | None:
        """The schema a 2026-07-28 HTTP call's `Mcp-Param-*` headers are checked against: the one listed for the
        tool. Without it the SDK runs a whole tools/list, every upstream's included, before each such call."""
        known = self.catalog.tools.get(name)
        return known.definition["inputSchema"] if known is not None else None  # own tools declare no headers

    def listed(self, tools: Sequence[Tool], session: str | None) -> list[Tool]:
        searching = self.searching()
        visible = self.catalog.always(self.options, {s.name: s.upstream.options for s in self.servers.values()})
        visible |= set(self.found.get(session, {})) if self.options.notify_list_changed else set()
        out = []
        for tool in tools:
            if tool.name in OWN_TOOLS:
                if searching or tool.name in REF_TOOLS:  # find_tools and call_tool only with tool search
                    out.append(tool)
                continue
            known = self.catalog.tools.get(tool.name)
            if searching and tool.name not in visible:
                continue
            schema = known.definition["inputSchema"] if known else tool.parameters
            out.append(tool.model_copy(update={"parameters": schema, "output_schema": None}))
        return out

    async def call(self, context: MiddlewareContext[mt.CallToolRequestParams],
                   call_next: CallNext[mt.CallToolRequestParams, ToolResult]) -> ToolResult:
        name = context.message.name
        known = await self.known(name)
        if known is None:
            raise ToolError(f"unknown tool {name!r}" + self.failures())
        server = self.servers[known.server]
        options = server.upstream.options
        intent, forwarded = intent_of(context.message.arguments or {}, known.own_intent)
        message = context.message.model_copy(update={"arguments": forwarded})
        started = time.perf_counter()
        try:
            result = await self._upstream_result(context, call_next, message, server)
        except TimeoutError:
            await server.forget_current()
            return _error(f"{known.server}: {known.upstream} did not answer within {options.timeout_s:g} s"
                          f"{_tail(server.stderr_tail())}")
        except Exception as exc:  # crashed, or could not start (an upstream's own error is a result, not this)
            await server.forget_current()  # so the next call starts it again
            log.warning("%s", _failure(known.server, exc, ""))
            return _error(_failure(known.server, exc, server.stderr_tail()))
        if isinstance(result, InputRequiredToolResult):  # the upstream asks the client first: not an output yet
            return result
        session = self.session(context.fastmcp_context)
        call = UpstreamCall(server=known.server, tool=name, arguments=forwarded, intent=intent)
        shaped = await shape(result.content, result.structured_content, result.is_error, call, options,
                             self.client(session))
        log.info("%s %s %s -> %s tokens, %s, %.0f ms", known.server, known.upstream, _count(shaped.tokens_in),
                 _count(shaped.tokens_out), shaped.note, (time.perf_counter() - started) * 1000)
        await self._learn(session, name, known.server)
        return ToolResult(content=shaped.content, structured_content=shaped.structured, is_error=shaped.is_error,
                          meta=result.meta)

    async def known(self, name: str) -> Listed | None:
        """The tool called, once known: a call that names no listed tool waits for the servers still starting
        (each at most its own timeout_s, as a call to it would) and is answered as soon as one lists it. A client
        that calls before listing (its list cached from an earlier run) is then never told that a tool of a server
        slow to start on a busy machine does not exist. A server that failed is not waited for: its retries run in
        the background and the answer says why it failed."""
        deadlines = {n: time.monotonic() + s.upstream.options.timeout_s for n, s in self.servers.items()}
        while name not in self.catalog.tools:
            now = time.monotonic()
            waits = [deadlines[n] - now for n in self.starting() if deadlines[n] > now]
            if not waits:
                break
            moved = self._moved
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(moved.wait(), min(waits))
        return self.catalog.tools.get(name)

    def starting(self) -> list[str]:
        """The servers whose first listing is under way: not listed yet, not failed."""
        return [name for name, task in self._listing.items()
                if not task.done() and not self.servers[name].listed and name not in self.failed]

    def _catalog_moved(self) -> None:
        self._moved.set()  # wakes each call waiting in `known`; the next wait is on a new event
        self._moved = asyncio.Event()

    async def _upstream_result(self, context: MiddlewareContext[mt.CallToolRequestParams],
                               call_next: CallNext[mt.CallToolRequestParams, ToolResult],
                               message: mt.CallToolRequestParams, server: UpstreamServer) -> ToolResult:
        """The upstream's answer within timeout_s; for a 2026-07-28 client, a question an old server asks comes
        back as an input-required round, and the client's retry takes the answer back to it (asking.py)."""
        timeout = server.upstream.options.timeout_s
        who = self.identities.current()
        if who is None or not who.modern:
            with anyio.fail_after(timeout):
                return await call_next(context.copy(message=message))
        ctx = context.fastmcp_context
        state = ctx.request_state if ctx is not None else None
        if state is not None and self.asking.knows(state):
            return await self.asking.resume(state, ctx.input_responses if ctx is not None else None, timeout)
        return await self.asking.start(server.client(), lambda: call_next(context.copy(message=message)), timeout,
                                       who.declared)

    async def _learn(self, session: str | None, name: str, server: str) -> None:
        """A tool that find_tools returned in this session and is now called: that query led to it."""
        query = self.found.get(session, {}).pop(name, None)
        if query is not None:
            try:
                await self.client(session).tools_feedback(query, [name], [toolset_of(server)])
            except (CtxsieveError, httpx.HTTPError, OSError) as exc:
                log.warning("feedback not recorded: %s", exc)


def _error(text: str) -> ToolResult:
    return ToolResult(content=[mt.TextContent(type="text", text=f"[ctxsieve gateway] {text}")], is_error=True)


def _failure(server: str, exc: BaseException, stderr: str) -> str:
    detail = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return f"server {server!r} failed: {type(exc).__name__}: {detail}{_tail(stderr)}"


def _tail(stderr: str) -> str:
    return f"; its stderr ends with:\n{stderr}" if stderr else ""


def _count(tokens: int | None) -> str:
    return "-" if tokens is None else str(tokens)

