"""JSON: flattened to `path: value` lines (keys in order), so a snippet says where a value came from; cut by record
(`results[3]`), a new record starting a new chunk. JSON that does not parse, or nests absurdly, is kept as text."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ctxsieve_client.rendering import View

from ..packing import Block, Piece, join_context, pack, paragraphs
from .base import Cutting, Leaf, Prose, Viewed


class Json(Prose):
    name = "json"
    shown_as = View(numbered=False)  # its view is a rendering: its lines are not the source's

    def detect(self, text: str) -> bool:
        return text.lstrip()[:1] in ("{", "[") and parse_json(text) is not NOT_JSON

    def view(self, text: str) -> Viewed:
        value = parse_json(text)
        if value is NOT_JSON:
            return Viewed(text, "text")
        view, leaves = flatten_json(value)
        return Viewed(view, self.name, None, tuple(leaves))

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        del start, end
        return list(pack(view, list(json_blocks(view, leaves, title)), how.tokenizer, how.target))


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


def json_blocks(text: str, leaves: tuple[Leaf, ...], title: str) -> Iterator[Block]:
    """One block per paragraph of each value; a new record (`results[3]`) starts a new chunk."""
    names = {leaf.path: text[leaf.start : leaf.end].split(": ", 1)[-1] for leaf in leaves
             if leaf.path.endswith((".title", ".name")) and "\n" not in text[leaf.start : leaf.end]}
    current: str | None = None
    for leaf in leaves:
        record = json_record_key(leaf.path)
        label = names.get(record + ".title") or names.get(record + ".name") or ""
        context = join_context(title, f"{record} ({label[:80]})" if label else record)
        for index, (s, e) in enumerate(paragraphs(text, leaf.start, leaf.end)):
            yield Block(s, e, context, record != current and index == 0)
        current = record
