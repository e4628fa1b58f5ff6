"""A source file as the records code search ranks: its definitions, and the code outside them.

Each function, method and class is a unit named as its language qualifies it (`QuerySet.filter`), with its true
1-based line span. A class's unit is its own lines before its first nested definition (the `class` line, its
docstring, its attributes): its methods are units of their own, so no line is ranked twice; its own code after its
first nested definition (a function's body after a nested function, a class's attributes between its methods) is
a unit of its name per run (`rest`), so no line of code is in no unit (runs of comments, closing brackets and bare
`else:` excepted); such a part is found by its words, never taken for a definition of its name. The first part keeps
the definition's last line (`definition_end`): a look-up of its name shows the whole of it.
The lines outside every top-level definition (imports, constants, module code) are units of kind `module`, one per
run between definitions, named by the file's module path (`lib/ansible/vars/manager.py` -> `ansible.vars.manager`: a
source root is no part of it).
"""

from __future__ import annotations

import ast
import re
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace
from functools import cached_property, lru_cache
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the code kind ranks its chunks with this package: it is imported where used
    from ..kinds.code import Definition

__all__ = ["CONDITIONAL_WORDS", "UNITS_VERSION", "CodeUnit", "kind_of", "last_part", "module_name", "operator_of",
           "units_of"]

# Which `units_of` found a stored file's units: raised whenever it finds other units in the same text, so a
# repository indexed before finds them again from each file's stored text when it is loaded.
UNITS_VERSION = 51  # (37: each type of a Go group its own unit, a Go struct's and interface's kind as Go writes it,
# a Rust blanket impl named by its trait; 38: a Java or C# record and a Java annotation type of their own kinds,
# Kotlin's enum, interface and annotation too, and a one-line type with no body a definition outside the C family;
# 39: C++ read through more of the macros and casts its grammar cannot, names without template arguments at any depth;
# 40: a Kotlin extension function named by its receiver's type; 41: `include/` a source root;
# 42: the review's: a PHP namespace line no definition, a member extension its class's, symbolic names kept;
# 43: C++ macros ending in `_` (gtest's), a macro's call over several lines, an attribute after an export macro;
# 44: an annotation macro on the line after a function's parameters, no macro rule inside a `#define`, CRLF lines;
# 45: a TS function under a cast (`(...) as any`), a TS generic call signature on its own line without semicolons;
# 46: the review's: no `;` after a line that continues, a comment in a cast's parentheses;
# 47: a JS function with a name of its own that is an operand of a module's statement: `export default a && function f`;
# 48: a source root in any case, Json.NET's `Src/`; 49: a Ruby constant bound to a class a call makes, `Struct.new do`;
# 50: a Ruby `class << self`'s methods said to be in it; 51: a PHP namespace's and a Go package's name kept)

# a file's first lines that tell the interpreter how to read it, not what the code does (a trial's faraday answers
# held `# frozen_string_literal: true` as hits of their own): a shebang, Ruby's and Python's magic comments
_MAGIC_COMMENT = re.compile(r"#!.*|#[ \t]*(?:frozen_string_literal|encoding|coding|warn_indent|"
                            r"shareable_constant_value|typed)[ \t]*:.*|#.*-\*-.*-\*-.*|")

# the word a definition's label starts with -> the unit's kind: a type is called as its language writes it (a Rust
# `struct` is no class), a function by what it is
_TYPE_WORDS = ("class", "struct", "interface", "enum", "trait", "object", "protocol", "actor", "union", "mixin",
               "record", "annotation")  # (Java's and C#'s `record`, Java's `@interface`)
_KIND_OF_WORD = {"def": "function", "function": "function", "fn": "function", "method": "method",
                 "constructor": "constructor", "impl": "impl", "extension": "extension", "module": "module",
                 "mod": "module", "namespace": "module", "type": "type", "test": "test",
                 "macro": "macro", "property": "property", "table": "table"} | {w: w for w in _TYPE_WORDS} | {
                     w: w for w in ("resource", "data", "variable", "output", "module_call", "provider", "block",
                                    "local", "instance")}  # (Terraform's blocks, a Haskell instance)
