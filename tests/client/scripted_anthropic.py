"""A scripted Anthropic Messages API on loopback (the model is the outside service): it streams the real SSE
events, asks for the tool calls it is given one per turn (by default one `Read` of the file it is told), and
records every request so a test can read exactly what the model was sent after each tool ran."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse, StreamingResponse


class ScriptedModel:
    def __init__(self, read_path: str = "", calls: list[tuple[str, dict[str, Any]]] | None = None,
                 count: Callable[[str], int] | None = None) -> None:
        self.calls = calls if calls is not None else [("Read", {"file_path": read_path})]
        self.count = count  # counts a count_tokens request's messages (JSON) as a provider would; None: 100 each
        self.requests: list[dict[str, Any]] = []
        self.raw: list[bytes] = []  # each request's body as it arrived
        self.counted: list[dict[str, Any]] = []  # each count_tokens request
        self.app = FastAPI()
        self.app.post("/v1/messages")(self.messages)
        self.app.post("/v1/messages/count_tokens")(self.count_tokens)

    async def count_tokens(self, request: Request) -> JSONResponse:
        body = await request.json()
        self.counted.append(body)
        tokens = self.count(json.dumps(body.get("messages", []), ensure_ascii=False)) if self.count else 100
        return JSONResponse({"input_tokens": tokens})

    async def messages(self, request: Request) -> Any:
        body = await request.json()
        self.requests.append(body)
        self.raw.append(await request.body())
        names = {t.get("name") for t in body.get("tools", [])}
        answered = sum(isinstance(b, dict) and b.get("type") == "tool_result"
                       for m in body.get("messages", []) for b in (m.get("content") if isinstance(
                           m.get("content"), list) else []))
        offered = self.calls[answered][0] in names or "ToolSearch" in names if answered < len(self.calls) else False
        if offered:  # (a deferred tool is offered by ToolSearch, after it loaded it)
            name, arguments = self.calls[answered]
            block: dict[str, Any] = {"type": "tool_use", "id": f"toolu_{answered:02d}", "name": name, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(arguments)}
            stop = "tool_use"
        else:
            block, delta, stop = {"type": "text", "text": ""}, {"type": "text_delta", "text": "Done."}, "end_turn"
        if not body.get("stream"):
            content = [{**block, "input": arguments} if stop == "tool_use" else {"type": "text", "text": "Done."}]
            return JSONResponse({"id": "msg_01", "type": "message", "role": "assistant", "model": body["model"],
                                 "content": content, "stop_reason": stop, "stop_sequence": None,
                                 "usage": {"input_tokens": 100, "output_tokens": 5}})
        return StreamingResponse(self._events(body["model"], block, delta, stop), media_type="text/event-stream")

    @staticmethod
    def _events(model: str, block: dict[str, Any], delta: dict[str, Any], stop: str) -> Iterator[str]:
        events = [
            ("message_start", {"type": "message_start", "message": {
                "id": "msg_01", "type": "message", "role": "assistant", "model": model, "content": [],
                "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 100, "output_tokens": 1}}}),
            ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": block}),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            ("message_delta", {"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
                               "usage": {"output_tokens": 5}}),
            ("message_stop", {"type": "message_stop"}),
        ]
        for name, data in events:
            yield f"event: {name}\ndata: {json.dumps(data)}\n\n"

    def serve(self) -> tuple[str, uvicorn.Server]:
        return serve_on_loopback(self.app)


def serve_on_loopback(app: Any) -> tuple[str, uvicorn.Server]:
    """An ASGI app (a scripted API, a proxy) served in a thread on a free loopback port: its base URL and the server
    (to stop it)."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning"))
    threading.Thread(target=server.run, daemon=True).start()
    while not server.started:
        time.sleep(0.05)
    return f"http://127.0.0.1:{server.servers[0].sockets[0].getsockname()[1]}", server
