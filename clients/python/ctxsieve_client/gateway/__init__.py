"""The MCP gateway: one MCP server in front of the user's own MCP servers, with ctxsieve in each call's path.

- `config`: the `mcpServers` JSON and the gateway's settings;
- `names`: exposed names, intent, secrets;
- `catalog`: the upstream tools as the agent sees them, and their toolsets for tool search;
- `upstreams`: one upstream session per server for each client connection (FastMCP's proxy underneath);
- `shaping`: what the agent gets back from a call;
- `server`: the FastMCP server and each call's path; `middleware`: how each request reaches it; `own_tools`:
  the ref tools (`filter_ref`, `fetch_ref`, `search_code`), `find_tools`, `call_tool`; `cli`: `ctxsieve gateway`.

Needs the `mcp` extra (`pip install 'ctxsieve-client[mcp]'`): FastMCP and the MCP SDK, no model, no store.
"""
