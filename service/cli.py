"""`ctxsieve serve`, `prepare` (model and encodings, offline, once), `ingest`, `migrate` and `mcp`; `service`
(the service in the background), `install` / `uninstall` (the agents on this machine), `wrap`, `doctor`, `stats`."""

from __future__ import annotations

import argparse
import logging
import os
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ctxsieve_client.gateway.cli import add_arguments as gateway_arguments
from ctxsieve_client.hooks.cli import add_arguments as hook_arguments
from ctxsieve_client.mcp_cli import add_arguments as mcp_arguments
from ctxsieve_client.mcp_cli import run as run_mcp
from ctxsieve_client.proxy.cli import add_arguments as proxy_arguments

if TYPE_CHECKING:  # imported where used: it pulls in numpy and the sieve, a quarter second `wrap` and the hooks
    from .settings import Settings  # do not need before the agent starts


def _settings(args: argparse.Namespace) -> Settings:
    """--host, --port, --data-dir over the environment; with no port given, CTXSIEVE_URL's (when it is this
    machine's), so `serve` listens where every other command looks for it."""
    from ctxsieve_client.setup.state import serve_port

    from .settings import Settings

    port = args.port if args.port is not None else serve_port()
    overrides = {k: v for k, v in {"host": args.host, "port": port, "data_dir": args.data_dir}.items()
                 if v is not None}
    return Settings(**overrides)


def _libc() -> Any:
    import ctypes
    import ctypes.util

    name = ctypes.util.find_library("c")
    return ctypes.CDLL(name) if sys.platform.startswith("linux") and name else None


def _fewer_malloc_arenas() -> None:
    """glibc gives each of the worker threads its own heap arena; freed memory then stays scattered over
    them and RSS creeps up under load. Two arenas (set before any thread starts) keep it compact."""
    libc = _libc()
    if libc is not None:
        libc.mallopt(-8, 2)  # M_ARENA_MAX


def _trim_freed_memory(every: float) -> None:
    """Hand freed heap pages back to the kernel every few seconds. Inference frees activation buffers of
    every size; glibc keeps them, so under load RSS grew far past what tracemalloc saw live (`make loadtest`
    measures RSS per window). malloc_trim returns the free pages of every arena."""
    libc = _libc()
    if libc is None or every <= 0:
        return

    def loop() -> None:
        while True:
            time.sleep(every)
            libc.malloc_trim(0)

    threading.Thread(target=loop, name="malloc-trim", daemon=True).start()


def _say_steps() -> None:
    """ctxsieve's own start-up lines (model loaded, store open, ready, or what is wrong), one per step."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("ctxsieve: %(message)s"))
    logger = logging.getLogger("ctxsieve")
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False


def serve(args: argparse.Namespace) -> int:
    import uvicorn

    _fewer_malloc_arenas()
    _say_steps()

    from .app import create_app

    settings = _settings(args)
    if args.own:
        settings = _own(settings)
    logging.getLogger("ctxsieve").info("files it may read (CTXSIEVE_READ_ROOTS): %s", settings.read_roots or "none")
    _trim_freed_memory(settings.malloc_trim_seconds)
    logging.getLogger("uvicorn.access").addFilter(_probes_unlogged)
    logging.getLogger("uvicorn.access").addFilter(PollsLoggedOnce())
    uvicorn.run(create_app(settings), host=settings.host, port=settings.port, log_level=settings.log_level)
    return 0


def _probes_unlogged(record: logging.LogRecord) -> bool:
    """A health probe (`ctxsieve service start` or a supervisor polling /readyz, a 503 each until the model is
    warm) gets no access line: a line each would bury the user's own requests; why the service is not ready is
    logged by the service itself, and the probe's answer says it."""
    args = record.args
    return not (isinstance(args, tuple) and len(args) >= 3 and args[2] in ("/healthz", "/readyz"))


POLL_LINE_S = 30.0  # a poll answered the same way gets an access line this often at most


class PollsLoggedOnce(logging.Filter):
    """A GET answered as the one before it (`ctxsieve index` asks for its repository's state four times a second
    while it indexes: 240 lines a minute in `make run`'s terminal) gets an access line when its answer's status
    changes, or every POLL_LINE_S while it is repeated; any other request is logged as it comes."""

    def __init__(self) -> None:
        super().__init__()
        self._last: tuple[object, ...] | None = None
        self._logged_at = 0.0

    def filter(self, record: logging.LogRecord) -> bool:
        args = record.args
        if not (isinstance(args, tuple) and len(args) >= 5):
            return True
        key, now = (args[1], args[2], args[4]), time.monotonic()
        if key == self._last and args[1] == "GET" and now - self._logged_at < POLL_LINE_S:
            return False
        self._last, self._logged_at = key, now
        return True


