"""Turn raw tool output into a *view*: the text that chunks point into, plus per-document spans.

The raw output is never altered (it is stored as sent). For text, markdown and code the view is the raw
text itself; HTML is reduced to its main text (trafilatura) and JSON is flattened to `path: value`
lines, so that a snippet says where a value came from. The same input always gives the same view.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from html.parser import HTMLParser
from typing import Any, Literal

from .outputs import looks_like_diff, looks_like_grep, looks_like_log

ContentType = Literal["text", "markdown", "html", "json", "code", "log", "diff", "grep"]
CONTENT_TYPES: tuple[str, ...] = ("text", "markdown", "html", "json", "code", "log", "diff", "grep")
LINE_KINDS = ("code", "log", "diff", "grep")  # cut into whole lines, shown with their line numbers
DOCUMENT_SEPARATOR = "\n\n"

_HTML_HINT = re.compile(r"<(!doctype html|html|head|body|div|p|article|span|table|ul|a\s)[\s>]", re.I)
_MD_HINT = re.compile(r"^(#{1,6} \S|```|\* \S|- \S|\d+\. \S|\|.+\|)", re.M)
_CODE_HINT = re.compile(
    r"^\s*(def |class |import |from \S+ import |function |const |let |var |func |fn |pub |package |"
    r"#include|public |private |@\w+|return\b|if \(|for \()", re.M)


@dataclass(frozen=True)
class Document:
    text: str
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Leaf:
    """One flattened JSON value: `path: value` at [start, end) of the view (the value may span lines)."""

    start: int
    end: int
    path: str


@dataclass(frozen=True)
class Section:
    """One document's span of the view, and how its text was interpreted."""

    start: int
    end: int
    content_type: str
    title: str | None = None
    url: str | None = None
    leaves: tuple[Leaf, ...] = field(default=(), compare=False, repr=False)  # JSON only; derived, not stored


@dataclass(frozen=True)
class View:
    text: str
    content_type: str
    sections: tuple[Section, ...]


def detect_content_type(text: str) -> str:
    head = text.lstrip()[:2000]
    if head[:1] in "{[" and _parses_as_json(text):
        return "json"
    if _HTML_HINT.search(head):
        return "html"
    if looks_like_diff(text):
        return "diff"
    if looks_like_grep(text):
        return "grep"
    if looks_like_log(text):
        return "log"
    if len(_MD_HINT.findall(text[:20000])) >= 2:
        return "markdown"
    lines = [ln for ln in text[:20000].splitlines() if ln.strip()]
    if lines and len(_CODE_HINT.findall(text[:20000])) >= max(3, len(lines) // 8):
        return "code"
    return "text"


MAX_JSON_DEPTH = 64  # deeper JSON is kept as plain text: paths like [0][0][0]... would drown the values


def json_depth(value: Any) -> int:
    """Nesting depth, iteratively (a recursive walk is what deep input is built to break)."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict | list):
            deepest = max(deepest, depth)
            stack.extend((child, depth + 1) for child in (item.values() if isinstance(item, dict) else item))
    return deepest


NOT_JSON = object()


def parse_json(text: str) -> Any:
    """The parsed value, or NOT_JSON when the text does not parse or nests deeper than MAX_JSON_DEPTH."""
    try:
        value = json.loads(text)
    except (ValueError, RecursionError):
        return NOT_JSON
    return value if json_depth(value) <= MAX_JSON_DEPTH else NOT_JSON


def _parses_as_json(text: str) -> bool:
    return parse_json(text) is not NOT_JSON


def view_of_text(text: str, content_type: str) -> tuple[str, str, str | None, list[Leaf]]:
    """(view text, resolved content type, title found in the content, JSON leaves)."""
    kind = detect_content_type(text) if content_type == "auto" else content_type
    if kind == "html":
        view, title = html_to_text(text)
        return view, kind, title, []
    if kind == "json":
        value = parse_json(text)
        if value is NOT_JSON:
            return text, "text", None, []  # JSON that does not parse (or nests absurdly) is kept as text
        view, leaves = flatten_json(value)
        return view, kind, None, leaves
    return text, kind, None, []


def build_view(documents: Sequence[Document], content_type: str) -> View:
    parts: list[str] = []
    sections: list[Section] = []
    offset = 0
    kinds = set()
    for doc in documents:
        if parts:
            parts.append(DOCUMENT_SEPARATOR)
            offset += len(DOCUMENT_SEPARATOR)
        text, kind, found_title, leaves = view_of_text(doc.text, content_type)
        kinds.add(kind)
        parts.append(text)
        shifted = tuple(Leaf(x.start + offset, x.end + offset, x.path) for x in leaves)
        sections.append(Section(offset, offset + len(text), kind, doc.title or found_title, doc.url, shifted))
        offset += len(text)
    resolved = kinds.pop() if len(kinds) == 1 else "mixed"
    return View("".join(parts), resolved, tuple(sections))


# --- JSON -------------------------------------------------------------------------------------------

def flatten_json(value: Any) -> tuple[str, list[Leaf]]:
    """`results[3].content: ...` lines, keys kept in order, so each value names its path."""
    lines: list[str] = []
    leaves: list[Leaf] = []
    offset = 0
    for path, text in _leaves(value, ""):
        line = f"{path}: {text}" if path else text
        leaves.append(Leaf(offset, offset + len(line), path))
        lines.append(line)
        offset += len(line) + 1
    return "\n".join(lines), leaves


def _leaves(value: Any, path: str) -> Iterator[tuple[str, str]]:
    if isinstance(value, dict):
        if not value:
            yield path, "{}"
        for key, item in value.items():
            yield from _leaves(item, f"{path}.{key}" if path else str(key))
    elif isinstance(value, list):
        if not value:
            yield path, "[]"
        for i, item in enumerate(value):
            yield from _leaves(item, f"{path}[{i}]")
    elif isinstance(value, str):
        yield path, value
    else:
        yield path, json.dumps(value)


def json_record_key(path: str) -> str:
    """The record a value belongs to: its path up to the first list index (`results[3]`)."""
    match = re.match(r"^[^\[]*\[\d+\]", path)
    return match.group(0) if match else path.split(".", 1)[0]


# --- HTML -------------------------------------------------------------------------------------------

def html_to_text(html: str) -> tuple[str, str | None]:
    """Main text as markdown-ish paragraphs (trafilatura); a plain tag stripper when it finds none."""
    import trafilatura

    text = trafilatura.extract(html, output_format="markdown", include_comments=False, include_tables=True,
                               include_links=False, favor_recall=True, deduplicate=False)
    meta = trafilatura.extract_metadata(html)
    title = meta.title if meta is not None and meta.title else None
    if not text or not text.strip():
        text = _strip_tags(html)
    text = text.strip()
    if title and not text.startswith(title) and not text.startswith("# "):
        text = f"# {title}\n\n{text}"
    return text, title


class _TextCollector(HTMLParser):
    _SKIP = {"script", "style", "noscript", "template", "svg", "head"}
    _BLOCK = {"p", "div", "br", "li", "tr", "h1", "h2", "h3", "h4", "h5", "h6", "section", "article", "pre"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:  # noqa: ARG002
        if tag in self._SKIP:
            self.skip += 1
        elif tag in self._BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag: str) -> None:
        if tag in self._SKIP and self.skip:
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip:
            self.parts.append(data)


def _strip_tags(html: str) -> str:
    collector = _TextCollector()
    collector.feed(html)
    collector.close()
    text = re.sub(r"[ \t\r\f\v]+", " ", "".join(collector.parts))
    return re.sub(r"\s*\n\s*\n\s*", "\n\n", text).strip()
