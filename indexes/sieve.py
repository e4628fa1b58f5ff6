"""The filter: rank a source's chunks against the agent's query and return what fits the budget.

Storage is separate from presentation: the source is stored whole first, then projected. Errors pass
through verbatim; content that already fits comes back whole; everything else is ranked (dense cosine
fused with BM25), packed to the budget, and summarised by a placeholder that says how to get the rest.
"""

from __future__ import annotations

import bisect
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from ctxsieve.ingest.coderank.ranker import RepoRanking
from ctxsieve.ingest.kinds import Chunk, Kind, kind_named
from ctxsieve.ingest.lines import blank_lines_around
from ctxsieve.ingest.normalize import Document
from ctxsieve.ingest.static_model import StaticEmbedder
from ctxsieve.ingest.tokens import Tokenizer
from ctxsieve_client.languages import first_line, reads_to_end, source_path

from .background import BackgroundEmbedder
from .filtering import FilterParams, FilterResult, MapLine, Mode, PageResult, SearchResult, Snippet
from .lexical import Bm25Index
from .lru import Lru
from .more import Rerun, more_of
from .outline import outline
from .ranking import Candidate, interleave, neighbours, rank_order, select
from .sources import Source, SourceInput, SourceStore
from .usage import make_usage
from .vectors import EmbeddingCache
from .websearch import Page, SearchQuery

__all__ = ["FAST_CANDIDATES", "FAST_NEIGHBOURS", "FilterParams", "FilterResult", "Prepared", "Sieve"]

# Prepared refs kept for re-filtering, by the bytes each holds (chunk texts, BM25, static and dense vectors): a few
# dozen large outputs or hundreds of small ones. An evicted ref is prepared again when asked: slower, nothing lost.
PREPARED_BYTES = 128 << 20
# Fast mode's dense budget for a fresh output: the first stage's best 16 chunks, then the chunks either side of
# the best 3 dense hits (indexes.ranking.neighbours); at most 22 through the full model. The rule: the smallest
# budget (by chunks embedded on average) that matches every chunk embedded (accurate) on both dev sets at both
# token budgets, replayed on dev questions kept apart from the test ones by python -m bench.pool_tune (which uses
# these same functions; bench/results/pool_tune.txt). No budget up to 24 chunks did on ONNX Runtime with the
# static stage then distilled on torch; on OpenVINO bf16, whose dense stage is about twice as fast, this one does. The
# static table made from the token embeddings since ranks as well at this budget (bench/README.md).
FAST_CANDIDATES = 16
FAST_NEIGHBOURS = 3
# Code's chunks are whole definitions of ~256 tokens (the code_chunk_tokens setting), prose's ~96: its dense stage
# embeds 5 of them and the neighbours of the best one, which keeps a fresh 10k-token file within 250 ms at the same
# place shown as 6 or 10 (python -m bench.code); every other chunk competes on its lexical score.
CODE_FAST_CANDIDATES = 5
OUTLINE_TOKENS = 800  # an outline's budget when the request sets no max_tokens


