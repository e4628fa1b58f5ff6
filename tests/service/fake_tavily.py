"""A stand-in for Tavily's API on 127.0.0.1, speaking its wire format (what tavily-python sends and parses).

POST /search, JSON body, `Authorization: Bearer <key>`; 200 with {query, answer, images, results:
[{title, url, content, score, raw_content}], response_time, request_id}; errors as
{"detail": {"error": "..."}} with Tavily's status codes. Queries containing a marker misbehave on purpose.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

KEY = "tvly-test-key"


class FakeTavily:
    def __init__(self, pages: list[dict[str, str]]) -> None:
        self.pages = pages
        self.requests: list[dict[str, Any]] = []
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # noqa: N802 (http.server's naming)
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length", 0))))
                fake.requests.append({"path": self.path, "body": body, "auth": self.headers.get("Authorization")})
                status, payload = fake.answer(self.path, body, self.headers.get("Authorization"))
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> FakeTavily:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    def answer(self, path: str, body: dict[str, Any], auth: str | None) -> tuple[int, dict[str, Any]]:
        if path != "/search":
            return 404, {"detail": {"error": "Not Found"}}
        if auth != f"Bearer {KEY}":
            return 401, {"detail": {"error": "Unauthorized: missing or invalid API key."}}
        query = body["query"]
        if "ratelimit" in query:
            return 429, {"detail": {"error": "Your request has been blocked due to excessive requests."}}
        if "explode" in query:
            return 500, {"detail": {"error": "Internal error while searching (trace id 7f3a)."}}
        if "sleepy" in query:
            time.sleep(3)
        results = [
            {"title": p["title"], "url": p["url"], "content": p["text"][:200], "score": round(0.95 - 0.1 * i, 2),
             "raw_content": p["text"] if body.get("include_raw_content") else None}
            for i, p in enumerate(self.pages[: body.get("max_results", 5)])
        ]
        return 200, {"query": query, "follow_up_questions": None, "answer": None, "images": [], "results": results,
                     "response_time": 0.42, "request_id": "req-test"}
