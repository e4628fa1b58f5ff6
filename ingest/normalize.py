"""Turn raw tool output into a *view*: the text that chunks point into, plus per-document spans.

The raw output is never altered (it is stored as sent). Each document's kind (ingest/kinds) makes its view: for
text, markdown, code and command output the view is the raw text itself; HTML is reduced to its main text and JSON
is flattened to `path: value` lines, so that a snippet says where a value came from. The same input always gives
the same view.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from .kinds import Leaf, Viewed, detect, resolve

DOCUMENT_SEPARATOR = "\n\n"


@dataclass(frozen=True)
class Document:
    text: str
    title: str | None = None
    url: str | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


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
    return detect(text).name


def view_of_text(text: str, content_type: str, path: str | None = None) -> Viewed:
    """The document's view by its kind: the one named, else code for a source file the call names, else detected."""
    return resolve(content_type, text, path).view(text)


def build_view(documents: Sequence[Document], content_type: str, path: str | None = None) -> View:
    parts: list[str] = []
    sections: list[Section] = []
    offset = 0
    kinds = set()
    for doc in documents:
        if parts:
            parts.append(DOCUMENT_SEPARATOR)
            offset += len(DOCUMENT_SEPARATOR)
        viewed = view_of_text(doc.text, content_type, path)
        kinds.add(viewed.kind)
        parts.append(viewed.text)
        shifted = tuple(Leaf(x.start + offset, x.end + offset, x.path) for x in viewed.leaves)
        sections.append(Section(offset, offset + len(viewed.text), viewed.kind, doc.title or viewed.title, doc.url,
                                shifted))
        offset += len(viewed.text)
    resolved = kinds.pop() if len(kinds) == 1 else "mixed"
    return View("".join(parts), resolved, tuple(sections))
