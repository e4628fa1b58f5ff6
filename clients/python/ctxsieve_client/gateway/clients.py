"""Who a request comes from: the client whose upstream sessions, ctxsieve session and tool finds it uses.

An upstream's session lives as long as the client it serves, not as long as one request. What "a client" is
depends on the transport and the protocol era the client speaks:
- stdio: the gateway serves exactly one client (the process that started it), in either era: one identity for
  the gateway's whole life; its upstream sessions close with the gateway.
- streamable HTTP, session era: the connection (its `Mcp-Session-Id`); its upstream sessions close when the
  connection ends, as before.
- streamable HTTP, 2026-07-28: there is no session, so a client is its credential (the `Authorization` header)
  and the `clientInfo` its every request carries in `_meta`; its upstream sessions close after `client_idle_s`
  without a request. Two processes of the same client program with the same key share upstream sessions: give
  them different keys to keep them apart.

What a client may be asked (roots, sampling, elicitation) is what it declared: its `initialize` capabilities in
the session era, the capabilities each request carries in `_meta` in 2026-07-28. An upstream session is told it
may ask only that (upstreams.py), so a server that asks only clients able to answer (server-filesystem's roots)
never asks one that is not.
"""

from __future__ import annotations

import hashlib
import uuid
import weakref
from collections.abc import Hashable
from dataclasses import dataclass
from typing import Any, Literal

from fastmcp.server.dependencies import get_context, get_http_headers
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

Transport = Literal["stdio", "http"]
ASKABLE = ("roots", "sampling", "elicitation")  # a server's requests to its client, each a client capability


@dataclass(frozen=True)
class Who:
    key: Hashable  # what the upstream sessions are kept under
    name: str  # short and stable: the ctxsieve session (`gw-<name>`) and the log lines
    modern: bool  # speaks 2026-07-28: its upstream sessions negotiate that era too where the upstream can
    connection: Any | None  # session era over HTTP: the connection whose end closes what it opened
    idles: bool  # closed after client_idle_s without a request (no connection tells when it has gone)
    program: str | None = None  # the client's own name (its clientInfo), e.g. "claude-code"
    declared: frozenset[str] = frozenset()  # of ASKABLE: what it may be asked, as its capabilities say


class Identities:
    """The identity of each request's client, for the transport the gateway serves."""

    def __init__(self) -> None:
        self.transport: Transport = "stdio"
        self._process = uuid.uuid4().hex[:12]  # the one stdio client of this gateway process
        # session-era connections seen, told tools/list_changed when a late server's tools arrive (a 2026-07-28
        # client hears it on its listen stream instead); a closed one drops out by itself
        self.connections: weakref.WeakSet[Any] = weakref.WeakSet()

    def current(self) -> Who | None:
        """The client of the request being served (None outside a request: start-up, list changes)."""
        try:
            session = get_context().session
        except RuntimeError:
            return None
        connection = getattr(session, "_connection", None)
        if connection is None:
            return None
        modern = connection.protocol_version in MODERN_PROTOCOL_VERSIONS
        params = connection.client_params
        info = params.client_info if params is not None else None
        program = info.name if info is not None else None
        declared = declared_by(connection.client_capabilities)
        if not modern:
            self.connections.add(connection)
        if self.transport == "stdio":
            return Who(key="stdio", name=self._process, modern=modern, connection=None, idles=False, program=program,
                       declared=declared)
        if not modern:
            name = connection.session_id or f"c{id(connection):x}"
            return Who(key=connection, name=name, modern=False, connection=connection, idles=False, program=program,
                       declared=declared)
        credential = get_http_headers(include={"authorization"}).get("authorization", "")
        # what it declared is part of who it is: its upstream sessions were told what they may ask
        described = f"{credential}\n{program or ''}\n{info.version if info else ''}\n{' '.join(sorted(declared))}"
        digest = hashlib.sha256(described.encode("utf-8")).hexdigest()[:16]  # the credential is never kept
        return Who(key=("modern", digest), name=f"m{digest}", modern=True, connection=None, idles=True,
                   program=program, declared=declared)


def declared_by(capabilities: Any) -> frozenset[str]:
    """Which of ASKABLE a client's capabilities (an `mt.ClientCapabilities`, or None) include."""
    return frozenset(name for name in ASKABLE if getattr(capabilities, name, None) is not None)
