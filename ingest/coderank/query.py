"""A request read as code is written: its terms, the identifiers it writes as code, the files and modules it names,
and its traceback frames. One reading serves every cut of code (a file, a grep, a repository search)."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

from ctxsieve_client.languages import LANGUAGES

from ..analyzers import code_terms
from ..request import Frame, installed_part, is_frame_line, outside_frames, read_request, without_generics
from .units import last_part, operator_of

__all__ = ["SEARCH_WORDS", "CodeQuery", "asks_for_tests", "code_shaped", "file_keys", "lookup_names",
           "message_phrases", "read_code_query", "said_phrases"]

_SUFFIXES = "|".join(sorted((s.lstrip(".") for s in LANGUAGES), key=len, reverse=True))
# a file name of several dots too, written with its folder or with a marker the ecosystems put there (hono's
# `components.test.tsx`, `index.spec.ts`, `jquery.min.js`, `types.d.ts` were read as words); without one, a qualified
# name ending in a letter a suffix has (`torch.Tensor.t`, `i18n.global.t`) is a name, not a file
_FILE_MARKERS = "test|tests|spec|specs|e2e|min|d|config|module|service|stories|story|mock|mocks|setup|bench|slim|umd"
_FILE = re.compile(rf"(?<![\w/.@+-])(/?(?:[\w.@+-]+/)+[\w-]+(?:\.[\w-]+)*\.(?:{_SUFFIXES})"
                   rf"|[\w-]+(?:\.(?:{_FILE_MARKERS}))*\.(?:{_SUFFIXES}))\b")
_LEADING_DOTS = re.compile(r"^(?:\.\.?/)+")  # `./pkg/a.py`, `../pkg/a.py`: not `.github/...`'s dot
_MODULE = re.compile(r"\b([a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*){1,8})\b")


@dataclass(frozen=True)
class CodeQuery:
    text: str
    terms: tuple[str, ...]  # code_terms of the whole request
    names: frozenset[str]  # identifiers written as code (backticks, calls, dotted paths, snake/CamelCase, frames)
    pairs: frozenset[tuple[str, str]]  # `Outer.inner` as written
    frames: tuple[Frame, ...]
    files: tuple[str, ...]  # file paths as written (`lib/ansible/vars/manager.py`, `manager.py`)
    modules: tuple[str, ...]  # dotted module paths as written (`ansible.vars.manager`)
    lookup: frozenset[str] = frozenset()  # the names a request made of names alone asks for (`lookup_names`)
    tests: bool = False  # a search that asks for tests (`asks_for_tests`)
    at_lines: bool = False  # a request of nothing but places (`tree.go:452`, `src/lib.rs:120:5`): what lies there
    paths_only: bool = False  # a request of nothing but file paths (`binding/form_mapping.go`): those files' units
    short: bool = False  # a search of at most SEARCH_WORDS words (an agent's, not an issue): its words by stem too
    # a short search's error messages and quoted strings, runs of words (`message_phrases`); an issue's are not read
    # so: on the localization dev split they lowered file Acc@1 by 2 cases (the fix is seldom where the error is raised)
    phrases: tuple[str, ...] = ()
    trace: bool = False  # a stack trace pasted, with at most TRACE_WORDS words besides its frames (not an issue's)
    # a short search of words with no error line nor quoted string, read as a message printed as it is pasted
    # (`Overlapping method route. Handler for `GET /users` already exists`): its runs of words (`said_phrases`),
    # which count where a definition holds SAID_WORDS of one verbatim
    said: tuple[str, ...] = ()

    @property
    def deprecation(self) -> bool:
        """The request speaks of deprecation (`deprecated`, `obsolete`): a deprecated definition counts whole."""
        return any(term.startswith(("deprecat", "obsolet")) for term in self.terms)

    def names_file(self, path: str) -> int:
        """How closely the request names this file: 2 its path (or its module's dotted path, two parts or more; or a
        longer path ending in the whole of it), 1 its file name alone (`manager.py`), else 0."""
        if not self.files and not self.modules:
            return 0
        own, dotted = _forms(path)
        if not own:
            return 0
        best = 0
        for written in self.files:
            parts = tuple(installed_part(written).lstrip("/").split("/"))
            if len(parts) <= len(own) and own[-len(parts):] == parts:
                best = max(best, 2 if len(parts) > 1 else 1)
            elif 2 <= len(own) < len(parts) and parts[-len(own):] == own:  # a longer path ending in the whole of
                best = 2  # this one: a frame's `dist-packages/astroid/inference_tip.py` is `astroid/inference_tip.py`
        for module in self.modules:
            if dotted == module or dotted.endswith("." + module):
                best = 2
        return best

    def file_keys(self) -> tuple[frozenset[str], frozenset[str]]:
        """What a file must be called for `names_file` to name it: one of these file names, or a module path whose
        last part is one of these (see `file_keys`, the same of a path)."""
        return (frozenset(w.rsplit("/", 1)[-1] for w in self.files),
                frozenset(m.rsplit(".", 1)[-1] for m in self.modules))


def file_keys(path: str) -> tuple[str, str]:
    """A path's file name and its dotted module path's last part: `CodeQuery.names_file` gives more than 0 only to
    a path whose file name is among the request's written files' names, or whose module path's last part is among
    its modules' last parts (a path ending in the written parts ends in their last one)."""
    own, dotted = _forms(path)
    return (own[-1] if own else ""), dotted.rsplit(".", 1)[-1]


