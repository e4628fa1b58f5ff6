"""An upstream written from the MCP conformance suite's server specification (its `test_*` tools, resources and
prompts), so the suite can be run against it directly and through `ctxsieve gateway --http`: every scenario
that passes directly must pass through the gateway.

Usage: python conformance_server.py            (stdio: behind the gateway)
       python conformance_server.py --http PORT (streamable HTTP at /mcp: the baseline)
"""

from __future__ import annotations

import asyncio
import base64
import json
import sys
from typing import Any

import mcp_types as mt
from fastmcp import Context, FastMCP
from fastmcp.exceptions import ToolError
from fastmcp.prompts.base import Message
from fastmcp.tools.base import Tool, ToolResult
from subscribing import track_subscriptions  # (run as a script: its folder is on sys.path)

PNG = base64.b64encode(base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==")).decode()
WAV = base64.b64encode(b"RIFF$\x00\x00\x00WAVEfmt \x10\x00\x00\x00\x01\x00\x01\x00@\x1f\x00\x00\x80>\x00\x00"
                       b"\x02\x00\x10\x00data\x00\x00\x00\x00").decode()
server = FastMCP("conformance-upstream")
track_subscriptions(server)


def text(value: str) -> mt.TextContent:
    return mt.TextContent(type="text", text=value)


@server.tool(description="Returns simple text")
def test_simple_text() -> ToolResult:
    return ToolResult(content=[text("This is a simple text response for testing.")])


@server.tool(description="Returns an image")
def test_image_content() -> ToolResult:
    return ToolResult(content=[mt.ImageContent(type="image", data=PNG, mime_type="image/png")])


@server.tool(description="Returns audio")
def test_audio_content() -> ToolResult:
    return ToolResult(content=[mt.AudioContent(type="audio", data=WAV, mime_type="audio/wav")])


def _resource(uri: str, mime: str, body: str) -> mt.EmbeddedResource:
    return mt.EmbeddedResource(type="resource", resource=mt.TextResourceContents(uri=uri, mime_type=mime, text=body))


@server.tool(description="Returns an embedded resource")
def test_embedded_resource() -> ToolResult:
    return ToolResult(content=[_resource("test://embedded-resource", "text/plain",
                                         "This is an embedded resource content.")])


@server.tool(description="Returns text, an image and a resource")
def test_multiple_content_types() -> ToolResult:
    return ToolResult(content=[text("Multiple content types test:"),
                               mt.ImageContent(type="image", data=PNG, mime_type="image/png"),
                               _resource("test://mixed-content-resource", "application/json",
                                         json.dumps({"test": "data", "value": 123}))])


@server.tool(description="Sends three log messages")
async def test_tool_with_logging(ctx: Context) -> str:
    for message in ("Tool execution started", "Tool processing data", "Tool execution completed"):
        await ctx.info(message)
        await asyncio.sleep(0.05)
    return "Tool with logging executed successfully"


@server.tool(description="Reports progress")
async def test_tool_with_progress(ctx: Context) -> str:
    for done in (0, 50, 100):
        await ctx.report_progress(done, 100)
        await asyncio.sleep(0.05)
    return "Tool with progress executed successfully"


@server.tool(description="Always fails")
def test_error_handling() -> str:
    raise ToolError("This tool intentionally returns an error for testing")


@server.tool(description="Asks the client's LLM")
async def test_sampling(prompt: str, ctx: Context) -> str:
    message = mt.SamplingMessage(role="user", content=text(prompt))
    answer = await ctx.session.create_message([message], max_tokens=100)
    return f"LLM response: {getattr(answer.content, 'text', answer.content)}"


@server.tool(description="Asks the user")
async def test_elicitation(message: str, ctx: Context) -> str:
    schema = {"type": "object", "properties": {"username": {"type": "string", "description": "User's response"},
                                               "email": {"type": "string", "description": "User's email address"}},
              "required": ["username", "email"]}
    result = await ctx.session.elicit_form(message, schema)  # the schema as the suite spells it
    return f"User response: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Elicitation with defaults")
