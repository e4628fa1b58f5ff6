"""Where ctxsieve keeps its own files for this user, and the URL every surface finds the service at."""

from __future__ import annotations

import os
from pathlib import Path

DEFAULT_URL = "http://127.0.0.1:8000"


def state_dir() -> Path:
    """$XDG_STATE_HOME/ctxsieve, else ~/.local/state/ctxsieve: the service's data, log and pid, install's backups."""
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "ctxsieve"


def service_url() -> str:
    """CTXSIEVE_URL, else the URL `ctxsieve install` wrote into the agents' configs, else the local default."""
    from .manifest import Manifest

    return os.environ.get("CTXSIEVE_URL") or Manifest.load(state_dir()).url or DEFAULT_URL
