"""Tool-definition retrieval: toolsets registered once, each request gets only the tools it needs.

The registry is points in the store: a head per toolset (names its version), one point per tool definition
and one per recorded query (with its vector), so neither a PUT nor feedback rewrites a shared record and two
replicas writing at once both keep what they wrote. The index embeds what each tool is for and resolves back
through the registry. Scores: dense cosine between the request and the
tool, or the tool's nearest recorded query when closer (usage evidence, as in Tool2Vec), fused with BM25
over the same text; only the toolsets a request names are searched (default-deny).
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ctxsieve.ingest.tokens import Tokenizer

from ..errors import InvalidRequest, NotFound
from ..intents import split_intents
from ..lexical import Bm25Index
from ..lru import Lru
from ..ranking import interleave, rank_order, standardise
from ..store import MatchAny, SpaceSpec, Store, layout, scroll_all, where
from ..toolformats import Format, Tool, index_text, name_text, parse_toolset, render, serialized
from ..vectors import EmbeddingCache
from .feedback import DEFAULT_RULE, FeedbackRule, ToolsetView, choose_rule, history_bucket, uses_for_choice
from .records import Recorded, ToolRecord, ToolsetHead
from .request import focus
from .scoring import (
    INTENT_GATE_MIN_TOOLS,
    INTENT_SURE_SD,
    MARGIN_MIN_TOOLS,
    TOOL_DENSE_WEIGHT,
    TOOLSET_FIT_WEIGHT,
    Evidence,
    Judge,
    attribute,
    calibrate,
    calibration_asks,
    centroids,
    digest,
    fit_signals,
    fuse_tool_scores,
    nearest_evidence,
    without,
)

FEEDBACK_PER_TOOL = 200
# Prepared toolsets kept in memory, by the bytes each holds (`_Prepared.nbytes`): a few large ones or dozens of
# small ones.
PREPARED_BYTES = 128 << 20


@dataclass
class Toolset:
    tenant: str
    name: str
    tools: list[Tool]
    version: str  # of the definitions
    generation: str = ""  # new each time the toolset is created afresh: cached evidence never outlives a delete
    feedback: list[Recorded] = field(default_factory=list)


@dataclass(frozen=True, kw_only=True)
class SelectParams:
    """What a selection asks for, beyond the request text and the toolsets it may see."""

    k: int = 5
    always: Sequence[str] = ()
    format: Format = "openai"
    min_score: float | None = None
    max_tokens: int | None = None
    abstain: bool = False


@dataclass(frozen=True)
class Selected:
    name: str
    toolset: str
    score: float


@dataclass(frozen=True, kw_only=True)
class Selection:
    tools: list[dict[str, Any]]
    selected: list[Selected]
    tokens_all: int
    tokens_selected: int
    abstained: bool = False
    reason: str | None = None


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


@dataclass(frozen=True)
class _Scored:
    """One request text's cosines and BM25 scores over the prepared tools."""

    text: str
    dense: np.ndarray
    lexical: np.ndarray


@dataclass(kw_only=True)
class _Prepared:
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


