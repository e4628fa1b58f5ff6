"""What a request about code names: identifiers written as code, and the frames of a traceback.

An issue or a step names the code it is about in forms prose does not use: `backticks`, calls (`run(`), dotted
paths (`ansible.vars.manager`), snake_case and CamelCase names, and traceback frames (`File "x/validators.py",
line 100, in __call__`, `at render (src/app.js:40:7)`, `main.go:12`). A definition whose name the request writes
that way, or whose lines a frame of this file points into, is what the request is about.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import PurePosixPath
from urllib.parse import unquote

_BACKTICKED = re.compile(r"`([^`\n]{1,200})`")
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_CALLED = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(")
_DOTTED = re.compile(r"\b[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+\b")
# a name qualified as Ruby, Rust, C++, PHP and Lua write it (`Rack::Lint`, `Sinatra::Base#render`, `Router::merge`,
# `Picker:find`), not a URL's or a file's anchor (`README.md#configuration`) nor prose's `status:open` (a Lua method's
# table is named with a capital)
_SCOPED = re.compile(r"(?<![/.\w-])[A-Za-z_]\w*(?:(?:::|#)[A-Za-z_]\w*[!?]?)+"
                     r"|(?<![/.:\w-])[A-Z]\w*:[a-z_]\w*(?![:/\w])")
# an Objective-C message as a crash report, a log or a request writes it: `-[AFURLSessionManager
# dataTaskWithRequest:completionHandler:]`, `+[Greeter(Extra) shared]`; its class and its selector's first word
_OBJC_MESSAGE = re.compile(r"[-+]\[([A-Za-z_]\w*)(?:\([\w ]*\))? ([A-Za-z_]\w*)[\w:]*\]")
_COMPOUND = re.compile(r"\b(?:_*[a-z0-9]+(?:_[a-z0-9]+)+_*|_{1,2}[a-z0-9_]+|[A-Z][a-z0-9]+(?:[A-Z][A-Za-z0-9]*)+"
                       r"|[a-z]+[A-Z][A-Za-z0-9]*)\b")
# a shell function's or a Lisp's name as written (`command-bump`), not a path's part nor an option (`--gather-in`)
_HYPHENATED = re.compile(r"(?<![\w./-])[A-Za-z_]\w*(?:-[A-Za-z_]\w*)+(?![\w/-])")
_PY_FRAME = re.compile(r'File "([^"]+)", line (\d+)(?:, in ([A-Za-z_<>][\w<>]*))?')
# Node's `at fn (path:line:col)`, as V8 writes it: `at async fn (...)`, `at new Foo (...)`, a method called by another
# name `at Object.saveCart [as onSave] (...)`, a bundler's `webpack://app/src/x.ts:3:1`, an ES module's URL
# `file:///app/node_modules/zod/v4/core/parse.js:27:15` (a space in its folder written `%20`)
_AT_FRAME = re.compile(r"\bat (?:(?:async |(new ))?([\w.$<>]+)( \[as [\w$]+\])? )?\(?"
                       r"(?:webpack://[\w.@-]*/|file://(?:/[A-Za-z]:(?=/))?)?"
                       r"((?:[\w./\\@+-]|%[0-9A-Fa-f]{2})+\.\w+):(\d+)(?::\d+)?\)?")
# a JVM stack trace's frame: `at com.google.gson.Gson.fromJson(Gson.java:932)`, the class's package its folders
_JVM_FRAME = re.compile(r"\bat ((?:[\w$]+\.)+)([\w$<>]+)\(([\w$-]+\.(?:java|kt|kts|scala|groovy)):(\d+)\)")
# .NET's: `at Newtonsoft.Json.JsonReader.Read() in C:\src\Json\JsonReader.cs:line 42`
_DOTNET_FRAME = re.compile(r"\bat ((?:[\w`<>+]+\.)*)([\w`<>]+)(?:\[[^\]\n]*\])?\([^)\n]*\) in "
                           r"([^\n]+?\.(?:cs|fs|vb)):line (\d+)")  # (a generic method's `Deserialize[T](...)`)
# PHP's: `#2 /app/vendor/guzzlehttp/guzzle/src/Client.php(124): GuzzleHttp\Promise\Promise->wait()`: the place, and
# the function called there (not the one holding it: that is the next frame's call); where it was thrown is the
# message's `in /app/.../CurlFactory.php:275` (or `thrown in ... on line 275`)
_PHP_FRAME = re.compile(r"^[ \t]*#(\d+) (?:(\S+?\.php)\((\d+)\)|\[internal function\]): ([^\s(]+)\(", re.MULTILINE)
_PHP_FRAME_LINE = re.compile(r"#\d+ (?:\S+?\.php\(\d+\)|\[internal function\]): .*")
# gdb's `#5  0x0000555555583e5c in uv__io_poll (loop=0x55555..., timeout=0) at src/unix/linux.c:1552`, and an Apple
# crash report's `1   Alamofire   0x0000000104a1c2d4 RetryPolicy.retry(_:for:dueTo:completion:) + 412
# (RetryPolicy.swift:312)`: each line a frame, its function named on it (its arguments no words of the request)
_GDB_FRAME = re.compile(r"^#\d+[ \t]+(?:0x[0-9a-f]+ in )?([\w:~<>.]+) \(.*\) at (\S+?):(\d+)[ \t]*$", re.MULTILINE)
_GDB_FRAME_LINE = re.compile(r"#\d+[ \t]+(?:0x[0-9a-f]+ in )?[\w:~<>.]+ \(.*\)(?: at \S+?:\d+| from \S+)")
_APPLE_FRAME = re.compile(r"^\d+[ \t]+\S+[ \t]+0x[0-9a-f]+ (.+?) \+ \d+ \((\S+?\.\w+):(\d+)\)[ \t]*$", re.MULTILINE)
_APPLE_FRAME_LINE = re.compile(r"\d+[ \t]+\S+[ \t]+0x[0-9a-f]+ .+? \+ \d+(?: \(\S+?:\d+\))?")
_PHP_THROWN = re.compile(r"\bin (\S+?\.php)(?::| on line )(\d+)\b")
# Ruby's: `lib/sinatra/base.rb:1050:in 'Sinatra::Base#route!'` (`route!'` with a backtick before Ruby 3.4)
_RUBY_FRAME = re.compile(r"(?<![\w./\\@+-])([\w./\\@+-]+\.rb):(\d+):in [`']"
                         r"(?:block (?:\(\d+ levels\) )?in )?([^'\s]+)'")
# a path's run is matched from its start only (`(?<!...)`): from every position inside it, a long run of path
# characters with no place in it cost time quadratic in its length (100,000 characters: 23 s)
_PATH_LINE = re.compile(r"(?<![\w./\\@+-])([\w./\\@+-]+\.[A-Za-z]{1,5}):(\d+)\b")
# a Go module cache's folder of a module at a version (`.../pkg/mod/github.com/gin-gonic/gin@v1.9.1/`): the paths
# under it are the module's own
_MODULE_AT_VERSION = re.compile(r"^.*@v\d[\w.+-]*/")
# Cargo's copy of a crate at a version (`~/.cargo/registry/src/index.crates.io-6f17d22bba15001f/axum-0.8.1/`): the
# paths under it are the crate's own, in its folder of a workspace (`axum/src/routing/mod.rs`); a git dependency's
# checkout (`~/.cargo/git/checkouts/axum-3f1b2c/8d4e1f0/`) is its repository's root
_CRATE_AT_VERSION = re.compile(r"^.*/registry/src/[^/]+/([\w-]+?)-\d+\.\d+\.\d+[\w.+-]*/"
                               r"|^.*/git/checkouts/[^/]+/[0-9a-f]+/")
# a Rust backtrace's frame: its function on a numbered line (`  12: axum::routing::Router<S>::route`), its place on
# the next (`             at /home/u/.cargo/.../src/routing/mod.rs:193:9`)
_RUST_SYMBOL = re.compile(r"[ \t]*\d+: +(\S.*?)[ \t]*|[ \t]{4,}(?!at )([^\s(].*::.*?)[ \t]*")  # (an inlined frame's
# symbol is on an indented line of its own, no number: `      <tower::util::Oneshot<S,R> as Future>::poll`)
_COMMON_TEXT = ("self cls this none true false null def class return import from if else for while in is not and or "
                "with as try except raise pass the a an of to etc")
_COMMON = frozenset(_COMMON_TEXT.split())


@dataclass(frozen=True)
class Frame:
    path: str
    line: int | None
    function: str | None


@dataclass(frozen=True)
class CodeRequest:
    names: frozenset[str]  # identifiers the request writes as code
    frames: tuple[Frame, ...]  # a traceback's innermost first, then the other places as written
    pairs: frozenset[tuple[str, str]] = frozenset()  # `Outer.inner` as written (dotted paths, qualified calls)

    def frames_in(self, path: str | None) -> list[Frame]:
        """The frames that point into this file (matched by its name, then by as much of its path as given)."""
        if not path:
            return []
        return [f for f in self.frames if paths_meet(f.path, path)]


def scoped_parts(name: str) -> list[str]:
    """A name qualified as Ruby, Rust, C++, PHP and Lua write it, in its parts: `Sinatra::Base#render` -> Sinatra,
    Base, render; `Picker:find` -> Picker, find."""
    return [part for part in _SCOPE.split(name) if part]


_SCOPE = re.compile(r"::|#|:")


def read_request(text: str) -> CodeRequest:
    names: set[str] = set()
    pairs: set[tuple[str, str]] = set()
    for quoted in _BACKTICKED.findall(text):
        names.update(_IDENTIFIER.findall(quoted))
    names.update(_CALLED.findall(text))
    for dotted in _DOTTED.findall(text):
        if not re.fullmatch(r"[\w.]+\.(py|js|ts|go|rs|java|rb|php|txt|md|json|yml|yaml|cfg|toml|html|com|org)",
                            dotted):
            parts = dotted.split(".")
            names.update(parts)
            pairs.update(zip(parts, parts[1:], strict=False))
    for scoped in _SCOPED.findall(text):
        parts = scoped_parts(scoped)  # (Ruby's `redirect?` is another method than `redirect`)
        names.update(parts)
        pairs.update(zip(parts, parts[1:], strict=False))
    for owner, selector in _OBJC_MESSAGE.findall(text):
        names.update((owner, selector))
        pairs.add((owner, selector))
    names.update(_COMPOUND.findall(text))
    names.update(_HYPHENATED.findall(text))  # a shell function's or a Lisp's name (bats's `command-bump`): a name
    # only where a definition has it (`built-in` names none)
    frames = _python_frames(text)
    frames += _native_frames(text)
    native = {(f.path, f.line) for f in frames}
    frames += [f for f in _at_frames(text) if (f.path, f.line) not in native]
    frames += _jvm_frames(text)
    frames += [Frame(p.replace("\\", "/"), int(n), _dotnet_function(q, m))
               for q, m, p, n in _DOTNET_FRAME.findall(text)]
    frames += _php_frames(text)
    frames += [Frame(p, int(n), re.split(r"[#.]|::", m)[-1]) for p, n, m in _RUBY_FRAME.findall(text)]
    known = {(file_name(f.path), f.line) for f in frames}
    frames += [Frame(path, int(n), None) for p, n in _PATH_LINE.findall(text)
               if (file_name(path := _module_path(p)), int(n)) not in known
               and not _GO_STDLIB.search(path) and not _RUST_STDLIB.search(path)]
    names.update(f.function for f in frames if f.function)
    return CodeRequest(frozenset(n for n in names if len(n.strip("_")) >= 3 and n.lower() not in _COMMON),
                       tuple(frames), frozenset(pairs))


_FRAME_FORMS = (_PY_FRAME, _GDB_FRAME_LINE, _APPLE_FRAME_LINE, _AT_FRAME, _JVM_FRAME, _DOTNET_FRAME, _RUBY_FRAME,
                _PHP_FRAME_LINE, _PATH_LINE)
_CARETS = re.compile(r"[\s^~]*")  # Python 3.11's markers under a frame's source line


def outside_frames(text: str) -> str:
    """The request less its trace: each frame as written taken out of its line (a sentence naming
    `requests/adapters.py:412` keeps its words), the source line Python prints under a frame and its `^^^^` markers,
    and the function line Go or a Rust backtrace prints above one (`main.run(...)` over `\t/src/main.go:12 +0x1d`,
    `  4: axum::routing::Router<S>::route` over `at .../src/routing/mod.rs:193:9`)."""
    lines = text.split("\n")
    left = [_strip_frames(line) for line in lines]
    framed = [a != b for a, b in zip(lines, left, strict=True)]
    kept = [rest for i, rest in enumerate(left) if not _CARETS.fullmatch(rest)
            and not (i > 0 and framed[i - 1] and _PY_FRAME.search(lines[i - 1]))
            and not (i + 1 < len(lines) and framed[i + 1]
                     and (lines[i + 1].startswith("\t") or _RUST_SYMBOL.fullmatch(lines[i])))]
    return "\n".join(kept)


def is_frame_line(line: str) -> bool:
    """The line holds a frame as one of the traces writes it."""
    return _strip_frames(line) != line


def _strip_frames(line: str) -> str:
    for form in _FRAME_FORMS:
        line = form.sub(" ", line)
    return line


# Python's line between the tracebacks of an exception and the one raised while handling it (or from it): the
# first traceback is the root cause's
_PY_CHAINED = re.compile(r"^(?:During handling of the above exception|The above exception was the direct cause)",
                         re.MULTILINE)


def _python_frames(text: str) -> list[Frame]:
    """A Python traceback's frames innermost first (it prints them "most recent call last"), a chain's root cause
    (its first traceback) before the exceptions raised while handling it."""
    breaks = [m.start() for m in _PY_CHAINED.finditer(text)]
    found = [(sum(b < m.start() for b in breaks), -m.start(), Frame(m[1], int(m[2]), m[3]))
             for m in _PY_FRAME.finditer(text)]
    return [frame for _, _, frame in sorted(found, key=lambda f: (f[0], f[1]))]


def _native_frames(text: str) -> list[Frame]:
    """gdb's frames and an Apple crash report's, innermost first as they print them, each with its function: the
    last part of its qualified name (`nlohmann::basic_json<>::at`: `at`; `closure #1 in
    Request.didCompleteTask(_:with:)`: `didCompleteTask`, the closure's function)."""
    found = [(m.start(), m[2], int(m[3]), m[1]) for m in _GDB_FRAME.finditer(text)]
    found += [(m.start(), m[2], int(m[3]), m[1].split(" in ")[-1].split("(", 1)[0])
              for m in _APPLE_FRAME.finditer(text)]
    frames = []
    for _, path, line, symbol in sorted(found):
        message = _OBJC_MESSAGE.search(symbol)  # `-[AFHTTPSessionManager GET:parameters:...]`: `GET`
        name = message[2] if message else re.split(r"::|\.", without_generics(symbol))[-1]
        frames.append(Frame(path, line, name if _IDENTIFIER.fullmatch(name) else None))
    return frames


def _at_frames(text: str) -> list[Frame]:
    """Node's and Go's `at fn (path:line)`, and a Rust backtrace's `at path:line:col` under the line naming its
    function (`axum::routing::Router<S>::route::{{closure}}`: `route`); the Rust toolchain's own files are none."""
    frames = []
    for match in _AT_FRAME.finditer(text):
        path = _module_path(unquote(match[4]))
        if _RUST_STDLIB.search(path):
            continue
        # `Object.saveCart [as onSave]`: a function named by the caller's object (redux's bound action creator is an
        # anonymous function in bindActionCreators.ts), and `new Client`, a class's constructor: its line says which
        function = None if match[1] or match[3] else match[2] or _rust_function(_line_above(text, match.start()))
        frames.append(Frame(path, int(match[5]), function))
    return frames


def without_generics(symbol: str) -> str:
    """A symbol less its generic or template arguments, nested ones too (`basic_json<std::map<K, V>>::at`)."""
    while (plain := re.sub(r"<[^<>]*>", "", symbol)) != symbol:
        symbol = plain
    return symbol


def _line_above(text: str, at: int) -> str:
    end = text.rfind("\n", 0, at)
    return "" if end < 0 else text[text.rfind("\n", 0, end) + 1 : end]


def _rust_function(line: str) -> str | None:
    """The function a Rust backtrace's numbered line names: its path's last part, less generics, closures and the
    symbol's hash (`<axum::Router as tower::Service<R>>::call::h5d2e...`: `call`)."""
    symbol = _RUST_SYMBOL.fullmatch(line)
    if symbol is None:
        return None
    name = without_generics(re.sub(r"::h[0-9a-f]{16}$|\{\{[^}]*\}\}", "", symbol[1] or symbol[2]))
    parts = [p for p in name.split("::") if p and not p.startswith("{{")]
    return parts[-1] if parts and _IDENTIFIER.fullmatch(parts[-1]) else None


def _dotnet_function(qualified: str, name: str) -> str:
    """A .NET frame's function: an async method's state machine (`Client.<SendAsync>d__12.MoveNext`) is `SendAsync`."""
    machine = re.search(r"<(\w+)>d__\d+\.$", qualified)
    return machine.group(1) if machine and name == "MoveNext" else name


def _php_frames(text: str) -> list[Frame]:
    """A PHP trace's frames, innermost first: where it was thrown (its message's `in path:line`, in the function its
    first frame calls), then each frame's place in the function the next frame calls (`{main}`'s in none); a chain's
    traces (`Next ...`, each numbered from #0) in their order, the first the root cause. `[internal function]`
    frames have no place but name what they call."""
    traces: list[list[re.Match[str]]] = []
    for match in _PHP_FRAME.finditer(text):
        if not traces or int(match[1]) != int(traces[-1][-1][1]) + 1:
            traces.append([])
        traces[-1].append(match)
    frames: list[Frame] = []
    previous_end = 0
    for trace in traces:
        called = [_php_function(m[4]) for m in trace]
        thrown = list(_PHP_THROWN.finditer(text, previous_end, trace[0].start()))  # its message, above its frames
        if thrown:  # (thrown by a built-in, `PDO->__construct`: at its call, the first frame's place, in its caller)
            at_call = (thrown[-1][1], thrown[-1][2]) == (trace[0][2], trace[0][3])
            frames.append(Frame(thrown[-1][1], int(thrown[-1][2]), called[1 if at_call and len(trace) > 1 else 0]))
        frames += [Frame(m[2], int(m[3]), called[i + 1] if i + 1 < len(trace) else None)
                   for i, m in enumerate(trace) if m[2]]
        previous_end = trace[-1].end()
    return frames


def _php_function(called: str) -> str | None:
    """`GuzzleHttp\\Client->send` and `GuzzleHttp\\Handler\\CurlFactory::finish` are `send` and `finish`; a closure
    (`GuzzleHttp\\Middleware::GuzzleHttp\\{closure}`) has no name."""
    name = re.split(r"::|->", called)[-1].rsplit("\\", 1)[-1]
    return name if _IDENTIFIER.fullmatch(name) else None


def _jvm_frames(text: str) -> list[Frame]:
    """A JVM trace's frames, innermost first: the deepest `Caused by:`'s (the root cause, where it was thrown), then
    those of each exception that wrapped it, outward."""
    causes = [m.start() for m in re.finditer(r"Caused by:", text)]
    found = [(-sum(c < m.start() for c in causes), m.start(), Frame(_jvm_path(m[1], m[3]), int(m[4]), m[2]))
             for m in _JVM_FRAME.finditer(text)]
    return [frame for _, _, frame in sorted(found, key=lambda f: (f[0], f[1]))]


def _jvm_path(qualified: str, file: str) -> str:
    """A JVM frame's file under its package's folders: `com.google.gson.Gson.` and `Gson.java` are
    `com/google/gson/Gson.java` (a nested class's `Outer$Inner.` is in its outer class's file)."""
    package = qualified.rstrip(".").split(".")[:-1]
    return "/".join([*package, file])


def file_name(path: str) -> str:
    """A path's last part, either slash (`pkg\\a.py`, `pkg/a.py`: `a.py`)."""
    return path.replace("\\", "/").rsplit("/", 1)[-1]


# Go's standard library under GOROOT (`/usr/local/go/src/net/http/server.go`): not a module's file (a GOPATH
# checkout's are under a host: `go/src/github.com/...`)
_GO_STDLIB = re.compile(r"(^|/)go/src/[a-z0-9_]+/[^@]*\.go$")
# the Rust toolchain's sources a backtrace names (`/rustc/90b35a62.../library/std/src/panicking.rs`)
_RUST_STDLIB = re.compile(r"(^|/)rustc/[0-9a-f]{7,40}/library/")


def _module_path(path: str) -> str:
    """A frame's path inside a Go module or a Rust crate at a version, as its own repository has it: a panic's frames
    name files in the module cache (`/home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/tree.go` is `tree.go`), a
    backtrace's in Cargo's (`.../index.crates.io-6f17d22bba15001f/axum-0.8.1/src/lib.rs` is `axum/src/lib.rs`)."""
    path = path.replace("\\", "/")
    if "@v" in path:
        return _MODULE_AT_VERSION.sub("", path)
    if "/registry/src/" in path or "/git/checkouts/" in path:  # (wherever CARGO_HOME is: /usr/local/cargo too)
        return _CRATE_AT_VERSION.sub(lambda m: f"{m[1]}/" if m[1] else "", path)
    return path


# JavaScript a TypeScript source compiles to, by suffix: a Node trace names the `.js` an installed package ships
# (`node_modules/zod/v4/core/parse.js`), the repository holds the `.ts` it came from
_COMPILED = {".js": (".ts", ".tsx"), ".mjs": (".mts", ".ts"), ".cjs": (".cts", ".ts")}


def sources_of(written: str) -> tuple[str, ...]:
    """The paths of the TypeScript sources a compiled `.js` path as written may come from (none for another path):
    its lines are not theirs, its function's name is."""
    stem, dot, suffix = written.rpartition(".")
    return tuple(f"{stem}{other}" for other in _COMPILED.get(f"{dot}{suffix}", ())) if dot else ()


# An installed copy's folder: what follows it is the package's own path, which a checkout of the package holds under
# its root (`node_modules/axios/lib/core/Axios.js` is `lib/core/Axios.js`, a gem's `gems/faraday-2.9.0/lib/...`,
# Composer's `vendor/guzzlehttp/guzzle/src/...`, Go's module cache `.../echo/v5@v5.3.1/context.go` and Cargo's
# `registry/src/index.../serde-1.0.2/src/de.rs` likewise); Python's `site-packages/flask/app.py` keeps the package's
# own folder (a checkout's `src/flask/app.py`)
_INSTALLED_AT = re.compile(r"(?:^|/)(?:(?:site|dist)-packages/(?=[^/]+/)|node_modules/(?:@[^/]+/)?[^/]+/"
                           r"|gems/[^/]+-\d[^/]*/|vendor/[^/]+/[^/]+/(?=.*\.php$)|[^/]+@v\d[^/]*/"
                           r"|registry/src/[^/]+/[^/]+-\d[^/]*/)")


def installed_part(written: str) -> str:
    """The part of a path as written that a checkout of its package holds, past an installed copy's folder (the whole
    path when it names none)."""
    found = [m.end() for m in _INSTALLED_AT.finditer(written.replace("\\", "/"))]
    return written[found[-1]:] if found else written


def files_named(written: str, paths: Collection[str]) -> list[str]:
    """The files of `paths` a path as written names (`paths_meet`), in order. (Not the one file of its name where an
    installed copy's path meets none: a package of a monorepo installed on its own, Composer's
    `vendor/league/flysystem-local/LocalFilesystemAdapter.php`, is the checkout's `src/Local/...`, but so would be
    another package's file of a name the repository has once, click's `testing.py` in a flask traceback.)"""
    return sorted(p for p in paths if paths_meet(written, p))


def paths_meet(written: str, path: str) -> bool:
    """A path as written names a file: the file's name and its folder agree (or just the name, when one side gives no
    folder). A traceback from an installed copy names the same module under another root (`site-packages/flask/app.py`
    is a checkout's `src/flask/app.py`), a Go panic's frame one in the module cache."""
    frame, own = _parts(written), _parts(path)
    matching = _shared(frame, own)
    return matching >= min(2, len(frame), len(own)) and matching > 0


def shared_tail(written: str, path: str) -> int:
    """How many of their last parts two paths share (`axum/src/lib.rs` and `axum-extra/src/lib.rs`: 2)."""
    return _shared(_parts(written), _parts(path))


def _parts(path: str) -> tuple[str, ...]:
    return PurePosixPath(path.replace("\\", "/")).parts


def _shared(frame: tuple[str, ...], own: tuple[str, ...]) -> int:
    matching = 0
    for a, b in zip(reversed(frame), reversed(own), strict=False):
        if a != b:
            break
        matching += 1
    return matching
