"""An MCP server whose tools are one shared tool pool (bench.gateway serves the pools behind the gateway).

Usage: python -m bench.pool_server metatool|seal_tools|stabletoolbench
Each tool answers with its own name and arguments: what is measured is which tools are found, not what they do.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import mcp_types as mt
from fastmcp import FastMCP
from fastmcp.tools.base import Tool, ToolResult

from bench.tools import pools


class PoolTool(Tool):
    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content=[mt.TextContent(type="text", text=json.dumps({"tool": self.name, **arguments}))])


def main() -> None:
    tools, _ = pools()[sys.argv[1]]
    server = FastMCP(sys.argv[1])
    for tool in tools:
        schema = tool.get("parameters") or {"type": "object", "properties": {}}
        server.add_tool(PoolTool(name=tool["name"], description=tool["description"], parameters=schema))
    server.run(show_banner=False)


if __name__ == "__main__":
    main()