# a function inside one is a method (a Rust `impl`'s and a Swift `extension`'s too: members of the type they name)
_CONTAINERS = frozenset({*_TYPE_WORDS, "impl", "extension", "instance"})
# kinds named after a type they do not define: a Rust `impl` block, a Swift `extension`
_TYPE_ADDITIONS = frozenset({"impl", "extension", "instance"})
# A parent's own line after its nested definitions that holds no code of its own: one that only closes it (`}`,
# `});`, `end`, Objective-C's `@end`), a block's bare keyword (`else:`, `} else {`, `try:`), a comment (after one of
# those too: `}  // namespace detail`), a directive's end (`#endif`). A run of such lines is no unit.
_NO_CODE = re.compile(r"[\s)\]};,]*(?:@?end|else|try|finally|except|do|begin)?[\s:{)\]};,]*"
                      r"(?:(?:#|//|/\*|--\s).*)?|\s*(?:\*(?:\s|/|$)|--$).*")


def kind_of(word: str, parent_kind: str | None) -> str:
    """A definition's kind from its label's word (`def`, `class`, `struct`, ...): a function inside a class (or a Rust
    `impl`, kind `impl`: the type's own definition is its `struct` or `enum`) is a method."""
    kind = _KIND_OF_WORD.get(word, "function")
    return "method" if kind == "function" and parent_kind in _CONTAINERS else kind


# an operator defined by its symbols (Haskell's `(.:?) = ...`, `instance Semigroup X where (<>) = ...`): named alone
# or after its qualifier, its dots are its own (`.:?` is no `:?` of a `` qualifier)
_OPERATOR = re.compile(r"(?:.*[\w)\]]\.)?([!#$%&*+./<=>?@\\^|~:-]+)")


def operator_of(name: str) -> str:
    """The operator a (qualified) name ends in (`.:?`, `Monoid.<>`: `<>`), or ""."""
    found = _OPERATOR.fullmatch(name)
    return found.group(1) if found else ""


def last_part(name: str) -> str:
    """A qualified name's last part (`Context.Param`: `Param`), an operator whole (`Monoid.<>`: `<>`)."""
    return operator_of(name) or name.rsplit(".", 1)[-1]


# (blank and comment lines before it)
_MAIN_GUARD = re.compile(r"(?:[ \t]*(?:#[^\n]*)?\r?\n)*if[ \t]+__name__[ \t]*==[ \t]*(['\"])__main__\1[ \t]*:")
_AT_THE_MARGIN = re.compile(r"^[^ \t#\r\n]", re.MULTILINE)  # a line of code at the module's level


