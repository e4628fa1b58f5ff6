"""The code ranker: one rule that scores code units against a request, for every cut of code.

Signals (each measured on the localization dev split, `python -m bench.localize`):
- lexical: BM25 over the units with the repository's (or the file's) own statistics (`UnitIndex`);
- named: the unit's own name is an identifier the request writes as code, more so with its class (`Class.method`),
  worth less the more units share the name (`__init__`, `run`);
- path: the request names the unit's file (its path, its module's dotted path) or a traceback frame points into it;
- place: tests, examples, docs and vendored code are rarely what a request is about;
- repo: in a cut, where the repository is indexed (`RepoRanking`), how the repository's own search ranks for the
  request the unit's file (a grep's lines) or the definition holding it (a source file's chunks): its whole code's
  statistics and every definition, not the cut's lines alone;
- dense: the cosine of the unit's vector (`passage_of`) with the request's, where the caller has vectors: it
  re-ranks the DENSE_TOP units the other signals put first (`rerank`), scaled from the worst of them (0) to the best
  (1), since the other signals find the candidates and a vector tells apart the few they cannot. Only the code a
  repository ships has vectors (`has_vector`); a test, example, doc or vendored unit among them counts as the worst;
- phrase: the unit holds one of the request's error messages or quoted strings verbatim (`phrases_held`): a pasted
  error's raise site (python -m bench.error_messages, chosen on its dev split); a short search's only;
- file_name: the share of the words of the unit's file's name a short search holds (python -m bench.short_queries).
The score is lexical (scaled to the best unit's) plus the weighted signals, times the place's factor.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import PurePosixPath

import numpy as np

from ..request import Frame, files_named, paths_meet, shared_tail, sources_of
from .lexical import stem
from .query import FILLED, PHRASE_WORDS, SAID_WORDS, CodeQuery
from .units import CodeUnit, last_part, module_name, operator_of

__all__ = ["DENSE_TOP", "QUERY_TOKENS", "SIGNALS", "WEIGHTS", "FileRanking", "RepoRanking", "UnitRanking", "Weights",
           "at_places", "combine", "declaration_in", "declares", "defined_or_declared", "factor_of", "frame_targets",
           "frames_at", "has_vector", "in_tests", "looked_up", "meaning_units", "nearest", "order_of",
           "overload_signature", "passage_of", "paths_meet", "place_factor", "place_in", "rerank", "score", "signals",
           "with_files"]

_TESTS = re.compile(r"(^|/)(tests?|testing|test_utils|unittests?|integration|fixtures|__tests__)(/|$)|^spec/"
                    r"|(^|/)test_[^/]*$|_tests?\.[a-z]+$|_spec\.rb$|(^|/)conftest\.py$|\.(spec|test)\.[jt]sx?$"
                    r"|\.(unit|integration)?tests?/"  # a C# test project: `Newtonsoft.Json.Tests/`
                    r"|(^|/)spec/(.*/)?[^/]*\.rb$")  # RSpec's folder in a subproject (`sinatra-contrib/spec/`)
# tests named as Java, C#, Kotlin, Scala, Swift and PHP name them: `JsonReaderTest.java`, `JTokenTests.cs`
_TESTS_BY_CASE = re.compile(r"[a-z0-9]Tests?\.(java|cs|kt|scala|swift|php)$")
_TEST_MODULE = re.compile(r"(^|\.)tests?\.")  # a definition inside a module or class named `tests` / `test`
_ASIDE = re.compile(r"(^|/)(examples?|samples?|demos?|sandbox|playground|docs?|doc_src|benchmarks?|bench|scripts|"
                    r"hacking|contrib)(/|$)"
                    r"|(^|/)(examples?|samples?|demos?)[-_][^/]*/"  # a folder of them (react-day-picker's examples-v8/)
                    r"|\.pyi$|\.d\.[cm]?ts$")  # a type stub or declaration file: the API's types, its code elsewhere
# (attrs's `asdict` stubs, `__init__.pyi`, ranked above its implementation; a `style.module.css.d.ts` in an answer)
_VENDORED = re.compile(r"(^|/)(vendor|vendored|_vendor|third_party|thirdparty|external|node_modules)(/|$)")


@dataclass(frozen=True)
class Weights:
    named: float = 0.6
    pair: float = 0.4
    path: float = 0.5
    frame: float = 0.6
    dense: float = 0.5
    phrase: float = 2.0  # the request's error message or quoted string held verbatim (`phrases_held`)
    file_name: float = 0.5  # a short search holds the words of the unit's file's name (`_file_name_share`)
    later: float = 0.4  # a short search's order: a file's hits after its best, this share of their score
    tests: float = 0.3
    aside: float = 0.5
    vendored: float = 0.3
    commented: float = 0.5  # a module run of comments alone: commented-out code counts less than the code that runs
    file: float = 1.0  # the file's own evidence: its best FILE_TOP units, each worth FILE_DECAY of the one before
    repo: float = 1.0  # a cut's line of a file an indexed repository ranks for the request (`RepoRanking.files`),
    # times its share of the best file's score: a grep's cut shows the files the repository search puts first
    definition: float = 0.5  # a source file's chunk, times its definition's place (worst 0, best 1) in the
    # repository's ranking of the file's definitions (`RepoRanking.units`)


WEIGHTS = Weights()
FILE_TOP, FILE_DECAY = 3, 0.5
DENSE_TOP = 40  # units re-ranked by their vectors: the dev split's gain held from 40 (python -m bench.localize_tune)
# of a request embedded: on dev, 128 ranked as well as 512 at a third of the inference; 64 for the search p50 on a
# slower machine (42 ms against 65 at 128, bench.repos), at a dev case of file Acc@5 (0.766 -> 0.753; MRR 0.868 ->
# 0.881)
QUERY_TOKENS = 64
PASSAGE_CHARS = 400  # of a unit's text embedded: its header, docstring and first lines say what it is; on dev 400
# ranked as 1,200 did (file Acc@5 0.740 both) with a third fewer tokens to embed
Cosines = Callable[[Sequence[CodeUnit]], "np.ndarray | None"]  # units -> each one's cosine with the request, or None
# paths as a cut names them -> the share (0 to 1) of the best file's score an indexed repository's search of the
# request gives each it holds (absent: not in it, or not found); empty when no indexed repository holds them
FileRanking = Callable[[Sequence[str]], Mapping[str, float]]
# a source file's path as the cut names it, and the text it shows -> the (first, last, place) of each definition an
# indexed repository holds of it whose lines are that text's, its place (worst 0, best 1) in the repository's
# ranking of that file's definitions for the request; empty when no indexed repository holds the file
UnitRanking = Callable[[str, str], Sequence[tuple[int, int, float]]]


@dataclass(frozen=True)
class RepoRanking:
    """What the tenant's indexed repositories say of one request, for the cut of a grep or of a source file."""

    files: FileRanking
    units: UnitRanking


