"""What the gateway knows of the upstream tools: their exposed names, their definitions as the agent sees them
(with `intent`, without `outputSchema`), and their toolsets in ctxsieve, for tool search."""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..names import INTENT, INTENT_SCHEMA, exposed_names
from .config import Options

TOOLSET_PREFIX = "gateway."


@dataclass(frozen=True, kw_only=True)
class Listed:
    exposed: str
    server: str
    upstream: str  # the name the server knows it by
    definition: dict[str, Any]  # MCP format, as the agent sees it
    own_intent: bool  # the tool has an `intent` argument of its own: it is forwarded


def toolset_of(server: str) -> str:
    return f"{TOOLSET_PREFIX}{server}"


def as_listed(definition: Mapping[str, Any], exposed: str) -> dict[str, Any]:
    """An upstream definition as the gateway lists it: its exposed name, one more optional argument `intent`,
    and no `outputSchema` (the gateway cannot know before a call whether the output will be filtered, and a
    client rejects a result without the structured content a schema promises)."""
    listed = {k: copy.deepcopy(v) for k, v in definition.items() if k not in ("outputSchema", "output_schema")}
    listed["name"] = exposed
    schema = listed.get("inputSchema") or {"type": "object"}
    properties = schema.setdefault("properties", {})
    if INTENT not in properties:
        properties[INTENT] = dict(INTENT_SCHEMA)
    listed["inputSchema"] = schema
    return listed


class Catalog:
    """Rebuilt whole from the servers' listings (at start and when one says its tools changed)."""

    def __init__(self) -> None:
        self.tools: dict[str, Listed] = {}
        self.listings: dict[str, list[dict[str, Any]]] = {}

    def update(self, server: str, definitions: Sequence[Mapping[str, Any]]) -> None:
        self.listings[server] = [dict(d) for d in definitions]
        names = exposed_names({s: [d["name"] for d in defs] for s, defs in self.listings.items()})
        by_upstream = {(s, u): e for e, (s, u) in names.items()}
        self.tools = {}
        for s, defs in self.listings.items():
            for d in defs:
                exposed = by_upstream[(s, d["name"])]
                props = (d.get("inputSchema") or {}).get("properties") or {}
                self.tools[exposed] = Listed(exposed=exposed, server=s, upstream=d["name"],
                                             definition=as_listed(d, exposed), own_intent=INTENT in props)

    def exposed(self, server: str, upstream: str) -> str:
        return next((t.exposed for t in self.tools.values() if t.server == server and t.upstream == upstream),
                    upstream)

    def upstream_of(self, server: str, exposed: str) -> str | None:
        tool = self.tools.get(exposed)
        return tool.upstream if tool is not None and tool.server == server else None

    def toolset(self, server: str) -> list[dict[str, Any]]:
        """A server's tools as registered in ctxsieve: exposed names, upstream descriptions and schemas."""
        return [{**{k: v for k, v in d.items() if k not in ("outputSchema", "output_schema")},
                 "name": self.exposed(server, d["name"])} for d in self.listings.get(server, [])]

    def always(self, options: Options, per_server: Mapping[str, Options]) -> set[str]:
        """Tools listed even with tool search on: exposed or upstream names, top-level or per server."""
        wanted = set(options.always)
        out = set()
        for tool in self.tools.values():
            server_always = set(per_server[tool.server].always) if tool.server in per_server else set()
            if {tool.exposed, tool.upstream} & (wanted | server_always):
                out.add(tool.exposed)
        return out