class Sieve:
    def __init__(self, sources: SourceStore, vectors: EmbeddingCache, tokenizer: Tokenizer, *,
                 dense_weight: float = 0.6, fast_candidates: int = FAST_CANDIDATES,
                 static: StaticEmbedder | None = None, background: BackgroundEmbedder | None = None,
                 fast_neighbours: int = FAST_NEIGHBOURS, code_candidates: int = CODE_FAST_CANDIDATES,
                 repos: Callable[[str, str, str | None, int], RepoRanking] | None = None) -> None:
        self.sources = sources
        self.vectors = vectors
        self.tokenizer = tokenizer
        self.dense_weight = dense_weight
        self.code_candidates = code_candidates
        self.fast_candidates = fast_candidates
        self.fast_neighbours = fast_neighbours
        self.static = static
        self.background = background
        self.repos = repos  # (tenant, request, cwd, a read's first line) -> what the tenant's repositories say of a cut
        self._prepared: Lru[str, Prepared] = Lru(64, PREPARED_BYTES, self._weigh)

    # --- entry points -------------------------------------------------------------------------------

    def filter(self, tenant: str, inp: SourceInput, params: FilterParams, is_error: bool = False) -> FilterResult:
        source = self.sources.put(tenant, inp)
        rerun = _rerun(inp.tool, inp.args)  # the call's own, as its cut is: the same request, the same answer
        if (inp.tool, inp.args, inp.cwd) != (source.tool, source.args, source.cwd):
            # the same text stored before by another call: this one is cut by its own file and folder, as it would be
            # had it come first (the same request, the same answer); the stored source stays as it was
            source = replace(source, tool=inp.tool, args=dict(inp.args), cwd=inp.cwd)
        if is_error:
            return self._verbatim(source, rerun)
        return self._project(source, params, rerun)

    def search_results(self, tenant: str, pages: Sequence[Page], query: SearchQuery, params: FilterParams
                       ) -> SearchResult:
        """Each page stored as a source; chunks of all pages ranked together against the task."""
        args = query.args()
        sources = [self.sources.put(tenant, SourceInput((Document(p.content or p.title or p.url, p.title, p.url,
                                                                  p.metadata),), False, "markdown", "search", args))
                   for p in pages]
        picks = self._rank(sources, params) if sources else []
        results = []
        for index, (page, source) in enumerate(zip(pages, sources, strict=True)):
            mine = sorted((p for p in picks if p.source == index), key=lambda p: p.chunk.start)
            results.append(PageResult(url=page.url, title=page.title, ref=source.ref, score=page.score,
                                      snippets=[self._snippet(source, p.chunk, p.score) for p in mine]))
        out = sum(s.tokens for r in results for s in r.snippets)
        usage = make_usage(input_tokens=sum(s.tokens for s in sources), output_tokens=out,
                           chunks_total=sum(len(s.chunks) for s in sources), chunks_returned=len(picks))
        more = more_of(None, usage, Rerun(tool="search", args=args), pages=len(sources))
        return SearchResult(results=results, more=more, usage=usage)

    def refilter(self, tenant: str, ref: str, params: FilterParams, is_error: bool = False) -> FilterResult:
        """A stored source again, with a new query; an error output stays that ref and comes back verbatim."""
        source = self.sources.get(tenant, ref)
        if is_error:
            return self._verbatim(source, _rerun(source.tool, source.args))
        return self._project(source, params, _rerun(source.tool, source.args))

    # --- lifecycle ----------------------------------------------------------------------------------

    def forget(self, tenant: str, ref: str) -> None:
        """DELETE a ref: its source, its projections here, and the chunk vectors no other source uses."""
        self._drop_vectors(self.sources.delete(tenant, ref))
        self._prepared.drop_where(lambda key: ref in key)

    def expire(self) -> None:
        """Retention: sources past it become tombstones (410) and lose the vectors no one else uses."""
        self._drop_vectors(self.sources.expire())

    def _drop_vectors(self, keys: list[str]) -> None:
        if keys:
            used = self.sources.still_used(keys)
            self.vectors.forget([k for k in dict.fromkeys(keys) if k not in used])

    # --- projections --------------------------------------------------------------------------------

    def _project(self, source: Source, params: FilterParams, rerun: Rerun | None) -> FilterResult:
        kind = kind_named(source.content_type)
        # A map only where the caller sets the budget: at the default (the surfaces' reads) its tokens showed fewer
        # edited places than the same tokens of code did (python -m bench.code, dev split)
        asked = params.max_tokens is not None
        params = _defaults(kind, source, params)
        if self._fits(source, params):
            return self._whole(source, rerun)
        if params.mode == "outline":
            return self._outline(source, params, rerun)
        budget = params.max_tokens
        share = budget // kind.map_share if kind.map_share and budget and asked else 0
        picks = self._rank([source], replace(params, max_tokens=budget - share) if budget and share else params)
        snippets = [self._snippet(source, p.chunk, p.score) for p in picks]
        # in the ranking's order: the best pieces are given their headers and blank lines first (k: `_defaults` set it)
        if kind.blank_edges and budget:
            snippets = self._headed(source, kind, snippets, budget - share, params.k or len(snippets))
            snippets = self._blank_edges(source, kind, snippets, budget - share)
        if params.order == "document":
            snippets = sorted(snippets, key=lambda s: s.start)
        lines_map = self._map(source, kind, snippets, share) if share else None
        shown = _shown_cost(kind, snippets)
        out = shown + sum(self.tokenizer.count(m.shown()) for m in lines_map or [])
        usage = make_usage(input_tokens=source.tokens, output_tokens=out, chunks_total=len(source.chunks),
                           chunks_returned=len(snippets))
        lines = source.line_span(0, len(source.view.text))[1] if kind.shown_as.by_lines else None
        more = more_of(source.ref, usage, rerun, shown="some" if snippets or params.min_score is None else "none",
                       min_score=params.min_score, lines=lines)
        return FilterResult(ref=source.ref, snippets=snippets, more=more, usage=usage, passthrough=False,
                            content_type=source.content_type, view=kind.shown_as, map=lines_map,
                            verdict=kind.verdict(source.view.text))

    def _headed(self, source: Source, kind: Kind, snippets: list[Snippet], budget: int, k: int) -> list[Snippet]:
        """Each snippet that is a later part of a long definition (best first) with that definition's header line
        (`def ensure_type(value, value_type, origin=None):`) where nothing shows it: the model is told what the lines
        are part of, and a fix often edits a signature. Where the budget (or `k`, the snippets a caller allows: a
        header of its own is one) has no room left, the lowest-ranked snippets give way to it: a file of many small
        functions filled the budget with ones no word of the request is in."""
        room = budget - _shown_cost(kind, snippets)
        spare = k - len(snippets)
        head_of = kind.heads(source.view.text, source_path(source.args))
        taken = {n for s in snippets for n in _lines_of(s)}
        out: list[Snippet] = []
        pending = list(snippets)
        while pending:
            snippet = pending.pop(0)
            first = snippet.line_start or 0
            head = head_of(first) if first > 1 else None
            if head is None or any(n in taken for n in range(head, first)):
                out.append(snippet)
                continue
            added, cost = self._with_head(source, kind, snippet, head)
            while (cost > room or len(added) - 1 > spare) and pending:  # the lowest-ranked snippet gives way
                dropped = pending.pop()
                room, spare = room + _shown_cost(kind, [dropped]), spare + 1
                taken.difference_update(_lines_of(dropped))
            if cost > room or len(added) - 1 > spare:
                out.append(snippet)
                continue
            room, spare = room - cost, spare - (len(added) - 1)
            taken.update(_lines_of(added[0]))
            out.extend(added)
        return out

    def _with_head(self, source: Source, kind: Kind, snippet: Snippet, head: int) -> tuple[list[Snippet], int]:
        """The snippet with line `head` above it, and what that costs: one snippet from the header on when only blank
        lines part them, else the header as a line of its own just before it."""
        text, first, last = source.view.text, snippet.line_start or 0, snippet.line_end or 0
        start, end = source.lines_part(str(head))
        between = source.lines_part(f"{head + 1}-{first - 1}") if head + 1 < first else (end, end)
        if not text[between[0] : between[1]].strip():
            tokens = self.tokenizer.count(text[start : snippet.end])
            joined = replace(snippet, text=text[start : snippet.end], start=start, tokens=tokens, line_start=head)
            return [joined], kind.cost(tokens, head, last) - kind.cost(snippet.tokens, first, last)
        tokens = self.tokenizer.count(text[start:end])
        line = replace(snippet, id=self._chunk_id(source, start), text=text[start:end], start=start, end=end,
                       tokens=tokens, line_start=head, line_end=head)
        return [line, snippet], kind.cost(tokens, head, head)

    @staticmethod
    def _chunk_id(source: Source, offset: int) -> str:
        """The id of the chunk holding a view's offset."""
        index = max(0, bisect.bisect_right(source.chunks, offset, key=lambda c: c.start) - 1)
        return f"{source.ref}#{source.chunks[index].index}"

    def _blank_edges(self, source: Source, kind: Kind, snippets: list[Snippet], budget: int) -> list[Snippet]:
        """Each snippet (best first: the ranking's order) with the blank lines just above and below it that no
        other one shows, while the snippets as shown (line numbers counted) stay within `budget` (their costs
        counted them: `_cost`): the text, offsets and lines the view has."""
        room = budget - _shown_cost(kind, snippets)
        text = source.view.text
        taken = {n for s in snippets for n in _lines_of(s)}
        out = []
        for snippet in snippets:
            first, last = snippet.line_start or 0, snippet.line_end or 0
            above, below = blank_lines_around(text, snippet.start, snippet.end)
            while above and first - above in taken:  # another snippet's edge took the far ones
                above -= 1
            while below and last + below in taken:
                below -= 1
            if not (above or below):
                out.append(snippet)
                continue
            start, end = source.lines_part(f"{first - above}-{last + below}")
            tokens = self.tokenizer.count(text[start:end])
            cost = kind.cost(tokens, first - above, last + below) - kind.cost(snippet.tokens, first, last)
            if cost > room:
                out.append(snippet)
                continue
            room -= cost
            taken.update(range(first - above, last + below + 1))
            out.append(replace(snippet, text=text[start:end], start=start, end=end, tokens=tokens,
                               line_start=first - above, line_end=last + below))
        return out

    def _map(self, source: Source, kind: Kind, snippets: list[Snippet], budget: int) -> list[MapLine]:
        """The file's definition lines not already shown, nearest to the shown snippets first, within `budget`
        tokens (each counted as printed, with its number), in file order."""
        text = source.view.text
        lines = text.split("\n")
        shown = [(s.line_start, s.line_end) for s in snippets]
        candidates = [n for n in kind.map_lines(text, source_path(source.args))
                      if not any(a <= n <= b for a, b in shown)]
        distance = {n: min((min(abs(n - a), abs(n - b)) for a, b in shown), default=n) for n in candidates}
        chosen, used = [], 0
        for n in sorted(candidates, key=lambda n: (distance[n], n)):
            cost = self.tokenizer.count(MapLine(n, lines[n - 1]).shown())
            if used + cost > budget:
                continue
            chosen.append(n)
            used += cost
        return [MapLine(n, lines[n - 1]) for n in sorted(chosen)]

    def _outline(self, source: Source, params: FilterParams, rerun: Rerun | None) -> FilterResult:
        entries = outline(source.view.text, source.chunks, self.tokenizer, params.max_tokens or OUTLINE_TOKENS)
        snippets = []
        for entry in entries:
            text = source.view.text[entry.start : entry.end]
            section = source.section(entry.chunk)
            first, last = source.line_span(entry.start, entry.end)
            snippets.append(Snippet(id=f"{source.ref}#{entry.chunk.index}", text=text, score=None, start=entry.start,
                                    end=entry.end, tokens=self.tokenizer.count(text), document=entry.chunk.document,
                                    title=section.title, url=section.url, context=entry.chunk.context,
                                    line_start=first, line_end=last))
        usage = make_usage(input_tokens=source.tokens, output_tokens=sum(e.tokens for e in entries),
                           chunks_total=len(source.chunks), chunks_returned=len(snippets))
        kind = kind_named(source.content_type)  # a log's outline carries its failures too (its verdict)
        return FilterResult(ref=source.ref, snippets=snippets, more=more_of(source.ref, usage, rerun, shown="outline"),
                            usage=usage, passthrough=False, content_type=source.content_type, view=kind.shown_as,
                            verdict=kind.verdict(source.view.text))

    def _fits(self, source: Source, params: FilterParams) -> bool:
        if params.max_tokens is not None:  # measured as the budget is: the view as its kind shows it
            last = source.line_span(0, len(source.view.text))[1]  # the source's line index, built once
            whole = kind_named(source.content_type).cost(source.view_tokens, 1, last)
            return whole <= params.max_tokens
        return len(source.chunks) <= (params.k or kind_named(source.content_type).default_k(None))

    def _rank(self, sources: Sequence[Source], params: FilterParams) -> list[Pick]:
        """The chunks of one or more sources (one search's pages) ranked together and packed."""
        query = params.query or ""
        prep = self._prepared_of(sources)
        kind = kind_named(prep.kind)
        lexical = prep.lexical.scores(query)
        if len(sources) == 1:  # code's kinds: the code ranker's first stage
            repo = self.repos(sources[0].tenant, query, sources[0].cwd, first_line(sources[0].tool, sources[0].args)) \
                if self.repos is not None else None
            lexical = kind.rescore(query, sources[0].view.text, [c for _, c in prep.units], lexical,
                                   source_path(sources[0].args), sources[0].line_span, repo)
        k = params.k or kind.default_k(params.max_tokens)
        own = kind.select(sources[0].view.text, [c for _, c in prep.units], lexical, self.tokenizer,
                          sources[0].line_span, params.max_tokens or sys.maxsize, k) if len(sources) == 1 else None
        if own is not None:  # the kind chooses its chunks itself (grep's single lines, by runs)
            return [Pick(0, chunk, score) for chunk, score in sorted(own, key=lambda pick: -pick[1])]
        by_lines = kind.shown_as.by_lines
        heads, around = (self.code_candidates, 1) if by_lines else (self.fast_candidates, self.fast_neighbours)
        # No dense stage for a kind ranked on its own terms (code: the code ranker), nor without candidates.
        no_dense = not kind.dense or (heads == 0 and params.mode != "accurate")
        first = [] if no_dense else self._first_stage(prep, query, lexical, params.mode, heads + 2 * around)
        pool = list(range(len(lexical))) if first is None else sorted(first[:heads])
        first_of_all = _priorities(kind, sources, query, params.max_tokens)  # what the request (or the kind) puts first
        dense = self._dense_scores(prep, pool, around, query)
        if self.background is not None and first and not prep.completing \
                and len(prep.vectors) < len(prep.passages):
            prep.completing = True  # once per ref: re-queueing would make the worker re-check every chunk
            # The rest, in the order this query's first stage ranks it: the next query on the same output
            # is usually about the same things, so its candidates tend to be embedded first.
            self.background.submit(prep.key, [prep.passages[i] for i in first if i not in prep.vectors])
        chosen = select(prep.candidates, dense, lexical, self.dense_weight, k, params.max_tokens,
                        params.min_score, first_of_all, unscored_compete=kind.shown_as.by_lines,
                        distinct=not kind.shown_as.by_lines)  # the same lines at two places of a log are two failures
        if kind.shown_as.by_lines:
            chosen = _whole_definitions(chosen, prep, k, params.max_tokens)
        return [Pick(prep.units[i][0], prep.units[i][1], float(np.nan_to_num(dense[i], nan=0.0))) for i in chosen]

    def _dense_scores(self, prep: Prepared, pool: list[int], around: int, query: str) -> np.ndarray:
        """The pool's cosines with the request, then those of the chunks beside its best hits (fast mode); NaN
        for the rest. An empty pool (a kind ranked on its own terms, or CTXSIEVE_CODE_CANDIDATES=0) embeds nothing,
        the request included."""
        dense = np.full(len(prep.passages), np.nan)
        if not pool:
            return dense
        query_vector = self.vectors.query(query)
        dense[pool] = self._passage_vectors(prep, pool) @ query_vector
        if len(pool) < len(prep.passages):
            beside = neighbours(pool, dense, prep.documents, around)
            dense[beside] = self._passage_vectors(prep, beside) @ query_vector
        return dense

    def _prepared_of(self, sources: Sequence[Source]) -> Prepared:
        """What does not depend on the query (chunks, BM25, static vectors), kept for re-filtering."""
        key = "|".join(s.ref for s in sources) + "|" + sources[0].chunker
        prep = self._prepared.get(key)
        if prep is None:
            units = [(si, c) for si, s in enumerate(sources) for c in s.chunks]
            passages = [sources[si].passage(c) for si, c in units]
            candidates = [Candidate(i, _cost(sources[si], c), sources[si].chunk_text(c))
                          for i, (si, c) in enumerate(units)]
            documents = np.array([(si << 32) | c.document for si, c in units], dtype=np.int64)
            kinds = {s.content_type for s in sources}
            kind = kinds.pop() if len(kinds) == 1 else "mixed"
            lexical = Bm25Index.build(passages, kind_named(kind).terms, kind_named(kind).repeated)
            prep = self._prepared.put(key, Prepared(key, units, passages, candidates, lexical, None, documents,
                                                    kind=kind))
        return prep

    def _weigh(self, prep: Prepared) -> int:
        """Its bytes once every chunk's dense vector is in the memo (the background worker's end state), and its
        static vectors (made at its first fast ranking); a kind ranked on its own terms (code) gets neither."""
        if not kind_named(prep.kind).dense:
            return prep.nbytes
        static = self.static.dim * 4 if self.static is not None and prep.static is None else 0
        return prep.nbytes + len(prep.passages) * (self.vectors.embedder.dim * 4 + static)

    def _passage_vectors(self, prep: Prepared, pool: list[int]) -> np.ndarray:
        """Dense vectors of the pool's chunks: from memory, else the cache (which embeds what is new)."""
        missing = [i for i in pool if i not in prep.vectors]
        if missing:
            fetched = self.vectors.passages([prep.passages[i] for i in missing])
            prep.vectors.update(zip(missing, fetched, strict=True))
        if not pool:
            return np.zeros((0, self.vectors.embedder.dim), dtype=np.float32)
        return np.stack([prep.vectors[i] for i in pool])

    def _first_stage(self, stage: Prepared, query: str, lexical: np.ndarray, mode: Mode, most: int
                     ) -> list[int] | None:
        """Fast mode's ranking of every chunk by the cheap stage, best first, whose head the dense model
        embeds; None when every chunk gets a dense score (accurate, or no more than fast mode's most).

        BM25 and static-embedding rankings take turns, so a chunk that only one of them finds (a
        paraphrase, or a rare exact term) still reaches the dense model.
        """
        n = len(lexical)
        if mode == "accurate" or n <= most:
            return None
        rankings = [rank_order(lexical)]
        static = self.static  # read once: a first start swaps it in while requests run
        if static is not None and kind_named(stage.kind).dense:
            if stage.static is None:  # prepared before the static stage was there: the ref ranks as a fresh one now
                stage.static = static.embed(stage.passages)
            rankings.append(rank_order(stage.static @ static.embed([query])[0]))
        return interleave(rankings, n)

    def _snippet(self, source: Source, chunk: Chunk, score: float | None) -> Snippet:
        section = source.section(chunk)
        first, last = source.line_span(chunk.start, chunk.end)
        return Snippet(
            id=f"{source.ref}#{chunk.index}", text=source.chunk_text(chunk),
            score=None if score is None else round(score, 4), start=chunk.start, end=chunk.end,
            tokens=chunk.tokens, document=chunk.document, title=section.title, url=section.url,
            context=chunk.context, line_start=first, line_end=last,
        )

    def _whole(self, source: Source, rerun: Rerun | None) -> FilterResult:
        """Content that already fits the budget comes back whole: the view, one snippet per document."""
        texts = [source.view.text[s.start : s.end] for s in source.view.sections]
        return self._per_document(source, rerun, texts)

    def _verbatim(self, source: Source, rerun: Rerun | None) -> FilterResult:
        """Error output is never filtered, shortened or summarised: the raw text of each document, as sent."""
        return self._per_document(source, rerun, [d["text"] for d in source.documents or [{"text": source.text}]])

    def _per_document(self, source: Source, rerun: Rerun | None, texts: list[str]
                      ) -> FilterResult:
        snippets = [Snippet(id=f"{source.ref}#doc{i}", text=text, score=None, start=section.start, end=section.end,
                            tokens=self.tokenizer.count(text), document=i, title=section.title, url=section.url,
                            context="", line_start=first, line_end=last)
                    for i, (text, section) in enumerate(zip(texts, source.view.sections, strict=True))
                    for first, last in [source.line_span(section.start, section.end)]]
        usage = make_usage(input_tokens=source.tokens, output_tokens=sum(s.tokens for s in snippets),
                           chunks_total=len(source.chunks), chunks_returned=len(source.chunks))
        return FilterResult(ref=source.ref, snippets=snippets, usage=usage, passthrough=True,
                            more=more_of(source.ref, usage, rerun, shown="whole"), content_type=source.content_type,
                            view=kind_named(source.content_type).shown_as)


