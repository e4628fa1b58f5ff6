"""An MCP server of the tests' own, for what the third-party servers do not do on demand: crash, hang, fail,
return an image or structured content, change its tool list, take a credential or an `intent` of its own."""

from __future__ import annotations

import base64
import os
import sys

import anyio
import mcp_types as mt
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.tools.base import ToolResult
from pydantic import BaseModel

# A 1x1 PNG.
PIXEL = base64.b64decode("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
                         "AAAABJRU5ErkJggg==")
LINES = [f"record {i}: sensor {i % 7} read {i * 3} kPa at station {i % 11}" for i in range(3000)]

server = FastMCP("faults")
sys.stderr.write(f"faults server up (pid {os.getpid()})\n")
sys.stderr.flush()


class Rows(BaseModel):
    rows: list[str]


@server.tool(description="Exit the server process at once.")
def crash() -> str:
    sys.stderr.write("faults server: crashing on purpose\n")
    sys.stderr.flush()
    os._exit(3)


@server.tool(description="Answer after `seconds`.")
async def hang(seconds: float) -> str:
    await anyio.sleep(seconds)
    return "done"


@server.tool(description="Fail with a long error.")
def fail() -> str:
    raise ToolError("Traceback (most recent call last):\n" + "\n".join(f"  frame {i}" for i in range(400))
                    + "\nOSError: disk on fire")


@server.tool(description="A picture and a caption.")
def picture() -> ToolResult:
    return ToolResult(content=[mt.TextContent(type="text", text="a pixel"),
                               mt.ImageContent(type="image", data=base64.b64encode(PIXEL).decode(),
                                               mime_type="image/png")])


@server.tool(description="Sensor records as structured rows.")
def rows(count: int) -> Rows:
    return Rows(rows=LINES[:count])


@server.tool(description="Search the sensor log.")
def search(query: str) -> str:
    return "\n".join(LINES)


@server.tool(description="Look records up with a credential.")
def lookup(api_token: str, station: int) -> str:
    return "\n".join(line for line in LINES if line.endswith(f"station {station}")) * 3


@server.tool(description="Echo the intent this tool takes itself, and a long text.")
def echo_intent(intent: str) -> str:
    return f"own intent: {intent}\n" + "\n".join(LINES[:50])


@server.tool(description="Read a file (a name server-filesystem has too).")
def read_file(path: str) -> str:
    return f"faults read {path}"


@server.tool(description="Add a tool named `added` and say the tool list changed.")
async def grow(ctx: Context) -> str:
    @server.tool(name="added", description="A tool that did not exist at start.")
    def added() -> str:
        return "added works"

    await ctx.send_notification(mt.ToolListChangedNotification())
    return "grown"


if __name__ == "__main__":
    server.run(show_banner=False)
