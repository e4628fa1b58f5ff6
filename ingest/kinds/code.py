"""Source code as its own kind: cut at definitions, whole lines only, each chunk named by its definition path.

tree-sitter (PyPI `tree-sitter-language-pack`, grammars inside the wheel) finds each function, method and class:
a definition is a chunk (`class URLValidator > def __call__`), a class's own lines before its first method are
its header chunk, the lines between definitions (imports, module code) are packed by blank-line blocks, and a
definition too long for one chunk is cut between its top-level statements. Every chunk is whole lines of the
view, indentation included, so a snippet can be pasted into an edit as it is. A language without a grammar
(or text that is not code) is cut by blank-line blocks, still whole lines.

A request puts first the definitions it names as code (`_named`: a name in backticks, a call, a dotted path) and
those a traceback frame of this file points into; the module's imports go first too, within a quarter of the budget
(`_import_chunks`: a fix that calls other code adds an import, and the edit needs their exact lines), and the file's
last chunk when it is short (`_end_chunk`: a new definition is added at a module's end). Where the
caller sets the budget, a twentieth of it goes to a map of the file's other definitions (their `def`/`class` lines
with their numbers). Each shown line is counted with its number (`cost`), as the hooks show it.
"""

from __future__ import annotations

import bisect
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, replace
from functools import lru_cache, partial
from pathlib import PurePosixPath
from typing import Any

import numpy as np

from ctxsieve_client.languages import LANGUAGES, shebang_language

from ..coderank.chunks import context_unit, definition_boost, rank_units
from ..coderank.lexical import K3
from ..coderank.ranker import RepoRanking
from ..coderank.units import CONDITIONAL_WORDS, module_name, operator_of
from ..lines import LineSpan, line_chunks
from ..request import read_request, without_generics
from .base import ByLines, Chunk, Cutting, Leaf, LineSpanOf, Piece

# node types that are definitions, in any grammar: (the word a chunk's context calls it, is it a container)
_KINDS = {
    "function_definition": ("def", False), "function_declaration": ("function", False),
    "function_item": ("fn", False), "method_definition": ("method", False), "method_declaration": ("method", False),
    "constructor_declaration": ("constructor", False), "method": ("def", False), "singleton_method": ("def", False),
    "class_definition": ("class", True), "class_declaration": ("class", True), "class_specifier": ("class", True),
    "class": ("class", True), "module": ("module", True), "interface_declaration": ("interface", True),
    "struct_item": ("struct", True), "struct_specifier": ("struct", True), "enum_item": ("enum", True),
    "enum_declaration": ("enum", True), "impl_item": ("impl", True), "trait_item": ("trait", True),
    "mod_item": ("mod", True), "type_declaration": ("type", False), "namespace_definition": ("namespace", True),
    "object_declaration": ("object", True), "protocol_declaration": ("protocol", True),
    "type_alias_declaration": ("type", False), "trait_definition": ("trait", True),
    "object_definition": ("object", True), "enum_definition": ("enum", True),
    "record_declaration": ("record", True), "annotation_type_declaration": ("annotation", True),
    "struct_declaration": ("struct", True), "trait_declaration": ("trait", True), "companion_object": ("object", True),
    "operator_declaration": ("method", False), "conversion_operator_declaration": ("method", False),
    "indexer_declaration": ("method", False), "destructor_declaration": ("method", False),
    "local_function_statement": ("function", False), "property_declaration": ("property", False),
    "secondary_constructor": ("constructor", False), "init_declaration": ("constructor", False),
    "deinit_declaration": ("method", False), "subscript_declaration": ("method", False),
    "namespace_declaration": ("namespace", True), "singleton_class": ("class", True), "enum_constant": ("class", True),
    "enum_specifier": ("enum", True), "union_specifier": ("union", True), "macro_definition": ("macro", False),
    "abstract_class_declaration": ("class", True), "abstract_method_signature": ("method", False),
    "annotation_type_element_declaration": ("method", False), "type_alias": ("type", False),
    "typealias_declaration": ("type", False), "subroutine_declaration_statement": ("def", False),
    "mixin_declaration": ("mixin", True), "extension_declaration": ("extension", True),
    "class_interface": ("class", True), "class_implementation": ("class", True),
    "function_statement": ("function", False), "class_statement": ("class", True),
    "class_method_definition": ("method", False), "enum_statement": ("enum", False),
}
# the node types that on one line with no body declare or name what is defined elsewhere
_FORWARD = frozenset({"struct_specifier", "class_specifier", "union_specifier", "enum_specifier",
                      "struct_declaration", "mod_item", "module", "namespace_definition"})  # (Objective-C's
# `struct_declaration` is an ivar's line; Haskell's `module` a module's name in an import or a qualified name; PHP's
# `namespace App\Http;` the file's namespace, no definition)
# kinds that are definitions only with a body (Java's enum constant `A {...}`, not `A,`)
_BODY_ONLY = frozenset({"enum_constant"})
# kinds that are definitions only with a `name` (C#'s and Swift's property; Kotlin's `val x = 1` shares the node type:
# a look-up finds it where it is declared, `ranker.declares`; Ruby's `method`, whose type Perl gives the method a call
# names, `$_->$cb`: mojo's Promise.pm had three definitions named `$cb` inside `map`)
_NAMED_ONLY = frozenset({"property_declaration", "method"})
_NAMED = re.compile(r"[A-Za-z_$][\w$]*")


def language_of(path: str | None) -> str | None:
    """The grammar for a file path's extension, if it is a source file."""
    return LANGUAGES.get(PurePosixPath(path).suffix.lower()) if path else None


_GUESSES = (("python", re.compile(r"^[ \t]*(?:async[ \t]+)?(?:def|class)[ \t]+\w+.*:[ \t]*$", re.M)),
            ("go", re.compile(r"^func[ \t]", re.M)), ("rust", re.compile(r"^[ \t]*(?:pub[ \t]+)?fn[ \t]+\w+", re.M)),
            ("javascript", re.compile(r"^[ \t]*(?:export[ \t]+)?(?:async[ \t]+)?function\b", re.M)))


def language_in(path: str | None, text: str) -> str | None:
    """The grammar of a file's text: its path's (a `.h` header C++ when its text is: `namespace`, `template <`,
    `class X {`, an access label), else its `#!` line's, else the one its text shows (`guess_language`)."""
    language = language_of(path)
    if language == "c" and _OBJC.search(text, 0, 200_000):
        return "objc"
    if language == "c" and _CPP.search(text, 0, 200_000):
        return "cpp"
    if language == "objc" and not _C_FAMILY.search(text, 0, 200_000):  # MATLAB's and Mathematica's `.m` are not
        return None  # Objective-C, and no grammar here reads them (MATLAB's `function` lines read as JS's)
    return language or shebang_language(text) or guess_language(text)


_CPP = re.compile(r"^[ \t]*(?:namespace[ \t]+\w+[ \t]*\{|template[ \t]*<|class[ \t]+\w+[^;(\n]*\{|"
                  r"(?:public|private|protected)[ \t]*:)", re.M)


# an Objective-C header or source: its own directives (a `.h` of AFNetworking's was read as C, its classes as errors),
# `#import` and Foundation's enums (SDWebImage's SDWebImageDefine.h declares no class)
_OBJC = re.compile(r"^[ \t]*(?:@(?:interface|implementation|protocol|class)\b|#[ \t]*import\b|"
                   r"typedef[ \t]+NS_(?:ENUM|OPTIONS|CLOSED_ENUM|ERROR_ENUM)\b)", re.M)
_C_FAMILY = re.compile(r"^[ \t]*(?:@(?:interface|implementation|protocol)\b|#[ \t]*(?:import|include)\b)", re.M)


def guess_language(text: str) -> str | None:
    """Code sent without a file name: the grammar whose definitions it shows most of (at least two)."""
    head = text[:50_000]
    counts = [(len(pattern.findall(head)), name) for name, pattern in _GUESSES]
    best = max(counts)
    return best[1] if best[0] >= 2 else None


@dataclass(frozen=True)
class Definition:
    first: int  # 0-based line of its first line (decorators and the comments right above it included)
    last: int  # 0-based line of its last line
    body: int  # 0-based line where its body starts (after the header)
    label: str  # `class URLValidator`, `def __call__`
    container: bool
    children: tuple[Definition, ...]
    statements: tuple[int, ...] = ()  # 0-based first lines of its body's statements: where a long one is cut
    header: int = 0  # 0-based line of its `def`/`class` line (after decorators and comments)


def definitions(text: str, language: str | None) -> list[Definition] | None:
    """The top-level definitions with their nested ones; None when no grammar parses this language."""
    found = _parsed(text, language)
    return None if found is None else list(found[0])


def import_lines(text: str, language: str | None) -> frozenset[int]:
    """The 1-based lines of the text's top-level imports (`import`, `from ... import`, `use`, `#include`, ...):
    those at the module's level, in column 0 (a read that starts inside a function sees its imports at the top
    of the text, indented), an include guard's included."""
    found = _parsed(text, language)
    return frozenset() if found is None else found[1]


@lru_cache(maxsize=8)  # a fresh read parses once for its chunks, its priorities and its map (a re-filter, for its map)
def _parsed(text: str, language: str | None) -> tuple[tuple[Definition, ...], frozenset[int]] | None:
    parser = _parser(language)
    if parser is None:
        return None
    source = text.encode("utf-8")
    try:
        root = _tree(parser, source, language).root_node
        found = tuple(_definitions(root, text.split("\n"), _OPAQUE_BY_LANGUAGE.get(language or "", _OPAQUE),
                                   Comments.of(language)))
        if language in _CLAUSE_LANGUAGES:
            found = _clauses_joined(found)
        imports = frozenset(n + 1 for node in _imports_in(root, source)
                            for n in range(node.start_point[0], _last_row(node) + 1))
    except RecursionError:  # nesting deeper than Python's stack (`[[[...]]]` a thousand deep, generated code): read
        return None  # as a file no grammar parses, whole, rather than failing the read or the repository's sync
    return found, imports


# C/C++: the macros a grammar cannot know, which it reads as code (a namespace after `FMT_BEGIN_NAMESPACE` was a
# function named `namespace`, a class after `class FMT_API` one named after its base, a template after
# `FMT_BEGIN_EXPORT` lost): a line of one all-caps name alone, and an export macro between `class` (`struct`) and
# the class's name (`class Q_CORE_EXPORT QString`, the name followed by its bases, template arguments or body; one
# with arguments too, fmt's `class FMT_SO_VISIBILITY("default") format_error`)
_MACRO_LANGUAGES = frozenset({"c", "cpp", "cuda", "objc"})
_MACRO_LINE = re.compile(rb"^[ \t]*[A-Z][A-Z0-9_]{2,}[ \t]*\r?$", re.M)
# (an attribute may come between the macro and the name: gtest's `class GTEST_API_ [[nodiscard]] RE`)
_EXPORT_MACRO = re.compile(rb"\b(?:class|struct)\s+([A-Z][A-Z0-9_]{2,}(?:\([^()\n]*\))?)(?:\s+|(?<=\)))"
                           rb"(?:\[\[[^\[\]\n]*\]\]\s*)*[A-Za-z_]\w*"
                           rb"\s*(?=[:{<]|final\b)")
# C++ alone: specifier macros starting a declaration (`FMT_CONSTEXPR FMT_INLINE auto write_int(...)`,
# `FMT_API auto f()`, `Q_INVOKABLE void show()`), and one after `if` (`if FMT_CONSTEXPR20 (...)`, for `if constexpr`):
# the grammar took the macro for the type and the type for the name (`FMT_DEPRECATED operator string_view()` a method
# named FMT_DEPRECATED), or lost the class around it (a constructor after `FMT_CONSTEXPR` read as a field). Not in C,
# where a macro there is a type (`UNITY_INTERNAL_PTR UnityNumToPtr(...)`) and the grammar reads it right.
_CPP_LANGUAGES = frozenset({"cpp", "cuda"})
# capitals with an underscore after the first (FMT_API, gtest's GTEST_API_), taken whole: read as any of its cuts at an
# underscore, a long enum constant that matched no rule was tried every way (12 words took 100 s in an ObjC rule)
_CAPS_MACRO = rb"(?>[A-Z][A-Z0-9]*_[A-Z0-9_]*)"
_SPECIFIER_MACRO = re.compile(rb"^[ \t]*(?:(?:static|constexpr|inline|virtual|explicit|friend|extern)[ \t]+)*"
                              rb"((?:" + _CAPS_MACRO + rb"\s+)+)(?=[A-Za-z_~])", re.M)  # (`static FMT_CONSTEXPR
# void grow(...)`, `constexpr FMT_INLINE value()`: after the language's own specifiers too)
# a statement macro of no arguments before a block (`FMT_TRY { flush(); }`, and `FMT_CATCH(...) {}`: not a gtest
# `TEST_F(a, b) {`, a test): the grammar lost the method holding them
# and a functional cast to `unsigned` or `signed` (`if (unsigned(id) < unsigned(max_size()))`), which the grammar
# cannot read, losing the class around it: as a call of a function of the same length (`Unsigned(id)`)
_SIGNED_CAST = re.compile(rb"(?<!operator )\b(?:un)?signed(?=\()")  # (`operator unsigned()` is a conversion's name)
# a macro's call on lines of its own, no `;` after it nor a block below it (`FMT_PRAGMA_CLANG(diagnostic ignored
# "-Wweak-vtables")`, gtest's `GTEST_DISABLE_MSC_WARNINGS_POP_()` closing a class, its
# `GTEST_INTERNAL_DEPRECATE_AND_INLINE(` over three lines between a template's header and its function): the grammar
# read the class, namespace or function below as its continuation (gtest.h's `testing.testing`; a gtest `TEST_F(a, b)`
# over its `{` stays)
_CALL_LINE = re.compile(rb"^[ \t]*(" + _CAPS_MACRO + rb"\([^()]*(?:\([^()]*\)[^()]*)*\))[ \t]*\r?$(?![ \t\r\n]*\{)",
                        re.M)
_BLOCK_MACRO = re.compile(rb"^[ \t]*(" + _CAPS_MACRO + rb"(?:(?<=_CATCH)\([^()\n]*\))?)[ \t]*(?=\{)", re.M)
_IF_MACRO = re.compile(rb"\bif[ \t]+(" + _CAPS_MACRO + rb")(?=[ \t]*\()")
# and a macro for an access label (`JSON_PRIVATE_UNLESS_TESTED:`, `public Q_SLOTS:`), read as a bit field's width
# (nlohmann's `class basic_json` ended at its line 661 of 5149): an access label to the grammar
_ACCESS_MACRO = re.compile(rb"^[ \t]*(?:(public|private|protected)[ \t]+)?(" + _CAPS_MACRO + rb")[ \t]*:(?!:)", re.M)
# and annotation macros after a function's parameters (Clang's thread-safety analysis: leveldb's `void Unlock()
# UNLOCK_FUNCTION() {...}` was a method named UNLOCK_FUNCTION, `bool Insert(...) LOCKS_EXCLUDED(mu_) {` one named mu_),
# or on the next line, indented, as clang-format puts them (gtest's `void Mock::AllowUninterestingCalls(...)` /
# `    GTEST_LOCK_EXCLUDED_(internal::g_gmock_mutex) {`; not a line at the margin, a gtest `TEST_F(a, b) {` after a
# macro's call)
_QUALIFIERS = rb"(?:const|noexcept|override|final)"
# (the spaces before a macro's arguments read one way: they were the loop's or the arguments', tried both ways per
# macro on a line of them that matched nothing)
_TRAILING_MACRO = re.compile(rb"\)[ \t]*(?:\r?\n[ \t]+)?(?:" + _QUALIFIERS + rb"[ \t]*)*((?:" + _CAPS_MACRO +
                             rb"\b(?:[ \t]*\([^()\n]*\))?[ \t]*)+)(?=" + _QUALIFIERS + rb"|[{;=:]|[ \t]*\r?$)", re.M)
# C and C++: the comments in a `#define`'s continued lines, at which the grammar ends the macro (libuv's `#define
# UV_HANDLE_FIELDS \ /* public */ \ ...`: the fields after it were read as code, the struct after them as a
# function), blanked with each line break kept. A macro's body defines nothing.
_CONTINUED_DEFINE = re.compile(rb"^[ \t]*#[ \t]*define\b[^\n]*?(\\[ \t]*\r?\n(?:[^\n]*\\[ \t]*\r?\n)*[^\n]*)", re.M)
_BLOCK_COMMENT = re.compile(rb"/\*.*?\*/", re.S)


# Elixir: a function of several clauses (`defp month_name(1), do: "Jan"` ... twelve of them) is one function, as its
# language reads it: the clauses written one after the other are one definition (plug's cookies.ex had `month_name`
# twelve times over in an answer)
_CLAUSE_LANGUAGES = frozenset({"elixir", "haskell"})  # (Haskell's: a type signature and the equations after it)