class ToolIndex:
    def __init__(self, store: Store, vectors: EmbeddingCache, tokenizer: Tokenizer,
                 dense_weight: float = TOOL_DENSE_WEIGHT, feedback_rule: FeedbackRule | None = None) -> None:
        self.store = store
        self.fixed_rule = feedback_rule  # None: each toolset's history chooses (the bench fixes one to compare)
        self.vectors = vectors
        self.tokenizer = tokenizer
        self.dense_weight = dense_weight
        self.space = layout.toolsets(vectors.vector)
        store.ensure(SpaceSpec(name=self.space, dense={vectors.vector: vectors.embedder.dim},
                               indexes={"tenant": "tenant", "toolset": "keyword", "kind": "keyword",
                                        "version": "keyword"}))
        self._prepared: Lru[str, _Prepared] = Lru(64, PREPARED_BYTES, _Prepared.nbytes)
        # Parsed definitions by (tenant, toolset, version): a version's tools never change.
        self._parsed: Lru[tuple[str, str, str], list[Tool]] = Lru(256)
        # The feedback rule each toolset's history chose, by (tenant, toolset, version, generation, history bucket).
        self._rules: Lru[tuple[str, str, str, str, int], FeedbackRule] = Lru(1024)

    # --- registry -----------------------------------------------------------------------------------

    def put(self, tenant: str, name: str, definitions: list[Any]) -> Toolset:
        """Replace the toolset: the new version's tools, then the head naming it, then the old version goes."""
        return self.put_tools(tenant, name, parse_toolset(definitions))

    def put_tools(self, tenant: str, name: str, tools: list[Tool]) -> Toolset:
        self.vectors.passages([*map(index_text, tools), *map(name_text, tools)])  # only new or changed
        version = digest([t.as_dict() for t in tools])
        previous = self._heads(tenant, [name]).get(name)
        generation = previous.generation if previous else uuid.uuid4().hex
        self.store.upsert(self.space, [ToolRecord(tenant=tenant, toolset=name, version=version, index=i,
                                                  tool=t).point() for i, t in enumerate(tools)])
        self.store.upsert(self.space, [ToolsetHead(tenant=tenant, toolset=name, version=version, count=len(tools),
                                                   generation=generation).point()])
        if previous and previous.version != version:
            self.store.delete_where(self.space, where(tenant=tenant, toolset=name, kind="tool",
                                                      version=previous.version))
        return Toolset(tenant, name, tools, version, generation)

    def _heads(self, tenant: str, names: Sequence[str]) -> dict[str, ToolsetHead]:
        found = self.store.get(self.space, [ToolsetHead.key(tenant, n) for n in names])
        return {head.toolset: head for head in map(ToolsetHead.of, found.values())}

    def get(self, tenant: str, name: str) -> Toolset:
        return self.get_many(tenant, [name])[0]

    def get_many(self, tenant: str, names: Sequence[str], with_feedback: bool = False) -> list[Toolset]:
        heads = self._heads(tenant, names)
        missing = [n for n in names if n not in heads]
        if missing:
            raise NotFound(f"unknown toolset(s): {', '.join(missing)}")
        return [self._from_head(tenant, heads[n], with_feedback) for n in names]

    def _from_head(self, tenant: str, head: ToolsetHead, with_feedback: bool) -> Toolset:
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
        return sorted((self._from_head(tenant, ToolsetHead.of(h), False) for h in heads), key=lambda t: t.name)

    def delete(self, tenant: str, name: str) -> None:
        if name not in self._heads(tenant, [name]):
            raise NotFound(f"unknown toolset(s): {name}")
        self.store.delete(self.space, [ToolsetHead.key(tenant, name)])  # unlisted first
        self.store.delete_where(self.space, where(tenant=tenant, toolset=name))

    def tokens(self, tools: Sequence[Tool], fmt: Format) -> int:
        return sum(self.tokenizer.count(serialized(render(t, fmt))) for t in tools)

    # --- selection ----------------------------------------------------------------------------------

    def select(self, tenant: str, query: str, toolsets: Sequence[str], params: SelectParams) -> Selection:
        if not toolsets:
            raise InvalidRequest("name at least one toolset: a request sees only the toolsets it names")
        prepared = self._prepare(tenant, sorted(set(toolsets)))
        dense, order, whole = self._ranked(prepared, query)
        reason = self._no_fit(prepared, order[0] if order else 0, whole) if params.abstain else None
        fmt = params.format
        chosen = self._choose(prepared, order, dense, params if reason is None else replace(params, k=0))
        tools = [render(prepared.owners[i][1], fmt) for i in chosen]
        selected = [Selected(prepared.owners[i][1].name, prepared.owners[i][0], round(float(dense[i]), 4))
                    for i in chosen]
        if fmt not in prepared.tokens_all:
            prepared.tokens_all[fmt] = self.tokens([tool for _, tool in prepared.owners], fmt)
        return Selection(tools=tools, selected=selected, tokens_all=prepared.tokens_all[fmt],
                         tokens_selected=sum(self._cost(prepared, i, fmt) for i in chosen),
                         abstained=reason is not None, reason=reason)

    def _no_fit(self, prepared: _Prepared, top: int, whole: _Scored) -> str | None:
        """Why no tool fits, or None when one does: the request's fit signals judged against these toolsets'
        own hits and near-misses (calibrated from their tools, not one global figure: cosine scales and how
        much tools share words differ by toolset)."""
        if not prepared.owners:
            return "the named toolsets have no tools"
        if prepared.judge is None:
            prepared.judge = self._calibrate(prepared)
        fit = fit_signals(whole.dense, whole.lexical, prepared.lexical.ceiling(whole.text))
        if prepared.judge.fits(fit):
            return None
        cosine, margin, lexical = (float(x) for x in fit)
        stands = f", stands {margin:.1f} sd above the rest" if len(prepared.owners) >= MARGIN_MIN_TOOLS else ""
        return (f"no tool fits: the closest, {prepared.owners[top][1].name}, has cosine {cosine:.3f}{stands} and "
                f"the best lexical match carries {lexical:.0%} of the request's words; judged "
                f"{prepared.judge.score(fit):.2f}, below {prepared.judge.threshold:.2f}, the near-misses of these "
                "toolsets' own tools for each other")

    def _calibrate(self, prepared: _Prepared) -> Judge:
        """A sample of tools' descriptions asked as requests, each once with its own tool (a hit) and once
        without it (a near-miss: what a request scores when the tool it needs is missing)."""
        hits, misses = self._asks(prepared, slice(0, len(prepared.owners)), prepared.lexical,
                                  lambda text, v: self._scores(prepared, text, v)[0])
        return calibrate(hits, misses)

    def _asks(self, prepared: _Prepared, rows: slice, lexical: Bm25Index,
              dense: Callable[[str, np.ndarray], np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        """The fit signals of the calibration asks of these rows' tools: with their own tool, and without it."""
        sample, texts = calibration_asks([tool for _, tool in prepared.owners[rows]])
        hits, misses = [], []
        for i, text, vector in zip(sample, texts, self.vectors.queries(texts), strict=True):
            cosines, scores = dense(text, vector), lexical.scores(text)
            ceiling = lexical.ceiling(text)
            hits.append(fit_signals(cosines, scores, ceiling))
            misses.append(fit_signals(without(cosines, [i]), without(scores, [i]), ceiling))
        return np.array(hits), np.array(misses)

    def _standing(self, prepared: _Prepared, dense: np.ndarray, text: str) -> np.ndarray:
        """Per named toolset, how well the request fits it (`ToolsetFit.standing`): several toolsets searched
        together are weighed by it, so a large toolset of look-alike tools does not crowd out a small one that
        fits (`python -m bench.tools_tune --gateway`)."""
        if prepared.fits is None:
            prepared.fits = [self._toolset_fit(prepared, rows) for rows in prepared.groups]
        return np.array([fit.standing(dense[rows], text) for fit, rows in zip(prepared.fits, prepared.groups,
                                                                             strict=True)])

    def _toolset_fit(self, prepared: _Prepared, rows: slice) -> ToolsetFit:
        lexical = Bm25Index.build([index_text(tool) for _, tool in prepared.owners[rows]])
        hits, misses = self._asks(prepared, rows, lexical, lambda _, v: (
            prepared.tool_vectors[rows] @ v + prepared.name_vectors[rows] @ v) / 2)
        judge = calibrate(hits, misses)
        judged = np.array([judge.score(m) for m in misses]) if len(misses) else np.zeros(1)
        return ToolsetFit(judge, float(judged.mean()), float(judged.std()) or 1.0, lexical)

    def _cost(self, prepared: _Prepared, i: int, fmt: Format) -> int:
        return self.tokenizer.count(serialized(render(prepared.owners[i][1], fmt)))

    def _choose(self, prepared: _Prepared, order: list[int], dense: np.ndarray, params: SelectParams) -> list[int]:
        k, always, fmt = params.k, params.always, params.format
        min_score, max_tokens = params.min_score, params.max_tokens
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

    def _ranked(self, prepared: _Prepared, query: str) -> tuple[np.ndarray, list[int], _Scored]:
        """Every tool, best first, the cosine min_score is checked against, and the whole request's scores
        (abstention judges fit on them with `fit_signals`: fused scores are z-scores, relative to the toolset,
        so the best tool always stands out in them, fitting or not).

        A request with several intents ("find the hotel, then book a taxi to it") is also scored intent by
        intent, and the rankings take turns: the whole request's best tool, then each intent's best, and so
        on, so every step's tool reaches the top k (chosen leave-one-pool-out on the training queries by
        `python -m bench.tools_tune`). Only an intent whose best tool stands INTENT_SURE_SD out of the rest
        takes a turn: a part that is context ("I'm planning a trip with friends") points at no tool, and its
        turns cost multi-tool pools recall (`python -m bench.tools_tune --ablation`). Over fewer than
        INTENT_GATE_MIN_TOOLS tools no score can stand that far out (at most sqrt(n - 1) sd), so there every
        intent takes its turn. A tool's cosine is its
        best with the request or any one intent.
        """
        query = focus(query, self.tokenizer)
        texts = [query, *split_intents(query)]
        vectors = self.vectors.query_batch(texts) if prepared.owners else None
        rankings, best, whole = [], None, None
        for row, text in enumerate(texts):
            dense, fused, lexical = self._scores(prepared, text, vectors[row] if vectors is not None else None)
            if row and len(fused) >= INTENT_GATE_MIN_TOOLS and float(standardise(fused).max()) < INTENT_SURE_SD:
                continue  # an intent that points at no tool in particular adds noise, not a step's tool
            if len(prepared.groups) > 1 and len(fused):
                fused = fused + TOOLSET_FIT_WEIGHT * self._standing(prepared, dense, text)[prepared.group_of]
            rankings.append(rank_order(fused, prepared.name_rank))
            best = dense if best is None else np.maximum(best, dense)
            if whole is None:  # the first text is the whole request
                whole = _Scored(text, dense, lexical)
        assert best is not None and whole is not None
        return best, interleave(rankings, len(prepared.owners)) if len(rankings) > 1 else rankings[0], whole

    def _scores(self, prepared: _Prepared, query: str,
                q: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The cosine used for min_score, the fused score used for ranking (`fuse_tool_scores`) and BM25."""
        if not prepared.owners or q is None:
            return np.zeros(0), np.zeros(0), np.zeros(0)
        evidence = None
        if len(prepared.evidence_owner):
            evidence = (nearest_evidence(prepared.evidence_vectors, prepared.evidence_owner, len(prepared.owners), q,
                                         prepared.evidence_weight), prepared.centroids @ q)
        lexical = prepared.lexical.scores(query)
        dense, fused = fuse_tool_scores((prepared.tool_vectors @ q + prepared.name_vectors @ q) / 2, lexical,
                                        self.dense_weight, evidence, prepared.lift)
        return dense, fused, lexical

    def _prepare(self, tenant: str, names: list[str]) -> _Prepared:
        """Built once per (definitions, recorded uses) of the named toolsets: the heads and a count of recorded
        uses say whether what is in memory is current; a new recorded use reloads the evidence."""
        heads = self._heads(tenant, names)
        missing = [n for n in names if n not in heads]
        if missing:
            raise NotFound(f"unknown toolset(s): {', '.join(missing)}")
        key = "|".join(f"{n}@{heads[n].version}@{heads[n].generation}" for n in names) + \
            f"|{tenant}|{self.feedback_count(tenant, names)}"
        prepared = self._prepared.get(key)
        if prepared is not None:
            return prepared
        sets = [self._from_head(tenant, heads[n], with_feedback=True) for n in names]
        owners = [(s.name, t) for s in sets for t in s.tools]
        bounds = np.cumsum([0, *(len(s.tools) for s in sets)])
        groups = [slice(int(a), int(b)) for a, b in zip(bounds[:-1], bounds[1:], strict=True)]
        tool_vectors = self.vectors.passages([index_text(t) for _, t in owners])
        name_vectors = self.vectors.passages([name_text(t) for _, t in owners])
        evidence, lift, rules = self._evidence(tenant, sets, owners, tool_vectors, name_vectors)
        lexical_texts = ["\n".join([index_text(tool), *evidence.words.get(i, [])])
                         for i, (_, tool) in enumerate(owners)]
        prepared = _Prepared(
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

    def feedback_rule(self, tenant: str, name: str) -> tuple[FeedbackRule, int]:
        """The rule a toolset's recorded uses are applied by, and how many recorded requests it has."""
        prepared = self._prepare(tenant, [name])
        return prepared.rules.get(name, DEFAULT_RULE), prepared.uses.get(name, 0)

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