def passage_of(unit: CodeUnit) -> str:
    """What a unit's vector is made of: where it is, its name, and its first lines."""
    return f"{unit.path} {unit.name}\n{unit.text[:PASSAGE_CHARS]}"


def in_tests(unit: CodeUnit) -> bool:
    """A definition of the tests (a test file's, or a source file's test module's)."""
    return _unit_place(unit) == "tests"


def has_vector(unit: CodeUnit) -> bool:
    """Tests, examples, docs and vendored code are re-ranked without vectors: on dev, theirs changed no ranking
    (python -m bench.localize_lengths --aside) and they are 62% of ansible's definitions' tokens to embed."""
    return _unit_place(unit) is None


def meaning_units(units: Sequence[CodeUnit]) -> list[CodeUnit]:
    """The units a search by meaning alone ranks (`nearest`): the definitions of the code a repository ships, not a
    file's code outside them (kind `module`: its imports, whose vector is mostly its path's)."""
    return [u for u in units if u.kind != "module" and has_vector(u)]


def nearest(units: Sequence[CodeUnit], cosines: np.ndarray, k: int) -> list[int]:
    """The k units nearest the request by their vectors alone, best first (ties by path and line)."""
    return sorted(range(len(units)), key=lambda j: (-cosines[j], units[j].path, units[j].start_line))[:k]


def place_factor(path: str, weights: Weights = WEIGHTS) -> float:
    """Tests, examples and docs, and vendored code, count for less than the code they exercise or ship."""
    return _factor(_place(path), weights)


def _unit_place(unit: CodeUnit) -> str | None:
    """A unit's place: its path's, or tests for a definition inside a source file's test module (Rust's `mod tests`),
    or aside for a Python `@overload` signature (a type stub in the module itself, like a `.pyi`'s: its code is the
    definition of that name after it; a user trial got `BaseRequest.__setitem__`'s two-line stub first) and for a
    module's `if __name__ == "__main__":` block (`CodeUnit.main_guard`: an example in the module itself), and for a
    Python function that does nothing (`CodeUnit.stub`: a hook or an abstract method, whose docstring says what the
    code that overrides it does)."""
    return (_place(unit.path) or ("tests" if _TEST_MODULE.search(unit.name) else None)
            or ("aside" if overload_signature(unit) or unit.main_guard or unit.stub else None))


_OVERLOAD = re.compile(r"^[ \t]*@(?:\w+\.)*overload\b", re.MULTILINE)  # `@overload`, `@typing.overload`, `@t.overload`


def overload_signature(unit: CodeUnit) -> bool:
    """A Python function or method under `@overload`: a signature that types the definition of that name after it
    (decorators come before its `def`: a class holding overloads is none)."""
    return unit.path.endswith((".py", ".pyi")) and unit.kind in ("function", "method") and bool(
        _OVERLOAD.search(unit.text, 0, unit.text.find("def ") + 1 or len(unit.text)))


@lru_cache(maxsize=1 << 16)  # a search asks for every unit of its pool; a repository's paths are few
def _place(path: str) -> str | None:
    """The weight that discounts the path (vendored, tests, aside), if any."""
    lowered = path.lower()
    if _VENDORED.search(lowered):
        return "vendored"
    if _TESTS.search(lowered) or _TESTS_BY_CASE.search(path):
        return "tests"
    if _ASIDE.search(lowered):
        return "aside"
    return None


def shipped_path(path: str) -> bool:
    """The file is code the project ships: not a test's, an example's, a doc's nor vendored (`_place`)."""
    return _place(path) is None


SIGNALS = ("lexical", "named", "pair", "path", "frame", "dense", "phrase", "file_name")


def signals(query: CodeQuery, units: Sequence[CodeUnit], lexical: np.ndarray, *,
            name_counts: dict[str, int] | None = None, dense: np.ndarray | None = None,
            targets: list[list[int]] | None = None) -> np.ndarray:
    """One row per unit, one column per signal (SIGNALS), each in [0, 1] but lexical's raw scale kept apart:
    lexical scaled to the best unit's; named, the name's rarity; pair, 1 where `Class.method` is written; path, how
    closely the request names the file (1: its path, 0.5: its file name); frame, 1 where a frame points inside
    (`targets`: `frame_targets` of these units, if the caller found them already)."""
    out = np.zeros((len(units), len(SIGNALS)))
    if not units:
        return out
    top = float(lexical.max()) if len(lexical) else 0.0
    if top > 0:
        out[:, 0] = lexical / top
    counts = name_counts if name_counts is not None else _leaf_counts(units)
    file_named: dict[str, float] = {}
    for i, unit in enumerate(units):
        out[i, 1], out[i, 2] = _named(query, unit, counts)
        if unit.path not in file_named:
            file_named[unit.path] = query.names_file(unit.path) / 2
        out[i, 3] = file_named[unit.path]
    out[:, 4] = frames_at(query, units, targets)
    if dense is not None:
        out[:, 5] = np.nan_to_num(dense, nan=0.0)
    if query.phrases:
        out[:, 6] = phrases_held(query.phrases, units)
    elif query.said:  # (a search held by no definition verbatim is read as words, as before)
        out[:, 6] = phrases_held(query.said, units, SAID_WORDS, literal=True)
    if query.short and not query.lookup and not query.phrases and not out[:, 6].any():  # (a pasted error is found
        # by its message)
        stems = frozenset(stem(t) for t in query.terms)
        shares: dict[str, float] = {}
        for i, unit in enumerate(units):
            if unit.path not in shares:
                shares[unit.path] = _file_name_share(unit.path, stems)
            out[i, 7] = shares[unit.path]
    return out


def _file_name_share(path: str, stems: frozenset[str]) -> float:
    """The share of the words of a file's name (its module's: `extract/mod.rs` is `extract`) a short search holds,
    by stem: "JSON element hierarchy" holds all of `JsonElement.java`'s, a third of `TreeTypeAdapter.java`'s."""
    if not PurePosixPath(path).name:  # a chunk sent without its file's path
        return 0.0
    words = {stem(w.lower()) for w in _NAME_PARTS.findall(module_name(path).rsplit(".", 1)[-1]) if len(w) > 1}
    words -= _TEST_WORDS
    return len(words & stems) / len(words) if words else 0.0


