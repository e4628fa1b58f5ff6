"""Tool definitions in OpenAI, Anthropic and MCP formats, held canonically and rendered back.

    OpenAI     {"type": "function", "function": {"name", "description", "parameters", "strict"?}}
               or bare {"name", "description", "parameters"}
    Anthropic  {"name", "description", "input_schema"}
    MCP        {"name", "title"?, "description", "inputSchema", "outputSchema"?, "annotations"?}

The JSON Schema of the arguments is kept verbatim (nested objects, arrays, enums, $defs/$ref, parameter
descriptions), so every format round-trips through every other. Fields only one format has (MCP
annotations and output schema, OpenAI `strict`) are kept and emitted wherever the target format has them.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Literal

from jsonschema import Draft202012Validator
from jsonschema.exceptions import SchemaError

from ..errors import InvalidInput
from ..lru import Lru

Format = Literal["openai", "anthropic", "mcp"]
FORMATS: tuple[Format, ...] = ("openai", "anthropic", "mcp")
_NAME = re.compile(r"^[A-Za-z0-9_.\-]{1,128}$")
_EMPTY_SCHEMA: dict[str, Any] = {"type": "object", "properties": {}}


class InvalidTool(InvalidInput):
    """A definition that cannot be served; the message names the tool and the reason."""


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    title: str | None = None
    annotations: dict[str, Any] | None = None
    output_schema: dict[str, Any] | None = None
    strict: bool | None = None
    examples: tuple[str, ...] = field(default=())  # queries given at registration, used as evidence

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "input_schema": self.input_schema,
                "title": self.title, "annotations": self.annotations, "output_schema": self.output_schema,
                "strict": self.strict, "examples": list(self.examples)}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Tool:
        return cls(d["name"], d["description"], d["input_schema"], d.get("title"), d.get("annotations"),
                   d.get("output_schema"), d.get("strict"), tuple(d.get("examples") or ()))


def parse_tool(definition: Any, position: int) -> Tool:
    if not isinstance(definition, dict):
        raise InvalidTool(f"tool #{position}: a definition must be a JSON object")
    body = definition
    strict = None
    if definition.get("type") == "function" and isinstance(definition.get("function"), dict):
        body = definition["function"]
        strict = body.get("strict")
    name = body.get("name")
    label = f"tool {name!r}" if isinstance(name, str) and name else f"tool #{position}"
    if not isinstance(name, str) or not _NAME.match(name):
        raise InvalidTool(f"{label}: a name of 1-128 letters, digits, '_', '-' or '.' is required")
    description = body.get("description", "")
    if not isinstance(description, str):
        raise InvalidTool(f"{label}: description must be a string")
    schema = _schema_of(body, label)
    examples = body.get("examples", definition.get("examples", []))
    if not isinstance(examples, list) or not all(isinstance(e, str) for e in examples):
        raise InvalidTool(f"{label}: examples must be a list of strings")
    output_schema = body.get("outputSchema")
    if output_schema is not None:
        _check_schema(output_schema, f"{label} outputSchema")
    return Tool(name, description, schema, body.get("title"), body.get("annotations"), output_schema,
                strict if isinstance(strict, bool) else None, tuple(examples[:100]))


def _schema_of(body: dict[str, Any], label: str) -> dict[str, Any]:
    present = [k for k in ("parameters", "input_schema", "inputSchema") if k in body]
    if len(present) > 1:
        raise InvalidTool(f"{label}: give one of parameters, input_schema or inputSchema, not {present}")
    schema = body[present[0]] if present else dict(_EMPTY_SCHEMA)
    _check_schema(schema, label)
    if schema.get("type", "object") != "object":
        raise InvalidTool(f"{label}: the argument schema must have type 'object'")
    return schema


# Digests of schemas that passed the meta-schema: the check was most of a large toolset's registration
# (`python -m bench.tools` registers one), and agents re-register the same toolsets at every start.
_VALID_SCHEMAS: Lru[str, bool] = Lru(65_536)


def _check_schema(schema: Any, label: str) -> None:
    if not isinstance(schema, dict):
        raise InvalidTool(f"{label}: the schema must be a JSON object")
    key = hashlib.sha256(json.dumps(schema, sort_keys=True, ensure_ascii=False, default=repr).encode()).hexdigest()
    if _VALID_SCHEMAS.get(key):
        return
    try:
        Draft202012Validator.check_schema(schema)
    except SchemaError as exc:
        raise InvalidTool(f"{label}: invalid JSON Schema: {exc.message}") from exc
    _VALID_SCHEMAS.put(key, True)


def parse_toolset(definitions: list[Any]) -> list[Tool]:
    tools = [parse_tool(d, i) for i, d in enumerate(definitions)]
    seen: set[str] = set()
    for tool in tools:
        if tool.name in seen:
            raise InvalidTool(f"tool {tool.name!r}: duplicate name in this toolset")
        seen.add(tool.name)
    return tools


def render(tool: Tool, fmt: Format) -> dict[str, Any]:
    """The tool as one provider's API declares tools (a renderer per format, no branch on a format's name)."""
    return _RENDERERS[fmt](tool)


def _openai(tool: Tool) -> dict[str, Any]:
    function: dict[str, Any] = {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}
    if tool.strict is not None:
        function["strict"] = tool.strict
    return {"type": "function", "function": function}


def _anthropic(tool: Tool) -> dict[str, Any]:
    return {"name": tool.name, "description": tool.description, "input_schema": tool.input_schema}


def _mcp(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.title:
        out["title"] = tool.title
    out["description"] = tool.description
    out["inputSchema"] = tool.input_schema
    if tool.output_schema is not None:
        out["outputSchema"] = tool.output_schema
    if tool.annotations is not None:
        out["annotations"] = tool.annotations
    return out


_RENDERERS: dict[str, Callable[[Tool], dict[str, Any]]] = {"openai": _openai, "anthropic": _anthropic, "mcp": _mcp}


def serialized(definition: dict[str, Any]) -> str:
    """How a definition travels in a model request: compact JSON, the basis of its token cost."""
    return json.dumps(definition, ensure_ascii=False, separators=(",", ":"))


def _split_identifier(name: str) -> str:
    spaced = re.sub(r"([a-z0-9])([A-Z])", r"\1 \2", name)
    return re.sub(r"[_\-.]+", " ", spaced).lower()


def index_text(tool: Tool) -> str:
    """What a tool is for, as searchable text: name split into words, description, parameters, enums."""
    parts = [f"{_split_identifier(tool.name)}: {tool.description}".strip()]
    if tool.title:
        parts.append(tool.title)
    for pname, pdesc in _parameters(tool.input_schema, depth=0):
        parts.append(f"{_split_identifier(pname)} {pdesc}".strip())
    return "\n".join(parts)


def name_text(tool: Tool) -> str:
    """The tool as most tool indexes embed it: `name: description`."""
    return f"{tool.name}: {tool.description}"


def _parameters(schema: Any, depth: int) -> list[tuple[str, str]]:
    if not isinstance(schema, dict) or depth > 3:
        return []
    out = []
    for pname, prop in (schema.get("properties") or {}).items():
        if not isinstance(prop, dict):
            continue
        desc = str(prop.get("description", ""))
        enum = prop.get("enum")
        items = prop.get("items")
        if not enum and isinstance(items, dict):
            enum = items.get("enum")
        if enum:
            desc += " (" + ", ".join(str(e) for e in enum[:20]) + ")"
        out.append((pname, desc))
        out.extend(_parameters(prop, depth + 1))
        out.extend(_parameters(prop.get("items"), depth + 1))
    return out
