"""Hostile input from the OpenAPI document (schemathesis): every operation, no 5xx, responses as declared.

Runs against the real service on loopback, with the real model and store; a few cases per operation keep
it to a couple of minutes. (Driven by hand rather than through schemathesis' pytest plugin, whose fixture
loader does not work with this pytest.)
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from schemathesis.checks import content_type_conformance, not_a_server_error, response_schema_conformance

from tests.conftest import make_settings, serve_on_loopback

CASES_PER_OPERATION = 12


@pytest.fixture(scope="module")
def base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    roots: Path = tmp_path_factory.mktemp("fuzz-roots")
    (roots / "a.txt").write_text("hello from a file")
    url, stop = serve_on_loopback(make_settings(tmp_path_factory.mktemp("fuzz-data"), read_roots=str(roots),
                                                tavily_api_key="tvly-none", tavily_base_url="http://127.0.0.1:9",
                                                tavily_timeout=1))
    yield url
    stop()


def test_every_operation_survives_generated_input(base_url: str) -> None:
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json")
    operations = [result.ok() for result in schema.get_all_operations()]
    assert len(operations) >= 24
    failures: list[str] = []
    for operation in operations:

        @settings(max_examples=CASES_PER_OPERATION, deadline=None, suppress_health_check=list(HealthCheck),
                  database=None, derandomize=True)
        @given(case=operation.as_strategy())
        def check(case) -> None:  # type: ignore[no-untyped-def]
            response = case.call(base_url=base_url, timeout=60)
            # /v1/search reaches an upstream that refuses connections here: 502 is the honest answer.
            if case.path == "/v1/search" and response.status_code == 502:
                return
            if response.status_code >= 500:
                failures.append(f"{case.method} {case.path}: {response.status_code} {response.text[:300]}")
                return
            # Schema-valid but contradictory bodies (content and documents both absent, say) are refused with
            # 400 by design (API.md), so "positive data acceptance" is not among the checks.
            case.validate_response(response, checks=[not_a_server_error, response_schema_conformance,
                                                     content_type_conformance])

        check()
    assert not failures, "\n".join(failures)
