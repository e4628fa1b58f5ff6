"""Source code through the API (the real model and store): the kind from the call's file name, chunks cut at
definitions, snippets with their true line numbers, lines A-B of a ref, and the request's named definition first."""

from __future__ import annotations

from fastapi.testclient import TestClient

MODULE = "".join(
    f'''

class Handler{i}:
    """Handles the requests of kind {i}."""

    retries = {i}

    def prepare(self, payload):
        cleaned = dict(payload)
        cleaned["kind"] = {i}
        return cleaned

    def dispatch(self, payload, timeout=30):
        for attempt in range(self.retries):
            result = self.send(payload, attempt=attempt, timeout=timeout)
            if result.ok:
                return result
        raise RuntimeError("handler {i} gave up after retries")
''' for i in range(40))
TEXT = "import logging\n\nlog = logging.getLogger(__name__)\n" + MODULE


def post(client: TestClient, **body: object) -> dict:  # type: ignore[type-arg]
    response = client.post("/v1/filter", json=body)
    assert response.status_code == 200, response.text
    return response.json()  # type: ignore[no-any-return]


def test_a_source_file_is_cut_at_definitions_with_true_line_numbers(client: TestClient) -> None:
    out = post(client, query="Handler17.dispatch gives up too early: `dispatch` ignores timeout", content=TEXT,
               source={"tool": "Read", "args": {"file_path": "/repo/app/handlers.py"}}, max_tokens=600)
    lines = TEXT.split("\n")
    assert out["snippets"], out
    for snippet in out["snippets"]:
        shown = "\n".join(lines[snippet["line_start"] - 1 : snippet["line_end"]])
        assert snippet["text"] == shown, "whole lines of the file, indentation included"
    assert len(out["snippets"]) > 5 and out["usage"]["output_tokens"] > 400, "k left out follows the budget"
    assert any(s["context"] == "class Handler17 > def dispatch" for s in out["snippets"]), "the named one is shown"
    shown = {n for s in out["snippets"] for n in range(s["line_start"], s["line_end"] + 1)}
    assert out["map"], "a map of the file's other definitions"
    for entry in out["map"]:
        assert entry["text"] == lines[entry["line"] - 1] and entry["line"] not in shown
        assert entry["text"].lstrip().startswith(("class ", "def "))
    ref = out["ref"]
    assert client.get(f"/v1/refs/{ref}").json()["content_type"] == "code"
    part = client.get(f"/v1/refs/{ref}", params={"lines": "5-9"}).json()
    assert part["text"] == "\n".join(lines[4:9]) and (part["line_start"], part["line_end"]) == (5, 9)
    assert client.get(f"/v1/refs/{ref}", params={"lines": "3"}).json()["text"] == lines[2]
    assert client.get(f"/v1/refs/{ref}", params={"lines": "9-5"}).status_code == 422
    assert client.get(f"/v1/refs/{ref}", params={"lines": "x"}).status_code == 422
    assert client.get(f"/v1/refs/{ref}", params={"lines": "1-2", "chunk": 0}).status_code == 400


def test_without_a_budget_code_gets_a_share_of_the_file(client: TestClient, tokenizer) -> None:
    out = post(client, query="where does a handler give up", content=TEXT,
               source={"tool": "Read", "args": {"file_path": "handlers.py"}}, k=50)
    budget = max(1500, min(tokenizer.count(TEXT) // 3, 6000))
    assert 0.8 * budget <= out["usage"]["output_tokens"] <= budget, out["usage"]
    left_out = post(client, query="where does a handler give up", content=TEXT,
                    source={"tool": "Read", "args": {"file_path": "handlers.py"}})
    assert left_out["usage"] == out["usage"], "k left out follows the budget: never 5 chunks of a source file"
    five = post(client, query="where does a handler give up", content=TEXT,
                source={"tool": "Read", "args": {"file_path": "handlers.py"}}, k=5)
    assert five["usage"]["chunks_returned"] <= 5, "a k the caller sets still bounds"


def test_prose_snippets_carry_line_numbers_too(client: TestClient) -> None:
    text = "\n\n".join(f"Paragraph {i} says the pump at station {i} moved {i * 7} litres." for i in range(300))
    out = post(client, query="how much did station 123 move", content=text, max_tokens=200)
    lines = text.split("\n")
    for snippet in out["snippets"]:
        assert snippet["text"] == "\n".join(lines[snippet["line_start"] - 1 : snippet["line_end"]]).strip()
