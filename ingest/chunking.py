"""Split a view into chunks of about `target_tokens` tokens with exact character offsets.

Every chunk is a span `[start, end)` of the view, so `view[start:end] == chunk text` always holds: with no
leading or trailing white space, except code, whose chunks are whole lines with their indentation (code.py).
Boundaries follow the structure: documents and markdown
sections and JSON records are never mixed in one chunk; paragraphs are packed together; oversized
paragraphs are cut at sentence ends (English and Chinese), then at token boundaries as a last resort.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from .code import code_chunks, guess_language, language_of, line_chunks
from .normalize import Leaf, Section, View, json_record_key
from .outputs import diff_spans, grep_spans, log_spans
from .tokens import Tokenizer

CHUNKER_VERSION = "4"  # 2: code cut at definitions, whole lines (ingest/code.py); 3: logs, diffs, grep (outputs.py);
# 4: a grep output by single lines
OUTPUT_SPANS = {"log": log_spans, "diff": diff_spans, "grep": grep_spans}

_PARAGRAPH_BREAK = re.compile(r"\n[ \t]*\n\s*")
_SENTENCE_END = re.compile(
    r"(?<=[.!?])[\"'\u201d\u2019)\]]*\s+"  # English: . ! ? then closing quotes, then space
    r"|(?<=[\u3002\uff01\uff1f\uff1b\u2026])[\u201d\u2019\u300d\u300f\uff09)]*\s*"  # Chinese
    r"|\n+"
)
_HEADING = re.compile(r"^(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^\s*(```|~~~)")


@dataclass(frozen=True)
class Chunk:
    index: int
    start: int
    end: int
    tokens: int
    document: int
    context: str  # heading path, JSON record or document title: what the span is part of

    def text(self, view: str) -> str:
        return view[self.start : self.end]


@dataclass(frozen=True)
class Block:
    start: int
    end: int
    context: str
    new_section: bool  # a chunk may not run across this block's start
    split_by_lines: bool = False


def chunk_view(view: View, tokenizer: Tokenizer, target_tokens: int, path: str | None = None,
               code_tokens: int | None = None) -> list[Chunk]:
    """Chunks of every section; a code section's are whole lines cut at definitions, of about `code_tokens`
    (its language from `path`, the file the tool call named, else guessed from the text)."""
    chunks: list[Chunk] = []
    for doc_index, section in enumerate(view.sections):
        text = view.text[section.start : section.end]
        if section.content_type == "code":
            spans = code_chunks(text, section.start, language_of(path) or guess_language(text), tokenizer,
                                code_tokens or target_tokens)
        elif section.content_type in OUTPUT_SPANS:
            found = OUTPUT_SPANS[section.content_type](text)
            spans = line_chunks(text, section.start, found, tokenizer, code_tokens or target_tokens)
        else:
            spans = list(_pack(view.text, _blocks(view.text, section), tokenizer, target_tokens))
        for start, end, tokens, context in spans:
            chunks.append(Chunk(len(chunks), start, end, tokens, doc_index, context))
    return chunks


def chunker_signature(tokenizer: Tokenizer, target_tokens: int, code_tokens: int | None = None) -> str:
    return f"v{CHUNKER_VERSION}-{tokenizer.name}-{target_tokens}" + (f"-code{code_tokens}" if code_tokens else "")


# --- blocks by content type -------------------------------------------------------------------------

def _blocks(text: str, section: Section) -> list[Block]:
    kind, start, end, title = section.content_type, section.start, section.end, section.title or ""
    if kind in ("markdown", "html"):
        return list(_markdown_blocks(text, start, end, title))
    if kind == "json":
        return list(_json_blocks(text, section.leaves, title))
    return [Block(s, e, title, False) for s, e in _paragraphs(text, start, end)]


def _lines(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    while pos < end:
        nl = text.find("\n", pos, end)
        stop = end if nl < 0 else nl
        yield pos, stop
        pos = stop + 1


def _paragraphs(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    pos = start
    for match in _PARAGRAPH_BREAK.finditer(text, start, end):
        yield from _stripped(text, pos, match.start())
        pos = match.end()
    yield from _stripped(text, pos, end)


def _stripped(text: str, start: int, end: int) -> Iterator[tuple[int, int]]:
    while start < end and text[start].isspace():
        start += 1
    while end > start and text[end - 1].isspace():
        end -= 1
    if end > start:
        yield start, end


def _join_context(*parts: str) -> str:
    kept: list[str] = []
    for part in parts:
        if part and (not kept or kept[-1] != part):
            kept.append(part)
    return " > ".join(kept)


def _markdown_blocks(text: str, start: int, end: int, title: str) -> Iterator[Block]:
    headings: list[tuple[int, str]] = []
    para_start: int | None = None
    fence_start: int | None = None
    new_section = False

    def flush(stop: int) -> Iterator[Block]:
        nonlocal para_start, new_section
        if para_start is not None:
            for s, e in _stripped(text, para_start, stop):
                yield Block(s, e, _join_context(title, *(h for _, h in headings)), new_section)
                new_section = False
        para_start = None

    for line_start, line_end in _lines(text, start, end):
        line = text[line_start:line_end]
        if fence_start is not None:
            if _FENCE.match(line):
                yield Block(fence_start, line_end, _join_context(title, *(h for _, h in headings)), new_section,
                            split_by_lines=True)
                fence_start, new_section = None, False
            continue
        if _FENCE.match(line):
            yield from flush(line_start)
            fence_start = line_start
            continue
        heading = _HEADING.match(line)
        if heading:
            yield from flush(line_start)
            level = len(heading.group(1))
            headings = [(lv, h) for lv, h in headings if lv < level] + [(level, heading.group(2).strip())]
            new_section, para_start = True, line_start
        elif not line.strip():
            yield from flush(line_start)
        elif para_start is None:
            para_start = line_start
    if fence_start is not None:
        yield Block(fence_start, end, _join_context(title, *(h for _, h in headings)), new_section, True)
    yield from flush(end)


def _json_blocks(text: str, leaves: tuple[Leaf, ...], title: str) -> Iterator[Block]:
    """One block per paragraph of each value; a new record (`results[3]`) starts a new chunk."""
    names = {leaf.path: text[leaf.start : leaf.end].split(": ", 1)[-1] for leaf in leaves
             if leaf.path.endswith((".title", ".name")) and "\n" not in text[leaf.start : leaf.end]}
    current: str | None = None
    for leaf in leaves:
        record = json_record_key(leaf.path)
        label = names.get(record + ".title") or names.get(record + ".name") or ""
        context = _join_context(title, f"{record} ({label[:80]})" if label else record)
        for index, (s, e) in enumerate(_paragraphs(text, leaf.start, leaf.end)):
            yield Block(s, e, context, record != current and index == 0)
        current = record


# --- packing ----------------------------------------------------------------------------------------

def _pieces(text: str, block: Block, tokenizer: Tokenizer, target: int) -> Iterator[tuple[int, int, int]]:
    """(start, end, tokens) pieces of a block, none over `target` tokens."""
    tokens = tokenizer.count(text[block.start : block.end])
    if tokens <= target:
        yield block.start, block.end, tokens
        return
    for s, e in _sentences(text, block.start, block.end, block.split_by_lines):
        piece_tokens = tokenizer.count(text[s:e])
        if piece_tokens <= target:
            yield s, e, piece_tokens
            continue
        yield from _token_pieces(text, s, e, tokenizer, target)


def _token_pieces(text: str, start: int, end: int, tokenizer: Tokenizer, target: int
                  ) -> Iterator[tuple[int, int, int]]:
    """Cut at token boundaries; a slice can tokenize longer than in context, so halve what still overflows."""
    cuts = [start + c for c in tokenizer.split_points(text[start:end], target)]
    for a, b in zip([start, *cuts], [*cuts, end], strict=True):
        for ps, pe in _stripped(text, a, b):
            tokens = tokenizer.count(text[ps:pe])
            if tokens <= target or pe - ps <= 1:
                yield ps, pe, tokens
            else:
                middle = (ps + pe) // 2
                yield from _token_pieces(text, ps, middle, tokenizer, target)
                yield from _token_pieces(text, middle, pe, tokenizer, target)


def _sentences(text: str, start: int, end: int, by_lines: bool) -> Iterator[tuple[int, int]]:
    pattern = re.compile(r"\n+") if by_lines else _SENTENCE_END
    pos = start
    for match in pattern.finditer(text, start, end):
        if match.end() > pos:
            yield from _stripped(text, pos, match.end())
            pos = match.end()
    yield from _stripped(text, pos, end)


def _pack(text: str, blocks: list[Block], tokenizer: Tokenizer, target: int
          ) -> Iterator[tuple[int, int, int, str]]:
    """(start, end, tokens, context) chunks: consecutive pieces joined greedily up to `target` tokens, never
    across a section start."""
    pieces: list[tuple[int, int, int]] = []
    context = ""
    used = 0
    small = target // 3
    for block in blocks:
        block_pieces = list(_pieces(text, block, tokenizer, target))
        block_tokens = sum(t for _, _, t in block_pieces)
        for index, (s, e, tokens) in enumerate(block_pieces):
            # A paragraph of its own size starts its own chunk: packing unrelated paragraphs together
            # blurs both in the embedding. Short ones (list items, one-liners, JSON fields) are joined.
            crosses = index == 0 and (block.new_section or (used >= small and block_tokens >= small))
            # +1: the white space joining two pieces may itself cost a token
            if pieces and (crosses or used + 1 + tokens > target):
                yield from _flush(text, pieces, context, tokenizer, target)
                pieces, used = [], 0
            if not pieces:
                context, used = block.context, tokens
            else:
                used += 1 + tokens
            pieces.append((s, e, tokens))
    if pieces:
        yield from _flush(text, pieces, context, tokenizer, target)


def _flush(text: str, pieces: list[tuple[int, int, int]], context: str, tokenizer: Tokenizer, target: int
           ) -> Iterator[tuple[int, int, int, str]]:
    """Emit the joined pieces; in the rare case joining them costs more than the sum, emit them in halves.
    Each piece's count was taken on exactly its span, and a join is counted whole, so no count is a guess."""
    start, end = pieces[0][0], pieces[-1][1]
    if len(pieces) == 1:
        yield start, end, pieces[0][2], context
        return
    tokens = tokenizer.count(text[start:end])
    if tokens <= target:
        yield start, end, tokens, context
        return
    middle = len(pieces) // 2
    yield from _flush(text, pieces[:middle], context, tokenizer, target)
    yield from _flush(text, pieces[middle:], context, tokenizer, target)
