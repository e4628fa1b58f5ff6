"""HTML: reduced to its main text as markdown-ish paragraphs (trafilatura), then cut as markdown is."""

from __future__ import annotations

import re
from html.parser import HTMLParser

from ctxsieve_client.rendering import View

from ..packing import Piece, pack
from .base import Cutting, Leaf, Prose, Viewed
from .markdown import markdown_blocks

_HTML_HINT = re.compile(r"<(!doctype html|html|head|body|div|p|article|span|table|ul|a\s)[\s>]", re.I)


class Html(Prose):
    name = "html"
    shown_as = View(numbered=False)  # its view is a rendering: its lines are not the source's

    def detect(self, text: str) -> bool:
        return bool(_HTML_HINT.search(text.lstrip()[:2000]))

    def view(self, text: str) -> Viewed:
        view, title = html_to_text(text)
        return Viewed(view, self.name, title)

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del leaves
        return list(pack(view, list(markdown_blocks(view, start, end, title)), how.tokenizer, how.target))


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