@lru_cache(maxsize=1 << 16)
def _forms(path: str) -> tuple[tuple[str, ...], str]:
    """A path's parts, and its dotted module path without the suffix."""
    pure = PurePosixPath(path)
    if not pure.name:  # no file (code sent without a path): nothing to name
        return (), ""
    return pure.parts, ".".join(pure.with_suffix("").parts)


# a word prose hyphenates and code writes as one (`f-string` is black's `visit_fstring`, `e-mail` an `email`,
# `built-in` a `builtin`): its parts joined, a term besides them
_HYPHENATED = re.compile(r"(?<![\w-])([A-Za-z]{1,12})-([A-Za-z]{2,12})(?![\w-])")
# English's possessive `'s` ("a request's timeout"): no word, but the term `s` met every `$s` and `'s'` of a PHP
# repository and sank guzzle's timeout code from first to seventeenth
_POSSESSIVE = re.compile(r"(?<=[A-Za-z])['’]s\b")


# code abbreviates a phrase by its initials (shellcheck's `checkUuoc`: "useless use of cat"): in a search of a few
# words, each run of 4 plain words is also the term of its initials; runs of 3 (`lru`, `ttl`) were tried on semble's
# dev queries and lost two (their initials met unrelated identifier parts), gaining none
_PLAIN_WORD = re.compile(r"(?<![\w.-])[A-Za-z]+(?![\w-])")
INITIALS = (4,)


def initialisms(text: str) -> tuple[str, ...]:
    """The initials of each run of INITIALS consecutive plain words ("useless use of cat": `uuoc`)."""
    words = [w.lower() for w in _PLAIN_WORD.findall(text)]
    return tuple(dict.fromkeys("".join(w[0] for w in words[i:i + n]) for n in INITIALS
                               for i in range(len(words) - n + 1)))


# a function named with its arity, as Elixir and Erlang write one (`Plug.Conn.assign/3`, `put_resp_header/3`): the
# name (`assign/3` alone had ranked `merge_assigns` first)
_ARITY = re.compile(r"(?<![\w/.-])((?:[A-Z]\w*\.)*[a-z_]\w*[!?]?)/\d{1,2}(?![\w/.])")


# a jar's path before its own (`.../jackson-core-2.19.1-sources.jar!/com/fasterxml/jackson/core/JsonFactory.java`):
# the path inside it is the package's
_IN_JAR = re.compile(r"(?<!\S)\S*?\.jar!/")
# a place as PHP's errors write it (`PHP Warning:  ... in /app/src/RedirectMiddleware.php on line 152`) and as people
# do: the place `path:line`
_ON_LINE = re.compile(rf"(?<![\w./\\@+-])([\w./\\@+-]+\.(?:{_SUFFIXES})) on line (\d+)\b")  # (not `res.json`)


_TRACEBACK_HEAD = re.compile(r"Traceback \(most recent call last\):")  # Python's, whose words say nothing of the code


