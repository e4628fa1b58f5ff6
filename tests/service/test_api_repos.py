"""Repositories (code search) through HTTP against the real app and store: ctxsieve's own repository found by plain
words and by names, and a small git repository edited, deleted from, renamed in, searched during an update, and
killed with SIGKILL mid-index."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from ctxsieve_client.code_search import render_hits
from ctxsieve_client.models import CodeSearchResult
from tests.conftest import make_settings, open_client, stub_models

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def roots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("repos")


@pytest.fixture(scope="module")
def repos(roots: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    settings = make_settings(tmp_path_factory.mktemp("repos-data"), read_roots=os.pathsep.join([str(REPO),
                                                                                                str(roots)]))
    client = open_client(settings, stub_models())
    yield client
    client.__exit__(None, None, None)


def indexed(client: TestClient, name: str, timeout: float = 120) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = client.get(f"/v1/repos/{name}").json()
        if info["state"] != "indexing":
            return info  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"{name} still indexing: {info}")


def found(client: TestClient, name: str, query: str, **options: object) -> list[tuple[str, str]]:
    """The definitions the query's words or names found (none when a ready repository answers with the nearest by
    meaning alone: those no word of the query found)."""
    answer = client.post(f"/v1/repos/{name}/search", json={"query": query, **options})
    assert answer.status_code == 200, answer.text
    body = answer.json()
    return [] if body["by_meaning"] else [(r["path"], r["name"]) for r in body["results"]]


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
                        "GIT_COMMITTER_EMAIL": "t@t"})


def committed(root: Path) -> None:
    """`root` made a git repository holding everything in it, in one commit."""
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "first")


def the_worker_goes_on(repos: TestClient, roots: Path, name: str) -> None:
    """A repository registered after `name`'s trouble is still indexed: the worker lives on."""
    after = roots / f"after-{name}"
    after.mkdir()
    (after / "next.py").write_text("def next_function():\n    pass\n")
    assert repos.put(f"/v1/repos/after-{name}", json={"path": str(after)}).status_code == 202
    assert indexed(repos, f"after-{name}", timeout=30)["files"] == 1, "the worker goes on"


def own(repos: TestClient) -> dict:  # type: ignore[type-arg]
    if repos.get("/v1/repos/ctxsieve").status_code == 404:
        assert repos.put("/v1/repos/ctxsieve", json={"path": str(REPO)}).status_code == 202
    return indexed(repos, "ctxsieve")


def test_own_repository_by_words_and_names(repos: TestClient) -> None:
    info = own(repos)
    assert info["files"] > 100 and info["definitions"] > 1000 and info["head"], info
    assert ("indexes/sieve.py", "Sieve._project") in found(repos, "ctxsieve", "Sieve._project", k=3)[:1]
    assert ("indexes/lexical.py", "Bm25Index") in found(repos, "ctxsieve", "Okapi BM25 with an inverted index", k=5)
    assert ("service/deps.py", "get_tenant") in found(repos, "ctxsieve", "which tenant does an API key belong to",
                                                      k=5)
    assert ("ingest/coderank/units.py", "units_of") in found(
        repos, "ctxsieve", "split a source file into its definitions and module code", k=5)
    assert found(repos, "ctxsieve", "Sieve", path="tests/**")[0][0].startswith("tests/")
    grep = list(dict.fromkeys(path for path, _ in found(repos, "ctxsieve", "how is a grep output cut")))[:5]
    assert "ingest/kinds/grep.py" in grep and not any(p.startswith("bench/") for p in grep), "the code, not its bench"
    for query, undefined in (("zebraquokkaNormalize", ["zebraquokkaNormalize"]), ("Sieve._project", []),
                             ("Bm25Index zebra_quokka", ["zebra_quokka"]), ("how is a grep output cut", []),
                             ("MODULE_FOCUS_LINES", [])):  # (a module's constant: declared, no definition's name)
        answer = repos.post("/v1/repos/ctxsieve/search", json={"query": query}).json()
        assert answer["undefined"] == undefined, (query, answer["undefined"])
    assert found(repos, "ctxsieve", "MODULE_FOCUS_LINES", k=1)[0][0] == "indexes/repos/memory.py"


def test_results_are_true_lines_within_the_budget(repos: TestClient, tokenizer) -> None:  # type: ignore[no-untyped-def]
    own(repos)
    body = repos.post("/v1/repos/ctxsieve/search", json={"query": "filter a source by its query and budget",
                                                         "k": 10, "max_tokens": 400}).json()
    assert body["usage"]["output_tokens"] <= 400 and body["results"]
    # the whole answer as the agent is shown it (head lines, numbered lines, the closing line) is the budget's: it
    # was the code alone, and an answer of 2,000 tokens reached the model as 3,082
    shown = render_hits(CodeSearchResult.from_json(body))
    assert tokenizer.count(shown) == body["usage"]["output_tokens"], shown
    for budget in (60, 150, 2000, 6000):
        wide = repos.post("/v1/repos/ctxsieve/search", json={"query": "filter a source by its query and budget",
                                                             "k": 50, "max_tokens": budget}).json()
        answer = render_hits(CodeSearchResult.from_json(wide))
        assert 0 < tokenizer.count(answer) == wide["usage"]["output_tokens"] <= budget, budget
    for result in body["results"]:
        lines = (REPO / result["path"]).read_text().split("\n")
        shown = result["text"].split("\n")
        assert lines[result["start_line"] - 1 : result["shown_end_line"]] == shown, result["name"]
        assert result["start_line"] <= result["shown_end_line"] <= result["end_line"]
    same = repos.post("/v1/repos/ctxsieve/search", json={"query": "filter a source by its query and budget",
                                                         "k": 10, "max_tokens": 400}).json()
    if same["state"] != body["state"]:  # the vectors were finished between the two (lexical, then ready): again
        body, same = same, repos.post("/v1/repos/ctxsieve/search", json={
            "query": "filter a source by its query and budget", "k": 10, "max_tokens": 400}).json()
    assert same["state"] == body["state"] and same["results"] == body["results"], "the same request, the same answer"


