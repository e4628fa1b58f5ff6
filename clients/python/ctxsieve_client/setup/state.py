"""Where ctxsieve keeps its own files for this user, the one URL every command finds the service at, and the one
folder Claude Code's capture prefix and the hooks share: each resolved here only, so `serve`, `service`, `install`,
`wrap`, `doctor` and the hooks (command and http) agree whatever each process's own TMPDIR."""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path
from urllib.parse import urlsplit

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 8000
DEFAULT_URL = f"http://{DEFAULT_HOST}:{DEFAULT_PORT}"
CAPTURE_VARIABLE = "CTXSIEVE_CAPTURE_DIR"


def state_dir() -> Path:
    """$XDG_STATE_HOME/ctxsieve, else ~/.local/state/ctxsieve: the service's data, log and pid, install's backups."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ctxsieve"


def service_url(given: str | None = None) -> str:
    """`given` (a --url), else CTXSIEVE_URL, else CTXSIEVE_PORT (on CTXSIEVE_HOST, else this machine's loopback),
    else the URL `ctxsieve install` wrote into the agents' configs, else http://127.0.0.1:8000. A CTXSIEVE_URL whose
    port is not CTXSIEVE_PORT is said and nothing runs: the two would send the agents and the service apart."""
    from .manifest import Manifest

    if given:
        return given.rstrip("/")
    env_url, port = os.environ.get("CTXSIEVE_URL"), _env_port()
    if env_url:
        if port is not None and url_port(env_url) != port:
            raise SystemExit(f"ctxsieve: CTXSIEVE_URL={env_url} and CTXSIEVE_PORT={port} name different ports; "
                             "set one of them (or the same port in both)")
        return env_url.rstrip("/")
    if port is not None:
        return f"http://{_reachable(os.environ.get('CTXSIEVE_HOST') or DEFAULT_HOST)}:{port}"
    return (Manifest.load(state_dir()).url or DEFAULT_URL).rstrip("/")


def serve_port() -> int | None:
    """The port `ctxsieve serve` takes when neither --port nor CTXSIEVE_PORT says one: CTXSIEVE_URL's, when it is
    this machine's (the URL every other command reaches it at)."""
    env_url = os.environ.get("CTXSIEVE_URL")
    if _env_port() is not None or not env_url:
        service_url()  # says when the two disagree
        return None
    return url_port(env_url) if is_local(env_url) else None


def url_port(url: str) -> int:
    parts = urlsplit(url)
    return parts.port or (443 if parts.scheme == "https" else 80)


def is_local(url: str) -> bool:
    return is_loopback(urlsplit(url).hostname or "")


def is_loopback(host: str) -> bool:
    """An address only this machine reaches: `localhost`, 127.0.0.0/8, ::1."""
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _env_port() -> int | None:
    text = os.environ.get("CTXSIEVE_PORT")
    if not text:
        return None
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise SystemExit(f"ctxsieve: CTXSIEVE_PORT={text} is not a port (1-65535)")
    return int(text)


def _reachable(host: str) -> str:
    """The address a client reaches a server bound to `host` at (all addresses: this machine's loopback)."""
    if host in ("0.0.0.0", ""):
        return DEFAULT_HOST
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


def capture_dir() -> Path:
    """Where Claude Code's capture prefix saves each Bash output whole and the hooks read it: CTXSIEVE_CAPTURE_DIR,
    else the folder `ctxsieve install` wrote into Claude Code's settings and this state, else `captures/` here.
    Never the temp folder: Claude Code and the service each have their own TMPDIR."""
    from .manifest import Manifest

    own = os.environ.get(CAPTURE_VARIABLE)
    if own:
        return Path(own)
    recorded = Manifest.load(state_dir()).capture_dir
    return Path(recorded) if recorded else state_dir() / "captures"