@dataclass(frozen=True)
class Pick:
    source: int  # index into the ranked sources
    chunk: Chunk
    score: float  # dense cosine


@dataclass
class Prepared:
    """A ref's (or one search's refs') query-independent parts, and the dense vectors fetched so far."""

    key: str
    units: list[tuple[int, Chunk]]  # (source index, chunk)
    passages: list[str]
    candidates: list[Candidate]
    lexical: Bm25Index
    static: np.ndarray | None
    documents: np.ndarray  # per chunk, which (source, document) it belongs to: neighbours never cross one
    kind: str = "text"  # the sources' content type (`mixed` for pages of several): its Kind ranks them
    vectors: dict[int, np.ndarray] = field(default_factory=dict)
    completing: bool = False  # handed to the background worker

    @property
    def nbytes(self) -> int:
        """What it holds apart from the dense memo (weighed by the sieve, which knows the model's size)."""
        texts = sum(sys.getsizeof(p) for p in self.passages) + sum(sys.getsizeof(c.text) for c in self.candidates)
        static = 0 if self.static is None else int(self.static.nbytes)
        return texts + static + self.lexical.nbytes + 200 * len(self.units)


def _defaults(kind: Kind, source: Source, params: FilterParams) -> FilterParams:
    """What a request leaves out, as the source's kind sets it (its k and its budget), and the budget raised to hold
    what the kind never cuts away (a log's failures and summary)."""
    params = replace(params, k=params.k or kind.default_k(params.max_tokens))  # as the caller set the budget
    if params.max_tokens is None and params.mode != "outline":
        params = replace(params, max_tokens=kind.budget(source.view.text, source.view_tokens))
    must = [source.chunks[i] for i in kind.must_show(source.chunks)]
    if must and params.max_tokens is not None and params.mode != "outline":
        params = replace(params, max_tokens=max(params.max_tokens, sum(c.tokens for c in must)),
                         k=max(params.k or 0, len(must)))
    return params