@dataclass(frozen=True)
class CodeUnit:
    path: str  # the file, relative to its repository, with `/`
    name: str  # qualified with `.`: `QuerySet.filter`; a module run: the module's dotted path
    kind: str  # function, method, class (struct, interface, enum, trait, ...: its language's word), module, type,
    # impl (a Rust `impl` block), extension (Swift's), test (`it('adds', ...)`)
    start_line: int  # 1-based, inclusive
    end_line: int  # 1-based, inclusive
    text: str  # the unit's lines, verbatim
    signature: str = ""  # its header line (`def filter(self, *args, **kwargs):`), stripped
    rest: bool = False  # a definition's own code after a nested one: part of it, not a definition of its name
    definition_end: int = 0  # the first part of a definition holding nested ones: the definition's last line
    # (a later part's too); a later part (`rest`): the definition's first line
    definition_start: int = 0
    within: str = ""  # a Rust trait impl's method: the impl's header (`impl fmt::Display for PathError`), which its
    # name does not say (a type's `Display` and `Debug` both have `fmt`: two heads `PathError.fmt` a model cannot tell);
    # a Ruby `class << self`'s method: SINGLETON
    package: str = ""  # what the file declares its code to be in, as callers qualify its names: a PHP file's
    # `namespace GuzzleHttp\Exception;` (`GuzzleHttp.Exception`), a Go file's `package echo`

    @property
    def last_line(self) -> int:
        """The last line of the definition the unit is of (a first part's, whose nested definitions are units of their
        own: a blank line between two methods is in their class)."""
        return max(self.end_line, self.definition_end)

    @cached_property  # asked for every unit of every search's pool
    def leaf(self) -> str:
        """The name's last part, as a request writes it: a JS/TS private method `#delay` is called `delay` too, an
        Objective-C method `initWithTask:` (a selector) by its first word, `initWithTask`; an operator whole
        (Haskell's `.:?`)."""
        return operator_of(self.name) or last_part(self.name).lstrip("#").split(":", 1)[0]

    @cached_property  # asked for every unit of every search's pool
    def commented_out(self) -> bool:
        """A module run of lines that are nothing but comments: code commented out (`/*func TestX(...) {...}*/`) or a
        header. Not one comment line (a grep's line, which says what the code around it does: counted for less, it
        cost bench.grep's test split four outputs' lines near an edit)."""
        from ..kinds.code import language_of, only_comments

        return self.module_run and (self.end_line > self.start_line and only_comments(self.text, language_of(self.path))
                                    or all(_MAGIC_COMMENT.fullmatch(line.strip()) for line in self.text.split("\n")))

    @cached_property  # asked for every unit of every search's pool
    def imports_only(self) -> bool:
        """A module run of imports alone (`only_imports`): axum's `strip_prefix.rs:1-8`, eight `use` lines, came
        before the `strip_prefix` function for "where does axum strip the prefix of the uri"."""
        from ..kinds.code import language_of, only_imports

        return self.kind == "module" and only_imports(self.text, language_of(self.path))

    @cached_property  # asked for every unit of every search's pool
    def main_guard(self) -> bool:
        """A Python module run that opens with `if __name__ == "__main__":`: a demo or a script's start, run by hand
        (45 of rich's modules end with one; `markup.py`'s, a list of sample markup, came first for "where is console
        markup parsed into styles", above the parser)."""
        guard = _MAIN_GUARD.match(self.text) if self.kind == "module" and self.path.endswith(".py") else None
        return guard is not None and _AT_THE_MARGIN.search(self.text, guard.end()) is None  # (module code after it,
        # or its `else:`, runs on import: the module's code)

    @cached_property  # asked for every unit of every search's pool
    def stub(self) -> bool:
        """A Python function or method whose body does nothing: its docstring alone, `pass`, `...`, a bare `return`
        (or of None) or `raise NotImplementedError` (with no message): a hook to override or an abstract method,
        whose words say what the code that does it does (two trials' celery `Task.on_retry`, a docstring, above
        `Task.retry`; drf's `BaseThrottle.wait`, `return None`, above `SimpleRateThrottle.wait`)."""
        if self.kind not in ("function", "method") or self.rest or not self.path.endswith((".py", ".pyi")):
            return False
        try:
            tree = ast.parse(textwrap.dedent(self.text))
        except (SyntaxError, ValueError):
            return False
        found = next((node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))), None)
        return found is not None and all(map(_does_nothing, found.body))

    @cached_property  # asked for every unit of every search's pool
    def deprecated(self) -> bool:
        """Its own doc or annotation says it is deprecated (`@deprecated`, `@Deprecated`, `#[deprecated]`,
        `[Obsolete]`, Go's `// Deprecated:` or cobra's `// Deprecated` line, Swift's `@available(*, deprecated)`, a
        docstring's `.. deprecated::`): a wrapper kept for old callers, which names the code to use instead (a trial's
        guzzle answered "choose the http handler" with `functions.php`'s `choose_handler` above
        `Utils::chooseHandler`). Read in its head alone, the lines up to its header and a Python docstring after it:
        a class's deprecated property is not the class."""
        return not self.module_run and not self.rest and _DEPRECATED.search(_head_of(self)) is not None

    @property
    def answers_to_name(self) -> bool:
        """A request naming its name's end may mean it: not a test framework's test or group (`describe('parse',
        ...)` is titled by what it tests) or a `rest` (a definition's later part); a module's run and a Rust `impl`
        block do (a file's and a type's name)."""
        return self.kind != "test" and not self.rest

    @property
    def defines_name(self) -> bool:
        """Its name is what it defines: one it answers to, not a module's run, a Rust `impl` block or a Swift
        `extension` (they name the type). A module declared (Ruby's `module Faraday::Utils`, Rust's `mod tests`, a
        namespace's block) defines its name: a look-up of a Ruby module was told no definition is named so."""
        return self.answers_to_name and not self.module_run and self.kind not in _TYPE_ADDITIONS

    @property
    def module_run(self) -> bool:
        """A run of a file's own code between its definitions (no header of its own), named by the file's module."""
        return self.kind == "module" and not self.signature


