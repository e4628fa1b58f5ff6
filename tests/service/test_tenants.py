"""Keys and tenants: every /v1 route needs a key; a tenant sees only its own refs, toolsets, collections
and sessions (another tenant's object answers 404); the same content under two tenants gets two refs."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from tests.conftest import make_settings, open_client, stub_models
from tests.service.test_api_repos import GREP_REQUEST, grep_cut, grep_tree

ACME = {"Authorization": "Bearer key-acme"}
GLOBEX = {"Authorization": "Bearer key-globex"}


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    keys = tmp_path_factory.mktemp("keys") / "keys.txt"
    keys.write_text("# one key per line\nkey-globex:globex\n")
    client = open_client(make_settings(tmp_path_factory.mktemp("tenant-data"), api_keys="key-acme:acme",
                                       api_keys_file=keys), stub_models())
    yield client
    client.__exit__(None, None, None)


def test_keys_are_required_on_v1_routes(keyed: TestClient) -> None:
    body = {"query": "q", "content": "x"}
    assert keyed.post("/v1/filter", json=body).status_code == 401
    wrong = keyed.post("/v1/filter", json=body, headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401 and wrong.json()["error"]["type"] == "unauthorized"
    assert keyed.post("/v1/filter", json=body, headers={"Authorization": "Basic a2V5"}).status_code == 401
    assert keyed.get("/v1/toolsets").status_code == 401 and keyed.get("/v1/collections").status_code == 401
    for open_route in ("/healthz", "/readyz", "/metrics"):
        assert keyed.get(open_route).status_code == 200


def test_tenants_never_see_each_others_objects(keyed: TestClient) -> None:
    body = {"query": "q", "content": "shared words in both tenants"}
    acme_ref = keyed.post("/v1/filter", json=body, headers={**ACME, "X-Session-Id": "s1"}).json()["ref"]
    globex_ref = keyed.post("/v1/filter", json=body, headers=GLOBEX).json()["ref"]
    assert acme_ref != globex_ref
    assert keyed.get(f"/v1/refs/{acme_ref}", headers=ACME).status_code == 200
    assert keyed.get(f"/v1/refs/{acme_ref}", headers=GLOBEX).status_code == 404
    assert keyed.post(f"/v1/refs/{acme_ref}/filter", json={"query": "q"}, headers=GLOBEX).status_code == 404

    keyed.put("/v1/toolsets/crm", json={"tools": [{"name": "refund", "description": "refund"}]}, headers=ACME)
    assert keyed.get("/v1/toolsets/crm", headers=GLOBEX).status_code == 404
    assert keyed.get("/v1/toolsets", headers=GLOBEX).json()["toolsets"] == []
    select = {"query": "refund", "toolsets": ["crm"]}
    assert keyed.post("/v1/tools/select", json=select, headers=GLOBEX).status_code == 404

    keyed.put("/v1/collections/kb", json={}, headers=ACME)
    assert keyed.get("/v1/collections/kb", headers=GLOBEX).status_code == 404
    assert keyed.post("/v1/collections/kb/documents", json={"documents": [{"id": "a", "text": "t"}]},
                      headers=GLOBEX).status_code == 404
    assert keyed.get("/v1/sessions/s1", headers=ACME).status_code == 200
    assert keyed.get("/v1/sessions/s1", headers=GLOBEX).status_code == 404


def test_keys_never_reach_the_logs(keyed: TestClient, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level("DEBUG"):
        keyed.post("/v1/filter", json={"query": "q", "content": "y"}, headers=ACME)
        keyed.post("/v1/filter", json={"query": "q", "content": "y"}, headers={"Authorization": "Bearer guess"})
    assert "key-acme" not in caplog.text and "guess" not in caplog.text


def test_bad_key_file_is_reported(tmp_path: Path) -> None:
    bad = tmp_path / "keys"
    bad.write_text("no-colon-here\n")
    with pytest.raises(ValueError, match="key:tenant"):
        make_settings(tmp_path, api_keys_file=bad).key_table()


def test_a_grep_is_cut_with_its_own_tenants_repository_only(tmp_path: Path) -> None:
    """Another tenant's indexed repository holding the same files tells nothing about this tenant's grep or list."""
    output = grep_tree(tmp_path / "tree")
    client = open_client(make_settings(tmp_path / "data", api_keys="key-acme:acme,key-globex:globex",
                                       read_roots=str(tmp_path / "tree")), stub_models())
    try:
        assert client.put("/v1/repos/tree", json={"path": str(tmp_path / "tree")}, headers=ACME).status_code == 202
        deadline = time.monotonic() + 120
        while client.get("/v1/repos/tree", headers=ACME).json()["state"] == "indexing":
            assert time.monotonic() < deadline, "indexed within 2 minutes"
            time.sleep(0.1)
        assert "mod_17.py" in grep_cut(client, output, ACME), "the owner's cut uses its repository"
        assert "mod_17.py" not in grep_cut(client, output, GLOBEX), "another tenant's does not"
        listed = {"query": GREP_REQUEST, "paths": [f"pkg/mod_{i:02}.py" for i in range(30)]}
        assert client.post("/v1/repos/rank-files", json=listed, headers=ACME).json()["repo"] == "tree"
        assert client.post("/v1/repos/rank-files", json=listed, headers=GLOBEX).json() == \
            {"repo": None, "paths": listed["paths"], "ranked": 0}, "nor orders another tenant's list of files"
    finally:
        client.__exit__(None, None, None)
