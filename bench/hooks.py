"""The Claude Code hooks' latency on a Read of a ~10k-token source file, against /v1/filter with the same request.

Usage: python -m bench.hooks [--files 20] [--min-tokens 8000] [--max-tokens 12000] [--url URL]

Files: held-out source files from ../shared/data/swe_dev of 8-12k tokens (tiktoken o200k_base), distinct texts,
picked evenly over the set (sorted by case id); each of the three ways gets its own files (3 x --files, dealt by size
so the three sets are alike), so every way's first read of a file is fresh (the service keeps chunk vectors by their
text, for every tenant: a file read fresh by one way would be embedded already for the next). The user's request is
the case's issue, in a Claude Code transcript (JSONL, its `user` turn). Each file is read twice in a row by its way:
fresh (a new ref) and repeated (the same payload again).
- http hook: POST /v1/hooks/claude-code with the PostToolUse payload Claude Code sends for a Read (tool_input
  `file_path`; tool_response `{"type": "text", "file": {filePath, content, numLines, startLine, totalLines}}`);
- command hook: `ctxsieve-hook claude-code --url URL` run by /bin/sh with that payload on stdin, as Claude Code runs
  the command `ctxsieve-hook claude-code --install` writes (the process start included);
- /v1/filter: POST of the very request the hook sends (cutting.cut_request with the hook's intent and options,
  the session header as the command hook's client sets it).
The three take turns (the order rotates per file), so each follows the others' background embedding as often;
one HTTP connection is kept for the two HTTP ways. Latency p50/p95 per way, fresh and repeated. Every answer is
checked: a cut Read (the hook) or a cut (filter). Beside the wall times, the CPU spent within each call by the
service (whatever it ran then, its background embedding included) and by the hook's process, which the machine's
load changes less. Without --url, `ctxsieve serve` runs on a fresh data dir (with --url, files the service has read
before are not fresh).
Targets (issue 44): a fresh read, http hook p50 <= 200 ms, command hook p50 <= 350 ms; a repeated one, <= 30 ms and <=
250 ms; the http hook p50 within 30 ms of /v1/filter's. Then the command hook's own cost: its start alone (`--help`,
against `python -c pass`: the machine's pace), its whole run on a Read answered from the service's cache, as shipped
and with the modules it imports but never uses made unimportable, and its imports (python -X importtime). The
machine's load average is given at the start and the end: the figures are wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from bench.code import DATA, TOKENS
from bench.loadtest import start_server
from ctxsieve_client.cutting import cut_request
from ctxsieve_client.hooks.claude_code import HookOptions, intent_of, session_of

BIN = Path(sys.executable).parent
WAYS = ("http hook", "command hook", "/v1/filter")
TARGETS = {"fresh": {"http hook": 200.0, "command hook": 350.0},
           "repeated": {"http hook": 30.0, "command hook": 250.0}}
WITHIN_MS = 30.0


@dataclass(frozen=True)
class Case:
    id: str
    path: str
    issue: str
    text: str
    tokens: int


@dataclass
class Times:
    fresh: list[float] = field(default_factory=list)
    repeated: list[float] = field(default_factory=list)
    fresh_cpu: list[float] = field(default_factory=list)  # the service's CPU, and the hook process's own
    repeated_cpu: list[float] = field(default_factory=list)


def cpu_ms(pid: int | None) -> float:
    """CPU ms so far of this process's waited children (a command hook and its shell) and of the service (from /proc,
    when this bench started it)."""
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    own = (children.ru_utime + children.ru_stime) * 1000
    if pid is None:
        return own
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return own + (int(fields[11]) + int(fields[12])) * 1000 / os.sysconf("SC_CLK_TCK")


def cases(count: int, low: int, high: int) -> list[Case]:
    """count files of low-high tokens, distinct texts, picked evenly over the set sorted by case id."""
    pool: dict[str, Case] = {}
    for line in DATA.read_text().splitlines():
        row = json.loads(line)
        tokens = TOKENS.count(row["file_text"])
        if low <= tokens <= high and row["file_text"] not in pool:
            pool[row["file_text"]] = Case(row["instance_id"], row["path"], row["problem_statement"], row["file_text"],
                                          tokens)
    ordered = sorted(pool.values(), key=lambda c: c.id)
    if len(ordered) < count:
        raise SystemExit(f"only {len(ordered)} distinct files of {low}-{high} tokens")
    step = len(ordered) / count
    return [ordered[int(i * step)] for i in range(count)]


def dealt(picked: list[Case]) -> dict[str, list[Case]]:
    """Each way its own files, of alike sizes: the files by size in threes, one to each way, the order turning."""
    by_size = sorted(picked, key=lambda c: (c.tokens, c.id))
    files: dict[str, list[Case]] = {name: [] for name in WAYS}
    for j in range(len(by_size) // len(WAYS)):
        three = by_size[j * len(WAYS):(j + 1) * len(WAYS)]
        for k, name in enumerate(WAYS):
            files[name].append(three[(k + j) % len(WAYS)])
    for name in WAYS:  # read in the set's order, not by size
        files[name].sort(key=lambda c: c.id)
    return files


def payload(case: Case, root: Path, n: int) -> dict[str, Any]:
    """The PostToolUse payload Claude Code sends after a Read of the case's file, its transcript holding the issue."""
    folder = root / f"case-{n:03d}"
    folder.mkdir(exist_ok=True)
    path = folder / Path(case.path).name
    path.write_text(case.text)
    transcript = folder / "transcript.jsonl"
    transcript.write_text(json.dumps({"type": "user", "message": {"role": "user", "content": case.issue}}) + "\n")
    lines = case.text.split("\n")
    return {"session_id": f"bench-hooks-{n:03d}", "transcript_path": str(transcript), "cwd": str(folder),
            "permission_mode": "default", "hook_event_name": "PostToolUse", "tool_name": "Read",
            "tool_input": {"file_path": str(path)}, "tool_use_id": f"toolu_{n:03d}",
            "tool_response": {"type": "text", "file": {"filePath": str(path), "content": case.text,
                                                        "numLines": len(lines), "startLine": 1,
                                                        "totalLines": len(lines)}}}


