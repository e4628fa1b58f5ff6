"""The one cutting rule the gateway, the hook and the middleware share, against the real app: a long intent (a
conversation's turns) is sent as its end, within the API's query limit, rather than refused."""

from __future__ import annotations

from ctxsieve_client import Client
from ctxsieve_client.cutting import MAX_INTENT_CHARS, CutOptions, cut_request, cut_text


def test_a_conversation_longer_than_the_query_limit_is_cut_by_its_latest_words(stub_url: str) -> None:
    options = CutOptions(passthrough_tokens=50, max_tokens=200)
    output = "\n\n".join(f"Paragraph {i}: the parcel {i} was delivered to flat {i}." for i in range(300))
    intent = "earlier turns about something else. " * 300 + "which parcel went to flat 42?"
    call = cut_request(output, intent, "read_file", {"path": "log.txt", "api_key": "s3cret"}, options)
    assert call is not None and len(intent) > MAX_INTENT_CHARS
    assert call.body["query"] == intent[-MAX_INTENT_CHARS:] and call.body["source"]["args"]["api_key"] != "s3cret"
    with Client(stub_url) as client:
        shown = cut_text(client.send(call), options)
    assert shown is not None and "[ctxsieve src_" in shown and len(shown) < len(output)
    assert cut_request("small", intent, "read_file", {}, options) is None, "small output passes as it is"


def test_the_clients_source_files_are_the_services() -> None:
    """One table of source files: the code kind's grammars, the file reader's kinds and the surfaces' cut rule."""
    from pathlib import Path

    from ctxsieve.indexes.files import SUFFIX_TYPES
    from ctxsieve.ingest.kinds import code
    from ctxsieve_client import languages
    from ctxsieve_client.cutting import names_source_file

    assert code.LANGUAGES is languages.LANGUAGES
    assert all(SUFFIX_TYPES[suffix] == "code" for suffix in languages.LANGUAGES)
    assert all(names_source_file({"file_path": f"a{suffix}"}) for suffix in languages.LANGUAGES)
    assert not names_source_file({"file_path": "a.yaml"}) and Path("a.yaml").suffix not in languages.LANGUAGES


def test_the_proxy_tells_an_error_text_as_compaction_does() -> None:
    """The proxy leaves an OpenAI tool message whole by the texts `/v1/context/compact` never clears."""
    from ctxsieve.indexes import compaction
    from ctxsieve_client.proxy import formats

    assert formats.ERROR_STARTS == compaction.ERROR_STARTS


def test_a_source_file_leaves_its_budget_to_the_service() -> None:
    from ctxsieve_client.cutting import PROSE_TOKENS, CutOptions, cut_request

    big = "x = 1\n" * 2000
    code = cut_request(big, "why", "Read", {"file_path": "/repo/app.py"}, CutOptions())
    prose = cut_request(big, "why", "Read", {"file_path": "/repo/notes.md"}, CutOptions())
    mine = cut_request(big, "why", "Read", {"file_path": "/repo/app.py"}, CutOptions(max_tokens=700))
    assert code is not None and prose is not None and mine is not None
    assert code.body is not None and "max_tokens" not in code.body, "the service's rule for code"
    assert prose.body is not None and prose.body["max_tokens"] == PROSE_TOKENS
    assert mine.body is not None and mine.body["max_tokens"] == 700, "a budget the user set holds for code too"
    script = "#!/usr/bin/env bash\n# Usage: bats [OPTIONS] <tests>\n" + 'echo "$1"\n' * 2000
    command = cut_request(script, "why", "Read", {"file_path": "/repo/libexec/bats-core/bats"}, CutOptions())
    assert command is not None and command.body is not None and "max_tokens" not in command.body, "a script is code"


def test_a_cut_no_shorter_than_the_output_is_not_used() -> None:
    """Headings, separators and the placeholder are the surface's: a cut of an output just over the budget can come
    out longer than the output itself (seen on a 1,536-token grep result), and then the output passes whole."""
    from ctxsieve_client.models import FilterResult

    lines = [f"src/app.py:{i}:    def handler_{i}(self):" for i in range(1, 60)]
    snippets = [{"id": f"src_1#{i}", "text": line, "score": 0.5, "start": 0, "end": 1, "tokens": 10,
                 "line_start": i + 1, "line_end": i + 1} for i, line in enumerate(lines[:45])]
    result = FilterResult.from_json({"ref": "src_1", "placeholder": "[ctxsieve src_1: 30 of 59 chunks shown]",
                                     "usage": {"input_tokens": 1536, "output_tokens": 754, "saved_ratio": 0.5,
                                               "chunks_total": 59, "chunks_returned": 30},
                                     "snippets": snippets, "content_type": "log",
                                     "view": {"by_lines": True, "headed": True, "numbered": True}})
    options = CutOptions()
    shown = cut_text(result, options)
    assert shown is not None
    assert cut_text(result, options, original="\n".join(lines)) is None, "longer than the output: passes whole"
    assert cut_text(result, options, original="\n".join(lines) * 3) == shown