def _clauses_joined(found: Sequence[Definition]) -> tuple[Definition, ...]:
    """Each run of sibling definitions with the same label as one, from the first's first line to the last's last
    (their nested ones and statements together, each clause a place to cut), at every level."""
    out: list[Definition] = []
    for definition in found:
        definition = replace(definition, children=_clauses_joined(definition.children))
        before = out[-1] if out else None
        if before is not None and before.label == definition.label and not before.container:
            out[-1] = replace(before, last=definition.last, children=before.children + definition.children,
                              statements=(*before.statements, definition.first, *definition.statements))
        else:
            out.append(definition)
    return tuple(out)


# Objective-C: availability and naming macros after a declaration (`- (instancetype)initWithTask:(NSURLSessionTask
# *)task NS_DESIGNATED_INITIALIZER;`, `@property ... *metrics AF_API_AVAILABLE(ios(10), macosx(10.12));`) or on a
# line of their own above one (`API_AVAILABLE(ios(13.0))`): the grammar read them as a declaration that took the
# next method with it (AFNetworking's AFURLSessionManager.h was errors from its line 98 on)
_OBJC_MACRO = _CAPS_MACRO + rb"(?:[ \t]*\((?:[^()\n]|\([^()\n]*\))*\))?"
_OBJC_TRAILING = re.compile(rb"((?:[ \t]+" + _OBJC_MACRO + rb")+)(?=\s*[;{=])")
_OBJC_MACRO_LINE = re.compile(rb"^[ \t]*((?:" + _OBJC_MACRO + rb"[ \t]*)+)\r?$", re.M)
# and Foundation's enums, `typedef NS_ENUM(NSUInteger, AFSSLPinningMode) {`: to the grammar `enum AFSSLPinningMode {`
_OBJC_ENUM = re.compile(rb"\b(?:typedef[ \t]+)?NS_(?:ENUM|OPTIONS|CLOSED_ENUM|ERROR_ENUM)[ \t]*\([^,()\n]*,"
                        rb"[ \t]*(\w+)[ \t]*\)")


def _objc_enum(match: re.Match[bytes]) -> bytes:
    """`typedef NS_ENUM(NSInteger, Name)` as `enum Name` where it was written, each byte kept in place."""
    start, end = match.span(1)
    offset = match.start()
    before = b"enum".ljust(start - offset)
    return before + match.group(1) + b" " * (match.end() - end)


def _macros_blanked(source: bytes, language: str | None) -> bytes:
    """The source with those macros as spaces, for the grammar alone: every offset and line is kept, and what is
    shown is the file's own text."""
    directive = _directive_lines(source)  # (every rule below keeps each byte where it was: one look at them)
    source = _MACRO_LINE.sub(_blank(0, directive), _CONTINUED_DEFINE.sub(_comments_blanked, source))
    if language == "objc":
        source = _OBJC_MACRO_LINE.sub(_blank(1), _OBJC_TRAILING.sub(_blank(1), _OBJC_ENUM.sub(_objc_enum, source)))
    if language in _CPP_LANGUAGES:
        source = _IF_MACRO.sub(_blank(1, directive), _SPECIFIER_MACRO.sub(_blank(1, directive), source))
        source = _ACCESS_MACRO.sub(_access_label, _TRAILING_MACRO.sub(_blank(1, directive), source))
        source = _BLOCK_MACRO.sub(_blank(1, directive), source)
        source = _CALL_LINE.sub(_blank(1, directive), source)
        source = _SIGNED_CAST.sub(lambda cast: cast[0][:1].upper() + cast[0][1:], source)
    if b"class " not in source and b"struct " not in source:
        return source
    return _EXPORT_MACRO.sub(_blank(1), source)


def _access_label(label: re.Match[bytes]) -> bytes:
    """An access label's macro as spaces after an access word, else as `private` where it is as long (no definition
    depends on which access it grants)."""
    start, end = label.span(2)
    offset = label.start()
    whole = label.group(0)
    word = b"" if label.group(1) is not None or end - start < len(b"private") else b"private"
    return whole[: start - offset] + word.ljust(end - start) + whole[end - offset :]


def _comments_blanked(define: re.Match[bytes]) -> bytes:
    """A continued `#define` with the block comments in its continued lines as spaces (their line breaks, and the `\\`
    before each, kept)."""
    start = define.start(1) - define.start()
    whole = define.group(0)
    return whole[:start] + _BLOCK_COMMENT.sub(_spaces, whole[start:])


def _spaces(match: re.Match[bytes]) -> bytes:
    return _NOT_A_LINE_BREAK.sub(b" ", match.group(0))


_NOT_A_LINE_BREAK = re.compile(rb"[^\r\n\\]|\\(?![ \t]*\r?\n)")  # a comment's line that a `\` continues still does


def _blank(group: int, kept: Callable[[int], bool] | None = None) -> Callable[[re.Match[bytes]], bytes]:
    """A match with its `group` as spaces, its line breaks kept (every later line where it was); one starting where
    `kept` says (a preprocessor directive's lines, `_directive_lines`) left as it is: a `#define`'s body is no code
    (gtest's `#define GTEST_CONCAT_TOKEN_(foo, bar) GTEST_CONCAT_TOKEN_IMPL_(foo, bar)`, its body as spaces, lost the
    namespace below; so did a continued define's last line, `  GTEST_ATTRIBUTE_UNUSED_`, as a macro's line)."""
    def blanked(match: re.Match[bytes]) -> bytes:
        if kept is not None and kept(match.start()):
            return match.group(0)
        start, end = match.span(group)
        whole = match.group(0)
        offset = match.start()
        return whole[: start - offset] + _NOT_A_BREAK.sub(b" ", match.group(group)) + whole[end - offset :]
    return blanked


def _directive_lines(source: bytes) -> Callable[[int], bool]:
    """Whether an offset of `source` is on a preprocessor directive's line, or a line a `\\` continues one onto."""
    spans = [m.span() for m in _DIRECTIVE_LINES.finditer(source)]
    starts = [start for start, _ in spans]

    def inside(offset: int) -> bool:
        at = bisect.bisect_right(starts, offset) - 1
        return at >= 0 and offset < spans[at][1]
    return inside


_DIRECTIVE_LINES = re.compile(rb"^[ \t]*#(?:[^\n]*\\\r?\n)*[^\n]*", re.M)


# Kotlin, for the grammar: Multiplatform's `expect` and `actual` modifiers, which it does not know (blanked where a
# declaration's keyword or another modifier follows, so a variable named `actual` stays), and a primary constructor
# on the line after its class (`class ByteString` / `internal actual constructor(` / `  val data: ByteArray,`), which
# it reads as a statement of its own: okio's ByteString lost its class, its methods read as top-level functions.
# The constructor's line is joined to its class's, the line breaks put after it: every later line is kept.
_KOTLIN_MULTIPLATFORM = re.compile(
    rb"\b(?:expect|actual)[ \t]+(?=(?:val|var|fun|class|interface|object|constructor|typealias|enum|annotation|data|"
    rb"sealed|value|inline|abstract|open|override|operator|infix|suspend|tailrec|const|lateinit|external|internal|"
    rb"public|private|protected|companion)\b)")
# a class header with no body yet; comment and annotation lines; the line of its primary constructor (modifiers,
# annotations); the next line's first indentation, if any
_KOTLIN_ANNOTATION = rb"@\w+(?:\.\w+)*(?:\([^\r\n]*?\))?"
_KOTLIN_NEXT_LINE_CONSTRUCTOR = re.compile(
    rb"^([^\S\r\n]*(?:[\w@]+[ \t]+)*(?:class|object)[ \t]+[^\r\n{}()=/]*?)\r?\n"
    rb"(?:[ \t]*(?://|/\*|\*)[^\r\n]*\r?\n|[ \t]*(?:" + _KOTLIN_ANNOTATION + rb"[ \t]*)+\r?\n)*"
    rb"((?:[ \t]*(?:internal|public|private|protected|" + _KOTLIN_ANNOTATION + rb"))*[ \t]*constructor[ \t]*\("
    rb"[^\r\n]*)\r?\n[ \t]?", re.M)


def _kotlin_for_grammar(source: bytes) -> bytes:
    source = _KOTLIN_MULTIPLATFORM.sub(_blank(0), source)
    return _KOTLIN_NEXT_LINE_CONSTRUCTOR.sub(_constructor_joined, source)


def _constructor_joined(match: re.Match[bytes]) -> bytes:
    """The class's line and its constructor's as one (the comment and annotation lines between them blanked), then as
    many line breaks as the match held: the same bytes and line breaks from there on."""
    header, constructor = match.groups()
    whole = match.group(0)
    space = b"" if constructor[:1] in (b" ", b"\t") else b" "
    joined = header + space + constructor + b"\n" * whole.count(b"\n")
    if len(joined) > len(whole):  # no byte to spare for the space: left as it is
        return whole
    return joined + b" " * (len(whole) - len(joined))


# C# and Swift: conditional compilation splits what the grammar reads as one statement (`if {..}` / `#if X` /
# `else if {..}` / `#endif` / `else {..}`: Newtonsoft.Json's methods were cut into functions named `if`, their
# classes lost), or offers a header twice over one body. The grammar reads every branch with the directives
# blanked; where that does not parse, the first branch of each `#if` alone (as a build that defines every symbol
# would) if that parses with fewer errors: an error elsewhere in the file does not cost the other branches their
# definitions. What is shown is the file's own text.
_BRANCH_LANGUAGES = frozenset({"csharp", "swift"})
# Swift 5.10's `nonisolated(unsafe)` (and 6.2's `nonisolated(nonsending)`), newer than the grammar: read as
# `nonisolated`, which it knows (a stored property of Alamofire's Protected was a method named `(unsafe)`)
# C#'s `ref partial struct MessagePackReader`, which the grammar does not read (a property named `struct`, the type's
# members lost): `ref` blanked for it
_CSHARP_REF_PARTIAL = re.compile(rb"\b(ref)[ \t]+(?=partial[ \t]+struct\b)")
_SWIFT_ISOLATION = re.compile(rb"\bnonisolated[ \t]*(\((?:unsafe|nonsending)\))")
_DIRECTIVE = re.compile(rb"^[ \t]*#[ \t]*(" + "|".join((*CONDITIONAL_WORDS, "error", "warning")).encode() + rb")\b",
                        re.M)  # `#error(...)`: a build's stop, which Swift's grammar cannot read
_OPENS = frozenset({b"if", b"ifdef", b"ifndef"})
_SPACE = b" \t\r\n"
_NEXT_BRANCH = frozenset({b"elif", b"elifdef", b"elifndef", b"elseif", b"else"})


# bats (the Bash Automated Testing System): a test, `@test "title" {` ... `}`, is no bash the grammar reads (a
# command `@test` given a word `{`: the test's lines were the file's own code, bats-core's 200 test files each one
# module record). For the grammar it is a function named `@test`, the title and the spaces up to its `{` blanked
# (the same bytes and lines); it is named by its title as written (`_bats_title`), of kind test.
_BATS_TEST = re.compile(rb"^[ \t]*@test([ \t]+(?:\"(?:[^\"\\\n]|\\.)*\"|'[^'\n]*')[ \t]*)\{[ \t]*$", re.M)
_BATS_NAME = b"@test"


def _bats_for_grammar(source: bytes) -> bytes:
    return _BATS_TEST.sub(_bats_function, source) if _BATS_NAME in source else source


def _bats_function(test: re.Match[bytes]) -> bytes:
    """`@test "title" {` as `@test()       {`: the parentheses take two of the title's bytes, spaces the rest."""
    start, end = test.span(1)
    offset = test.start()
    whole = test.group(0)
    return whole[: start - offset] + b"()" + b" " * (end - start - 2) + whole[end - offset :]


def _bats_title(node: Any, lines: list[str]) -> str | None:
    """A bats test's title, spaces as `_` as every test's (`_titled`), where `node` is one read as a function."""
    name = node.child_by_field_name("name") if node.type == "function_definition" else None
    if name is None or name.text != _BATS_NAME:
        return None
    found = re.match(r"[ \t]*@test[ \t]+([\"'])(.*)\1[ \t]*\{", lines[node.start_point[0]])
    return None if found is None else _title_as_name(found.group(2))


# A Vue or Svelte component: its code is in its `<script>` elements (`<script setup lang="ts">`, Svelte's `<script
# context="module">`), read by the TypeScript grammar (JavaScript's superset) with the markup around them blanked;
# the template's and style's lines are the component's own code outside definitions, found by their words.
_MARKUP_SCRIPTS = frozenset({"vue", "svelte"})
_SCRIPT_ELEMENT = re.compile(rb"(<script\b[^>]*>)(.*?)(</script\s*>)", re.S | re.I)


def _scripts_only(source: bytes) -> bytes:
    """The source with every byte outside its `<script>` elements' contents a space (line breaks kept)."""
    out, at = [], 0
    for script in _SCRIPT_ELEMENT.finditer(source):
        out.append(_NOT_A_BREAK.sub(b" ", source[at : script.start(2)]))
        out.append(script.group(2))
        at = script.end(2)
    out.append(_NOT_A_BREAK.sub(b" ", source[at:]))
    return b"".join(out)


_NOT_A_BREAK = re.compile(rb"[^\r\n]")

# PowerShell: an empty script block given as a value (`$OnBlock = {}`, `Mock Get-Thing {}`, `-ScriptBlock { }`), which
# the grammar reads as an error that takes the rest of the file with it (Pester's Fold-Run and Fold-Container were no
# definitions), as `''` or `{;}` for the grammar alone; not a statement's own block (`if ($a) {}`, `function f {}`)
_EMPTY_SCRIPT_BLOCK = re.compile(rb"(?<![@$\w])\{[ \t]*\}")
_BLOCK_KEYWORDS = frozenset({b"function", b"filter", b"workflow", b"configuration", b"class", b"enum", b"try",
                             b"finally", b"else", b"elseif", b"begin", b"process", b"end", b"clean", b"do", b"catch",
                             b"trap", b"switch", b"if", b"while", b"until", b"for", b"foreach", b"dynamicparam"})


# PowerShell: a switch's clause written as a double-quoted string holding a space or an anchored group (`"^flow
# (?<cmd>\S*)$" {`), which the grammar reads as an error that takes the rest of the file with it (posh-git's
# GitTabExpansionInternal and the two functions after it were no definitions), as a plain word for the grammar alone
_SWITCH_CLAUSE_STRING = re.compile(rb'^([ \t]*)"([^"\r\n]*)"(?=[ \t]*(?:\r?\n[ \t]*)?\{)', re.MULTILINE)
_BRACED_VARIABLE = re.compile(rb"\$\{[^{}]*\}")


def _clause_string_plain(clause: re.Match[bytes]) -> bytes:
    inside = clause.group(2)
    bare = _BRACED_VARIABLE.sub(b"", inside)  # (`${ignoreGitParams}`: a variable, no block)
    if b"{" in bare or b"}" in bare or bare.count(b"(") != bare.count(b")"):
        return clause.group(0)  # a line of a string that a subexpression's own quotes cut short, not a clause
    return clause.group(1) + b'"' + b"x" * len(inside) + b'"'


def _powershell_for_grammar(source: bytes) -> bytes:
    return _SWITCH_CLAUSE_STRING.sub(_clause_string_plain, _EMPTY_SCRIPT_BLOCK.sub(_script_block_filled, source))


def _script_block_filled(block: re.Match[bytes]) -> bytes:
    source, start = block.string, block.start()
    line = source[source.rfind(b"\n", 0, start) + 1 : start].rstrip()
    words = [word.lower() for word in re.findall(rb"[A-Za-z]+", line)]
    keyword = bool(words) and (words[0] in _BLOCK_KEYWORDS or line[-1:].isalpha() and words[-1] in _BLOCK_KEYWORDS)
    argument = (line[-1:].isalnum() or line.endswith((b"\"", b"'", b"-", b"]"))) and not keyword
    if not (line.endswith((b"=", b",", b"(")) or argument):
        return block.group(0)
    width = len(block.group(0))
    return b"''" if width == 2 else b"{;" + b" " * (width - 3) + b"}"


def _tree(parser: Any, source: bytes, language: str | None) -> Any:
    """The grammar's tree of a file: of its own bytes, less what the language's preprocessor takes away (every
    offset and line kept)."""
    if language in _MARKUP_SCRIPTS:
        return parser.parse(_scripts_only(source))
    if language == "bash":
        return parser.parse(_bats_for_grammar(source))
    if language in _MACRO_LANGUAGES:
        return _fewest_errors(parser, _macros_blanked(source, language))
    if language == "kotlin":
        return parser.parse(_kotlin_for_grammar(source))
    if language == "powershell":
        return parser.parse(_powershell_for_grammar(source))
    if language == "typescript":
        return _call_signatures_apart(parser, source)
    if language == "swift":
        source = _SWIFT_ISOLATION.sub(_blank(1), source)
    if language == "csharp":
        source = _CSHARP_REF_PARTIAL.sub(_blank(1), source)
    if language in _BRANCH_LANGUAGES and _DIRECTIVE.search(source) is not None:
        every = parser.parse(_branches_blanked(source, first_only=False))
        if not every.root_node.has_error:
            return every
        first = parser.parse(_branches_blanked(source, first_only=True))
        return first if _errors(first.root_node) < _errors(every.root_node) else every
    return parser.parse(source)


