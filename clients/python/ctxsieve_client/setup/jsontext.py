"""A JSON file's text changed only where its value changes: a key added goes before its object's closing brace in the
object's own layout (indented like its siblings, or on the one line of a one-line object), a key or item removed
takes its comma with it, a value changed is written in its place; every other byte (order, indentation, spacing) is
the user's. The result is checked to parse to the value asked for, else the whole value is written."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from json.decoder import scanstring  # type: ignore[attr-defined]  # the stdlib's own string reader; untyped
from typing import Any

_WS = re.compile(r"[ \t\n\r]*")
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null")


@dataclass
class Node:
    start: int
    end: int
    members: list[Member] | None = None  # an object's, in the text's order
    items: list[Node] | None = None  # an array's


@dataclass
class Member:
    key: str
    key_start: int
    value: Node = field(repr=False)


class Duplicate(ValueError):
    """A key twice in one object: which one the agent reads is its parser's choice, so the text is not edited."""


def patched(text: str, new: Any, indent: int = 2) -> str:
    """`text` with its value changed to `new`, as little of it rewritten as can be."""
    try:
        root = _parse(text, _WS.match(text, 0).end())  # type: ignore[union-attr]
        out = text[:root.start] + _render(text, root, json.loads(text), new) + text[root.end:]
    except (Duplicate, ValueError, IndexError):
        return json.dumps(new, indent=indent, ensure_ascii=False) + "\n"
    return out if json.loads(out) == new else json.dumps(new, indent=indent, ensure_ascii=False) + "\n"


def _parse(text: str, i: int) -> Node:
    c = text[i]
    if c == "{":
        return _object(text, i)
    if c == "[":
        return _array(text, i)
    if c == '"':
        return Node(i, scanstring(text, i + 1)[1])
    found = _SCALAR.match(text, i)
    if found is None:
        raise ValueError(f"not JSON at {i}")
    return Node(i, found.end())


def _skip(text: str, i: int) -> int:
    return _WS.match(text, i).end()  # type: ignore[union-attr]


def _object(text: str, i: int) -> Node:
    start, members = i, list[Member]()
    i = _skip(text, i + 1)
    while text[i] != "}":
        key, after = scanstring(text, i + 1)
        if any(m.key == key for m in members):
            raise Duplicate(key)
        value = _parse(text, _skip(text, _skip(text, after) + 1))  # past the colon
        members.append(Member(key, i, value))
        i = _skip(text, value.end)
        i = _skip(text, i + 1) if text[i] == "," else i
    return Node(start, i + 1, members=members)


def _array(text: str, i: int) -> Node:
    start, items = i, list[Node]()
    i = _skip(text, i + 1)
    while text[i] != "]":
        item = _parse(text, i)
        items.append(item)
        i = _skip(text, item.end)
        i = _skip(text, i + 1) if text[i] == "," else i
    return Node(start, i + 1, items=items)


def _render(text: str, node: Node, old: Any, new: Any) -> str:
    if old == new and type(old) is type(new):
        return text[node.start:node.end]
    if node.members is not None and isinstance(old, dict) and isinstance(new, dict):
        return _render_object(text, node, old, new)
    if node.items is not None and isinstance(old, list) and isinstance(new, list):
        return _render_array(text, node, old, new)
    return _dumps(new, _line_indent(text, node.start), _unit(text))


def _render_object(text: str, node: Node, old: dict[str, Any], new: dict[str, Any]) -> str:
    members = node.members or []
    kept = [m for m in members if m.key in new]
    parts = [_lead(text, node, members, m, kept) + text[m.key_start:m.value.start] +
             _render(text, m.value, old[m.key], new[m.key]) for m in kept]
    added = [(k, v) for k, v in new.items() if k not in old]
    return _close(text, node, members, parts, [json.dumps(k, ensure_ascii=False) + ": " for k, _ in added],
                  [v for _, v in added])


def _render_array(text: str, node: Node, old: list[Any], new: list[Any]) -> str:
    items = node.items or []
    if len(old) == len(new):
        pairs = list(zip(items, old, new, strict=True))
        added: list[Any] = []
    else:  # items taken out (kept in order) and items added at the end
        pairs, rest = [], list(new)
        for item, value in zip(items, old, strict=True):
            if rest and rest[0] == value:
                pairs.append((item, value, rest.pop(0)))
        added = rest
    kept = [item for item, _, _ in pairs]
    parts = [_lead(text, node, items, item, kept) + _render(text, item, value, wanted)
             for item, value, wanted in pairs]
    return _close(text, node, items, parts, [""] * len(added), added)


def _start(entry: Member | Node) -> int:
    return entry.key_start if isinstance(entry, Member) else entry.start


def _end(entry: Member | Node) -> int:
    return entry.value.end if isinstance(entry, Member) else entry.end


def _lead(text: str, node: Node, entries: list[Any], entry: Any, kept: list[Any]) -> str:
    """The text before an entry kept: the space after the bracket for the first kept, else the separator (comma
    and space) that stood before it."""
    if entry is kept[0]:
        return text[node.start + 1:_start(entries[0])]
    before = entries[entries.index(entry) - 1]
    return text[_end(before):_start(entry)]


def _close(text: str, node: Node, entries: list[Any], parts: list[str], heads: list[str], values: list[Any]) -> str:
    """The entries kept, then the ones added in the layout of their siblings, then the closing bracket."""
    first_space = text[node.start + 1:_start(entries[0])] if entries else ""
    inner = _child_indent(text, node, first_space)  # None: its entries stand on one line
    if len(entries) > 1:
        sep = text[_end(entries[0]):_start(entries[1])]
    else:
        sep = "," + ("\n" + inner if inner is not None else first_space or " ")
    for head, value in zip(heads, values, strict=True):
        one_line = json.dumps(value, ensure_ascii=False)
        body = head + (_dumps(value, inner, _unit(text)) if inner is not None else one_line)
        lead = sep if parts else first_space if entries else "\n" + inner if inner is not None else ""
        parts.append(lead + body)
    if not parts:
        return text[node.start] + text[node.end - 1]
    tail = text[_end(entries[-1]):node.end - 1] if entries else "\n" + _line_indent(text, node.start) if inner else ""
    return text[node.start] + "".join(parts) + tail + text[node.end - 1]


def _child_indent(text: str, node: Node, first_space: str) -> str | None:
    """How an entry of this node is indented, None when its entries stand on one line."""
    if "\n" in first_space:
        return first_space.rsplit("\n", 1)[1]
    inside = text[node.start + 1:node.end - 1]
    if first_space or inside.strip():
        return None  # a one-line object or array
    return _line_indent(text, node.start) + _unit(text)  # empty: laid out as the file is


def _line_indent(text: str, at: int) -> str:
    line = text[text.rfind("\n", 0, at) + 1:at]
    return line[:len(line) - len(line.lstrip(" \t"))]


def _unit(text: str) -> str:
    """The file's indentation step: the first indented line's (spaces or a tab), else two spaces."""
    found = re.search(r"\n(\t| +)\S", text)
    return found.group(1) if found else "  "


def _dumps(value: Any, indent: str, unit: str) -> str:
    return json.dumps(value, indent=unit, ensure_ascii=False).replace("\n", "\n" + indent)
