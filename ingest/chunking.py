"""Split a view into chunks with exact character offsets, each section by its kind (ingest/kinds).

Every chunk is a span `[start, end)` of the view, so `view[start:end] == chunk text` always holds. Prose is packed
to about `target_tokens` (ingest/packing.py); kinds read by lines (code, logs, diffs, grep output) are cut into
whole lines of about `code_tokens` (ingest/lines.py). Documents are never mixed in one chunk.
"""

from __future__ import annotations

from .kinds import Chunk, Cutting, kind_named
from .normalize import View
from .tokens import Tokenizer

CHUNKER_VERSION = "6"  # 2: code cut at definitions, whole lines; 3: logs, diffs, grep; 4: a grep output by single
# lines; 5: a chunk's role (a log's failures and summary) stored beside its context; 6: a plain diff's files apart

__all__ = ["CHUNKER_VERSION", "Chunk", "chunk_view", "chunker_signature"]


def chunk_view(view: View, tokenizer: Tokenizer, target_tokens: int, path: str | None = None,
               code_tokens: int | None = None) -> list[Chunk]:
    """Chunks of every section, each cut by its kind (a code section's language from `path`, the file the tool
    call named, else guessed from the text)."""
    how = Cutting(tokenizer, target_tokens, code_tokens or target_tokens, path)
    chunks: list[Chunk] = []
    for doc_index, section in enumerate(view.sections):
        pieces = kind_named(section.content_type).chunk(view.text, section.start, section.end, section.title or "",
                                                        section.leaves, how)
        for piece in pieces:
            chunks.append(Chunk(len(chunks), piece.start, piece.end, piece.tokens, doc_index, piece.context,
                                piece.role))
    return chunks


def chunker_signature(tokenizer: Tokenizer, target_tokens: int, code_tokens: int | None = None) -> str:
    return f"v{CHUNKER_VERSION}-{tokenizer.name}-{target_tokens}" + (f"-code{code_tokens}" if code_tokens else "")