_NAME_PARTS = re.compile(r"[A-Z]?[a-z0-9]+|[A-Z]+(?![a-z])")  # `JsonElement`, `form_mapping`, `HTTPServer`
_TEST_WORDS = frozenset({"test", "spec"})  # a test file's marker: where it is, which `factor_of` weighs


PHRASE_PEERS = 3  # a phrase more definitions than this hold tells them apart in proportion only


def phrases_held(phrases: Sequence[str], units: Sequence[CodeUnit], least: int = PHRASE_WORDS,
                  literal: bool = False) -> np.ndarray:
    """Per unit, the most of one of the request's message phrases it holds verbatim: the share of the phrase's words
    its longest held beginning has (`least` words at least; a printed message fills values in after them), divided
    among the units holding it when more than PHRASE_PEERS do (`was not found in` says less than `attempted to call
    an async iterator on a sync stream`). With `literal`, held only where it opens a string literal or follows a
    value the literal fills in (`_opens_message`): a search read whole as a message (`CodeQuery.said`), not a
    comment's words (gson's `Unit tests for the {@link ...}` for "unit tests for the number policy")."""
    texts = [_flat(u.text) for u in units]
    shipped = np.array([_unit_place(u) is None for u in units], dtype=bool)
    best = np.zeros(len(units))
    for phrase in phrases:
        words = phrase.split()
        found = [_held(words, text, least, literal) for text in texts]
        held = np.array([share for share, _ in found])
        fills = np.array([fill for _, fill in found])
        if (fills & shipped).any():  # (the code that fills the message's values in says it, not a test's or a doc's
            held = held * fills  # copy of it; a test's placeholder does not outweigh code that joins the message)
        # (the code's holders: tests asserting the message, and examples printing it, are no rivals of the code)
        holders = int(np.count_nonzero(held * shipped)) or int(np.count_nonzero(held))
        if holders:
            best = np.maximum(best, held * min(1.0, PHRASE_PEERS / holders))
    return best


def _held(words: list[str], text: str, least: int = PHRASE_WORDS, literal: bool = False) -> tuple[float, bool]:
    """The share of the phrase's words the text holds in its runs, each held from the phrase's beginning or from
    after a value it fills in (FILLED), and whether the text fills a value in there with a placeholder. A message's
    runs between its values count as the parts of it they are (`does not exist` of `file at path * does not exist`),
    and a message the code builds of several strings is held by all of them (jinja's "Encountered unknown tag
    {name!r}." then "Jinja was looking for the following tags: ..." then "The innermost block ..."). A run held
    inside a longer message (`StaticFiles directory '{d}' does not exist` for `Directory 'x' does not exist`)
    counts INSIDE_A_MESSAGE of it: the message printed is the one that opens with it."""
    covered, fills = [0.0] * len(words), False  # (each word held by a run: the words of runs that overlap once)
    for start in [0, *(i + 1 for i, word in enumerate(words[:-1]) if word == FILLED)]:
        n, filled, opens = _held_from(words[start:], text, least, literal)
        if not n and start + 1 < len(words):  # a run's first word a label before the message or a value at its
            n, filled, opens = _held_from(words[start + 1:], text, least, literal)  # opening (`rg: regex could
            n = n + 1 if n and opens else 0  # not ...`; `onRequest hook should be a function`, of `'%s hook ...'`)
        for i in range(start, start + n):
            covered[i] = max(covered[i], 1.0 if opens else INSIDE_A_MESSAGE)
        fills = fills or filled
    for i in range(1, len(words) - 1):  # (a value between two runs held: where the code fills one in)
        if words[i] == FILLED and not covered[i]:
            covered[i] = min(covered[i - 1], covered[i + 1])
    return sum(covered) / len(words), fills


INSIDE_A_MESSAGE = 0.9


def _held_from(words: list[str], text: str, least: int, literal: bool) -> tuple[int, bool, bool]:
    """How many of the words the text holds from the first on (`least` at least), whether with a placeholder where
    they have a value, and whether where a message opens (`_opens_at`; with `literal`, only there)."""
    if words[0] not in text:
        return 0, False, False
    filled = FILLED in words  # (its values are matched by the pattern alone, as a placeholder or as written)
    marks = any(mark in text for mark in _PLACEHOLDER_MARKS)
    formats = filled or marks  # (else no pattern is tried)
    for n in range(len(words), least - 1, -1):
        if words[n - 1] == FILLED or not marks and words[n - 1] not in text:  # (a head whose last word no
            continue  # placeholder can stand for: none to try)
        head = " ".join(words[:n])
        if not filled and head in text:
            opens = _opens_message(text, head)
            if opens or not literal:
                return n, False, opens
        said = [(_said_words(m, words[:n]), _opens_at(text, m.start()), _ends_literal(m, text))
                for m in (_formatted(tuple(words[:n])).finditer(text) if formats else ())]
        held = [(opens, fills > 0, ends) for (count, fills), opens, ends in said
                if count >= least and (opens or not literal)]
        if held:
            opens, fills, ends = max(held)
            return (len(words) if ends else n), fills, opens  # (what a literal's last placeholder fills in is the
            # rest of the message: a wrapped error's, `'JSON parse error - %s' % exc`)
    return 0, False, False


def _ends_literal(match: re.Match[str], text: str) -> bool:
    """The match's last word is a placeholder that closes its string literal: the value it fills in is all the
    message says after it."""
    return match.lastindex is not None and match.group(match.lastindex) is not None \
        and match.end(match.lastindex) == match.end() and text[match.end():match.end() + 1] in ("\"", "'", "`")


def _said_words(match: re.Match[str], words: Sequence[str]) -> tuple[int, int]:
    """How many of the phrase's words the match bears out: a word written as the phrase has it, and a value the
    phrase fills in (FILLED) where the code writes a placeholder; a placeholder in a written word's stead does not.
    Then how many of those are values."""
    pairs = list(zip(words[1:], match.groups(), strict=True))
    fills = sum(word == FILLED and value is not None for word, value in pairs)
    written = sum(word != FILLED and value is None for word, value in pairs)
    return 1 + written + fills, fills