@lru_cache(maxsize=64)
def read_code_query(text: str) -> CodeQuery:
    text = _ON_LINE.sub(r"\1:\2", _IN_JAR.sub("", _ARITY.sub(r"\1", text)))
    request = read_request(text)
    files = tuple(dict.fromkeys(_LEADING_DOTS.sub("", m.replace("\\", "/")) for m in _FILE.findall(text)))
    modules = tuple(dict.fromkeys(m for m in _MODULE.findall(text) if not _FILE.fullmatch(m) and "." in m))
    frame_files = tuple(f.path.replace("\\", "/") for f in request.frames)
    lookup = lookup_names(text)
    short = len(text.split(None, SEARCH_WORDS)) <= SEARCH_WORDS
    trace = _is_trace(text, request.frames)
    names = request.names | {last_part(name) for name in lookup}  # `serve` alone names `serve`
    worded = _TRACEBACK_HEAD.sub(" ", text)  # (its "most" pointed at docstring lines of "most use cases")
    terms = (*code_terms(_POSSESSIVE.sub("", worded)), *(a.lower() + b.lower() for a, b in _HYPHENATED.findall(text)),
             *(initialisms(_POSSESSIVE.sub("", text)) if short else ()))
    at_lines = bool(request.frames) and len(_placed_words(text)) == len(request.frames)
    paths_only = bool(files) and all(_FILE.fullmatch(w.strip("`'\"")) for w in text.split())
    phrases = message_phrases(text) if short or trace or _printed_error(text) else ()
    said = said_phrases(text) if short and not (phrases or lookup or at_lines or paths_only or trace) else ()
    return CodeQuery(text, terms, names, request.pairs, request.frames,
                     tuple(dict.fromkeys((*files, *(_tail(p) for p in frame_files)))), modules, lookup,
                     asks_for_tests(text), at_lines, paths_only, short, phrases, trace, said)


# an error's line as a run prints it (`ValueError: ...`, `requests.exceptions.InvalidSchema: ...`, `ERROR! ...`,
# `error: ...`), and a quoted string of a few words
_ERROR_LINE = re.compile(r"^[ \t>]*(?:[\w.-]+:[ \t]+)?(?:Uncaught |Unhandled (?:[Ee]xception\. )?)?"
                         r"(?:PHP (?:Fatal error|Parse error|Warning|Notice|Deprecated)"
                         r"(?::[ \t]+Uncaught (?:[A-Za-z_]\w*\\)*\w+)?|(?:Fatal|Parse) error:[ \t]+Uncaught "
                         r"(?:[A-Za-z_]\w*\\)*\w+|"
                         r"(?:[A-Za-z_]\w*(?:\.|::|\\))*(?:[A-Z][a-z0-9]+"
                         r"[A-Z]\w*|\w*(?:Error|Exception|Warning|Exit|Failure))|ERROR!?|FATAL|[Ee]rror|[Ff]atal|panic|"
                         r"what\(\))(?:[ \t]+\([^()\n]{1,80}\))?[ \t]*[:!][ \t]*+(.*\S)[ \t\r]*$", re.MULTILINE)
# (Java's `java.lang.IllegalStateException: ...`, Ruby's `Faraday::ConnectionFailed: ...`, PHP's `PHP Fatal error:
# Uncaught GuzzleHttp\Exception\ConnectException: ...` and `Warning: ...`; Node's `Uncaught Error: ...` too, .NET's
# `Unhandled exception. System.InvalidOperationException: ...`, C++'s `what():  ...`, a program's own `jq: error (at
# <stdin>:1): ...`, `git: fatal: ...`; the message up to its last character that is not a space, found greedily after
# spaces taken once: a lazy match, or spaces given back, tried the rest of the line at each character: quadratic in a
# run of spaces)
_QUOTED = re.compile(r"(?<![\w`])([\"'])([^\"'\n]{12,300})\1(?![\w`])")  # (code quoted in it: `GET /users`)
# a Rust panic's message: on the line after `thread 'main' panicked at src/main.rs:20:10:` (Rust 1.73 on), or quoted
# before the place (`panicked at 'message', src/main.rs:20:10`) before
_RUST_PANIC = re.compile(r"panicked at (?:'(.+?)', \S+:\d+|\S+:\d+(?::\d+)?:[ \t]*\n[ \t]*(.+))")
# what a printed message fills in (a value in quotes, a number, a path, a placeholder) parts it into runs of words
_FILLED = re.compile(r"[\"'`{}\[\]()<>]|\S*\d\S*|\S*[/\\]\S*|%\w")
_PHRASE_WORD = re.compile(r"[A-Za-z][\w-]*[.,;:!?]?")
PHRASE_WORDS = 3


