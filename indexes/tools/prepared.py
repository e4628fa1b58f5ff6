"""What a selection over some toolsets works on, built once per version of them and of their recorded uses: each
tool's vectors, the evidence of its examples and recorded uses (by the rule each toolset's own history chose,
feedback.py), and BM25 over its text; kept in memory by the bytes each holds.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..errors import NotFound
from ..lexical import Bm25Index
from ..lru import Lru
from .feedback import DEFAULT_RULE, FeedbackRule, ToolsetView, choose_rule, history_bucket, uses_for_choice
from .formats import Tool, index_text, name_text
from .registry import ToolRegistry, Toolset
from .scoring import Evidence, Judge, attribute, centroids, fit_signals

# Prepared toolsets kept in memory, by the bytes each holds (`Prepared.nbytes`): a few large ones or dozens of
# small ones.
PREPARED_BYTES = 128 << 20


@dataclass(frozen=True)
class ToolsetFit:
    """How well a request fits one of several toolsets searched together: its judge (calibrated on its own tools,
    as abstention's), the judged fit of its own near-misses (mean, sd), and its own BM25."""

    judge: Judge
    mean: float
    spread: float
    lexical: Bm25Index

    def standing(self, dense: np.ndarray, text: str) -> float:
        """The request's judged fit in this toolset, in sd of its near-misses above their mean."""
        signals = fit_signals(dense, self.lexical.scores(text), self.lexical.ceiling(text))
        return (self.judge.score(signals) - self.mean) / self.spread


@dataclass(kw_only=True)
class Prepared:
    """Everything a selection over a set of toolsets needs, built once per version of those toolsets."""

    owners: list[tuple[str, Tool]]  # (toolset, tool) in a fixed order
    tool_vectors: np.ndarray  # what the tool is for (name, description, parameters)
    name_vectors: np.ndarray  # "name: description" alone
    evidence_vectors: np.ndarray  # recorded queries and examples
    evidence_owner: np.ndarray  # index into owners for each evidence row
    evidence_weight: np.ndarray  # how much each row counts (scoring.WHOLE_WEIGHT for a multi-tool request)
    centroids: np.ndarray  # per tool: the normalised mean of its evidence (zero when it has none)
    lexical: Bm25Index
    name_rank: np.ndarray  # each tool's place in name order: the tie-break after the score
    lift: np.ndarray = field(default_factory=lambda: np.ones(0))  # per tool: its toolset's rule's lift
    rules: dict[str, FeedbackRule] = field(default_factory=dict)  # per toolset: the rule its history chose
    uses: dict[str, int] = field(default_factory=dict)  # per toolset: recorded requests
    tokens_all: dict[str, int] = field(default_factory=dict)  # per format: counting thousands of tools is slow
    judge: Judge | None = None  # abstention: calibrated the first time a request allows it
    groups: list[slice] = field(default_factory=list)  # each named toolset's rows, in owners' order
    group_of: np.ndarray = field(default_factory=lambda: np.zeros(0, np.int64))  # per tool: its toolset's number
    fits: list[ToolsetFit] | None = None  # several toolsets: each one's judge of fit, calibrated on first use

    def nbytes(self) -> int:
        """About what it holds: the arrays and BM25, and ~1 KB a tool for its schema objects."""
        arrays = (self.tool_vectors, self.name_vectors, self.evidence_vectors, self.evidence_owner,
                  self.evidence_weight, self.centroids,
                  self.name_rank)
        return sum(int(a.nbytes) for a in arrays) + self.lexical.nbytes + 1024 * len(self.owners)


class Preparer:
    """Builds `Prepared` from the registry and keeps the recent ones, with the feedback rule each toolset chose."""

    def __init__(self, registry: ToolRegistry, dense_weight: float, fixed_rule: FeedbackRule | None) -> None:
        self.registry = registry
        self.vectors = registry.vectors
        self.dense_weight = dense_weight
        self.fixed_rule = fixed_rule  # None: each toolset's history chooses (the bench fixes one to compare)
        self._prepared: Lru[str, Prepared] = Lru(64, PREPARED_BYTES, Prepared.nbytes)
        # The feedback rule each toolset's history chose, by (tenant, toolset, version, generation, history bucket).
        self._rules: Lru[tuple[str, str, str, str, int], FeedbackRule] = Lru(1024)

    def prepare(self, tenant: str, names: list[str]) -> Prepared:
        """Built once per (definitions, recorded uses) of the named toolsets: the heads and a count of recorded
        uses say whether what is in memory is current; a new recorded use reloads the evidence."""
        heads = self.registry.heads(tenant, names)
        missing = [n for n in names if n not in heads]
        if missing:
            raise NotFound(f"unknown toolset(s): {', '.join(missing)}")
        key = "|".join(f"{n}@{heads[n].version}@{heads[n].generation}" for n in names) + \
            f"|{tenant}|{self.registry.feedback_count(tenant, names)}"
        prepared = self._prepared.get(key)
        if prepared is not None:
            return prepared
        sets = [self.registry.from_head(tenant, heads[n], with_feedback=True) for n in names]
        owners = [(s.name, t) for s in sets for t in s.tools]
        bounds = np.cumsum([0, *(len(s.tools) for s in sets)])
        groups = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        tool_vectors = self.vectors.passages([index_text(t) for _, t in owners])
        name_vectors = self.vectors.passages([name_text(t) for _, t in owners])
        evidence, lift, rules = self._evidence(tenant, sets, owners, tool_vectors, name_vectors)
        lexical_texts = ["\n".join([index_text(tool), *evidence.words.get(i, [])])
                         for i, (_, tool) in enumerate(owners)]
        prepared = Prepared(
            owners=owners, tool_vectors=tool_vectors, name_vectors=name_vectors, evidence_vectors=evidence.vectors,
            evidence_owner=evidence.owner, evidence_weight=evidence.weight,
            centroids=centroids(evidence, len(owners)), lexical=Bm25Index.build(lexical_texts),
            name_rank=np.argsort(np.argsort([t.name for _, t in owners], kind="stable")), lift=lift,
            rules=rules, groups=groups,
            group_of=np.concatenate([np.full(len(s.tools), g, np.int64) for g, s in enumerate(sets)])
            if sets else np.zeros(0, np.int64),
            uses={s.name: len({r.query for r in s.feedback}) for s in sets})
        return self._prepared.put(key, prepared)

    def _evidence(self, tenant: str, sets: Sequence[Toolset], owners: Sequence[tuple[str, Tool]],
                  tool_vectors: np.ndarray, name_vectors: np.ndarray
                  ) -> tuple[Evidence, np.ndarray, dict[str, FeedbackRule]]:
        """A tool's examples and the recorded uses of these toolsets, as rows, each toolset's uses by the rule its
        own history chose (`feedback.choose_rule`); and each tool's lift by that rule."""
        dim = self.vectors.embedder.dim
        lift = np.ones(len(owners))
        rules: dict[str, FeedbackRule] = {}
        parts: list[Evidence] = []
        start = 0
        for toolset in sets:
            rows = slice(start, start + len(toolset.tools))
            start += len(toolset.tools)
            position = {tool.name: i for i, tool in enumerate(toolset.tools)}
            grouped: dict[str, tuple[list[int], np.ndarray]] = {}
            for r in toolset.feedback:
                grouped.setdefault(r.query, ([], r.vector))[0].append(position[r.tool])
            uses = [(query, tools) for query, (tools, _) in grouped.items()]
            vectors = np.stack([v for _, v in grouped.values()]) if grouped else np.zeros((0, dim), np.float32)
            tv, nv = tool_vectors[rows], name_vectors[rows]
            rule = rules[toolset.name] = self._rule(tenant, toolset, uses, vectors, tv, nv)
            lift[rows] = rule.lift
            if not rule.use:  # the history chose to be ignored; the definitions' own examples still count
                uses, vectors = [], vectors[:0]
            examples = [(example, [i]) for i, tool in enumerate(toolset.tools) for example in tool.examples]
            if examples:
                uses = examples + uses
                vectors = np.concatenate([self.vectors.queries([text for text, _ in examples]), vectors])
            local = attribute(uses, vectors, self.vectors.queries, _cosines(tv, nv), dim, lend=rule.lend)
            parts.append(Evidence(vectors=local.vectors, owner=local.owner + rows.start, weight=local.weight,
                                  words={t + rows.start: w for t, w in local.words.items()}))
        return _joined(parts, dim), lift, rules

    def _rule(self, tenant: str, toolset: Toolset, uses: list[tuple[str, list[int]]], vectors: np.ndarray,
              tool_vectors: np.ndarray, name_vectors: np.ndarray) -> FeedbackRule:
        """The rule this toolset's own recorded uses choose, chosen again each time they double."""
        if self.fixed_rule is not None:
            return self.fixed_rule
        bucket = history_bucket(len(uses))
        if bucket < 0:
            return DEFAULT_RULE
        key = (tenant, toolset.name, toolset.version, toolset.generation, bucket)
        chosen = self._rules.get(key)
        if chosen is None:
            n = uses_for_choice(bucket)
            view = ToolsetView(cosines=_cosines(tool_vectors, name_vectors),
                               texts=[index_text(t) for t in toolset.tools], dense_weight=self.dense_weight)
            chosen = self._rules.put(key, choose_rule(uses[:n], vectors[:n], self.vectors.queries, view)[0])
        return chosen


def _cosines(tool_vectors: np.ndarray, name_vectors: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    """A request vector's cosine with each tool: the mean of its tool text's and its "name: description"'s."""
    return lambda v: (tool_vectors @ v + name_vectors @ v) / 2


def _joined(parts: Sequence[Evidence], dim: int) -> Evidence:
    if not parts:
        return Evidence(vectors=np.zeros((0, dim), np.float32), owner=np.zeros(0, np.int64), weight=np.zeros(0),
                        words={})
    return Evidence(vectors=np.concatenate([p.vectors for p in parts]), owner=np.concatenate([p.owner for p in parts]),
                    weight=np.concatenate([p.weight for p in parts]),
                    words={t: w for p in parts for t, w in p.words.items()})