def _opens_message(text: str, head: str) -> bool:
    """`head` is in `text` where a string literal opens, or after a value the literal fills in."""
    at = text.find(head)
    while at >= 0:
        if _opens_at(text, at):
            return True
        at = text.find(head, at + 1)
    return False


def _opens_at(text: str, at: int) -> bool:
    return _MESSAGE_OPENS.search(text, max(0, at - OPENING_CHARS), at) is not None


# a value a printed message fills in, as the code writes it: printf's `%s`, `%-8d`, `%v`; Python's and Rust's `{}`,
# `{0}`, `{name!r}`; JS's `${name}`; Kotlin's, Groovy's, Dart's and a shell's `$item`; Ruby's `#{name}`; Swift's
# `\(name)` (a trial's `Can't append Foo@1a2b3c as it has unknown type`, Kotlin's `"Can't append $item as ..."`)
_PLACEHOLDER = r"(?:%(?:\([^()\s]*\))?[-+ #0-9.*]*[a-zA-Z]|[$#]?\{[^{}\s]*\}|\$[A-Za-z_]\w*|\\\([^()\s]*\))"


_PLACEHOLDER_MARKS = ("%", "{", "$", "\\(")  # a text holding none of them fills no value in
OPENING_CHARS = 40  # looked at before a message's first word: a quote, or a placeholder (`{name!r}`) and a space
_MESSAGE_OPENS = re.compile(r"(?:[\"'`]|(?:" + _PLACEHOLDER + r"|[\"'`]) )\Z")


@lru_cache(maxsize=1 << 10)
def _formatted(words: tuple[str, ...]) -> re.Pattern[str]:
    """The phrase as code may print it: any word after its first a placeholder (jq's `"Cannot index %s with %s (%s)"`
    prints `Cannot index number with string ("foo")`); a match counts with PHRASE_WORDS of its words written out."""
    parts = [re.escape(words[0])] + [_ANY_VALUE if w == FILLED else f"(?:{re.escape(w)}|({_PLACEHOLDER}))"
                                     for w in words[1:]]
    return re.compile(r"(?<![\w%])" + " ".join(parts))


# a value the phrase fills in (FILLED): a placeholder in a word of the code's (`'{name}',`: a group, which
# `_said_words` counts), or what the code writes there as it is, up to eight words (httpx's "Use `q = q.set(key,
# value)` to create an updated copy.", whose value of four words had held the message only up to it)
_ANY_VALUE = r"(?:(\S*" + _PLACEHOLDER + r"\S*)|\S+(?: \S+){0,7}?)"


_JOINED_LITERALS = re.compile(r"[\"']\s*\n\s*[fFrRbBuU]{0,2}[\"']|\\\n\s*")  # "a long " \n "message": one message;
# a Rust or C literal continued with `\` at its line's end (ripgrep's "could not be compiled with either the default \)


@lru_cache(maxsize=1 << 12)
def _flat(text: str) -> str:
    """A unit's text as a message phrase is matched against it: lowercased, adjacent string literals joined, runs of
    spaces one space."""
    return " ".join(_JOINED_LITERALS.sub("", text.lower()).split())


def combine(rows: np.ndarray, units: Sequence[CodeUnit], weights: Weights = WEIGHTS,
            query: CodeQuery | None = None) -> np.ndarray:
    """The rule: lexical plus the weighted signals, times the place's factor (`factor_of`)."""
    w = np.array([1.0, weights.named, weights.pair, weights.path, weights.frame, weights.dense, weights.phrase,
                  weights.file_name])
    factors = np.fromiter((factor_of(u, weights, query) for u in units), dtype=np.float64, count=len(units))
    return np.asarray((rows @ w) * factors, dtype=np.float64)


def factor_of(unit: CodeUnit, weights: Weights = WEIGHTS, query: CodeQuery | None = None) -> float:
    """What a unit's place makes of its score: tests, examples, docs and vendored code count for less (a definition a
    look-up names too: it comes first all the same, `_asked_first`, but after the shipped code's of that name); and
    where a search asks for tests (`CodeQuery.tests`), the tests count whole and the code they exercise as tests count
    otherwise. A module run of comments alone (`CodeUnit.commented_out`) counts for less wherever it is, but where it
    holds a name a look-up asks for (a test commented out is found by its name); a deprecated definition
    (`CodeUnit.deprecated`) counts as an example does, but where the request speaks of deprecation."""
    place = _unit_place(unit)
    if place is None and unit.deprecated and not (query is not None and query.deprecation):
        place = "aside"  # (a wrapper kept for old callers, naming the code to use instead)
    if query is not None and query.tests and place in (None, "tests"):
        place = None if place == "tests" else "tests"
    return _factor(place, weights) * (weights.commented if _says_nothing(unit, query) else 1.0)


def _says_nothing(unit: CodeUnit, query: CodeQuery | None) -> bool:
    """A module run of comments alone, or of imports alone, unless it holds a name a look-up asks for; one of no word
    at all (a `}` between two functions: the search's words its path's alone, and its vector its path's, had put
    axios's `xhr.js:92` second for "how is the adapter chosen")."""
    if unit.kind == "module" and _WORD.search(unit.text) is None:
        return True
    if not (unit.commented_out or unit.imports_only):
        return False
    written = written_names(query.lookup) if query is not None else None
    return written is None or written.search(unit.text) is None


_WORD = re.compile(r"[^\W_]")


@lru_cache(maxsize=256)
def written_names(lookup: frozenset[str]) -> re.Pattern[str] | None:
    """A look-up's names as code writes them, a whole word each (`Flask`, not `flask` nor `FlaskGroup`; `route!` as
    `route`); None for no names."""
    leaves = sorted({unmarked(last_part(name)) for name in lookup} - {""})
    return re.compile(rf"(?<![\w$])(?:{'|'.join(map(re.escape, leaves))})(?![\w$])") if leaves else None


def _factor(place: str | None, weights: Weights) -> float:
    return 1.0 if place is None else float(getattr(weights, place))


# the units a name may be declared in without a definition of its own: a module's code (TypeScript's `export const
# enUS = {...}`, Python's `LIMIT = 3`, a Go `const` block) and a type's own lines (Java's `static final` field, PHP's
# `public const SUCCESS = 0;`, a Swift `let`)
_DECLARING = frozenset({"module", "class", "struct", "interface", "enum", "trait", "object", "protocol", "actor",
                        "type", "record", "annotation"})  # (Go's `type Viper struct {...}`)
