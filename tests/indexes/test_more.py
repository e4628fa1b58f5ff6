"""The placeholder: the same facts in each surface's words, byte for byte the same for the same facts."""

from __future__ import annotations

import pytest

from ctxsieve.indexes.more import STYLES, More, Rerun

FILTERED = More(ref="src_1", chunks_shown=3, chunks_total=74, input_tokens=37312, output_tokens=304,
                rerun=Rerun(tool="search_web", args={"query": "brand A 投诉"}))


def test_http_speaks_the_routes_as_before() -> None:
    """These strings are what every build before `more` served: an agent's cached prompt still matches."""
    assert FILTERED.placeholder("http") == (
        '[ctxsieve src_1: 3 of 74 chunks shown, 37312 -> 304 tokens; more: POST /v1/refs/src_1/filter; '
        'whole: GET /v1/refs/src_1; re-run: search_web(query="brand A 投诉")]')
    whole = More(ref="src_2", chunks_shown=2, chunks_total=2, input_tokens=90, output_tokens=90, shown="whole")
    assert whole.placeholder("http") == \
        "[ctxsieve src_2: whole output shown, 90 tokens; more: POST /v1/refs/src_2/filter; whole: GET /v1/refs/src_2]"
    none = More(ref="src_3", chunks_shown=0, chunks_total=9, input_tokens=900, output_tokens=0, shown="none",
                min_score=0.99)
    assert none.placeholder("http").startswith("[ctxsieve src_3: no chunk of 9 reached min_score 0.99, 900 tokens held")
    search = More(ref=None, chunks_shown=4, chunks_total=40, input_tokens=9000, output_tokens=500, pages=3,
                  rerun=Rerun(tool="search", args={"query": "q"}))
    assert search.placeholder("http") == (
        "[ctxsieve search: 4 of 40 chunks from 3 pages shown, 9000 -> 500 tokens; more: POST /v1/refs/<result ref>/"
        'filter; whole page: GET /v1/refs/<result ref>; re-run: search(query="q")]')
    collection = More(ref=None, chunks_shown=2, chunks_total=80, input_tokens=700, output_tokens=150,
                      collection="glossary")
    assert collection.placeholder("http") == (
        "[ctxsieve collection glossary: 2 of 80 chunks shown, 150 tokens; more: "
        "POST /v1/collections/glossary/query with another query, k or max_tokens]")


def test_tools_style_names_the_tool_calls_and_no_route() -> None:
    line = FILTERED.placeholder("tools")
    assert line == ('[ctxsieve src_1: 3 of 74 chunks shown, 37312 -> 304 tokens; more: filter_ref(ref="src_1", '
                    'query="..."); whole: fetch_ref(ref="src_1"); re-run: search_web(query="brand A 投诉")]')
    collection = More(ref=None, chunks_shown=1, chunks_total=5, input_tokens=70, output_tokens=15, collection="g")
    assert 'query_collection(collection="g", query="...")' in collection.placeholder("tools")
    search = More(ref=None, chunks_shown=1, chunks_total=5, input_tokens=70, output_tokens=15, pages=1,
                  rerun=Rerun(tool="search", args={"query": "q"}))
    for more in (FILTERED, collection, search):
        assert "/v1/" not in more.placeholder("tools")


@pytest.mark.parametrize("style", STYLES)
def test_each_style_is_deterministic(style: str) -> None:
    again = More(ref="src_1", chunks_shown=3, chunks_total=74, input_tokens=37312, output_tokens=304,
                 rerun=Rerun(tool="search_web", args={"query": "brand A 投诉"}))
    assert FILTERED.placeholder(style) == again.placeholder(style)  # type: ignore[arg-type]


def test_no_results_says_how_to_run_the_search_again() -> None:
    empty = More(ref=None, chunks_shown=0, chunks_total=0, input_tokens=0, output_tokens=0, pages=0,
                 rerun=Rerun(tool="search", args={"query": "q"}))
    expected = '[ctxsieve search: no results; re-run: search(query="q")]'
    assert empty.placeholder("tools") == empty.placeholder("http") == expected