# TypeScript without semicolons: a generic call signature on a line of its own after a member (hono's
# `HandlerInterface`: `): HonoBase<...>` then `<` / `P extends string = CurrentPath,` / `>(handler: H): ...`) is read
# as the member's type continued, and the grammar lost the rest of the file (src/types.ts's 30 types after its line
# 150): a `;` where the signature's indentation was, as a member written with one has it
_SIGNATURE_START = re.compile(rb"^([ \t]+)<(?=[ \t]*\r?$|[ \t]*[A-Za-z_$][\w$]*[ \t]*(?:extends\b|,|=|>[ \t]*\())")
_CODE_END = re.compile(rb"([^\s]{1,2})[ \t]*(?://[^\n]*)?\r?$")  # a line's last characters of code
# the last characters of a line that the next one continues: a list, a call, an assignment (Prettier's `export const
# identity =` / `  <T,>(x: T): T => x`), an arrow's body, a type after `:`, an operator (`a` / `< b`)
_CONTINUES = b";,{(=:?|&+-*/%!<"  # (and `=>`; a `>` closing a type's arguments does not)


def _call_signatures_apart(parser: Any, source: bytes) -> Any:
    """The grammar's tree of a TypeScript file, with a `;` before each such signature where that reads better."""
    tree = parser.parse(source)
    if not tree.root_node.has_error or b"\n" not in source:
        return tree
    lines = source.split(b"\n")
    last = b""  # the last character of code above, over blank and comment lines
    changed = False
    for i, line in enumerate(lines):
        start = _SIGNATURE_START.match(line)
        if start is not None and last and last[-1:] not in _CONTINUES and not last.endswith(b"=>"):
            cut = len(start.group(1)) - 1
            lines[i] = line[:cut] + b";" + line[cut + 1 :]
            changed = True
        stripped = line.strip()
        if stripped and not stripped.startswith((b"//", b"/*", b"*")):
            found = _CODE_END.search(line)
            last = found.group(1) if found is not None else last  # (its last two characters)
    if not changed:
        return tree
    apart = parser.parse(b"\n".join(lines))
    return apart if _errors(apart.root_node) < _errors(tree.root_node) else tree


def _fewest_errors(parser: Any, source: bytes) -> Any:
    """C and C++: the tree of the source as it is, or, where that has errors and the source has conditional
    compilation, of every branch or of each first branch (`_branches_blanked`) if that has fewer bytes in errors (the
    later branches' code counted as such: it is not read). A
    directive inside a statement (leveldb's `#if !defined(NDEBUG)` in a constructor's initializer list, nlohmann's in a
    template's parameters, jq's in K&R functions) made the rest of the file one error: `class Limiter` held every
    later class, jq's `jvp_strtod` was no definition."""
    tree = parser.parse(source)
    if not tree.root_node.has_error or _DIRECTIVE.search(source) is None:
        return tree
    every, first = (_branches_blanked(source, first_only) for first_only in (False, True))
    dropped = len(every.translate(None, _SPACE)) - len(first.translate(None, _SPACE))  # code of the later branches
    costs = ((_error_bytes(tree.root_node), tree), (_error_bytes((t := parser.parse(every)).root_node), t),
             (_error_bytes((t := parser.parse(first)).root_node) + dropped, t))  # (libuv's fsevents.c is all `#else`)
    return min(costs, key=lambda cost: cost[0])[1]  # the first of equals


def _error_bytes(node: Any) -> int:
    """The bytes under `node` in the grammar's error nodes (what parsed inside one is no less lost: the class around
    it is), and for a token it had to assume (a `}` a branch's brace left open) all of what holds it. A walk of its
    own (an expression 600 terms deep is as deep a tree: Python's stack is not)."""
    total, stack = 0, [node]
    while stack:
        at = stack.pop()
        if at.is_missing:
            total += at.parent.end_byte - at.parent.start_byte if at.parent is not None else 0
        elif at.type == "ERROR":
            total += at.end_byte - at.start_byte
        else:
            stack.extend(child for child in at.children if child.has_error or child.is_missing)
    return int(total)


def _errors(node: Any) -> int:
    """The grammar's error and missing nodes under `node` (only the branches holding one are walked)."""
    if node.type == "ERROR" or node.is_missing:
        return 1
    return sum(_errors(child) for child in node.children if child.has_error or child.is_missing)


def _branches_blanked(source: bytes, first_only: bool) -> bytes:
    """The source with its `#if`/`#ifdef`/`#elif`/`#else`/`#endif` (and `#error`, `#warning`) lines as spaces, a
    line a directive's `\\` continues with it, and (`first_only`) each branch after an `#if`'s first."""
    lines = source.split(b"\n")
    taking: list[bool] = []  # per open `#if`: still in its first branch
    continued = False  # the line before was a directive's, ending in `\`: this one is its too
    for i, line in enumerate(lines):
        directive = _DIRECTIVE.match(line)
        if directive is not None:
            word = directive.group(1)
            if word in _OPENS:
                taking.append(True)
            elif word == b"endif" and taking:
                taking.pop()
            elif word in _NEXT_BRANCH and taking:
                taking[-1] = False
        if directive is not None or continued or (first_only and not all(taking)):
            continued = (directive is not None or continued) and line.rstrip().endswith(b"\\")
            lines[i] = b" " * len(line)
    return b"\n".join(lines)


# statements that bring in other code, in the grammars that have them (Python, JS/TS, Go, Java, Kotlin, Scala,
# Swift, Rust, C/C++, C#, PHP); and the top-level blocks that hold them (a C header's include guard)
_IMPORTS = frozenset({"import_statement", "import_from_statement", "future_import_statement", "import_declaration",
                      "import_list", "use_declaration", "using_declaration", "preproc_include", "using_directive",
                      "namespace_use_declaration"})
_GUARDS = frozenset({"preproc_ifdef", "preproc_if", "preproc_ifndef"})
# where an import is a call (Ruby's `require 'json'`, Lua's `local json = require("json")`, CommonJS's
# `const { a = 1 } = require('./a')`, PHP's `require_once 'a.php'`): a top-level statement that is one, or binds
# names to one (its first REQUIRE_BYTES read: a long destructuring still counts)
_CALLS = frozenset({"call", "function_call", "expression_statement", "variable_declaration", "lexical_declaration",
                    "assignment_statement"})
_REQUIRE = re.compile(rb"(?:(?:(?:local|const|let|var)\s+)?[\w$.{}\[\]\s,:=]+?=\s*)?"
                      rb"(?:require(?:_relative|_once)?|include(?:_once)?)\b\s*[('\"]")
REQUIRE_BYTES = 4_000


def _imports_in(root: Any, source: bytes) -> Iterator[Any]:
    for node in root.children:
        if node.type in _GUARDS:
            yield from (child for child in node.children if _imports(child, source))
        elif _imports(node, source):
            yield node


def _imports(node: Any, source: bytes) -> bool:
    if node.start_point[1] != 0:
        return False
    if node.type in _IMPORTS or node.type not in _CALLS:
        return node.type in _IMPORTS
    # read from the source's bytes: a node's own text would copy all of a long statement (a module's data table)
    return _REQUIRE.match(source[node.start_byte:min(node.end_byte, node.start_byte + REQUIRE_BYTES)]) is not None


def _last_row(node: Any) -> int:
    """A node's last line (0-based): not the next one, where a node that takes its newline (`#include`) ends."""
    row, column = int(node.end_point[0]), int(node.end_point[1])
    return row - 1 if column == 0 and row > node.start_point[0] else row


def _parser(language: str | None) -> Any:
    if language is None:
        return None
    try:
        from tree_sitter_language_pack import get_parser
        return get_parser("typescript" if language in _MARKUP_SCRIPTS else language)  # type: ignore[arg-type]
    except (ImportError, LookupError):
        return None


# node types that hold no definition: the walk does not descend into them (in any grammar, and in Python, whose
# definitions are statements: none inside an expression, an import or a return)
_OPAQUE = frozenset({"string", "comment", "line_comment", "block_comment", "concatenated_string", "string_literal",
                     "template_string", "raw_string_literal", "interpreted_string_literal", "heredoc_body"})
_OPAQUE_BY_LANGUAGE = {"python": _OPAQUE | {
    "expression_statement", "return_statement", "import_statement", "import_from_statement", "assert_statement",
    "raise_statement", "delete_statement", "global_statement", "nonlocal_statement", "pass_statement",
    "future_import_statement", "print_statement", "exec_statement", "type_alias_statement"}}


# languages where `#` opens a directive (`#define`, `#if`, `#region`), not a comment; and those with no `/* */`
_DIRECTIVES = frozenset({"c", "cpp", "csharp", "objc", "swift", "cuda", "haskell"})  # (Haskell's CPP)
_NO_BLOCK_COMMENTS = frozenset({"python", "ruby", "bash", "lua"})


@dataclass(frozen=True)
class Comments:
    """How a language writes the comments above a definition: whether `#` opens one, whether a block comment exists
    and how it opens and closes (`/* */`; PowerShell's help, `<# #>`)."""

    hash: bool = True
    block: bool = True
    fences: tuple[str, str] = ("/*", "*/")

    @classmethod
    def of(cls, language: str | None) -> Comments:
        return cls(language not in _DIRECTIVES, language not in _NO_BLOCK_COMMENTS,
                   _BLOCK_FENCES.get(language or "", ("/*", "*/")))


_BLOCK_FENCES = {"powershell": ("<#", "#>"), "haskell": ("{-", "-}")}


def _definitions(node: Any, lines: list[str], opaque: frozenset[str] = _OPAQUE, comments: Comments = Comments()
                 ) -> Iterator[Definition]:
    """The definitions under `node`, each with its nested ones and the comments above it (`comments`: how its
    language writes them)."""
    bodies: set[tuple[int, int]] = set()  # Dart: the function bodies read with the signatures before them
    for child in node.children:
        if child.child_count == 0 or child.type in opaque or (child.start_byte, child.end_byte) in bodies:
            continue
        if (dart := _dart_body(child)) is not None:
            bodies.add((dart.start_byte, dart.end_byte))
            yield _dart_function(child, dart, lines, opaque, comments)
            continue
        if (declared := _dart_declared(child)) is not None:  # a constructor or member with no body of its own
            yield _dart_function(declared, None, lines, opaque, comments, child)
            continue
        if child.type not in _DEFINING and not _go_type_spec(child) or _grouped(child):  # most nodes: what they
            # hold is all there is to read
            yield from _definitions(child, lines, opaque, comments)
            continue
        target = child
        if child.type == "decorated_definition":  # Python: the decorators belong to the definition
            target = child.child_by_field_name("definition") or child
        elif child.type == "template_declaration":  # C++: `template <...>` and the comment above belong to it
            target = next((c for c in reversed(child.named_children) if c.type in _KINDS), child)
        kind, name_node, value, title = _what(target)
        if (test := _bats_title(target, lines)) is not None:
            kind, title = ("test", False), test
        body = value if value.type in _BLOCKS else value.child_by_field_name("body")  # (Elixir's `do ... end`)
        if body is None and value.type in _BODY_CHILDREN:  # Objective-C's method, PowerShell's function and
            body = next((c for c in value.children if c.type == _BODY_CHILDREN[value.type]), None)  # method: their
            # block, a child of no field
        if body is None and (target.type in _BODY_ONLY or value.type in _CLASS_EXPRESSIONS):
            body = next((c for c in value.named_children if c.type == "class_body"), None)
            kind = kind if body is not None else None
        # a C-family type on one line is a definition only with a body (`struct foo *x;` names a type, defines none;
        # `template <typename T> struct formatter;` declares one), and so is a Rust `mod handler;`, which names a
        # file; Kotlin's `class EqOp(...) : ComparisonOp(...)`, Scala's `case class Config(i: Int)` and Rust's
        # `struct Unit;` are whole definitions (a trial's look-up of `EqOp` was told no definition had that name)
        if kind is None or target.end_point[0] == target.start_point[0] and _forward(target) and body is None:
            yield from _definitions(child, lines, opaque, comments)
            continue
        word, container = kind
        name = title if title is not None else _name_of(target, name_node, lines)
        if name in _STATEMENT_WORDS:  # a grammar's misreading (curl's `if (...)` after an `#ifdef` block read as a
            yield from _definitions(child, lines, opaque, comments)  # function named `if`): none
            continue
        body_line = body.start_point[0] if body is not None else target.start_point[0] + 1
        if body is not None and body.start_point[0] == target.start_point[0]:  # `{` on the header line
            body_line = target.start_point[0] + 1
        first = _with_comments_above(min(_attributes_above(child, lines), _overloads_above(target)), lines, comments)
        inner = tuple(_definitions(body if body is not None else target, lines, opaque, comments)) \
            if container or body else ()
        statements = tuple(c.start_point[0] for c in body.named_children) if body is not None else ()
        yield Definition(first, child.end_point[0], max(body_line, first + 1), f"{word} {name}", container, inner,
                         statements, _header_row(target, name_node))


def _go_type_spec(node: Any) -> bool:
    """One type of a Go group, `type (\n\ta struct{}\n\tb struct{}\n)` (`_grouped`): not PowerShell's `type_spec`,
    a type literal's name (`[System.IO.File]`), which had become hundreds of definitions of ansible's `.ps1` files."""
    return node.type == "type_spec" and node.parent is not None and node.parent.type == "type_declaration"


def _grouped(node: Any) -> bool:
    """A Go group of types, `type (\n\tformBinding struct{}\n\tformPostBinding struct{}\n)`: each type its own
    definition (the group was one named `?`, and gin's `formPostBinding` said to be defined nowhere)."""
    return node.type == "type_declaration" and any(c.type == "(" for c in node.children)  # (one type in one too)


_STATEMENT_WORDS = frozenset({"if", "else", "for", "while", "switch", "return", "do", "sizeof", "catch", "case"})
_BLOCKS = frozenset({"do_block", "braced_expression", "script_block"})  # a definition's value that is its body:
# Elixir's, R's test's, a Pester test's

# Dart: a function or method is its signature and the `function_body` after it, two nodes side by side
_DART_SIGNATURES = frozenset({"function_signature", "method_signature", "getter_signature", "setter_signature"})
_DART_CONSTRUCTORS = frozenset({"constructor_signature", "factory_constructor_signature",
                                "constant_constructor_signature", "redirecting_factory_constructor_signature"})


def _dart_body(signature: Any) -> Any | None:
    """The body of a Dart signature (the `function_body` right after it), if it is one: a TypeScript overload's
    `function_signature` has none."""
    after = signature.next_named_sibling if signature.type in _DART_SIGNATURES else None
    return after if after is not None and after.type == "function_body" else None


_DART_MEMBERS = _DART_CONSTRUCTORS | {"function_signature", "getter_signature", "setter_signature",
                                     "operator_signature"}


def _dart_declared(declaration: Any) -> Any | None:
    """The signature of a Dart member declared with no body of its own: a constructor with an initializer list or a
    redirection (`const BlocProvider({...}) : super(key: key);`, `factory A.other() = B;`), an abstract method."""
    if declaration.type != "declaration":
        return None
    return next((c for c in declaration.named_children if c.type in _DART_MEMBERS), None)


def _dart_function(signature: Any, body: Any | None, lines: list[str], opaque: frozenset[str], comments: Comments,
                   declaration: Any | None = None) -> Definition:
    """A Dart function, method, getter, setter, operator or constructor: from its signature (annotations and doc
    comments above it) to its body's end (a declaration's, when it has none), named as Dart calls it (`Counter.named`'s
    constructor `named`, `operator ==`)."""
    own = signature.named_children[0] if signature.type == "method_signature" and signature.named_child_count \
        else signature
    names = [c for i, c in enumerate(own.children) if c.type == "identifier" and
             (own.field_name_for_child(i) == "name" or own.type in _DART_CONSTRUCTORS)]
    named = names[-1] if names else None  # (a named constructor `Counter.named`: `named`)
    word = "constructor" if own.type in _DART_CONSTRUCTORS else "def"
    written = _DART_OPERATOR.search(own.text.decode("utf-8", "replace")) if own.type == "operator_signature" else None
    name = f"operator{written.group(1)}" if written is not None else \
        named.text.decode("utf-8", "replace") if named is not None else _first_name(own, lines)
    outer = declaration if declaration is not None else signature
    block = next((c for c in body.named_children if c.type == "block"), None) if body is not None else None
    header = outer.start_point[0]
    body_line = block.start_point[0] if block is not None and block.start_point[0] > header else header + 1
    first = _with_comments_above(_attributes_above(outer, lines), lines, comments)
    statements = tuple(c.start_point[0] for c in block.named_children) if block is not None else ()
    inner = tuple(_definitions(body, lines, opaque, comments)) if body is not None else ()
    last = (body if body is not None else outer).end_point[0]
    return Definition(first, last, max(body_line, first + 1), f"{word} {name}", False, inner, statements, header)