def _own(settings: Settings) -> Settings:
    """This user's own service (`make run`, `ctxsieve service start`): served on loopback, it may read the user's
    home folder, so that `ctxsieve index` and search_code reach their repositories, unless CTXSIEVE_READ_ROOTS says
    otherwise; served on another address, only what that says (default-deny)."""
    from ctxsieve_client.setup.state import is_loopback

    from .settings import own_read_roots

    if (home := own_read_roots()) is None or not is_loopback(settings.host):
        return settings
    return settings.model_copy(update={"read_roots": home})


def prepare(args: argparse.Namespace) -> int:
    from ctxsieve.ingest.embedding import load_embedder, resolve_model_path
    from ctxsieve.ingest.embedding.factory import choose_runtime
    from ctxsieve.ingest.embedding.onnx_model import ensure_onnx, ensure_onnx_int8, ensure_tokenizer, mean_pooled
    from ctxsieve.ingest.tokens import load_tokenizer

    from .models import load_static
    from .stages import DENSE_READY, STATIC_READY

    if getattr(args, "background", False):
        _in_background()
    settings = _settings(args)
    tok = load_tokenizer(settings.encoding, settings.tiktoken_cache_dir)
    path = Path(resolve_model_path(settings.embed_model, settings.model_dir))
    _step(f"encoding {tok.name}: ok (sha256 verified)\nmodel {settings.embed_model}: {path}")
    if choose_runtime(settings.runtime, settings.int8) in ("onnx", "openvino") and mean_pooled(path):
        _step("ONNX model: exporting once if needed (about a minute)...")
        (ensure_onnx_int8 if settings.int8 else ensure_onnx)(path, settings.model_dir)
        ensure_tokenizer(path, settings.model_dir)
    embedder = load_embedder(settings.embed_model, settings.model_dir, settings.inference_threads, settings.int8,
                             settings.runtime)
    _step(f"{DENSE_READY}{getattr(embedder, 'runtime', 'torch')}")
    _step("static first stage: made once if needed from the model's token embeddings...")
    static = load_static(settings, embedder)
    _step(STATIC_READY if static else "static first stage: off")
    return 0


def _in_background() -> None:
    """For the service that started this: below its requests in priority, and stopped cleanly when it stops (a
    SystemExit unwinds the steps, which remove their partial files)."""
    import signal

    os.nice(10)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def _step(line: str) -> None:
    """A step said at once, before it starts or when it is done (the service reading `--background` acts on each)."""
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


def ingest(args: argparse.Namespace) -> int:
    from .ingest_cli import HttpTarget, LocalTarget, Target
    from .ingest_cli import ingest as run_ingest

    settings = _settings(args)
    root = Path(args.path)
    if not root.is_dir():
        sys.stderr.write(f"{root}: not a folder\n")
        return 2
    from ctxsieve.ingest.tokens import load_tokenizer

    tokenizer = load_tokenizer(settings.encoding, settings.tiktoken_cache_dir)
    target: Target
    holder = None
    if args.url:
        target = HttpTarget(args.url, args.api_key)
    else:
        from .engine import build_engine
        from .models import load_models

        engine = build_engine(settings, load_models(settings))
        holder = engine
        target = LocalTarget(engine, args.tenant)
    from ctxsieve_client import CtxsieveError as ServiceError

    try:
        summary = run_ingest(root, args.collection, target, args.glob, args.prune, tokenizer.count)
    except ServiceError as exc:  # the service's answer, whole, not a traceback
        sys.stderr.write(f"ctxsieve ingest: the service answered {exc}\n")
        return 2
    finally:
        if holder is not None:
            holder.store.close()
    sys.stdout.write(f"{summary.files} files ({summary.skipped} unchanged, {summary.unreadable} not text, "
                     f"{summary.pruned} pruned), {summary.chunks} chunks, {summary.tokens} tokens, "
                     f"{summary.seconds:.1f} s\n")
    return 0


