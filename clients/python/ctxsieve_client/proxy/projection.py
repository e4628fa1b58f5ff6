"""What the proxy sends upstream in place of a request: the same body with large tool results cut and old ones
cleared, or the body untouched.

- Each text part of a tool result over `passthrough_tokens` that is not an error goes through the one cutting rule
  (`ctxsieve_client.cutting`): its intent is the latest user request, the assistant's words and the call that
  asked for it, all of which precede it, so its cut depends only on the conversation's prefix. A cut is a pure
  function of the part, that prefix and the tools the request offers, so it is kept by that key: a later request
  of the conversation reuses it without asking the service (and a restarted proxy gets the same bytes from the
  service, unless an indexed repository the cut is ranked by changed since). A Glob's or Grep's list of files, of
  any size, is ordered by the indexed repository holding them instead, as the Claude Code hook orders it.
- A part the agent already cut (`ctxsieve_client.partial`: Codex keeps ~10k tokens of a command's output, head and
  tail) is cut as the text it kept, which its ref holds, and shown with only the line numbers that can be placed in
  the whole output; its placeholder says the agent cut it before ctxsieve saw it.
- The placeholder names `filter_ref` / `fetch_ref` only when the request offers them (an MCP server's, or the
  proxy's own under `--serve-tools`); otherwise it names the model's own ways to the rest (`placeholders`), and a
  cleared result's placeholder from compaction loses its calls of them too.
- Then the history goes to `/v1/context/compact` (the `tools` placeholder style) when it may be over the trigger:
  its steps are prefix-stable, so between steps the projection of the earlier turns keeps its bytes. A cleared
  cut names the ref of the whole output it was taken from.
- Each conversation is one ctxsieve session (`px-` and a hash of its system prompt and first turn), so its
  requests show in `GET /v1/sessions/{id}` and its thrash signal tunes its compaction.
- Fails open, part by part: a cut not ready within the request's budget leaves that part whole for this request
  (the cut goes on, for the next request to use), and a failed compaction leaves the history uncleared; each says
  why in one log line.
"""

from __future__ import annotations

import asyncio
import copy
import hashlib
import json
import logging
import re
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from typing import Any, TypeVar

from .. import partial, placeholders
from ..client import Call, ContentType
from ..cutting import (
    CutOptions,
    cut_request,
    cut_text,
    lists_files,
    order_note,
    passes,
    prints_source_file,
    rank_files_request,
    reordered,
    was_cut,
)
from ..dialects import Dialect
from ..hooks.whole import saved_whole
from ..models import Compaction, FileOrder, FilterResult
from ..placeholder import prefixed
from ..placeholders import Tools
from ..ref_tools import answered_by_ref_tool
from .formats import (
    Listing,
    Part,
    first_turn,
    listing,
    named,
    offers_tools,
    parts,
    ref_tool_prefix,
    tool_names,
)
from .numbering import renumbered, unnumbered

log = logging.getLogger("ctxsieve.proxy")
M = TypeVar("M")
Send = Callable[[Call[M]], Awaitable[M]]
MEMO_SIZE = 4096  # cuts kept in memory (a conversation of 40 turns holds tens)
_CLEARED = re.compile(r"\A\[ctxsieve src_[0-9a-f]+: tool output cleared")  # a placeholder compaction wrote


@dataclass(frozen=True, kw_only=True)
class ProxyOptions:
    passthrough_tokens: int = 1000
    max_tokens: int | None = None  # None: the cutting rule's (a source file's share, else 1,500)
    trigger_tokens: int = 100_000  # compaction: /v1/context/compact's defaults
    keep_tool_results: int = 3
    clear_at_least: int = 20_000
    budget_s: float = 10.0  # the service's time per request before a part goes upstream whole

    @property
    def cut(self) -> CutOptions:
        return CutOptions(passthrough_tokens=self.passthrough_tokens, max_tokens=self.max_tokens)


@dataclass(kw_only=True)
class Projection:
    body: dict[str, Any] | None  # None: send the request as the client sent it
    session: str
    cut: int = 0
    cleared: int = 0
    failures: list[str] = field(default_factory=list)


def session_of(dialect: Dialect, body: dict[str, Any]) -> str:
    return "px-" + hashlib.sha256(first_turn(dialect, body).encode()).hexdigest()[:24]


