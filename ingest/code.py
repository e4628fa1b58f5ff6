"""Source code as its own kind: cut at definitions, whole lines only, each chunk named by its definition path.

tree-sitter (PyPI `tree-sitter-language-pack`, grammars inside the wheel) finds each function, method and class:
a definition is a chunk (`class URLValidator > def __call__`), a class's own lines before its first method are
its header chunk, the lines between definitions (imports, module code) are packed by blank-line blocks, and a
definition too long for one chunk is cut between its top-level statements. Every chunk is whole lines of the
view, indentation included, so a snippet can be pasted into an edit as it is. A language without a grammar
(or text that is not code) is cut by blank-line blocks, still whole lines.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any

from .tokens import Tokenizer

# a file's extension -> its tree-sitter grammar
LANGUAGES = {
    ".py": "python", ".pyi": "python", ".js": "javascript", ".mjs": "javascript", ".cjs": "javascript",
    ".jsx": "javascript", ".ts": "typescript", ".tsx": "tsx", ".go": "go", ".rs": "rust", ".java": "java",
    ".c": "c", ".h": "c", ".cc": "cpp", ".cpp": "cpp", ".cxx": "cpp", ".hpp": "cpp", ".hh": "cpp", ".cs": "csharp",
    ".rb": "ruby", ".php": "php", ".sh": "bash", ".bash": "bash", ".kt": "kotlin", ".kts": "kotlin",
    ".swift": "swift", ".scala": "scala", ".lua": "lua",
}
PATH_ARGUMENTS = ("file_path", "path", "filename", "file", "filepath", "target_file", "relative_path")
# node types that are definitions, in any grammar: (the word a chunk's context calls it, is it a container)
_KINDS = {
    "function_definition": ("def", False), "function_declaration": ("function", False),
    "function_item": ("fn", False), "method_definition": ("method", False), "method_declaration": ("method", False),
    "constructor_declaration": ("constructor", False), "method": ("def", False), "singleton_method": ("def", False),
    "class_definition": ("class", True), "class_declaration": ("class", True), "class_specifier": ("class", True),
    "class": ("class", True), "module": ("module", True), "interface_declaration": ("interface", True),
    "struct_item": ("struct", True), "struct_specifier": ("struct", True), "enum_item": ("enum", True),
    "enum_declaration": ("enum", True), "impl_item": ("impl", True), "trait_item": ("trait", True),
    "mod_item": ("mod", True), "type_declaration": ("type", False), "namespace_definition": ("namespace", True),
    "object_declaration": ("object", True), "protocol_declaration": ("protocol", True),
}
_NAMED = re.compile(r"[A-Za-z_$][\w$]*")


def source_path(args: Mapping[str, Any]) -> str | None:
    """The file a tool call names (Read's `file_path`, a read_text_file's `path`, ...), if any."""
    for key in PATH_ARGUMENTS:
        value = args.get(key)
        if isinstance(value, str) and value.strip():
            return value
    return None


def language_of(path: str | None) -> str | None:
    """The grammar for a file path's extension, if it is a source file."""
    return LANGUAGES.get(PurePosixPath(path).suffix.lower()) if path else None


