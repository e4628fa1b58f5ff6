"""The agents whose MCP servers install writes into a JSON config, by the name `--agent` takes."""

from __future__ import annotations

from .cursor import Cursor
from .gemini import Gemini
from .mcp_json import JsonAgent
from .opencode import OpenCode

JSON_AGENTS: dict[str, JsonAgent] = {a.name: a for a in (OpenCode(), Gemini(), Cursor())}