_DART_OPERATOR = re.compile(r"\boperator\s*([^\s(]+)")


def _what(target: Any) -> tuple[tuple[str, bool] | None, Any, Any, str | None]:
    """What `target` defines: (its kind's word and whether it is a container, or None; the node naming it; the node
    whose `body` is its body; its name when no node's text is it, a test's title)."""
    if target.type in _READ_AS_WRITTEN and (written := _as_written(target)) is not None:
        return written
    if _anonymous_function(target):  # Lua: `function(err) ... end` given to a call is no definition of its own
        return None, None, target, None
    name_node = target.child_by_field_name("name")
    if target.type == "property_declaration" and (declared := _objc_property(target)) is not None:
        return ("property", False), declared, target, None
    if name_node is None and (target.type in _NAMED_ONLY or _unnamed_c_type(target)) or _local(target):
        return None, None, target, None
    declared = target.child_by_field_name("declaration_kind")  # Swift's class_declaration: class, struct, enum,
    if declared is not None and target.type == "class_declaration":  # extension or actor, as written
        return (declared.text.decode("utf-8", "replace"), True), name_node, target, None
    if target.type in _OBJC_CLASSES and target.child_by_field_name("category") is not None:  # Objective-C's
        return ("extension", True), name_node, target, None  # `@interface Greeter (Extra)`: its methods are Greeter's
    if (go := _go_kind(target)) is not None:
        return (go, False), name_node, target, None
    if target.type == "class_declaration" and (kotlin := _kotlin_kind(target)) is not None:
        return (kotlin, True), name_node, target, None
    return _KINDS.get(target.type), name_node, target, None


_RUBY_CLASS_MAKERS = frozenset({b"Class.new", b"Struct.new", b"Data.define", b"Module.new"})


def _ruby_class_made(target: Any) -> tuple[Any, Any] | None:
    """(name, node) of a Ruby constant bound to a class a call makes: `Stub = Struct.new(:host, :path) do ... end`,
    `Env = Options.new(:method, ...) do` with methods in its block, `NotFound = Class.new(StandardError)` (faraday's
    `Env` and `SSLOptions` were no definitions, their methods the enclosing module's: `Faraday.success?`)."""
    if target.type != "assignment":
        return None
    named, made = target.child_by_field_name("left"), target.child_by_field_name("right")
    if named is None or named.type != "constant" or made is None or made.type != "call":
        return None
    receiver, method = made.child_by_field_name("receiver"), made.child_by_field_name("method")
    called = receiver.text + b"." + method.text if receiver is not None and method is not None else b""
    block = made.child_by_field_name("block")
    defines = block is not None and any(c.type in ("method", "singleton_method") for c in _block_body(block))
    return (named, target) if called in _RUBY_CLASS_MAKERS or defines else None


def _block_body(block: Any) -> list[Any]:
    """The statements of a Ruby block (`do ... end` or `{ ... }`)."""
    body = next((c for c in block.named_children if c.type in ("body_statement", "block_body")), None)
    return list(body.named_children) if body is not None else []


def _forward(target: Any) -> bool:
    """A node of a type that names or declares what is defined elsewhere when it has no body (`_FORWARD`), or
    Objective-C's `@class User;` (its grammar's `class_declaration`, Kotlin's for a class)."""
    return target.type in _FORWARD or target.child_count > 1 and target.children[0].type == "@"


def _kotlin_kind(target: Any) -> str | None:
    """A Kotlin type's kind as Kotlin writes it: `enum class`, `interface` (`fun interface` too), `annotation
    class`; they shared `class_declaration` with every class, so a trial read `class ReferenceOption` (and a look-up
    of one of its entries found nothing: an enum's members are declared by name alone)."""
    words = {c.type for c in target.children if not c.is_named}
    if "enum" in words:
        return "enum"
    if "interface" in words:
        return "interface"
    modifiers = next((c for c in target.named_children if c.type == "modifiers"), None)
    if modifiers is not None and any(m.type == "class_modifier" and m.text == b"annotation"
                                     for m in modifiers.named_children):
        return "annotation"
    return None


_GO_SHAPES = {"struct_type": "struct", "interface_type": "interface"}


def _go_kind(target: Any) -> str | None:
    """A Go type's kind as Go writes it, `type Context struct {...}`, `type IRoutes interface {...}` (a trial read
    `type IRoutes` and could not tell), else `type` (`type HandlerFunc func(*Context)`), a group's member's too;
    None for any other node."""
    if target.type == "type_declaration":
        spec = next((c for c in target.named_children if c.type == "type_spec"), None)
    elif _go_type_spec(target):
        spec = target
    else:
        return None
    shape = spec.child_by_field_name("type") if spec is not None else None
    return _GO_SHAPES.get(shape.type, "type") if shape is not None else "type"


_OBJC_CLASSES = frozenset({"class_interface", "class_implementation"})
_BODY_CHILDREN = {"method_definition": "compound_statement", "function_statement": "script_block",
                  "class_method_definition": "script_block", "block": "body",  # (a Terraform block's)
                  "function_definition": "block", "macro_definition": "block", "struct_definition": "block",
                  "module_definition": "block", "compound_statement": "block",  # (Julia's)
                  "Decl": "Block", "TestDecl": "Block"}  # (Zig's)


# C/C++ types a `typedef` may name: with no name of their own and no typedef's, they are part of what holds them (a
# struct's `union { int fd; void* reserved[4]; } u;`, a header's `enum { UV_PIPE_NO_TRUNCATE = 1 };` of constants)
_C_TYPES = frozenset({"struct_specifier", "union_specifier", "enum_specifier", "class_specifier"})


def _objc_property(node: Any) -> Any | None:
    """The name an Objective-C `@property (nonatomic, copy) NSString *name;` declares (a block's too: `void
    (^completion)(NSError *)`), the first of several."""
    declared = next((c for c in node.named_children if c.type == "struct_declaration"), None)
    declared = next((c for c in declared.named_children if c.type == "struct_declarator"), None) if declared else None
    while declared is not None and declared.type != "identifier":
        declared = next((c for c in declared.named_children if c.type != "parameter_list"), None)
    return declared


def _unnamed_c_type(target: Any) -> bool:
    return target.type in _C_TYPES and (target.parent is None or target.parent.type != "type_definition")


def _local(target: Any) -> bool:
    """A Swift or Kotlin `let`/`val` among a function's statements is its local, not a definition (Alamofire's
    `let retryPolicy = ...` inside each test was one, and filled every answer)."""
    return target.type == "property_declaration" and target.parent is not None and target.parent.type == "statements"


def _as_written(target: Any) -> tuple[tuple[str, bool], Any, Any, str | None] | None:
    """A definition its node's type does not say: a binding, a field, a call or a misread class that is one."""
    if (block := _terraform_block(target) or _terraform_local(target)) is not None:  # `resource "aws_s3_bucket"
        return block  # "logs" {`, a `locals` block's `create = true`
    if (haskell := _haskell_definition(target)) is not None:  # `greet :: Text -> Text`, `greet who = ...`
        return haskell
    if (julia := _julia_definition(target)) is not None:  # `function greet(g::Greeter)`, `square(x) = x^2`
        return julia
    if (zig := _zig_definition(target)) is not None:  # `pub fn greet(...)`, `const Greeter = struct {`
        return zig
    if (bound := _bound_function(target) or _js_assigned(target) or _lua_bound(target) or _js_pair(target)) \
            is not None:  # JS/TS:
        return ("function", False), *bound, None  # `const f = () => {...}`, a field `f = function...`,
    # `res.send = function(...)`; Lua: `M.run = function(...)`
    if (anonymous := _anonymous_class(target) or _ruby_class_made(target)) is not None:  # Java/Kotlin: a field
        return ("class", True), *anonymous, None  # holding an anonymous class; Ruby's `Env = Struct.new(...) do`
    if (table := _lua_table(target)) is not None:  # Lua: `actions.select_vertical = { action = function ... }`
        return ("table", True), *table, None
    if (test := _test_call(target)) is not None:  # `it('adds', () => {...})`, RSpec's `describe Foo do ... end`
        return ("test", False), *test
    if (elixir := _elixir_definition(target)) is not None:  # `defmodule Foo.Bar do`, `def greet(name) do`
        return elixir
    if (has := _perl_has(target)) is not None:  # Moose's, Moo's and Mojo's `has host => sub {...};`
        package = _perl_package(target)
        return ("property", False), has, target, ".".join((*package.split("::"), _titled(has)) if package
                                                          else (_titled(has),))
    if (assigned := _r_function(target)) is not None:  # R: `area <- function(p) {...}`, R6's `add = function()`
        return ("function", False), *assigned, None
    if (macro := _rust_macro_item(target)) is not None:  # ripgrep's `rgtest!(r16, |dir, cmd| {...});`
        return ("function", False), macro, target, None
    if (named := _js_named_argument(target) or _js_named_operand(target)) is not None:  # `defineGetter(req, 'ip',
        return ("function", False), *named, None  # function ip() {...})` (a test framework's call given a named
    # function is its test); `export default isSupported && function httpAdapter(config) {...}`
    if (typed := _class_as_type(target)) is not None:  # C++: a class the grammar took for a function's type
        return _KINDS[typed[0]], typed[1], typed[2], None
    if (alias := _type_alias(target)) is not None:  # C: `typedef struct uv_loop_s uv_loop_t;`
        return ("type", False), alias, target, None
    return None


# Terraform (HCL): a file's blocks, each named as Terraform refers to it (`aws_s3_bucket.logs`, `var.region`,
# `module.vpc`, `data.aws_iam_policy_document.assume`), of the kind its block type says; another type's block (Nomad's
# `job "web"`, `locals`, `terraform`) by its type and labels, of kind `block`
_TERRAFORM_BLOCKS = {"resource": ("resource", ""), "data": ("data", "data."), "variable": ("variable", "var."),
                     "output": ("output", ""), "module": ("module_call", "module."), "provider": ("provider", "")}


def _terraform_block(node: Any) -> tuple[tuple[str, bool], Any, Any, str] | None:
    """(kind, name node, block, name) of an HCL file's own block (not one nested in another: a resource's
    `lifecycle {...}` is part of it)."""
    if node.type != "block" or node.parent is None or node.parent.type != "body" or \
            node.parent.parent is None or node.parent.parent.type != "config_file":
        return None
    typed = node.named_children[0] if node.named_children else None
    if typed is None or typed.type != "identifier":
        return None
    labels = [c.text.decode("utf-8", "replace").strip('"') for c in node.named_children[1:]
              if c.type in ("string_lit", "identifier")]
    block_type = typed.text.decode("utf-8", "replace")
    if block_type == "locals":  # its values, `local.name` where they are used: each a definition of its own
        return ("block", True), typed, node, "local"
    word, prefix = _TERRAFORM_BLOCKS.get(block_type, ("block", f"{block_type}."))
    name = prefix + ".".join(labels) if labels else block_type
    return (word, False), typed, node, name


def _terraform_local(node: Any) -> tuple[tuple[str, bool], Any, Any, str | None] | None:
    """`create = true` in a Terraform `locals` block: `local.create` (a Terraform module's eks `locals` held the
    values a search for `local.create_oidc_provider` asked for)."""
    if node.type != "attribute" or node.parent is None or node.parent.type != "body" or node.parent.parent is None:
        return None
    block = node.parent.parent
    if block.type != "block" or not block.named_children or block.named_children[0].text != b"locals" or \
            _terraform_block(block) is None:
        return None
    named = node.named_children[0] if node.named_children else None
    return (("local", False), named, node, None) if named is not None and named.type == "identifier" else None


# Haskell: the declarations of a module, a class or an instance (a function's `where` bindings are part of it)
_HASKELL_SCOPES = frozenset({"declarations", "class_declarations", "instance_declarations"})
_HASKELL_FUNCTIONS = frozenset({"function", "bind", "signature"})
_HASKELL_TYPES = frozenset({"data_type", "newtype", "type_synomym", "type_family", "data_family"})


def _haskell_definition(node: Any) -> tuple[tuple[str, bool], Any, Any, str | None] | None:
    """A Haskell function (its type signature and each clause: one definition once joined, `_clauses_joined`), an
    operator's (`a <+> b = ...` is `<+>`), a type (`data`, `newtype`, `type`), a class with its methods, an
    instance named by its type (`instance Show Greeter` holds Greeter's `show`, as a Rust `impl` does); a QuickCheck
    property (`prop_findsParseIssue`) a test."""
    if node.parent is None or node.parent.type not in _HASKELL_SCOPES:
        return None
    named = node.child_by_field_name("name")
    if node.type in _HASKELL_FUNCTIONS:
        infix = next((c for c in node.named_children if c.type == "infix"), None) if named is None else None
        named = infix.child_by_field_name("operator") if infix is not None else named
        if named is None:
            return None
        name = named.text.decode("utf-8", "replace").strip("()")  # `(<+>) ::`
        return ("test" if name.startswith("prop_") else "function", False), named, node, name  # (QuickCheck's
        # properties are tests: shellcheck keeps them beside the code they test)
    if node.type in _HASKELL_TYPES and named is not None:
        return ("type", False), named, node, None
    if node.type == "class" and named is not None:
        return ("class", True), named, node, None
    if node.type == "instance" and (typed := node.child_by_field_name("patterns")) is not None:
        return ("instance", True), typed, node, None
    return None


# Julia: its definitions, the one-line form of a function (`square(x) = x^2`, `Base.show(io::IO, g) = ...`) at a
# module's level; a `@testset "title" begin ... end` is a test
_JULIA_TYPES = {"struct_definition": ("struct", True), "abstract_definition": ("type", False),
                "primitive_definition": ("type", False), "module_definition": ("module", True)}
_JULIA_LEVELS = frozenset({"source_file", "module_definition"})


def _julia_definition(node: Any) -> tuple[tuple[str, bool], Any, Any, str | None] | None:
    found = _julia_found(node)
    return None if found is None or _quoted(node) else found  # (quoted: code a macro or a function builds, not
    # defines; asked only of Julia's definitions, not of every other grammar's function)


def _julia_found(node: Any) -> tuple[tuple[str, bool], Any, Any, str | None] | None:
    if node.type in ("function_definition", "macro_definition"):
        signature = next((c for c in node.named_children if c.type == "signature"), None)
        named = _julia_called(signature.named_children[0]) if signature and signature.named_children else None
        word = "macro" if node.type == "macro_definition" else "method" if _callable_struct(named) else "function"
        return ((word, False), named, node, None) if named is not None else None
    if node.type == "assignment" and node.parent is not None and (
            node.parent.type in _JULIA_LEVELS or node.parent.type == "block" and node.parent.parent is not None
            and node.parent.parent.type in _JULIA_LEVELS) and node.named_children:
        named = _julia_called(node.named_children[0], calls_only=True)
        word = "method" if _callable_struct(named) else "function"
        return ((word, False), named, node, None) if named is not None else None
    if node.type in _JULIA_TYPES:
        head = next((c for c in node.named_children if c.type in ("type_head", "identifier")), None)
        named = _julia_called(head.named_children[0] if head is not None and head.type == "type_head" and
                              head.named_children else head)
        return (_JULIA_TYPES[node.type], named, node, None) if named is not None else None
    if node.type == "macrocall_expression":
        return _julia_testset(node)
    return None


def _callable_struct(named: Any | None) -> bool:
    """`Dense` of `(a::Dense)(x)`: a method its type's values are called by."""
    typed = named.parent if named is not None else None
    return typed is not None and typed.type in ("typed_expression", "unary_typed_expression") and \
        typed.parent is not None and typed.parent.type == "parenthesized_expression"


def _quoted(node: Any) -> bool:
    """Inside a Julia `quote ... end` or `:(...)`: Flux's `_macro_layer_show` returns a `function Base.show` it
    builds, which was taken for one of its own."""
    parent = node.parent
    while parent is not None:
        if parent.type in ("quote_statement", "quote_expression"):
            return True
        parent = parent.parent
    return False