def message_phrases(text: str) -> tuple[str, ...]:
    """The runs of PHRASE_WORDS words or more of the request's error messages and quoted strings, lowercased with
    their spaces collapsed (`no connection adapters were found for`): a definition that holds one verbatim is likely
    the one that says it, where a bag of words cannot tell "an async iterator on a sync stream" from "a sync iterator
    on an async stream"."""
    found = [m.group(1) for m in _ERROR_LINE.finditer(text)] + [m.group(2) for m in _QUOTED.finditer(text)]
    found += [m.group(1) or m.group(2) for m in _RUST_PANIC.finditer(text)]
    return _runs(found, PHRASE_WORDS)


SAID_WORDS = 4  # a run of the whole search counts held this long: three (`how does the`) are held by comments


def said_phrases(text: str) -> tuple[str, ...]:
    """The runs of SAID_WORDS words or more of a short search read whole as a message printed (`message_phrases`):
    a message pasted alone has no `Error:` before it, and quotes code in it (`GET /users`)."""
    return _runs([text], SAID_WORDS)


def _runs(messages: list[str], least: int) -> tuple[str, ...]:
    out: dict[str, None] = {}
    for message in messages:
        joined = _with_values(message, least)  # (its runs between values are held from each value on)
        if joined:
            out[joined] = None
            continue
        for part in _FILLED.split(message):  # (a word no phrase has, Java's `class com.example.User`, parts it too)
            for run in _runs_of(part.split(), _PHRASE_WORD.fullmatch):
                if len(run) >= least:
                    out[" ".join(run).lower().rstrip(".,;:!?")] = None
    return tuple(out)


def _runs_of(words: list[str], keeps: Callable[[str], object]) -> list[list[str]]:
    """The runs of consecutive words `keeps` keeps."""
    runs: list[list[str]] = [[]]
    for word in words:
        if keeps(word):
            runs[-1].append(word)
        elif runs[-1]:
            runs.append([])
    return runs


FILLED = "*"  # in a phrase, a value the message filled in, which code writes as a placeholder (`%q`, `{name!r}`)
MESSAGE_WORDS = 16  # a message read whole: its first words, values included (a review's 400-word error line took
# 25 s to match against one definition: each of its runs, at each length, a pattern of its own)
_WRITTEN = re.compile(r"[A-Za-z][A-Za-z_-]*(?:'[a-z]{1,2})?[.,;:!?]?")  # a word as written (`reader's`, `can't`)


def _with_values(message: str, least: int) -> str | None:
    """The message whole, each value it fills in one FILLED word (`file * not found in`, from viper's `File "config"
    not found in [/etc/app]`, whose runs between values are too short to count alone); None when it fills none in or
    has fewer than `least` words written out."""
    words: list[str] = []
    for token in message.split():
        if _WRITTEN.fullmatch(token):
            words.append(token.lower())
        elif words and words[-1] != FILLED:  # (a value first says nothing: the phrase opens at a word)
            words.append(FILLED)
    del words[MESSAGE_WORDS:]  # (its opening says which message it is; a long one cost a search seconds)
    while words and words[-1] == FILLED:
        words.pop()
    if FILLED not in words or len(words) - words.count(FILLED) < least:
        return None
    return " ".join(words).rstrip(".,;:!?")


# a definition's keyword written before its name in a look-up (curl's `struct Curl_easy` found no struct)
_KIND_WORDS = frozenset({"struct", "class", "enum", "union", "interface", "trait", "type", "typedef", "fn", "func",
                         "def", "function", "impl", "module", "namespace", "object", "protocol", "record"})