def test_a_definition_whose_first_line_fits_no_budget_is_shown_by_where_it_is(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A minified line longer than any budget: the answer said "none of which fits ... search with a larger
    max_tokens", which no budget up to 6,000 could follow; it names the lines to read instead."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import render_answer

    line = "function minified(a){" + "".join(f"var v{i}=a*{i};" for i in range(3000)) + "return a}"
    unit = next(u for u in units_of("dist/app.min.js", line + "\n") if u.name == "minified")
    shown = pack_hits([Hit(unit, 1.0)], tokenizer.count, 2000)
    assert len(shown) == 1 and shown[0].text == "" and shown[0].shown_end_line == unit.start_line - 1, shown
    answer = render_answer("app", shown, 1, "lexical")
    assert answer.startswith("dist/app.min.js:1-1 function minified\n⋮ lines 1-1 not shown: read dist/app.min.js"
                             ), answer
    assert "│" not in answer and tokenizer.count(answer) <= 2000, "no line shown as if it were empty"


def test_a_definition_whose_first_line_is_long_is_shown_and_so_are_the_hits_after_it(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """zod's `_ensureDefaultLocale` opens with a comment line of 385 characters (96 tokens, over a head's 80): it was
    shown with no line whatever the budget, and a listing of its file stopped there, saying the rest "did not fit in
    the token budget" at 181 tokens of 3,000."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import HEAD_TOKENS, pack_hits
    from ctxsieve.ingest.coderank.units import units_of

    comment = "// " + " ".join(f"the locale is set once, on first use, step {i}," for i in range(12))
    source = (f"{comment}\nexport function _ensureDefaultLocale(): void {{\n  config(en());\n}}\n\n"
              "export function after(): number {\n  return 1;\n}\n")
    units = [u for u in units_of("classic/schemas.ts", source) if u.kind == "function"]
    assert tokenizer.count(comment) > HEAD_TOKENS and units[0].text.startswith(comment), units
    shown = pack_hits([Hit(u, 1.0) for u in units], tokenizer.count, 2000)
    assert [r.name for r in shown] == ["_ensureDefaultLocale", "after"], shown
    assert shown[0].text.split("\n")[0] == comment and shown[0].whole, shown[0]


def test_a_definitions_last_lines_are_shown_where_saying_how_to_read_them_would_cost_as_much(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """leveldb's answers said "⋮ lines 1478-1478 not shown: read db/version_set.cc lines 1478-1478" of a `}` alone,
    with 46 tokens of the budget unused: at every budget, what is left out costs more than the line saying so."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import render_answer, rest_line

    body = "".join(f"  total += weigh(item_{i}, {i});\n" for i in range(30))
    text = f"int Total() {{\n  int total = 0;\n{body}  return total;\n}}\n"
    unit = next(u for u in units_of("db/version_set.cc", text) if u.name == "Total")
    whole_at = None
    for budget in range(200, 700, 7):
        shown = pack_hits([Hit(unit, 1.0)], tokenizer.count, budget)
        assert tokenizer.count(render_answer("leveldb", shown, 1, "lexical")) <= budget + 60, budget  # (+ its closing)
        result = shown[0]
        if result.whole:
            whole_at = whole_at or budget
            continue
        hidden = "".join(f"{result.shown_end_line + 1 + i}│{line}\n" for i, line in
                         enumerate(unit.text.split("\n")[result.shown_end_line - unit.start_line + 1:]))
        rest = rest_line(unit.path, result.shown_end_line + 1, unit.end_line)
        assert tokenizer.count(hidden) > tokenizer.count(rest + "\n\n"), (budget, rest)
    assert whole_at is not None


def test_a_cut_result_points_at_the_lines_not_shown_that_hold_the_request(repos: TestClient, roots: Path) -> None:
    """A user trial over aiohttp: "read aiohttp/client.py lines 293-1463" of a class cut after its first lines, the
    three lines about retries somewhere in the 1,170. The line saying what is not shown now names them: true lines of
    the file, holding the request's words (in the singular too, as a short search reads them), outside what is
    shown; not a comment's."""
    from ctxsieve_client.code_search import render_hits
    from ctxsieve_client.models import CodeSearchResult

    tree = roots / "session"
    tree.mkdir()
    filler = "".join(f"    def step_{i}(self, value):\n        return value + {i}\n\n" for i in range(60))
    source = ("class ClientSession:\n    \"\"\"Retries are configured here, says the docstring.\"\"\"\n\n"
              "    def __init__(self):\n        self._timeout = 5\n\n" + filler
              + "    def _request(self, method):\n        # the retry loop\n"
              "        retry_persistent_connection = self._retry_connection and method in SAFE\n"
              "        return retry_persistent_connection\n")
    (tree / "client.py").write_text(source)
    assert repos.put("/v1/repos/session", json={"path": str(tree)}).status_code == 202
    indexed(repos, "session")
    body = repos.post("/v1/repos/session/search", json={"query": "ClientSession retries", "max_tokens": 300,
                                                       "windows": True, "k": 1}).json()  # (`_request` no hit of its
    # own: lines another result shows are not pointed at)
    first = body["results"][0]
    assert first["name"] == "ClientSession" and first["shown_end_line"] < first["end_line"], first
    lines = source.split("\n")
    assert first["matched_lines"], first
    for line in first["matched_lines"]:
        assert not first["shown_start_line"] <= line <= first["shown_end_line"], (line, first)
        assert "retry" in lines[line - 1] and not lines[line - 1].lstrip().startswith("#"), lines[line - 1]
    assert body["usage"]["output_tokens"] <= 300, body["usage"]  # (the pointers within the budget too)
    said = render_hits(CodeSearchResult.from_json(body))
    at = ", ".join(map(str, first["matched_lines"]))
    assert f"not shown: read client.py lines {first['shown_end_line'] + 1}-{first['end_line']} (the request's words " \
           f"most at lines {at})" in said, said
    (tree / "router.py").write_text("def route(self):\n" + "".join(f"    router_{i} = self.router.get({i})\n"
                                                                  for i in range(80)) + "    return self\n")
    committed(tree)  # (a trial's `router.go:1012`: "the request's words most at lines 886", the path's word)
    assert repos.post("/v1/repos/session/sync").status_code in (200, 202)
    indexed(repos, "session")
    placed = repos.post("/v1/repos/session/search", json={"query": "router.py:70", "max_tokens": 200,
                                                         "windows": True, "k": 1}).json()["results"][0]
    assert placed["name"] == "route" and placed["shown_start_line"] > 2 and placed["matched_lines"] == [], placed


def test_the_lines_pointed_at_hold_the_words_by_their_stems_and_are_not_shown_elsewhere() -> None:
    """A review's cases: a short search's `body` is `bodi` as a stem, which no line holds, and its `retries` is in
    no line as written (`self._retry_connection` is); a class's rest holds its methods, whose lines another result
    of the answer shows, and those are not pointed at again."""
    from ctxsieve.indexes.repos.index import _matched_lines
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.indexes.repos.results import CodeResult
    from ctxsieve.ingest.coderank.query import read_code_query
    from ctxsieve.ingest.coderank.units import units_of

    source = ("class Session:\n    timeout = 5\n\n    def send(self, body):\n        data = copy(body)\n"
              "        return data\n\n    def again(self):\n        if self._retry_connection:\n"
              "            return self.send(None)\n")
    memory = RepoMemory()
    memory.put_file("session.py", "a", units_of("session.py", source))
    lines = source.split("\n")
    cut = CodeResult("session.py", "Session", "class", 1, 10, 1.0, "class Session:", 1, 10, 1)
    read = read_code_query("retries of a body")
    assert read.short
    assert _matched_lines(cut, lines, {1}, read, memory) == (4, 5, 9)
    assert _matched_lines(cut, lines, {1, 4, 5, 6}, read, memory) == (9,), "a line another result shows"
    assert memory.line_weights(read, "data = copy(body)", "session.py", stems=True)[0] > 0
    assert memory.line_weights(read, "data = copy(body)", "session.py")[0] > 0, "as written too"


def test_a_window_a_few_lines_below_its_def_line_reaches_it(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A user trial's pasted traceback over aiohttp: `_connect_and_send_request` was shown around the frame's line
    under "⋮ lines 232-234 not shown", line 234 its `async def`. With ten hits sharing the budget, each window now
    reaches its function's first lines when they cost no more than HEAD_MAX_TOKENS and the budget has room."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import render_answer

    body = "".join(f"    step_{i} = await conn.send(request, part={i})\n" for i in range(40))
    source = ("class Client:\n    async def _connect_and_send_request(self, request):\n"
              "        conn = await self._connect(request)\n" + body.replace("    step", "        step")
              + "        return conn\n")
    long = "".join(f"    total += weigh(item_{i}, {i})\n" for i in range(120))
    first = next(u for u in units_of("aiohttp/helpers.py", f"def weigh_all(items):\n    total = 0\n{long}"
                                     "    return total\n") if u.kind == "function")
    method = next(u for u in units_of("aiohttp/client.py", source) if u.kind == "method")
    hits = [Hit(first, 2.0), Hit(method, 1.0, focus=method.start_line + 4)]  # (the first grows into what is left)
    shown = pack_hits(hits, tokenizer.count, 600, windows=True)
    answer = render_answer("aio", shown, 2, "lexical")
    assert shown[1].shown_start_line == method.start_line, answer
    assert "2│    async def _connect_and_send_request(self, request):" in answer and "6│" in answer, answer
    closing = tokenizer.count("\n\n" + answer.rsplit("\n\n", 1)[1])
    assert "⋮ lines 2-" not in answer and tokenizer.count(answer) <= 600 + closing, answer


def test_a_window_below_a_long_doc_reaches_its_header_line(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A trial's Java trace into gson's `Gson.fromJson` (ten overloads of the name) showed lines 1088- around the
    frame's, under "lines 1051-1087 not shown": its signature, line 1087 below a 36-line Javadoc, nowhere, so no
    overload could be told from another. The window now starts at its header line; the doc above is said not shown."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import render_answer

    doc = "".join(f"   * Reads the value of part {i} of the document, as its policy says.\n" for i in range(36))
    body = "".join(f"    Object part{i} = reader.read({i});\n" for i in range(20))
    source = (f"class Gson {{\n  /**\n{doc}   */\n  public <T> T fromJson(JsonReader reader, TypeToken<T> typeOfT) {{\n"
              f"{body}    return null;\n  }}\n}}\n")
    method = next(u for u in units_of("gson/Gson.java", source) if u.kind == "method")
    header = method.start_line + 38
    assert source.split("\n")[header - 1].strip().startswith("public <T> T fromJson("), header
    long = "".join(f"    total += weigh(item_{i}, {i});\n" for i in range(120))
    first = next(u for u in units_of("gson/Weights.java", f"class Weights {{\n  int weighAll() {{\n{long}"
                                     "    return total;\n  }\n}\n") if u.kind == "method")
    hits = [Hit(first, 2.0), Hit(method, 1.0, focus=header + 12)]  # (the first grows into what is left)
    shown = pack_hits(hits, tokenizer.count, 600, windows=True)
    answer = render_answer("gson", shown, 2, "lexical")
    assert header - 2 <= shown[1].shown_start_line <= header, answer  # (grown a line above it, room left)
    assert f"{header}│  public <T> T fromJson(" in answer and f"{header + 12}│" in answer, answer
    assert f"⋮ lines {method.start_line}-{shown[1].shown_start_line - 1} not shown" in answer, answer


def test_a_definitions_later_part_is_shown_under_the_definitions_span(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """zod's `_parse` holds an inner function; its code after it (`return fn;`) was shown as `parse.ts:36-37 function
    _parse`, as if that were the whole function. A client that numbers text from `shown_start_line` now gets the
    definition's span with the lines above said not shown; an older one, the part's own lines as before."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import render_answer

    source = ("export const _parse = (schema) => {\n  const fn = (value) => {\n    return schema.run(value);\n  };\n"
              "  return fn;\n};\n")
    later = next(u for u in units_of("core/parse.ts", source) if u.rest)
    assert (later.name, later.start_line, later.end_line, later.definition_start) == ("_parse", 5, 6, 1), later
    shown = pack_hits([Hit(later, 1.0)], tokenizer.count, 2000, windows=True)
    assert (shown[0].start_line, shown[0].end_line, shown[0].shown_start_line) == (1, 6, 5), shown
    answer = render_answer("zod", shown, 1, "lexical")
    assert answer.startswith("core/parse.ts:1-6 function _parse\n⋮ lines 1-4 not shown: read core/parse.ts lines 1-4\n"
                             "5│  return fn;\n6│};"), answer
    old = pack_hits([Hit(later, 1.0)], tokenizer.count, 2000)
    assert (old[0].start_line, old[0].shown_start_line, old[0].text) == (5, 5, "  return fn;\n};"), old


def test_edit_delete_rename_and_head(repos: TestClient, roots: Path) -> None:
    root = roots / "small"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "billing.py").write_text("def compute_invoice_total(items):\n    return sum(items)\n")
    (root / "pkg" / "shipping.py").write_text("class Parcel:\n    def weigh_parcel(self):\n        return 1\n")
    (root / "build").mkdir()
    (root / "build" / "generated.py").write_text("def generated_helper():\n    pass\n")
    (root / "pkg" / "blob.py").write_bytes(b"\x00\x01def binary_thing(): pass\n")
    (root / "pkg" / "huge.py").write_text("x = 1\n" * 200_000)
    (root / "docs" / "scripts").mkdir(parents=True)  # Dokka's bundle: 340,000-character lines
    bundle = "".join(f"function f{i}(a){{return a+{i}}};" for i in range(3000))
    (root / "docs" / "scripts" / "main.js").write_text(bundle)
    (root / "docs" / "scripts" / "theme.min.js").write_text("function minifiedTheme(a) {\n  return a;\n}\n")
    columns = "".join(f"\n\ndef column_{i}():\n    return DATA[{i}]\n" for i in range(40))
    (root / "pkg" / "table.py").write_text("DATA = '" + "0" * 30_000 + "'\n\n\ndef read_table():\n    return DATA\n"
                                          + columns)
    (root / ".gitignore").write_text("ignored.py\n")
    (root / "ignored.py").write_text("def ignored_function():\n    pass\n")
    committed(root)
    assert repos.put("/v1/repos/small", json={"path": str(root)}).status_code == 202
    info = indexed(repos, "small")
    assert info["files"] == 3 and info["skipped"] == {"binary": 1, "huge": 1, "minified": 2, "folder": 1}, info
    assert info["skipped_paths"] == {"binary": ["pkg/blob.py"], "huge": ["pkg/huge.py"], "minified": [
        "docs/scripts/main.js", "docs/scripts/theme.min.js"], "folder": ["build/generated.py"]}, "which, not how many"
    # (a trial's fastify: `index` said "skipped: none", its tracked build/ scripts left out unsaid)
    assert found(repos, "small", "read_table")[0] == ("pkg/table.py", "read_table"), "a long line of data is no bundle"
    assert found(repos, "small", "compute_invoice_total")[0] == ("pkg/billing.py", "compute_invoice_total")
    assert found(repos, "small", "weigh_parcel")[0] == ("pkg/shipping.py", "Parcel.weigh_parcel")
    assert not found(repos, "small", "ignored_function generated_helper")

    (root / "pkg" / "billing.py").write_text("def compute_invoice_total(items, tax):\n    return sum(items) * tax\n"
                                             "\n\ndef refund_invoice(invoice):\n    return -invoice\n")
    (root / "pkg" / "shipping.py").rename(root / "pkg" / "delivery.py")
    git(root, "add", "-A")
    git(root, "commit", "-qm", "second")
    assert repos.post("/v1/repos/small/sync").status_code == 202
    info = indexed(repos, "small")
    assert found(repos, "small", "refund_invoice")[0] == ("pkg/billing.py", "refund_invoice")
    assert found(repos, "small", "weigh_parcel")[0] == ("pkg/delivery.py", "Parcel.weigh_parcel")
    assert all(path != "pkg/shipping.py" for path, _ in found(repos, "small", "weigh_parcel Parcel"))
    (root / "pkg" / "billing.py").unlink()
    repos.post("/v1/repos/small/sync")
    info = indexed(repos, "small")
    assert info["files"] == 2 and not found(repos, "small", "refund_invoice compute_invoice_total")
    assert len(info["head"]) == 40
    assert any(r["name"] == "small" for r in repos.get("/v1/repos").json()["repos"])
    assert repos.delete("/v1/repos/small").status_code == 200
    assert repos.get("/v1/repos/small").status_code == 404


def test_a_search_naming_the_folder_sees_the_agents_own_edit(repos: TestClient, roots: Path) -> None:
    """An agent's search_code sends its folder: a search after it edited a file shows the lines as they are now
    (an index of the file as it was would show false line numbers)."""
    root = roots / "edited"
    root.mkdir()
    source = root / "billing.py"
    source.write_text("def compute_invoice_total(items):\n    return sum(items)\n")

    def first_hit() -> dict:  # type: ignore[type-arg]
        body = {"query": "compute_invoice_total", "folder": str(root)}
        return repos.post("/v1/repos/edited/search", json=body).json()["results"][0]  # type: ignore[no-any-return]

    assert first_hit()["start_line"] == 1
    source.write_text("import math\n\n\n" + source.read_text())
    hit = first_hit()
    assert (hit["start_line"], hit["end_line"]) == (4, 5), hit
    assert hit["text"].split("\n") == source.read_text().split("\n")[3:5]


def test_a_search_naming_the_repository_shows_a_file_edited_since_as_it_is_now(repos: TestClient, roots: Path
                                                                                ) -> None:
    """`ctxsieve search --repo NAME` sends no folder: a hit whose file was edited since the last index is brought up
    to date before the answer (it showed the lines as they were indexed, three lines off, with no warning)."""
    root = roots / "named"
    root.mkdir()
    source = root / "billing.py"
    source.write_text("def compute_invoice_total(items):\n    return sum(items)\n")
    assert repos.put("/v1/repos/named", json={"path": str(root)}).status_code == 202
    indexed(repos, "named")
    source.write_text("import math\n\n\n" + source.read_text())
    hit = repos.post("/v1/repos/named/search", json={"query": "compute_invoice_total"}).json()["results"][0]
    assert (hit["start_line"], hit["end_line"]) == (4, 5), hit
    assert hit["text"].split("\n") == source.read_text().split("\n")[3:5]


GREP_REQUEST = "the retry backoff delay doubles too fast after a failed attempt"


def grep_tree(root: Path, files: int = 30, about: int = 17, note: str = "", lines: int = 6) -> str:
    """`files` files whose `lines` `timeout` lines read alike (each ending in `note`, a comment that makes them
    longer); only pkg/mod_<about>.py's code is about what the request asks. Returns `grep -rn timeout .` over the
    lines that set them."""
    width = 3 if files > 100 else 2
    for i in range(files):
        own = ('\n\ndef backoff_delay(attempt):\n    """Double the retry delay after each failed attempt."""\n'
               '    return RETRY_DELAY * 2 ** attempt\n') if i == about else f"\n\ndef unrelated_{i}():\n    pass\n"
        (root / "pkg").mkdir(parents=True, exist_ok=True)
        assignments = "".join(f"    timeout_{n} = settings.timeout * {n}{note}\n" for n in range(lines))
        (root / "pkg" / f"mod_{i:0{width}}.py").write_text(
            "def connect(settings):\n" + assignments + "    return timeout_0\n" + own)
    return "\n".join(f"./pkg/mod_{i:0{width}}.py:{n + 2}:    timeout_{n} = settings.timeout * {n}{note}"
                     for i in range(files) for n in range(lines))


def grep_cut(client: TestClient, output: str, headers: dict[str, str] | None = None, cwd: Path | None = None) -> str:
    source = {"tool": "Bash", "args": {"command": "grep -rn timeout ."}, **({"cwd": str(cwd)} if cwd else {})}
    body = {"query": GREP_REQUEST, "content": output, "max_tokens": 300, "source": source}
    answer = client.post("/v1/filter", json=body, headers=headers)
    assert answer.status_code == 200, answer.text
    return "\n".join(s["text"] for s in answer.json()["snippets"])


def test_a_grep_over_an_indexed_repository_shows_the_files_its_search_ranks_first(repos: TestClient, roots: Path
                                                                                   ) -> None:
    """A grep's lines say nothing of what the request asks; the repository's definitions do: once it is indexed,
    the cut shows the lines of the file its search puts first, whether the output names files relatively or, as
    Claude Code's Grep does, absolutely."""
    root = roots / "grepped"
    output = grep_tree(root)
    assert "mod_17.py" not in grep_cut(repos, output), "fixture: without the repository, its lines are cut"
    repos.put("/v1/repos/grepped", json={"path": str(root)})
    indexed(repos, "grepped")
    shown = grep_cut(repos, output)
    assert "./pkg/mod_17.py:2:    timeout_0 = settings.timeout * 0" in shown.split("\n"), shown
    absolute = grep_cut(repos, output.replace("./pkg/", f"{root}/pkg/"))
    assert f"{root}/pkg/mod_17.py:2:" in absolute
    elsewhere = grep_cut(repos, output.replace("./pkg/", "./other/"))  # files no indexed repository holds
    assert "mod_17.py" not in elsewhere
    link = roots / "grepped-link"
    link.symlink_to(root)  # the folder as the agent's shell may name it: through a symlink
    assert f"{link}/pkg/mod_17.py:2:" in grep_cut(repos, output.replace("./pkg/", f"{link}/pkg/"))
    below = output.replace("./pkg/", "./")  # run in pkg/: its paths are relative to the folder the tool ran in
    assert "./mod_17.py:2:" not in grep_cut(repos, below), "without the folder, no repository holds ./mod_17.py"
    assert "./mod_17.py:2:    timeout_0 = settings.timeout * 0" in grep_cut(repos, below, cwd=root / "pkg")
    refused = repos.post("/v1/filter", json={"content": below, "source": {"tool": "Bash", "cwd": "pkg"}})
    assert refused.status_code == 422 and "absolute" in refused.text
    windows = repos.post("/v1/filter", json={"query": GREP_REQUEST, "content": below, "max_tokens": 300,
                                             "source": {"tool": "Grep", "cwd": "C:\\work\\pkg"}})
    assert windows.status_code == 200, "a Windows client's folder: accepted, and no repository here holds it"


def test_a_grep_over_a_folder_indexed_inside_an_indexed_repository_is_ranked_by_the_innermost(
        repos: TestClient, roots: Path) -> None:
    """`ctxsieve index pkg` beside the repository around it (indexed by an agent's search_code): both hold the grep's
    files, and the folder indexed inside the other ranks them, not neither."""
    root = roots / "nested"
    output = grep_tree(root)
    for name, folder in (("nest-outer", root), ("nest-inner", root / "pkg")):
        repos.put(f"/v1/repos/{name}", json={"path": str(folder)})
        indexed(repos, name)
    below = output.replace("./pkg/", "./")
    assert "./mod_17.py:2:    timeout_0 = settings.timeout * 0" in grep_cut(repos, below, cwd=root / "pkg")
    assert f"{root}/pkg/mod_17.py:2:" in grep_cut(repos, output.replace("./pkg/", f"{root}/pkg/"))
    index = repos.app.state.engine.engine.repos
    held = index._holding("default", [f"{root}/pkg/mod_0{i}.py" for i in range(5)])
    assert held is not None and held[0].head.name == "nest-inner"


def test_a_list_of_files_is_ordered_by_the_repository_holding_them(repos: TestClient, roots: Path) -> None:
    """A Glob's or a grep's file list (as Claude Code's tools give it: relative to the folder they ran in) comes back
    with the file the request is about first, every path kept; unchanged where no repository holds the files."""
    root = roots / "listed"
    grep_tree(root)
    repos.put("/v1/repos/listed", json={"path": str(root)})
    indexed(repos, "listed")
    listed = [f"mod_{i:02}.py" for i in range(30)] + ["notes.txt", "mod_05.py"]  # one unknown, one twice
    answer = repos.post("/v1/repos/rank-files", json={"query": GREP_REQUEST, "paths": listed,
                                                       "base": str(root / "pkg")})
    assert answer.status_code == 200, answer.text
    order = answer.json()
    assert order["repo"] == "listed" and order["paths"][0] == "mod_17.py", order
    assert order["ranked"] == 1, "only its file matches the request's words"
    assert order["paths"][1:] == [p for p in listed if p != "mod_17.py"], "the rest keep their order, every path kept"
    elsewhere = repos.post("/v1/repos/rank-files", json={"query": GREP_REQUEST, "paths": listed,
                                                          "base": str(roots / "nowhere")}).json()
    assert elsewhere == {"repo": None, "paths": listed, "ranked": 0}
    again = repos.post("/v1/repos/rank-files", json={"query": GREP_REQUEST, "paths": listed,
                                                      "base": str(root / "pkg")})
    assert again.content == answer.content, "the same request, the same bytes"
    doubled = repos.post("/v1/repos/rank-files", json={"query": GREP_REQUEST, "paths": listed[:1] * 5 + listed,
                                                        "base": str(root / "pkg")}).json()
    assert doubled["repo"] == "listed" and doubled["paths"][0] == "mod_17.py", "a path listed twice is one file"
    windows = repos.post("/v1/repos/rank-files", json={"query": GREP_REQUEST, "paths": listed, "base": "C:\\work\\pkg"})
    assert windows.json() == {"repo": None, "paths": listed, "ranked": 0}, "a client on Windows: no repository here"
    for bad in ({"query": GREP_REQUEST, "paths": []}, {"query": GREP_REQUEST, "paths": ["a.py"], "base": "pkg"},
                {"paths": ["a.py"]}, {"query": GREP_REQUEST, "paths": ["/a\u0000b.py"]},
                {"query": GREP_REQUEST, "paths": ["a.py"], "base": "/work\u0000"}):
        refused = repos.post("/v1/repos/rank-files", json=bad)
        assert refused.status_code == 422 and refused.json()["error"]["type"] == "invalid_field", refused.text


def test_a_list_of_files_edited_since_the_last_sync_brings_the_index_up_to_date(repos: TestClient, roots: Path
                                                                                ) -> None:
    """A grep's or a Glob's files are ranked as last indexed; one of them changed since (the agent moved the code the
    request is about) queues a sync, after which the next list is ranked as the files are now. An unchanged list
    queues none."""
    root = roots / "moved"
    grep_tree(root)
    repos.put("/v1/repos/moved", json={"path": str(root)})
    indexed(repos, "moved")
    index = repos.app.state.engine.engine.repos
    listed = [f"mod_{i:02}.py" for i in range(30)]

    def first() -> str:
        answer = repos.post("/v1/repos/rank-files", json={"query": GREP_REQUEST, "paths": listed,
                                                           "base": str(root / "pkg")})
        assert answer.status_code == 200, answer.text
        return str(answer.json()["paths"][0])

    synced = index._repos[("default", "moved")].requested
    assert first() == "mod_17.py" and first() == "mod_17.py"
    assert index._repos[("default", "moved")].requested == synced, "nothing changed: no sync"
    about = (root / "pkg" / "mod_17.py").read_text()
    code = about[about.index("\n\ndef backoff_delay"):]
    (root / "pkg" / "mod_17.py").write_text(about.replace(code, "\n\ndef unrelated_17():\n    pass\n"))
    (root / "pkg" / "mod_05.py").write_text((root / "pkg" / "mod_05.py").read_text() + code)
    deadline = time.monotonic() + 60
    while first() != "mod_05.py":
        assert time.monotonic() < deadline, "the list's sync brought the index up to date"
        time.sleep(0.1)


def test_a_file_the_sync_cannot_read_keeps_its_last_state_and_queues_no_catch_up(
        repos: TestClient, roots: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An indexed file that became unreadable (chmod 000 for a user other than root) is counted as skipped and
    searched as last read; a grep listing it does not queue a sync once the sync has looked at it (before, its stat
    was never recorded, so every list naming it queued one)."""
    from ctxsieve.indexes.repos import index as module

    root = roots / "locked"
    grep_tree(root, files=4, about=2)
    repos.put("/v1/repos/locked", json={"path": str(root)})
    indexed(repos, "locked")
    locked = root / "pkg" / "mod_02.py"
    real = module.read_source

    def denied(folder: Path, name: str) -> object:
        if name == "pkg/mod_02.py":
            raise PermissionError(13, "Permission denied", str(folder / name))
        return real(folder, name)

    monkeypatch.setattr(module, "read_source", denied)
    locked.write_text(locked.read_text() + "\n# touched\n")
    assert repos.post("/v1/repos/locked/sync").status_code in (200, 202)
    info = indexed(repos, "locked")
    deadline = time.monotonic() + 30
    while info["skipped"].get("unreadable") != 1:
        assert time.monotonic() < deadline, info
        time.sleep(0.1)
        info = repos.get("/v1/repos/locked").json()
    assert ("pkg/mod_02.py", "backoff_delay") in found(repos, "locked", "backoff_delay retry delay")
    held = repos.app.state.engine.engine.repos._repos[("default", "locked")]
    assert not module.RepoIndex._edited_since(held, ["pkg/mod_02.py", "pkg/mod_01.py"])
    monkeypatch.undo()  # readable again (a chmod back: neither its mtime nor its size changes): the next sync reads it
    locked.write_text(locked.read_text().replace("# touched", "# zqxjvkw"))  # the same size
    os.utime(locked, ns=(held.stats["pkg/mod_02.py"][0],) * 2)
    assert repos.post("/v1/repos/locked/sync").status_code in (200, 202)
    deadline = time.monotonic() + 30
    while "pkg/mod_02.py" not in [path for path, _ in found(repos, "locked", "zqxjvkw", k=3)]:
        assert time.monotonic() < deadline, "the file unreadable before is read again"
        time.sleep(0.1)
    assert not repos.get("/v1/repos/locked").json()["skipped"].get("unreadable")


LEDGER_REQUEST = "the ledger totals drift: each ledger line is off once a batch is reconciled"


def ledger_tree(root: Path) -> str:
    """pkg/ledger.py, whose step_7 is about the ledger (a word every step of the file writes, and no other file)
    and step_3 about reconciling (a word forty other files write too): the file alone puts step_3 first, the
    repository's statistics step_7. Returns the file's text."""
    steps = []
    for i in range(24):
        note = {7: "ledger ledger ledger ledger, reconciled", 3: "reconciled, reconciled batch"}.get(i, "ledger")
        steps.append(f"def step_{i}(batch):\n    total = ledger_total(batch)  # {note}\n"
                     + "".join(f"    x_{n} = compute_{n}(batch, {n})\n" for n in range(12)) + "    return total\n")
    text = "\n\n".join(steps)
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "ledger.py").write_text(text)
    for j in range(40):
        other = f"def other_{j}(batch):\n    return reconciled(batch)  # reconciled\n"
        (root / "pkg" / f"other_{j}.py").write_text(other, encoding="utf-8")
    return text


def read_cut(client: TestClient, path: Path, text: str, offset: int | None = None) -> list[int]:
    args = {"file_path": str(path), **({"offset": offset} if offset else {})}
    body = {"query": LEDGER_REQUEST, "content": text, "max_tokens": 250, "source": {"tool": "Read", "args": args}}
    answer = client.post("/v1/filter", json=body)
    assert answer.status_code == 200, answer.text
    return [s["line_start"] + _blank_lines_above(s["text"]) for s in answer.json()["snippets"]]


def _blank_lines_above(text: str) -> int:
    """The blank lines a code snippet is shown with above its first line of code."""
    lines = text.split("\n")
    return next((i for i, line in enumerate(lines) if line.strip()), len(lines))


def test_a_read_of_an_indexed_file_is_cut_with_the_repositorys_ranking_of_its_definitions(repos: TestClient,
                                                                                           roots: Path) -> None:
    """A file read whole (as Claude Code's Read names it: absolute) from an indexed repository: its definitions
    count as the repository's search of the request ranks them, so the cut shows the one its statistics put first;
    a read that shows its definitions otherwise than indexed (edited since) gets nothing from it; a window read with
    its offset is ranked as the whole file would be."""
    root = roots / "ledgers"
    text = ledger_tree(root)
    path = root / "pkg" / "ledger.py"
    step = {i: text.split("\n").index(f"def step_{i}(batch):") + 1 for i in (3, 7)}
    assert read_cut(repos, path, text) == [step[3]], "fixture: the file alone puts step_3 first"
    repos.put("/v1/repos/ledgers", json={"path": str(root)})
    indexed(repos, "ledgers")
    assert read_cut(repos, path, text) == [step[7]]
    # the agent edits the file (a line added above step_5) and reads it again: cut on its own words at once, and the
    # read queues the sync after which the file's reads are ranked by the repository again
    moved = text.replace("def step_5(batch):", "# spacer\ndef step_5(batch):")
    path.write_text(moved, encoding="utf-8")
    assert read_cut(repos, path, moved) == [step[3]], "what the index ranked is not what the read shows"
    deadline = time.monotonic() + 60
    while read_cut(repos, path, moved) != [step[7] + 1]:
        assert time.monotonic() < deadline, "the read's sync brought the index up to date"
        time.sleep(0.1)
    path.write_text(text, encoding="utf-8")
    repos.post("/v1/repos/ledgers/sync")
    indexed(repos, "ledgers")
    # the same text (the same ref) read from a file no repository holds: cut as that read, whatever came first
    assert read_cut(repos, roots / "elsewhere" / "ledger.py", text) == [step[3]], "a file no repository holds"
    assert read_cut(repos, path, text) == [step[7]], "and the indexed file's read again as before"
    edited = text.replace("# ledger ledger ledger ledger, reconciled", "# ledger ledger ledger ledger, reconciled!")
    assert read_cut(repos, path, edited) == [step[3]], "its lines are no longer the indexed ones"
    shifted = text.replace("def step_5(batch):", "# a line added above step_5\ndef step_5(batch):")
    assert read_cut(repos, path, shifted) == [step[3]], "a line added moves what follows: the file gets none"
    # a Read with an offset (Claude Code's window, or its first 2,000 lines of a longer file): its lines count from
    # the offset, and the definitions inside it are ranked as the repository ranks them
    window = "\n".join(text.split("\n")[39:])
    assert read_cut(repos, path, window, offset=40) == [step[7] - 39]
    assert read_cut(repos, path, window) == [step[3] - 39], "read as the file's first lines, it is not the indexed file"
    # the ranking's spans are the read's own lines, the definitions cut by the window's ends left out
    ranking = repos.app.state.engine.engine.repos.ranking_for("default", LEDGER_REQUEST, None, 40)
    # lines 40-130: step_7 (lines 120-134) is cut by the window's end
    spans = ranking.units(str(path), "\n".join(text.split("\n")[39:130]))
    assert spans and all(1 <= first <= last <= 91 for first, last, _ in spans)
    assert max(spans, key=lambda span: span[2])[:2] == (step[3] - 39, step[3] - 39 + 14)
    assert not any(span[0] == step[7] - 39 for span in spans)
    whole_step_7 = ranking.units(str(path), "\n".join(text.split("\n")[39:135]))  # lines 40-135: step_7 inside
    assert (step[7] - 39, step[7] - 39 + 14) in [span[:2] for span in whole_step_7]


def test_a_restarted_index_ranks_a_greps_files_without_a_request_naming_its_repository(tmp_path: Path) -> None:
    """After a restart, the stored repositories are loaded behind it: a grep's cut can use one no search has named."""
    from ctxsieve.indexes.files import FileReader
    from ctxsieve.indexes.repos import RepoIndex
    from ctxsieve.indexes.store import open_store
    from ctxsieve.ingest.tokens import load_tokenizer
    from tests.conftest import CACHE

    root = tmp_path / "tree"
    output = grep_tree(root)
    store, tokenizer = open_store(tmp_path / "data"), load_tokenizer("o200k_base", CACHE / "tiktoken")
    first = RepoIndex(store, FileReader([root], 1 << 24), tokenizer)
    first.register("default", "tree", str(root))
    first.sync("default", "tree", wait=True)
    first.close()
    again = RepoIndex(store, FileReader([root], 1 << 24), tokenizer)
    try:
        paths = sorted({line.split(":", 1)[0] for line in output.split("\n")})
        deadline = time.monotonic() + 60
        while not (ranked := again.ranking_for("default", GREP_REQUEST).files(paths)):
            assert time.monotonic() < deadline, "the stored repository was loaded"
            time.sleep(0.05)
        assert max(ranked, key=ranked.__getitem__) == "./pkg/mod_17.py" and ranked["./pkg/mod_17.py"] == 1.0
    finally:
        again.close()


def test_a_repository_not_loaded_yet_reports_its_stored_counts() -> None:
    """Behind a restart a repository is loaded from the store in the background; meanwhile its status says what was
    stored (it said 0 files and 0 definitions)."""
    from ctxsieve.indexes.repos.index import _Repo, _status
    from ctxsieve.indexes.repos.records import RepoHead

    stored = _Repo(RepoHead("app", "/src/app", files=12, definitions=340), loaded=False)
    assert (_status(stored, "lexical", None).files, _status(stored, "lexical", None).definitions) == (12, 340)
    stored.loaded = True  # loaded: what the memory holds
    assert (_status(stored, "lexical", None).files, _status(stored, "lexical", None).definitions) == (0, 0)


def test_a_repository_waiting_for_its_vectors_says_how_many_are_left(tmp_path: Path) -> None:
    """Vectors are made a repository at a time; one queued behind another's, asked for its status, says how many it
    lacks before its turn (it said nothing, so `ctxsieve index` did not say they were coming), and again after an
    edit (not the count of before)."""
    import threading

    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.indexes.repos.vectors import UnitVectors
    from ctxsieve.indexes.store import open_store
    from ctxsieve.indexes.vectors import EmbeddingCache
    from ctxsieve.ingest.coderank.ranker import has_vector
    from ctxsieve.ingest.coderank.units import units_of

    idle = threading.Event()
    vectors = UnitVectors(EmbeddingCache(open_store(tmp_path / "data"), stub_models().embedder), idle.is_set)
    memories = {}
    for name in ("first", "second", "third"):
        memories[name] = RepoMemory()
        for i in range(3):
            text = f"def {name}_{i}(x):\n    return x * {i}\n\n\ndef helper_{name}_{i}():\n    return {i}\n"
            memories[name].put_file(f"pkg/{name}_{i}.py", f"{name}{i}", units_of(f"pkg/{name}_{i}.py", text))
    try:
        vectors.want("first", memories["first"])
        deadline = time.monotonic() + 30
        while vectors.left("first") is None:  # the worker is on the first, waiting for the service to be idle
            assert time.monotonic() < deadline
            time.sleep(0.01)
        vectors.want("second", memories["second"])
        wanted = len([u for u in memories["second"].snapshot()[1] if has_vector(u)])
        assert vectors.left("second", memories["second"]) == wanted == 6, "a status asks: counted then"
        idle.set()
        assert vectors.drain(30) and vectors.left("second") == 0
        idle.clear()  # the worker on the first again, the second edited behind it
        memories["first"].put_file("pkg/more.py", "m", units_of("pkg/more.py", "def more(x):\n    return x\n"))
        vectors.want("first", memories["first"])
        while vectors.left("first") is None:
            assert time.monotonic() < deadline
            time.sleep(0.01)
        memories["second"].put_file("pkg/new.py", "n", units_of("pkg/new.py", "def added(x):\n    return x\n"))
        vectors.want("second", memories["second"])
        assert vectors.left("second") is None, "the count of before the edit (0) is not kept"
        assert vectors.left("second", memories["second"]) == 1
    finally:
        idle.set()
        vectors.close()


def test_a_definitions_head_reaches_its_header_line_below_a_long_doc_comment(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A small budget shows each definition's head; below a long doc comment (Go, Javadoc) the head runs through the
    `func` line, which says what the definition is (the second of two showed its comment alone)."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import HEAD_TOKENS, pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import hit_head, rest_line
    from ctxsieve_client.rendering import numbered_line

    hits, budget = [], 0
    for name in ("getValue", "addRoute"):
        doc = "".join(f"// {name} walks the tree for the path, step {i}: wildcards, params and the catch-all.\n"
                      for i in range(8))
        steps = "".join(f"\tvalue = n.walk(path, {i}, value)\n" for i in range(6))  # (more than saying so costs)
        text = f"package gin\n\n{doc}func (n *node) {name}(path string) (value nodeValue) {{\n{steps}\treturn\n}}\n"
        unit = next(u for u in units_of("tree.go", text) if u.name == f"node.{name}")
        costs = [tokenizer.count(numbered_line(unit.start_line + i, line) + "\n")  # as pack_hits counts them: as shown
                 for i, line in enumerate(unit.text.split("\n"))]
        around = tokenizer.count(hit_head(unit.path, unit.start_line, unit.end_line, unit.kind, unit.name) + "\n") \
            + tokenizer.count(rest_line(unit.path, unit.end_line, unit.end_line) + "\n\n")
        assert tokenizer.count(doc) > HEAD_TOKENS
        hits.append(Hit(unit, 1.0))
        budget += sum(costs[:9]) + around  # the comment and the `func` line, under its head, the rest not shown
    shown = pack_hits(hits, tokenizer.count, budget)
    assert [r.text.split("\n")[-1] for r in shown] == [
        f"func (n *node) {name}(path string) (value nodeValue) {{" for name in ("getValue", "addRoute")], shown


def test_the_best_definitions_head_reaches_its_header_line_before_the_others_heads(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A trial looked up `Viper.find` at 300 tokens: eight lines of its doc comment and no `func` line, the budget
    spent on the heads of a module's TODO comment and another hit. The best hit's head reaches its header line
    first; the others' heads come after it, as far as the budget goes."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of

    doc = "".join(f"// find checks an alias first, then flag, env, config file and key/value store: step {i}.\n"
                  for i in range(8))
    text = (f"package viper\n\n{doc}func (v *Viper) find(key string) any {{\n\treturn v.lookup(key)\n}}\n\n"
            + "".join(f"// TODO: {i} should getEnv logic be moved into find(), rewriting keys as it goes.\n"
                      f"func helper{i}() {{\n\treturn\n}}\n\n" for i in range(3)))
    units = {u.name: u for u in units_of("viper.go", text)}
    hits = [Hit(units["Viper.find"], 3.0), *(Hit(units[f"helper{i}"], 1.0) for i in range(3))]
    for budget in (250, 300):
        shown = pack_hits(hits, tokenizer.count, budget)
        assert "func (v *Viper) find(key string) any {" in shown[0].text.split("\n"), (budget, shown[0].text)
    for budget in (200,):  # (where its lines through the header do not fit: a head as any other's, and the
        assert len(pack_hits(hits, tokenizer.count, budget)) > 1, budget  # next hit's too, as before)


def test_a_short_best_definition_is_shown_whole_before_the_others_heads(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """Two trials at 800 tokens: jinja's 8-line `is_safe_attribute` was cut above its one line of logic (`return not
    (attr.startswith("_") ...)`) while six more hits were shown. The best hit is shown whole first where it costs at
    most half the budget; a longer one keeps a head as the others do, and the budget goes on to them."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of

    doc = ("    The sandboxed environment will call this method to check if the attribute of an object is safe\n"
           "    to access. Per default all attributes starting with an underscore are considered private as well\n"
           "    as the special attributes of internal python objects as returned by the is_internal_attribute\n"
           "    function; a subclass may allow more, or fewer, and say so here.\n")
    text = (f'def is_safe_attribute(self, obj, attr, value):\n    """\n{doc}    """\n'
            '    return not (attr.startswith("_") or is_internal_attribute(obj, attr))\n\n\n'
            + "".join(f"def other_{i}(obj, attr):\n" + "".join(f"    step_{j} = attr.lookup_{i}_{j}(obj)\n"
                                                             for j in range(12)) + "    return obj\n\n\n"
                      for i in range(9)))
    units = {u.name: u for u in units_of("sandbox.py", text)}
    hits = [Hit(units["is_safe_attribute"], 3.0), *(Hit(units[f"other_{i}"], 1.0) for i in range(9))]
    shown = pack_hits(hits, tokenizer.count, 800)
    assert shown[0].text.endswith('return not (attr.startswith("_") or is_internal_attribute(obj, attr))'), shown[0]
    assert len(shown) > 1, "the budget goes on to the next hits"
    longer = [Hit(units["other_0"], 3.0), *(Hit(units[f"other_{i}"], 1.0) for i in range(1, 9))]
    assert not pack_hits(longer, tokenizer.count, 300)[0].text.endswith("return obj"), "more than half: a head"
    asked = pack_hits(longer, tokenizer.count, 300, asked=True)  # (a trial's `Faraday::RackBuilder` looked up at 800
    shown_lines = [len(r.text.split("\n")) for r in asked]  # tokens: its first 9 lines, then other classes and specs)
    assert shown_lines[0] > 8 and sum(tokenizer.count(r.text) for r in asked[1:]) < 300 / 4, shown_lines
    assert pack_hits(longer, tokenizer.count, 350, asked=True)[0].text.endswith("return obj"), "whole where it fits"
    assert not pack_hits(longer, tokenizer.count, 350)[0].text.endswith("return obj"), "not asked: a head"


def test_a_definition_below_a_doc_longer_than_its_head_is_shown_from_around_its_header_line(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A Julia docstring of 47 lines above `Base.eachrow(df) = ...` (an Elixir `@doc`, a long JSDoc) had the head show
    its first lines and never the line that says what the definition is: at a small budget the hit is shown around
    its header line, the lines above it said not shown; a short doc is still shown from its first line."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import render_answer

    doc = "".join(f"Iterate the rows of a data frame, step {i}: views, copies and the columns they keep.\n"
                  for i in range(40))
    text = f'"""\n    eachrow(df)\n\n{doc}"""\nBase.eachrow(df::AbstractDataFrame) = DataFrameRows(df)\n\nnrow(x) = 1\n'
    unit = next(u for u in units_of("src/iteration.jl", text) if u.name == "Base.eachrow")
    assert unit.start_line == 1 and unit.signature.startswith("Base.eachrow(")
    shown = pack_hits([Hit(unit, 1.0)], tokenizer.count, 300)
    assert shown and "Base.eachrow(df::AbstractDataFrame)" in shown[0].text, shown
    answer = render_answer("r", shown, 1, "ready")
    assert f"⋮ lines 1-{shown[0].shown_start_line - 1} not shown" in answer and tokenizer.count(answer) <= 300
    short = next(u for u in units_of("src/iteration.jl", '"""\n    nrow(x)\n"""\nnrow(x) = 1\n') if u.name == "nrow")
    assert pack_hits([Hit(short, 1.0)], tokenizer.count, 300)[0].shown_start_line == 1


def test_the_closing_line_says_when_a_search_was_ranked_without_vectors(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """A repository whose vectors are not made (or a service that makes none) is searched by its words and names
    alone: a plain-language search finds less then, and the model is told so; a ready one's answer says nothing."""
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits
    from ctxsieve.ingest.coderank.units import units_of
    from ctxsieve_client.code_search import render_answer

    unit = next(u for u in units_of("app/rates.py", "def rate_for(day):\n    return 1\n") if u.name == "rate_for")
    shown = pack_hits([Hit(unit, 1.0)], tokenizer.count, 300)
    lexical, ready = (render_answer("app", shown, 1, state).rsplit("\n", 1)[-1] for state in ("lexical", "ready"))
    assert lexical == ("[ctxsieve search_code: 1 definition of repository app, best first; ranked by words and names "
                       "alone, its vectors not ready: a name as the code writes it finds the most]")
    assert ready == "[ctxsieve search_code: 1 definition of repository app, best first]"


def test_a_service_that_makes_no_vectors_says_so_not_that_they_are_coming(tmp_path: Path) -> None:
    """With `repo_vectors` off a repository stays `lexical` for good: its answer said "its vectors not ready", a
    wait that never ends; it now says the service makes none (the field `vectors_off`, and the closing line)."""
    from ctxsieve_client.code_search import render_hits

    root = tmp_path / "app"
    root.mkdir()
    (root / "rates.py").write_text("def rate_for(day):\n    return 1\n")
    client = open_client(make_settings(tmp_path / "data", read_roots=str(tmp_path), repo_vectors=False), stub_models())
    try:
        assert client.put("/v1/repos/app", json={"path": str(root)}).status_code == 202
        info = indexed(client, "app")
        assert info["state"] == "lexical" and info["vectors_off"] is True, info  # (`ctxsieve index` says it is final)
        from ctxsieve.service.repo_cli import _state  # (as `ctxsieve index` and `ctxsieve repos` print it)
        from ctxsieve_client.models import RepoInfo

        assert _state(RepoInfo.from_json(info)) == "lexical (final: this service makes no vectors)"
        body = client.post("/v1/repos/app/search", json={"query": "rate for a day"}).json()
        assert body["vectors_off"] is True and body["state"] == "lexical"
        assert render_hits(CodeSearchResult.from_json(body)).rsplit("\n", 1)[-1] == (
            "[ctxsieve search_code: 1 definition of repository app, best first; ranked by words and names alone, this "
            "service makes no vectors: a name as the code writes it finds the most]")
    finally:
        client.__exit__(None, None, None)


NESTED = """def make_handler(config):
    def handler(request):
        return request

    retries = config.get("quiesce_backoff_seconds")
    return handler
"""


def test_a_parents_code_after_a_nested_definition_is_found_and_an_older_index_finds_it_after_a_restart(
        tmp_path: Path) -> None:
    """A function's body after a nested function is a unit of the function (before, it was in no unit: never found);
    a repository stored by an earlier `units_of` finds its units again from each file's stored text when loaded."""
    from ctxsieve.indexes.files import FileReader
    from ctxsieve.indexes.repos import RepoIndex
    from ctxsieve.indexes.repos.records import SPEC
    from ctxsieve.indexes.store import PointData, open_store, scroll_all
    from ctxsieve.ingest.coderank.units import UNITS_VERSION
    from ctxsieve.ingest.tokens import load_tokenizer
    from tests.conftest import CACHE

    (tmp_path / "tree").mkdir()
    (tmp_path / "tree" / "handlers.py").write_text(NESTED)
    store, tokenizer = open_store(tmp_path / "data"), load_tokenizer("o200k_base", CACHE / "tiktoken")

    def opened() -> RepoIndex:
        index = RepoIndex(store, FileReader([tmp_path / "tree"], 1 << 24), tokenizer)
        index.register("default", "tree", str(tmp_path / "tree"))
        index.sync("default", "tree", wait=True)
        return index

    def spans(index: RepoIndex) -> list[tuple[str, int, int]]:  # (the part, 5-6, is shown as its whole function)
        found = index.search("default", "tree", "quiesce backoff seconds").results
        return [(r.name, r.start_line, r.end_line) for r in found]

    first = opened()
    assert spans(first)[0] == ("make_handler", 1, 6)
    first.close()
    older = []  # the point as the version before stored it: no version, the body after `handler` in no unit
    for point in scroll_all(store, SPEC.name, None):
        if point.payload.get("type") == "file":
            payload = {k: v for k, v in point.payload.items() if k != "units_version"}
            payload["units"] = [u for u in payload["units"] if u[2] != 5]
            older.append(PointData(key="", payload=payload, id=point.id))
    store.upsert(SPEC.name, older)
    again = opened()
    try:
        assert spans(again)[0] == ("make_handler", 1, 6)
        stored = [p.payload for p in scroll_all(store, SPEC.name, None) if p.payload.get("type") == "file"]
        assert [p["units_version"] for p in stored] == [UNITS_VERSION]
    finally:
        again.close()


WRAPPED = """import functools


class Retry:
    \"\"\"Retries a call.\"\"\"

    limit = 3

    def wrap(self, call):
        @functools.wraps(call)
        def wrapper(*args):
            return call(*args)

        self.calls = 0
        return wrapper


def make_wrapper(call):
    def inner(*args):
        return call(*args)
    return inner
"""


AUTH = """class DigestAuth:
    \"\"\"HTTP digest authentication.\"\"\"

    def _build_auth_header(self, request, challenge):
        \"\"\"The digest authorization header for a request answering the server's challenge.\"\"\"
        hash_func = self._ALGORITHM_TO_HASH_FUNCTION[challenge.algorithm.upper()]

        def digest(data):
            return hash_func(data).hexdigest().encode()

        a1 = b":".join((self._username, challenge.realm, self._password))
        path = request.url.raw_path
        a2 = b":".join((request.method.encode(), path))
        ha2 = digest(a2)
        nonce_count = 1
        cnonce = self._get_client_nonce(nonce_count, challenge.nonce)
        digest_data = [challenge.nonce, nonce_count, cnonce, challenge.qop, ha2]
        key_digest = b":".join(digest_data)
        format_args = {"username": self._username, "realm": challenge.realm, "nonce": challenge.nonce}
        format_args["response"] = digest(b":".join((digest(a1), key_digest)))
        return "Digest " + self._get_header_value(format_args)

    def _get_client_nonce(self, nonce_count, nonce):
        return nonce + str(nonce_count).encode()
"""


def test_a_function_holding_a_nested_one_is_shown_whole_in_any_search(repos: TestClient, roots: Path) -> None:
    """httpx's `DigestAuth._build_auth_header` holds `def digest` at its fifth line: a search of its words showed it
    to that line, "lines 9-22 not shown" with most of the budget unused, and its code after `digest` came as a hit
    of its own further down. A function is shown whole (as far as the budget goes) at the first place one of its
    parts ranks, and its parts are no hits of their own; a class stays its own lines."""
    tree = roots / "auth"
    tree.mkdir()
    (tree / "_auth.py").write_text(AUTH)
    assert repos.put("/v1/repos/auth", json={"path": str(tree)}).status_code == 202
    indexed(repos, "auth")
    body = repos.post("/v1/repos/auth/search", json={"query": "how does digest auth build the authorization header",
                                                     "max_tokens": 4000}).json()
    first = body["results"][0]
    assert (first["name"], first["start_line"], first["end_line"], first["shown_end_line"]) == (
        "DigestAuth._build_auth_header", 4, 21, 21), first
    assert first["text"] == "\n".join(AUTH.split("\n")[3:21]), first
    names = [(r["name"], r["start_line"]) for r in body["results"]]
    assert all(name != "DigestAuth._build_auth_header.digest" for name, _ in names), names
    assert [n for n in names if n[0] == "DigestAuth._build_auth_header"] == [("DigestAuth._build_auth_header", 4)]
    assert ("DigestAuth", 1) in names and all(r["shown_end_line"] < 4 for r in body["results"]
                                              if r["name"] == "DigestAuth"), "a class is its own lines"


def test_an_inner_function_that_ranks_first_is_shown_as_itself(repos: TestClient, roots: Path) -> None:
    """A review's case: a 60-line `build_form` holding `submit_signup` at its end took the inner function's place
    when widened, shown from its first line so the matching lines fell outside the budget; a Jest `describe` widened
    took every `it` it holds. A part that ranks above its parent is shown as itself, and a test group stays its own
    lines. The parent's parts are one hit: black's `_handle_regular_fmt_block` came 3rd and 10th under one head line."""
    tree = roots / "forms"
    tree.mkdir()
    body = "".join(f"    field_{i} = app.field('f{i}', width={i}, label='Field number {i}')\n" for i in range(50))
    (tree / "forms.py").write_text("def build_form(app):\n" + body + "\n    def submit_signup(form):\n"
                                   "        send_confirmation_mail(form.email, 'signup confirmed')\n"
                                   "        return form.submit()\n\n    return submit_signup\n")
    its = "".join(f"  it('reads case {i}', () => {{\n    expect(parse('{i}')).toBe({i});\n  }});\n" for i in range(20))
    (tree / "parse.test.js").write_text("describe('parse', () => {\n" + its + "  it('rejects a trailing comma', () => "
                                        "{\n    expect(() => parse('1,')).toThrow();\n  });\n});\n")
    assert repos.put("/v1/repos/forms", json={"path": str(tree)}).status_code == 202
    indexed(repos, "forms")
    first = repos.post("/v1/repos/forms/search", json={"query": "where is the signup confirmation mail sent"}).json()
    assert first["results"][0]["name"] == "build_form.submit_signup", first["results"][0]
    assert [r["name"] for r in first["results"]].count("build_form") == 1, "its two parts: one hit, one head line"
    tests = repos.post("/v1/repos/forms/search", json={"query": "tests for parse rejecting a trailing comma"}).json()
    assert tests["results"][0]["name"] == "parse.rejects_a_trailing_comma", [r["name"] for r in tests["results"]]
    assert len(tests["results"]) == 10, "the group's tests are hits of their own"


def test_a_class_a_test_defines_stands_for_the_test_shown_whole(repos: TestClient, roots: Path) -> None:
    """A user trial over aiohttp: "tests for the multipart reader" answered a test's own two-line `class
    CustomReader(MultipartReader)` first, then the test as its signature and "lines 877-899 not shown" (its body in no
    hit) with a third of the budget left. Now the test comes first, whole, once."""
    tree = roots / "multi"
    (tree / "tests").mkdir(parents=True)
    (tree / "tests" / "test_multipart.py").write_text(
        "import aiohttp\n\n\nclass TestMultipartReader:\n"
        "    def test_dispatch_custom_multipart_reader(self) -> None:\n"
        "        class CustomReader(aiohttp.MultipartReader):\n            pass\n\n"
        "        reader = CustomReader({}, None)\n        part = reader._get_part_reader({})\n"
        "        assert isinstance(part, CustomReader)\n\n"
        "    def test_release(self) -> None:\n        assert aiohttp.release() is None\n")
    assert repos.put("/v1/repos/multi", json={"path": str(tree)}).status_code == 202
    indexed(repos, "multi")
    found = repos.post("/v1/repos/multi/search", json={"query": "tests for the custom multipart reader"}).json()
    spans = [(r["name"], r["start_line"], r["end_line"]) for r in found["results"]]
    assert spans[0] == ("TestMultipartReader.test_dispatch_custom_multipart_reader", 5, 11), spans
    assert "part = reader._get_part_reader({})" in found["results"][0]["text"], found["results"][0]
    assert [name for name, _, _ in spans].count(spans[0][0]) == 1 and not any(
        "CustomReader" in name.rsplit(".", 1)[-1] for name, _, _ in spans), spans
    looked = repos.post("/v1/repos/multi/search", json={"query": "CustomReader"}).json()
    assert looked["results"][0]["start_line"] == 6, "a class looked up by name is shown as itself"


def test_a_definition_is_one_hit_shown_at_the_line_a_frame_points_into() -> None:
    """rich's `_traverse` (lines 621-870, an inner function at 731) came 1st and 2nd under one head line for a pasted
    traceback: its later part, which the frame's line 786 is in, and its first part, shown around its best line (a
    focus too, but no frame's). A definition is one hit; where a part the frame points into comes after another
    part, it takes that one's place."""
    from ctxsieve.indexes.repos.index import _one_per_definition
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.ingest.coderank.units import CodeUnit

    first = CodeUnit("rich/pretty.py", "traverse._traverse", "function", 621, 730, "...", definition_end=870)
    later = CodeUnit("rich/pretty.py", "traverse._traverse", "function", 748, 870, "...", rest=True,
                     definition_start=621, definition_end=870)
    other = CodeUnit("rich/pretty.py", "pretty_repr", "function", 876, 913, "...")
    framed, matched, plain = Hit(later, 3.0, focus=786), Hit(first, 2.0, focus=690), Hit(other, 1.0)

    def placed(hit: Hit) -> bool:
        return hit.focus == 786

    assert _one_per_definition([framed, matched, plain], placed) == [framed, plain], "a focus of its best line"
    assert _one_per_definition([matched, plain, framed], placed) == [framed, plain], "the frame's part, first place"
    assert _one_per_definition([Hit(first, 2.0), Hit(later, 1.0)], placed) == [Hit(first, 2.0)]


def test_a_frame_whose_line_is_another_definitions_here_is_said(repos: TestClient, roots: Path) -> None:
    """A traceback from an installed release names `charge` at line 9, which is `refund`'s in the checkout: the
    search points the frame at `charge` (its own lines) and the answer says so, so the model does not take the lines
    shown for the frame's."""
    from ctxsieve_client.code_search import render_hits
    from ctxsieve_client.models import CodeSearchResult

    tree = roots / "released"
    (tree / "shop").mkdir(parents=True)
    (tree / "shop" / "billing.py").write_text(
        "def refund(order):\n" + "    order.total = 0\n" * 10 + "\n\ndef charge(order, card):\n"
        "    return card.pay(order.total)\n")
    assert repos.put("/v1/repos/released", json={"path": str(tree)}).status_code == 202
    indexed(repos, "released")
    trace = ('Traceback (most recent call last):\n  File "/usr/lib/python3/site-packages/shop/billing.py", line 9, '
             "in charge\n    return card.pay(order.total)\nAttributeError: 'NoneType' object has no attribute 'pay'")
    body = repos.post("/v1/repos/released/search", json={"query": trace, "k": 3}).json()
    assert body["results"][0]["name"] == "charge", body
    said = "shop/billing.py:9 in charge (line 9 is in refund here; charge is lines 14-15)"
    assert body["elsewhere"] == [said], body
    closing = render_hits(CodeSearchResult.from_json(body)).rsplit("\n", 1)[-1]
    assert "a frame names a definition its line is not in here" in closing and said in closing, closing


def test_a_function_shown_whole_is_shown_around_its_best_line(repos: TestClient, roots: Path) -> None:
    """attrs's `_attrs_to_init_script` (256 lines, functions nested in it) is shown whole for a bug report about its
    last lines, and was shown from its signature, the lines of the bug 180 below, "not shown". A function widened
    whole is shown around its line that holds the most of the request's words, as a long part is; a look-up of its
    name shows it from its first line."""
    tree = roots / "initscript"
    tree.mkdir()
    steps = "".join(f"    lines.append('self.field_{i} = field_{i}')\n" for i in range(60))
    text = ("def attrs_to_init_script(attrs, pre_init, kw_only):\n    lines = []\n\n    def fmt_setter(name):\n"
            "        return 'self.%s = %s' % (name, name)\n\n" + steps +
            "    if pre_init:\n        pre_init_kw_only_args = ', '.join(a.name + '=' + a.name for a in kw_only)\n"
            "        lines.append('self.__attrs_pre_init__(' + pre_init_kw_only_args + ')')\n    return lines\n")
    (tree / "make.py").write_text(text)
    target = text.split("\n").index("    if pre_init:") + 1
    assert repos.put("/v1/repos/initscript", json={"path": str(tree)}).status_code == 202
    indexed(repos, "initscript")
    asked = {"query": "__attrs_pre_init__ with kw_only attributes gets pre_init_kw_only_args wrong", "k": 1,
             "max_tokens": 400}
    hit = repos.post("/v1/repos/initscript/search", json={**asked, "windows": True}).json()["results"][0]
    assert (hit["name"], hit["start_line"]) == ("attrs_to_init_script", 1), hit
    assert hit["shown_start_line"] <= target + 1 <= hit["shown_end_line"] and hit["shown_start_line"] > 20, hit
    looked_up = repos.post("/v1/repos/initscript/search", json={"query": "attrs_to_init_script", "k": 1,
                                                                 "max_tokens": 400, "windows": True}).json()
    assert looked_up["results"][0]["shown_start_line"] == 1, looked_up["results"][0]


def test_a_looked_up_definition_holding_a_nested_one_is_shown_whole(repos: TestClient, roots: Path) -> None:
    """A look-up of a function or class by its name shows it whole, its nested definitions and its code after them
    included, under its true span: its first part alone (the lines before `def wrapper`) looked whole and was not."""
    tree = roots / "wrapped"
    tree.mkdir()
    (tree / "retry.py").write_text(WRAPPED)
    lines = WRAPPED.split("\n")
    assert repos.put("/v1/repos/wrapped", json={"path": str(tree)}).status_code == 202
    indexed(repos, "wrapped")

    def first(query: str, **options: object) -> dict:  # type: ignore[type-arg]
        body = repos.post("/v1/repos/wrapped/search", json={"query": query, **options}).json()
        return body["results"][0]  # type: ignore[no-any-return]

    for query, name, span in (("Retry.wrap", "Retry.wrap", (9, 15)), ("make_wrapper", "make_wrapper", (18, 21)),
                              ("Retry", "Retry", (4, 15))):
        hit = first(query)
        assert (hit["name"], hit["start_line"], hit["end_line"]) == (name, *span), hit
        assert hit["text"] == "\n".join(lines[span[0] - 1 : span[1]]) and hit["shown_end_line"] == span[1], hit
    body = repos.post("/v1/repos/wrapped/search", json={"query": "Retry.wrap"}).json()
    assert [r["name"] for r in body["results"]].count("Retry.wrap.wrapper") == 0, "its lines are the look-up's"
    few = repos.post("/v1/repos/wrapped/search", json={"query": "Retry.wrap", "k": 2}).json()["results"]
    assert len(few) == 2, ("k asked for: the hits inside the whole one left out leave the answer none short", few)
    both = repos.post("/v1/repos/wrapped/search", json={"query": "Retry.wrap Retry"}).json()["results"]
    spans = [range(r["shown_start_line"], r["shown_end_line"] + 1) for r in both]
    shown = [line for span in spans for line in span]
    assert len(shown) == len(set(shown)), ("no line twice, whichever ranked first", both)
    cut = CodeSearchResult.from_json(repos.post("/v1/repos/wrapped/search", json={
        "query": "Retry.wrap", "max_tokens": 90}).json())
    shown = render_hits(cut)
    assert cut.results[0].end_line == 15 and cut.results[0].shown_end_line < 15, shown
    assert f"read retry.py lines {cut.results[0].shown_end_line + 1}-15" in shown, shown
    parts = CodeSearchResult.from_json(repos.post("/v1/repos/wrapped/search", json={"query": "retries limit"}).json())
    head = next(r for r in parts.results if r.name == "Retry")  # a search by words ranks the parts apart, and the
    assert (head.start_line, head.end_line, head.shown_end_line) == (4, 15, 7), head  # first reads as cut
    assert "⋮ lines 8-15 not shown: read retry.py lines 8-15" in render_hits(parts), render_hits(parts)


def test_paths_as_a_grep_prints_them_name_a_repositorys_files(tmp_path: Path) -> None:
    from ctxsieve.indexes.repos.index import _inside

    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    real = str(root.resolve())
    for written, own in (("pkg/a.py", "pkg/a.py"), ("./pkg/a.py", "pkg/a.py"), (".//pkg/a.py", "pkg/a.py"),
                         ("pkg\\a.py", "pkg/a.py"), ("pkg/../b.py", "b.py"), ("../pkg/a.py", None), ("..", None),
                         (f"{real}/pkg/a.py", "pkg/a.py"), (f"{real}/..hidden/a.py", "..hidden/a.py"),
                         (f"{real}/../other/a.py", None), (real, None)):
        assert _inside(real, written) == own, written


def test_search_during_an_update_answers_from_the_last_complete_state(repos: TestClient, roots: Path) -> None:
    root = roots / "busy"
    root.mkdir()
    for i in range(1000):
        (root / f"mod_{i:03}.py").write_text(f"def handler_{i:03}(request):\n    return 'old {i}'\n")
    repos.put("/v1/repos/busy", json={"path": str(root)})
    indexed(repos, "busy")
    for i in range(1000):
        (root / f"mod_{i:03}.py").write_text(f"def handler_{i:03}(request):\n    return 'new {i}'\n\n\n"
                                             f"def extra_{i:03}():\n    pass\n")
    repos.post("/v1/repos/busy/sync")
    seen_during = 0
    while repos.get("/v1/repos/busy").json()["state"] == "indexing":
        answer = repos.post("/v1/repos/busy/search", json={"query": "handler_123 request", "k": 3})
        assert answer.status_code == 200, "never 'not indexed' during an update"
        top = answer.json()["results"][0]
        assert top["name"] == "handler_123" and top["text"].split("\n")[1].strip() in ("return 'old 123'",
                                                                                        "return 'new 123'")
        seen_during += 1
    assert seen_during > 0, "the searches ran while the sync was under way"
    assert found(repos, "busy", "extra_999")[0] == ("mod_999.py", "extra_999")


@pytest.mark.parametrize("tracked", [True, False], ids=["git", "folder"])
def test_a_file_named_in_another_encoding_is_skipped_and_the_index_goes_on(repos: TestClient, roots: Path,
                                                                           tracked: bool) -> None:
    """A Latin-1 file name (git lists it as its bytes; os.walk keeps them as surrogates) cannot be stored: it is
    counted as unreadable and the rest indexed, and the worker lives on for the next repository (git's listing
    decoded strictly ended the worker; a folder's failed the whole batch at the store)."""
    root = roots / f"latin-{tracked}"
    root.mkdir()
    (root / "ok.py").write_text("def readable_function():\n    pass\n")
    with open(os.path.join(os.fsencode(root), b"caf\xe9.py"), "w") as named:
        named.write("def hidden_function():\n    pass\n")
    if tracked:
        committed(root)
    assert repos.put(f"/v1/repos/latin-{tracked}", json={"path": str(root)}).status_code == 202
    info = indexed(repos, f"latin-{tracked}")
    assert info["error"] is None and info["files"] == 1 and info["skipped"] == {"unreadable": 1}, info
    assert info["skipped_paths"] == {"unreadable": ["caf\\xe9.py"]}, "named by its bytes, escaped"
    assert found(repos, f"latin-{tracked}", "readable_function")[0] == ("ok.py", "readable_function")
    the_worker_goes_on(repos, roots, f"latin-{tracked}")


@pytest.mark.parametrize("tracked", [True, False], ids=["git", "folder"])
def test_a_link_to_a_file_outside_the_repository_is_never_read(repos: TestClient, roots: Path, tmp_path: Path,
                                                               tracked: bool) -> None:
    """A symbolic link inside the repository pointing out of it (at a file beyond the read roots) is counted and
    left unread; a link to one of the repository's own files is that file again: counted, and found once, under the
    file's own path (SDWebImage's headers in include/ linked to Core/ came twice in every answer)."""
    outside = tmp_path / "private"
    outside.mkdir()
    (outside / "secret.py").write_text("PRIVATE_TOKEN_VALUE = 'abc123'\n")
    root = roots / f"links-{tracked}"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "real.py").write_text("def linked_helper():\n    pass\n")
    (root / "leak.py").symlink_to(outside / "secret.py")
    (root / "alias.py").symlink_to(root / "pkg" / "real.py")
    (root / "linked").symlink_to(outside, target_is_directory=True)
    if tracked:
        committed(root)
    assert repos.put(f"/v1/repos/links-{tracked}", json={"path": str(root)}).status_code == 202
    info = indexed(repos, f"links-{tracked}")
    assert info["files"] == 1 and info["skipped"] == {"outside": 1, "link": 1}, info
    assert not found(repos, f"links-{tracked}", "PRIVATE_TOKEN_VALUE abc123")
    assert [p for p, _ in found(repos, f"links-{tracked}", "linked_helper")] == ["pkg/real.py"]


def test_a_bug_reading_one_file_skips_it_and_one_failing_a_sync_says_so(repos: TestClient, roots: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A failure reading one file leaves that file out (counted as `failed`) and indexes the others; whatever else
    a sync raises reaches the repository's status as its error, and the next repository is still indexed."""
    import ctxsieve.indexes.repos.index as index

    real_units, real_walk = index.units_of, index.walk

    def failing(path: str, text: str) -> list:  # type: ignore[type-arg]
        if path == "boom.py":
            raise ValueError("a parser bug")
        return real_units(path, text)

    monkeypatch.setattr(index, "units_of", failing)
    root = roots / "buggy"
    root.mkdir()
    (root / "boom.py").write_text("def boom():\n    pass\n")
    (root / "fine.py").write_text("def fine_function():\n    pass\n")
    assert repos.put("/v1/repos/buggy", json={"path": str(root)}).status_code == 202
    info = indexed(repos, "buggy")
    assert info["error"] is None and info["files"] == 1 and info["skipped"] == {"failed": 1}, info
    assert found(repos, "buggy", "fine_function")[0] == ("fine.py", "fine_function")
    assert repos.post("/v1/repos/buggy/sync").status_code == 202
    assert indexed(repos, "buggy")["skipped"] == {"failed": 1}, "tried again, and counted, at each sync"
    monkeypatch.setattr(index, "units_of", real_units)
    assert repos.post("/v1/repos/buggy/sync").status_code == 202
    info = indexed(repos, "buggy")
    assert info["files"] == 2 and info["skipped"] == {} and found(repos, "buggy", "boom")[0] == ("boom.py", "boom")

    def failing_store(*args: object, **kwargs: object) -> None:
        raise OSError("disk")

    real_point = index.file_point
    monkeypatch.setattr(index, "file_point", failing_store)
    (root / "fine.py").write_text("def finer_function():\n    pass\n")
    assert repos.post("/v1/repos/buggy/sync").status_code == 202
    assert indexed(repos, "buggy")["error"] == "OSError: disk"
    monkeypatch.setattr(index, "file_point", real_point)
    assert repos.post("/v1/repos/buggy/sync").status_code == 202
    assert indexed(repos, "buggy")["error"] is None
    assert found(repos, "buggy", "finer_function")[0] == ("fine.py", "finer_function"), "the file not written: again"

    def broken_walk(root: Path) -> object:
        raise ValueError("a walking bug")

    monkeypatch.setattr(index, "walk", broken_walk)
    assert repos.post("/v1/repos/buggy/sync").status_code == 202
    assert indexed(repos, "buggy")["error"] == "ValueError: a walking bug"
    monkeypatch.setattr(index, "walk", real_walk)
    the_worker_goes_on(repos, roots, "buggy")


def test_a_repository_deleted_during_its_sync_stays_deleted(repos: TestClient, roots: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """A DELETE while a sync runs (which a search now starts when a hit's file was edited): the sync's last step
    wrote the repository's head back, and it was listed again, indexing."""
    import threading

    import ctxsieve.indexes.repos.index as index

    root = roots / "raced"
    root.mkdir()
    (root / "a.py").write_text("def add_route():\n    pass\n")
    assert repos.put("/v1/repos/raced", json={"path": str(root)}).status_code == 202
    indexed(repos, "raced")
    reading, deleted = threading.Event(), threading.Event()
    real_units = index.units_of

    def slow(path: str, text: str) -> list:  # type: ignore[type-arg]
        reading.set()
        assert deleted.wait(10)
        return real_units(path, text)

    monkeypatch.setattr(index, "units_of", slow)
    (root / "a.py").write_text("def add_route(path):\n    pass\n")
    assert repos.post("/v1/repos/raced/sync").status_code == 202
    assert reading.wait(10)
    assert repos.delete("/v1/repos/raced").status_code == 200
    deleted.set()
    the_worker_goes_on(repos, roots, "raced")  # (after the raced sync: one worker)
    assert repos.get("/v1/repos/raced").status_code == 404
    assert "raced" not in {r["name"] for r in repos.get("/v1/repos").json()["repos"]}


def test_a_search_after_a_restart_waits_for_no_sync_of_files_it_has_not_stated(repos: TestClient, roots: Path
                                                                                ) -> None:
    """A restart's index comes from the store with no file's size and time: each search took its hits' files for
    edited and waited up to 5 s for a sync (the sync the load queues checks them)."""
    root = roots / "restarted"
    root.mkdir()
    (root / "a.py").write_text("def add_route():\n    pass\n")
    assert repos.put("/v1/repos/restarted", json={"path": str(root)}).status_code == 202
    indexed(repos, "restarted")
    engine = repos.app.state.engine.get()  # type: ignore[attr-defined]
    held = engine.repos._repos[("default", "restarted")]
    held.stats.clear()  # as `_load` leaves them
    asked = held.requested
    assert found(repos, "restarted", "add_route")[0] == ("a.py", "add_route")
    assert held.requested == asked, "no sync queued for files it never stated"


def test_bad_input(repos: TestClient, roots: Path, tmp_path: Path) -> None:
    outside = repos.put("/v1/repos/outside", json={"path": str(tmp_path)})
    assert outside.status_code == 403 and outside.json()["error"]["type"] == "forbidden"
    missing = repos.post("/v1/repos/never/search", json={"query": "x"})
    assert missing.status_code == 404 and "ctxsieve index" in missing.json()["error"]["message"]
    held = sorted(r["name"] for r in repos.get("/v1/repos").json()["repos"])  # (a trial's agent asked for its
    listed = ", ".join(held[:10]) + (", ..." if len(held) > 10 else "")  # folder's name and was not told which are)
    said = f" (indexed: {listed})" if held else ""
    assert f"'never' is not indexed{said}: run" in missing.json()["error"]["message"], missing.json()
    (roots / "afile.py").write_text("x = 1\n")
    assert repos.put("/v1/repos/afile", json={"path": str(roots / "afile.py")}).status_code == 422
    spaced = repos.put("/v1/repos/bad name", json={"path": str(roots)})
    assert spaced.status_code == 422, spaced.text  # in words, not the name's regular expression
    assert spaced.json()["error"]["message"] == ("name (in the URL) 'bad name': a name is letters, digits, `_`, "
                                                 "`-` and `.`, not dots alone")
    dots = repos.put("/v1/repos/...", json={"path": str(roots)})  # `.` and `..` a URL client resolves first
    assert dots.status_code == 422 and dots.json()["error"]["type"] == "invalid_field", dots.text
    broken = repos.post("/v1/repos/never/search", content=b'{"query":', headers={"content-type": "application/json"})
    assert broken.status_code == 422, broken.text  # (was `9: JSON decode error`, the offset read as a field)
    assert broken.json()["error"]["message"].startswith("the body is not valid JSON at character 9: ")
    assert repos.post("/v1/repos/never/search", json={"query": "x", "k": 0}).status_code == 422
    for asked in ("", "  \n\t "):  # spaces alone ask for nothing, as an empty query does
        blank = repos.post("/v1/repos/never/search", json={"query": asked})
        assert blank.status_code == 422 and blank.json()["error"]["type"] == "invalid_field", blank.text
    assert "blank" in repos.post("/v1/repos/never/search", json={"query": "   "}).json()["error"]["message"]
    assert repos.put("/v1/repos/x", json={"path": str(roots), "extra": 1}).status_code == 422
    relative = repos.put("/v1/repos/relative", json={"path": "flask"})  # was read from the service's own folder
    assert relative.status_code == 422 and "must be an absolute path" in relative.text, relative.text
    assert repos.post("/v1/repos/x/search", json={"query": "x", "folder": "flask"}).status_code == 422
    (roots / "globbed").mkdir()
    (roots / "globbed" / "engine.go").write_text("package gin\n\nfunc ServeHTTP() {\n}\n")
    (roots / "globbed" / "_parser.pyx").write_text("cdef class HttpParser:\n    pass\n")  # (no language it reads)
    assert repos.put("/v1/repos/globbed", json={"path": str(roots / "globbed")}).status_code == 202
    indexed(repos, "globbed")
    for glob in ("[unclosed", "lib/**/*.py", "*.pyx"):  # was: no results, and "no definition is named ServeHTTP"
        nothing = repos.post("/v1/repos/globbed/search", json={"query": "ServeHTTP", "path": glob})
        assert nothing.status_code == 400 and "no file of repository 'globbed' matches" in nothing.text, nothing.text
        assert "among those it indexed (source in a language it reads" in nothing.text, "a file on disk it never read"
    assert found(repos, "globbed", "ServeHTTP", path="*.go")[0] == ("engine.go", "ServeHTTP")


def test_a_paths_star_stays_in_its_folder(repos: TestClient, roots: Path) -> None:
    """A trial's `--path 'packages/zod/src/v4/*.ts'` matched `v4/classic/schemas.ts`: in a glob with a `/`, `*` and
    `?` now stay within a folder and `**` crosses folders, as git and ripgrep read one; `*.ts` alone is still any
    TypeScript file, and a folder is still every file under it, named from the repository or as a shell names it."""
    from ctxsieve.indexes.repos.memory import matches

    tree = roots / "starred"
    (tree / "v4" / "classic").mkdir(parents=True)
    (tree / "v4" / "index.ts").write_text("export function parse(input: string) {\n  return input;\n}\n")
    (tree / "v4" / "classic" / "schemas.ts").write_text("export function parse(s: string) {\n  return s;\n}\n")
    (tree / "top.ts").write_text("export function parse(t: string) {\n  return t;\n}\n")
    assert repos.put("/v1/repos/starred", json={"path": str(tree)}).status_code == 202
    indexed(repos, "starred")
    for glob, paths in (("v4/*.ts", {"v4/index.ts"}), ("v4/**/*.ts", {"v4/index.ts", "v4/classic/schemas.ts"}),
                        ("*.ts", {"top.ts", "v4/index.ts", "v4/classic/schemas.ts"}),
                        ("v4/classic", {"v4/classic/schemas.ts"}),
                        ("v4/c*/*.ts", {"v4/classic/schemas.ts"}), ("v4/[ci]*.ts", {"v4/index.ts"}),
                        ("./v4/classic", {"v4/classic/schemas.ts"}), (f"{tree}/v4/*.ts", {"v4/index.ts"}),
                        (str(tree), {"top.ts", "v4/index.ts", "v4/classic/schemas.ts"}), ("./*.ts", {"top.ts"}),
                        (f"{tree}/*.ts", {"top.ts"}), ("/*.ts", {"top.ts"}), (f"{tree}/v4/../v4/classic",
                                                                           {"v4/classic/schemas.ts"})):
        # (a trial's `./binding` and `/tmp/gin/binding`, as a shell names a folder, were refused; from the top, a
        # name alone stays there)
        body = repos.post("/v1/repos/starred/search", json={"query": "parse", "path": glob}).json()
        assert {hit["path"] for hit in body["results"]} == paths, (glob, body)
    assert matches("lib/a/x.py", "lib/?/x.py") and not matches("lib/ab/x.py", "lib/?/x.py")


KILLED_INDEXER = textwrap.dedent("""
    import sys
    from pathlib import Path
    from ctxsieve.indexes.files import FileReader
    from ctxsieve.indexes.repos import RepoIndex
    from ctxsieve.indexes.store import open_store
    from ctxsieve.ingest.tokens import load_tokenizer
    root, data, cache = Path(sys.argv[1]), Path(sys.argv[2]), Path(sys.argv[3])
    index = RepoIndex(open_store(data), FileReader([root], 1 << 24), load_tokenizer("o200k_base", cache),
                      progress=lambda name, done, total: print(done, flush=True))
    index.register("default", "crash", str(root))
    index.sync("default", "crash", wait=True)
    print("finished", flush=True)
""")


def test_kill_9_mid_index_leaves_every_file_whole(tmp_path: Path) -> None:
    from ctxsieve.indexes.files import FileReader
    from ctxsieve.indexes.repos import RepoIndex
    from ctxsieve.indexes.store import open_store
    from tests.conftest import CACHE

    root = tmp_path / "big"
    root.mkdir()
    for i in range(1200):
        (root / f"m{i:04}.py").write_text("".join(f"def f{i}_{j}(a, b):\n    return a + b + {j}\n\n\n"
                                                  for j in range(20)))
    data = tmp_path / "data"
    child = subprocess.Popen([sys.executable, "-c", KILLED_INDEXER, str(root), str(data), str(CACHE / "tiktoken")],
                             stdout=subprocess.PIPE, text=True)
    assert child.stdout is not None
    line = child.stdout.readline()  # the first batch of files is in the store
    assert line.strip().isdigit(), line
    os.kill(child.pid, signal.SIGKILL)
    child.wait()

    from ctxsieve.ingest.tokens import load_tokenizer

    index = RepoIndex(open_store(data), FileReader([root], 1 << 24), load_tokenizer("o200k_base", CACHE / "tiktoken"))
    try:
        info = index.sync("default", "crash", wait=True)
        assert info.files == 1200 and info.definitions == 1200 * 20 and info.error is None, info
        hit = index.search("default", "crash", "f1199_7", k=1).results[0]
        assert (hit.path, hit.name, hit.start_line, hit.end_line) == ("m1199.py", "f1199_7", 29, 30)
    finally:
        index.close()


def ready(client: TestClient, name: str, timeout: float = 120) -> dict:  # type: ignore[type-arg]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        info = client.get(f"/v1/repos/{name}").json()
        if info["state"] == "ready":
            return info  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError(f"{name} not ready: {info}")


@pytest.mark.slow
def test_vectors_fill_in_behind_the_lexical_index_and_find_what_no_word_matches(tmp_path: Path) -> None:
    """The real model: `lexical` first, `ready` once every definition has its vector; then a request that shares
    no word with the code finds it by meaning; after an edit, the new definition too."""
    root = tmp_path / "geo"
    (root / "geo").mkdir(parents=True)  # (the project's name in every path, as httpx's is)
    (root / "geo" / "places.py").write_text(textwrap.dedent('''\
        import math


        def gc(a, b, c, d):
            """How far apart two places on the globe are, in kilometres."""
            p = math.sin((c - a) / 2) ** 2 + math.cos(a) * math.cos(c) * math.sin((d - b) / 2) ** 2
            return 6371 * 2 * math.asin(math.sqrt(p))
        '''))
    (root / "geo" / "dates.py").write_text('def parse(s):\n    """Read a day, month and year from text."""\n'
                                           '    return s.split("-")\n')
    (root / "geo" / "paint.py").write_text('def mix(x, y):\n    """Blend two colours for a palette."""\n'
                                           '    return (x + y) / 2\n')
    (root / "geo" / "report.py").write_text('def format_total(value):\n    """A total as the report shows it."""\n'
                                            '    return f"{value:.2f}"\n\n\n'
                                            'def format_day(day):\n    """A day as the report shows it."""\n'
                                            '    return day.isoformat()\n')
    (root / "tests").mkdir()
    (root / "tests" / "test_places.py").write_text("from geo.places import gc\n\n\ndef test_gc():\n"
                                                   "    assert gc(0, 0, 0, 0) == 0\n")
    git(root, "init", "-q")
    client = open_client(make_settings(tmp_path / "data", read_roots=str(tmp_path)))
    try:
        assert client.put("/v1/repos/geo", json={"path": str(root)}).status_code == 202
        info = ready(client, "geo")
        assert info["progress"]["vectors_left"] == 0 and info["definitions"] >= 3, info
        body = client.post("/v1/repos/geo/search", json={"query": "distance between two cities", "k": 3}).json()
        assert body["state"] == "ready" and body["results"][0]["name"] == "gc" and not body["by_meaning"], body
        # no word of the request is the code's: the nearest by meaning, said so (before: every definition re-ranked
        # from nothing, as if the words had found it)
        body = client.post("/v1/repos/geo/search", json={"query": "两座城市相距多远", "k": 3}).json()
        assert body["by_meaning"] and body["results"][0]["name"] == "gc" and not body["foreign_words"], body
        assert "nearest by meaning alone" in render_hits(CodeSearchResult.from_json(body))
        # its English words find the report's code and its Chinese ones nothing: said so, and what to do (a user
        # trial read "WebSocket 心跳超时在哪里处理" answered with WebSocket code and no heartbeat, and no word why)
        body = client.post("/v1/repos/geo/search", json={"query": "report format 两座城市相距多远", "k": 3}).json()
        assert body["foreign_words"] and not body["by_meaning"] and body["results"][0]["path"] == "geo/report.py"
        said = render_hits(CodeSearchResult.from_json(body))
        assert "Chinese, Japanese or Korean are in no definition: they only re-rank by meaning" in said, said
        # its one English word is the project's own name: by meaning, as if it had none (a trial's "httpx
        # 的超时配置在哪里定义" got the definitions `httpx` picked, none of them about timeouts)
        body = client.post("/v1/repos/geo/search", json={"query": "geo 两座城市相距多远", "k": 3}).json()
        assert body["by_meaning"] and body["results"][0]["name"] == "gc", body
        assert "none has a word or name of the request but the project's own name" in render_hits(  # (a trial:
            CodeSearchResult.from_json(body)), body  # "none has a word", of a question holding `faraday`)
        # under a path of tests alone, which have no vectors: what the name found, not nothing
        body = client.post("/v1/repos/geo/search",
                           json={"query": "geo 两座城市相距多远", "k": 3, "path": "tests"}).json()
        assert not body["by_meaning"] and body["results"][0]["path"] == "tests/test_places.py", body
        english = client.post("/v1/repos/geo/search", json={"query": "report format", "k": 3}).json()
        assert not english["foreign_words"], english
        for nothing in ("城市距离的测试", "!!!"):  # tests asked for (they have no vectors), no word at all
            # (spaces alone are refused: test_bad_input)
            body = client.post("/v1/repos/geo/search", json={"query": nothing, "k": 3}).json()
            assert not body["by_meaning"] and body["results"] == [] and not body["foreign_words"], (nothing, body)

        (root / "geo" / "paint.py").write_text(
            'def mix(x, y):\n    """Blend two colours for a palette."""\n    return (x + y) / 2\n\n\n'
            'def brightness(rgb):\n    """How light a colour looks to the eye."""\n    return sum(rgb) / 3\n')
        assert client.post("/v1/repos/geo/sync").status_code == 202
        info = ready(client, "geo")
        body = client.post("/v1/repos/geo/search", json={"query": "luminance of a shade", "k": 3}).json()
        assert body["results"][0]["name"] == "brightness", body
    finally:
        client.__exit__(None, None, None)


def test_a_source_file_in_the_encoding_its_first_line_declares_is_read_in_it(tmp_path: Path) -> None:
    """A Latin-1 file with a PEP 263 line (`# -*- coding: latin-1 -*-`) was read as UTF-8: `café_name` was named
    `_name` and shown as `caf\ufffd_name`. One with no declaration still reads as UTF-8, its bad bytes replaced."""
    from ctxsieve.indexes.repos.walk import read_source
    from ctxsieve.ingest.coderank.units import units_of

    source = "# -*- coding: latin-1 -*-\ndef café_name():\n    return 'résumé'\n"
    (tmp_path / "latin.py").write_bytes(source.encode("latin-1"))
    (tmp_path / "bare.py").write_bytes(b"x = '\xe9'\n")
    read = read_source(tmp_path, "latin.py")
    assert read.text == source
    assert [u.name for u in units_of("latin.py", read.text or "") if u.kind == "function"] == ["café_name"]
    assert read_source(tmp_path, "bare.py").text == "x = '\ufffd'\n"
    for name, declared in (("undefined.py", b"# coding: undefined\n"), ("escape.py", b"# coding: unicode_escape\n")):
        (tmp_path / name).write_bytes(declared + b"x = 'a\\nb' \xe9\ny = 1\n")  # an encoding that does not exist,
        text = read_source(tmp_path, name).text or ""  # and one that would turn `\n` into a line of its own: UTF-8
        assert text.split("\n")[2] == "y = 1" and "\ufffd" in text, text


def test_a_place_the_query_points_at_is_shown_around_its_line(repos: TestClient, roots: Path) -> None:
    """`app.py:1200` (or a traceback's frame) asked for a long definition whose cut showed its first lines only: the
    line asked for was not among them. Now the hit is shown around that line, the lines above and below it said
    not shown with how to read them; with the budget for all of it, it is shown whole."""
    tree = roots / "placed"
    tree.mkdir()
    body = "".join(f"    step_{i} = compute(value, {i})\n" for i in range(120))
    (tree / "app.py").write_text(f"def make_response(value):\n{body}    raise TypeError('the view returned None')\n")
    assert repos.put("/v1/repos/placed", json={"path": str(tree)}).status_code == 202
    indexed(repos, "placed")
    lines = (tree / "app.py").read_text().split("\n")
    frame = 'File "/srv/app/app.py", line 122, in make_response\nTypeError: the view returned None'
    for query in ("app.py:122", frame):
        body_json = repos.post("/v1/repos/placed/search", json={"query": query, "max_tokens": 300,
                                                                 "windows": True}).json()
        result = CodeSearchResult.from_json(body_json)
        hit = result.results[0]
        assert (hit.name, hit.start_line, hit.end_line) == ("make_response", 1, 122), hit
        assert hit.shown_start_line > 1 and hit.shown_end_line == 122, hit
        assert hit.text == "\n".join(lines[hit.shown_start_line - 1 : hit.shown_end_line]), hit
        shown = render_hits(result)
        assert f"⋮ lines 1-{hit.shown_start_line - 1} not shown: read app.py lines 1-{hit.shown_start_line - 1}" \
            in shown and "122│    raise TypeError('the view returned None')" in shown.replace(" │", "│"), shown
        assert result.usage.output_tokens <= 300
    older = repos.post("/v1/repos/placed/search", json={"query": "app.py:122", "max_tokens": 300}).json()
    assert older["results"][0]["shown_start_line"] == 1, "a client that numbers text from start_line gets it so"
    whole = CodeSearchResult.from_json(repos.post("/v1/repos/placed/search", json={
        "query": "app.py:122", "max_tokens": 6000, "windows": True}).json()).results[0]
    assert (whole.shown_start_line, whole.shown_end_line) == (1, 122) and whole.whole, whole


def test_a_place_between_definitions_is_answered_with_those_either_side(repos: TestClient, roots: Path) -> None:
    """A trial's `schemas.ts:1200`, a blank line after a definition, was answered with one-line `// );` runs from a
    thousand lines away, and `axum/src/routing/mod.rs:194` with `axum-extra/src/routing/mod.rs` first."""
    tree = roots / "between"
    body = "".join(f"    def step_{i}(self):\n        return {i}\n\n" for i in range(40))
    for folder in ("core/routing", "extra/routing"):
        (tree / folder).mkdir(parents=True)
        (tree / folder / "router.py").write_text(f"class Router:\n{body}")  # step_3 is lines 11-12, 13 blank
    committed(tree)
    assert repos.put("/v1/repos/between", json={"path": str(tree)}).status_code == 202
    indexed(repos, "between")

    def first(query: str, k: int = 2) -> list[tuple[str, str]]:
        found = repos.post("/v1/repos/between/search", json={"query": query, "k": k}).json()
        assert found["missing"] == [] or query.endswith("9999"), found["missing"]
        assert found["between"] == [], found  # (a blank line between two methods is in their class)
        return [(hit["path"], hit["name"]) for hit in found["results"]]

    assert first("core/routing/router.py:13") == [("core/routing/router.py", "Router.step_3"),
                                                   ("core/routing/router.py", "Router.step_4")]
    assert first("extra/routing/router.py:14")[0] == ("extra/routing/router.py", "Router.step_4")
    assert first("core/routing/router.py:12", 1) == [("core/routing/router.py", "Router.step_3")]
    assert first("core/routing/router.py:9999", 1) == [("core/routing/router.py", "Router.step_39")]


def test_a_listing_of_a_file_says_how_many_more_it_holds(repos: TestClient, roots: Path) -> None:
    """A trial listed axum's ws.rs: its first 10 definitions, to line 203 of 1,267, closed with "10 definitions ...",
    nothing saying the file held more; and "best first" of definitions in the file's order. The rest is read on from
    the last one shown (fmt's base.h holds 448: no k reaches them)."""
    tree = roots / "listing-more"
    tree.mkdir()
    (tree / "many.py").write_text("".join(f"def step_{i}():\n    return {i}\n\n\n" for i in range(30)))
    (tree / "other.py").write_text("def many():\n    return 'many'\n")
    committed(tree)
    assert repos.put("/v1/repos/listing-more", json={"path": str(tree)}).status_code == 202
    indexed(repos, "listing-more")
    for k, shown in ((5, 5), (30, 30), (50, 30)):
        body = repos.post("/v1/repos/listing-more/search", json={"query": "many.py", "k": k, "max_tokens": 6000}).json()
        result = CodeSearchResult.from_json(body)
        assert [h.name for h in result.results] == [f"step_{i}" for i in range(shown)], (k, result.results)  # (no
        # other file's definitions after a short file's: other.py's `many` had come last)
        closing = render_hits(result).rsplit("\n", 1)[-1]
        more = (f"; {30 - shown} more found are not shown, after the last one shown: read on from its last line, or "
                "search with a larger max_tokens or k") if shown < 30 else ""  # (a trial's 448-definition file was
        # not to be listed past k's and max_tokens' most)
        assert closing.startswith(f"[ctxsieve search_code: {len(result.results)} definitions of repository "
                                  f"listing-more, in their files' order{more}"), closing
        assert ("more found" in closing) == (shown < 30) and result.listing, closing
    ranked = CodeSearchResult.from_json(repos.post("/v1/repos/listing-more/search", json={"query": "step"}).json())
    assert not ranked.listing and "best first" in render_hits(ranked), render_hits(ranked)


def test_a_listing_counts_only_the_files_it_lists(repos: TestClient, roots: Path) -> None:
    """A trial listed axios's `lib/core/Axios.js` whole and was told "10 more found are not shown": the count took in
    `test/unit/core/Axios.js`, whose path shares the listed one's last two parts but which the listing leaves out."""
    tree = roots / "listing-count"
    (tree / "lib" / "core").mkdir(parents=True)
    (tree / "test" / "unit" / "core").mkdir(parents=True)
    (tree / "lib" / "core" / "axios.py").write_text("".join(f"def core_{i}():\n    return {i}\n\n\n" for i in range(3)))
    (tree / "test" / "unit" / "core" / "axios.py").write_text("".join(f"def test_{i}():\n    assert {i}\n\n\n"
                                                                      for i in range(5)))
    committed(tree)
    assert repos.put("/v1/repos/listing-count", json={"path": str(tree)}).status_code == 202
    indexed(repos, "listing-count")
    body = repos.post("/v1/repos/listing-count/search", json={"query": "lib/core/axios.py", "k": 50}).json()
    result = CodeSearchResult.from_json(body)
    assert [h.name for h in result.results] == ["core_0", "core_1", "core_2"] and result.listing, result.results
    assert result.usage.chunks_total == 3 and "more found" not in render_hits(result), render_hits(result)


def test_a_file_listed_by_an_installed_copys_or_an_absolute_path(repos: TestClient, roots: Path) -> None:
    """A review listed flask's `site-packages/flask/app.py` (a traceback's path) and was answered with another
    app.py's definitions, no file in order; an absolute path (`/home/me/flask/src/flask/app.py`, as agents write
    them) was not read as a file at all. Both list the checkout's own file, in its order."""
    tree = roots / "installed-listing"
    (tree / "src" / "flask" / "sansio").mkdir(parents=True)
    (tree / "src" / "flask" / "app.py").write_text("".join(f"def app_{i}():\n    return {i}\n\n\n" for i in range(3)))
    (tree / "src" / "flask" / "sansio" / "app.py").write_text("def find_app_package():\n    return 'site packages'\n")
    (tree / "manage.py").write_text("def main():\n    return 0\n")  # (at the top: `/tmp/echo/bind.go` was a search)
    committed(tree)
    assert repos.put("/v1/repos/installed-listing", json={"path": str(tree)}).status_code == 202
    indexed(repos, "installed-listing")
    top = CodeSearchResult.from_json(repos.post("/v1/repos/installed-listing/search",
                                                json={"query": f"{tree}/manage.py"}).json())
    assert [h.name for h in top.results] == ["main"] and top.listing, top
    for written in ("/usr/lib/python3.12/site-packages/flask/app.py", "site-packages/flask/app.py",
                    f"{tree}/src/flask/app.py"):
        result = CodeSearchResult.from_json(repos.post("/v1/repos/installed-listing/search",
                                                       json={"query": written}).json())
        assert [h.name for h in result.results] == ["app_0", "app_1", "app_2"] and result.listing, (written, result)


def test_a_name_many_definitions_have_says_how_many_more(repos: TestClient, roots: Path) -> None:
    """A trial looked up `render` in rich, which 29 definitions have: k of them came, and nothing said there were
    more. The count is every definition of the name (in the files `path` matches), the rest said not shown."""
    tree = roots / "many-renders"
    tree.mkdir()
    (tree / "widgets.py").write_text("".join(f"class Widget{i}:\n    def render(self):\n        return {i}\n\n\n"
                                             for i in range(12)) + "def rendering():\n    return 'render'\n")
    committed(tree)
    assert repos.put("/v1/repos/many-renders", json={"path": str(tree)}).status_code == 202
    indexed(repos, "many-renders")
    for k, path in ((3, None), (20, None), (3, "widgets.py")):
        body = repos.post("/v1/repos/many-renders/search", json={"query": "render", "k": k, "path": path}).json()
        result = CodeSearchResult.from_json(body)
        shown = min(k, 12)
        assert all(h.name.endswith(".render") for h in result.results[:shown]), result
        closing = render_hits(result).rsplit("\n", 1)[-1]
        assert result.usage.chunks_total == max(12, len(result.results)), (k, result.usage)
        assert (f"; {12 - shown} more found are not shown" in closing) == (shown < 12), closing


def test_a_name_defined_only_outside_the_path_is_said_so(repos: TestClient, roots: Path) -> None:
    """A trial searched `ZodObject.extend` under `--path packages/zod/src/v4` and was told no definition is named
    so, though v3 defines one: the answer now says it is outside the files the path matches."""
    tree = roots / "two-versions"
    for version in ("v3", "v4"):
        (tree / version).mkdir(parents=True)
    (tree / "v3" / "types.py").write_text("class ZodObject:\n    def extend(self, shape):\n        return shape\n")
    (tree / "v4" / "schemas.py").write_text("class ZodObject:\n    def merge(self, other):\n        return other\n")
    committed(tree)
    assert repos.put("/v1/repos/two-versions", json={"path": str(tree)}).status_code == 202
    indexed(repos, "two-versions")

    def closing(query: str, path: str) -> tuple[CodeSearchResult, str]:
        body = repos.post("/v1/repos/two-versions/search", json={"query": query, "path": path}).json()
        result = CodeSearchResult.from_json(body)
        return result, render_hits(result).rsplit("\n", 1)[-1]

    result, said = closing("ZodObject.extend", "v4")
    assert result.undefined == ["ZodObject.extend"] and result.outside_path == ["ZodObject.extend"], result
    assert "; no definition in the files the path matches is named ZodObject.extend, one outside them is: search " \
           "without the path to see it" in said and "; no definition is named" not in said, said
    result, said = closing("ZodObject.pick", "v4")
    assert result.outside_path == [] and "; no definition is named ZodObject.pick: these are the nearest" in said
    result, said = closing("ZodObject.extend", "v3")
    assert result.undefined == [] and result.results[0].name == "ZodObject.extend", result


def test_a_ruby_module_looked_up_is_shown_whole_and_said_to_be_defined(repos: TestClient, roots: Path) -> None:
    """A trial looked up faraday's `NestedParamsEncoder` (a `module` with a `class << self` and `extend` lines) and
    `Faraday::Utils`: the module came first but only its head, most of the budget unused, and the answer said no
    definition is named so. A module declared defines its name; of one reopened in several files, its own file's
    comes first (`Faraday::Utils` had come from `utils/headers.rb`'s wrapper)."""
    tree = roots / "ruby-modules"
    (tree / "lib" / "faraday").mkdir(parents=True)
    (tree / "lib" / "faraday" / "encoder.rb").write_text(
        "module Faraday\n  module NestedParamsEncoder\n    class << self\n      attr_accessor :sort_params\n"
        "    end\n\n    @sort_params = true\n\n    extend EncodeMethods\n    extend DecodeMethods\n  end\nend\n")
    (tree / "lib" / "faraday" / "utils").mkdir()  # (a module reopened: the one its own file holds first)
    (tree / "lib" / "faraday" / "utils" / "headers.rb").write_text(
        "module Faraday\n  module Utils\n    class Headers < Hash\n      def fetch(key)\n        1\n      end\n"
        "    end\n  end\nend\n")
    (tree / "lib" / "faraday" / "utils.rb").write_text(
        "module Faraday\n  module Utils\n    module_function\n\n    def escape(str)\n      str\n    end\n  end\nend\n")
    committed(tree)
    assert repos.put("/v1/repos/ruby-modules", json={"path": str(tree)}).status_code == 202
    indexed(repos, "ruby-modules")
    for asked in ("NestedParamsEncoder", "Faraday::NestedParamsEncoder"):
        result = CodeSearchResult.from_json(repos.post("/v1/repos/ruby-modules/search", json={"query": asked}).json())
        first = result.results[0]
        assert (first.name, first.start_line, first.end_line) == ("Faraday.NestedParamsEncoder", 2, 11), result
        assert result.undefined == [] and "no definition is named" not in render_hits(result), render_hits(result)
    result = CodeSearchResult.from_json(repos.post("/v1/repos/ruby-modules/search", json={"query": "Faraday::Utils"}
                                                   ).json())
    assert result.results[0].path == "lib/faraday/utils.rb", result


def test_a_short_searchs_words_no_definition_holds_are_said(repos: TestClient, roots: Path) -> None:
    """A trial asked faraday "how does the retry middleware decide to retry" (its retries are another gem's) and got
    ten hits that looked like any answer. The words no definition holds in any form are said; a word held in another
    form (`parameters` by `params`, `built` by `build`) is not, nor a look-up's names (said as undefined)."""
    tree = roots / "absent-words"
    tree.mkdir()
    (tree / "stack.py").write_text("def build_stack(params, middleware):\n    return [middleware(params)]\n")
    (tree / "log.py").write_text("SkipQueryString = True\n")
    committed(tree)
    assert repos.put("/v1/repos/absent-words", json={"path": str(tree)}).status_code == 202
    indexed(repos, "absent-words")

    def asked(query: str) -> CodeSearchResult:
        return CodeSearchResult.from_json(repos.post("/v1/repos/absent-words/search", json={"query": query}).json())

    result = asked("how does the retry middleware decide to retry")
    assert result.absent == ["retry", "decide"] and result.results[0].name == "build_stack", result
    assert "; no definition holds the words retry, decide: these are the nearest the search found" in \
        render_hits(result), render_hits(result)
    assert asked("where is the middleware stack built from parameters").absent == []
    assert asked("where is the querystring skipped, computed for the stack").absent == [], \
        "a word inside a name (a review: `querystring` of `SkipQueryString`); a verb's form says little"
    assert asked("retry_middleware").absent == [], "a look-up: said as undefined"


def test_an_answer_of_nothing_while_indexing_says_so() -> None:
    """A search just after a restart, while the service loaded what it holds, was answered "no definition of
    repository faraday matches; try other words": it says the repository is still being indexed."""
    from ctxsieve_client.code_search import render_answer

    assert "matches yet: the repository is still being indexed (or loaded after a start)" in render_answer(
        "faraday", [], 0, "indexing")
    assert render_answer("faraday", [], 0, "lexical").endswith("try other words, a name as it is written in the "
                                                               "code, or a wider path if one was given]")


def test_an_answer_of_nothing_to_a_question_in_chinese_says_its_words_were_not_read() -> None:
    """Two trials' questions in Chinese alone to a service making no vectors were answered
    "no definition ... matches; try other words, ... or a wider path": not that the Chinese was not read, and a path
    none was given. And at k 50 and max_tokens 6000 the answer still said to search with larger ones."""
    from ctxsieve_client.code_search import Caveats, closing_line, render_answer

    nothing = render_answer("drf", [], 0, "lexical", Caveats(foreign_words=True, vectors_off=True))
    assert "its words in Chinese, Japanese or Korean are in no definition: not read (this service makes no " \
           "vectors); the code's own names and English words find more; try other words" in nothing, nothing
    assert "or a wider path if one was given]" in nothing, nothing
    more = closing_line("celery", 50, 35, "ready")
    assert more.endswith("35 more found are not shown: a larger max_tokens or k shows more (an agent's tool takes up "
                         "to 6000 and 50), and so do a path or other words]"), more
    assert "; 1 more found is not shown: " in closing_line("celery", 10, 1, "ready")


def test_a_file_or_a_place_the_repository_has_nothing_at_is_said(repos: TestClient, roots: Path) -> None:
    """`src/requests/nosuchfile.py` and `hooks.py:4000` (a 53-line file) were answered with unrelated definitions and
    no word, and so was an empty file: now the answer says the repository has nothing there, above the nearest the
    search found."""
    tree = roots / "hooked"
    (tree / "src").mkdir(parents=True)
    (tree / "src" / "hooks.py").write_text("HOOKS = ['response']\n\n\n"
                                           "def dispatch_hook(key, hooks):\n    return hooks\n")
    (tree / "src" / "__init__.py").write_text("")  # (empty: a trial's `tests/__init__.py` got ten `__init__`s)
    (tree / ".github").mkdir()
    (tree / ".github" / "release.py").write_text("def release():\n    pass\n")
    committed(tree)  # (a git repository's tracked dot-folder is indexed)
    assert repos.put("/v1/repos/hooked", json={"path": str(tree)}).status_code == 202
    indexed(repos, "hooked")
    for query, missing in (("src/nosuchfile.py", ["src/nosuchfile.py"]), ("src/hooks.py:4000", ["src/hooks.py:4000"]),
                           ("src/__init__.py", ["src/__init__.py"]),
                           ("src/hooks.py:5", []), ("src/hooks.py:3", []), ("hooks.py", []),  # a blank line: there
                           (".github/release.py", [])):  # (its leading dot was stripped: `github/release.py`)
        result = CodeSearchResult.from_json(repos.post("/v1/repos/hooked/search", json={"query": query}).json())
        assert result.missing == missing, (query, result)
        assert result.between == (["src/hooks.py:3"] if query == "src/hooks.py:3" else []), (query, result)
        assert result.listing == (query in ("hooks.py", ".github/release.py")), (query, result)  # (ranked, else)
        if missing:
            assert f"its indexed source has nothing at {missing[0]}" in render_hits(result), render_hits(result)
    blank = render_hits(CodeSearchResult.from_json(repos.post("/v1/repos/hooked/search", json={
        "query": "src/hooks.py:3"}).json()))
    assert "src/hooks.py:3 is in no definition (a blank line or a comment outside them): the nearest definitions " \
        "are shown" in blank and blank.startswith("src/hooks.py:"), blank
    many = " ".join(f"src/gone{i}.py" for i in range(40))  # every one listed: a 758-token answer of a 50 one
    body = repos.post("/v1/repos/hooked/search", json={"query": many, "max_tokens": 200}).json()
    assert len(body["missing"]) == 40 and body["usage"]["output_tokens"] <= 200, body["usage"]
    assert "src/gone0.py, src/gone1.py, src/gone2.py and 37 more" in render_hits(CodeSearchResult.from_json(body))


def test_a_search_shows_k_definitions_when_those_it_widens_hold_many_hits(repos: TestClient, roots: Path) -> None:
    """A trial's `TypeAdapterFactory` at k 10 showed 7, and nothing said more were found (k 20 showed 18): the
    interface looked up was shown whole and the hits inside it, its methods, left out of the 2k looked through."""
    tree = roots / "widened"
    tree.mkdir()
    methods = "".join(f"    def render_{i}(self):\n        return Widget({i})\n\n" for i in range(30))
    (tree / "widget.py").write_text(f"class Widget:\n    '''A Widget.'''\n\n{methods}")
    (tree / "makers.py").write_text("".join(f"def make_{i}():\n    return Widget({i})\n\n\n" for i in range(12)))
    committed(tree)
    assert repos.put("/v1/repos/widened", json={"path": str(tree)}).status_code == 202
    indexed(repos, "widened")
    result = CodeSearchResult.from_json(repos.post("/v1/repos/widened/search", json={
        "query": "Widget", "k": 10, "max_tokens": 6000}).json())
    assert result.results[0].name == "Widget" and result.results[0].whole, result.results[0]
    assert len(result.results) == 10 and all(h.path == "makers.py" for h in result.results[1:]), result.results


def test_a_rust_trait_impls_method_says_its_impl_over_http(repos: TestClient, roots: Path) -> None:
    """The impl a method is in (`within`) reaches the response and its head line, as the model reads it: axum's two
    `Json.from_request` (`FromRequest`, `OptionalFromRequest`) read alike."""
    tree = roots / "traits"
    tree.mkdir()
    (tree / "json.rs").write_text(
        "pub struct Json<T>(pub T);\n\nimpl<T, S> FromRequest<S> for Json<T> {\n    fn from_request() -> Self {\n"
        "        todo!()\n    }\n}\n\nimpl<T, S> OptionalFromRequest<S> for Json<T> {\n"
        "    fn from_request() -> Self {\n        todo!()\n    }\n}\n")
    committed(tree)
    assert repos.put("/v1/repos/traits", json={"path": str(tree)}).status_code == 202
    indexed(repos, "traits")
    body = repos.post("/v1/repos/traits/search", json={"query": "Json.from_request", "k": 2}).json()
    assert [(hit["start_line"], hit["within"]) for hit in body["results"]] == [
        (4, "impl<T, S> FromRequest<S> for Json<T>"), (10, "impl<T, S> OptionalFromRequest<S> for Json<T>")], body
    answer = render_hits(CodeSearchResult.from_json(body))
    assert "json.rs:10-12 method Json.from_request (in impl<T, S> OptionalFromRequest<S> for Json<T>)\n" in answer
