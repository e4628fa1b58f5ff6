"""JSON: flattened to path: value lines, exact offsets, each chunk named by its record."""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from .cutting import assert_exact, chunks_of


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=200),
                    lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=10), inner,
                                                                                 max_size=5), max_leaves=40))
def test_json_offsets_are_exact(tokenizer, value: object) -> None:
    view, chunks = chunks_of(json.dumps(value), tokenizer, "json", target=32)
    assert_exact(view, chunks, 32)


def test_json_chunks_name_their_record(tokenizer) -> None:
    response = {"query": "q", "results": [{"title": f"Page {i}", "url": f"https://x/{i}",
                                           "content": f"Body of page {i}. " * 30} for i in range(4)]}
    view, chunks = chunks_of(json.dumps(response), tokenizer, "auto", target=80)
    assert view.content_type == "json"
    assert any(c.context == "results[2] (Page 2)" for c in chunks)
    for c in chunks:
        if c.context.startswith("results[2]"):
            assert "results[3]" not in view.text[c.start : c.end], "records are never mixed in one chunk"