_GUESSES = (("python", re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+.*:[ \t]*$", re.M)),
            ("go", re.compile(r"^func[ \t]", re.M)), ("rust", re.compile(r"^[ \t]*(?:pub[ \t]+)?fn[ \t]+\w+", re.M)),
            ("javascript", re.compile(r"^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?function\b", re.M)))


def guess_language(text: str) -> str | None:
    """Code sent without a file name: the grammar whose definitions it shows most of (at least two)."""
    head = text[:50_000]
    counts = [(len(pattern.findall(head)), name) for name, pattern in _GUESSES]
    best = max(counts)
    return best[1] if best[0] >= 2 else None


@dataclass(frozen=True)
class Definition:
    first: int  # 0-based line of its first line (decorators and the comments right above it included)
    last: int  # 0-based line of its last line
    body: int  # 0-based line where its body starts (after the header)
    label: str  # `class URLValidator`, `def __call__`
    container: bool
    children: tuple[Definition, ...]
    statements: tuple[int, ...] = ()  # 0-based first lines of its body's statements: where a long one is cut
    header: int = 0  # 0-based line of its `def`/`class` line (after decorators and comments)


def definitions(text: str, language: str | None) -> list[Definition] | None:
    """The top-level definitions with their nested ones; None when no grammar parses this language."""
    found = _parsed(text, language)
    return None if found is None else list(found)


@lru_cache(maxsize=8)  # a fresh read parses once for its chunks and its map (a re-filter, for its map)
def _parsed(text: str, language: str | None) -> tuple[Definition, ...] | None:
    parser = _parser(language)
    if parser is None:
        return None
    tree = parser.parse(text.encode("utf-8"))
    return tuple(_definitions(tree.root_node, text.split("\n")))


def _parser(language: str | None) -> Any:
    if language is None:
        return None
    try:
        from tree_sitter_language_pack import get_parser
        return get_parser(language)  # type: ignore[arg-type]
    except (ImportError, LookupError):
        return None


def _definitions(node: Any, lines: list[str]) -> Iterator[Definition]:
    for child in node.children:
        target = child
        if child.type == "decorated_definition":  # Python: the decorators belong to the definition
            target = child.child_by_field_name("definition") or child
        kind = _KINDS.get(target.type)
        if kind is None or target.end_point[0] == target.start_point[0] and child is target and kind[1]:
            yield from _definitions(child, lines)
            continue
        word, container = kind
        name_node = target.child_by_field_name("name")
        name = name_node.text.decode("utf-8", "replace") if name_node is not None else _first_name(target, lines)
        body = target.child_by_field_name("body")
        body_line = body.start_point[0] if body is not None else target.start_point[0] + 1
        if body is not None and body.start_point[0] == target.start_point[0]:  # `{` on the header line
            body_line = target.start_point[0] + 1
        first = _with_comments_above(child.start_point[0], lines)
        inner = tuple(_definitions(body if body is not None else target, lines)) if container or body else ()
        statements = tuple(c.start_point[0] for c in body.named_children) if body is not None else ()
        yield Definition(first, child.end_point[0], max(body_line, first + 1), f"{word} {name}", container, inner,
                         statements, target.start_point[0])


def _first_name(node: Any, lines: list[str]) -> str:
    header = lines[node.start_point[0]][node.start_point[1]:]
    words = [w for w in _NAMED.findall(header) if w not in _KEYWORDS]
    return words[0] if words else "?"


_KEYWORDS = frozenset({
    "def", "class", "func", "fn", "function", "pub", "public", "private", "protected", "static", "async",
    "export", "default", "const", "let", "var", "impl", "trait", "struct", "enum", "interface", "type", "mod",
    "module", "namespace", "object", "void", "abstract", "final", "override", "virtual", "inline", "extern",
    "unsafe",
})


def _with_comments_above(line: int, lines: list[str]) -> int:
    """The comment lines directly above a definition (no blank line between) are part of it."""
    while line > 0 and lines[line - 1].lstrip().startswith(("#", "//", "/*", "*", "--")) \
            and lines[line - 1].strip():
        line -= 1
    return line


def header_lines(text: str, language: str | None) -> list[int]:
    """The 1-based line of every definition's `def`/`class` line, in order: a map of the file."""
    found = definitions(text, language) or []
    out: list[int] = []

    def walk(items: tuple[Definition, ...] | list[Definition]) -> None:
        for d in items:
            out.append(d.header + 1)
            walk(d.children)

    walk(found)
    return sorted(set(out))


# --- chunks: line ranges of the view ------------------------------------------------------------------

@dataclass(frozen=True)
class LineSpan:
    first: int  # 0-based, inclusive
    last: int  # 0-based, inclusive
    context: str
    loose: bool = False  # lines between definitions (may join their neighbours), not a definition's own
    statements: tuple[int, ...] = ()  # where a long unit may be cut (its statements' first lines)


def code_spans(text: str, language: str | None) -> list[LineSpan]:
    """The view's lines cut into units: definitions (and class headers), and the blocks between them."""
    lines = text.split("\n")
    found = definitions(text, language)
    if not found:
        return list(_blocks(lines, 0, len(lines) - 1, ""))
    return list(_units(found, lines, 0, len(lines) - 1, ""))


def _units(found: list[Definition], lines: list[str], first: int, last: int, path: str) -> Iterator[LineSpan]:
    cursor = first
    for d in found:
        if d.first > cursor:
            yield from _blocks(lines, cursor, d.first - 1, path)
        context = f"{path} > {d.label}" if path else d.label
        if d.children:
            header_end = d.children[0].first - 1
            yield LineSpan(d.first, max(header_end, d.first), context)
            yield from _units(list(d.children), lines, max(header_end, d.first) + 1, d.last, context)
        else:
            yield LineSpan(d.first, d.last, context, statements=d.statements)
        cursor = max(cursor, d.last + 1)
    if cursor <= last:
        yield from _blocks(lines, cursor, last, path)


def _blocks(lines: list[str], first: int, last: int, context: str) -> Iterator[LineSpan]:
    """Blank-line separated blocks of lines (blank lines themselves belong to no block)."""
    start = None
    for i in range(first, last + 1):
        if lines[i].strip():
            start = i if start is None else start
        elif start is not None:
            yield LineSpan(start, i - 1, context, loose=True)
            start = None
    if start is not None:
        yield LineSpan(start, last, context, loose=True)


def code_chunks(text: str, offset: int, language: str | None, tokenizer: Tokenizer, target: int
                ) -> list[tuple[int, int, int, str]]:
    """(start, end, tokens, context) chunks of a code section starting at `offset` of the view: whole lines,
    a unit per chunk; small neighbouring blocks between definitions joined, a long unit cut at statements."""
    return line_chunks(text, offset, code_spans(text, language), tokenizer, target)


def line_chunks(text: str, offset: int, spans: list[LineSpan], tokenizer: Tokenizer, target: int
                ) -> list[tuple[int, int, int, str]]:
    """Whole-line chunks of line spans (code's units, a log's failures, a diff's hunks): loose neighbours joined
    while they fit, a long span cut at its statements or lines."""
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    out: list[tuple[int, int, int, str]] = []
    for span in _joined(spans, lines, tokenizer, target):
        for first, last in _cut(span, lines, tokenizer, target):
            while last > first and not lines[last].strip():  # no trailing blank lines
                last -= 1
            start, end = starts[first], starts[last] + len(lines[last])
            if not text[start:end].strip():
                continue
            tokens = tokenizer.count(text[start:end])
            if tokens <= target:
                out.append((offset + start, offset + end, tokens, span.context))
                continue
            # one line over the target alone (minified code): the only cut that falls inside a line
            cuts = [start + c for c in tokenizer.split_points(text[start:end], target)]
            for a, b in zip([start, *cuts], [*cuts, end], strict=True):
                if text[a:b].strip():
                    out.append((offset + a, offset + b, tokenizer.count(text[a:b]), span.context))
    return out


def _joined(spans: list[LineSpan], lines: list[str], tokenizer: Tokenizer, target: int) -> Iterator[LineSpan]:
    """Blocks between definitions (imports, constants) joined with the next ones of the same context while they
    fit; definitions stay alone."""
    pending: LineSpan | None = None
    for span in spans:
        if pending is not None and span.loose and span.context == pending.context and \
                tokenizer.count("\n".join(lines[pending.first : span.last + 1])) <= target:
            pending = LineSpan(pending.first, span.last, span.context, loose=True)
            continue
        if pending is not None:
            yield pending
            pending = None
        if span.loose:
            pending = span
        else:
            yield span
    if pending is not None:
        yield pending


def _cut(span: LineSpan, lines: list[str], tokenizer: Tokenizer, target: int) -> Iterator[tuple[int, int]]:
    """A unit as one chunk, or, when it is over `target` tokens, pieces cut before its statements (from the
    parser; else the lines at its body's indentation), between any lines only when one statement overflows."""
    text = "\n".join(lines[span.first : span.last + 1])
    if tokenizer.count(text) <= target or span.first == span.last:
        yield span.first, span.last
        return
    cuts = set(span.statements) or {i for i in range(span.first + 1, span.last + 1)
                                     if lines[i].strip() and _indent(lines[i]) <= _body_indent(span, lines)}
    piece_start, used = span.first, 0
    last_cut = None
    for i in range(span.first, span.last + 1):
        cost = tokenizer.count(lines[i]) + 1
        if i in cuts and i > piece_start:
            last_cut = i
        if used + cost > target and i > piece_start:
            cut = last_cut if last_cut is not None and last_cut > piece_start else i
            yield piece_start, cut - 1
            used = sum(tokenizer.count(lines[j]) + 1 for j in range(cut, i))
            piece_start, last_cut = cut, None
        used += cost
    yield piece_start, span.last


def _body_indent(span: LineSpan, lines: list[str]) -> int:
    return min((_indent(lines[i]) for i in range(span.first + 1, span.last + 1) if lines[i].strip()), default=0)


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip())


class LineIndex:
    """1-based line numbers of a text's character offsets."""

    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer("\n", text)]

    def line_of(self, offset: int) -> int:
        return bisect.bisect_right(self.starts, offset)

    def span(self, first: int, last: int, length: int) -> tuple[int, int]:
        """The character range [start, end) of lines first..last (1-based, inclusive), clamped to the text."""
        first = max(1, min(first, len(self.starts)))
        last = max(first, min(last, len(self.starts)))
        end = self.starts[last] - 1 if last < len(self.starts) else length
        return self.starts[first - 1], end