async def test_elicitation_sep1034_defaults(ctx: Context) -> str:
    schema = {"type": "object", "properties": {
        "name": {"type": "string", "default": "John Doe"}, "age": {"type": "integer", "default": 30},
        "score": {"type": "number", "default": 95.5},
        "status": {"type": "string", "enum": ["active", "inactive", "pending"], "default": "active"},
        "verified": {"type": "boolean", "default": True}}}
    result = await ctx.session.elicit_form("Please review the defaults", schema)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


@server.tool(description="Elicitation with every enum form")
async def test_elicitation_sep1330_enums(ctx: Context) -> str:
    schema = {"type": "object", "properties": {
        "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
        "titledSingle": {"type": "string", "oneOf": [{"const": "value1", "title": "First Option"},
                                                      {"const": "value2", "title": "Second Option"},
                                                      {"const": "value3", "title": "Third Option"}]},
        "legacyEnum": {"type": "string", "enum": ["opt1", "opt2", "opt3"],
                       "enumNames": ["Option One", "Option Two", "Option Three"]},
        "untitledMulti": {"type": "array", "items": {"type": "string", "enum": ["option1", "option2", "option3"]}},
        "titledMulti": {"type": "array", "items": {"anyOf": [{"const": "value1", "title": "First Choice"},
                                                              {"const": "value2", "title": "Second Choice"},
                                                              {"const": "value3", "title": "Third Choice"}]}}}}
    result = await ctx.session.elicit_form("Please choose", schema)
    return f"Elicitation completed: action={result.action}, content={json.dumps(result.content)}"


class SchemaTool(Tool):
    async def run(self, arguments: dict[str, Any]) -> ToolResult:
        return ToolResult(content=[text(json.dumps(arguments))])


server.add_tool(SchemaTool(name="json_schema_2020_12_tool", description="Tool with JSON Schema 2020-12 features",
                           parameters={"$schema": "https://json-schema.org/draft/2020-12/schema", "type": "object",
                                       "$defs": {"address": {"type": "object", "properties": {
                                           "street": {"type": "string"}, "city": {"type": "string"}}}},
                                       "properties": {"name": {"type": "string"},
                                                      "address": {"$ref": "#/$defs/address"}},
                                       "additionalProperties": False}))


@server.resource("test://static-text", name="static-text", description="A static text resource",
                 mime_type="text/plain")
def static_text() -> str:
    return "This is the content of the static text resource."


@server.resource("test://static-binary", name="static-binary", description="A static binary resource",
                 mime_type="image/png")
def static_binary() -> bytes:
    return base64.b64decode(PNG)


@server.resource("test://watched-resource", name="watched-resource", description="A resource to subscribe to",
                 mime_type="text/plain")
def watched() -> str:
    return "watched"


@server.resource("test://template/{id}/data", name="template", description="A templated resource",
                 mime_type="application/json")
def template(id: str) -> str:  # noqa: A002 - the template's parameter
    return json.dumps({"id": id, "templateTest": True, "data": f"Data for ID: {id}"}, separators=(",", ":"))


@server.prompt(description="A simple prompt")
def test_simple_prompt() -> str:
    return "This is a simple prompt for testing."


@server.prompt(description="A prompt with arguments")
def test_prompt_with_arguments(arg1: str, arg2: str) -> str:
    return f"Prompt with arguments: arg1='{arg1}', arg2='{arg2}'"


@server.prompt(description="A prompt with an embedded resource")
def test_prompt_with_embedded_resource(resourceUri: str) -> list[Message]:  # noqa: N803 - the suite's name
    return [Message(role="user", content=_resource(resourceUri, "text/plain",
                                                   "Embedded resource content for testing.")),
            Message(role="user", content="Please process the embedded resource above.")]


@server.prompt(description="A prompt with an image")
def test_prompt_with_image() -> list[Message]:
    return [Message(role="user", content=mt.ImageContent(type="image", data=PNG, mime_type="image/png")),
            Message(role="user", content="Please analyze the image above.")]


@server.completion
def complete(ref: Any, argument: mt.CompletionArgument, context: Any) -> list[str]:
    return [v for v in ("paris", "park", "party") if v.startswith(argument.value)]



if __name__ == "__main__":
    if len(sys.argv) > 2 and sys.argv[1] == "--http":
        server.run("http", host="127.0.0.1", port=int(sys.argv[2]), path="/mcp", show_banner=False)
    else:
        server.run(show_banner=False)
