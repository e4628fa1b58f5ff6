"""ctxsieve's ref tools, defined once: each tool's name, description, parameters with their defaults, and how a call
maps to the typed client (`Requests`) and its answer to the text the model reads. Every surface registers these:
`ctxsieve mcp` (mcp_server.py), the gateway (gateway/own_tools.py), the LangChain middleware (langchain.py) and the
proxy's `--serve-tools` (proxy/serving.py), each through a small adapter to its framework (`signature` for those
that read a Python function, `schema` for those that take JSON Schema). A new tool is one more entry in REF_TOOLS.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any

from .calls import Call, Requests
from .code_search import NOTE, TOOL_MAX_TOKENS, render_hits, search_request
from .models import FilterResult, RefContent
from .wrap import render_result

REQUIRED = inspect.Parameter.empty
_JSON_TYPES = {str: "string", int: "integer"}


@dataclass(frozen=True)
class Param:
    name: str
    type: type
    description: str
    default: Any = REQUIRED  # REQUIRED: the model must give it

    @property
    def required(self) -> bool:
        return self.default is REQUIRED


@dataclass(frozen=True)
class RefTool:
    name: str
    description: str
    params: tuple[Param, ...]
    request: Callable[[Mapping[str, Any]], Call[Any]]  # the call's arguments (defaults applied) -> the client call
    answer: Callable[[Any], str]  # the service's answer -> the text the model reads

    def arguments(self, given: Mapping[str, Any]) -> dict[str, Any]:
        """The call's arguments: each given one of its type, else its default (a required one: empty); unknown ones
        dropped."""
        return {p.name: value if isinstance(value := given.get(p.name), p.type) else p.type() if p.required
                else p.default for p in self.params}

    def call(self, given: Mapping[str, Any]) -> Call[Any]:
        return self.request(self.arguments(given))

    def schema(self) -> dict[str, Any]:
        """The parameters as JSON Schema (for a tool definition sent to a model)."""
        properties = {p.name: {"type": _JSON_TYPES[p.type], "description": p.description} for p in self.params}
        return {"type": "object", "properties": properties, "required": [p.name for p in self.params if p.required]}

    def signature(self, *extra: inspect.Parameter) -> inspect.Signature:
        """The parameters as a Python signature (keyword-only; optional ones may be None; each described as `schema`
        describes it, in the annotation a framework makes its JSON schema from: an MCP client's model was sent
        `max_tokens` without "at most 6000"), for frameworks that read a function's; `extra`: the framework's own (a
        context)."""
        from pydantic import Field  # (the frameworks' own: the client alone needs only httpx)

        params = [inspect.Parameter(p.name, inspect.Parameter.KEYWORD_ONLY, default=p.default, annotation=Annotated[
            p.type if p.required else p.type | None, Field(description=p.description)]) for p in self.params]
        return inspect.Signature([*params, *extra], return_annotation=str)


def as_function(tool: RefTool, run: Callable[..., Any], *extra: inspect.Parameter) -> Callable[..., Any]:
    """`run` (sync or async, taking the tool's arguments by keyword) named, described and typed as `tool`."""
    signature = tool.signature(*extra)
    run.__name__ = run.__qualname__ = tool.name
    run.__doc__ = tool.description
    run.__signature__ = signature  # type: ignore[attr-defined]
    run.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()} | {"return": str}
    return run


def _refilter(args: Mapping[str, Any]) -> Call[FilterResult]:
    return Requests.refilter(args["ref"], args["query"], k=args["k"], max_tokens=args["max_tokens"],
                             placeholder="tools")


def _fetch(args: Mapping[str, Any]) -> Call[RefContent]:
    """A chunk with its `window` neighbours; the window means nothing without a chunk."""
    chunk = args["chunk"]
    return Requests.fetch_ref(args["ref"], start=args["start"], end=args["end"], chunk=chunk, lines=args["lines"],
                              window=args["window"] if chunk is not None else None)


_REF = Param("ref", str, "the ref a placeholder names, src_...")
FILTER_REF = RefTool(
    "filter_ref", "Filter a stored output (by its ref) again with a new query: the parts of it that answer the query.",
    (_REF, Param("query", str, "what you need from that output now"),
     Param("k", int, "at most this many parts", 5),
     Param("max_tokens", int, "at most this many tokens (default: the output's kind decides)", None)),
    _refilter, render_result)
FETCH_REF = RefTool(
    "fetch_ref", "Fetch a stored output whole, a character range (start, end), chunk N with `window` neighbours "
                 "each side, or lines \"A-B\" (a file's own line numbers).",
    (_REF, Param("start", int, "first character of a range", None), Param("end", int, "end of a range", None),
     Param("chunk", int, "a chunk's number (an outline's #N)", None),
     Param("window", int, "with chunk: this many chunks each side", 0),
     Param("lines", str, "\"A-B\": those lines of the output", None)),
    _fetch, lambda part: str(part.text))
SEARCH_CODE = RefTool(
    "search_code", "Search this repository's code by name and words (and by meaning once its vectors are made): "
                   "functions, methods and classes best first, each with its path, qualified name and true line "
                   "numbers. Use it before grepping to find "
                   "where something is defined or handled; `path` narrows to a glob or folder, `repo` names another "
                   "indexed repository.",
    (Param("query", str, "what you are looking for: words, names as written in the code, an error message"),
     Param("k", int, "at most this many definitions", 10),
     Param("path", str, "only files matching this glob or under this folder", None),
     Param("repo", str, "an indexed repository's name (default: the one around the working folder)", None),
     Param("max_tokens", int, f"the tokens of the whole answer (default 2000, at most {TOOL_MAX_TOKENS}: a larger "
                              f"one is taken as {TOOL_MAX_TOKENS})", None)),
    search_request, render_hits)
REF_TOOLS: tuple[RefTool, ...] = (FILTER_REF, FETCH_REF, SEARCH_CODE)
BY_NAME = {tool.name: tool for tool in REF_TOOLS}
NAMES = tuple(BY_NAME)
_CLIENT_NAME = re.compile(r"(?:mcp__(?:(?!__).)+__)?(" + "|".join(map(re.escape, NAMES)) + ")")


def answered_by_ref_tool(tool: str, text: str) -> bool:
    """`text` is a ref tool's answer, the tool named as a client names it (bare, or an MCP server's:
    `mcp__<server>__fetch_ref`): a hook or proxy leaves it as it is (it is what the model asked for; cut again, it
    would lose its way to the rest). filter_ref and fetch_ref are known by name; search_code, a name other servers
    use too (GitHub's), by its closing note as well."""
    named = _CLIENT_NAME.fullmatch(tool)
    if named is None:
        return False
    return named.group(1) != SEARCH_CODE.name or text.rstrip().rpartition("\n")[2].startswith(NOTE)
