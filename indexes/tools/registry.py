"""The toolset registry: toolsets and their recorded uses as points in the store, the source of truth that
selection (index.py) resolves through.

A head per toolset names its version, one point per tool definition and one per recorded query (with its
vector; records.py writes each), so neither a PUT nor feedback rewrites a shared record and two replicas writing
at once both keep what they wrote.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ..errors import NotFound
from ..lru import Lru
from ..store import MatchAny, SpaceSpec, Store, layout, scroll_all, where
from ..vectors import EmbeddingCache
from .formats import Tool, index_text, name_text, parse_toolset
from .records import Recorded, ToolRecord, ToolsetHead
from .scoring import digest

FEEDBACK_PER_TOOL = 200


@dataclass
class Toolset:
    tenant: str
    name: str
    tools: list[Tool]
    version: str  # of the definitions
    generation: str = ""  # new each time the toolset is created afresh: cached evidence never outlives a delete
    feedback: list[Recorded] = field(default_factory=list)


class ToolRegistry:
    """Toolsets put, read, listed and deleted by (tenant, name), and the uses recorded against their tools."""

    def __init__(self, store: Store, vectors: EmbeddingCache) -> None:
        self.store = store
        self.vectors = vectors
        self.space = layout.toolsets(vectors.vector)
        store.ensure(SpaceSpec(name=self.space, dense={vectors.vector: vectors.embedder.dim},
                               indexes={"tenant": "tenant", "toolset": "keyword", "kind": "keyword",
                                        "version": "keyword"}))
        # Parsed definitions by (tenant, toolset, version): a version's tools never change.
        self._parsed: Lru[tuple[str, str, str], list[Tool]] = Lru(256)

    def put(self, tenant: str, name: str, definitions: list[Any]) -> Toolset:
        """Replace the toolset: the new version's tools, then the head naming it, then the old version goes."""
        return self.put_tools(tenant, name, parse_toolset(definitions))

    def put_tools(self, tenant: str, name: str, tools: list[Tool]) -> Toolset:
        self.vectors.passages([*map(index_text, tools), *map(name_text, tools)])  # only new or changed
        version = digest([t.as_dict() for t in tools])
        previous = self.heads(tenant, [name]).get(name)
        generation = previous.generation if previous else uuid.uuid4().hex
        self.store.upsert(self.space, [ToolRecord(tenant=tenant, toolset=name, version=version, index=i,
                                                  tool=t).point() for i, t in enumerate(tools)])
        self.store.upsert(self.space, [ToolsetHead(tenant=tenant, toolset=name, version=version, count=len(tools),
                                                   generation=generation).point()])
        if previous and previous.version != version:
            self.store.delete_where(self.space, where(tenant=tenant, toolset=name, kind="tool",
                                                      version=previous.version))
        return Toolset(tenant, name, tools, version, generation)

    def heads(self, tenant: str, names: Sequence[str]) -> dict[str, ToolsetHead]:
        found = self.store.get(self.space, [ToolsetHead.key(tenant, n) for n in names])
        return {head.toolset: head for head in map(ToolsetHead.of, found.values())}

    def get(self, tenant: str, name: str) -> Toolset:
        return self.get_many(tenant, [name])[0]

    def get_many(self, tenant: str, names: Sequence[str], with_feedback: bool = False) -> list[Toolset]:
        heads = self.heads(tenant, names)
        missing = [n for n in names if n not in heads]
        if missing:
            raise NotFound(f"unknown toolset(s): {', '.join(missing)}")
        return [self.from_head(tenant, heads[n], with_feedback) for n in names]

    def from_head(self, tenant: str, head: ToolsetHead, with_feedback: bool) -> Toolset:
        name, version = head.toolset, head.version
        cached = self._parsed.get((tenant, name, version))
        if cached is None:
            condition = where(tenant=tenant, toolset=name, kind="tool", version=version)
            records = sorted(map(ToolRecord.of, scroll_all(self.store, self.space, condition)), key=lambda r: r.index)
            cached = self._parsed.put((tenant, name, version), [r.tool for r in records])
        toolset = Toolset(tenant, name, cached, version, head.generation)
        if with_feedback:
            toolset.feedback = self._feedback(tenant, name, {t.name for t in cached})
        return toolset

    def _feedback(self, tenant: str, name: str, tools: set[str]) -> list[Recorded]:
        """The latest recorded queries of each tool (at most FEEDBACK_PER_TOOL), oldest first."""
        points = scroll_all(self.store, self.space, where(tenant=tenant, toolset=name, kind="feedback"),
                            vectors=(self.vectors.vector,))
        recorded = sorted((r for r in (Recorded.of(p, self.vectors.vector) for p in points) if r.tool in tools),
                          key=lambda r: (r.at, r.query))
        kept: dict[str, list[Recorded]] = {}
        for r in reversed(recorded):
            if len(kept.setdefault(r.tool, [])) < FEEDBACK_PER_TOOL:
                kept[r.tool].append(r)
        return sorted((r for rs in kept.values() for r in rs), key=lambda r: (r.at, r.query))

    def feedback_count(self, tenant: str, names: Sequence[str]) -> int:
        return self.store.count(self.space, where(tenant=tenant, kind="feedback").and_(
            MatchAny("toolset", tuple(names))))

    def all(self, tenant: str) -> list[Toolset]:
        heads = scroll_all(self.store, self.space, where(tenant=tenant, kind="head"))
        return sorted((self.from_head(tenant, ToolsetHead.of(h), False) for h in heads), key=lambda t: t.name)

    def delete(self, tenant: str, name: str) -> None:
        if name not in self.heads(tenant, [name]):
            raise NotFound(f"unknown toolset(s): {name}")
        self.store.delete(self.space, [ToolsetHead.key(tenant, name)])  # unlisted first
        self.store.delete_where(self.space, where(tenant=tenant, toolset=name))

    # --- learning from use --------------------------------------------------------------------------

    def record(self, tenant: str, query: str, used: Sequence[str], toolsets: Sequence[str]) -> int:
        return self.record_many(tenant, [(query, used)], toolsets)

    def record_many(self, tenant: str, uses: Sequence[tuple[str, Sequence[str]]], toolsets: Sequence[str]) -> int:
        """One point per (toolset, tool, query): re-recording a use only refreshes its time. Every use is
        checked before any is written, and the queries are embedded in one batch."""
        sets = self.get_many(tenant, sorted(set(toolsets)))
        names = {t.name for s in sets for t in s.tools}
        unknown = sorted({u for _, used in uses for u in used if u not in names})
        if unknown:
            raise NotFound(f"tools not in the named toolsets: {', '.join(unknown)}")
        vectors = self.vectors.queries([query for query, _ in uses])
        now = time.time()
        points = [Recorded(tenant=tenant, toolset=s.name, tool=name, query=query, at=now, vector=vector
                           ).point(self.vectors.vector)
                  for (query, used), vector in zip(uses, vectors, strict=True)
                  for s in sets for name in dict.fromkeys(used) if name in {t.name for t in s.tools}]
        self.store.upsert(self.space, points)
        return len(points)