def _julia_called(node: Any, calls_only: bool = False) -> Any | None:
    """The name a Julia signature or type head defines: `greet` of `greet(g)::String where T`, `Base.show` of
    `Base.show(io, g)`, `Counter` of `Counter{T} <: Animal`, the type a callable struct's method is of (`Dense` of
    `(a::Dense)(x)`, Flux's layers' forward passes); with `calls_only`, only a call's (`x = 1` defines no
    function)."""
    called = False
    while node is not None and node.type in ("where_expression", "typed_expression", "call_expression",
                                             "parametrized_type_expression", "binary_expression",
                                             "parenthesized_expression", "unary_typed_expression"):
        called = called or node.type == "call_expression"
        typed = node.type in ("typed_expression", "unary_typed_expression") and node.parent is not None and \
            node.parent.type == "parenthesized_expression"  # `(a::Dense)`: the type, not the argument's name
        node = (node.named_children[-1] if typed else node.named_children[0]) if node.named_children else None
    if node is None or node.type not in ("identifier", "field_expression") or calls_only and not called:
        return None
    return node


def _zig_definition(node: Any) -> tuple[tuple[str, bool], Any, Any, str | None] | None:
    """Zig: a function (`fn helper(x: i32) i32 {`), a type bound to a name (`const Greeter = struct {`, `enum`,
    `union(enum)`, `opaque`), its functions its methods; a `test "title" {` (or `test helper {`) a test."""
    if node.type == "ContainerDecl" and (alias := _zig_this_alias(node)) is not None:
        return (_zig_container_word(node), True), alias, node, None
    if node.type == "TestDecl":
        title = next((c for c in node.named_children if c.type in ("STRINGLITERALSINGLE", "IDENTIFIER")), None)
        name = title.text.decode("utf-8", "replace").strip('"') if title is not None else "test"
        return ("test", False), title, node, _title_as_name(name)
    if node.type != "Decl":
        return None
    proto = next((c for c in node.named_children if c.type == "FnProto"), None)
    if proto is not None:
        named = next((c for c in proto.named_children if c.type == "IDENTIFIER"), None)
        return (("function", False), named, node, None) if named is not None else None
    bound = next((c for c in node.named_children if c.type == "VarDecl"), None)
    named = next((c for c in bound.named_children if c.type == "IDENTIFIER"), None) if bound is not None else None
    value = bound.named_children[-1] if bound is not None and bound.named_children else None
    while value is not None and value.type in ("ErrorUnionExpr", "SuffixExpr"):
        value = value.named_children[0] if value.named_children else None
    if named is None or value is None or value.type != "ContainerDecl":
        return None
    one_line = node.start_point[0] == node.end_point[0]  # (`const Color = enum { red, green };` defines it too)
    return (_zig_container_word(value), not one_line), named, node, None


def _zig_container_word(container: Any) -> str:
    typed = next((c for c in container.named_children if c.type == "ContainerDeclType"), None)
    word = typed.text.decode("utf-8", "replace").split("(")[0].strip() if typed is not None else "struct"
    return word if word in ("struct", "enum", "union") else "type"


def _zig_this_alias(container: Any) -> Any | None:
    """The name an unnamed Zig type gives itself (`return struct { const Replica = @This(); ... }` in `fn
    ReplicaType(...) type`): the code calls it `Replica`, so its methods are `ReplicaType.Replica.on_request`, which
    a look-up of `Replica.on_request` finds. `Self` names no type, and a type bound to a name is named by it."""
    holder = container.parent
    while holder is not None and holder.type in ("ErrorUnionExpr", "SuffixExpr"):
        holder = holder.parent
    if holder is None or holder.type == "VarDecl":
        return None
    for member in (m for m in container.named_children if m.type == "Decl"):
        bound = next((c for c in member.named_children if c.type == "VarDecl"), None)
        if bound is None or bound.named_children[-1].text.replace(b" ", b"") != b"@This()":
            continue
        named = next((c for c in bound.named_children if c.type == "IDENTIFIER"), None)
        if named is not None and named.text != b"Self":
            return named
    return None


def _julia_testset(call: Any) -> tuple[tuple[str, bool], Any, Any, str] | None:
    """A Julia `@testset "greet" begin ... end` (Test's): a test titled by its string."""
    macro = next((c for c in call.named_children if c.type == "macro_identifier"), None)
    given = next((c for c in call.named_children if c.type == "macro_argument_list"), None)
    if macro is None or macro.text != b"@testset" or given is None:
        return None
    title = next((c for c in given.named_children if c.type == "string_literal"), None)
    block = next((c for c in given.named_children if c.type in ("compound_statement", "for_statement")), None)
    if title is None or block is None:
        return None
    return ("test", False), title, block, _titled(title)


def _type_alias(node: Any) -> Any | None:
    """The name a C/C++ `typedef` gives a type defined elsewhere (`typedef struct uv_loop_s uv_loop_t;`, `typedef void
    (*uv_close_cb)(uv_handle_t*);`): a look-up of `uv_loop_t` finds the line that says what it is. A typedef of a
    struct, union or enum with its body is that type's definition, named by the alias (`_own_name`)."""
    if node.type != "type_definition":
        return None
    typed = node.child_by_field_name("type")
    if typed is not None and typed.child_by_field_name("body") is not None:
        return None
    declared = node.child_by_field_name("declarator")
    while declared is not None and declared.type not in _DECLARED:
        declared = _declarator_in(declared)
    return declared


_CLASS_EXPRESSIONS = frozenset({"object_creation_expression", "object_literal"})  # their body is a `class_body` child
# test frameworks' calls that define a test or a group of tests: Jest, Mocha, Vitest, Jasmine, Playwright (JS/TS),
# RSpec (Ruby); a title and a function (a block) given
_TEST_CALLS = frozenset({"describe", "context", "suite", "it", "test", "specify", "example", "feature", "scenario",
                         "test_that",
                         "fdescribe", "xdescribe", "fit", "xit", "shared_examples", "shared_context"})
_TITLES = frozenset({"string", "template_string", "constant", "scope_resolution", "simple_symbol"})
_TEST_MODIFIERS = frozenset({"each", "only", "skip", "todo", "concurrent", "sequential", "serial", "failing", "fails",
                             "fixme", "slow", "describe", "parallel", "skipIf", "runIf", "shuffle"})


_ITEM_LEVEL = frozenset({"source_file", "declaration_list"})  # a Rust file's items, and a `mod`'s


def _rust_macro_item(node: Any) -> Any | None:
    """The name a Rust macro called at a file's (a module's) level over several lines with a name first defines:
    ripgrep's `rgtest!(r16, |dir: Dir, mut cmd: TestCommand| {...});` is the test `fn r16`, and its 1,656-line
    tests/regression.rs had been one module record with no test in it."""
    call = node.named_children[0] if node.type == "expression_statement" and node.named_child_count else node
    if call.type != "macro_invocation" or node.parent is None or node.parent.type not in _ITEM_LEVEL or \
            call.end_point[0] == call.start_point[0]:
        return None
    tokens = next((c for c in call.named_children if c.type == "token_tree"), None)
    if tokens is None or tokens.child_count < 3:
        return None
    name, comma = tokens.children[1], tokens.children[2]  # (after its opening bracket)
    body = tokens.children[3] if tokens.child_count > 3 else None  # a closure or a block: what the test runs
    if name.type != "identifier" or comma.type != "," or body is None or \
            not (body.type in ("|", "||", "token_tree") or body.type == "identifier" and body.text == b"move"):
        return None  # (`impl_op!(Meters, Add, add);` uses a type, defines no function of its name)
    return name


def _test_call(node: Any) -> tuple[Any, Any, str] | None:
    """(title node, function or block, name) where `node` is a test framework's call that defines a test or a group:
    `describe('Router', () => {...})`, `it.each(rows)('adds %i', fn)`, `test.describe(...)`, RSpec's
    `RSpec.describe Foo::Bar do ... end`, `describe :fetch do` and `it 'adds' do ... end`, busted's (Lua)
    `describe("history", function() ... end)`, Go's subtest
    `t.Run("empty input", func(t *testing.T) {...})`. Named by the title as Go names a subtest (spaces as `_`; `.`
    too: it joins a qualified name): they were code of no definition, a test file one unit. Python's calls never
    reach here: its expression statements are opaque to the walk, and its `call` has no `method` field."""
    if node.type == "expression_statement" and \
            (subtest := _go_subtest(node) or _dart_test(node) or _perl_subtest(node)) is not None:
        return subtest
    if node.type == "command":
        return _pester_test(node)
    found = _js_test(node) if node.type == "expression_statement" else \
        (_ruby_test(node) or _r_test(node) or _elixir_test(node)) if node.type == "call" else \
        _lua_test(node) if node.type == "function_call" else None
    if found is None:
        return None
    callee, given, value = found
    if callee.text.decode("utf-8", "replace") not in _TEST_CALLS or not given or given[0].type not in _TITLES:
        return None
    return given[0], value, _titled(given[0])


def _pester_test(command: Any) -> tuple[Any, Any, str] | None:
    """(title node, script block, name) of a PowerShell Pester call: `Describe "Get-Thing" {`, `It "returns" {`,
    written in any case (PowerShell's commands are)."""
    called = command.child_by_field_name("command_name") or \
        next((c for c in command.named_children if c.type == "command_name"), None)
    elements = next((c for c in command.named_children if c.type == "command_elements"), None)
    if called is None or elements is None or called.text.decode("utf-8", "replace").lower() not in _PESTER_CALLS:
        return None
    given = [c for c in elements.named_children if c.type != "command_argument_sep"]
    title = _descend(given[0], _PESTER_TITLES) if given else None
    block = _descend(given[-1], frozenset({"script_block"})) if len(given) > 1 else None
    if title is None or block is None:
        return None
    return title, block, _title_as_name(title.text.decode("utf-8", "replace")[1:-1])


_PESTER_CALLS = frozenset({"describe", "context", "it"})
_PESTER_TITLES = frozenset({"expandable_string_literal", "verbatim_string_characters"})


def _descend(node: Any, types: frozenset[str]) -> Any | None:
    """`node`, or the first node of one of `types` down its first children (PowerShell wraps an argument in an array
    literal, a unary expression, a string literal...)."""
    while node is not None and node.type not in types:
        node = node.named_children[0] if node.named_children else None
    return node


def _js_test(statement: Any) -> tuple[Any, list[Any], Any] | None:
    """(the name called, the arguments, the test's function) of a JS/TS call statement; a chain only through the
    frameworks' own modifiers (`test.describe.only`, `it.each(rows)`: a test's `context.on('request', fn)` is none),
    the function the last one given (Jest's `it('x', fn, 30000)` has a timeout after it)."""
    call = _call_in(statement)
    if call is None:
        return None
    callee = call.child_by_field_name("function")
    while callee is not None and callee.type in ("call_expression", "member_expression"):
        if callee.type == "member_expression":
            modifier = callee.child_by_field_name("property")
            if modifier is None or modifier.text.decode("utf-8", "replace") not in _TEST_MODIFIERS:
                return None
        callee = callee.child_by_field_name("function" if callee.type == "call_expression" else "object")
    given = _arguments(call)
    value = next((g for g in reversed(given[1:]) if g.type in _FUNCTION_VALUES), None)
    return (callee, given, value) if callee is not None and callee.type == "identifier" and value is not None else None


_DART_TEST_CALLS = frozenset({"test", "group", "testWidgets", "blocTest"})


def _dart_test(statement: Any) -> tuple[Any, Any, str] | None:
    """(title node, function, name) of Dart's `test('emits', () {...});`, `group(...)`, `testWidgets(...)` and
    `blocTest<C, S>('emits [1]', build: ...)` (the grammar: the name called, then a selector holding its arguments);
    the function is the last one given, else the call itself (blocTest's closures are named arguments)."""
    called = statement.named_children[0] if statement.named_child_count == 2 else None
    selector = statement.named_children[1] if called is not None else None
    if called is None or called.type != "identifier" or called.text.decode("utf-8", "replace") not in \
            _DART_TEST_CALLS or selector is None or selector.type != "selector":
        return None
    part = next((c for c in selector.named_children if c.type == "argument_part"), None)
    given = next((c for c in part.named_children if c.type == "arguments"), None) if part is not None else None
    values = [a.named_children[0] for a in given.named_children if a.type == "argument" and a.named_child_count] \
        if given is not None else []
    if not values or values[0].type != "string_literal":
        return None
    function = next((v for v in reversed(values[1:]) if v.type == "function_expression"), statement)
    return values[0], function, _titled(values[0])


_PERL_CALLS = frozenset({"ambiguous_function_call_expression", "function_call_expression"})
_PERL_STRINGS = frozenset({"string_literal", "interpolated_string_literal"})


def _perl_given(statement: Any, word: bytes) -> list[Any] | None:
    """What a Perl statement that is a call of `word` alone gives it (`has host => sub {...};`), else None."""
    call = statement.named_children[0] if statement.type == "expression_statement" and \
        statement.named_child_count == 1 else None
    if call is None or call.type not in _PERL_CALLS:
        return None
    called = call.child_by_field_name("function")
    return [c for c in call.named_children if c.type != "function"] if called is not None and called.text == word \
        else None


def _perl_has(statement: Any) -> Any | None:
    """The name an attribute of Moose, Moo or Mojo::Base is declared with (`has host => sub {...};`, `has 'name' =>
    (is => 'ro');`): a look-up of `host` finds where it is declared. A list of names (`has [qw(a b)]`) names none."""
    given = _perl_given(statement, b"has")
    return given[0] if given and given[0].type in _PERL_STRINGS | {"autoquoted_bareword"} else None


def _perl_subtest(statement: Any) -> tuple[Any, Any, str] | None:
    """(title node, sub, name) of Perl's Test::More `subtest 'Basic' => sub {...};`."""
    given = _perl_given(statement, b"subtest")
    if not given or len(given) < 2 or given[0].type not in _PERL_STRINGS or \
            given[-1].type != "anonymous_subroutine_expression":
        return None
    return given[0], given[-1], _titled(given[0])


def _go_subtest(statement: Any) -> tuple[Any, Any, str] | None:
    """(title node, function, name) of Go's `t.Run("empty input", func(t *testing.T) {...})` with a literal title."""
    call = _call_in(statement)
    selected = call.child_by_field_name("function") if call is not None else None
    if selected is None or selected.type != "selector_expression":
        return None
    field, operand = selected.child_by_field_name("field"), selected.child_by_field_name("operand")
    given = _arguments(call)
    if field is None or field.text != b"Run" or operand is None or operand.type != "identifier" or len(given) != 2 \
            or given[0].type not in _GO_STRINGS or given[1].type != "func_literal":
        return None
    return given[0], given[1], _titled(given[0])


_GO_STRINGS = frozenset({"interpreted_string_literal", "raw_string_literal"})


def _ruby_test(call: Any) -> tuple[Any, list[Any], Any] | None:
    """(the method called, the arguments, the block) of a Ruby call with a block, on no receiver or on `RSpec`."""
    callee, block, receiver = (call.child_by_field_name(f) for f in ("method", "block", "receiver"))
    if callee is None or block is None or receiver is not None and receiver.text != b"RSpec":
        return None
    return callee, _arguments(call), block


# Elixir: definitions are calls (`defmodule Foo.Bar do`, `def greet(name) when ... do`, `defp helper(x), do: x`),
# ExUnit's tests too (`describe "greet/1" do`, `test "says hi", %{conn: conn} do`)
_ELIXIR_MODULES = frozenset({"defmodule", "defprotocol", "defimpl"})
_ELIXIR_FUNCTIONS = frozenset({"def", "defp", "defmacro", "defmacrop", "defguard", "defguardp", "defdelegate", "defn",
                               "defnp"})
_ELIXIR_DEFINING = _ELIXIR_MODULES | _ELIXIR_FUNCTIONS


def _elixir_definition(call: Any) -> tuple[tuple[str, bool], Any, Any, str | None] | None:
    """(kind, name node, the node holding its body, None) of an Elixir call that defines a module or a function, by
    the name its first argument gives; its `do` block is its body (ExUnit's tests are `_test_call`'s)."""
    called = call.child_by_field_name("target") if call.type == "call" else None
    word = called.text.decode("utf-8", "replace") if called is not None and called.type == "identifier" else ""
    given = next((c for c in call.named_children if c.type == "arguments"), None)
    block = next((c for c in call.named_children if c.type == "do_block"), None)
    first = given.named_children[0] if given is not None and given.named_child_count else None
    if first is None or word not in _ELIXIR_DEFINING:
        return None
    while first.type in ("binary_operator", "call"):  # `name(args) when guard`: the guard's left, the call's name
        inner = first.child_by_field_name("left" if first.type == "binary_operator" else "target")
        if inner is None:
            return None
        first = inner
    if first.type not in ("identifier", "alias"):
        return None
    kind = ("module", True) if word in _ELIXIR_MODULES else ("def", False)
    return kind, first, block if block is not None else call, None


_R_ASSIGNMENTS = frozenset({b"<-", b"<<-", b"="})
_R_BINDINGS = frozenset({"binary_operator", "argument"})
_WRITTEN_NAMES = _R_BINDINGS | {"pair"}  # the bindings whose name node may be quoted or `obj$field`