def http_hook(http: httpx.Client, url: str) -> Callable[[dict[str, Any]], None]:
    def run(sent: dict[str, Any]) -> None:
        answer = http.post(f"{url}/v1/hooks/claude-code", json=sent)
        answer.raise_for_status()
        _check_hook(answer.content)
    return run


def command_hook(url: str) -> Callable[[dict[str, Any]], None]:
    command = shlex.join([str(BIN / "ctxsieve-hook"), "claude-code", "--url", url])  # as --install writes it

    def run(sent: dict[str, Any]) -> None:
        done = subprocess.run(["/bin/sh", "-c", command], input=json.dumps(sent), capture_output=True, text=True,
                              timeout=120)
        if done.returncode != 0 or done.stderr:
            raise SystemExit(f"command hook: exit {done.returncode}: {done.stderr[-500:]}")
        _check_hook(done.stdout.encode())
    return run


def direct_filter(http: httpx.Client, url: str) -> Callable[[dict[str, Any]], None]:
    def run(sent: dict[str, Any]) -> None:
        tool_input = sent["tool_input"]
        intent = intent_of(tool_input, Path(sent["transcript_path"]))
        call = cut_request(sent["tool_response"]["file"]["content"], intent, "Read", tool_input, HookOptions())
        assert call is not None and call.body is not None
        answer = http.post(f"{url}{call.path}", json=call.body, headers={"X-Session-Id": session_of(sent) or ""})
        answer.raise_for_status()
        if answer.json().get("passthrough"):
            raise SystemExit("/v1/filter: the file came back whole")
    return run


def _check_hook(body: bytes) -> None:
    answer = json.loads(body or b"{}")
    if "updatedToolOutput" not in answer.get("hookSpecificOutput", {}):
        raise SystemExit(f"hook: the Read was not cut: {body[:300]!r}")


