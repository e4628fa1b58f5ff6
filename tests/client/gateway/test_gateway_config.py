"""The gateway's config, names, intent and secrets: the pure parts, refused with the key that is wrong."""

from __future__ import annotations

from typing import Any

import pytest

from ctxsieve_client.gateway.catalog import Catalog, as_listed
from ctxsieve_client.gateway.config import ConfigError, Options, parse_config
from ctxsieve_client.names import exposed_names, intent_of, is_secret, masked

FS = {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/data"]}


def test_the_config_clients_already_have_is_read_with_overrides() -> None:
    config = parse_config({
        "mcpServers": {"fs": FS, "git": {"type": "stdio", "command": "uvx", "args": ["mcp-server-git"],
                                         "env": {"GIT": "${HOME}"}, "ctxsieve": {"max_tokens": 600}},
                       "api": {"type": "http", "url": "https://example.com/mcp",
                               "headers": {"Authorization": "Bearer ${TOKEN}"}},
                       "old": {"command": "x", "disabled": True}},
        "ctxsieve": {"tool_search": "on", "always": ["read_file"], "timeout_s": 5}},
        {"HOME": "/home/ada", "TOKEN": "t0k"})
    assert [s.name for s in config.servers] == ["fs", "git", "api"], "disabled servers are left out"
    fs, git, api = config.servers
    assert (fs.transport, fs.command, fs.args) == ("stdio", "npx", tuple(FS["args"]))
    assert git.env == {"GIT": "/home/ada"} and git.options.max_tokens == 600 and git.options.timeout_s == 5
    assert fs.options.max_tokens is None and Options().max_tokens is None, "by kind: code by the service's rule"
    assert (api.transport, api.headers) == ("http", {"Authorization": "Bearer t0k"})
    assert config.options.tool_search == "on" and config.options.always == ("read_file",)


def test_a_stdio_server_gets_the_environment_the_config_passes_it() -> None:
    environ = {"HOME": "/home/ada", "GITHUB_TOKEN": "ghp", "LANG": "C.UTF-8"}
    config = parse_config({"mcpServers": {
        "none": FS, "all": {**FS, "env": {"LANG": "own"}, "ctxsieve": {"inherit_env": True}},
        "named": {**FS, "ctxsieve": {"inherit_env": ["GITHUB_TOKEN", "UNSET"]}},
        "api": {"type": "http", "url": "https://example.com/mcp"}}, "ctxsieve": {"inherit_env": False}}, environ)
    none, everything, named, api = config.servers
    assert none.env == {} and named.env == {"GITHUB_TOKEN": "ghp"} and api.env == {}
    assert everything.env == {**environ, "LANG": "own"}, "the whole environment, the server's own env over it"


@pytest.mark.parametrize(("config", "names"), [
    ({}, "mcpServers"),
    ({"mcpServers": {"fs": FS}, "extra": 1}, "'extra'"),
    ({"mcpServers": {"fs": {"args": []}}}, "mcpServers.fs.type"),
    ({"mcpServers": {"fs": {"command": ""}}}, "mcpServers.fs.command"),
    ({"mcpServers": {"fs": {**FS, "args": "not a list"}}}, "mcpServers.fs.args"),
    ({"mcpServers": {"fs": {**FS, "url": "http://x"}}}, "mcpServers.fs.url"),
    ({"mcpServers": {"fs": {"type": "http", "url": "ftp://x"}}}, "mcpServers.fs.url"),
    ({"mcpServers": {"fs": {"type": "websocket", "url": "ws://x"}}}, "mcpServers.fs.type"),
    ({"mcpServers": {"fs": {**FS, "env": {"A": "${MISSING}"}}}}, "${MISSING}"),
    ({"mcpServers": {"fs": FS}, "ctxsieve": {"max_token": 5}}, "ctxsieve.max_token"),
    ({"mcpServers": {"fs": FS}, "ctxsieve": {"tool_search": "yes"}}, "ctxsieve.tool_search"),
    ({"mcpServers": {"fs": FS}, "ctxsieve": {"find_k": 0}}, "ctxsieve.find_k"),
    ({"mcpServers": {"fs": FS}, "ctxsieve": {"passthrough_tokens": 1.5}}, "ctxsieve.passthrough_tokens"),
    ({"mcpServers": {"fs": {**FS, "ctxsieve": {"notify_list_changed": "no"}}}}, "mcpServers.fs.ctxsieve"),
    ({"mcpServers": {"bad name": FS}}, "mcpServers.bad name"),
    ({"mcpServers": {"fs": FS}, "ctxsieve": {"inherit_env": "yes"}}, "ctxsieve.inherit_env"),
])
def test_a_bad_config_names_the_key(config: dict[str, object], names: str) -> None:
    with pytest.raises(ConfigError, match=__import__("re").escape(names)):
        parse_config(config, {})


def test_names_stay_as_spelled_unless_shared_or_the_gateways_own() -> None:
    names = exposed_names({"fs": ["read_file", "search"], "git": ["git_status", "read_file", "fetch_ref"]})
    assert names == {"search": ("fs", "search"), "git_status": ("git", "git_status"),
                     "fs__read_file": ("fs", "read_file"), "git__read_file": ("git", "read_file"),
                     "git__fetch_ref": ("git", "fetch_ref")}
    assert exposed_names({"b": ["x"], "a": ["x"]}) == exposed_names({"a": ["x"], "b": ["x"]})


def test_intent_comes_from_the_argument_then_a_query_like_one() -> None:
    assert intent_of({"path": "a", "intent": " the totals "}, own_intent=False) == ("the totals", {"path": "a"})
    assert intent_of({"pattern": "TODO", "path": "."}, own_intent=False) == ("TODO", {"pattern": "TODO", "path": "."})
    assert intent_of({"path": "a"}, own_intent=False) == (None, {"path": "a"})
    assert intent_of({"intent": "mine"}, own_intent=True) == ("mine", {"intent": "mine"}), "its own: forwarded"


def test_secrets_are_masked_and_other_words_kept() -> None:
    assert all(map(is_secret, ["api_key", "accessToken", "X-Auth-Token", "password", "Authorization", "gh_token"]))
    assert not any(map(is_secret, ["keyword", "tokens_used", "query", "path", "monkey"]))
    assert masked({"api_key": "k", "q": "x", "headers": {"Cookie": "c", "accept": "json"}}) == \
        {"api_key": "***", "q": "x", "headers": {"Cookie": "***", "accept": "json"}}


def test_a_listed_tool_gets_intent_and_loses_its_output_schema() -> None:
    definition = {"name": "read_text_file", "description": "Read", "outputSchema": {"type": "object"},
                  "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}, "required": ["path"]}}
    listed = as_listed(definition, "read_text_file")
    assert "outputSchema" not in listed and listed["inputSchema"]["required"] == ["path"]
    assert set(listed["inputSchema"]["properties"]) == {"path", "intent"}
    assert "intent" not in definition["inputSchema"]["properties"], "the upstream's definition is not changed"
    catalog = Catalog()
    catalog.update("fs", [definition])
    catalog.update("faults", [{"name": "read_text_file", "inputSchema": {"type": "object"}}])
    assert sorted(catalog.tools) == ["faults__read_text_file", "fs__read_text_file"]
    assert catalog.upstream_of("fs", "fs__read_text_file") == "read_text_file"
    assert [t["name"] for t in catalog.toolset("fs")] == ["fs__read_text_file"]


def test_a_session_past_the_remembered_ones_takes_its_client_and_its_finds_with_it() -> None:
    import asyncio

    from ctxsieve_client import AsyncClient
    from ctxsieve_client.gateway import server as gateway_server

    async def scenario() -> tuple[list[str | None], list[str | None], int]:
        gateway = gateway_server.Gateway(parse_config({"mcpServers": {"fs": FS}}, {}),
                                         lambda *_: AsyncClient("http://127.0.0.1:9"))
        first = gateway.client("s0")
        gateway.found["s0"] = {"read_file": "read the log"}
        for i in range(1, gateway_server.SESSION_CLIENTS + 1):
            gateway.client(f"s{i}")
            gateway.found[f"s{i}"] = {}
        await asyncio.sleep(0)  # the evicted client's close runs
        closed = first._http.is_closed
        await gateway.close()
        return list(gateway._clients)[:1], list(gateway.found)[:1], int(closed)

    kept, found, closed = asyncio.run(scenario())
    assert kept == ["s1"] and found == ["s1"] and closed == 1


def _starting_gateway(servers: dict[str, float], failed: tuple[str, ...] = ()) -> Any:
    """A gateway whose servers (name -> timeout_s) are all still being listed (a listing task that never ends), the
    `failed` ones after a failure (their retry in flight)."""
    import asyncio

    from ctxsieve_client import AsyncClient
    from ctxsieve_client.gateway import server as gateway_server

    config = {"mcpServers": {n: {**FS, "ctxsieve": {"timeout_s": t}} for n, t in servers.items()}}
    gateway = gateway_server.Gateway(parse_config(config, {}), lambda *_: AsyncClient("http://127.0.0.1:9"))
    for name in servers:
        gateway._listing[name] = asyncio.get_running_loop().create_task(asyncio.sleep(3600))
    gateway.failed.update({name: f"{name}: exited with 3" for name in failed})
    return gateway


async def _stopped(gateway: Any) -> None:
    for task in gateway._listing.values():
        task.cancel()
    await gateway.close()


def test_an_unknown_tool_waits_for_the_servers_starting_but_not_for_one_that_failed() -> None:
    """Each starting server is waited for up to its own timeout_s (0.3 s here); a failed one whose retry is in
    flight (timeout_s 600) is not waited for at all."""
    import asyncio
    import time

    async def scenario() -> tuple[object, float]:
        gateway = _starting_gateway({"slow": 0.3, "gone": 600}, failed=("gone",))
        started = time.monotonic()
        try:
            return await asyncio.wait_for(gateway.known("nowhere"), 20), time.monotonic() - started
        finally:
            await _stopped(gateway)

    found, waited = asyncio.run(scenario())
    assert found is None and 0.25 <= waited < 5, waited


def test_a_waiting_call_is_answered_as_soon_as_its_tool_is_listed() -> None:
    """The wait ends when the catalog learns the tool, not when the server's listing task ends (it never does here)."""
    import asyncio
    import time

    async def scenario() -> tuple[object, float]:
        gateway = _starting_gateway({"slow": 30})

        async def listed_later() -> None:
            await asyncio.sleep(0.2)
            await gateway.learn("slow", [{"name": "tick", "inputSchema": {"type": "object"}}])

        started = time.monotonic()
        later = asyncio.get_running_loop().create_task(listed_later())
        try:
            return await asyncio.wait_for(gateway.known("tick"), 20), time.monotonic() - started
        finally:
            await later
            await _stopped(gateway)

    found, waited = asyncio.run(scenario())
    assert found is not None and found.server == "slow" and waited < 5, waited