def _elixir_test(call: Any) -> tuple[Any, list[Any], Any] | None:
    """(the name called, the arguments, the `do` block) of an Elixir call with a block: ExUnit's `describe "greet/1"
    do`, `test "says hi", %{conn: conn} do`."""
    called = call.child_by_field_name("target")
    given = next((c for c in call.named_children if c.type == "arguments"), None)
    block = next((c for c in call.named_children if c.type == "do_block"), None)
    if called is None or called.type != "identifier" or given is None or block is None:
        return None
    return called, list(given.named_children), block


def _r_function(node: Any) -> tuple[Any, Any] | None:
    """(name node, function) where R binds a name to a function: `area <- function(p) {...}`, `obj$method = ...`,
    or names one among a call's arguments (R6's `public = list(add = function(n) {...})`)."""
    if node.type == "binary_operator":
        operator = node.child_by_field_name("operator")
        name, value = node.child_by_field_name("lhs"), node.child_by_field_name("rhs")
        if operator is None or operator.text not in _R_ASSIGNMENTS:
            return None
    elif node.type == "argument" and _in_list_call(node):  # (not a handler given to a call: `error = function(e)`)
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    else:
        return None
    usable = name is not None and name.type in ("identifier", "extract_operator", "string")
    return (name, value) if usable and value is not None and value.type == "function_definition" else None


def _in_list_call(argument: Any) -> bool:
    """An R argument given to `list(...)`, as an R6 class's methods are."""
    call = argument.parent.parent if argument.parent is not None else None
    called = call.child_by_field_name("function") if call is not None and call.type == "call" else None
    return called is not None and called.text == b"list"


def _r_test(call: Any) -> tuple[Any, list[Any], Any] | None:
    """(the function called, the arguments' values, the test's code) of R's testthat `test_that("title", {...})` or
    `describe("x", {...})`: a call whose last argument is a braced block."""
    called = call.child_by_field_name("function")
    arguments = call.child_by_field_name("arguments")
    given = [a.child_by_field_name("value") for a in arguments.named_children if a.type == "argument"] \
        if arguments is not None else []
    if called is None or called.type != "identifier" or len(given) < 2 or any(g is None for g in given) or \
            given[-1].type != "braced_expression":
        return None
    return called, given, given[-1]


def _lua_test(call: Any) -> tuple[Any, list[Any], Any] | None:
    """(the function called, the arguments, the test's function) of a Lua call whose last argument is a function
    (busted's `describe("history", function() ... end)`)."""
    callee, given = call.child_by_field_name("name"), _arguments(call)
    if callee is None or callee.type != "identifier" or not given or given[-1].type != "function_definition":
        return None
    return callee, given, given[-1]


def _call_in(statement: Any) -> Any | None:
    """The call an expression statement is (JS/TS, Go: `it('x', fn);`, `t.Run("x", func...)`), if it is one."""
    only = statement.named_children[0] if statement.named_child_count == 1 else None
    return only if only is not None and only.type == "call_expression" else None


def _arguments(call: Any) -> list[Any]:
    arguments = call.child_by_field_name("arguments")
    return list(arguments.named_children) if arguments is not None else []


def _class_as_type(node: Any) -> tuple[str, Any, Any] | None:
    """(the class's node type, its name node, the class node) where a C/C++ header's macros misled the grammar's error
    recovery into taking a class (struct) with a body for a function's return type (fmt's `class basic_memory_buffer
    {...}` was a function named `operator=`). A function cannot define a class in its return type."""
    if node.type != "function_definition":
        return None
    typed = node.child_by_field_name("type")
    if typed is None or typed.type not in ("class_specifier", "struct_specifier"):
        return None
    named = typed.child_by_field_name("name")
    return (typed.type, named, typed) if named is not None and typed.child_by_field_name("body") is not None else None


def _titled(node: Any) -> str:
    written = node.text.decode("utf-8", "replace")
    quoted = node.type in ("string", "template_string", "string_literal", "interpolated_string_literal") or \
        node.type in _GO_STRINGS
    title = written[1:-1] if quoted and len(written) >= 2 else written
    title = title[1:] if node.type == "simple_symbol" else title  # RSpec's `describe :fetch`
    return _title_as_name(title)


def _title_as_name(title: str) -> str:
    """A test's title as Go names a subtest: spaces as `_`, and dots, which join a qualified name."""
    return re.sub(r"[\s.]+", "_", title.strip()) or "?"


# JS/TS: a declaration or a class field whose one value is a function is a function of that name
_BINDINGS = frozenset({"lexical_declaration", "variable_declaration", "public_field_definition", "field_definition"})
_FUNCTION_VALUES = frozenset({"arrow_function", "function_expression", "function", "generator_function"})


def _js_pair(node: Any) -> tuple[Any, Any] | None:
    """(key, function) of a JS/TS object's property whose value is a function (`getSortClass: function(key) {...}`,
    `pluralize: (n, w) => ...` in a Vue component's `methods`), as its shorthand method `getSortClass(key) {...}` is."""
    if node.type != "pair":
        return None
    key, value = node.child_by_field_name("key"), node.child_by_field_name("value")
    usable = key is not None and key.type in ("property_identifier", "string") and value is not None and \
        value.type in _FUNCTION_VALUES
    return (key, value) if usable and not _in_function(node) else None  # (in a function, a call's callbacks)


_JS_FUNCTIONS = _FUNCTION_VALUES | {"function_declaration", "method_definition", "generator_function_declaration"}


def _in_function(node: Any) -> bool:
    """The node is inside a JS/TS function (its objects' functions are what it passes to calls)."""
    holder = node.parent
    while holder is not None and holder.type not in _JS_FUNCTIONS:
        holder = holder.parent
    return holder is not None


def _bound_function(node: Any) -> tuple[Any, Any] | None:
    """(name node, function node) where `node` binds one name to a function (`export const f = async () => {}`)."""
    if node.type not in _BINDINGS:
        return None
    holder = node
    if node.type in ("lexical_declaration", "variable_declaration"):
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        if len(declarators) != 1:
            return None
        holder = declarators[0]
    name, value = holder.child_by_field_name("name"), _unwrapped(holder.child_by_field_name("value"))
    if value is not None and value.type == "call_expression" and (_top_level(node) or _hook_call(value)):  # zod's
        value = next((a for a in _arguments(value) if a.type in _FUNCTION_VALUES), None)  # `const $ZodString =
        # $constructor("...", (inst, def) => {...})`, React's `const handleDayClick = useCallback((day) => {...}, [])`
        # in a component; elsewhere inside a function `const names = items.map((item) => ...)` is a value
    if name is None or value is None or value.type not in _FUNCTION_VALUES or name.type not in _NAME_NODES:
        return None
    return name, value


_WRAPPERS = frozenset({"parenthesized_expression", "as_expression", "satisfies_expression", "non_null_expression"})


def _unwrapped(value: Any) -> Any:
    """A TS value without the casts and parentheses around it: hono's `export const ErrorBoundary: FC = (({ children
    }: any) => {...}) as any` is a function, as `<any>(x => x)` and `(x => x) satisfies Fn` are."""
    while value is not None and (value.type in _WRAPPERS or value.type == "type_assertion"):
        inside = [c for c in value.named_children if c.type != "comment"]  # (`(/* the id */ (x) => x) as Fn`)
        if not inside:
            return None
        value = inside[-1 if value.type == "type_assertion" else 0]
    return value


_HOOK = re.compile(rb"use[A-Z]\w*")


def _hook_call(call: Any) -> bool:
    """A call of a React hook by its name (`useCallback`, `useMemo`, `React.useCallback`, a custom `useThing`)."""
    callee = call.child_by_field_name("function")
    if callee is not None and callee.type == "member_expression":
        callee = callee.child_by_field_name("property")
    return callee is not None and _HOOK.fullmatch(callee.text or b"") is not None


def _top_level(node: Any) -> bool:
    """A declaration of the module itself (its own statement, or exported)."""
    parent = node.parent
    if parent is not None and parent.type == "export_statement":
        parent = parent.parent
    return parent is not None and parent.type == "program"


def _js_assigned(node: Any) -> tuple[Any, Any] | None:
    """(name node, function node) where a JS statement assigns a function to a name or a property: CommonJS's
    `res.sendStatus = function(code) {...}`, `View.prototype.lookup = function(name) {...}`, `exports.f = ...` (an
    Express module was one unit of 900 lines, its API no definition)."""
    if node.type != "expression_statement" or node.named_child_count != 1:
        return None
    assigned = node.named_children[0]
    if assigned.type != "assignment_expression":
        return None
    name, value = assigned.child_by_field_name("left"), assigned.child_by_field_name("right")
    if name is None or value is None or value.type not in _FUNCTION_VALUES \
            or name.type not in ("identifier", "member_expression"):
        return None
    own = value.child_by_field_name("name")
    if own is not None and name.text in (b"module.exports", b"exports"):  # `module.exports = function
        return own, value  # createApplication() {...}` is `createApplication`
    return name, value


def _js_named_argument(node: Any) -> tuple[Any, Any] | None:
    """(name node, function node) where a module's own statement is a call given a function with a name of its own:
    Express's `defineGetter(req, 'protocol', function protocol() {...})` defines the getter `protocol` (its request's
    API was code of no definition). A function with no name, or a call inside a function, defines nothing (a named
    callback inside one, Express's `this.on('mount', function onmount(parent) {...})`, cut its function in three:
    semble's express queries lost one)."""
    if node.type != "expression_statement" or node.named_child_count != 1 or not _top_level(node):
        return None
    call = node.named_children[0]
    if call.type != "call_expression":
        return None
    named = [(a.child_by_field_name("name"), a) for a in _arguments(call)
             if a.type in ("function_expression", "function") and a.child_by_field_name("name") is not None]
    return named[0] if len(named) == 1 else None


def _js_named_operand(node: Any) -> tuple[Any, Any] | None:
    """(name node, function node) where a module's own statement, or its `export default`, is an expression whose
    operand is a function with a name of its own: axios's `export default isHttpAdapterSupported && function
    httpAdapter(config) {...}` (its three adapters were code of no definition, their inner functions the file's)."""
    if node.type not in ("export_statement", "expression_statement") or not _top_level(node):
        return None
    named = [f for f in _operands(node.named_children[-1] if node.named_children else None)
             if f.type in ("function_expression", "function") and f.child_by_field_name("name") is not None]
    return (named[0].child_by_field_name("name"), named[0]) if len(named) == 1 else None


def _operands(node: Any) -> Iterator[Any]:
    """The values an expression may be: through `&&`, `||`, `??`, `a ? b : c` and parentheses."""
    if node is None:
        return
    if node.type in ("binary_expression", "ternary_expression", "parenthesized_expression"):
        for child in node.named_children:
            yield from _operands(child)
    else:
        yield node


_NAME_NODES = frozenset({"identifier", "property_identifier", "private_property_identifier"})
_LUA_NAMES = frozenset({"identifier", "dot_index_expression", "method_index_expression"})


def _lua_bound(node: Any) -> tuple[Any, Any] | None:
    """(name node, function node) where a Lua assignment or table field binds one name to a function: `local f =
    function(...)`, `histories.get_simple_history = function()`, `{ init = function(obj) ... end }`, and a file's own
    assignment of a call given one (`utils.get_devicons = load_once(function() ... end)`: telescope's previewers and
    layouts were no definition, their names "no definition is named")."""
    if node.type == "field":
        name, value = node.child_by_field_name("name"), node.child_by_field_name("value")
    elif (assigned := _lua_assigned(node)) is not None:
        name, value = assigned
    else:
        return None
    if value is not None and value.type == "function_call" and node.parent is not None \
            and node.parent.type == "chunk":  # a file's own `previewers.vimgrep = defaulter(function(opts) ... end)`
        value = next((a for a in _arguments(value) if a.type == "function_definition"), None)  # (telescope's)
    if name is None or value is None or value.type != "function_definition" or name.type not in _LUA_NAMES:
        return None
    return name, value


def _lua_assigned(node: Any) -> tuple[Any, Any] | None:
    """(name node, value node) of a Lua assignment of one value to one name, else None."""
    if node.type != "assignment_statement":
        return None
    names = [c for c in node.named_children if c.type == "variable_list"]
    values = [c for c in node.named_children if c.type == "expression_list"]
    if len(names) != 1 or len(values) != 1 or names[0].named_child_count != 1 or values[0].named_child_count != 1:
        return None
    return names[0].named_children[0], values[0].named_children[0]


def _lua_table(node: Any) -> tuple[Any, Any] | None:
    """(name node, table node) where a Lua file's own statement assigns one name a table holding a function:
    telescope's `actions.select_vertical = { pre = ..., action = function(prompt_bufnr) ... end }` is a definition,
    its function `actions.select_vertical.action` (telescope's actions were no definition, their functions `action` of
    nothing). A table of values alone (`M.defaults = { ... }`) is data."""
    assigned = _lua_assigned(node) if node.parent is not None and node.parent.type == "chunk" else None
    if assigned is None:
        return None
    name, table = assigned
    if name.type not in _LUA_NAMES or table.type != "table_constructor" or not any(
            f.type == "field" and (v := f.child_by_field_name("value")) is not None and v.type == "function_definition"
            for f in table.named_children):
        return None
    return name, table


def _anonymous_function(node: Any) -> bool:
    """A Lua function with no name of its own (`function(...) ... end`): Python's and C's function definitions
    always have one (a `name`, a `declarator`)."""
    named = node.child_by_field_name("name")  # (R's names its keyword `function`, a token of no name)
    return node.type == "function_definition" and (named is None or not named.is_named) \
        and node.child_by_field_name("declarator") is None


# the node types `_as_written` reads (any other is what its type says), and every type that may be a definition or
# hold one at its head: the walk reads any other node's children alone (most of a file's nodes)
_READ_AS_WRITTEN = _BINDINGS | {"field_declaration", "constant_declaration", "property_declaration", "pair",
                                "export_statement",
                                "expression_statement", "call", "function_definition", "assignment_statement", "field",
                                "function_call", "type_definition", "macro_invocation", "binary_operator", "argument",
                                "command", "block", "function", "bind", "signature", "data_type", "newtype",
                                "type_synomym", "type_family", "data_family", "class", "instance", "assignment",
                                "macro_definition", "struct_definition", "abstract_definition",
                                "primitive_definition", "module_definition", "macrocall_expression", "Decl",
                                "TestDecl", "ContainerDecl", "attribute"}
_DEFINING = frozenset(_KINDS) | _READ_AS_WRITTEN | {"decorated_definition", "template_declaration"}


def _anonymous_class(node: Any) -> tuple[Any, Any] | None:
    """(name node, class expression) where `node` is a field holding one anonymous class: Java's
    `static final TypeAdapter<Class> CLASS = new TypeAdapter<Class>() {...};`, Kotlin's `val x = object : A {...}`
    (its methods were the enclosing class's: gson's `TypeAdapters` had 25 methods named `read`)."""
    if node.type in ("field_declaration", "constant_declaration"):  # the latter: an interface's field
        declarators = [c for c in node.named_children if c.type == "variable_declarator"]
        value = declarators[0].child_by_field_name("value") if len(declarators) == 1 else None
        while value is not None and value.type == "method_invocation":  # `new TypeAdapter<X>() {...}.nullSafe()`
            value = value.child_by_field_name("object")
        if value is not None and value.type == "object_creation_expression" and \
                any(c.type == "class_body" for c in value.named_children):
            return declarators[0].child_by_field_name("name"), value
    elif node.type == "property_declaration":
        variable = next((c for c in node.named_children if c.type == "variable_declaration"), None)
        value = next((c for c in node.named_children if c.type == "object_literal"), None)
        named = next((c for c in variable.named_children if c.type == "simple_identifier"), None) \
            if variable is not None else None
        if named is not None and value is not None:
            return named, value
    return None


def _name_of(node: Any, name_node: Any, lines: list[str]) -> str:
    """A definition's name as its language qualifies it: a Go method's with its receiver's type
    (`Context.Param`), a Rust `impl`'s the type's (`impl<S> Router<S>` and `impl Display for Router` -> `Router`;
    a blanket impl's its trait's), a C/C++ function's from its declarator (`void file::close()` -> `file.close`,
    not its return type), scopes joined with `.` (Ruby's `Rack::Builder` -> `Rack.Builder`), template arguments
    left out."""
    if node.type == "impl_item" and (implemented := node.child_by_field_name("type")) is not None:
        return _impl_name(node, implemented)
    scoped, operator = _operator_apart(_own_name(node, name_node, lines))
    plain = scoped if _QUOTED.search(scoped) else _UNCLOSED.sub("", without_generics(scoped))  # (at any depth, and
    # one the grammar cut short: a partial specialization's arguments over four lines were its name, the `::` in them
    # read as scopes; a name in quotes or backticks, Kotlin's `a < b is true` or R's `names<-`, is as written)
    name = ".".join(p for p in [*plain.replace("::", ".").split("."), operator] if p) or "?"
    if (extended := _extended_type(node)) is not None:  # Kotlin's extension function, as a look-up names it
        return f"{extended}.{name}"
    receiver = node.child_by_field_name("receiver") if node.type == "method_declaration" else None
    if receiver is not None:  # Go: `func (c *Context) Param(...)`
        typed = next((c.child_by_field_name("type") for c in receiver.named_children
                      if c.child_by_field_name("type") is not None), None)
        if typed is not None:
            return f"{_type_name(typed.text.decode('utf-8', 'replace'))}.{name}"
    return name