# Ruby's `route!`, `valid?`; PHP's `GuzzleHttp\Exception\ConnectException` (`\GuzzleHttp\Client`, from the global
# namespace; its parts capitalised, as PHP's are: not an escape, `\r\n`)
_CODE_NAME = re.compile(r"(?:\\(?=[A-Z]))?[A-Za-z_$][\w$]*[!?]?(?:(?:\.|::|\\(?=[A-Z]))[A-Za-z_$][\w$]*[!?]?)*")
LOOKUP_WORDS = 3
_HASH_METHOD = re.compile(r"(?<=\w)#(?=[A-Za-z_])")  # `Sinatra::Helpers#redirect`, `JsonReader#peek`


def lookup_names(text: str) -> frozenset[str]:
    """The names a request asks for when it is nothing but names as code writes them (`TestRouteParamsByName`,
    `Context.Param`, `route_event()`), at most LOOKUP_WORDS of them, or one word alone (`serve`): a look-up, whose
    definitions come first wherever they are (a test's too); empty for any other request (plain words, a sentence,
    an issue). A C++ name as a compiler writes it, with its template's arguments
    (`fmt::v12::basic_memory_buffer<char, 500>::grow`), is the name without them; a C++ operator is a name
    (`operator==`, `basic_string_view::operator<`, `operator""_a`)."""
    text = _GO_RECEIVER.sub(r"\1.", text)  # Go's method as its receiver writes it: `(*Router).Find`
    text = _JVM_NESTED.sub(r"\1.", text)  # a nested class as the JVM names it: `JsonParser$Feature`
    at = _OPERATOR_WORD.search(text)  # (an operator's own `<`, `operator<=`, are no template's)
    plain = without_generics(text[:at.start()]) + text[at.start():] if at else without_generics(text)
    return _lookup_names(plain) or (_lookup_names(text) if plain != text else frozenset())  # (Haskell's `<$>` is
    # no template's arguments either)


_OPERATOR_WORD = re.compile(r"\boperator\b")
_GO_RECEIVER = re.compile(r"(?<![\w)])\(\*?([A-Za-z_]\w*)\)\.(?=[A-Za-z_])")
_JVM_NESTED = re.compile(r"\b([A-Z][A-Za-z0-9_]*)\$(?=[A-Z])")  # (both capitalised: JS's `$` names stay whole)
# a C++ operator's name (a conversion's, `operator bool`, is two words: none)
_CPP_OPERATOR = re.compile(r'(?:[A-Za-z_]\w*(?:::|\.))*operator(?:""\s*[A-Za-z_]\w*|\(\)|\[\]|->\*?|<=>|'
                           r"[-+*/%^&|~!=<>]{1,3}|,)")


def _lookup_names(text: str) -> frozenset[str]:
    words = [_cpp_operator(w) or _operator_word(w)
             or _HASH_METHOD.sub(".", w.strip("`").removesuffix("()")).replace(".prototype.", ".")
             for w in text.split(None, LOOKUP_WORDS)]  # Ruby's and Javadoc's `Class#method`, JS's
    # `View.prototype.lookup`, an operator as Haskell writes one apart, `(.:?)`
    if len(words) > 1 and words[0] in _KIND_WORDS:  # `struct Curl_easy`, `class Flask`, `fn merge`: the name
        words = words[1:]
    if not 0 < len(words) <= LOOKUP_WORDS or not all(
            _is_operator(w) or _CPP_OPERATOR.fullmatch(w) or _CODE_NAME.fullmatch(w) and not _FILE.fullmatch(w)
            for w in words):  # (`utils.py` names a file)
        return frozenset()
    if len(words) > 1 and not all(code_shaped(w) or _is_operator(w) for w in words):  # (a C++ operator is code-shaped)
        return frozenset()
    return frozenset(w if _is_operator(w) else w.lstrip("\\").replace("::", ".").replace("\\", ".") for w in words)


def _cpp_operator(word: str) -> str:
    """A C++ operator's name written as a word of a look-up (`operator==`, `fmt::operator""_a`), or ""."""
    bare = word.strip("`")
    return bare if _CPP_OPERATOR.fullmatch(bare) else ""


def _is_operator(word: str) -> bool:
    return len(word) > 1 and operator_of(word) == word  # (one symbol alone is punctuation)


def _operator_word(word: str) -> str:
    """An operator written alone as a word of a look-up (`.:?`, `(<$>)`), or ""."""
    bare = word.strip("`")
    bare = bare[1:-1] if bare.startswith("(") and bare.endswith(")") else bare
    return bare if _is_operator(bare) else ""