def migrate(args: argparse.Namespace) -> int:
    """Convert a data dir of the layout before Qdrant Edge; the old files stay until the user removes them."""
    from ctxsieve.indexes.migrate import migrate as run_migrate
    from ctxsieve.ingest.embedding import load_embedder
    from ctxsieve.ingest.tokens import load_tokenizer

    settings = _settings(args)
    tokenizer = load_tokenizer(settings.encoding, settings.tiktoken_cache_dir)
    embedder = load_embedder(settings.embed_model, settings.model_dir, settings.inference_threads,
                             settings.int8, settings.runtime)
    try:
        done = run_migrate(settings.data_dir, embedder, tokenizer, settings.chunk_tokens)
    except (FileNotFoundError, FileExistsError, RuntimeError) as exc:
        sys.stderr.write(f"ctxsieve migrate: {exc}\n")
        return 2
    sys.stdout.write(f"{settings.data_dir}: {done.sources} sources, {done.vectors} chunk vectors, {done.collections} "
                     f"collections ({done.documents} documents), {done.toolsets} toolsets ({done.recorded} recorded "
                     f"uses), {done.reads} session reads; the old files in {settings.data_dir / 'qdrant'} are kept\n")
    return 0


def optimize(args: argparse.Namespace) -> int:
    """Build the embedded store's HNSW indexes, with the service stopped (the data dir's lock makes sure)."""
    from ctxsieve.indexes.errors import StoreUnavailable
    from ctxsieve.indexes.store import open_edge

    settings = _settings(args)
    if settings.qdrant_url:
        sys.stderr.write("ctxsieve optimize: a Qdrant server builds its indexes itself; this is for --data-dir\n")
        return 2
    try:
        store = open_edge(settings.data_dir)
    except StoreUnavailable as exc:
        sys.stderr.write(f"ctxsieve optimize: {exc}\n")
        return 2
    try:
        for space, seconds in store.optimize_all():
            sys.stdout.write(f"{space}: optimized in {seconds:.1f} s\n")
            sys.stdout.flush()
    finally:
        store.close()
    return 0


def index(args: argparse.Namespace) -> int:
    from .repo_cli import index as run_index

    return run_index(args)


def search(args: argparse.Namespace) -> int:
    from .repo_cli import search as run_search

    return run_search(args)


def repos(args: argparse.Namespace) -> int:
    from .repo_cli import repos as run_repos

    return run_repos(args)


def mcp(args: argparse.Namespace) -> int:
    return run_mcp(args)


def gateway(args: argparse.Namespace) -> int:
    from ctxsieve_client.gateway.cli import run as run_gateway

    return run_gateway(args)


def hook(args: argparse.Namespace) -> int:
    from ctxsieve_client.hooks.cli import run as run_hook

    return run_hook(args)


def proxy(args: argparse.Namespace) -> int:
    from ctxsieve_client.proxy.cli import run as run_proxy

    return run_proxy(args)


def service(args: argparse.Namespace) -> int:
    from ctxsieve_client.setup.state import service_url

    from . import lifecycle

    if args.action == "start":
        try:
            return lifecycle.start(service_url(), wait=args.timeout)
        except lifecycle.NotLocal as exc:
            sys.stderr.write(f"ctxsieve service: {exc}\n")
            return 1
    if args.action == "stop":
        return lifecycle.stop()
    code, lines = lifecycle.status(service_url(), _version())
    sys.stdout.writelines(line + "\n" for line in lines)
    return code


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("ctxsieve")
    except PackageNotFoundError:  # run from a tree that was never installed
        return "unknown"


def install(args: argparse.Namespace) -> int:
    from ctxsieve_client.setup.install import install as run_install

    return run_install(args)


def uninstall(args: argparse.Namespace) -> int:
    from ctxsieve_client.setup.install import uninstall as run_uninstall

    return run_uninstall(args)


def wrap(args: argparse.Namespace) -> int:
    from ctxsieve_client.setup.state import service_url
    from ctxsieve_client.setup.wrap import run as run_wrap

    from .lifecycle import shared

    url = service_url()
    return run_wrap([args.agent, *args.args], url, lambda: shared(url))


def doctor(_args: argparse.Namespace) -> int:
    from ctxsieve_client.setup.doctor import run as run_doctor
    from ctxsieve_client.setup.state import service_url

    return run_doctor(service_url())


def stats(args: argparse.Namespace) -> int:
    from ctxsieve_client.setup.state import service_url
    from ctxsieve_client.setup.stats import run as run_stats

    return run_stats(args, service_url())


