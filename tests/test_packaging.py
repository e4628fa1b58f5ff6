"""The ctxsieve wheel is the whole tool: `pip install .`, `pipx install .` or `uv tool install .` of a checkout gives
every command (the service's and the light client's), and the capture script the hook install copies."""

from __future__ import annotations

import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_the_wheel_carries_the_client_and_every_command(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
                           "-w", str(tmp_path), str(ROOT)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    (wheel,) = tmp_path.glob("ctxsieve-*.whl")
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        entry_points = next(archive.read(n).decode() for n in names if n.endswith("entry_points.txt"))
        capture = archive.getinfo("ctxsieve_client/hooks/capture.sh")
    for module in ("ctxsieve_client/hooks/cli.py", "ctxsieve_client/mcp_server.py", "ctxsieve_client/proxy/server.py",
                   "ctxsieve_client/setup/install.py", "ctxsieve/service/cli.py"):
        assert module in names, module
    for command in ("ctxsieve =", "ctxsieve-hook =", "ctxsieve-mcp =", "ctxsieve-proxy =", "ctxsieve-gateway ="):
        assert command in entry_points, command
    assert capture.external_attr >> 16 & 0o111, "the capture script stays executable"
