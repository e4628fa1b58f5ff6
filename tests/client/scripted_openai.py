"""A scripted OpenAI Responses API on loopback (the model is the outside service), for the Codex CLI: it streams
the real server-sent events, asks for the calls it is given one per turn (a function call with JSON arguments, or
a custom tool call with free text: Codex's `exec`, whose JavaScript reaches MCP tools as `tools.mcp__server__tool`),
and records every request so a test can read exactly what the model was sent after each tool ran."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse

from tests.client.scripted_anthropic import serve_on_loopback

Call = tuple[str, "dict[str, Any] | str"]
OUTPUTS = ("function_call_output", "custom_tool_call_output")


class ScriptedResponses:
    def __init__(self, calls: list[Call]) -> None:
        self.calls = calls
        self.requests: list[dict[str, Any]] = []
        self.app = FastAPI()
        self.app.post("/v1/responses")(self.responses)

    @staticmethod
    def outputs(body: dict[str, Any]) -> list[dict[str, Any]]:
        """The function calls' outputs the request carries, in order."""
        items = body.get("input") if isinstance(body.get("input"), list) else []
        return [i for i in items if isinstance(i, dict) and i.get("type") in OUTPUTS]

    @staticmethod
    def tool_names(body: dict[str, Any]) -> set[str]:
        """Every tool the request offers: in `tools`, or in an `additional_tools` input item, namespaces opened."""
        def walk(tools: Any) -> Iterator[str]:
            for tool in tools if isinstance(tools, list) else []:
                if isinstance(tool, dict):
                    yield str(tool.get("name", ""))
                    yield from walk(tool.get("tools"))
        items = body.get("input") if isinstance(body.get("input"), list) else []
        extra = [t for i in items if isinstance(i, dict) and i.get("type") == "additional_tools"
                 for t in i.get("tools", [])]
        return set(walk(body.get("tools"))) | set(walk(extra))

    def named(self, body: dict[str, Any], wanted: str) -> str | None:
        """The name the client gave the wanted tool (Codex prefixes an MCP tool with its server's name)."""
        return next((n for n in sorted(self.tool_names(body)) if n == wanted or n.endswith(wanted)), None)

    async def responses(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        done = len(self.outputs(body))
        name = self.named(body, self.calls[done][0]) if done < len(self.calls) else None
        arguments = self.calls[done][1] if name is not None else None
        if isinstance(arguments, str):
            item: dict[str, Any] = {"type": "custom_tool_call", "id": f"ctc_{done}", "call_id": f"call_{done}",
                                    "name": name, "input": arguments, "status": "completed"}
        elif arguments is not None:
            item = {"type": "function_call", "id": f"fc_{done}", "call_id": f"call_{done}", "name": name,
                    "arguments": json.dumps(arguments), "status": "completed"}
        else:
            item = {"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                    "content": [{"type": "output_text", "text": "Done.", "annotations": []}]}
        if not body.get("stream"):
            return JSONResponse(self._completed(body.get("model", "m"), item, done))
        return StreamingResponse(self._events(body.get("model", "m"), item, done), media_type="text/event-stream")

    @staticmethod
    def _completed(model: str, item: dict[str, Any], turn: int) -> dict[str, Any]:
        return {"id": f"resp_{turn}", "object": "response", "created_at": int(time.time()), "model": model,
                "status": "completed", "output": [item],
                "usage": {"input_tokens": 100, "input_tokens_details": {"cached_tokens": 0}, "output_tokens": 5,
                          "output_tokens_details": {"reasoning_tokens": 0}, "total_tokens": 105}}

    @staticmethod
    def _events(model: str, item: dict[str, Any], turn: int) -> Iterator[str]:
        response = {"id": f"resp_{turn}", "object": "response", "created_at": int(time.time()), "model": model,
                    "status": "in_progress", "output": []}
        events = [
            {"type": "response.created", "response": response},
            {"type": "response.output_item.added", "output_index": 0, "item": {**item, "status": "in_progress"}},
            {"type": "response.output_item.done", "output_index": 0, "item": item},
            {"type": "response.completed", "response": ScriptedResponses._completed(model, item, turn)},
        ]
        for number, event in enumerate(events):
            yield f"event: {event['type']}\ndata: {json.dumps({**event, 'sequence_number': number})}\n\n"

    def serve(self) -> tuple[str, uvicorn.Server]:
        url, server = serve_on_loopback(self.app)
        return f"{url}/v1", server


class ScriptedChat:
    """A scripted Chat Completions API: it answers "Done." (streamed as the real chunks when asked) and records each
    request, parsed and as its bytes arrived."""

    def __init__(self) -> None:
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []
        self.app = FastAPI()
        self.app.post("/v1/chat/completions")(self.completions)

    async def completions(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        self.raw.append(await request.body())
        message = {"role": "assistant", "content": "Done."}
        head = {"id": "chatcmpl-1", "created": int(time.time()), "model": body.get("model", "m")}
        usage = {"prompt_tokens": 100, "completion_tokens": 2, "total_tokens": 102}
        if not body.get("stream"):
            return JSONResponse({**head, "object": "chat.completion", "usage": usage, "choices": [
                {"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}]})
        chunks = [{"index": 0, "delta": {"role": "assistant", "content": ""}, "finish_reason": None},
                  {"index": 0, "delta": {"content": "Done."}, "finish_reason": None},
                  {"index": 0, "delta": {}, "finish_reason": "stop"}]
        events = [f"data: {json.dumps({**head, 'object': 'chat.completion.chunk', 'choices': [c]})}\n\n"
                  for c in chunks]
        return StreamingResponse(iter([*events, "data: [DONE]\n\n"]), media_type="text/event-stream")

    def serve(self) -> tuple[str, uvicorn.Server]:
        url, server = serve_on_loopback(self.app)
        return f"{url}/v1", server
