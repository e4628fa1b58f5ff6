"""Tool-definition retrieval: toolsets registered once, each request gets only the tools it needs.

The registry (a Qdrant payload per tenant and toolset) is the source of truth; the index embeds what each
tool is for and resolves back through the registry. Scores: dense cosine between the request and the
tool, or the tool's nearest recorded query when closer (usage evidence, as in Tool2Vec), fused with BM25
over the same text; only the toolsets a request names are searched (default-deny).
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ingest.tokens import Tokenizer

from .errors import InvalidRequest, NotFound
from .lexical import Bm25Index
from .lru import Lru
from .ranking import rank_order, standardise
from .sieve import EmbeddingCache
from .store import QdrantStore
from .toolformats import Format, Tool, index_text, name_text, parse_toolset, render, serialized

TOOLSETS = "ctxsieve_toolsets"
FEEDBACK_PER_TOOL = 200


@dataclass
class Toolset:
    tenant: str
    name: str
    tools: list[Tool]
    feedback: dict[str, list[str]] = field(default_factory=dict)  # tool name -> recorded queries, oldest first
    tools_version: str = ""
    feedback_version: str = ""

    @property
    def version(self) -> str:
        return f"{self.tools_version}:{self.feedback_version}"


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, ensure_ascii=False).encode()).hexdigest()[:16]


@dataclass(frozen=True)
class Selected:
    name: str
    toolset: str
    score: float


@dataclass(frozen=True)
class Selection:
    tools: list[dict[str, Any]]
    selected: list[Selected]
    tokens_all: int
    tokens_selected: int


@dataclass
class _Prepared:
    """Everything a selection over a set of toolsets needs, built once per version of those toolsets."""

    owners: list[tuple[str, Tool]]  # (toolset, tool) in a fixed order
    tool_vectors: np.ndarray  # what the tool is for (name, description, parameters)
    name_vectors: np.ndarray  # "name: description" alone
    evidence_vectors: np.ndarray  # recorded queries and examples
    evidence_owner: np.ndarray  # index into owners for each evidence row
    centroids: np.ndarray  # per tool: the normalised mean of its evidence (zero when it has none)
    lexical: Bm25Index
    name_rank: np.ndarray  # each tool's place in name order: the tie-break after the score
    tokens_all: dict[str, int] = field(default_factory=dict)  # per format: counting 5,000 tools costs ~0.5 s

    def nbytes(self) -> int:
        """About what it holds: the arrays and BM25, and ~1 KB a tool for its schema objects."""
        arrays = (self.tool_vectors, self.name_vectors, self.evidence_vectors, self.evidence_owner, self.centroids,
                  self.name_rank)
        return sum(int(a.nbytes) for a in arrays) + self.lexical.nbytes + 1024 * len(self.owners)


# Prepared toolsets kept in memory: 5,000 tools hold ~25 MB, so a handful of those or dozens of small sets.
PREPARED_BYTES = 128 << 20
MIN_EVIDENCE_POPULATION = 8  # tools with recorded queries before their evidence is judged among themselves


class ToolIndex:
    def __init__(self, store: QdrantStore, vectors: EmbeddingCache, tokenizer: Tokenizer,
                 dense_weight: float = 0.74) -> None:
        self.store = store
        self.vectors = vectors
        self.tokenizer = tokenizer
        self.dense_weight = dense_weight
        self._prepared: Lru[str, _Prepared] = Lru(64, PREPARED_BYTES, _Prepared.nbytes)
        self._write = threading.Lock()  # read-modify-write of a toolset payload (feedback) in this process
        self._parsed: dict[tuple[str, str], Toolset] = {}  # by (tenant, name); checked against the head's versions
        store.ensure_collection(TOOLSETS)

    # --- registry -----------------------------------------------------------------------------------

    # A toolset is three records: a small head (names the versions; read on every request), the tool
    # definitions (immutable, keyed by their version) and the recorded queries (rewritten on feedback),
    # so neither a selection nor a feedback call moves thousands of definitions around.
    @staticmethod
    def _key(tenant: str, name: str) -> str:
        return f"toolset:{tenant}:{name}"

    @staticmethod
    def _body_key(tenant: str, name: str, version: str) -> str:
        return f"toolset-body:{tenant}:{name}:{version}"

    @staticmethod
    def _feedback_key(tenant: str, name: str) -> str:
        return f"toolset-feedback:{tenant}:{name}"

    def put(self, tenant: str, name: str, definitions: list[Any]) -> Toolset:
        tools = parse_toolset(definitions)
        with self._write:
            try:
                old = self.get(tenant, name).feedback
            except NotFound:
                old = {}
            kept = {t.name: old[t.name] for t in tools if t.name in old}
            self.vectors.passages([*map(index_text, tools), *map(name_text, tools)])  # only new or changed
            definitions = [t.as_dict() for t in tools]
            toolset = Toolset(tenant, name, tools, kept, _digest(definitions), _digest(kept))
            self.store.put_payload(TOOLSETS, self._body_key(tenant, name, toolset.tools_version),
                                   {"tenant": tenant, "kind": "body", "tools": definitions})
            self.store.put_payload(TOOLSETS, self._feedback_key(tenant, name),
                                   {"tenant": tenant, "kind": "feedback", "feedback": kept})
            previous = self._head(tenant, name)
            self._save_head(toolset)
            if previous and previous["tools_version"] != toolset.tools_version:
                self.store.delete_keys(TOOLSETS, [self._body_key(tenant, name, previous["tools_version"])])
        return toolset

    def _head(self, tenant: str, name: str) -> dict[str, Any] | None:
        return self.store.get_payloads(TOOLSETS, [self._key(tenant, name)]).get(self._key(tenant, name))

    def _save_head(self, toolset: Toolset) -> None:
        self.store.put_payload(TOOLSETS, self._key(toolset.tenant, toolset.name), {
            "tenant": toolset.tenant, "kind": "head", "name": toolset.name, "count": len(toolset.tools),
            "tools_version": toolset.tools_version, "feedback_version": toolset.feedback_version})

    def get(self, tenant: str, name: str) -> Toolset:
        return self.get_many(tenant, [name])[0]

    def get_many(self, tenant: str, names: Sequence[str]) -> list[Toolset]:
        keys = [self._key(tenant, n) for n in names]
        heads = self.store.get_payloads(TOOLSETS, keys)
        missing = [n for n, k in zip(names, keys, strict=True) if k not in heads]
        if missing:
            raise NotFound(f"unknown toolset(s): {', '.join(missing)}")
        return [self._from_head(tenant, heads[k]) for k in keys]

    def _from_head(self, tenant: str, head: dict[str, Any]) -> Toolset:
        name = head["name"]
        cached = self._parsed.get((tenant, name))
        if cached is not None and cached.version == f"{head['tools_version']}:{head['feedback_version']}":
            return cached
        if cached is not None and cached.tools_version == head["tools_version"]:
            tools = cached.tools
        else:
            body = self.store.get_payloads(TOOLSETS, [self._body_key(tenant, name, head["tools_version"])])
            tools = [Tool.from_dict(t) for t in next(iter(body.values()), {}).get("tools", [])]
        feedback = self.store.get_payloads(TOOLSETS, [self._feedback_key(tenant, name)])
        recorded = next(iter(feedback.values()), {}).get("feedback") or {}
        toolset = Toolset(tenant, name, tools, recorded, head["tools_version"], head["feedback_version"])
        self._parsed[(tenant, name)] = toolset
        return toolset

    def all(self, tenant: str) -> list[Toolset]:
        heads = [p for p in self.store.scroll_payloads(TOOLSETS, "tenant", tenant) if p.get("kind") == "head"]
        return sorted((self._from_head(tenant, h) for h in heads), key=lambda t: t.name)

    def delete(self, tenant: str, name: str) -> None:
        head = self._head(tenant, name)
        if head is None:
            raise NotFound(f"unknown toolset(s): {name}")
        self.store.delete_keys(TOOLSETS, [self._key(tenant, name)])  # unlisted first
        self.store.delete_keys(TOOLSETS, [self._body_key(tenant, name, head["tools_version"]),
                                          self._feedback_key(tenant, name)])
        self._parsed.pop((tenant, name), None)

    def tokens(self, tools: Sequence[Tool], fmt: Format) -> int:
        return sum(self.tokenizer.count(serialized(render(t, fmt))) for t in tools)

    # --- selection ----------------------------------------------------------------------------------

    def select(self, tenant: str, query: str, toolsets: Sequence[str], k: int, always: Sequence[str],
               fmt: Format, min_score: float | None, max_tokens: int | None) -> Selection:
        if not toolsets:
            raise InvalidRequest("name at least one toolset: a request sees only the toolsets it names")
        sets = self.get_many(tenant, sorted(set(toolsets)))
        prepared = self._prepare(sets)
        dense, fused = self._scores(prepared, query)
        order = rank_order(fused, prepared.name_rank)
        chosen = self._choose(prepared, order, dense, k, always, fmt, min_score, max_tokens)
        tools = [render(prepared.owners[i][1], fmt) for i in chosen]
        selected = [Selected(prepared.owners[i][1].name, prepared.owners[i][0], round(float(dense[i]), 4))
                    for i in chosen]
        if fmt not in prepared.tokens_all:
            prepared.tokens_all[fmt] = self.tokens([tool for _, tool in prepared.owners], fmt)
        return Selection(tools, selected, prepared.tokens_all[fmt], sum(self._cost(prepared, i, fmt) for i in chosen))

    def _cost(self, prepared: _Prepared, i: int, fmt: Format) -> int:
        return self.tokenizer.count(serialized(render(prepared.owners[i][1], fmt)))

    def _choose(self, prepared: _Prepared, order: list[int], dense: np.ndarray, k: int, always: Sequence[str],
                fmt: Format, min_score: float | None, max_tokens: int | None) -> list[int]:
        by_name: dict[str, int] = {}
        for i in order:
            by_name.setdefault(prepared.owners[i][1].name, i)
        unknown = [n for n in always if n not in by_name]
        if unknown:
            raise NotFound(f"'always' names tools that are not in the named toolsets: {', '.join(unknown)}")
        chosen = [by_name[n] for n in dict.fromkeys(always)]
        used = sum(self._cost(prepared, i, fmt) for i in chosen)
        names = {prepared.owners[i][1].name for i in chosen}
        picked = 0
        for i in order:
            if picked >= k:
                break
            name = prepared.owners[i][1].name
            if name in names or (min_score is not None and dense[i] < min_score):
                continue
            cost = self._cost(prepared, i, fmt)
            if max_tokens is not None and used + cost > max_tokens:
                continue
            chosen.append(i)
            names.add(name)
            used += cost
            picked += 1
        return chosen

    def _scores(self, prepared: _Prepared, query: str) -> tuple[np.ndarray, np.ndarray]:
        """Dense: the tool's own text, or usage evidence when it stands out more; fused with BM25.

        Evidence scores average the nearest recorded query and the centroid of all of them (Tool2Vec's
        usage embedding): one odd query cannot capture a tool, and one example is still used whole.
        Query-to-query cosines run higher than query-to-tool ones (e5's baseline), so evidence is compared
        as a z-score among the tools that have evidence, against the tool text's z-score among all tools:
        compared raw, every tool with any evidence outranked the right tool without it (Seal-Tools R@5
        0.900 zero-shot fell to 0.644 with feedback; 0.873 this way, and MetaTool 0.853 -> 0.868).
        Returns the cosine used for min_score and the fused score used for ranking.
        """
        if not prepared.owners:
            return np.zeros(0), np.zeros(0)
        q = self.vectors.query(query)
        dense = (prepared.tool_vectors @ q + prepared.name_vectors @ q) / 2
        dense_z = standardise(dense.astype(np.float64))
        if len(prepared.evidence_owner):
            nearest = np.full(len(prepared.owners), -1.0)
            np.maximum.at(nearest, prepared.evidence_owner, prepared.evidence_vectors @ q)
            has = nearest > -1.0
            evidence = (nearest + prepared.centroids @ q) / 2
            if has.sum() >= MIN_EVIDENCE_POPULATION:
                evidence_z = np.zeros_like(dense_z)
                evidence_z[has] = standardise(evidence[has])
            else:  # too few tools with evidence for a z-score: put the cosine on the tool text's scale
                std = float(dense.std())
                evidence_z = (evidence - float(dense.mean())) / (std if std > 0 else 1.0)
            dense_z = np.where(has, np.maximum(dense_z, evidence_z), dense_z)
            dense = np.where(has, np.maximum(dense, evidence), dense)
        w = self.dense_weight
        return dense, w * dense_z + (1.0 - w) * standardise(prepared.lexical.scores(query))

    def _prepare(self, sets: list[Toolset]) -> _Prepared:
        key = "|".join(f"{s.name}@{s.version}" for s in sets) + f"|{sets[0].tenant}"
        prepared = self._prepared.get(key)
        if prepared is not None:
            return prepared
        owners = [(s.name, t) for s in sets for t in s.tools]
        evidence: list[str] = []
        evidence_owner: list[int] = []
        lexical_texts = []
        for index, (set_name, tool) in enumerate(owners):
            recorded = [*tool.examples, *self._feedback_of(sets, set_name, tool.name)]
            evidence.extend(recorded)
            evidence_owner.extend([index] * len(recorded))
            lexical_texts.append(index_text(tool) + "\n" + "\n".join(recorded))
        evidence_vectors = self.vectors.queries(evidence)
        owner = np.array(evidence_owner, dtype=np.int64)
        centroids = np.zeros((len(owners), self.vectors.embedder.dim), dtype=np.float32)
        np.add.at(centroids, owner, evidence_vectors)
        norms = np.linalg.norm(centroids, axis=1, keepdims=True)
        centroids /= np.where(norms == 0, 1.0, norms)
        prepared = _Prepared(
            owners, self.vectors.passages([index_text(t) for _, t in owners]),
            self.vectors.passages([name_text(t) for _, t in owners]), evidence_vectors, owner, centroids,
            Bm25Index.build(lexical_texts), np.argsort(np.argsort([t.name for _, t in owners], kind="stable")))
        return self._prepared.put(key, prepared)

    @staticmethod
    def _feedback_of(sets: list[Toolset], set_name: str, tool: str) -> list[str]:
        return next(s.feedback.get(tool, []) for s in sets if s.name == set_name)

    # --- learning from use --------------------------------------------------------------------------

    def record(self, tenant: str, query: str, used: Sequence[str], toolsets: Sequence[str]) -> int:
        with self._write:
            sets = self.get_many(tenant, sorted(set(toolsets)))
            names = {t.name for s in sets for t in s.tools}
            unknown = [u for u in used if u not in names]
            if unknown:
                raise NotFound(f"tools not in the named toolsets: {', '.join(unknown)}")
            recorded = 0
            for toolset in sets:
                present = {t.name for t in toolset.tools}
                for name in dict.fromkeys(used):
                    if name not in present:
                        continue
                    queries = [q for q in toolset.feedback.get(name, []) if q != query] + [query]
                    toolset.feedback[name] = queries[-FEEDBACK_PER_TOOL:]
                    recorded += 1
                self.store.put_payload(TOOLSETS, self._feedback_key(tenant, toolset.name),
                                       {"tenant": tenant, "kind": "feedback", "feedback": toolset.feedback})
                toolset.feedback_version = _digest(toolset.feedback)
                self._save_head(toolset)
            self.vectors.queries([query])
        return recorded
