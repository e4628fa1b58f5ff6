"""The toolset registry's records as they are stored: a head per toolset (names its version), one point per tool
definition, one per recorded use (with the query's vector). Each record's key and payload are written here only.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import numpy as np

from ..store import Found, PointData
from .formats import Tool


@dataclass(frozen=True, kw_only=True)
class ToolsetHead:
    """Names the toolset's current version; written last, so a half-written version is never served."""

    tenant: str
    toolset: str
    version: str  # digest of the definitions
    count: int
    generation: str = ""  # new each time the toolset is created afresh: cached evidence never outlives a delete

    @staticmethod
    def key(tenant: str, toolset: str) -> str:
        return f"toolset:{tenant}:{toolset}"

    def point(self) -> PointData:
        return PointData(key=self.key(self.tenant, self.toolset), payload={
            "kind": "head", "tenant": self.tenant, "toolset": self.toolset, "version": self.version,
            "count": self.count, "generation": self.generation})

    @classmethod
    def of(cls, found: Found) -> ToolsetHead:
        p = found.payload
        return cls(tenant=p["tenant"], toolset=p["toolset"], version=p["version"], count=p.get("count", 0),
                   generation=p.get("generation", ""))


@dataclass(frozen=True, kw_only=True)
class ToolRecord:
    tenant: str
    toolset: str
    version: str
    index: int  # its place in the toolset as registered
    tool: Tool

    def point(self) -> PointData:
        key = f"tool:{self.tenant}:{self.toolset}:{self.version}:{self.index}"
        return PointData(key=key, payload={
            "kind": "tool", "tenant": self.tenant, "toolset": self.toolset, "version": self.version,
            "index": self.index, "definition": self.tool.as_dict()})

    @classmethod
    def of(cls, found: Found) -> ToolRecord:
        p = found.payload
        return cls(tenant=p["tenant"], toolset=p["toolset"], version=p["version"], index=p["index"],
                   tool=Tool.from_dict(p["definition"]))


@dataclass(frozen=True, kw_only=True)
class Recorded:
    """One recorded use: this query led to this tool (its vector embedded with the query prompt). One point per
    (toolset, tool, query): re-recording a use only refreshes its time."""

    tenant: str
    toolset: str
    tool: str
    query: str
    at: float
    vector: np.ndarray

    def point(self, vector_name: str) -> PointData:
        digest = hashlib.sha256(self.query.encode("utf-8", "surrogatepass")).hexdigest()
        return PointData(key=f"feedback:{self.tenant}:{self.toolset}:{self.tool}:{digest}",
                         dense={vector_name: self.vector}, payload={
                             "kind": "feedback", "tenant": self.tenant, "toolset": self.toolset, "tool": self.tool,
                             "query": self.query, "at": self.at})

    @classmethod
    def of(cls, found: Found, vector_name: str) -> Recorded:
        p = found.payload
        return cls(tenant=p["tenant"], toolset=p["toolset"], tool=p["tool"], query=p["query"], at=p["at"],
                   vector=found.dense[vector_name])
