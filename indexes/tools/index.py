"""Tool-definition retrieval: toolsets registered once, each request gets only the tools it needs.

`ToolIndex` is the registry (registry.py) with selection over it: the index embeds what each tool is for and
resolves back through the registry, over what prepared.py builds once per version of the named toolsets. Scores:
dense cosine between the request and the tool, or the tool's nearest recorded query when closer (usage evidence,
as in Tool2Vec), fused with BM25 over the same text; only the toolsets a request names are searched
(default-deny). Abstention judges the request's fit against the toolsets' own near-misses (scoring.py).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ctxsieve.ingest.tokens import Tokenizer

from ..errors import InvalidRequest, NotFound
from ..lexical import Bm25Index
from ..ranking import interleave, rank_order, standardise
from ..store import Store
from ..vectors import EmbeddingCache
from .feedback import DEFAULT_RULE, FeedbackRule
from .formats import Format, Tool, index_text, render, serialized
from .intents import split_intents
from .prepared import Prepared, Preparer, ToolsetFit
from .registry import ToolRegistry
from .request import focus
from .scoring import (
    INTENT_GATE_MIN_TOOLS,
    INTENT_SURE_SD,
    MARGIN_MIN_TOOLS,
    TOOL_DENSE_WEIGHT,
    TOOLSET_FIT_WEIGHT,
    Judge,
    calibrate,
    calibration_asks,
    fit_signals,
    fuse_tool_scores,
    nearest_evidence,
    without,
)


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
class _Scored:
    """One request text's cosines and BM25 scores over the prepared tools."""

    text: str
    dense: np.ndarray
    lexical: np.ndarray


class ToolIndex(ToolRegistry):
    """The registry, and the few tools of the named toolsets that fit a request (`select`)."""

    def __init__(self, store: Store, vectors: EmbeddingCache, tokenizer: Tokenizer,
                 dense_weight: float = TOOL_DENSE_WEIGHT, feedback_rule: FeedbackRule | None = None) -> None:
        super().__init__(store, vectors)
        self.tokenizer = tokenizer
        self.dense_weight = dense_weight
        # feedback_rule None: each toolset's history chooses (the bench fixes one to compare)
        self._preparer = Preparer(self, dense_weight, feedback_rule)

    def tokens(self, tools: Sequence[Tool], fmt: Format) -> int:
        return sum(self.tokenizer.count(serialized(render(t, fmt))) for t in tools)

    def feedback_rule(self, tenant: str, name: str) -> tuple[FeedbackRule, int]:
        """The rule a toolset's recorded uses are applied by, and how many recorded requests it has."""
        prepared = self._preparer.prepare(tenant, [name])
        return prepared.rules.get(name, DEFAULT_RULE), prepared.uses.get(name, 0)

    # --- selection ----------------------------------------------------------------------------------

    def select(self, tenant: str, query: str, toolsets: Sequence[str], params: SelectParams) -> Selection:
        if not toolsets:
            raise InvalidRequest("name at least one toolset: a request sees only the toolsets it names")
        prepared = self._preparer.prepare(tenant, sorted(set(toolsets)))
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

    def _no_fit(self, prepared: Prepared, top: int, whole: _Scored) -> str | None:
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

    def _calibrate(self, prepared: Prepared) -> Judge:
        """A sample of tools' descriptions asked as requests, each once with its own tool (a hit) and once
        without it (a near-miss: what a request scores when the tool it needs is missing)."""
        hits, misses = self._asks(prepared, slice(0, len(prepared.owners)), prepared.lexical,
                                  lambda text, v: self._scores(prepared, text, v)[0])
        return calibrate(hits, misses)

    def _asks(self, prepared: Prepared, rows: slice, lexical: Bm25Index,
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

    def _standing(self, prepared: Prepared, dense: np.ndarray, text: str) -> np.ndarray:
        """Per named toolset, how well the request fits it (`ToolsetFit.standing`): several toolsets searched
        together are weighed by it, so a large toolset of look-alike tools does not crowd out a small one that
        fits (`python -m bench.tools_tune --gateway`)."""
        if prepared.fits is None:
            prepared.fits = [self._toolset_fit(prepared, rows) for rows in prepared.groups]
        return np.array([fit.standing(dense[rows], text) for fit, rows in zip(prepared.fits, prepared.groups,
                                                                             strict=True)])

    def _toolset_fit(self, prepared: Prepared, rows: slice) -> ToolsetFit:
        lexical = Bm25Index.build([index_text(tool) for _, tool in prepared.owners[rows]])
        hits, misses = self._asks(prepared, rows, lexical, lambda _, v: (
            prepared.tool_vectors[rows] @ v + prepared.name_vectors[rows] @ v) / 2)
        judge = calibrate(hits, misses)
        judged = np.array([judge.score(m) for m in misses]) if len(misses) else np.zeros(1)
        return ToolsetFit(judge, float(judged.mean()), float(judged.std()) or 1.0, lexical)

    def _cost(self, prepared: Prepared, i: int, fmt: Format) -> int:
        return self.tokenizer.count(serialized(render(prepared.owners[i][1], fmt)))

    def _choose(self, prepared: Prepared, order: list[int], dense: np.ndarray, params: SelectParams) -> list[int]:
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

    def _ranked(self, prepared: Prepared, query: str) -> tuple[np.ndarray, list[int], _Scored]:
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

    def _scores(self, prepared: Prepared, query: str,
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
