"""A new user's path, from a clean clone to an agent using ctxsieve, timed step by step (issue 38).

Usage: .venv/bin/python -m bench.newuser [--root /tmp/ctxsieve-newuser] [--installer uv|pipx] [--also pipx]
                                         [--wraps 5] [--keep] [--out bench/results/newuser.txt]

In a fresh HOME (under --root; removed after unless --keep) with PATH holding only the system Python, /usr/bin's
node and, linked in a bin folder, the real Claude Code CLI (the one claude-agent-sdk bundles), the real Codex CLI
(tests/mcp/node_modules, `make node`), uv and pipx (found on PATH or in /tmp/tools-venv: `python3 -m venv
/tmp/tools-venv && /tmp/tools-venv/bin/pip install uv==0.13.8 pipx==1.18.4`), the README's first screen as a user
types it, each step timed:
- `git clone` of this checkout's HEAD (what is not committed is not measured);
- the installer (INSTALL below: uv with the machine's CPU torch wheel from /opt/wheels, bytecode compiled);
- `ctxsieve service start`: a first start, the model and the static stage prepared on this first need, each of its
  lines with the seconds since the start;
- `ctxsieve install --yes`, then `ctxsieve doctor` (exit 0 wanted), with the user's own Claude Code settings and
  Codex config in place (the tests' own, Codex's provider at a scripted API);
- an agent using ctxsieve: `ctxsieve wrap codex exec ...` whose model (a scripted Responses API on loopback) has it
  `cat` a 37 kB log, and Claude Code with the installed hook reading a 110 kB log (a scripted Messages API): each
  passes when what the model was sent of the output is the cut with its ref;
then, not on the path: `wrap`'s overhead with the service up (from just before `ctxsieve wrap sh -c 'date ...'` is
started to the agent's own clock, and from its exit to wrap's), every subcommand's --help, the service stopped and
started again with the model prepared, and each --also installer in a HOME of its own (install time, torch build,
folder size). The service listens on a free port (CTXSIEVE_URL), so a ctxsieve already on :8000 is not measured.
Targets: clone to agent under 300 s, wrap under 2 s before the agent starts, install + doctor under 10 s. Wall
times on a shared machine: the load average is given per step.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
WHEELS = Path("/opt/wheels")  # this machine's CPU torch wheel (pip reads it through its config; uv does not)
INSTALL = {  # what the README tells a user to type, from the folder holding the clone
    "uv": ["uv", "tool", "install", "--compile-bytecode", *(["--find-links", str(WHEELS)] if WHEELS.is_dir() else []),
           "./ctxsieve"],
    "pipx": ["pipx", "install", "--backend", "pip", "./ctxsieve"],
}
TOOL_DIR = {"uv": ".local/share/uv/tools/ctxsieve", "pipx": ".local/share/pipx/venvs/ctxsieve"}
SUBCOMMANDS = ("serve", "prepare", "migrate", "optimize", "ingest", "mcp", "hook", "gateway", "proxy", "service",
               "install", "uninstall", "wrap", "doctor", "stats")
TARGET_PATH, TARGET_WRAP, TARGET_SETUP = 300.0, 2.0, 10.0


@dataclass
class Step:
    name: str
    seconds: float
    ok: bool
    load: float
    note: str = ""


class NewUser:
    def __init__(self, home: Path, tools: dict[str, str], url: str) -> None:
        self.home = home
        self.bin = home / "bin"
        self.bin.mkdir(parents=True, exist_ok=True)
        for name, target in tools.items():
            (self.bin / name).symlink_to(target)
        python = Path(os.path.realpath(sys._base_executable)).parent  # the system Python this venv was made from
        dropped = ("CTXSIEVE_", "XDG_", "VIRTUAL_ENV", "PYENV", "UV_", "PIPX_", "CLAUDE", "CODEX", "ANTHROPIC",
                   "OPENAI")
        self.env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
        self.env.update(HOME=str(home), PATH=f"{self.bin}:{home}/.local/bin:{python}:/usr/local/bin:/usr/bin:/bin",
                        CTXSIEVE_URL=url, LANG="C.UTF-8")

    def run(self, *command: str, timeout: float = 1800, stdin: str | None = None,
            **env: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(list(command), cwd=self.home, env={**self.env, **env}, capture_output=True, text=True,
                              timeout=timeout, input=stdin)


Check = Callable[[subprocess.CompletedProcess[str]], bool]


def timed(steps: list[Step], name: str, user: NewUser, *command: str, ok_if: Check | None = None,
          **env: str) -> subprocess.CompletedProcess[str]:
    load, began = os.getloadavg()[0], time.monotonic()
    done = user.run(*command, **env)
    seconds = time.monotonic() - began
    ok = done.returncode == 0 and (ok_if is None or ok_if(done))
    steps.append(Step(name, seconds, ok, load, "" if ok else _tail(done)))
    return done


def _tail(done: subprocess.CompletedProcess[str]) -> str:
    return f"exit {done.returncode}: " + " | ".join((done.stdout + done.stderr).strip().splitlines()[-6:])


def first_start(steps: list[Step], user: NewUser, name: str) -> list[tuple[float, str]]:
    """`ctxsieve service start`, each line it says with the seconds since it was typed."""
    load, began = os.getloadavg()[0], time.monotonic()
    process = subprocess.Popen(["ctxsieve", "service", "start"], cwd=user.home, env=user.env, text=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    assert process.stderr is not None
    lines = [(time.monotonic() - began, line.rstrip("\n")) for line in process.stderr]
    code = process.wait()
    steps.append(Step(name, time.monotonic() - began, code == 0, load, "" if code == 0 else lines[-1][1]))
    return lines


def seed_configs(user: NewUser, openai: str) -> None:
    """The user's own Claude Code settings and Codex config, as the install tests have them; Codex's provider at the
    scripted API, as a user's own provider."""
    from tests.client.setup.test_install_agents import CODEX_CONFIG, LOG, SETTINGS

    (user.home / ".claude").mkdir(exist_ok=True)
    (user.home / ".codex").mkdir(exist_ok=True)
    (user.home / ".claude" / "settings.json").write_text(SETTINGS)
    (user.home / ".codex" / "config.toml").write_text(
        f'openai_base_url = "{openai}"\nforced_login_method = "api"\n' + CODEX_CONFIG)
    (user.home / "sync.log").write_text(LOG)
    (user.home / "big.log").write_text(LOG * 3)