def _priorities(kind: Kind, sources: Sequence[Source], query: str, budget: int | None) -> np.ndarray | None:
    """Each source's chunks as its kind ranks them first for this request, None when it puts none first."""
    found = [kind.priorities(query, s.view.text, s.chunks, source_path(s.args), s.line_span, budget,
                             reads_to_end(s.tool, s.args, s.line_span(0, len(s.view.text))[1])) for s in sources]
    if all(f is None for f in found):
        return None
    parts = [np.zeros(len(s.chunks)) if f is None else f for s, f in zip(sources, found, strict=True)]
    return np.concatenate(parts) if len(parts) > 1 else parts[0]


def _cost(source: Source, chunk: Chunk) -> int:
    """A chunk's tokens as its kind shows it (a code line after its number), with the blank lines either side of it
    where its kind shows those (a newline each)."""
    kind = kind_named(source.content_type)
    first, last = source.line_span(chunk.start, chunk.end)
    if not kind.blank_edges:
        return kind.cost(chunk.tokens, first, last)
    above, below = blank_lines_around(source.view.text, chunk.start, chunk.end)
    return kind.cost(chunk.tokens + above + below, first - above, last + below)


def _shown_cost(kind: Kind, snippets: Sequence[Snippet]) -> int:
    """The snippets' tokens as their kind shows them (each line's number counted)."""
    return sum(kind.cost(s.tokens, s.line_start or 0, s.line_end or 0) for s in snippets)


