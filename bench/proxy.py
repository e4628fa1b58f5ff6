"""A replayed coding session through `ctxsieve proxy`: tokens sent upstream, prefix stability, gold lines kept, and
the latency the proxy adds.

Usage: python -m bench.proxy [--sessions 12] [--peer-url URL]

Sessions are built from ../shared/data/swe_dev, one per case picked evenly over the set (sorted by id): the issue
is the user's request; then, as Claude Code sends them to the Messages API, turns of the assistant's words and a
tool call with its result: `git status`, a Grep for a name the issue uses (ripgrep's `path:line:text` over the
session's files), a Read of the case's file (numbered `N<TAB>` from line 1, at most 2,000 lines, as Read shows it),
Reads of eight other files of the same repository, a failing test run (an error: it must reach the model whole),
small commands in between and two edits: 28 requests each, every request the conversation so far (non-streaming).
Each request goes to a loopback sink that records what it receives and answers at once, straight and through
the proxy (in turn, so each sees the same machine), with the proxy in this process (its calls to the service
are timed, so a cut's own cost can be told from the proxy's).

Figures: tokens (tiktoken o200k_base of the messages as sent) upstream with and without the proxy, in all and at
the last request; the share of requests whose earlier messages reach the upstream exactly as in the request before
(prefix-stable, `cache_control` markers aside); for the case's file, the gold lines in what the model saw right
after the Read and at the last request (place shown: a gold line with a neighbour; every gold line); latency the
proxy adds per request (p50/p95): requests with no new result to cut, and requests with one, less its service
calls. `--peer-url`: the same sessions through another proxy already listening there (e.g. Headroom's, started
with the sink as its upstream: `--peer-sink-port`), tokens and gold lines only.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import threading
import time
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from bench.code import DATA, TOKENS
from bench.loadtest import scratch_service
from ctxsieve_client.proxy.formats import unmarked
from ctxsieve_client.proxy.projection import ProxyOptions
from ctxsieve_client.proxy.server import ProxyApp, Upstreams

READ_LINES = 2000  # Claude Code's Read shows at most this many lines unless asked for more
SYSTEM = [{"type": "text", "text": "You are a coding agent. Fix the issue the user reports.",
           "cache_control": {"type": "ephemeral"}}]
TOOLS = [{"name": n, "description": d, "input_schema": {"type": "object", "properties": {
    p: {"type": "string"} for p in ps}}} for n, d, ps in (
    ("Read", "Read a file", ("file_path",)), ("Grep", "Search file contents", ("pattern", "path")),
    ("Bash", "Run a shell command", ("command",)), ("Edit", "Edit a file", ("file_path", "old_string", "new_string")))]
SMALL = [("git status", "On branch main\nnothing to commit, working tree clean\n"),
         ("ls", "README.md\nsetup.py\nsrc\ntests\n"),
         ("git log --oneline -3", "a1b2c3 Fix\nd4e5f6 Docs\n0a1b2c Init\n"),
         ("python --version", "Python 3.11.7\n"), ("git diff --stat", " 1 file changed, 2 insertions(+)\n")]
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]{5,}")


@dataclass
class Case:
    id: str
    repo: str
    path: str
    issue: str
    text: str
    gold: tuple[int, ...]


@dataclass
class Figures:
    tokens_without: list[int] = field(default_factory=list)
    tokens_with: list[int] = field(default_factory=list)
    stable: list[bool] = field(default_factory=list)
    gold_read: list[tuple[bool, bool]] = field(default_factory=list)
    gold_end: list[tuple[bool, bool]] = field(default_factory=list)
    idle_ms: list[float] = field(default_factory=list)
    cut_ms: list[float] = field(default_factory=list)  # added, less the service's calls
    service_ms: list[float] = field(default_factory=list)


def cases() -> list[Case]:
    rows = [json.loads(line) for line in DATA.read_text().splitlines() if line.strip()]
    return sorted((Case(r["instance_id"], r["repo"], r["path"], r["problem_statement"], r["file_text"],
                        tuple(r["gold_lines"])) for r in rows), key=lambda c: c.id)


def numbered(text: str) -> str:
    """A Read's result as Claude Code sends it: each line after its number and a tab, at most READ_LINES lines."""
    return "\n".join(f"{n}\t{line}" for n, line in enumerate(text.split("\n")[:READ_LINES], start=1))