def codex_through_wrap(steps: list[Step], user: NewUser) -> None:
    from tests.client.scripted_openai import ScriptedResponses
    from tests.client.setup.test_install_agents import LOG
    from tests.client.setup.test_install_wrap import CAT

    model = ScriptedResponses(calls=[("exec", CAT)])
    api, server = model.serve()
    config = user.home / ".codex" / "config.toml"
    config.write_text(re.sub(r'(?m)^openai_base_url = ".*"$', f'openai_base_url = "{api}"', config.read_text(),
                             count=1))
    try:
        timed(steps, "agent: ctxsieve wrap codex exec (cat of a 37 kB log)", user, "ctxsieve", "wrap", "codex", "exec",
              "--skip-git-repo-check", "Which shard failed to sync?", OPENAI_API_KEY="sk-test")
    finally:
        server.should_exit = True
    sent = [json.dumps(o) for r in model.requests for o in model.outputs(r)]
    cut = len(sent) == 1 and "[ctxsieve src_" in sent[0] and len(sent[0]) < len(LOG) / 2
    steps[-1].ok = steps[-1].ok and cut
    steps[-1].note += f"the model was sent {len(sent[0]) if sent else 0:,} characters of the {len(LOG):,}-character " \
                      f"output ({'the cut with its ref' if cut else 'NOT the cut'})"