def _lines_of(snippet: Snippet) -> range:
    return range(snippet.line_start or 0, (snippet.line_end or 0) + 1)


def _whole_definitions(chosen: list[int], prep: Prepared, k: int, max_tokens: int | None) -> list[int]:
    """The chosen chunks with the rest of each one's definition (the chunks either side with the same path),
    best first, as far as k and the budget allow: an edit needs the whole function, not a piece of it."""
    picked = list(chosen)
    used = sum(prep.candidates[i].tokens for i in picked)
    for i in chosen:
        for j in _siblings(i, prep):
            if j in picked or len(picked) >= k:
                continue
            tokens = prep.candidates[j].tokens
            if max_tokens is not None and used + tokens > max_tokens:
                break
            picked.append(j)
            used += tokens
    return picked


def _siblings(i: int, prep: Prepared) -> list[int]:
    """The other chunks of chunk i's definition (the run of neighbours with its path), nearest first."""
    source, chunk = prep.units[i]
    out = []
    for step in (-1, 1):
        j = i + step
        while chunk.context and 0 <= j < len(prep.units) and prep.units[j][0] == source \
                and prep.units[j][1].context == chunk.context and prep.documents[j] == prep.documents[i]:
            out.append(j)
            j += step
    return sorted(out, key=lambda j: (abs(j - i), j))


def _rerun(tool: str | None, args: dict[str, Any]) -> Rerun | None:
    return Rerun(tool=tool, args=args) if tool else None