_DECLARATION_WORDS = ("export|default|public|private|protected|internal|fileprivate|open|static|final|const|let|var|"
                      "val|readonly|abstract|override|lateinit|typealias|type|declare|extern|inline|constexpr|pub|mut|"
                      r"lazy|weak|unowned|volatile|transient|@JvmField|@JvmStatic|pub\([^)\n]*\)")  # (Rust's
# `pub(crate) const DEFAULT_TYPES`: said to be defined nowhere)


# a type written before a name: one word, with its generics and array or pointer marks (not `class A extends`); PHP's
# nullable and namespaced ones (`?bool`, `\Closure`, `\FTP\Connection`)
_TYPE = r"(?!(?:class|interface|enum|struct|extends|implements|new|return|throws)\b)[?\\]?[A-Za-z_][\w.\\]*" \
    r"(?:<[^>\n]*>)?(?:\[\])*[?*&]*"


# a file's declaration dialect by its suffix: Go's (a name's type after it), C's (`#define`, `} name_t;`), JS's and
# TS's (an exported object's key), Ruby's (`attr_reader :name`)
_DIALECTS = {".rb": "ruby", ".go": "go", ".c": "c", ".h": "c", ".cc": "c", ".cpp": "c", ".cxx": "c", ".hpp": "c",
             ".hh": "c", ".hxx": "c", ".m": "c", ".mm": "c", ".cu": "c", ".js": "js", ".mjs": "js", ".cjs": "js",
             ".ts": "js", ".tsx": "js", ".jsx": "js"}
_FIELD_KINDS = frozenset({"class", "struct", "interface", "object", "protocol", "actor", "trait", "type"})  # (fields)


@lru_cache(maxsize=256)
def declaration_of(name: str, dialect: str = "", kind: str = "module", field: bool = False) -> re.Pattern[str]:
    """A line that declares `name` as its language writes it: after declaration words and a type (`public static final
    String DEFAULT_BUILD_METHOD = "build";`, `export const enUS: Locale = {`, `val isHttps: Boolean`), or alone with
    `=` (`LIMIT = 3`; not a call's keyword argument, `timeout=5,`, nor an object's arrow function, `resolve: x => x,`);
    in Go, with its type after it (`StatusOK Code = 200` in a `const` block, `var Timeout time.Duration`; elsewhere a
    name before another is a type's, `private JsonReader in;`); in C, `#define NAME` and a typedef's `} name_t;`; in
    JS and TS, an object's key with a value that is no function (undici's `kDestroyed: Symbol('destroyed'),`). In an
    `enum`, a member (curl's `CURLE_OPERATION_TIMEDOUT,`, Java's `READ("r"),`); in a type's own lines, with `field`, a
    field (viper's `envKeyReplacer StringReplacer`, curl's `struct UrlState state;`): only for a look-up the type
    qualifies (`Viper.envKeyReplacer`), a name such as cobra's `Args` being many structs' field."""
    n = re.escape(name)
    typed = r"(?:\s*:[^=\n]*|\s+[\w.\[\]*]+)?" if dialect == "go" else r"(?:[!?]?\s*:[^=\n]*)?" if dialect == "js" \
        else r"(?:\s*:[^=\n]*)?"  # (a TS field declared assigned elsewhere, or optional: hono's `post!: Handler<...>`)
    more = ""
    if dialect == "c":
        more += rf"|#[ \t]*define[ \t]+{n}\b|\}}[ \t]*\*?[ \t]*{n}[ \t]*[;,]"
    if dialect == "js":
        more += rf"|['\"]?{n}['\"]?[!?]?[ \t]*:(?![^\n]*=>)(?![ \t]*(?:async[ \t]+)?function\b)[ \t]*\S"
    if dialect == "ruby":  # (`attr_reader :default_adapter`, `attr_accessor :sort_params, :array_indices`)
        more += rf"|attr_(?:reader|writer|accessor)\b[^\n]*:{n}\b"
    if kind == "enum":  # (PHP's and Swift's `case Warning = 300;`, `case north`)
        more += rf"|(?:case[ \t]+)?{n}\b[ \t]*(?:[=(,;]|/[/*]|$)"
    if kind == "interface" and dialect == "go":  # (an interface's method: `Bind(c Context, i any) error`)
        more += rf"|{n}[ \t]*\("
    if kind == "interface" and dialect == "js":  # (a TS interface's method, generic too: fastify's `addHook<`, 17
        more += rf"|{n}[?]?[ \t]*[<(]"  # overloads, and `send(...args)` were said to be defined nowhere)
    if field and kind in _FIELD_KINDS and dialect == "go":
        more += rf"|{n}(?:[ \t]*,[ \t]*\w+)*[ \t]+[\w.*\[\]]"
    if field and kind in _FIELD_KINDS and dialect == "c":
        more += rf"|(?:\w+[ \t*]+)+{n}[ \t]*(?:\[[^\]\n]*\][ \t]*)*(?::[ \t]*\d+[ \t]*)?;"
    return re.compile(rf"^[ \t]*(?:(?:(?:{_DECLARATION_WORDS})\s+)+(?:{_TYPE}\s+)??{n}\b{typed}"
                      rf"\s*(?:=(?![=>])|;|\{{|$)|{n}{typed}\s*=(?![=>])(?![^\n]*,[ \t]*$){more})", re.MULTILINE)


def declaration_in(unit: CodeUnit, name: str) -> re.Match[str] | None:
    """Where a module's code or a type's own lines declare `name` (`Command.SUCCESS`: the type or file named `Command`
    does, or for Go's `features.BindStruct` the package, its folder), if they do: a look-up of a constant, a field or
    a type alias finds where it is, not "no definition is named"."""
    *scope, leaf = name.replace("::", ".").split(".")
    if unit.leaf == "__construct" and unit.path.endswith(".php"):
        return _promoted(unit, scope, leaf)
    if unit.kind not in _DECLARING:
        return None
    dialect = _DIALECTS.get(PurePosixPath(unit.path).suffix.lower(), "")
    package = PurePosixPath(unit.path).parent.name if dialect == "go" else None  # (a Go package is its folder)
    owner = unit.name.rsplit(".", 2)[-2] if unit.name.endswith(".self") else unit.name.rsplit(".", 1)[-1]  # (a
    # Ruby `class << self` declares its class's own)
    if not leaf or leaf not in unit.text or scope and scope[-1] not in (
            owner, module_name(unit.path).rsplit(".", 1)[-1], package):
        return None
    return declaration_of(leaf, dialect, unit.kind, bool(scope)).search(unit.text)