def claude_with_the_hook(steps: list[Step], user: NewUser) -> None:
    from tests.client.coding_scenarios import tool_results
    from tests.client.scripted_anthropic import ScriptedModel

    log = user.home / "big.log"
    model = ScriptedModel(str(log))
    api, server = model.serve()
    try:
        timed(steps, "agent: claude -p with the installed hook (Read of a 110 kB log)", user, "claude", "-p",
              f"Read {log} and find the checksum mismatch", "--allowedTools", "Read", "--output-format", "json",
              ANTHROPIC_BASE_URL=api, ANTHROPIC_API_KEY="sk-test", DISABLE_TELEMETRY="1", DISABLE_AUTOUPDATER="1",
              CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1")
    finally:
        server.should_exit = True
    seen = tool_results(model.requests).get("toolu_00", "")
    whole = log.stat().st_size
    cut = 'fetch_ref(ref="src_' in seen and len(seen) < whole / 2
    steps[-1].ok = steps[-1].ok and cut
    steps[-1].note += f"the model was sent {len(seen):,} characters of the {whole:,}-character file " \
                      f"({'the cut with its ref' if cut else 'NOT the cut'})"


def wrap_overhead(user: NewUser, runs: int) -> tuple[list[float], list[float]]:
    """Seconds from just before `ctxsieve wrap` starts to the agent's own clock, and from there to wrap's exit."""
    before, after = [], []
    for _ in range(runs):
        began = time.time()
        done = user.run("ctxsieve", "wrap", "sh", "-c", "date +%s.%N")
        ended = time.time()
        if done.returncode != 0:
            raise SystemExit(f"ctxsieve wrap sh: {_tail(done)}")
        started = float(done.stdout.strip())
        before.append(started - began)
        after.append(ended - started)
    return before, after


def every_command(user: NewUser) -> tuple[float, list[str]]:
    began = time.monotonic()
    failed = [s for s in SUBCOMMANDS if user.run("ctxsieve", s, "--help").returncode != 0]
    failed += [c for c in ("ctxsieve-hook", "ctxsieve-mcp", "ctxsieve-proxy", "ctxsieve-gateway")
               if user.run(c, "--help").returncode != 0]
    return time.monotonic() - began, failed


def torch_and_size(home: Path, installer: str) -> str:
    folder = home / TOOL_DIR[installer]
    site = next(folder.glob("lib/python*/site-packages"), folder)
    torch = next((p.name.removesuffix(".dist-info") for p in site.glob("torch-*.dist-info")), "no torch")
    cuda = any(site.glob("nvidia_*"))
    size = subprocess.run(["du", "-sm", str(folder)], capture_output=True, text=True).stdout.split()[:1]
    return f"{torch}{' with the CUDA libraries' if cuda else ''}, {size[0] if size else '?'} MB in {folder}"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def find_tools() -> dict[str, str]:
    from claude_agent_sdk import __file__ as sdk

    tools = {"claude": str(Path(sdk).parent / "_bundled" / "claude"),
             "codex": str(ROOT / "tests" / "mcp" / "node_modules" / ".bin" / "codex")}
    for name in ("uv", "pipx"):
        found = shutil.which(name) or str(Path("/tmp/tools-venv/bin") / name)
        if Path(found).exists():
            tools[name] = found
    missing = [n for n in ("claude", "codex", "uv", "pipx") if n not in tools or not Path(tools[n]).exists()]
    if missing:
        raise SystemExit(f"not found: {', '.join(missing)} (see this module's docstring)")
    return tools


def versions(user: NewUser) -> list[str]:
    said = []
    for command in (["uv", "--version"], ["pipx", "--version"], ["claude", "--version"], ["codex", "--version"],
                    ["python3", "--version"], ["node", "--version"]):
        done = user.run(*command, timeout=60)
        version = (done.stdout or done.stderr).strip().splitlines()[-1] if done.returncode == 0 else "?"
        said.append(f"{command[0]} {version}")
    return said


def machine() -> str:
    cpu = next((line.split(":", 1)[1].strip() for line in Path("/proc/cpuinfo").read_text().splitlines()
                if line.startswith("model name")), platform.processor())
    memory = next((int(line.split()[1]) >> 20 for line in Path("/proc/meminfo").read_text().splitlines()
                   if line.startswith("MemTotal")), 0)
    return f"{os.cpu_count()} cores ({cpu}), {memory} GiB, {platform.system()} {platform.release()}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.newuser")
    parser.add_argument("--root", type=Path, default=Path("/tmp/ctxsieve-newuser"))
    parser.add_argument("--installer", choices=sorted(INSTALL), default="uv")
    parser.add_argument("--also", action="append", choices=sorted(INSTALL), default=[],
                        help="another installer, timed in a HOME of its own (install only)")
    parser.add_argument("--wraps", type=int, default=5)
    parser.add_argument("--keep", action="store_true", help="leave the HOMEs under --root")
    parser.add_argument("--out", type=Path, default=ROOT / "bench" / "results" / "newuser.txt")
    args = parser.parse_args(argv)

    tools = find_tools()
    shutil.rmtree(args.root, ignore_errors=True)
    url = f"http://127.0.0.1:{free_port()}"
    user = NewUser(args.root / "home", tools, url)
    commit = subprocess.run(["git", "-C", str(ROOT), "log", "-1", "--format=%h %cs"], capture_output=True,
                            text=True).stdout.strip()
    loads = [os.getloadavg()]
    steps: list[Step] = []
    lines: list[tuple[float, str]] = []
    try:
        timed(steps, "git clone (HEAD of this checkout)", user, "git", "clone", "-q", str(ROOT), "ctxsieve")
        timed(steps, " ".join(INSTALL[args.installer]), user, *INSTALL[args.installer])
        lines = first_start(steps, user, "ctxsieve service start (first start: the model prepared on first need)")
        seed_configs(user, "http://127.0.0.1:9/v1")  # the scripted API's URL, once it runs
        timed(steps, "ctxsieve install --yes", user, "ctxsieve", "install", "--yes")
        timed(steps, "ctxsieve doctor", user, "ctxsieve", "doctor",
              ok_if=lambda d: "FAIL" not in d.stdout)
        codex_through_wrap(steps, user)
        path = list(steps)  # the rest is not on the path
        said_versions = versions(user)
        claude_with_the_hook(steps, user)
        before, after = wrap_overhead(user, args.wraps)
        help_seconds, failed = every_command(user)
        timed(steps, "ctxsieve service stop", user, "ctxsieve", "service", "stop")
        first_start(steps, user, "ctxsieve service start (again: the model prepared)")
        timed(steps, "ctxsieve service stop", user, "ctxsieve", "service", "stop")
        installed = torch_and_size(user.home, args.installer)
        others = []
        for other in args.also:
            alt = NewUser(args.root / f"home-{other}", tools, url)
            shutil.copytree(user.home / "ctxsieve", alt.home / "ctxsieve", symlinks=True)
            timed(steps, f"(another HOME) {' '.join(INSTALL[other])}", alt, *INSTALL[other])
            works = alt.run("ctxsieve", "--help").returncode == 0
            others.append(f"  {other}: {torch_and_size(alt.home, other)}; ctxsieve --help "
                          f"{'answers' if works else 'FAILS'}")
    finally:
        if (user.home / ".local" / "bin" / "ctxsieve").exists():
            user.run("ctxsieve", "service", "stop", timeout=60)
        if not args.keep:
            shutil.rmtree(args.root, ignore_errors=True)
    loads.append(os.getloadavg())

    total = sum(s.seconds for s in path)
    setup = sum(s.seconds for s in steps if s.name in ("ctxsieve install --yes", "ctxsieve doctor"))
    out = ["bench.newuser: a new user's path from a clean clone to an agent using ctxsieve (issue 38)",
           f"commit {commit}; machine: {machine()}",
           f"load average at the start {loads[0][0]:.2f} {loads[0][1]:.2f} {loads[0][2]:.2f}, at the end "
           f"{loads[1][0]:.2f} {loads[1][1]:.2f} {loads[1][2]:.2f}",
           "tools: " + "; ".join(said_versions),
           f"fresh HOME, PATH: the system Python, /usr/bin, the agents' CLIs, uv and pipx; the service at {url}", "",
           f"{'seconds':>8}  {'load':>5}  step"]
    for step in steps:
        mark = "" if step.ok else "  FAILED"
        out.append(f"{step.seconds:8.1f}  {step.load:5.2f}  {step.name}{mark}")
        if step.note:
            out.append(f"{'':16}{step.note}")
    out += ["", "the first start, as `ctxsieve service start` said it (seconds since it was typed):"]
    out += [f"{t:8.1f}  {line}" for t, line in lines]
    out += ["", f"installed: {installed}", *others,
            f"every subcommand's --help and the four light commands' --help: "
            f"{'all answer' if not failed else 'FAILED: ' + ', '.join(failed)} ({help_seconds:.1f} s)",
            f"wrap with the service up, {len(before)} runs: {statistics.median(before):.2f} s median before the agent "
            f"starts (min {min(before):.2f}, max {max(before):.2f}); {statistics.median(after):.2f} s from its exit "
            f"to wrap's",
            "", f"clone to an agent using ctxsieve (the steps through `wrap codex exec`): {total:.1f} s "
            f"(target {TARGET_PATH:.0f} s: {'met' if total <= TARGET_PATH else 'NOT met'})",
            f"install + doctor: {setup:.1f} s (target {TARGET_SETUP:.0f} s: "
            f"{'met' if setup <= TARGET_SETUP else 'NOT met'})",
            f"wrap before the agent starts: {max(before):.2f} s at most (target {TARGET_WRAP:.0f} s: "
            f"{'met' if max(before) <= TARGET_WRAP else 'NOT met'})"]
    text = "\n".join(out) + "\n"
    sys.stdout.write(text)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text)
    return 0 if all(s.ok for s in steps) and not failed else 1


if __name__ == "__main__":
    raise SystemExit(main())