def measure(ways: dict[str, Callable[[dict[str, Any]], None]], files: dict[str, list[Case]], root: Path,
            pid: int | None) -> dict[str, Times]:
    times = {name: Times() for name in ways}
    names = list(ways)
    count = len(next(iter(files.values())))
    for i in range(count):
        order = names[i % len(names):] + names[:i % len(names)]
        for name in order:
            sent = payload(files[name][i], root, i * len(names) + names.index(name))
            for bucket, cpu in ((times[name].fresh, times[name].fresh_cpu),
                                (times[name].repeated, times[name].repeated_cpu)):
                used, started = cpu_ms(pid), time.perf_counter()
                ways[name](sent)
                bucket.append((time.perf_counter() - started) * 1000)
                cpu.append(cpu_ms(pid) - used)
    return times


def p(values: list[float], q: int) -> float:
    return statistics.median(values) if q == 50 else statistics.quantiles(values, n=100)[q - 1]


def report(times: dict[str, Times], files: dict[str, list[Case]]) -> list[str]:
    lines = [f"{'way':<14} {'files':>5} {'tokens p50':>10} {'fresh p50':>9} {'p95':>7} {'repeated p50':>12} "
             f"{'p95':>7} {'all p50':>7} {'p95':>7}"]
    for name, t in times.items():
        both = t.fresh + t.repeated
        tokens = statistics.median(c.tokens for c in files[name])
        lines.append(f"{name:<14} {len(t.fresh):>5} {tokens:>10,.0f} {p(t.fresh, 50):>9.0f} {p(t.fresh, 95):>7.0f} "
                     f"{p(t.repeated, 50):>12.0f} {p(t.repeated, 95):>7.0f} {p(both, 50):>7.0f} {p(both, 95):>7.0f}")
    lines.append("(ms, wall)")
    if any(t.fresh_cpu for t in times.values()):
        cpu = [f"{name} fresh {p(t.fresh_cpu, 50):.0f}, repeated {p(t.repeated_cpu, 50):.0f}" for name, t in
               times.items()]
        lines.append("CPU ms within the call (the service's, and the hook process's own), p50: " + "; ".join(cpu))
    for kind in ("fresh", "repeated"):
        def pick(t: Times, kind: str = kind) -> list[float]:
            return t.fresh if kind == "fresh" else t.repeated
        for name, target in TARGETS[kind].items():
            got = p(pick(times[name]), 50)
            lines.append(f"target {name} p50 <= {target:.0f} ms ({kind}): {got:.0f} ms, "
                         f"{'met' if got <= target else 'missed'}")
        gap = p(pick(times["http hook"]), 50) - p(pick(times["/v1/filter"]), 50)
        lines.append(f"target http hook within {WITHIN_MS:.0f} ms of /v1/filter ({kind}, p50): {gap:+.0f} ms, "
                     f"{'met' if abs(gap) <= WITHIN_MS else 'missed'}")
    return lines


# Modules the hook's process imports but never uses: trio and anyio (httpcore's sync transport imports both when
# installed), click, rich and pygments (httpx's command-line entry, imported by `import httpx` when installed), h2
BLOCKED = {"as shipped": (), "trio, anyio unimportable": ("trio", "anyio"),
           "trio, anyio, click, rich, h2 unimportable": ("trio", "anyio", "click", "rich", "h2")}


def start_profile(url: str, sent: dict[str, Any], runs: int = 15) -> list[str]:
    """The command hook's own cost: its start alone (`--help`, against `python -c pass`); its whole run on a Read the
    service has cut before (answered from the service's cache), as shipped and with modules it never uses made
    unimportable (the same answer, checked); and its slowest imports (python -X importtime)."""
    def wall(command: list[str], stdin: str = "") -> tuple[float, str]:
        started = time.perf_counter()
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, check=True)
        return (time.perf_counter() - started) * 1000, done.stdout

    def hook(blocked: tuple[str, ...]) -> list[str]:
        code = (f"import sys; sys.modules.update(dict.fromkeys({blocked!r})); sys.argv = ['ctxsieve-hook', "
                f"'claude-code', '--url', {url!r}]; from ctxsieve_client.hooks.cli import main; sys.exit(main())")
        return [sys.executable, "-c", code]

    walls: dict[str, list[float]] = {name: [] for name in ("--help", "pass", *BLOCKED)}
    answers: dict[str, set[str]] = {name: set() for name in BLOCKED}
    for _ in range(runs):  # interleaved, so each sees the same machine
        walls["--help"].append(wall([str(BIN / "ctxsieve-hook"), "claude-code", "--help"])[0])
        walls["pass"].append(wall([sys.executable, "-c", "pass"])[0])
        for name, blocked in BLOCKED.items():
            took, out = wall(hook(blocked), json.dumps(sent))
            walls[name].append(took)
            answers[name].add(out)
    if len(set().union(*answers.values())) != 1:
        raise SystemExit("the hook answered differently with modules made unimportable")
    p50 = {name: statistics.median(values) for name, values in walls.items()}
    lines = [f"command hook start: `ctxsieve-hook claude-code --help` p50 {p50['--help']:.0f} ms; `python -c pass` "
             f"p50 {p50['pass']:.0f} ms ({runs} runs each, interleaved)",
             "command hook, a Read the service cut before (its answer cached), whole process, p50:"]
    lines += [f"  {name}: {p50[name]:.0f} ms" for name in BLOCKED]
    return lines + import_profile(url, sent)