def _promoted(constructor: CodeUnit, scope: list[str], leaf: str) -> re.Match[str] | None:
    """Where a PHP constructor's parameter declares its class's property (PHP 8's `public readonly string $channel`):
    a trial's `LogRecord::$extra` was said to be defined nowhere, the class's head shown without it."""
    owner = constructor.name.split(".")[-2] if "." in constructor.name else ""
    if scope and scope[-1] != owner or not leaf.lstrip("$"):
        return None
    return re.search(rf"\b(?:public|protected|private)\b[^,()$]*\${re.escape(leaf.lstrip('$'))}\b", constructor.text)


def declares(unit: CodeUnit, name: str) -> bool:
    """`declaration_in` finds one."""
    return declaration_in(unit, name) is not None


def defined_or_declared(unit: CodeUnit, lookup: frozenset[str]) -> bool:
    """The unit defines a name a look-up asks for (`looked_up`), or declares it (`declares`)."""
    return looked_up(unit, lookup) or any(declares(unit, name) for name in lookup)


def looked_up(unit: CodeUnit, lookup: frozenset[str]) -> bool:
    """The unit defines a name a look-up asks for: its own name (`serve`), or its qualified name or that name's end
    (`Context.Param`), or a path ending in its qualified name (`axum::routing::Router::merge`, as a backtrace
    writes `Router.merge`); a TS private method (`Timer.#delay`) by its name (`Timer.delay`), and a name asked with
    a `?` or `!` (Ruby's `valid?`, or a question: `add_route?`) with it or without it; a Kotlin companion object's
    member by its class, as callers write it (`Protocol.get` is `Protocol.Companion.get`), or as it is named
    (`Op.Companion.build` was shown first and said to be defined nowhere)."""
    if not unit.defines_name:
        return False
    name = unit.name.replace(".#", ".").replace(".Companion.", ".")
    return any(unit.leaf == form or name == form
               or ("." in form and (name.endswith("." + form) or ("." in name and form.endswith("." + name))
                                    or _module_qualified(unit, name, form)))
               for asked in lookup for form in dict.fromkeys((asked, unmarked(asked).replace(".Companion.", "."))))


def unmarked(name: str) -> str:
    """A name asked with a `?` or `!` without it (`valid?`: `valid`); an operator as it is (`.:?` is no `.:`)."""
    return name if operator_of(name) else name.rstrip("!?")


def _module_qualified(unit: CodeUnit, name: str, form: str) -> bool:
    """`form` names the unit by its module too, as an import or a Java class's full name writes it: `click.core.Option`
    is src/click/core.py's `Option`, `org.apache.commons.lang3.StringUtils.isBlank` a file named after its class; or by
    what its file declares it in (`CodeUnit.package`)."""
    if not form.endswith("." + name):
        return False
    if unit.package:  # as the file declares it: Go's `package middleware` (`middleware.CORSWithConfig`), a PHP
        qualified = f"{unit.package}.{name}"  # namespace (`GuzzleHttp\Exception\ConnectException`; not psr7's
        return qualified == form or qualified.endswith("." + form)  # `GuzzleHttp\Psr7\Utils` for guzzle's `Utils`)
    if (crate := _rust_crate(unit.path)) and form.endswith(f".{name}") and _names_crate(form[: -len(name) - 1], crate):
        return True  # a crate's item by its crate alone, as its root re-exports it and callers write it
        # (`ignore::WalkBuilder` is walk.rs's; `grep_searcher::Searcher` of crates/searcher, named grep-searcher)
    module = module_name(unit.path).split(".")
    if module[-1] == name.split(".", 1)[0]:
        module.pop()  # a file named after its class: its class's name is the module's last part already
    qualified = ".".join([*module, name])
    return qualified == form or qualified.endswith("." + form)


def _names_crate(written: str, crate: str) -> bool:
    """`written` (a path's first part, `grep_searcher`) names the crate of that folder (`searcher`): its name, or a
    name ending in it after `_`, as workspaces prefix their crates' (`grep-searcher`: `crates/searcher`)."""
    return written == crate or written.endswith("_" + crate)


@lru_cache(maxsize=1 << 16)  # asked for every unit a look-up weighs; a repository's paths are few
def _rust_crate(path: str) -> str:
    """The folder a Rust file of a workspace's crate is in, as code names the crate: the folder holding its `src/`
    (`crates/ignore/src/walk.rs`: `ignore`; a folder `tokio-util` as `tokio_util`); "" for a file of no such
    folder."""
    if not path.endswith(".rs"):
        return ""
    parts = PurePosixPath(path).parts
    at = parts.index("src") if "src" in parts else 0
    return parts[at - 1].replace("-", "_") if at > 0 else ""


def with_files(scores: np.ndarray, units: Sequence[CodeUnit], weights: Weights = WEIGHTS) -> np.ndarray:
    """Each unit's score plus its file's: a fix's place is in the file whose several definitions the request points
    at more often than in the one definition that matches best (python -m bench.localize_tune, dev split)."""
    if not weights.file or not len(units):
        return scores
    by_file: dict[str, list[float]] = {}
    for unit, score in zip(units, scores, strict=True):
        by_file.setdefault(unit.path, []).append(float(score))
    files = {path: sum(v * FILE_DECAY**i for i, v in enumerate(sorted(found, reverse=True)[:FILE_TOP]))
             for path, found in by_file.items()}
    boost = np.fromiter((files[u.path] for u in units), dtype=np.float64, count=len(units))
    return np.asarray(scores + weights.file * boost, dtype=np.float64)


def score(rows: np.ndarray, units: Sequence[CodeUnit], weights: Weights = WEIGHTS,
          query: CodeQuery | None = None) -> np.ndarray:
    """Each unit's score by the rule: combine, then each file's evidence."""
    return with_files(combine(rows, units, weights, query), units, weights)


def rerank(rows: np.ndarray, units: Sequence[CodeUnit], scores: np.ndarray, cosines: Cosines,
           weights: Weights = WEIGHTS, query: CodeQuery | None = None) -> np.ndarray:
    """The scores again with the dense signal of the DENSE_TOP best units (`rows`' dense column is set for them);
    the scores as they were when `cosines` has no vectors for them (a repository's are still being made) or the
    request asks for tests (they have none)."""
    if not weights.dense or not len(units) or (query is not None and query.tests):
        return scores
    top = [j for j in order_of(scores, units)[:DENSE_TOP] if scores[j] > 0]  # found by the request's words or names:
    # a unit that matched nothing is no candidate, and re-ranked it would come back as if it had
    shipped = [j for j in top if has_vector(units[j])]
    found = cosines([units[j] for j in shipped]) if shipped else None
    if found is None:
        return scores
    low, high = float(found.min()), float(found.max())
    column = SIGNALS.index("dense")
    rows[top, column] = 0.0
    rows[shipped, column] = (found - low) / (high - low) if high > low else 0.0
    return score(rows, units, weights, query)


