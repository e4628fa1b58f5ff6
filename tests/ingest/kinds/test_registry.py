"""The kinds as one family: detection order, exact offsets whatever the kind, one list of kinds."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from ctxsieve.ingest.normalize import detect_content_type

from .cutting import assert_exact, chunks_of


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=3000),
       st.sampled_from(["text", "markdown", "code"]))
def test_offsets_are_exact_for_any_unicode(tokenizer, text: str, kind: str) -> None:
    view, chunks = chunks_of(text, tokenizer, kind, target=32)
    assert view.text == text
    assert_exact(view, chunks, 32)
    covered = "".join(view.text[c.start : c.end] for c in chunks)
    assert "".join(covered.split()) == "".join(text.split()), "no visible character is dropped"


@pytest.mark.parametrize(("text", "kind"), [
    ('{"a": [1, 2]}', "json"),
    ("<!DOCTYPE html><html><body><p>Hello</p></body></html>", "html"),
    ("# Title\n\n- item one\n- item two\n", "markdown"),
    ("def f():\n    return 1\n\nclass A:\n    pass\nimport os\n", "code"),
    ("Plain words, nothing else.", "text"),
])
def test_content_type_detection(text: str, kind: str) -> None:
    assert detect_content_type(text) == kind


def test_the_kinds_are_listed_once_and_every_edge_agrees() -> None:
    """The registry is the list; the API's schema and the light client (which cannot import the core) spell the
    same names; how each is shown travels in its responses (`view`), so no surface lists them."""
    from typing import get_args

    from ctxsieve.ingest.kinds import CONTENT_TYPES, KINDS, LINE_KINDS
    from ctxsieve.service.schemas.common import ContentTypeIn
    from ctxsieve_client.client import ContentType

    assert len(set(CONTENT_TYPES)) == len(KINDS) and CONTENT_TYPES[-1] == "text", "text claims what no other does"
    assert set(get_args(ContentTypeIn)) == {"auto", *CONTENT_TYPES} == set(get_args(ContentType))
    assert set(LINE_KINDS) == {"code", "log", "diff", "grep"}


def test_a_script_is_code_whatever_its_comments_look_like() -> None:
    """bats's `libexec/bats-core/bats` (no suffix, `#!/usr/bin/env bash`, its usage in `#` comments) was read as
    markdown: its lines cut inside, their indentation gone. A `#!` line naming an interpreter makes it code, as the
    repository index reads it; an unknown interpreter, or `#!` further down, does not."""
    from ctxsieve.ingest.kinds import resolve

    script = ("#!/usr/bin/env bash\n# Usage: bats [OPTIONS] <tests>\n# Options:\n#   -c, --count  Count tests\n\n"
              "abort() {\n  printf 'Error: %s\\n' \"$1\" >&2\n  exit 1\n}\n")
    assert detect_content_type(script) != "code", "fixture: detection alone does not say code"
    assert resolve("auto", script, "libexec/bats-core/bats").name == "code"
    assert resolve("auto", script).name == "code"
    assert resolve("auto", script.replace("bash", "awk", 1)).name == detect_content_type(script)
    assert resolve("log", script).name == "log", "a kind the caller names holds"