def _does_nothing(statement: ast.stmt) -> bool:
    if isinstance(statement, ast.Pass):
        return True
    if isinstance(statement, ast.Expr):  # (a docstring, `...`)
        return isinstance(statement.value, ast.Constant) and isinstance(statement.value.value, (str, type(...)))
    if isinstance(statement, ast.Return):
        return statement.value is None or isinstance(statement.value, ast.Constant) and statement.value.value is None
    if isinstance(statement, ast.Raise) and statement.exc is not None:  # (bare: one with a message says it, and a
        # pasted error finds it, httpx's "The 'handle_request' method must be implemented.")
        call = statement.exc if isinstance(statement.exc, ast.Call) else None
        raised = call.func if call is not None else statement.exc
        return isinstance(raised, ast.Name) and raised.id == "NotImplementedError" and not (call and call.args)
    return False


_DEPRECATED = re.compile(r"@[Dd]eprecated\b|#\[deprecated\b|\[Obsolete\b|"
                         r"^[ \t]*(?://+|#)[ \t]*Deprecated(?:[:.]|[ \t]*$)|\.\. deprecated::|"
                         r"@available\([^)]*\bdeprecated\b", re.MULTILINE)
_DOCSTRING_OPENS = re.compile(r"[ \t]*[rRuU]?(\"\"\"|\'\'\')")


def _head_of(unit: CodeUnit) -> str:
    """A unit's header line and what is written for it just above (its doc comment, annotations, decorators: back to
    the line that ends another statement, a TS overload's `;`), and a Python docstring after its signature at the
    docstring's own indentation (a parameter's `.. deprecated::` is the parameter's); its first line alone when no
    line is its header."""
    lines = unit.text.split("\n")
    header = next((i for i, line in enumerate(lines) if unit.signature and line.strip() == unit.signature), 0)
    first = header
    while first > 0 and not lines[first - 1].rstrip().endswith((";", "{", "}")):
        first -= 1
    head = lines[first : header + 1]
    if unit.path.endswith((".py", ".pyi")):
        end = next((i + 1 for i in range(header, min(len(lines), header + _SIGNATURE_LINES))
                    if lines[i].split("#", 1)[0].rstrip().endswith(":")), header + 1)
        head += _docstring(lines[end:])
    return "\n".join(head)


_SIGNATURE_LINES = 40  # a Python signature's lines at most, to its `:`


def _docstring(lines: list[str]) -> list[str]:
    """The docstring these lines open with, its lines at the opening's indentation (or less) alone."""
    opened = _DOCSTRING_OPENS.match(lines[0]) if lines else None
    if opened is None:
        return []
    closing, indent = opened.group(1), len(lines[0]) - len(lines[0].lstrip())
    last = next((i for i in range(len(lines)) if lines[i].count(closing) >= (2 if i == 0 else 1)), len(lines) - 1)
    return [line for line in lines[: last + 1] if len(line) - len(line.lstrip()) <= indent]


# the folders a language's modules are named from, not by: `src/click/core.py` is `click.core`, Maven's
# `src/main/java/org/apache/...` is `org.apache...`, Ruby's `lib/rack/lint.rb` is `rack.lint`
_SOURCE_ROOTS = frozenset({"src", "lib", "source", "sources", "lua", "R", "include"})  # (a Neovim plugin's
# `lua/telescope/...`; a C or C++ library's `include/fmt/format.h`, which code includes as `fmt/format.h`)
_JVM_ROOTS = (frozenset({"main", "test"}), frozenset({"java", "kotlin", "scala", "groovy"}))