def order_of(scores: np.ndarray, units: Sequence[CodeUnit]) -> list[int]:
    """Best first; ties broken by path and line, so the same request gives the same order."""
    return sorted(range(len(units)), key=lambda j: (-scores[j], units[j].path, units[j].start_line))


def _leaf_counts(units: Sequence[CodeUnit]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for unit in units:
        counts[unit.leaf] = counts.get(unit.leaf, 0) + 1
    return counts


def _named(query: CodeQuery, unit: CodeUnit, counts: dict[str, int]) -> tuple[float, float]:
    if not unit.defines_name or unit.leaf not in query.names:
        return 0.0, 0.0
    rarity = 1.0 / (1.0 + math.log(max(1, counts.get(unit.leaf, 1))))
    parts = unit.name.split(".")
    paired = len(parts) > 1 and (parts[-2], unit.leaf) in query.pairs
    return rarity, 1.0 if paired else 0.0


def at_places(query: CodeQuery, units: Sequence[CodeUnit]) -> dict[int, int]:
    """Per unit at one of the request's places (`tree.go:452`, a frame's path from another checkout or an installed
    copy, `/home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/tree.go:452`), how many lines it is from the place:
    0 for a unit holding its line, in the files the place's path meets best (`axum/src/routing/mod.rs` is not
    `axum-extra/src/routing/mod.rs`). Where none holds it (a blank line between two methods, a line past the file's
    end), the nearest unit above it and the nearest below, each by its distance: a trial's `schemas.ts:1200` was
    answered with a thousand lines' distant `// );` runs by their words alone. A line after a definition's last
    nested one (the `}` closing a Rust impl or a Java class) is its definition's, whose first part is then shown
    first: `json.rs:114` was answered with the method above it and the next impl, not the impl it closes."""
    at: dict[int, int] = {}
    for frame, holding, _moved, own in _frame_points(query, units):
        line = frame.line or 0
        for i, far in [(i, 0) for i in holding] or _closed_by(units, own, line) + _beside(units, own, line):
            at[i] = min(far, at.get(i, far))
    return at


def _closed_by(units: Sequence[CodeUnit], own: list[int], line: int) -> list[tuple[int, int]]:
    """The innermost definition whose last nested unit ends above the line and whose own last line is at or below
    it (the line is its tail: a closing brace), at distance 0; none for a line between two nested units."""
    below = min((units[j].start_line for j in own if units[j].start_line > line), default=None)  # (once: a place
    # in a file of thousands of units asked this of every pair)
    tails = [i for i in own if units[i].end_line < line <= units[i].definition_end
             and (below is None or below > units[i].definition_end)]
    return [(max(tails, key=lambda i: (units[i].start_line, -i)), 0)] if tails else []


def _beside(units: Sequence[CodeUnit], own: list[int], line: int) -> list[tuple[int, int]]:
    """Of a file's units (`own`), the one ending nearest above the line (the innermost of those ending there) and
    the one starting nearest below it, each with its distance from the line."""
    above = max((i for i in own if units[i].end_line < line), default=None,
                key=lambda i: (units[i].end_line, units[i].start_line, -i))
    below = min((i for i in own if units[i].start_line > line), default=None,
                key=lambda i: (units[i].start_line, -units[i].end_line, i))
    return ([(above, line - units[above].end_line)] if above is not None else []) + (
        [(below, units[below].start_line - line)] if below is not None else [])


def place_in(query: CodeQuery, unit: CodeUnit) -> int:
    """The line of this unit one of the request's places points at (the first such), else 0."""
    return next((frame.line or 0 for frame in _frames_inside(query, unit) if paths_meet(frame.path, unit.path)), 0)


def frames_at(query: CodeQuery, units: Sequence[CodeUnit], targets: list[list[int]] | None = None) -> np.ndarray:
    """Per unit, 1 where one of the request's frames points into it (`frame_targets`, unless given), else 0."""
    out = np.zeros(len(units))
    for held in frame_targets(query, units) if targets is None else targets:
        out[held] = 1.0
    return out


def frame_targets(query: CodeQuery, units: Sequence[CodeUnit]) -> list[list[int]]:
    """Per frame of the request, innermost first, the units it points at: those of its file (`paths_meet`: an
    installed copy's `site-packages/flask/app.py` is a checkout's `src/flask/app.py`) holding its line; when it names
    its function and none of those is a definition of that name, the traceback came from another version of the file
    (an installed release against a checkout), and it points at the definition of that name in its file nearest its
    line instead (not Ruby's: a built-in's frame, `in 'each'`, is labelled with its caller's line). Of the files its
    path meets, those as long as the path's frames go (gdb's `/usr/include/nlohmann/json.hpp:20913` is the generated
    `single_include/nlohmann/json.hpp`, not the 5,000-line `include/nlohmann/json.hpp`), then those sharing the most
    of its folders. In a pasted trace, a frame several files meet (the user's own `src/main.rs` against every
    example's) points at none."""
    return [held for _frame, held, _moved, _own in _frame_points(query, units)]


def frames_elsewhere(query: CodeQuery, units: Sequence[CodeUnit]) -> list[tuple[Frame, CodeUnit, CodeUnit | None]]:
    """The frames whose line is not in the definition they name (`frame_targets` points them at it instead): each
    with that definition and the one its line is in here (None: in none), for the answer to say so."""
    found = []
    for frame, held, moved, _own in _frame_points(query, units):
        if moved and frame.line is not None:
            at_line = [u for u in units if u.path == units[held[0]].path  # (a class whose members are units of their
                       and u.start_line <= frame.line <= u.last_line]  # own holds the blank line between two)
            found.append((frame, units[held[0]], min(at_line, key=lambda u: u.last_line - u.start_line, default=None)))
    return found


def _frame_points(query: CodeQuery, units: Sequence[CodeUnit]) -> list[tuple[Frame, list[int], bool, list[int]]]:
    """`frame_targets`'s frames (those with a line), each with its units, whether it was pointed at the definition
    its name names rather than at its line (`frames_elsewhere`), and the units of the files its path meets best."""
    if not query.frames:
        return []
    paths = sorted({u.path for u in units})
    ends: dict[str, int] = {}
    for u in units:
        ends[u.path] = max(ends.get(u.path, 0), u.last_line)
    deepest: dict[str, int] = {}  # per path as written, its frames' last line: a file shorter is another file
    for frame in query.frames:
        deepest[frame.path] = max(deepest.get(frame.path, 0), frame.line or 0)
    points: list[tuple[Frame, list[int], bool, list[int]]] = []
    for frame in query.frames:
        line = frame.line
        if line is None:
            continue
        written, compiled = frame.path, False
        met = files_named(written, paths)
        for source in sources_of(frame.path) if not met else ():  # a Node frame's compiled `.js`: its TypeScript
            if met := files_named(source, paths):  # source's lines are not the frame's, its function's name is
                written, compiled = source, True
                break
        meeting = _closest(written, [p for p in met if ends[p] >= deepest[frame.path]] or met)
        if query.trace and len(meeting) > 1:
            points.append((frame, [], False, []))
            continue
        own = [i for i, u in enumerate(units) if u.path in meeting]
        holding = [] if compiled else [i for i in own if units[i].start_line <= line <= units[i].end_line]
        function = _frame_function(frame.function)
        if frame.path.endswith(".rb") and function and (function == "initialize" or _calls_at(units, holding, line,
                                                                                             function)):
            function = None  # (Ruby prints a built-in's frame, `base.rb:7:in 'call'`, at the line calling it:
            # that line is the frame's, and `initialize`'s at a line writing `.new` or `File.open`; a label its line
            # does not call is the method's, moved in another release: a trial's `job.rb:372:in 'client_push'` of
            # sidekiq 7.2 pointed at 8.1's `sidekiq_options`)
        named = [i for i in own if function and units[i].leaf == function and units[i].kind != "module"]  # (a
        # later part of the function counts: it is of that name)
        moved = bool(named) and not any(i in named for i in holding)
        if moved:
            holding = [min(named, key=lambda i: (abs(units[i].start_line - line), i))]
        elif function and not named and _package_of(frame.path) and not any(
                _names_written(function).search(units[i].text) for i in holding):  # another installed package's
            holding = []  # file of the same path (`node_modules/other-lib/lib/index.js`), its function none of the
        # repository's nor a function its line's definition writes (axios's `function handleRequestTimeout()`, a
        # callback inside `httpAdapter`)
        # a compiled file's frame: at the definition its name names nearest its line (the compiled file keeps the
        # source's order), never said to come from another version, nothing beside its line (not the source's)
        points.append((frame, holding, moved and not compiled, [] if compiled else own))
    return _programs_own_left_out(points, units)


def _calls_at(units: Sequence[CodeUnit], holding: list[int], line: int, name: str) -> bool:
    """The line (of the definitions holding it) writes `name` as a word: it calls what a frame of that name ran."""
    written = re.compile(rf"(?<![\w$]){re.escape(name)}(?![\w$])")
    return any(written.search(units[i].text.split("\n")[line - units[i].start_line]) for i in holding
               if 0 <= line - units[i].start_line < units[i].text.count("\n") + 1)


def _programs_own_left_out(points: list[tuple[Frame, list[int], bool, list[int]]], units: Sequence[CodeUnit]
                           ) -> list[tuple[Frame, list[int], bool, list[int]]]:
    """Where a frame through an installed package's copy names a definition the repository has at its line
    (`at Axios.request (node_modules/axios/lib/core/Axios.js:45:41)`), the repository is that package: a frame of
    another installed package (`node_modules/follow-redirects/index.js`) or outside any (the program's own `at async
    main (/app/index.js:5:3)`, which came second in a trial: axios's root `index.js`) points at nothing here, unless
    it too names the definition at its line (a checkout's own frames, beside a dependency's)."""
    home = {_package_of(frame.path) for frame, holding, _moved, _own in points
            if _package_of(frame.path) and _names_its_definition(frame, holding, units)}
    if not home:
        return points
    return [(frame, holding, moved, own) if _package_of(frame.path) in home or
            _names_its_definition(frame, holding, units) else (frame, [], False, [])
            for frame, holding, moved, own in points]


def _names_its_definition(frame: Frame, holding: list[int], units: Sequence[CodeUnit]) -> bool:
    """The frame's function is the definition its line points at (`Axios.request` at a line of `Axios.request`)."""
    function = _frame_function(frame.function)
    return bool(holding) and function is not None and units[holding[0]].leaf == function


_PACKAGE = re.compile(r"(?:^|/)(?:node_modules|site-packages|dist-packages)/((?:@[^/]+/)?[^/]+)/")  # an installed
# copy's folder, and the package's name in it


def _package_of(path: str) -> str | None:
    """The installed package a frame's path is a file of (`node_modules/@scope/name/...`: `@scope/name`), if any."""
    found = _PACKAGE.findall(path.replace("\\", "/"))
    return found[-1] if found else None


@lru_cache(maxsize=256)
def _names_written(function: str) -> re.Pattern[str]:
    """A function of that name defined in code, as JS writes one (`function handleRequestTimeout(`, `onerror =
    function`, `done: async (`), not a call of it (a dependency's `next` frame at a line that calls `next(...)`)."""
    name = re.escape(function)
    return re.compile(rf"\bfunction\s*\*?\s*{name}\s*\(|(?<![\w$.]){name}\s*[:=]\s*(?:async\s*)?(?:function\b|\()")


def _closest(written: str, paths: list[str]) -> set[str]:
    """Of the files a frame's path meets, those sharing the most of its last parts: a crate's `axum/src/lib.rs` is
    not `axum-extra/src/lib.rs`, whose folder differs."""
    tails = {path: shared_tail(written, path) for path in paths}
    return {path for path, tail in tails.items() if tail == max(tails.values())}




def _frame_function(written: str | None) -> str | None:
    """The name of the function a frame names (`Router.handle`, `new Foo`: `handle`, `Foo`); None for code outside
    a definition or a nameless one (`<module>`, `<lambda>`)."""
    if not written or "<" in written:
        return None
    return written.split()[-1].rsplit(".", 1)[-1] or None


def _frames_inside(query: CodeQuery, unit: CodeUnit) -> list[Frame]:
    """The request's frames whose line is one of the unit's."""
    return [f for f in query.frames if f.line is not None and unit.start_line <= f.line <= unit.end_line]