_TEST_WORD = re.compile(r"\b(?:unit ?)?(?:tests?|tested|testing|unittests?)\b(?!\s+(?:client|server|runner|"
                        r"harness|framework|utilit(?:y|ies)|helpers?|tools?|app|application|request|response|mode|"
                        r"environment|env)s?\b)|测试|单测", re.IGNORECASE)  # (werkzeug's "test client" is code)
SEARCH_WORDS = 20  # a request of more words is an issue or a task, which may speak of tests and be about the code
# a trace's words besides its frames (its message, `Traceback (most recent call last):`, a chained exception's
# lines); an issue that quotes a traceback says more around it (tests/ingest/test_coderank.py holds one of each)
TRACE_WORDS = 40


_GO_OFFSET = re.compile(r"\+0x[0-9a-f]+")  # a Go panic's frame line ends in its offset: `tree.go:243 +0x6a5`


def _placed_words(text: str) -> list[str]:
    """A request's words less a Go frame's offsets: `tree.go:243 +0x6a5` is a place alone."""
    return [w for w in text.split() if not _GO_OFFSET.fullmatch(w)]


def _is_trace(text: str, frames: tuple[Frame, ...]) -> bool:
    """A pasted stack trace: frames, and few words besides them and its error's message (redux's runs to 57 words)."""
    rest = _ERROR_LINE.sub(" ", outside_frames(text), count=1)  # (only the first: an issue's `NodeJS: v18` lines
    most = TRACE_WORDS + len(" ".join(_message_continued(text)).split())  # are words about it)
    return bool(frames) and len(rest.split(None, most)) <= most


def _printed_error(text: str) -> bool:
    """A program's error output pasted whole: its first line an error's, few words after it (clap's `error:
    unexpected argument '--foo' found`, its `tip:`, `Usage:` and `For more information, try '--help'.`)."""
    first = text.lstrip().partition("\n")[0]
    return _ERROR_LINE.fullmatch(first) is not None and len(text.split(None, TRACE_WORDS)) <= TRACE_WORDS


def _message_continued(text: str) -> list[str]:
    """The lines of the error's message after its first, where frames follow them as .NET, the JVM and Node print
    a trace (Json.NET's `To fix this error either change the JSON to ...` line, then `Path 'orders', ...`): up to the
    first frame, when one comes before a blank line."""
    found = _ERROR_LINE.search(text)
    lines = text[found.end():].split("\n")[1:] if found else []
    for i, line in enumerate(lines):
        if is_frame_line(line):
            return lines[:i]
        if not line.strip():
            break
    return []


def asks_for_tests(text: str) -> bool:
    """A search that asks for tests in so many words ("tests for the JSON reader", "where is routing tested",
    "路由的测试"): ranked as asked, tests first. Not a tool for tests the code ships ("how does the test client follow
    redirects": werkzeug's `Client`, 49 tests before it), nor a name that holds the word (`TestMode`, `test_utils`, a
    look-up), nor a longer request: an issue's "a test shows it" is about the code; nor a qualified name's part
    (Faraday's `Faraday::Adapter::Test::Stubs::NotFound: no stubbed request...` put specs first)."""
    words = text.split(None, SEARCH_WORDS)
    plain = " ".join(w for w in words if not code_shaped(w))
    return len(words) <= SEARCH_WORDS and _TEST_WORD.search(plain) is not None


def code_shaped(word: str) -> bool:
    """Written as only code writes a name: with `_`, `.` or `::` inside it, or in mixed case with a capital after
    its first letter (`getValue`, `TestRouteParams`; not `HTTP` or `TODO`), or a C++ operator (`operator<=>`)."""
    return (bool(_CPP_OPERATOR.fullmatch(word)) or "_" in word.strip("_") or "." in word.strip(".") or "::" in word
            or (any(c.isupper() for c in word[1:]) and any(c.islower() for c in word)))


def _tail(path: str) -> str:
    """A frame's path from an installed copy (`/usr/lib/python3/site-packages/ansible/x.py`): its last parts."""
    parts = PurePosixPath(path).parts
    return "/".join(parts[-3:]) if len(parts) > 3 else path