def grep_output(term: str, files: list[Case]) -> str:
    rows = [f"{f.path}:{n}:{line}" for f in files for n, line in enumerate(f.text.split("\n"), start=1)
            if term in line]
    return "\n".join(rows[:400]) or "No matches found"


def failing_log(case: Case) -> str:
    line = case.gold[0] if case.gold else 1
    code = case.text.split("\n")[line - 1].strip() if line <= case.text.count("\n") + 1 else ""
    module = case.path.removesuffix(".py").replace("/", ".")
    return "\n".join([
        "============================= test session starts ==============================",
        "collected 48 items", "", "tests/test_issue.py ..........F.....................................  [100%]",
        "", "=================================== FAILURES ===================================",
        "_________________________________ test_issue _________________________________", "",
        "    def test_issue():", f"        from {module} import *", ">       check()", "",
        f"{case.path}:{line}: in check", f"    {code}", "E   AssertionError: the behaviour the issue reports", "",
        "=========================== short test summary info ============================",
        "FAILED tests/test_issue.py::test_issue - AssertionError: the behaviour the issue reports",
        "========================= 1 failed, 47 passed in 3.21s ========================="])


def session(case: Case, others: list[Case]) -> list[dict[str, Any]]:
    """The conversation's messages (Claude Code's shape); each request sends them up to a tool result."""
    term = next((w for w in _NAME.findall(case.issue) if w in case.text), Path(case.path).stem)
    steps: list[tuple[str, str, dict[str, Any], str, bool]] = [  # (words, tool, input, result, is_error)
        ("Let me look at the repository.", "Bash", {"command": SMALL[0][0]}, SMALL[0][1], False),
        (f"I'll search for `{term}`.", "Grep", {"pattern": term, "path": "."},
         grep_output(term, [case, *others]), False),
        (f"Reading {case.path}.", "Read", {"file_path": f"/repo/{case.path}"}, numbered(case.text), False)]
    for n, other in enumerate(others):
        command, output = SMALL[(n + 1) % len(SMALL)]
        steps.append(("Checking the state.", "Bash", {"command": command}, output, False))
        steps.append((f"Reading {other.path} too.", "Read", {"file_path": f"/repo/{other.path}"},
                      numbered(other.text), False))
    steps.append(("Running the tests.", "Bash", {"command": "python -m pytest tests -x"}, failing_log(case), True))
    for n in range(2):
        steps.append(("Editing.", "Edit", {"file_path": f"/repo/{case.path}", "old_string": "x", "new_string": "y"},
                      f"The file /repo/{case.path} has been updated.", False))
        steps.append(("Checking again.", "Bash", {"command": SMALL[n][0]}, SMALL[n][1], False))
    while len(steps) < 28:
        steps.append(("One more check.", "Bash", {"command": "git status"}, SMALL[0][1], False))
    messages: list[dict[str, Any]] = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>\nThe repository is checked out at /repo.\n</system-reminder>\n"},
        {"type": "text", "text": case.issue}]}]
    for t, (words, tool, arguments, result, is_error) in enumerate(steps):
        messages.append({"role": "assistant", "content": [{"type": "text", "text": words}, {
            "type": "tool_use", "id": f"toolu_{t:02d}", "name": tool, "input": arguments}]})
        block: dict[str, Any] = {"type": "tool_result", "tool_use_id": f"toolu_{t:02d}", "content": result}
        if is_error:
            block["is_error"] = True
        messages.append({"role": "user", "content": [block]})
    return messages