@lru_cache(maxsize=1 << 16)  # asked for every unit a look-up weighs; a repository's paths are few
def module_name(path: str) -> str:
    """`lib/ansible/vars/manager.py` -> `ansible.vars.manager`; `pkg/__init__.py` and `lua/pkg/init.lua` -> `pkg`."""
    parts = list(PurePosixPath(path).with_suffix("").parts)
    if parts and (parts[-1] in ("__init__", "index", "mod") or parts[-1] == "init" and path.endswith(".lua")):
        parts.pop()  # (a Lua package's `init.lua`, as `require("telescope.actions")` loads it)
    jvm = next((i for i in range(len(parts) - 3) if parts[i] == "src" and parts[i + 1] in _JVM_ROOTS[0]
                and parts[i + 2] in _JVM_ROOTS[1]), None)  # (at any depth: okhttp's okhttp/src/main/kotlin/okhttp3)
    if jvm is not None:
        del parts[: jvm + 3]
    elif len(parts) > 1 and (parts[0] in _SOURCE_ROOTS or parts[0].lower() in _SOURCE_ROOTS):  # (Json.NET's `Src/`;
        parts.pop(0)  # an R package's `R/` as written: not every folder `r`)
    return ".".join(parts) or PurePosixPath(path).stem


def units_of(path: str, text: str) -> list[CodeUnit]:
    """Every definition of a source file and the runs of module code between them, in file order. A file with no
    grammar (or none of its definitions found) is one module unit."""
    from ..kinds.code import definitions, language_in

    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # a file's last newline ends its last line; it opens none
    if not any(line.strip() for line in lines):
        return []
    language = language_in(path, text)
    found = definitions(text, language) or []
    out = list(_walk(path, found, lines, "", None, _namespaces(found) if language in _SCOPED else None))
    out.extend(_module_runs(path, found, lines, language in _PREPROCESSED))
    if (declared := _DECLARED_PACKAGE.get(language or "")) and (package := declared.search(text)):
        out = [replace(unit, package=package[1].strip("\\").replace("\\", ".")) for unit in out]
    return sorted(out, key=lambda u: (u.start_line, u.end_line, u.name))


# a file's declaration of what its code is in, as callers qualify it (the first: a PHP file may hold more)
_DECLARED_PACKAGE = {"php": re.compile(r"^[ \t]*namespace[ \t]+\\?([A-Za-z_][\w\\]*)[ \t]*[;{]", re.M),
                     "go": re.compile(r"^package[ \t]+([A-Za-z_]\w*)", re.M)}


_SCOPED = frozenset({"cpp", "cuda"})  # where `Type::name(...) {...}` defines a member outside its class


def _namespaces(found: Sequence[Definition]) -> frozenset[str]:
    """The names of the namespaces a C++ file opens (`namespace leveldb {`), at any depth."""
    names: set[str] = set()
    for d in found:
        word, _, name = d.label.partition(" ")
        if word == "namespace":
            names.update(name.split("."))  # (`namespace a::b {`)
        names |= _namespaces(d.children)
    return frozenset(names)


def _member_outside(name: str, header: str, namespaces: frozenset[str]) -> bool:
    """C++'s `void VersionSet::SetupOtherInputs(...) {...}`: a function written `Type::name`, its class's, where the
    scope is no namespace the file opens (gtest's `TEST(format_test, big_print)` is named `format_test.big_print`,
    written with no `::`)."""
    *_, scope, leaf = ["", *name.split(".")]
    return bool(scope) and scope not in namespaces and "::" in header and scope in header and \
        _member_written(scope, leaf).search(header) is not None


@lru_cache(maxsize=1 << 12)
def _member_written(scope: str, leaf: str) -> re.Pattern[str]:
    return re.compile(rf"\b{re.escape(scope)}\s*(?:<[^;{{]*>)?\s*::\s*{re.escape(leaf)}")


def _walk(path: str, found: list[Definition] | tuple[Definition, ...], lines: list[str], prefix: str,
          parent_kind: str | None, namespaces: frozenset[str] | None = None, within: str = "") -> Iterator[CodeUnit]:
    for d in found:
        word, _, name = d.label.partition(" ")
        kind = kind_of(word, parent_kind)
        if kind == "function" and namespaces is not None and _member_outside(name, lines[d.header], namespaces):
            kind = "method"
        qualified = f"{prefix}.{name}" if prefix else name
        last = min(d.last, len(lines) - 1)
        if d.children:
            own_last = max(d.first, d.children[0].first - 1)
            while own_last > d.first and not lines[own_last].strip():
                own_last -= 1
            yield replace(_unit(path, qualified, kind, d.first, own_last, lines, d.header), definition_end=last + 1,
                          within=within)
            singleton = (word, name) == ("class", "self")  # Ruby's `class << self`: its methods are the class's own
            yield from _walk(path, d.children, lines, prefix if singleton else qualified, kind, namespaces,  # (`Base.
                             SINGLETON if singleton else _trait_impl(kind, lines[d.header]))  # route`), said to be
            # its singleton's: sidekiq's `Client.push` is an instance method and a one-line class method both)
            for first, end in _runs(lines, d.children[0].first, last, d.children):
                if not all(_NO_CODE.fullmatch(line) for line in lines[first : end + 1]):
                    yield replace(_unit(path, qualified, kind, first, end, lines, d.header), rest=True,
                                  definition_start=d.first + 1, definition_end=last + 1, within=within)
        else:
            yield replace(_unit(path, qualified, kind, d.first, last, lines, d.header), within=within)