class Projector:
    """Projects request bodies through the service, remembering cuts by their part and prefix."""

    def __init__(self, send: Send[Any], options: ProxyOptions, serve_tools: bool = False) -> None:
        self._send = send
        self.options = options
        self.serve_tools = serve_tools  # the proxy offers filter_ref / fetch_ref itself (to requests offering tools)
        self._cuts: OrderedDict[str, str | None] = OrderedDict()  # key -> the cut (None: the part passes whole)
        self.partials: OrderedDict[str, partial.Partial] = OrderedDict()  # ref -> the agent's cut of what it holds
        self._pending: dict[str, asyncio.Task[str | None]] = {}
        # per conversation: (turns, their tokens, a hash of them) as the service last counted its history
        self._counted: OrderedDict[str, tuple[int, int, str]] = OrderedDict()

    async def project(self, dialect: Dialect, body: dict[str, Any]) -> Projection:
        out = Projection(body=None, session=session_of(dialect, body))
        projected = body
        tools = self.tools_of(dialect, body)
        if any(self._wanted(p) for p in parts(dialect, body)):  # copied only when a part will be replaced
            projected = copy.deepcopy(body)
            wanted = [(p, self._key(p, tools)) for p in parts(dialect, projected) if self._wanted(p)]
            cuts = await self._cuts_of(wanted, out, tools)
            for part, shown in cuts:
                part.put(shown)
            out.cut = len(cuts)
        projected = await self._compact(dialect, projected, out, tools)
        out.body = projected if out.cut or out.cleared else None
        return out

    def tools_of(self, dialect: Dialect, body: dict[str, Any]) -> Tools:
        """What the request's model can call to get more: ctxsieve's ref tools (its own, an MCP server's, or the
        proxy's), and a Read taking offset and limit."""
        names = tool_names(dialect, body)
        ref_tools = bool(ref_tool_prefix(dialect, body)) or "fetch_ref" in names or (
            self.serve_tools and offers_tools(dialect, body))
        return Tools(ref_tools=ref_tools, read="Read" in names, prefix=ref_tool_prefix(dialect, body))

    async def _cuts_of(self, wanted: list[tuple[Part, str]], out: Projection, tools: Tools
                       ) -> list[tuple[Part, str]]:
        """Each part's cut (None-cuts, parts that pass whole, left out): remembered ones at once, the others from
        the service within the budget; one still running or failed is said in `out.failures`."""
        running = {key: self._pending.get(key) or self._start(key, part, out.session, tools)
                   for part, key in wanted if key not in self._cuts}
        if running:
            await asyncio.wait(set(running.values()), timeout=self.options.budget_s)
        cuts = []
        for part, key in wanted:
            if key in self._cuts:
                self._cuts.move_to_end(key)
                shown = self._cuts[key]
            elif not running[key].done():
                out.failures.append(f"a {part.tool} result's cut was not ready in {self.options.budget_s:g} s")
                continue
            elif (error := running[key].exception()) is not None:
                out.failures.append(f"a {part.tool} result was not cut: {_reason(error)}")
                continue
            else:
                shown = running[key].result()
            if shown is not None:
                cuts.append((part, shown))
        return cuts

    def _wanted(self, part: Part) -> bool:
        """A part to cut (over passthrough), or a list of files to order (any size, as the hook orders them)."""
        return not part.is_error and not answered_by_ref_tool(part.tool, part.text) \
            and (not passes(part.text, self.options.cut) or _files_listed(part) is not None)

    def _key(self, part: Part, tools: Tools) -> str:
        facts = [part.text, part.intent, part.tool, part.arguments, self.options.passthrough_tokens,
                 self.options.max_tokens, tools.ref_tools, tools.read, tools.prefix, part.folder]
        return hashlib.sha256(json.dumps(facts, ensure_ascii=False, sort_keys=True, default=str).encode()
                              ).hexdigest()

    def _start(self, key: str, part: Part, session: str, tools: Tools) -> asyncio.Task[str | None]:
        """The cut's task, shared while it runs; it goes on after its request moves on, for the next to use."""
        task = asyncio.ensure_future(self._cut(key, part, session, tools))
        task.add_done_callback(_retrieved)  # a cut that failed after its request moved on is not an alarm
        self._pending[key] = task
        return task

    async def _cut(self, key: str, part: Part, session: str, tools: Tools) -> str | None:
        try:
            listed = _files_listed(part)
            ordered = await self._ordered(listed, part, session) if listed else None
            if ordered is not None or passes(part.text, self.options.cut):
                self._remember(key, ordered)
                return ordered
            numbered = unnumbered(part.text)
            kept = None if numbered else partial.read(part.text)
            text = numbered.text if numbered else kept[0] if kept else part.text
            whole = await asyncio.to_thread(saved_whole, part.text, kept[1].saved if kept else None)
            original = part.text
            if whole is not None and whole.text is not None:  # the agent saved the whole output: cut that
                numbered, kept, text, original = None, None, whole.text, whole.text
            kind: ContentType = "code" if prints_source_file(part.arguments) else "auto"
            request = cut_request(text, part.intent, part.tool, part.arguments, self.options.cut, kind,
                                  cwd=part.folder)
            shown = None
            if request is not None:
                result: FilterResult = await self._send(replace(request, session=session))
                shown = self._shown(renumbered(result, numbered) if numbered else result, part, tools,
                                    kept[1] if kept else None, original)
            self._remember(key, shown)
            return shown
        finally:
            self._pending.pop(key, None)

    def _remember(self, key: str, shown: str | None) -> None:
        self._cuts[key] = shown
        while len(self._cuts) > MEMO_SIZE:
            self._cuts.popitem(last=False)

    async def _ordered(self, listed: Listing, part: Part, session: str) -> str | None:
        """A Glob's or Grep's list of files in the order the indexed repository holding them ranks them, with the
        hook's line saying so; None when none holds them, or it ranks none (the list goes as the tool gave it)."""
        call = rank_files_request(part.intent, listed.paths, part.folder)
        if call is None:
            return None
        try:
            order: FileOrder = await self._send(replace(call, session=session))
        except Exception as exc:  # noqa: BLE001 - an ordering only: the list goes on to be cut or passes whole
            log.warning("a %s result's files were not ordered: %s", part.tool, _reason(exc))
            return None
        if not reordered(order, listed.paths):
            return None
        # (no search_code named: the request may offer ctxsieve's ref tools without it)
        return listed.text(order.paths, f"[{order_note(part.tool, len(listed.paths), order, listed.truncated, None)}]")

    def _shown(self, result: FilterResult, part: Part, tools: Tools, cut: partial.Partial | None, original: str
               ) -> str | None:
        """What the model sees: the cut with the service's placeholder when it names only tools the model has,
        else with one in the model's own tools; a text the agent cut first with only the numbers that can be
        placed."""
        if not was_cut(result, self.options.cut):
            return None
        if cut is None and (tools.ref_tools or result.more is None):
            return cut_text(result, self.options.cut, prefixed(tools.prefix), original=original)
        assert result.more is not None  # (a service older than `more` gives no partial text more than it has)
        line = placeholders.line(result.more, placeholders.source_of(part.arguments), tools, cut)
        if cut is None:
            return cut_text(result, self.options.cut, original=original, placeholder=line)
        self.partials[result.ref] = cut
        while len(self.partials) > MEMO_SIZE:
            self.partials.popitem(last=False)
        return partial.render_cut(result, cut, line)

    async def _compact(self, dialect: Dialect, body: dict[str, Any], out: Projection, tools: Tools
                       ) -> dict[str, Any]:
        """The body with its history compacted (a new dict when cleared: the body given is not changed)."""
        turns = dialect.turns(body)
        if not turns:
            return body
        sent = [json.dumps(t, ensure_ascii=False, separators=(",", ":")).encode() for t in turns]
        turns_counted, known, digest = self._counted.get(out.session, (0, 0, ""))
        if known and _prefix_hash(sent[:turns_counted]) != digest:  # not the same earlier turns: count them all
            turns_counted = known = 0
        fresh = sent[turns_counted:]
        # the service counts a history as the sum of its turns' tokens (each turn's compact JSON), and a token is
        # at least one byte: the counted prefix's tokens and the new turns' bytes bound it from above
        if known + sum(len(t) for t in fresh) <= self.options.trigger_tokens:
            return body
        call = Call("POST", "/v1/context/compact", Compaction, body={
            "messages": turns, "format": dialect.name, "placeholder": "tools",
            "trigger_tokens": self.options.trigger_tokens, "keep_tool_results": self.options.keep_tool_results,
            "clear_at_least": self.options.clear_at_least}, session=out.session)
        try:
            done: Compaction = await asyncio.wait_for(self._send(call), self.options.budget_s)
        except Exception as exc:  # noqa: BLE001 - fails open: the history goes uncleared, and says why
            out.failures.append(f"old tool results were not cleared: {_reason(exc)}")
            return body
        if done.compacted:
            out.cleared = len(done.cleared)
            compacted = dialect.with_turns(body, done.messages)
            prefix = ref_tool_prefix(dialect, body)
            # a cleared result's calls of ctxsieve's tools, as the model has them
            for part in parts(dialect, compacted):
                if _CLEARED.match(part.text):
                    part.put(named(part.text, prefix) if tools.ref_tools else placeholders.without_ref_tools(
                        part.text))
            return compacted
        else:  # under the trigger: the next request of the conversation counts only its new turns
            self._counted[out.session] = (len(sent), done.usage.input_tokens, _prefix_hash(sent))
            while len(self._counted) > MEMO_SIZE:
                self._counted.popitem(last=False)
        return body


def _prefix_hash(turns: list[bytes]) -> str:
    digest = hashlib.sha256()
    for turn in turns:
        digest.update(len(turn).to_bytes(8, "little") + turn)
    return digest.hexdigest()


def _retrieved(task: asyncio.Task[Any]) -> None:
    if not task.cancelled():
        task.exception()


def _reason(exc: BaseException | None) -> str:
    if isinstance(exc, TimeoutError):
        return "the service did not answer in time"
    return f"{type(exc).__name__}: {exc}"[:300]


def _files_listed(part: Part) -> Listing | None:
    return listing(part.text) if lists_files(part.tool, part.arguments) else None
