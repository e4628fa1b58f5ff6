"""The typed client checked against the server it talks to: every request field the server accepts can be sent
by the client's methods (and the client sends nothing the server refuses); every response field the server
serves has a typed place in the client's results. A field added on one side only fails here."""

from __future__ import annotations

import dataclasses
import inspect
import typing
from typing import Any

import pytest
from fastapi.testclient import TestClient

from ctxsieve_client import models
from ctxsieve_client.client import Requests
from ctxsieve_client.rendering import View

# operation id -> the request builders that send it
SENDERS = {
    "filter_output": ["filter"], "refilter_ref": ["refilter"], "get_ref": ["fetch_ref"], "search_web": ["search"],
    "read_file": ["read"], "put_toolset": ["register_toolset"], "select_tools": ["select_tools"],
    "tools_feedback": ["tools_feedback", "import_feedback"], "put_collection": ["create_collection"],
    "add_documents": ["add_documents"], "query_collection": ["query_collection"],
    "list_documents": ["list_documents"], "get_toolset": ["toolset"], "compact_context": ["compact"],
    "claude_code_hook": ["claude_code_hook"], "put_repo": ["index_repo"], "search_code": ["search_code"],
    "rank_files": ["rank_files"],
}
PATH_ARGUMENTS = {"ref", "name", "doc_id", "session_id", "payload"}  # and a body sent as it is (the hook's payload)
# server response model -> the client result that reads it
READERS: dict[str, type[Any]] = {
    "FilterResponse": models.FilterResult, "ReadResponse": models.FilterResult, "SnippetOut": models.Snippet,
    "CollectionSnippet": models.Snippet, "UsageOut": models.Usage, "MoreOut": models.More, "RerunOut": models.Rerun,
    "RefResponse": models.RefContent, "SourceOut": models.SourceCall, "SearchResponse": models.SearchResult,
    "SearchResultOut": models.SearchPage, "SelectResponse": models.Selection, "SelectedOut": models.Selected,
    "SelectUsage": models.ToolUsage, "ToolsetInfo": models.ToolsetInfo, "CollectionInfo": models.CollectionInfo,
    "DocumentsAdded": models.DocumentsAdded, "DocumentEntry": models.DocumentEntry,
    "DocumentList": models.DocumentPage, "CollectionQueryResponse": models.CollectionResult,
    "SessionResponse": models.SessionReport, "SessionRequest": models.SessionRead,
    "ToolsetDetail": models.ToolsetDetail, "CompactResponse": models.Compaction, "ClearedOut": models.Cleared,
    "CompactUsage": models.CompactUsage, "Tuned": models.Tuned, "MapLineOut": models.MapLine,
    "RepoInfo": models.RepoInfo, "RepoProgress": models.RepoProgress, "RepoList": models.RepoList,
    "CodeSearchResponse": models.CodeSearchResult, "CodeHit": models.CodeHit, "ViewOut": View,
    "VerdictOut": models.Verdict, "FailureOut": models.Failure,
    "FileRankResponse": models.FileOrder,
}


@pytest.fixture(scope="module")
def spec(stub_client: TestClient) -> dict[str, Any]:
    return dict(stub_client.get("/openapi.json").json())


def _operations(spec: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {op["operationId"]: op for ops in spec["paths"].values() for op in ops.values()}


def _server_fields(spec: dict[str, Any], op: dict[str, Any]) -> set[str]:
    fields = {p["name"] for p in op.get("parameters", []) if p["in"] == "query"}
    body = op.get("requestBody", {}).get("content", {}).get("application/json", {}).get("schema")
    if body is not None and "$ref" in body:  # (a body of any JSON, the hook's payload, has no fields of its own)
        fields |= set(spec["components"]["schemas"][body["$ref"].rsplit("/", 1)[-1]]["properties"])
    return fields


def _client_fields(builder: str) -> set[str]:
    method = getattr(Requests, builder)
    hints = typing.get_type_hints(method, include_extras=True)
    fields = set()
    for name, parameter in inspect.signature(method).parameters.items():
        if parameter.kind is inspect.Parameter.VAR_KEYWORD:
            (options,) = typing.get_args(hints[name])
            fields |= set(typing.get_type_hints(options))
        elif name not in PATH_ARGUMENTS:
            fields.add(name)
    return fields


def test_every_operation_with_fields_has_a_sender(spec: dict[str, Any]) -> None:
    with_fields = {name for name, op in _operations(spec).items() if _server_fields(spec, op)}
    assert with_fields == set(SENDERS), "a route with request fields that the typed client cannot send"


@pytest.mark.parametrize("operation", sorted(SENDERS))
def test_the_client_sends_exactly_the_fields_the_server_accepts(spec: dict[str, Any], operation: str) -> None:
    served = _server_fields(spec, _operations(spec)[operation])
    sent = set().union(*(_client_fields(builder) for builder in SENDERS[operation]))
    assert sorted(served - sent) == [], f"{operation}: the server accepts fields the client cannot send"
    assert sorted(sent - served) == [], f"{operation}: the client sends fields the server refuses"


def test_every_response_field_has_a_typed_place_in_the_client(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    missing = {name: sorted(set(schemas[name]["properties"]) - {f.name for f in dataclasses.fields(model)})
               for name, model in READERS.items()}
    assert {name: fields for name, fields in missing.items() if fields} == {}
    unread = {name for name, schema in schemas.items() if name.endswith(("Response", "Out")) and name not in READERS
              and "properties" in schema and name not in ("ErrorResponse", "ErrorBody")}
    assert unread <= {"Health", "Ready", "ToolsetList", "Deleted", "FeedbackResponse",
                      "SessionList", "SessionSummary", "CollectionList"}, "a response model no client result reads"


def test_the_client_reads_no_field_the_server_never_serves(spec: dict[str, Any]) -> None:
    schemas = spec["components"]["schemas"]
    served: dict[type[models.Model], set[str]] = {}
    for name, model in READERS.items():
        served.setdefault(model, set()).update(schemas[name]["properties"])
    stale = {model.__name__: sorted({f.name for f in dataclasses.fields(model)} - fields - {"extra"})
             for model, fields in served.items()}
    assert {name: fields for name, fields in stale.items() if fields} == {}
