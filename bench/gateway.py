"""The MCP gateway on a scripted session of real calls: what the agent receives, and what it costs.

Usage: python -m bench.gateway [--questions 60] [--pools metatool,seal_tools,stabletoolbench] [--calls 50]
       [--parts reading,git,overhead,eras,claude,tools] [--claude-pool metatool] [--era-rounds 3]

- server-filesystem (npm) over SQuAD articles written as files (single articles, ~7k tokens, and five-article
  files, ~35k), one call per test question with the question as `intent`: tokens the agent receives with and
  without the gateway (the bare server's answer to the same call), and evidence recall of the gold answer in
  what it receives; then without intent (an outline) followed by one `filter_ref` with the question.
- mcp-server-git (PyPI) over this repository: `git_log` of 200 commits with an intent.
- Overhead: a passthrough call through the gateway against the bare server, p50 of `--calls` each; a
  filtered call of a ~35k-token file against `/v1/filter` on a file of the same size (distinct texts, so neither
  finds the other's vectors), p50 of each.
- Protocol eras: the MCP SDK's `Client` in mode "legacy" (the handshake) and "auto" (2026-07-28), over stdio and
  streamable HTTP, `--era-rounds` sessions per era (the eras taking turns) of `--calls` passthrough
  `read_text_file` calls of a small file each: p50 per era and how often server-filesystem was started (a line
  per start; one per gateway is its own listing).
- Claude Code's tool search: the real Claude Code (the CLI claude-agent-sdk bundles) with the gateway as its
  MCP server, one pool behind it (`--claude-pool`, MetaTool's 199 tools by default), against a scripted Messages
  API; for the gateway's `tool_search` off / on / auto and Claude Code's `ENABLE_TOOL_SEARCH` unset / true /
  false, the tokens of the first request's tool definitions and of the whole request, and how many of the
  pool's tools the model can reach (listed, deferred by name, or found through find_tools).
- Tool search: every shared pool served as an upstream server (bench.pool_server); `find_tools` Recall@5 on
  each pool's test queries (bench.tools' split), and the tokens of `tools/list` with and without tool search.
Tokens are tiktoken o200k_base counts of the text the agent receives. The service runs the default model.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import statistics
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

from mcp import ClientSession
from mcp.client.stdio import StdioServerParameters, stdio_client

from bench.datasets import Case, found, squad_cases
from bench.loadtest import scratch_service
from bench.tools import pool_split, pools
from ctxsieve.ingest.tokens import load_tokenizer
from ctxsieve_client import Client
from ctxsieve_client.proxy.formats import texts_in  # (where Claude Code lists its deferred tools by name)

ROOT = Path(__file__).resolve().parents[1]
FILESYSTEM = ROOT / "tests" / "mcp" / "node_modules" / ".bin" / "mcp-server-filesystem"
BIN = Path(sys.executable).parent
TOKENS = load_tokenizer("o200k_base", Path.home() / ".cache" / "ctxsieve" / "tiktoken")


def text_of(result: Any) -> str:
    return "\n".join(block.text for block in result.content if block.type == "text")


@asynccontextmanager
async def session(command: str, args: list[str]) -> AsyncIterator[ClientSession]:
    params = StdioServerParameters(command=command, args=args, cwd=str(ROOT))
    async with stdio_client(params) as (read, write), ClientSession(read, write) as s:
        await s.initialize()
        yield s


def gateway(config: Path, url: str) -> Any:
    return session(str(BIN / "ctxsieve"), ["gateway", "--config", str(config), "--url", url])


def write_config(path: Path, servers: dict[str, Any], **options: Any) -> Path:
    path.write_text(json.dumps({"mcpServers": servers, "ctxsieve": options}))
    return path


def files_for(cases: list[Case], root: Path) -> list[tuple[Case, Path]]:
    """Each question's article as a file; every third question's file also holds four other articles."""
    articles = list(dict.fromkeys(c.text for c in cases))
    out = []
    for i, case in enumerate(cases):
        own = articles.index(case.text)
        parts = [case.text] if i % 3 else [articles[(own + j) % len(articles)] for j in range(5)]
        path = root / f"q{i:03d}.txt"
        path.write_text("\n\n".join(parts), encoding="utf-8")
        out.append((case, path))
    return out


async def reading(config: Path, url: str, cases: list[tuple[Case, Path]]) -> None:
    bare_tokens, got_tokens, kept, outline_then_filter, outline_tokens = [], [], 0, 0, []
    async with session(str(FILESYSTEM), [str(cases[0][1].parent)]) as bare, gateway(config, url) as gw:
        for case, path in cases:
            raw = text_of(await bare.call_tool("read_text_file", {"path": str(path)}))
            shown = text_of(await gw.call_tool("read_text_file", {"path": str(path), "intent": case.question}))
            bare_tokens.append(TOKENS.count(raw))
            got_tokens.append(TOKENS.count(shown))
            kept += found(case.answers, shown)
            outline = text_of(await gw.call_tool("read_text_file", {"path": str(path)}))
            outline_tokens.append(TOKENS.count(outline))
            ref = outline.rsplit("[ctxsieve ", 1)[1].split(":", 1)[0]
            more = text_of(await gw.call_tool("filter_ref", {"ref": ref, "query": case.question,
                                                             "max_tokens": 1500, "k": 50}))
            outline_then_filter += found(case.answers, more)
    n = len(cases)
    print(f"server-filesystem read_text_file, {n} SQuAD questions (files {min(bare_tokens)}-{max(bare_tokens)} "
          f"tokens, median {statistics.median(bare_tokens):.0f})")
    print(f"  tokens received: bare server {sum(bare_tokens)}, through the gateway {sum(got_tokens)} "
          f"({sum(got_tokens) / sum(bare_tokens):.3f} of bare); median per call {statistics.median(got_tokens):.0f}")
    print(f"  evidence recall with intent: {kept / n:.3f} ({kept}/{n}); the bare server: 1.000 at full size")
    print(f"  outline (median {statistics.median(outline_tokens):.0f} tokens) then one filter_ref: "
          f"{outline_then_filter / n:.3f}")


async def git(config: Path, url: str) -> None:
    args = {"repo_path": str(ROOT), "max_count": 200}
    intent = "which commit moved the store into its own package"
    async with session(str(BIN / "mcp-server-git"), ["--repository", str(ROOT)]) as bare, \
            gateway(config, url) as gw:
        raw = text_of(await bare.call_tool("git_log", args))
        shown = text_of(await gw.call_tool("git_log", {**args, "intent": intent}))
    hit = "store is its own package" in shown
    print(f"mcp-server-git git_log (200 commits): bare {TOKENS.count(raw)} tokens, through the gateway "
          f"{TOKENS.count(shown)}; the asked-for commit shown: {hit}")


async def overhead(config: Path, url: str, files: Path, calls: int, big: list[Path]) -> None:
    bare_ms, gw_ms = [], []
    async with session(str(FILESYSTEM), [str(files)]) as bare, gateway(config, url) as gw:
        for _ in range(calls):
            for target, times in ((bare, bare_ms), (gw, gw_ms)):
                started = time.perf_counter()
                await target.call_tool("list_allowed_directories", {})
                times.append((time.perf_counter() - started) * 1000)
        filtered_ms, direct_ms = [], []
        client = Client(url, timeout=300)
        for i in range(0, len(big) - 1, 2):
            started = time.perf_counter()
            await gw.call_tool("read_text_file", {"path": str(big[i]), "intent": "when did it happen"})
            filtered_ms.append((time.perf_counter() - started) * 1000)
            text = big[i + 1].read_text(encoding="utf-8")
            started = time.perf_counter()
            client.filter("when did it happen", text, k=50, max_tokens=1500, placeholder="tools")
            direct_ms.append((time.perf_counter() - started) * 1000)
    p50 = statistics.median
    print(f"overhead: passthrough call p50 bare {p50(bare_ms):.1f} ms, gateway {p50(gw_ms):.1f} ms "
          f"(+{p50(gw_ms) - p50(bare_ms):.1f} ms; target <= 15)")
    print(f"overhead: filtered ~35k-token call p50 through the gateway {p50(filtered_ms):.0f} ms, /v1/filter on "
          f"a file of the same size {p50(direct_ms):.0f} ms (+{p50(filtered_ms) - p50(direct_ms):.0f} ms; target "
          f"<= 50), {len(filtered_ms)} pairs")


async def era_session(target: Any, mode: str, small: Path, calls: int) -> list[float]:
    from mcp import Client

    times = []
    async with Client(target, mode=mode) as client:
        await client.list_tools()
        for _ in range(calls):
            started = time.perf_counter()
            await client.call_tool("read_text_file", {"path": str(small)})
            times.append((time.perf_counter() - started) * 1000)
    return times


def eras(url: str, root: Path, calls: int, rounds: int) -> None:
    from mcp.client.stdio import StdioServerParameters

    from tests.client.gateway.test_gateway import gateway_over_http

    small = root / "files" / "small.txt"
    small.write_text("just a line\n", encoding="utf-8")
    for transport in ("stdio", "http"):
        times: dict[str, list[float]] = {"legacy": [], "auto": []}
        with contextlib.ExitStack() as held:
            targets: dict[str, Any] = {}
            for mode in times:
                starts = root / f"fs-{transport}-{mode}.starts"
                config = write_config(root / f"eras-{transport}-{mode}.json", {"fs": {"command": "sh", "args": [
                    "-c", 'echo $$ >> "$0"; exec "$@"', str(starts), str(FILESYSTEM), str(small.parent)]}},
                    tool_search="off")
                command = [str(BIN / "ctxsieve-gateway"), "--config", str(config), "--url", url]
                targets[mode] = held.enter_context(gateway_over_http(command)) if transport == "http" else \
                    StdioServerParameters(command=command[0], args=command[1:])
            for _ in range(rounds):  # the eras take turns, so a busy moment of the machine falls on both
                for mode in times:
                    times[mode] += asyncio.run(era_session(targets[mode], mode, small, calls))
        for mode, taken in times.items():
            started = len((root / f"fs-{transport}-{mode}.starts").read_text().split())
            print(f"eras: {transport}, {mode}: passthrough read_text_file p50 {statistics.median(taken):.1f} ms over "
                  f"{len(taken)} calls in {rounds} sessions; server-filesystem started {started} times (one per "
                  f"gateway is its own listing)", flush=True)
        difference = statistics.median(times["auto"]) - statistics.median(times["legacy"])
        print(f"eras: {transport}: 2026-07-28 {difference:+.1f} ms p50 against the session era (target within 5 ms)",
              flush=True)


def claude_code_tool_search(url: str, root: Path, pool: str) -> None:
    from tests.client.hooks.test_claude_code_hook import CLAUDE
    from tests.client.scripted_anthropic import ScriptedModel

    size = len(pools()[pool][0])
    for gateway_search in ("off", "on", "auto"):
        config = write_config(root / f"claude-{gateway_search}.json", {pool: {
            "command": sys.executable, "args": ["-m", "bench.pool_server", pool], "cwd": str(ROOT),
            "ctxsieve": {"timeout_s": 600}}}, tool_search=gateway_search)
        mcp = root / f"claude-mcp-{gateway_search}.json"
        mcp.write_text(json.dumps({"mcpServers": {"gw": {"type": "stdio", "command": str(BIN / "ctxsieve-gateway"),
                                                         "args": ["--config", str(config), "--url", url]}}}))
        for claude_search in ("unset", "true", "false"):
            model = ScriptedModel(calls=[])
            api, server = model.serve()
            home = root / f"claude-home-{gateway_search}-{claude_search}"
            env = {"PATH": str(BIN) + ":/usr/bin:/bin", "HOME": str(home), "ANTHROPIC_BASE_URL": api,
                   "ANTHROPIC_API_KEY": "sk-bench", "CLAUDE_CONFIG_DIR": str(home / ".claude"),
                   "DISABLE_TELEMETRY": "1", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                   "DISABLE_AUTOUPDATER": "1", "MCP_TIMEOUT": "120000"}
            if claude_search != "unset":  # unset: Claude Code's default (auto)
                env["ENABLE_TOOL_SEARCH"] = claude_search
            try:
                subprocess.run([str(CLAUDE), "-p", "Hello", "--mcp-config", str(mcp), "--strict-mcp-config"],
                               cwd=root, env=env, capture_output=True, text=True, timeout=600, check=True)
            finally:
                server.should_exit = True
            sent = next(r for r in model.requests if r.get("tools"))
            gateway_tools = [t for t in sent["tools"] if t["name"].startswith("mcp__gw__")]
            whole = json.dumps(sent, ensure_ascii=False)
            lines = {line.strip() for text in texts_in([sent.get("system"), sent.get("messages")])
                     for line in text.splitlines()}  # the deferred tools' names, in the prompt's text
            deferred = sum(f"mcp__gw__{t['name']}" in lines for t in pools()[pool][0])
            loaded = [t for t in gateway_tools if not t.get("defer_loading")]
            searchable = "mcp__gw__find_tools" in lines | {t["name"] for t in sent["tools"]}  # finds every tool
            reach = size if searchable else min(size, deferred + len(loaded))
            print(f"claude code: gateway tool_search {gateway_search}, ENABLE_TOOL_SEARCH={claude_search}: "
                  f"{len(loaded)} gateway tools with schemas ({TOKENS.count(json.dumps(loaded))} tokens), "
                  f"{deferred} deferred by name; whole first request {TOKENS.count(whole)} tokens; "
                  f"reachable {reach} of {size}", flush=True)


async def tool_search(url: str, root: Path, names: list[str], limit: int) -> None:
    servers = {name: {"command": sys.executable, "args": ["-m", "bench.pool_server", name], "ctxsieve":
                      {"timeout_s": 600}} for name in names}
    with_search = write_config(root / "pools.json", servers, tool_search="on")
    without = write_config(root / "pools-all.json", servers, tool_search="off")
    async with gateway(without, url) as gw:
        every = (await gw.list_tools()).tools
    async with gateway(with_search, url) as gw:
        listed = (await gw.list_tools()).tools
        for name in names:
            _, queries = pools()[name]
            test = pool_split(name, queries)[1][:limit]
            recall = []
            for query, gold in test:
                answer = json.loads(text_of(await gw.call_tool("find_tools", {"query": query, "k": 5})))
                got = {t["name"].split("__", 1)[-1] if t["name"].startswith(f"{name}__") else t["name"]
                       for t in answer["tools"]}
                recall.append(len(got & gold) / len(gold))
            print(f"find_tools R@5 {name}: {statistics.mean(recall):.3f} over {len(test)} test queries")

    def tokens(tools: list[Any]) -> int:
        return TOKENS.count(json.dumps([t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in tools],
                                       separators=(",", ":")))

    print(f"tools/list: {len(every)} tools, {tokens(every)} tokens without tool search; {len(listed)} tools, "
          f"{tokens(listed)} tokens with it")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--questions", type=int, default=60)
    parser.add_argument("--calls", type=int, default=50)
    parser.add_argument("--era-rounds", type=int, default=3, help="sessions of --calls calls per era, taking turns")
    parser.add_argument("--pools", default="metatool,seal_tools,stabletoolbench")
    parser.add_argument("--pool-queries", type=int, default=200)
    parser.add_argument("--parts", default="reading,git,overhead,eras,claude,tools")
    parser.add_argument("--claude-pool", default="metatool")
    args = parser.parse_args()
    parts = set(args.parts.split(","))
    with scratch_service("bench-gateway-") as (url, root):
        files = root / "files"
        files.mkdir()
        cases = files_for(squad_cases(args.questions), files)
        big = [p for i, (_, p) in enumerate(cases) if i % 3 == 0]
        config = write_config(root / "gateway.json", {
            "fs": {"command": str(FILESYSTEM), "args": [str(files)]},
            "git": {"command": str(BIN / "mcp-server-git"), "args": ["--repository", str(ROOT)]}}, tool_search="off")
        if "reading" in parts:
            asyncio.run(reading(config, url, cases))
        if "git" in parts:
            asyncio.run(git(config, url))
        if "overhead" in parts:
            asyncio.run(overhead(config, url, files, args.calls, big))
        if "eras" in parts:
            eras(url, root, args.calls, args.era_rounds)
        if "claude" in parts:
            claude_code_tool_search(url, root, args.claude_pool)
        if args.pools and "tools" in parts:
            asyncio.run(tool_search(url, root, args.pools.split(","), args.pool_queries))

if __name__ == "__main__":
    main()
