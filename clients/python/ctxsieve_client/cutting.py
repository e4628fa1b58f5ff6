"""One rule for every surface that sits in a tool's path (the gateway, the Claude Code hook, the LangChain
middleware): whether a tool's text output is cut, the filter request that cuts it, and the text the agent then
sees. Sans-IO like `Requests`: each surface sends the call its own way (sync or async) and reads the answer here.

- Text of no more bytes than `passthrough_tokens` passes as it is, uncounted (each token is at least one byte).
- Larger text is sent to `/v1/filter` whole (stored under its ref), with the tool as called and its arguments with
  credentials masked, cut to `max_tokens` for the intent, or answered with an outline when there is none; the
  placeholder speaks the `tools` style. Without a `max_tokens` of the user's, a call that names a source file (or
  whose text is a script: a `#!` line naming an interpreter) leaves the budget to the service's rule for code (a
  third of the file, 1,000 to 6,000 tokens with its note; a file of no more, whole); anything else gets PROSE_TOKENS.
- What the service counts as within `passthrough_tokens` (or lets through whole) passes as it is too.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from .client import Call, ContentType, FilterOptions, Requests
from .languages import command_texts, is_source, shebang_language, source_path
from .models import FileOrder, FilterResult
from .names import masked
from .placeholder import Namer, as_is, placeholder_line
from .rendering import render_outline
from .wrap import render_result

OUTLINE_HEADING = "Outline (no intent given; ask with one, or fetch a part by its chunk number):"


MAX_INTENT_CHARS = 4000  # the API's limit on a filter query: a longer intent (a conversation's turns) keeps its end
PROSE_TOKENS = 1500  # the budget of any output but a source file, unless the user set one


@dataclass(frozen=True, kw_only=True)
class CutOptions:
    passthrough_tokens: int = 1000
    max_tokens: int | None = None  # None: the service's rule for a source file, PROSE_TOKENS for anything else


def names_source_file(arguments: Mapping[str, Any]) -> bool:
    """The call names a source file (Read's `file_path`, read_text_file's `path`, ...): the service reads it as code."""
    path = source_path(arguments)
    return path is not None and is_source(path)


# a shell command (or a script that runs one) printing a file: cat, nl, head, tail, sed -n 'A,Bp', bat, less
_PRINTS = re.compile(r"(?:^|[\s;&|(`\"'])(?:cat|nl|bat|less|head|tail|sed\s+-n\s+['\"]?\d+(?:,\d+)?p['\"]?)"
                     r"(?:\s+-[\w-]+(?:\s+\+?\d+)?)*\s+['\"]?([\w./~-]+)")


def prints_source_file(arguments: Mapping[str, Any]) -> bool:
    """The call runs a command that prints a source file (`cat src/app.py`, `sed -n '1,200p' x.go`): its output is
    that file's text, read as code."""
    return any(is_source(m.group(1)) for command in command_texts(arguments) for m in _PRINTS.finditer(command))


def passes(text: str, options: CutOptions) -> bool:
    """Small enough to pass as it is, without counting: no more bytes than the budget has tokens."""
    return not text or len(text.encode("utf-8")) <= options.passthrough_tokens


def cut_request(text: str, intent: str | None, tool: str, arguments: Mapping[str, Any], options: CutOptions,
                kind: ContentType = "auto", cwd: str | None = None) -> Call[FilterResult] | None:
    """The filter call for a tool's text output, or None when it passes as it is. `kind` is what the caller knows
    of the output beyond the call's arguments (a shell command that printed a source file: code); `cwd`, the
    absolute folder the tool ran in, if known (a grep's relative paths are read from it)."""
    if passes(text, options):
        return None
    intent = intent[-MAX_INTENT_CHARS:] if intent else None
    code = names_source_file(arguments) or kind == "code" or shebang_language(text) is not None
    budget = options.max_tokens or (None if code else PROSE_TOKENS)
    source: dict[str, Any] = {"tool": tool, "args": masked(arguments), **({"cwd": cwd} if cwd else {})}
    fields: FilterOptions = {"source": source, "k": 50, "max_tokens": budget, "mode": "fast" if intent else "outline",
                             "placeholder": "tools"}
    if kind != "auto":
        fields["content_type"] = kind
    return Requests.filter(intent, text, **fields)


def named_placeholder(result: FilterResult, name: Namer) -> str:
    """The answer's placeholder (the `tools` style a surface asks for) with ctxsieve's tools as `name` names them."""
    return result.placeholder if result.more is None or name is as_is else placeholder_line(result.more, "tools", name)


def was_cut(result: FilterResult, options: CutOptions) -> bool:
    """The service cut the output (it did not come back whole, and was over passthrough_tokens)."""
    return not result.passthrough and result.usage.input_tokens > options.passthrough_tokens


def cut_text(result: FilterResult, options: CutOptions, name: Namer = as_is, original: str | None = None,
             placeholder: str | None = None) -> str | None:
    """What the agent sees instead of the output (snippets or an outline, then the placeholder, its tools named as
    the runtime offers them: `name`), or None when the output passes as it is: also when the cut, with its headings
    and placeholder, would be no shorter than the `original` output. `placeholder`: a line of the surface's own."""
    if not was_cut(result, options):
        return None
    placeholder = named_placeholder(result, name) if placeholder is None else placeholder
    if result.more is not None and result.more.shown == "outline":
        shown = render_outline(result.snippets, placeholder, OUTLINE_HEADING)
    else:
        shown = render_result(result, placeholder)
    return None if original is not None and len(shown) >= len(original) else shown


LISTING_TOOLS = ("Glob", "Grep")  # Claude Code's tools whose answer may be a list of files, ranked by a repository


def lists_files(tool: str, arguments: Mapping[str, Any]) -> bool:
    """A call whose answer is a list of files: Claude Code's Glob, and its Grep in `files_with_matches` mode (its
    default)."""
    return tool in LISTING_TOOLS and arguments.get("output_mode", "files_with_matches") == "files_with_matches"


def rank_files_request(intent: str | None, paths: list[str], cwd: str | None) -> Call[FileOrder] | None:
    """The call that orders a list of files by the repository holding them, or None without an intent."""
    return Requests.rank_files(intent[-MAX_INTENT_CHARS:], paths, cwd) if intent else None


def reordered(order: FileOrder, paths: list[str]) -> bool:
    """The repository ranked the list and changed its order, keeping every path (the service's answer checked)."""
    return order.repo is not None and order.ranked > 0 and order.paths != paths and sorted(order.paths) == sorted(paths)


def order_note(tool: str, listed: int, order: FileOrder, truncated: bool, search_code: str | None) -> str:
    """The line that tells the model who ordered a list of files, and (when the tool listed only some, and the
    model has it) that search_code searches them all."""
    note = f"ctxsieve ordered these {listed} files best first by repository {order.repo}'s search for the request"
    if order.ranked < listed:
        note += f" (the first {order.ranked}; the other {listed - order.ranked} follow in {tool}'s order)"
    note += "."
    if truncated and search_code:
        note += f" {tool} listed only some of the matches: {search_code} searches every definition."
    return note