def requests_of(messages: list[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    for end in range(3, len(messages) + 1, 2):
        yield {"model": "claude-bench", "max_tokens": 1024, "system": SYSTEM, "tools": TOOLS,
               "messages": messages[:end]}


class Sink:
    """A model API that answers at once and keeps the last body it received."""

    def __init__(self) -> None:
        self.last: bytes = b""
        self.url = ""  # once served

    async def __call__(self, scope: dict[str, Any], receive: Callable[[], Awaitable[dict[str, Any]]],
                      send: Callable[[dict[str, Any]], Awaitable[None]]) -> None:
        if scope["type"] != "http":
            return
        chunks = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        self.last = b"".join(chunks)
        answer = b'{"id":"msg_1","type":"message","role":"assistant","content":[{"type":"text","text":"ok"}],' \
                 b'"model":"claude-bench","stop_reason":"end_turn","usage":{"input_tokens":1,"output_tokens":1}}'
        await send({"type": "http.response.start", "status": 200,
                    "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": answer})


def serve(app: Any, port: int = 0) -> tuple[str, uvicorn.Server]:
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", access_log=False))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.02)
    return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", server


def timed_service(app: ProxyApp) -> list[float]:
    """The proxy's calls to the service, timed (ms), appended to the returned list as they finish."""
    spent: list[float] = []
    send = app.projector._send

    async def timed(call: Any) -> Any:
        start = time.perf_counter()
        try:
            return await send(call)
        finally:
            spent.append((time.perf_counter() - start) * 1000)

    app.projector._send = timed
    return spent


def shown_lines(text: str, file_lines: list[str]) -> set[int]:
    """The file's lines the model can see in a Read's result: rows `N<TAB>text` whose text is line N's."""
    seen = set()
    for row in text.split("\n"):
        found = re.match(r"^(\d+)\t(.*)$", row)
        number = int(found.group(1)) if found else 0
        if found and 0 < number <= len(file_lines) and file_lines[number - 1] == found.group(2):
            seen.add(number)
    return seen


def gold_seen(body: dict[str, Any], case: Case) -> tuple[bool, bool]:
    gold_read = next((b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]
                      if b.get("type") == "tool_result" and b.get("tool_use_id") == "toolu_02"), None)
    text = gold_read["content"] if gold_read and isinstance(gold_read["content"], str) else ""
    seen = shown_lines(text, case.text.split("\n"))
    gold = [g for g in case.gold if g <= READ_LINES] or list(case.gold)
    place = any(g in seen and (g - 1 in seen or g + 1 in seen) for g in gold)
    return place, all(g in seen for g in gold)


def count(body: dict[str, Any]) -> int:
    return TOKENS.count(json.dumps(body["messages"], ensure_ascii=False, separators=(",", ":")))


def run(sessions: list[tuple[Case, list[dict[str, Any]]]], url: str, sink: Sink, spent: list[float] | None
        ) -> Figures:
    figures = Figures()
    with httpx.Client(timeout=600) as http:
        headers = {"x-api-key": "sk-bench", "anthropic-version": "2023-06-01"}
        for case, messages in sessions:
            before: list[Any] | None = None
            received: dict[str, Any] = {}
            for number, body in enumerate(requests_of(messages)):
                raw = json.dumps(body, ensure_ascii=False).encode()
                start = time.perf_counter()
                http.post(f"{sink.url}/v1/messages", content=raw, headers=headers)
                direct = time.perf_counter() - start
                if spent is not None:
                    spent.clear()
                start = time.perf_counter()
                answer = http.post(f"{url}/v1/messages", content=raw, headers=headers)
                through = time.perf_counter() - start
                assert answer.status_code == 200, answer.text
                received = json.loads(sink.last)
                figures.tokens_without.append(count(body))
                figures.tokens_with.append(count(received))
                shown = unmarked(received["messages"])
                if before is not None:
                    figures.stable.append(shown[:len(before)] == before)
                before = shown
                added = (through - direct) * 1000
                last = body["messages"][-1]["content"][0]
                new_cut = len(str(last.get("content", ""))) > 1000 and not last.get("is_error")
                if spent is not None:
                    if new_cut:
                        service = sum(spent)
                        figures.cut_ms.append(added - service)
                        figures.service_ms.append(service)
                    else:
                        figures.idle_ms.append(added)
                if number == 2:  # the request right after the case's file was read
                    figures.gold_read.append(gold_seen(received, case))
            figures.gold_end.append(gold_seen(received, case))
    return figures


def report(name: str, f: Figures) -> list[str]:
    def share(pairs: list[tuple[bool, bool]], i: int) -> str:
        return f"{sum(p[i] for p in pairs) / len(pairs):.3f}" if pairs else "-"

    def pct(values: list[float], q: float) -> str:
        return f"{statistics.quantiles(values, n=100)[int(q) - 1]:.1f}" if len(values) > 1 else "-"

    lines = [f"## {name}",
             f"tokens upstream, all requests: {sum(f.tokens_with):,} of {sum(f.tokens_without):,} without "
             f"({sum(f.tokens_with) / sum(f.tokens_without):.3f})",
             f"tokens at a session's last request, median: {statistics.median(f.tokens_with[27::28]):,.0f} "
             f"of {statistics.median(f.tokens_without[27::28]):,.0f}",
             f"prefix-stable requests: {sum(f.stable)}/{len(f.stable)} ({sum(f.stable) / len(f.stable):.3f})",
             f"gold lines, right after the Read: place shown {share(f.gold_read, 0)}, every line "
             f"{share(f.gold_read, 1)}; at the last request: {share(f.gold_end, 0)} / {share(f.gold_end, 1)}"]
    if f.idle_ms:
        lines.append(f"added per request, nothing new to cut: p50 {statistics.median(f.idle_ms):.1f} ms, "
                     f"p95 {pct(f.idle_ms, 95)} ms (n={len(f.idle_ms)})")
    if f.cut_ms:
        lines.append(f"added per request with a new cut, less its service calls: p50 {statistics.median(f.cut_ms):.1f}"
                     f" ms, p95 {pct(f.cut_ms, 95)} ms; the service calls themselves p50 "
                     f"{statistics.median(f.service_ms):.0f} ms (n={len(f.cut_ms)})")
    return lines


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.proxy")
    parser.add_argument("--sessions", type=int, default=12)
    parser.add_argument("--trigger-tokens", type=int, default=100_000, help="the proxy's compaction trigger")
    parser.add_argument("--peer-url", help="another proxy already listening (its upstream: --peer-sink's URL)")
    parser.add_argument("--peer-name", default="peer")
    parser.add_argument("--peer-sink-port", type=int, default=0,
                        help="port for the sink the peer forwards to (start the peer with it as its upstream)")
    args = parser.parse_args(argv)
    everything = cases()
    step = max(1, len(everything) // args.sessions)
    picked = everything[::step][:args.sessions]
    built = []
    for case in picked:
        others = [c for c in everything if c.repo == case.repo and c.path != case.path]
        distinct = list({c.path: c for c in others}.values())
        built.append((case, session(case, distinct[:: max(1, len(distinct) // 8)][:8])))
    lines = [f"# python -m bench.proxy --sessions {args.sessions} --trigger-tokens {args.trigger_tokens}",
             f"{len(built)} sessions of 28 requests, cases {', '.join(c.id for c, _ in built)}"]
    with scratch_service("bench-proxy-") as (service, _):
        sink = Sink()
        sink.url, sink_server = serve(sink, args.peer_sink_port)
        app = ProxyApp(service, None, Upstreams(anthropic=sink.url),
                       ProxyOptions(trigger_tokens=args.trigger_tokens))
        spent = timed_service(app)
        url, proxy_server = serve(app)
        try:
            lines += report(f"ctxsieve proxy (compaction trigger {args.trigger_tokens:,} tokens)",
                            run(built, url, sink, spent))
            if args.peer_url:
                lines += report(args.peer_name, run(built, args.peer_url, sink, None))
        finally:
            proxy_server.should_exit = sink_server.should_exit = True
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
