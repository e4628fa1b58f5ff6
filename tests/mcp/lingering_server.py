"""An MCP server of the tests' own that outlives its client unless it is killed, as some real ones do (a socket or
a worker keeping them alive, SIGTERM ignored): it stays after its stdin closes and ignores SIGTERM, so only the
SIGKILL at the end of the MCP SDK's shutdown ends it."""

from __future__ import annotations

import os
import signal
import threading

from fastmcp import FastMCP

signal.signal(signal.SIGTERM, signal.SIG_IGN)
threading.Thread(target=threading.Event().wait, name="keeps the process alive").start()  # not a daemon
server = FastMCP("lingering")


@server.tool(description="Say which process answered.")
def linger() -> str:
    return f"lingering in pid {os.getpid()}"


if __name__ == "__main__":
    server.run(show_banner=False)
