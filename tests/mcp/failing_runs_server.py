"""An MCP server of the tests' own (FastMCP, stdio) whose tool answers with a failing run's output, as a CI or test
runner server would: the outputs are read from the JSON file named on the command line (run name -> text); with
`failed` the text comes back as the tool's error result (isError), otherwise as a normal result."""

from __future__ import annotations

import json
import sys

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

OUTPUTS: dict[str, str] = json.loads(open(sys.argv[1], encoding="utf-8").read())  # noqa: SIM115
server = FastMCP("ci")


@server.tool(description="Run a named check (a test suite or a build) and answer with its output.")
def run_check(name: str, failed: bool = True) -> str:
    if failed:
        raise ToolError(OUTPUTS[name])
    return OUTPUTS[name]


if __name__ == "__main__":
    server.run(show_banner=False)