SINGLETON = "class << self"


def _trait_impl(kind: str, header: str) -> str:
    """A Rust impl of a trait, by its header line (`impl<T, S> FromRequest<S> for Json<T>`, less its `{` and a
    `where`); "" for another definition, or an impl of the type's own methods."""
    written = re.sub(r"\s*(?:\bwhere\b.*|\{.*)$", "", header.strip())
    return written if kind == "impl" and _FOR_TYPE.search(written) else ""


_FOR_TYPE = re.compile(r"\sfor\s+\S")


def _unit(path: str, name: str, kind: str, first: int, last: int, lines: list[str], header: int) -> CodeUnit:
    signature = lines[header].strip() if 0 <= header < len(lines) else ""
    return CodeUnit(path, name, kind, first + 1, last + 1, "\n".join(lines[first : last + 1]), signature)


# languages whose `#if`/`#endif` are directives: a run of nothing else between definitions is no code of its own (jq's
# `#ifndef No_Hex_NaN` alone ranked 3rd for a NaN bug)
_PREPROCESSED = frozenset({"c", "cpp", "cuda", "objc", "csharp", "swift"})
# the preprocessor's words for conditional compilation (C's, C#'s, Swift's `#elseif`), which the code kind's grammar
# input reads too (`kinds.code._DIRECTIVE`)
CONDITIONAL_WORDS = ("if", "ifdef", "ifndef", "elif", "elifdef", "elifndef", "elseif", "else", "endif")
_CONDITIONAL = re.compile(r"[ \t]*(?:#[ \t]*(?:" + "|".join((*CONDITIONAL_WORDS, "region", "endregion")) + r")\b.*)?")


def _module_runs(path: str, found: list[Definition], lines: list[str], directives: bool) -> Iterator[CodeUnit]:
    """The runs of lines outside every top-level definition that hold code (blank edges trimmed; with `directives`,
    not a run of conditional compilation's lines alone)."""
    name = module_name(path)
    for first, end in _runs(lines, 0, len(lines) - 1, found):
        if directives and all(_CONDITIONAL.fullmatch(line) for line in lines[first : end + 1]):
            continue
        if all(_INTERPRETER_LINE.fullmatch(line) or not line.strip() for line in lines[first : end + 1]):
            continue  # a script's `#!/bin/sh` alone (nvm's tests): nothing in it answers a search
        yield CodeUnit(path, name, "module", first + 1, end + 1, "\n".join(lines[first : end + 1]))


# a line that tells the system or a linter how to run the file, and nothing of what it does: `#!/usr/bin/env bash`,
# `# shellcheck shell=bash`, `# -*- coding: utf-8 -*-`
_INTERPRETER_LINE = re.compile(r"#!.*|#\s*shellcheck\s.*|#.*-\*-.*-\*-.*")


def _runs(lines: list[str], start: int, last: int, held: Sequence[Definition]) -> Iterator[tuple[int, int]]:
    """The runs of lines from `start` to `last` (0-based, inclusive) that none of `held` covers, blank edges trimmed
    and blank runs left out."""
    covered = [False] * (last + 1 - start)
    for d in held:
        for i in range(max(d.first, start), min(d.last, last) + 1):
            covered[i - start] = True
    i = start
    while i <= last:
        if covered[i - start] or not lines[i].strip():
            i += 1
            continue
        j = i
        while j + 1 <= last and not covered[j + 1 - start]:
            j += 1
        end = j
        while end > i and not lines[end].strip():
            end -= 1
        yield i, end
        i = j + 1