def _extended_type(node: Any) -> str | None:
    """The type a Kotlin file's own extension function extends, as a look-up names it: `fun ColumnSet.targetTables()`
    -> `ColumnSet` (`fun <T> List<T>?.second()` -> `List`, `fun Table.Companion.make()` -> `Table`, `fun <T : Table>
    T.insert()` -> `Table`, its bound); None for a member extension (`fun QueryBuilder.register()` in a class is the
    class's `register`), a bare type parameter, or a function type (`(() -> Unit).twice`)."""
    if node.type != "function_declaration" or node.parent is None or node.parent.type != "source_file":
        return None
    receiver = next((c for c in node.named_children if c.type == "receiver_type"), None)
    if receiver is None:
        return None
    written = without_generics(receiver.text.decode("utf-8", "replace")).replace("?", "").strip()
    bounds = {p.named_children[0].text.decode("utf-8", "replace"): p.named_children[-1].text.decode("utf-8", "replace")
              for c in node.named_children if c.type == "type_parameters"
              for p in c.named_children if p.type == "type_parameter" and p.named_children}
    written = without_generics(bounds.get(written, written)).replace("?", "").strip()
    return written.removesuffix(".Companion") if _NAMED_TYPE.fullmatch(written) and written not in bounds else None


_NAMED_TYPE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _impl_name(node: Any, implemented: Any) -> str:
    """A Rust `impl`'s name: its type's, but a blanket impl's its trait's (`impl<F, S> Handler<S> for F` ->
    `Handler`, its `call` -> `Handler.call`, as Rust calls it: `Handler::call`): a bare type parameter names
    nothing. (A slice of one, `impl<T> Serialize for [T]`, stays `T`: the element is what it is for.)"""
    name = _type_name(implemented.text.decode("utf-8", "replace"))
    trait, generics = node.child_by_field_name("trait"), node.child_by_field_name("type_parameters")
    if trait is None or generics is None or implemented.type != "type_identifier":
        return name
    own = {c.child_by_field_name("name").text.decode("utf-8", "replace") for c in generics.named_children
           if c.type == "type_parameter" and c.child_by_field_name("name") is not None}
    return _type_name(trait.text.decode("utf-8", "replace")) if name in own else name


_PROTOTYPE = re.compile(r"\s*\.\s*prototype\s*\.\s*|\s*\.\s*")


def _operator_apart(name: str) -> tuple[str, str]:
    """A name's scopes, and the operator it names if it does: a symbolic one (Ruby's `<<`, Scala's `:+`,
    `units.operator_of`) or C++'s (`basic_string_view<Char>::operator<=`: its `<` are no template's), found outside
    any template's arguments (a `decltype(...operator[]())` in them names none)."""
    if symbolic := operator_of(name):  # (Ruby's `def <<(data)`, Scala's `def :+`: no template's either)
        return name[: -len(symbolic)], symbolic
    depth = 0
    for at, char in enumerate(name):
        depth = depth + 1 if char == "<" else max(0, depth - 1) if char == ">" else depth
        if not depth and _OPERATOR.match(name, at) and (not at or not (name[at - 1].isalnum() or name[at - 1] == "_")):
            return name[:at], name[at:]
    return name, ""


_OPERATOR = re.compile(r"operator\b")
_QUOTED = re.compile(r"[`'\"]")
_UNCLOSED = re.compile(r"(?<=\w)<(?!-).*", re.DOTALL)  # template arguments the grammar cut short, to the name's end
# a declarator's own name, where a C/C++ declarator chain (pointers, functions) ends
_DECLARED = frozenset({"identifier", "field_identifier", "qualified_identifier", "destructor_name", "operator_name",
                       "type_identifier", "template_function", "operator_cast"})
# the node a grammar without a `name` field names a definition by (Kotlin, Swift), as a direct child
_NAME_CHILDREN = ("simple_identifier", "type_identifier", "identifier", "constant", "name", "function_name",
                  "simple_name")  # (the last two PowerShell's: `function Get-Thing`, `class Greeter`, its methods)


def _own_name(node: Any, name_node: Any, lines: list[str]) -> str:
    if name_node is not None and name_node.type == "member_expression":  # JS: `View.prototype.lookup` is View's
        return _PROTOTYPE.sub(".", name_node.text.decode("utf-8", "replace"))  # method `View.lookup`
    if name_node is not None and name_node.type == "method_index_expression":  # Lua's `function Picker:find()` is
        return str(name_node.text.decode("utf-8", "replace")).replace(":", ".")  # `Picker.find = function(self)`
    if name_node is not None and name_node.type in ("extract_operator", "string") and node.type in _WRITTEN_NAMES:
        # R's `obj$method <- function`, a JS object's `'on-change': function`: as a name is written
        return str(name_node.text.decode("utf-8", "replace")).strip("\"'`").replace("$", ".")
    if name_node is not None and node.type == "subroutine_declaration_statement" and \
            (package := _perl_package(node)) is not None:  # Perl: `package Foo::Bar;` then `sub greet`
        return f"{package}::{name_node.text.decode('utf-8', 'replace')}"
    if name_node is not None:
        return str(name_node.text.decode("utf-8", "replace"))
    if node.type in _OBJC_METHODS and any(c.type == "method_type" or c.type in "+-" for c in node.children):
        return _selector(node)
    if node.type == "operator_declaration" and (op := node.child_by_field_name("operator")) is not None:
        return f"operator{op.text.decode('utf-8', 'replace')}"
    if node.type == "conversion_operator_declaration" and (to := node.child_by_field_name("type")) is not None:
        return f"operator {to.text.decode('utf-8', 'replace')}"
    if node.type == "indexer_declaration":
        return "this[]"
    if node.type == "companion_object":
        return "Companion"  # Kotlin's name for an unnamed companion object
    if node.type == "secondary_constructor":
        return "constructor"  # Kotlin's, whatever its modifiers (`internal constructor(...)`)
    if node.type == "namespace_definition":
        return "(anonymous)"
    if node.type == "singleton_class":
        return "self"  # Ruby's `class << self`: its methods are the class's own
    declared = node.child_by_field_name("declarator")
    while declared is not None and declared.type not in _DECLARED:
        declared = _declarator_in(declared)
    if declared is not None and declared.type == "operator_cast" and \
            (cast := declared.child_by_field_name("type")) is not None:  # C++: `operator bool() const`
        return f"operator {cast.text.decode('utf-8', 'replace')}"
    if declared is not None:  # C/C++: `static int parse(...)`, `char *names(void)`, `auto file::size() -> ...`
        name = str(declared.text.decode("utf-8", "replace"))
        return _macro_named(node, name) if node.child_by_field_name("type") is None else name
    parent = node.parent
    if parent is not None and parent.type == "type_definition" and \
            (alias := parent.child_by_field_name("declarator")) is not None:  # C: `typedef struct {...} name;`
        return str(alias.text.decode("utf-8", "replace"))
    own = next((c for c in node.named_children if c.type in _NAME_CHILDREN), None)
    if own is not None:  # Kotlin's `fun size()`, `internal class Buffer`
        return str(own.text.decode("utf-8", "replace"))
    return _first_name(node, lines)


_OBJC_METHODS = frozenset({"method_definition", "method_declaration"})


def _selector(method: Any) -> str:
    """An Objective-C method's name as the language writes it, its selector: `greet:times:` for `- (NSString
    *)greet:(NSString *)who times:(NSInteger)n`, `shared` for `+ (instancetype)shared`."""
    parts: list[str] = []
    for child in method.children:
        if child.type == "identifier":
            parts.append(child.text.decode("utf-8", "replace"))
        elif child.type == "method_parameter":
            parts.append(":")
    return "".join(parts) or "?"


def _perl_package(sub: Any) -> str | None:
    """The package a Perl sub (an attribute) is defined in: the `package Foo::Bar { ... }` around it, else the last
    `package Foo::Bar;` above it at its level."""
    holder = sub.parent
    while holder is not None and holder.type != "package_statement":
        holder = holder.parent
    if holder is not None:
        return _package_name(holder)
    starts = _packages_at(sub.parent) if sub.parent is not None else ()
    at = bisect.bisect_right(starts, (sub.start_byte, "\uffff")) - 1
    return starts[at][1] if at >= 0 else None


@lru_cache(maxsize=8)  # the subs of one level ask in turn: each a search, not a walk back over the ones before it
def _packages_at(level: Any) -> tuple[tuple[int, str], ...]:
    """Where each `package Foo::Bar;` of a level starts, and its name (a `package X {...}` is its block's own)."""
    return tuple((c.start_byte, name) for c in level.named_children if c.type == "package_statement" and
                 not any(b.type == "block" for b in c.named_children) and (name := _package_name(c)) is not None)


def _package_name(statement: Any) -> str | None:
    named = statement.child_by_field_name("name")
    return named.text.decode("utf-8", "replace") if named is not None else None


def _declarator_in(declarator: Any) -> Any | None:
    """The declarator inside one: its `declarator` field, or a C++ reference's (`const T& name()`: the grammar
    gives `&` and `&&` declarators no field)."""
    inner = declarator.child_by_field_name("declarator")
    if inner is None and declarator.type in ("reference_declarator", "parenthesized_declarator"):
        inner = next(iter(declarator.named_children), None)  # (C: libuv's `TEST_IMPL(timer_order) {...}` is read
    return inner  # as a function of type TEST_IMPL named `(timer_order)`: the test's name, not the macro's)


_MACRO = re.compile(r"[A-Z][A-Z0-9_]*")
_MACRO_ARGUMENTS = re.compile(r"\(\s*([A-Za-z_]\w*(?:\s*,\s*[A-Za-z_]\w*)*)\s*\)")


def _macro_named(node: Any, name: str) -> str:
    """A function a macro defines, named by the macro's arguments where they are names: gtest's
    `TEST(format_test, big_print) {...}` -> `format_test.big_print` (it was `TEST`, every test alike)."""
    if not _MACRO.fullmatch(name):
        return name
    declarator = node.child_by_field_name("declarator")
    parameters = declarator.child_by_field_name("parameters") if declarator is not None else None
    written = _MACRO_ARGUMENTS.fullmatch(parameters.text.decode("utf-8", "replace")) if parameters else None
    return ".".join(w.strip() for w in written.group(1).split(",")) if written else name


def _header_row(node: Any, name_node: Any) -> int:
    """The line that says what a definition is (its name's), not an annotation above it (`@Override`, `[Test]`)."""
    row = int(node.start_point[0])
    if name_node is not None and name_node.start_point[0] > row and name_node.end_point[0] == name_node.start_point[0]:
        return int(name_node.start_point[0])
    return row


def _type_name(written: str) -> str:
    """A type as written (`*Set[T]`, `Router<S>`, `&'a mut fmt::Formatter`) -> its own name (`Set`, `Router`,
    `Formatter`); a Rust slice's or array's its element's (`impl<T> Trait for [T]` -> `T`, was `?`)."""
    core = _REFERENCE.sub(" ", written).strip()
    if core.startswith("["):
        return next(iter(_NAMED.findall(core.split("]", 1)[0])), "?")
    words = _NAMED.findall(core.split("<", 1)[0].split("[", 1)[0])
    return words[-1] if words else "?"


_REFERENCE = re.compile(r"'\w+|&|\b(?:mut|dyn)\b")  # a Rust type's lifetimes, borrows and `dyn`


def _first_name(node: Any, lines: list[str]) -> str:
    header = lines[node.start_point[0]][node.start_point[1]:]
    words = [w for w in _NAMED.findall(header) if w not in _KEYWORDS]
    return words[0] if words else "?"


_KEYWORDS = frozenset({
    "def", "class", "func", "fn", "function", "pub", "public", "private", "protected", "static", "async",
    "export", "default", "const", "let", "var", "impl", "trait", "struct", "enum", "interface", "type", "mod",
    "module", "namespace", "object", "void", "abstract", "final", "override", "virtual", "inline", "extern",
    "unsafe",
})


_ATTRIBUTES = frozenset({"attribute_item", "line_comment", "block_comment", "annotation"})  # (Dart's `@override`)


def _attributes_above(node: Any, lines: list[str]) -> int:
    """The line a definition starts on with the Rust attributes (and comments between them) directly above it, which
    the grammar reads as siblings of its own: `#[should_panic(` over several lines was a unit apart, and the function
    started at its `fn` line. Each must start a line of its own (`let x = 1; // note` is code's)."""
    line: int = node.start_point[0]
    above = node.prev_named_sibling
    while above is not None and (above.type in _ATTRIBUTES or _elixir_attribute(above) or
                                 above.type == "string_literal" and node.type in _JULIA_DOCUMENTED) and \
            above.end_point[0] >= line - 1:
        row, column = above.start_point
        if row >= len(lines) or lines[row][:column].strip():
            break
        line, above = row, above.prev_named_sibling
    return line


_ELIXIR_ATTRIBUTES = frozenset({b"doc", b"spec", b"impl", b"deprecated", b"since", b"decorate"})
# Julia: a docstring is the string right above what it documents (`"""    greet(g)\n\nGreets."""` then `function`)
_JULIA_DOCUMENTED = frozenset({*_JULIA_TYPES, "function_definition", "macro_definition", "assignment",
                               "macrocall_expression"})


def _elixir_attribute(node: Any) -> bool:
    """An Elixir function's own attribute above it (`@doc \"\"\"...\"\"\"`, `@spec`, `@impl true`): its documentation is
    its, not the module's code between definitions (not `@moduledoc`, nor a module attribute `@timeout 5_000`)."""
    if node.type != "unary_operator" or node.child_by_field_name("operator") is None:
        return False
    operand = node.child_by_field_name("operand")
    called = operand.child_by_field_name("target") if operand is not None and operand.type == "call" else None
    return node.child_by_field_name("operator").text == b"@" and called is not None and \
        called.text in _ELIXIR_ATTRIBUTES


# TypeScript's overload signatures: no body, each a line (or a few) above the one that has it
_SIGNATURES = frozenset({"function_signature", "method_signature"})


def _overloads_above(node: Any) -> int:
    """The line a TypeScript function or method starts on with its overload signatures (and their comments) right
    above it: redux's `createStore` had its two signatures in the module's code and its body alone as the function."""
    outer = node.parent if node.parent is not None and node.parent.type == "export_statement" else node
    first: int = outer.start_point[0]
    named = node.child_by_field_name("name")
    above = outer.prev_named_sibling
    while named is not None and above is not None:
        signature = above.child_by_field_name("declaration") if above.type == "export_statement" else above
        if above.type != "comment":
            own = signature.child_by_field_name("name") if signature is not None else None
            if signature is None or signature.type not in _SIGNATURES or own is None or own.text != named.text:
                break
            first = above.start_point[0]
        above = above.prev_named_sibling
    return first


def only_comments(text: str, language: str | None) -> bool:
    """Every line of `text` holding anything is a comment's (`//`, `--`, `#` where it opens one, inside `/* */`): a
    file's commented-out code or its header, no code of its own."""
    lines = text.split("\n")
    held = [bool(line.strip()) for line in lines]
    return any(held) and all(comment or not code for comment, code in zip(comment_lines(text, language), held,
                                                                        strict=True))


# a line that names the file's own package, beside its imports (`import_lines`): Go's, Java's and Kotlin's
# `package`, C#'s and PHP's `namespace`, Dart's `library` and `part of`. (Not Rust's `mod a;`: a `mod.rs` of them is
# the module's table of contents, what a search for the module is answered by: weighed down, semble's axum dev
# queries ranked lower.)
_DECLARES_MODULE = re.compile(r"(?:package|namespace|library|part(?:\s+of)?)\s+[\w.\\]+\s*[;{]?$")
# what a file's head holds besides its imports and says nothing of what the file does: a namespace's brace on a line
# of its own and JS's `'use strict';` (axios's files opened with it above their imports, which came before its
# adapters' code); C#'s `#region License` and the `#if` around an import (Json.NET's license and `using` lines, a run
# of 34, and `namespace Newtonsoft.Json` with its `{`, came before the converters a search asked for), not a C or C++
# header's `#if`, which says which platform the code is for (fmt's short searches lost a query)
_SAYS_NOTHING = re.compile(r"[{}]|[\"']use strict[\"'];?")
_CSHARP_SAYS_NOTHING = re.compile(r"#\s*(?:region|endregion|if|elif|else|endif)\b.*")