def import_profile(url: str, sent: dict[str, Any]) -> list[str]:
    """The slowest imports of one hook run (python -X importtime), the cli module's and those made later (httpx's
    transport, when the client is built)."""
    command = [sys.executable, "-X", "importtime", str(BIN / "ctxsieve-hook"), "claude-code", "--url", url]
    done = subprocess.run(command, input=json.dumps(sent), capture_output=True, text=True, check=True)
    rows = [re.match(r"import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)", line) for line in done.stderr.splitlines()]
    found = [(int(m.group(2)) / 1000, len(m.group(3)) // 2, m.group(4)) for m in rows if m]
    total = sum(ms for ms, depth, _ in found if depth == 0)
    lines = [f"imports of one command hook run: {total:.0f} ms in all; those of 10 ms or more (python -X importtime's "
             "order: a module after the modules it imported; cumulative ms):"]
    return lines + [f"  {ms:6.1f}  {'  ' * depth}{name}" for ms, depth, name in found if ms >= 10]


@contextmanager
def service(url: str | None) -> Iterator[tuple[str, int | None]]:
    """The service's URL, and its process id when this bench started it (`ctxsieve serve` on a fresh data dir)."""
    if url:
        yield url, None
        return
    with tempfile.TemporaryDirectory(prefix="bench-hooks-data-") as data:
        process, started = start_server(Path(data))
        try:
            yield started, process.pid
        finally:
            process.terminate()
            process.wait(30)


def machine() -> str:
    model = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                  if line.startswith("model name")), platform.processor())
    memory = next((int(line.split()[1]) // 1024 // 1024 for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), 0)
    return f"{os.cpu_count()} cores ({model}), {memory} GiB, Python {platform.python_version()}, {load()}"


def load() -> str:
    return "load average " + " ".join(f"{x:.1f}" for x in os.getloadavg()) + " (1, 5, 15 min)"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.hooks")
    parser.add_argument("--files", type=int, default=20, help="files per way")
    parser.add_argument("--min-tokens", type=int, default=8000)
    parser.add_argument("--max-tokens", type=int, default=12000)
    parser.add_argument("--url", help="a service already running (default: `ctxsieve serve` on a fresh data dir)")
    parser.add_argument("--out", type=Path, default=Path("bench/results/hooks.txt"))
    args = parser.parse_args(argv)
    picked = cases(args.files * len(WAYS), args.min_tokens, args.max_tokens)
    files = dealt(picked)
    lines = [f"# python -m bench.hooks --files {args.files} --min-tokens {args.min_tokens} --max-tokens "
             f"{args.max_tokens}", f"machine: {machine()}",
             f"{len(picked)} files of swe_dev ({args.files} per way), each read fresh then repeated"]
    with service(args.url) as (url, pid), tempfile.TemporaryDirectory(prefix="bench-hooks-") as scratch, \
            httpx.Client(timeout=300) as http:
        ways = {"http hook": http_hook(http, url), "command hook": command_hook(url),
                "/v1/filter": direct_filter(http, url)}
        lines += report(measure(ways, files, Path(scratch), pid), files)
        lines += start_profile(url, payload(files["command hook"][0], Path(scratch), WAYS.index("command hook")))
    lines.append(f"at the end: {load()}")
    print("\n".join(lines))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