def _agent_commands(sub: Any) -> None:
    """The commands that put ctxsieve in front of the agents on this machine."""
    from ctxsieve_client.setup.install import add_install_arguments, add_uninstall_arguments
    from ctxsieve_client.setup.stats import add_arguments as stats_arguments
    from ctxsieve_client.setup.wrap import add_arguments as wrap_arguments

    cmd = sub.add_parser("service", help="the service in the background for this user (start, stop, status)")
    cmd.add_argument("action", choices=["start", "stop", "status"])
    cmd.add_argument("--timeout", type=float, default=900.0, help="start: seconds to wait for it to be ready")
    cmd.set_defaults(fn=service)
    _commands(sub, [
        ("install", "wire the coding agents found here (Claude Code, Codex, OpenCode, Gemini CLI, Cursor) to "
         "ctxsieve", add_install_arguments, install),
        ("uninstall", "undo what install changed, file by file", add_uninstall_arguments, uninstall),
        ("wrap", "run an agent with its model API behind a ctxsieve proxy of its own", wrap_arguments, wrap),
        ("doctor", "check what is wired, and say how to mend what is not", lambda _: None, doctor),
        ("stats", "per session: tool tokens, tokens sent, refs fetched back, repeated reads", stats_arguments, stats)])


Command = tuple[str, str, Callable[[argparse.ArgumentParser], None], Callable[[argparse.Namespace], int]]


def _commands(sub: Any, commands: list[Command]) -> None:
    """A subcommand for each (name, help, what adds its flags, what runs it)."""
    for name, text, arguments, fn in commands:
        cmd = sub.add_parser(name, help=text)
        arguments(cmd)
        cmd.set_defaults(fn=fn)


def main(argv: list[str] | None = None) -> int:
    os.environ.setdefault("HF_HUB_OFFLINE", "1")  # never reach for a model hub
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    parser = argparse.ArgumentParser(prog="ctxsieve", description="retrieval-side context service")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, fn, text in [("serve", serve, "serve the HTTP API"),
                           ("prepare", prepare, "convert the model and install encodings (offline)"),
                           ("migrate", migrate, "convert a data dir written before Qdrant Edge (keeps the old files)"),
                           ("optimize", optimize, "build the embedded store's HNSW indexes (service stopped)")]:
        cmd = sub.add_parser(name, help=text)
        cmd.add_argument("--host")
        cmd.add_argument("--port", type=int)
        cmd.add_argument("--data-dir", type=Path)
        cmd.set_defaults(fn=fn)
        if name == "serve":
            cmd.add_argument("--own", action="store_true", help="this user's own service: on loopback it may read "
                             "the home folder unless CTXSIEVE_READ_ROOTS is set")
        if name == "prepare":
            cmd.add_argument("--background", action="store_true", help=argparse.SUPPRESS)  # the service's child
    cmd = sub.add_parser("ingest", help="index a folder into a collection (incremental)")
    cmd.add_argument("path")
    cmd.add_argument("--collection", required=True)
    cmd.add_argument("--glob", default="**/*")
    cmd.add_argument("--prune", action="store_true", help="remove documents of files that are gone")
    cmd.add_argument("--url", help="a running ctxsieve; without it, write to --data-dir directly")
    cmd.add_argument("--api-key", help="for --url when keys are configured")
    cmd.add_argument("--tenant", default="default", help="tenant for direct writes")
    cmd.add_argument("--host")
    cmd.add_argument("--port", type=int)
    cmd.add_argument("--data-dir", type=Path)
    cmd.set_defaults(fn=ingest)
    from .repo_cli import add_index_arguments, add_repos_arguments, add_search_arguments

    _commands(sub, [
        ("index", "index a repository's code for search (default: the one around here); incremental",
         add_index_arguments, index),
        ("search", "search an indexed repository's code: definitions best first, with line numbers",
         add_search_arguments, search),
        ("repos", "the indexed repositories, a line each; `repos forget NAME` drops one's index", add_repos_arguments,
         repos),
        ("mcp", "serve ctxsieve's tools over MCP (stdio, or --http); also ctxsieve-mcp", mcp_arguments, mcp),
        ("hook", "a tool-output hook for an agent runtime (claude-code)", hook_arguments, hook),
        ("gateway", "one MCP server in front of your MCP servers (their mcpServers config)", gateway_arguments,
         gateway),
        ("proxy", "ctxsieve in front of the model API (point your agent's base URL here)", proxy_arguments, proxy)])
    _agent_commands(sub)
    args = parser.parse_args(argv)
    try:
        return int(args.fn(args))
    except BrokenPipeError:  # the reader went (`ctxsieve search ... | head`): the rest is not wanted, and no traceback
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())  # the exit's own flush would fail again
        return SIGPIPE_EXIT


SIGPIPE_EXIT = 141  # what a shell reports for a command its reader left, as `yes | head` does


if __name__ == "__main__":
    raise SystemExit(main())