def only_imports(text: str, language: str | None) -> bool:
    """Every line of `text` holding code is a line of an import (`import_lines`, as the grammar reads them: a Rust
    `use` over lines, Go's `import (...)`, a `require`) or declares the file's module: a file's head, which names
    what the file uses and not what it does."""
    lines = text.split("\n")
    code = [n for n, (line, comment) in enumerate(zip(lines, comment_lines(text, language), strict=True), 1)
            if line.strip() and not comment]
    imports = import_lines(text, language) if code else frozenset()
    heads = [n in imports or bool(_DECLARES_MODULE.match(lines[n - 1].strip())) for n in code]
    return any(heads) and all(head or _says_nothing(lines[n - 1].strip(), language) for n, head in zip(code, heads,
                                                                                                     strict=True))


def _says_nothing(line: str, language: str | None) -> bool:
    return bool(_SAYS_NOTHING.fullmatch(line) or language == "csharp" and _CSHARP_SAYS_NOTHING.fullmatch(line))


def comment_lines(text: str, language: str | None) -> list[bool]:
    """Per line of `text`, whether it is a comment's and nothing else (a blank line is not): `//`, `--`, `#` where it
    opens one, inside `/* */` with no code after its end."""
    comments, inside, out = Comments.of(language), False, []
    starts = ("//", "-- ", "#") if comments.hash else ("//", "-- ")  # (`--i;` is code)
    for line in text.split("\n"):
        stripped = line.strip()
        if not stripped:
            out.append(False)
        elif inside or comments.block and stripped.startswith("/*"):
            rest = stripped if inside else stripped[2:]
            inside = "*/" not in rest
            out.append(inside or not rest.split("*/", 1)[1].strip())  # (code after the block's end: no comment's)
        else:
            out.append(stripped.startswith(starts) or stripped == "--")
    return out


def _with_comments_above(line: int, lines: list[str], comments: Comments = Comments()) -> int:
    """The comment lines directly above a definition (no blank line between) are part of it; so is a block comment
    that ends right above it, whatever its own lines hold (a JSDoc without a `*` on each line, a blank line in it),
    where the language has block comments and the block starts a line of its own. Where `#` opens a directive
    (`#if`, `#define`) a `#` line is not the definition's."""
    starts = ("#", "//", "/*", "*", "--") if comments.hash else ("//", "/*", "*", "--")
    if comments.block and line > 1 and not lines[line - 1].strip() and _doc_block_ends(lines, line - 2):
        line -= 1  # a doc comment, a blank line, the definition: Express's style (`/** ... */`, ``, `res.send = `),
        # not a file's header (`@license`, `@fileoverview`, a block that opens the file)
    elif comments.block and (past := _past_audit_macros(lines, line)) < line and _doc_block_ends(lines, past - 1):
        line = past
    while line > 0:
        above = lines[line - 1].strip()
        if comments.block and above.endswith(comments.fences[1]) and comments.fences[0] not in above:
            opening = _block_opening(lines, line - 2, comments.fences)
            if opening is None:
                break
            line = opening
        elif above.startswith(starts):
            line -= 1
        else:
            break
    return line


# Objective-C's region macros, which a header writes between a class's doc comment and its `@interface`
_AUDIT_MACRO = re.compile(r"(NS|CF)_ASSUME_NONNULL_BEGIN|NS_HEADER_AUDIT_BEGIN\([^)]*\)|CF_IMPLICIT_BRIDGING_ENABLED")


def _past_audit_macros(lines: list[str], line: int) -> int:
    """The line above the blank lines and region macros right above 0-based `line`, when at least one such macro is
    among them (AFNetworking's `/** ... */`, ``, `NS_ASSUME_NONNULL_BEGIN`, ``, `@interface AFSecurityPolicy`:
    the doc is the class's, not the module's); else `line`."""
    at, macros = line, 0
    while at > 1 and (not lines[at - 1].strip() or _AUDIT_MACRO.fullmatch(lines[at - 1].strip())):
        macros += bool(lines[at - 1].strip())
        at -= 1
    return at if macros else line


def _doc_block_ends(lines: list[str], at: int) -> bool:
    """A doc comment (`/** ...`) that opens a line of its own ends on line `at`, and is no file header (it does not
    open the file, and says no `@license`, `@fileoverview` or `@module`)."""
    above = lines[at].strip()
    if not above.endswith("*/") or "/*" in above and not above.startswith("/**"):
        return False
    opening = _block_opening(lines, at - 1) if "/*" not in above else at
    if opening is None or not lines[opening].lstrip().startswith("/**"):
        return False
    header = not any(line.strip() for line in lines[:opening]) or any(
        tag in line for line in lines[opening : at + 1] for tag in _HEADER_TAGS)
    return not header


_HEADER_TAGS = ("@license", "@fileoverview", "@module", "@copyright")


def _block_opening(lines: list[str], last: int, fences: tuple[str, str] = ("/*", "*/")) -> int | None:
    """The line a block comment ending below `last` opens on, when the block starts that line (`int x; /* a` is
    code's comment, not a definition's); None when another comment ends first or none opens near."""
    opens, closes = fences
    for i in range(last, max(-1, last - _LONGEST_COMMENT), -1):
        if closes in lines[i]:
            return None
        if opens in lines[i]:
            opening = lines[i].lstrip()
            if opening.startswith("*"):  # a doc line that writes `/*` (Express's ` *      req.is('text/*');`)
                continue
            return i if opening.startswith(opens) else None
    return None


_LONGEST_COMMENT = 400  # lines searched up for a block comment's opening


def head_of(found: Sequence[Definition], line: int) -> int | None:
    """The 1-based `def`/`class` line of the innermost definition (of `found`, nested) holding 1-based `line` below
    that header: what a piece of a long definition is part of (None: the line is no definition's, or is its header
    or above it)."""
    head = None
    while (holding := next((d for d in found if d.first <= line - 1 <= d.last), None)) is not None:
        if holding.header < line - 1:
            head = holding.header + 1
        found = holding.children
    return head


def header_lines(text: str, language: str | None) -> list[int]:
    """The 1-based line of every definition's `def`/`class` line, in order: a map of the file."""
    found = definitions(text, language) or []
    out: list[int] = []

    def walk(items: tuple[Definition, ...] | list[Definition]) -> None:
        for d in items:
            out.append(d.header + 1)
            walk(d.children)

    walk(found)
    return sorted(set(out))


# --- chunks: line ranges of the view ------------------------------------------------------------------

def code_spans(text: str, language: str | None) -> list[LineSpan]:
    """The view's lines cut into units: definitions (and class headers), and the blocks between them."""
    lines = text.split("\n")
    found = definitions(text, language)
    if not found:
        return list(_blocks(lines, 0, len(lines) - 1, ""))
    return list(_units(found, lines, 0, len(lines) - 1, ""))


def _units(found: list[Definition], lines: list[str], first: int, last: int, path: str) -> Iterator[LineSpan]:
    cursor = first
    for d in found:
        if d.first > cursor:
            yield from _blocks(lines, cursor, d.first - 1, path)
        context = f"{path} > {d.label}" if path else d.label
        if d.children:
            header_end = d.children[0].first - 1
            yield LineSpan(d.first, max(header_end, d.first), context)
            yield from _units(list(d.children), lines, max(header_end, d.first) + 1, d.last, context)
        else:
            yield LineSpan(d.first, d.last, context, statements=d.statements)
        cursor = max(cursor, d.last + 1)
    if cursor <= last:
        yield from _blocks(lines, cursor, last, path)


def _blocks(lines: list[str], first: int, last: int, context: str) -> Iterator[LineSpan]:
    """Blank-line separated blocks of lines (blank lines themselves belong to no block)."""
    start = None
    for i in range(first, last + 1):
        if lines[i].strip():
            start = i if start is None else start
        elif start is not None:
            yield LineSpan(start, i - 1, context, loose=True)
            start = None
    if start is not None:
        yield LineSpan(start, last, context, loose=True)


_CODE_HINT = re.compile(
    r"^\s*(def |class |import |from \S+ import |function |const |let |var |func |fn |pub |package |"
    r"#include|public |private |@\w+|return\b|if \(|for \()", re.M)
MAP_SHARE = 20  # a view's map of the file (each definition's line and number), where the caller sets the budget
# A source file's budget when the request sets none: a third of the file as the model reads it (each line after
# Read's number), at least MIN_TOKENS, at most MAX_TOKENS, less NOTE_TOKENS for the placeholder and the client's
# note beside the cut (python -m bench.code: dev split).
SHARE, MIN_TOKENS, MAX_TOKENS, NOTE_TOKENS = 3, 1000, 6000, 130
# A definition the request names goes first whole, unless it is over a WHOLE_SHARE-th of the budget (a long one the
# request may only mention): then its header chunk goes first, and the rest competes on the request's words. One it
# names by its path (`Class.method`, `iam.physical` in iam.py) is the one asked about: whole up to PATH_SHARE times
# that, half the budget (python -m bench.code: dev split).
WHOLE_SHARE = 8
PATH_SHARE = 4
IMPORT_SHARE = 4  # the module's imports go first, within this share (1/N) of the budget


class Code(ByLines):
    """Whole definitions, the ones a request names first, and a map of the rest of the file."""

    name = "code"
    map_share = MAP_SHARE
    # The blank lines that part a definition shown from the code not shown: where it ends and the next begins, and
    # the place an edit inserts a new one (python -m bench.code: dev split)
    blank_edges = True
    # Ranked by the code ranker alone: on the dev split 5 dense candidates moved the place a fix edits by +1.4 / -1.5
    # points (default budget / 1,500 tokens: noise at 135 cases) for ~0.8 s of inference per fresh read where the CPU
    # has no bf16 (bench/README.md, "Code without the dense model"); a hook's fresh read has 200 ms.
    dense = False
    repeated = K3  # the code ranker's: a repository's search weighs the words a request repeats alike

    def detect(self, text: str) -> bool:
        lines = [ln for ln in text[:20000].splitlines() if ln.strip()]
        return bool(lines) and len(_CODE_HINT.findall(text[:20000])) >= max(3, len(lines) // 8)

    def chunk(self, view: str, start: int, end: int, title: str, leaves: tuple[Leaf, ...], how: Cutting
              ) -> list[Piece]:
        """A unit per chunk, whole lines; small neighbouring blocks between definitions joined, a long unit cut
        at its statements (its language from the file the call named, else guessed from the text)."""
        del title, leaves
        text = view[start:end]
        language = language_in(how.path, text)
        return line_chunks(text, start, code_spans(text, language), how.tokenizer, how.line_target)

    def budget(self, view: str, view_tokens: int) -> int | None:
        lines = view.count("\n") + 1
        whole = self.cost(view_tokens, 1, lines)  # every line as a cut shows it
        if whole <= MIN_TOKENS:  # no more than the smallest cut with its note: whole (an 85-line file had been cut
            return whole  # to 20 lines fewer for a saving of 50 tokens)
        read = view_tokens + lines  # Read's `12\t` before each line: about a token
        return max(MIN_TOKENS, min(read // SHARE, MAX_TOKENS)) - NOTE_TOKENS

    def cost(self, tokens: int, first: int, last: int) -> int:
        """Each line is shown after its number (`12│`: o200k_base reads digits in threes, then the bar), counted by
        how many numbers have each width (a whole file's cost, asked for on every read, is no loop over its lines)."""
        numbers = 0
        for width in range(len(str(first)), len(str(last)) + 1):
            low, high = max(first, 10 ** (width - 1) if width > 1 else 0), min(last, 10 ** width - 1)
            numbers += max(0, high - low + 1) * (-(-width // 3) + 1)
        return tokens + numbers

    def priorities(self, query: str, view: str, chunks: Sequence[Chunk], path: str | None, line_span: LineSpanOf,
                   budget: int | None, whole: bool = True) -> np.ndarray | None:
        longest = budget // WHOLE_SHARE if budget else None
        found = [boost for boost in (_named(query, chunks, path, line_span, longest),
                                     _import_chunks(view, chunks, language_in(path, view), line_span, budget,
                                                    self.cost),
                                     _end_chunk(chunks, line_span, longest, self.cost) if whole else None)
                 if boost is not None]
        return np.maximum.reduce(found) if found else None

    def map_lines(self, view: str, path: str | None) -> list[int]:
        return header_lines(view, language_in(path, view))

    def heads(self, view: str, path: str | None) -> Callable[[int], int | None]:
        return partial(head_of, definitions(view, language_in(path, view)) or [])

    def rescore(self, query: str, view: str, chunks: Sequence[Chunk], lexical: np.ndarray, path: str | None,
                line_span: LineSpanOf, repo: RepoRanking | None = None) -> np.ndarray:
        """Each chunk as a unit of the file named by its definition path, scored by the code ranker, with the
        ranking of its definition by the indexed repository holding the file (`repo`), if one does."""
        units = [context_unit(path or "", c.context, c.text(view), *line_span(c.start, c.end)) for c in chunks]
        boost = definition_boost(units, view, repo)
        return rank_units(query, units, lexical, one_file=True, boost=boost)


def _import_chunks(view: str, chunks: Sequence[Chunk], language: str | None, line_span: LineSpanOf,
                   budget: int | None, cost: Callable[[int, int, int], int]) -> np.ndarray | None:
    """1 for each chunk of module code holding an import, in file order while they take at most IMPORT_SHARE-th of
    the budget as shown (`cost`: with their line numbers); None when none does. A fix that calls code from
    elsewhere edits the imports, and an edit there needs their exact lines (python -m bench.code, bench/README.md:
    "The module's imports first")."""
    found = import_lines(view, language)
    if not found:
        return None
    boost = np.zeros(len(chunks))
    room = budget // IMPORT_SHARE if budget else sys.maxsize
    for i, chunk in enumerate(chunks):
        first, last = line_span(chunk.start, chunk.end)
        if chunk.context or not any(first <= n <= last for n in found):
            continue
        shown = cost(chunk.tokens, first, last)
        if shown > room:
            break
        boost[i], room = 1.0, room - shown
    return boost if boost.any() else None


def _end_chunk(chunks: Sequence[Chunk], line_span: LineSpanOf, longest: int | None,
               cost: Callable[[int, int, int], int]) -> np.ndarray | None:
    """1 for the file's last chunk when it takes at most `longest` tokens as shown: a new definition is added at
    the end of a module, and an edit there needs the file's last lines (python -m bench.code, bench/README.md:
    "The file's end"). The caller asks only where the read runs to the file's end (`reads_to_end`)."""
    if not chunks or longest is None:
        return None
    first, last = line_span(chunks[-1].start, chunks[-1].end)
    if cost(chunks[-1].tokens, first, last) > longest:
        return None
    boost = np.zeros(len(chunks))
    boost[-1] = 1.0
    return boost


def _named(query: str, chunks: Sequence[Chunk], path: str | None, line_span: LineSpanOf, longest: int | None
           ) -> np.ndarray | None:
    """1 for each chunk of a definition the request names as code, 2 where it names its path (`Class.method`, or
    `module.function` with this file's module) or a traceback frame of this file points into it, else 0; None when
    it names none. A named definition of more than `longest` tokens gets it on its header chunk only (the request
    may only mention it); one named by its path, unless over PATH_SHARE times that."""
    request = read_request(query)
    boost = np.zeros(len(chunks))
    sizes = _definition_sizes(chunks)
    module = module_name(path).rsplit(".", 1)[-1] if path else ""
    for i, chunk in enumerate(chunks):
        names = [module, *(label.rsplit(" ", 1)[-1] for label in chunk.context.split(" > ") if label)]
        if len(names) < 2 or names[-1] not in request.names:
            continue
        by_path = (names[-2], names[-1]) in request.pairs
        first, tokens = sizes[i]
        if longest is not None and tokens > longest * (PATH_SHARE if by_path else 1) and first != i:
            continue
        boost[i] = 2.0 if by_path else 1.0
    frames = request.frames_in(path)
    for i, chunk in enumerate(chunks):
        first, last = line_span(chunk.start, chunk.end)
        if any(f.line is not None and first <= f.line <= last for f in frames):
            boost[i] = 2.0
    return boost if boost.any() else None


def _definition_sizes(chunks: Sequence[Chunk]) -> list[tuple[int, int]]:
    """Per chunk, the first chunk of its definition (the run of neighbours with its path) and the run's tokens."""
    out: list[tuple[int, int]] = []
    start = 0
    for i in range(1, len(chunks) + 1):
        if i == len(chunks) or not chunks[i].context or chunks[i].context != chunks[start].context \
                or chunks[i].document != chunks[start].document:
            tokens = sum(c.tokens for c in chunks[start:i])
            out.extend([(start, tokens)] * (i - start))
            start = i
    return out
