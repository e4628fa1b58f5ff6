"""Hostile input from the OpenAPI document (schemathesis): every operation, no 5xx, responses as declared.

Runs against the real service on loopback, with the real model and store; a few cases per operation keep
it to a couple of minutes.
"""

from __future__ import annotations

import pytest
import schemathesis
from hypothesis import HealthCheck, settings

from tests.conftest import make_settings, serve_on_loopback


@pytest.fixture(scope="module")
def api_schema(tmp_path_factory: pytest.TempPathFactory):  # type: ignore[no-untyped-def]
    roots = tmp_path_factory.mktemp("fuzz-roots")
    (roots / "a.txt").write_text("hello from a file")
    url, stop = serve_on_loopback(make_settings(tmp_path_factory.mktemp("fuzz-data"), read_roots=str(roots),
                                                tavily_api_key="tvly-none", tavily_base_url="http://127.0.0.1:9",
                                                tavily_timeout=1))
    yield schemathesis.openapi.from_url(f"{url}/openapi.json")
    stop()


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_errors_and_valid_responses(case) -> None:  # type: ignore[no-untyped-def]
    response = case.call(timeout=60)
    # /v1/search reaches an upstream that refuses connections here: 502 is the honest answer, not a crash.
    if case.path == "/v1/search" and response.status_code == 502:
        return
    assert response.status_code < 500, f"{case.method} {case.path}: {response.status_code} {response.text[:500]}"
    case.validate_response(response)
