"""The code ranker's parts: a file as units with true spans, a request read as code, and one rule for a file's chunks,
a grep's lines and a repository's definitions."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from ctxsieve.ingest.coderank.chunks import context_unit, line_unit, rank_units
from ctxsieve.ingest.coderank.query import FILLED, MESSAGE_WORDS, lookup_names, read_code_query
from ctxsieve.ingest.coderank.ranker import SIGNALS, WEIGHTS, declares, factor_of, looked_up, place_factor, with_files
from ctxsieve.ingest.coderank.units import CodeUnit, module_name, units_of


def spans(path: str, text: str) -> dict[tuple[str, str], tuple[int, int]]:
    """A file's units by (name, kind): their first and last lines."""
    return {(u.name, u.kind): (u.start_line, u.end_line) for u in units_of(path, text)}


SOURCE = '''"""A module."""
import os

LIMIT = 3


class Ledger:
    """Entries."""

    rate = 2

    def total(self):
        return sum(self.entries)

    @property
    def empty(self):
        return not self.entries


def double(n):
    return 2 * n
'''


def test_a_file_as_units_with_qualified_names_and_true_spans() -> None:
    units = spans("pkg/ledger.py", SOURCE)
    assert units[("Ledger", "class")] == (7, 10)
    assert units[("Ledger.total", "method")] == (12, 13)
    assert units[("Ledger.empty", "method")] == (15, 17)
    assert units[("double", "function")] == (20, 21)
    assert units[("pkg.ledger", "module")] == (1, 4)
    lines = SOURCE.split("\n")
    for unit in units_of("pkg/ledger.py", SOURCE):
        assert unit.text == "\n".join(lines[unit.start_line - 1 : unit.end_line]), unit.name
    assert module_name("lib/ansible/vars/__init__.py") == "ansible.vars"
    java = "src/main/java/org/apache/commons/lang3/StringUtils.java"
    assert module_name(java) == "org.apache.commons.lang3.StringUtils"
    assert module_name("okhttp/src/main/kotlin/okhttp3/Cache.kt") == "okhttp3.Cache"
    assert module_name("include/fmt/format.h") == "fmt.format", "as code includes it (was include.fmt.format)"
    assert module_name("src/index.ts") == "src" and module_name("tests/test_core.py") == "tests.test_core"
    assert module_name("Src/Newtonsoft.Json/JsonConvert.cs") == "Newtonsoft.Json.JsonConvert", "was Src.Newtonsoft..."
    assert module_name("R/utils.R") == "utils" and module_name("r/utils.py") == "r.utils"


def test_a_request_names_files_modules_and_names() -> None:
    query = read_code_query("`Ledger.total` is wrong in lib/pkg/ledger.py (see pkg.ledger); also double(3)")
    assert {"Ledger", "total", "double"} <= query.names and ("Ledger", "total") in query.pairs
    assert query.names_file("lib/pkg/ledger.py") == 2 and query.names_file("src/pkg/ledger.py") == 2
    assert query.names_file("other.py") == 0 and query.names_file("") == 0 and query.names_file(".") == 0


def test_the_definition_of_a_named_function_ranks_first_among_its_grep_lines() -> None:
    lines = [("sympy/matrices/dense.py", "    return ones(rows, cols)", 10),
             ("sympy/matrices/tests/test_dense.py", "    assert ones(2, 2) == ones(2)", 40),
             ("sympy/matrices/dense.py", "def ones(kls, rows, cols=None, **kwargs):", 300)]
    units = [line_unit(path, text, number) for path, text, number in lines]
    lexical = np.array([2.0, 3.0, 1.5])
    scores = rank_units("Why does `ones(2)` give a non-square matrix?", units, lexical)
    assert int(np.argmax(scores)) == 2 and scores[1] < scores[0], "the definition first, the test's line last"


def test_a_chunk_without_a_path_is_ranked_too() -> None:
    unit = context_unit("", "class Ledger > def total", "def total(self): ...", 12, 13)
    assert (unit.name, unit.kind) == ("Ledger.total", "method")
    scores = rank_units("fix Ledger.total", [unit, context_unit("", "", "import os", 1, 2)], np.array([1.0, 1.0]),
                        one_file=True)
    assert scores[0] > scores[1]


def test_places_and_the_files_evidence() -> None:
    assert place_factor("lib/x.py") == 1.0 and place_factor("tests/test_x.py") < 1.0
    assert place_factor("vendor/x.py") < place_factor("docs/conf.py") <= 1.0
    assert place_factor("bench/grep.py") == place_factor("benchmarks/x.py") < 1.0, "a benchmark is not the code"
    assert place_factor("ingest/kinds/grep.py") == place_factor("lib/workbench/x.py") == 1.0
    assert place_factor("sandbox/PerfBenchmarkDotNet/Lz4Benchmark.cs") == place_factor("samples/app/main.go") < 1.0, \
        "msgpack's sandbox is no shipped code"
    assert place_factor("src/attr/__init__.pyi") == place_factor("src/style.module.css.d.ts") \
        == place_factor("website/examples-v8/Keyboard.tsx") < 1.0, "attrs's stubs above its asdict, rdp's examples"
    assert place_factor("src/examples_util.py") == place_factor("lib/demo.py") == place_factor("src/index.ts") == 1.0
    units = [line_unit("a.py", "x", 1), line_unit("a.py", "y", 2), line_unit("b.py", "z", 1)]
    boosted = with_files(np.array([1.0, 1.0, 1.2]), units)
    assert boosted[0] > boosted[2], "two good units of one file outrank one better unit alone"


def test_vectors_re_rank_the_best_units_and_only_when_each_has_one() -> None:
    """The dense signal re-orders the DENSE_TOP units the other signals put first (scaled from the worst of them to
    the best); a unit outside them is never lifted by it, and without every vector nothing changes."""
    from ctxsieve.ingest.coderank.ranker import DENSE_TOP, passage_of, rerank, score, signals
    from ctxsieve.ingest.coderank.units import CodeUnit

    units = [CodeUnit(f"pkg/m{i}.py", f"f{i}", "function", 1, 3, f"def f{i}():\n    return {i}\n")
             for i in range(DENSE_TOP + 5)]
    lexical = np.linspace(2.0, 1.0, len(units))  # f0 first by its words, the last five outside the top
    rows = signals(read_code_query("which function returns the number"), units, lexical)
    before = score(rows, units)
    asked: list[str] = []

    def cosines(of: object) -> np.ndarray:
        shown = list(of)  # type: ignore[call-overload]
        asked.extend(u.name for u in shown)
        return np.array([1.0 if u.name == "f7" else 0.1 for u in shown])

    after = rerank(rows.copy(), units, before.copy(), cosines)
    assert int(np.argmax(after)) == 7 and int(np.argmax(before)) == 0, "the vectors tell the top units apart"
    assert len(asked) == DENSE_TOP and "f44" not in asked, "only the best DENSE_TOP are re-ranked"
    assert np.array_equal(after[DENSE_TOP:], before[DENSE_TOP:])
    assert np.array_equal(rerank(rows.copy(), units, before.copy(), lambda _: None), before), "no vectors yet"
    assert "dense" in SIGNALS and passage_of(units[0]).startswith("pkg/m0.py f0\ndef f0():")


def test_only_shipped_code_has_vectors_and_a_test_among_the_best_counts_as_the_worst() -> None:
    """Tests, examples, docs and vendored code are re-ranked without vectors (none is made for them): a test unit
    among the best is never asked for one and ends below the shipped units the vectors favour."""
    from ctxsieve.ingest.coderank.ranker import has_vector, rerank, score, signals
    from ctxsieve.ingest.coderank.units import CodeUnit

    paths = ["pkg/core.py", "tests/test_core.py", "pkg/util.py", "docs/conf.py", "vendor/six.py", "examples/a.py"]
    units = [CodeUnit(path, f"f{i}", "function", 1, 3, f"def f{i}():\n    return {i}\n")
             for i, path in enumerate(paths)]
    assert [has_vector(u) for u in units] == [True, False, True, False, False, False]
    rows = signals(read_code_query("which function returns the number"), units, np.array([1.0, 3.0, 1.0, 1, 1, 1]))
    asked: list[str] = []

    def cosines(of: object) -> np.ndarray:
        shown = list(of)  # type: ignore[call-overload]
        asked.extend(u.path for u in shown)
        return np.array([0.9 if u.name == "f2" else 0.2 for u in shown])

    after = rerank(rows, units, score(rows, units), cosines)
    assert sorted(asked) == ["pkg/core.py", "pkg/util.py"]
    assert rows[1, SIGNALS.index("dense")] == 0.0 and rows[2, SIGNALS.index("dense")] == 1.0
    assert after[2] > after[0]


GO = """package gin

// Param returns the value of the URL param.
func (c *Context) Param(key string) string {
\treturn c.Params.ByName(key)
}

func (s Set[T]) Add() {}
"""
RUST = """impl<S> Router<S> where S: Clone {
    fn with_state(&self) {}
}

impl fmt::Display for PathError {
    fn fmt(&self) {}
}

#[cfg(test)]
mod tests {
    fn query_is_parsed() {
        let parsed = 1;
    }
}
"""
TYPESCRIPT = """export const normalizeError = (error: unknown): Error => {
\treturn error;
};

type HttpsOptions = {rejectUnauthorized: boolean};

class Request {
\tprivate readonly _onBodyError = (error: Error) => {
\t\tthrow error;
\t};
}
"""


def test_definitions_are_named_as_each_language_qualifies_them() -> None:
    """Go methods by their receiver's type, Rust impls by the type (not its generic parameter or the trait), JS/TS
    functions bound to a name (a const, a class field) and type aliases: each its own unit with its true lines."""
    def named(path: str, text: str) -> set[tuple[str, str, int, int]]:
        return {(u.name, u.kind, u.start_line, u.end_line) for u in units_of(path, text)}

    assert {("Context.Param", "method", 3, 6), ("Set.Add", "method", 8, 8)} <= named("gin/context.go", GO)
    rust = named("src/routing.rs", RUST)
    assert {("Router.with_state", "method", 2, 2), ("PathError.fmt", "method", 6, 6), ("Router", "impl", 1, 1)} <= rust
    assert ("tests.query_is_parsed", "function", 11, 13) in rust
    ts = named("source/core/index.ts", TYPESCRIPT)
    assert {("normalizeError", "function", 1, 3), ("HttpsOptions", "type", 5, 5),
            ("Request._onBodyError", "method", 8, 10)} <= ts


def test_a_test_module_inside_a_source_file_counts_as_tests() -> None:
    from ctxsieve.ingest.coderank.ranker import WEIGHTS, combine, has_vector

    units = [u for u in units_of("src/routing.rs", RUST) if u.name in ("Router.with_state", "tests.query_is_parsed")]
    scores = combine(np.ones((len(units), len(SIGNALS))), units)
    assert [u.name for u in units] == ["Router.with_state", "tests.query_is_parsed"]
    assert scores[1] == scores[0] * WEIGHTS.tests
    assert has_vector(units[0]) and not has_vector(units[1])


def test_a_parents_own_code_after_its_nested_definitions_is_a_unit_of_its_name() -> None:
    source = "def outer(x):\n    def inner():\n        return x\n\n    total = inner() + 1\n    return total\n"
    assert [(u.name, u.start_line, u.end_line) for u in units_of("m.py", source)] == [
        ("outer", 1, 1), ("outer.inner", 2, 3), ("outer", 5, 6)]
    closing = "function outer() {\n  function inner() {\n    return 1;\n  }\n}\n"
    assert [(u.name, u.start_line, u.end_line) for u in units_of("m.js", closing)] == [
        ("outer", 1, 1), ("outer.inner", 2, 4)], "a closing brace alone is no unit"


def test_a_block_comment_right_above_a_definition_is_part_of_it_whatever_its_lines_hold() -> None:
    source = ("class Options {\n\tmerge() {\n\t}\n\n\t/**\n\tCustom request function.\n\n\t@default http.request\n"
              "\t*/\n\tget request() {\n\t\treturn 1;\n\t}\n}\n")
    spans = {u.name: (u.start_line, u.end_line) for u in units_of("source/core/options.ts", source)}
    assert spans["Options.request"] == (5, 12) and spans["Options.merge"] == (2, 3)


def test_a_request_of_names_alone_finds_them_first_even_in_tests() -> None:
    """`TestRouteParamsByName` asked for alone is a look-up: the test of that name comes first, where the tests'
    discount put it below source that shares its words; a sentence or plain words are no look-up. A name the shipped
    code and a test both define: the shipped code's first."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.query import lookup_names

    assert lookup_names("TestRouteParamsByName") == {"TestRouteParamsByName"}
    assert lookup_names("`Context.Param` route_event()") == {"Context.Param", "route_event"}
    assert lookup_names("Router::with_state") == {"Router.with_state"}
    assert lookup_names("serve") == {"serve"}, "one word alone is a look-up"
    assert not lookup_names("where are route parameters parsed") and not lookup_names("route params")
    assert not lookup_names("a b c d_e") and not lookup_names("")
    memory = RepoMemory()
    source = "".join(f"// ByName{i} returns the route params value by name.\nfunc (ps Params) ByName{i}(name string) "
                     "string {\n\treturn ps.Get(name)\n}\n\n" for i in range(4))
    memory.put_file("params.go", "a", units_of("params.go", "package gin\n\n" + source))
    memory.put_file("params_test.go", "b", units_of("params_test.go", "package gin\n\nfunc TestRouteParamsByName("
                                                     "t *testing.T) {\n\tassert(t, 1)\n}\n"))

    def near(units: Sequence[CodeUnit]) -> np.ndarray:  # ready: the source's vectors near the request, a test none
        return np.linspace(1.0, 0.5, len(units))

    for query in ("TestRouteParamsByName", "`TestRouteParamsByName`"):
        for cosines in (None, near):
            found = memory.search(read_code_query(query), 3, cosines=cosines)
            assert found[0].unit.name == "TestRouteParamsByName", (query, found)
    for cosines in (None, near):  # no word of the request is the code's: nothing, with vectors or without
        assert memory.search(read_code_query("路由参数在哪里解析"), 3, cosines=cosines) == []
    # flask's `Flask` came after a test's two-line `class Flask(flask.Flask)`: both are looked up, the shipped one first
    engine = "package gin\n\n// Engine is the framework's instance.\ntype Engine struct {\n" + "".join(
        f"\tfield{i} int // the engine's setting {i}\n" for i in range(12)) + "}\n"
    memory.put_file("gin.go", "c", units_of("gin.go", engine))
    memory.put_file("gin_test.go", "d", units_of("gin_test.go", "package gin\n\ntype Engine struct{}\n"))
    found = memory.search(read_code_query("Engine"), 3)
    assert [h.unit.path for h in found[:2]] == ["gin.go", "gin_test.go"], found


MORE_LANGUAGES = {
    "sds.c": ("#define SDS_LLSTR_SIZE 21\nstatic int sdsll2str(char *s, long long value) {\n    return 0;\n}\n"
              "typedef struct {\n    int a;\n} parse_buffer;\n",
              {("sdsll2str", "function", 2, 4), ("parse_buffer", "struct", 5, 7)}),
    "format.h": ("namespace fmt {\ntemplate <typename T> class buffer {\n public:\n  void push_back(const T& v) {\n"
                 "    size_++;\n  }\n};\n}\n", {("fmt.buffer.push_back", "method", 4, 6)}),
    "os.cc": ("void file::close() {\n  fd_ = -1;\n}\nclass message {\n  explicit message(int code) {\n  }\n"
              "  bool operator==(const message& o) const {\n    return true;\n  }\n};\n",
              {("file.close", "method", 1, 3), ("message.message", "method", 5, 6),
               ("message.operator==", "method", 7, 9)}),
    "format_test.cc": ("/** Formats args to out. */\ntemplate <typename OutputIt, typename... T>\n"
                       "auto format_to(OutputIt out, T&&... args) -> OutputIt {\n  return out;\n}\n\n"
                       "TEST(format_test, big_print) {\n  EXPECT_EQ(1, 1);\n}\n",
                       {("format_to", "function", 1, 5), ("format_test.big_print", "function", 7, 9)}),
    "Buffer.kt": ("internal class Buffer {\n  fun size(): Long {\n    return 0\n  }\n  companion object {\n"
                  "    fun of() = Buffer()\n  }\n}\n",
                  {("Buffer", "class", 1, 1), ("Buffer.size", "method", 2, 4),
                   ("Buffer.Companion.of", "method", 6, 6)}),
    "builder.rb": ("class Rack::Builder\n  def call(env)\n    1\n  end\n  class << self\n    def call(env)\n      2\n"
                   "    end\n  end\nend\n",
                   {("Rack.Builder.call", "method", 2, 4), ("Rack.Builder.call", "method", 6, 8)}),
    "Id.cs": ("namespace N\n{\n    public struct Id\n    {\n#if !NET20\n        public bool Equals(Id other)\n"
              "        {\n            return true;\n        }\n#endif\n    }\n}\n", {("N.Id.Equals", "method", 6, 9)}),
    "Policy.java": ("enum Policy {\n  IDENTITY {\n    @Override\n    String translate(String n) {\n"
                    "      return n;\n    }\n  };\n  abstract String translate(String n);\n}\n",
                    {("Policy.IDENTITY.translate", "method", 3, 6), ("Policy.translate", "method", 8, 8)}),
    "TypeAdapters.java": ("class TypeAdapters {\n  /** Classes. */\n  public static final TypeAdapter<Class> CLASS =\n"
                          "      new TypeAdapter<Class>() {\n    @Override public Class read(JsonReader in) {\n"
                          "      return null;\n    }\n  }.nullSafe();\n}\n",
                          {("TypeAdapters.CLASS", "class", 2, 4), ("TypeAdapters.CLASS.read", "method", 5, 7)}),
    "format-impl.cc": ("FMT_BEGIN_NAMESPACE\nnamespace detail {\nvoid f() {\n  return;\n}\n}  // namespace detail\n"
                       "FMT_END_NAMESPACE\n", {("detail", "module", 2, 2), ("detail.f", "function", 3, 5)}),
    "export.h": ("FMT_BEGIN_EXPORT\ntemplate <typename T>\nclass buf : public base<T> {\n public:\n"
                 "  void grow() {}\n};\nFMT_END_EXPORT\n", {("buf", "class", 2, 4), ("buf.grow", "method", 5, 5)}),
    "error.cc": ("class FMT_API format_error : public std::runtime_error {\n public:\n  void grow() {}\n};\n",
                 {("format_error", "class", 1, 2), ("format_error.grow", "method", 3, 3)}),
    "visible.h": ("class FMT_SO_VISIBILITY(\"default\") format_error : public std::runtime_error {\n public:\n"
                  "  void grow() {}\n};\nclass FOOBAR {\n  int x;\n};\n",  # (a macro with arguments: no class)
                  {("format_error", "class", 1, 2), ("format_error.grow", "method", 3, 3), ("FOOBAR", "class", 5, 7)}),
    "args.h": ("\n".join([  # fmt's base.h and format.h, cut down: each of the macro and cast rules read for the
        # grammar moves a definition here (the class was lost, its methods functions of none, `detail.` dropped)
        "namespace detail {", "template <typename Context> class value {", " public:",
         "  constexpr FMT_INLINE value(int x FMT_BUILTIN) : int_value(x) {}", "",
         "  template <typename T, FMT_ENABLE_IF(is_code_unit<T>::value)>",
         "  constexpr FMT_INLINE value(T x FMT_BUILTIN) : char_value(x) {",
         "    static_assert(true, \"mixing character types is disallowed\");", "  }", "};",
         "template <typename T> class iterator_buffer {",
         "  static FMT_CONSTEXPR void grow(buffer<T>& buf, size_t) {",
         "    if (buf.size() == buffer_size) static_cast<iterator_buffer&>(buf).flush();", "  }",
         "  ~iterator_buffer() {", "    FMT_TRY { flush(); }", "    FMT_CATCH(...) {}", "  }", "};", "}",
         "FMT_PRAGMA_CLANG(diagnostic ignored \"-Wweak-vtables\")",
         "class FMT_SO_VISIBILITY(\"default\") format_error : public std::runtime_error {", " public:",
         "  using std::runtime_error::runtime_error;", "};",
         "template <typename Context> class basic_format_args {", "  union {", "  };",
         "  constexpr auto is_packed() const -> bool { return true; }",
         "  FMT_CONSTEXPR auto get(int id) const -> format_arg {", "    auto arg = format_arg();",
         "    if (unsigned(id) < unsigned(max_size())) arg = args_[id];", "    return arg;", "  }",
         "  auto get(basic_string_view<Char> name) const -> format_arg { return {}; }",
         "  operator unsigned() const { return 0; }", "};", ""]),
        {("basic_format_args", "class", 26, 28), ("basic_format_args.get", "method", 30, 34),
         ("basic_format_args.get", "method", 35, 35), ("basic_format_args.is_packed", "method", 29, 29),
         ("basic_format_args.operator unsigned", "method", 36, 36), ("detail.iterator_buffer", "class", 11, 11),
         ("detail.iterator_buffer.grow", "method", 12, 14),
         ("detail.iterator_buffer.~iterator_buffer", "method", 15, 18), ("detail.value", "class", 2, 3),
         ("detail.value.value", "method", 4, 4), ("detail.value.value", "method", 6, 9),
         ("format_error", "class", 22, 25)}),
    "gtest.h": ("\n".join([  # googletest's gtest.h, gtest-port.h and fmt's gtest-extra.h, cut down: a macro's call
        # over lines of its own, macros ending in `_` (`GTEST_LOCK_EXCLUDED_(mutex_)` was a method's name), specifier
        # macros over several lines, an attribute after an export macro; a `#define`'s body is no call to blank
        "#define GTEST_CONCAT_TOKEN_(foo, bar) GTEST_CONCAT_TOKEN_IMPL_(foo, bar)",
        "#define GTEST_STRINGIFY_(...) GTEST_STRINGIFY_HELPER_(__VA_ARGS__, )", "", "namespace proto2 {",
        "class MessageLite;", "}", "GTEST_DISABLE_MSC_WARNINGS_PUSH_(",
        "    4251 GTEST_MAYBE_5046_ /* class A needs to have dll-interface to be used by",
        "                              clients of class B */)", "", "namespace testing {",
        "class GTEST_API_ [[nodiscard]] RE {", " public:", "  RE(const RE& other) { Init(other.pattern()); }", "};",
        "class GTEST_API_ UnitTest {", " public:",
        "  const TestInfo* current_test_info() const GTEST_LOCK_EXCLUDED_(mutex_);",
        "  internal::ParameterizedTestSuiteRegistry& parameterized_test_registry()",
        "      GTEST_LOCK_EXCLUDED_(mutex_);", "  void PopGTestTrace() GTEST_LOCK_EXCLUDED_(mutex_) {",
        "    impl_->PopGTestTrace();", "  }", "};", "template <typename CharType>",
        "GTEST_ATTRIBUTE_NO_SANITIZE_MEMORY_ GTEST_ATTRIBUTE_NO_SANITIZE_ADDRESS_",
        "    GTEST_ATTRIBUTE_NO_SANITIZE_THREAD_ static CharFormat",
        "    PrintCharsAsStringTo(const CharType* begin, size_t len, ostream* os) {", "  return kAsIs;", "}",
        "template <typename T>", "class UniversalPrinter {", " public:", "  GTEST_DISABLE_MSC_WARNINGS_PUSH_(4180)",
        "  static void Print(const T& value, ::std::ostream* os) {", "    PrintTo(value, os);", "  }",
        "  GTEST_DISABLE_MSC_WARNINGS_POP_()", "};", "}  // namespace testing", "namespace testing {",
        "class MatchResultListener {", "};", "}  // namespace testing",
        "#define EXPECT_THROW_MSG(statement, expected_exception, expected_message) \\",
        "  FMT_TEST_THROW_(statement, expected_exception, expected_message,        \\",
        "                  GTEST_NONFATAL_FAILURE_)", "", "inline std::string system_error_message(int error_code,",
        "                                        const std::string& message) {", "  return message;", "}",
        "template <typename FunctionImpl>", "GTEST_INTERNAL_DEPRECATE_AND_INLINE(",
        "    \"Actions can now be implicitly constructed from callables. No need to \"",
        "    \"create wrapper objects using Invoke().\")",
        "typename std::decay<FunctionImpl>::type Invoke(FunctionImpl&& function_impl) {", "  return function_impl;",
        "}", "#define GTEST_API_ \\", "  GTEST_ATTRIBUTE_UNUSED_", "namespace testing {",
        "void Mock::AllowUninterestingCalls(uintptr_t mock_obj)", "    GTEST_LOCK_EXCLUDED_(internal::g_gmock_mutex) {",
        "  SetReactionOnUninterestingCalls(mock_obj, internal::kAllow);", "}", "}", ""]),
        {("testing.RE", "class", 12, 13), ("testing.RE.RE", "method", 14, 14),
         ("testing.UnitTest.PopGTestTrace", "method", 21, 23), ("testing.PrintCharsAsStringTo", "function", 25, 30),
         ("testing.UniversalPrinter.Print", "method", 35, 37), ("testing.MatchResultListener", "class", 42, 43),
         ("system_error_message", "function", 49, 52), ("Invoke", "function", 53, 59),
         ("testing.Mock.AllowUninterestingCalls", "method", 63, 66)}),
    "types.ts": ("\n".join([  # hono's, cut down (written without semicolons): a generic call signature on a line
        # of its own after a member lost the rest of the file to the grammar; a function under a cast was no function
        "export interface HandlerInterface<E extends Env = Env> {", "  (handler: H<E>): HonoBase<", "    E", "  >", "",
        "  // app.get(path, handler)", "  <", "    P extends string,", "  >(", "    path: P", "  ): HonoBase<P>", "}",
        "", "export type TypedResponse<T = unknown> = {", "  _data: T", "}",
        "export const ErrorBoundary: FC = (({ children }: any) => {", "  return children", "}) as any",
        "export const check = ((a: string) => a) satisfies Fn", "export const identity =", "  <T,>(x: T): T => x",
        "const asserted = <Fn>((x) => x)", "const sure = ((x: number) => x)!",
        "const commented = (/* the id */ (x: string) => x) as Fn", ""]),
        {("HandlerInterface", "interface", 1, 12), ("TypedResponse", "type", 14, 16),
         ("ErrorBoundary", "function", 17, 19), ("check", "function", 20, 20), ("identity", "function", 21, 22),
         ("asserted", "function", 23, 23), ("sure", "function", 24, 24), ("commented", "function", 25, 25)}),
    "retry.test.ts": ("describe('calculateRetryDelay', () => {\n  beforeEach(() => { x = 1; });\n"
                      "  it.each([1, 2])('returns 1.5 for %i', async (n) => {\n    expect(1).toBe(1);\n  });\n});\n",
                      {("calculateRetryDelay", "test", 1, 2),
                       ("calculateRetryDelay.returns_1_5_for_%i", "test", 3, 5)}),
    "bar_spec.rb": ("RSpec.describe Foo::Bar do\n  it 'adds' do\n    expect(1).to eq(1)\n  end\nend\n",
                    {("Foo::Bar", "test", 1, 1), ("Foo::Bar.adds", "test", 2, 4)}),
    "Op.kt": ("class EqOp(a: Expression<*>) : ComparisonOp(a, \"=\")\nobject Dual : Table(\"dual\")\n"
              "enum class ReferenceOption {\n  CASCADE,\n  SET_NULL\n}\ninterface ISql {\n  fun a(): Int\n}\n"
              "annotation class Marker\n",  # (a class on one line with no body was no definition; the kinds were class)
              {("EqOp", "class", 1, 1), ("Dual", "object", 2, 2), ("ReferenceOption", "enum", 3, 6),
               ("ISql", "interface", 7, 7), ("ISql.a", "method", 8, 8), ("Marker", "annotation", 10, 10)}),
    "Ext.kt": ("fun ColumnSet.targetTables(): List<Table> = emptyList()\nfun <T> List<T>?.second(): T = this[1]\n"
               "fun Table.Companion.make() = 1\nfun <T : Table> T.insert() = 1\nfun <T> T.also2(): T = this\n"
               "class Op {\n  fun QueryBuilder.register() = 1\n}\n",  # (named `targetTables` alone, a look-up of
               {("ColumnSet.targetTables", "function", 1, 1), ("List.second", "function", 2, 2),  # the trial's
                ("Table.make", "function", 3, 3), ("Table.insert", "function", 4, 4),  # missed; a member
                ("also2", "function", 5, 5), ("Op.register", "method", 7, 7)}),  # extension is its class's)
    "Chain.scala": ("object Chain {\n  def :+(a: Int): Int = a\n  def ?<(a: Int): Int = a\n}\n",
                    {("Chain.:+", "method", 2, 2), ("Chain.?<", "method", 3, 3)}),
    "stream.rb": ("class Stream\n  def <<(data)\n    data\n  end\n\n  def <=>(other)\n    0\n  end\nend\n"
                  "class FirstError < StandardError; end\n",  # (`<<` and `<=>` are no template's arguments)
                  {("Stream.<<", "method", 2, 4), ("Stream.<=>", "method", 6, 8), ("FirstError", "class", 10, 10)}),
    "Config.scala": ("object Priority {\n  case class Config(i: Int)\n}\n", {("Priority.Config", "class", 2, 2)}),
    "unit.rs": ("/// Ignores any value.\npub struct IgnoredAny;\nmod handler;\n", {("IgnoredAny", "struct", 1, 2)}),
    "Point.java": ("public record Point(int x, int y) {\n  public int sum() {\n    return x + y;\n  }\n}\n"
                   "@interface Marker {\n  String value() default \"\";\n}\n",  # (they were kinds class and interface)
                   {("Point", "record", 1, 1), ("Point.sum", "method", 2, 4), ("Marker", "annotation", 6, 6),
                    ("Marker.value", "method", 7, 7)}),
    "Person.cs": ("public record Person(string First)\n{\n    public string Full() => First;\n}\n",
                  {("Person", "record", 1, 2), ("Person.Full", "method", 3, 3)}),
    "Policy2.java": ("interface P {\n  P IDENTITY = new P() {\n    public String t(String n) {\n      return n;\n"
                     "    }\n  };\n}\n", {("P.IDENTITY.t", "method", 3, 5)}),
    "scan.h": ("\n".join([
        "template <typename Context> class basic_scan_arg {", " public:",
        "  FMT_CONSTEXPR basic_scan_arg() : type_(scan_type::none_type) {}",
        "  FMT_CONSTEXPR basic_scan_arg(int& value) : type_(scan_type::int_type), int_value(&value) {}",
        "  FMT_DEPRECATED operator basic_string_view<Char>() const { return str_; }", "};",
        "FMT_API const std::error_category& system_category() noexcept {", "  return category;", "}", ""]),
        {("basic_scan_arg.basic_scan_arg", "method", 3, 3), ("basic_scan_arg.basic_scan_arg", "method", 4, 4),
         ("basic_scan_arg.operator basic_string_view<Char>", "method", 5, 5), ("system_category", "function", 7, 9)}),
    "unity.c": ("UNITY_INTERNAL_PTR UnityNumToPtr(const int num)\n{\n    return 0;\n}\n",
                {("UnityNumToPtr", "function", 1, 4)}),
    "ByteString.kt": ("\n".join([
        "actual open class ByteString", "internal actual constructor(", "  internal actual val data: ByteArray,",
        ") : Comparable<ByteString> {", "  actual fun utf8(): String = \"\"", "",
        "  fun check(actual: Int, expected: Int) = actual == expected", "}", ""]),
        {("ByteString", "class", 1, 4), ("ByteString.utf8", "method", 5, 5), ("ByteString.check", "method", 7, 7)}),
    "Common.kt": ("\n".join([
        "expect open class ByteString", "// Trusted internal constructor doesn't clone data.",
        "internal constructor(data: ByteArray) : Comparable<ByteString> {", "  internal val data: ByteArray",
        "  fun hex(): String", "}", "", "expect class DeflaterSink", "/**", " * Shares a buffer with its caller.",
        " */", "internal constructor(", "  sink: BufferedSink,", ") : Sink {", "  fun flush()", "}", ""]),
        {("ByteString", "class", 1, 4), ("ByteString.hex", "method", 5, 5), ("DeflaterSink.flush", "method", 15, 15)}),
    "Parser.kt": ("\n".join([
        "class Parser {", "    private var pos = 0", "    internal constructor(", "        s: String", "    ) {}",
        "    fun next() = 1", "}", ""]),
        {("Parser.constructor", "constructor", 3, 5), ("Parser.next", "method", 6, 6)}),
    "Branches.cs": ("\n".join([
        "class R", "{", "#if NETSTANDARD", "    void OnlyNetStandard() {}", "#else", "    void OnlyFramework() {}",
        "#endif", "    void Broken() { int x = ; }", "}", ""]),
        {("R.OnlyNetStandard", "method", 4, 4), ("R.OnlyFramework", "method", 6, 6)}),
    "Reader.cs": ("\n".join([
        "namespace N", "{", "    class Reader", "    {", "        bool Has(object v)", "        {",
        "            if (v == null)", "            {", "                return false;", "            }", "#if HAVE_DB",
        "            else if (v == DBNull.Value)", "            {", "                return false;", "            }",
        "#endif", "            else", "            {", "                return true;", "            }", "        }", "",
        "        void After()", "        {", "        }", "    }", "}", ""]),
        {("N.Reader.Has", "method", 5, 21), ("N.Reader.After", "method", 23, 25)}),
    "Mode.cs": ("\n".join([
        "class Mode", "{", "#if NETFX", "    public Mode(int k)", "#else", "    public Mode(long k)", "#endif", "    {",
        "    }", "", "    void Next()", "    {", "    }", "}", ""]),
        {("Mode.Mode", "constructor", 4, 9), ("Mode.Next", "method", 11, 13)}),
    "Lock.swift": ("\n".join([
        "#if canImport(Darwin)", "final class UnfairLock {", "    func lock() {}", "}", "#elseif canImport(Foundation)",
        "extension NSLock: Lock {}", "#else", "#error(\"This platform needs a Lock-conforming type.\")", "#endif", "",
        "final class Protected<Value> {", "    #if canImport(Darwin)", "    private let lock = UnfairLock()",
        "    #elseif canImport(Foundation)", "    private let lock = NSLock()", "    #else",
        "    #error(\"This platform needs a Lock-conforming type.\")", "    #endif", "",
        "    private nonisolated(unsafe) var value: Value", "", "    func read() -> Value {", "        value", "    }",
        "}", ""]),
        {("UnfairLock.lock", "method", 3, 3), ("NSLock", "extension", 6, 6), ("Protected.lock", "property", 13, 13),
         ("Protected.lock", "property", 15, 15), ("Protected.value", "property", 20, 20),
         ("Protected.read", "method", 22, 24)}),
    "Injected.kt": ("\n".join([
        "class Foo", "    @Inject", "    @Named(\"x\")", "    constructor(", "        private val api: Api,", "    ) {",
        "    fun load() = 1", "}", ""]), {("Foo", "class", 1, 6), ("Foo.load", "method", 7, 7)}),
    "spec/history_spec.lua": ("\n".join([
        'describe("history", function()', "  local h", "  before_each(function()", "    h = 1", "  end)", "",
        '  it("appends a line", function()', "    assert.equals(1, h)", "  end)", "end)", ""]),
        {("history", "test", 1, 5), ("history.appends_a_line", "test", 7, 9)}),
    "history.lua": ("\n".join([
        "local load_extension = function(name)", "  return name", "end", "",
        "histories.get_simple_history = function()", "  return histories.new {", "    init = function(obj)",
        "      return obj", "    end,", "  }", "end", "", "local write_async = function(path, flag)",
        "  uv.fs_open(path, flag, 438, function(open_err, fd)", "    assert(not open_err, open_err)", "  end)", "end",
        ""]),
        {("load_extension", "function", 1, 3), ("histories.get_simple_history", "function", 5, 6),
         ("histories.get_simple_history.init", "function", 7, 9), ("write_async", "function", 13, 17)}),
    "Views.kt": ("class Views {\n  val listener = object : Listener {\n    override fun on(x: Int) {\n    }\n  }\n}\n",
                 {("Views.listener.on", "method", 3, 4)}),
    "test/bats.bats": ("#!/usr/bin/env bats\n\nsetup() {\n  load test_helper\n}\n\n"
                       "@test \"-h and --help print help\" {\n  run bats -h\n  [ $status -eq 0 ]\n}\n\n"
                       "@test 'a \"quoted\" title' {\n  run bats\n}\n",
                       {("setup", "function", 3, 5), ("-h_and_--help_print_help", "test", 7, 10),
                        ("a_\"quoted\"_title", "test", 12, 14)}),
    "lib/plug/conn.ex": ("defmodule Plug.Conn do\n  @moduledoc \"A connection.\"\n\n"
                         "  @doc \"\"\"\n  Assigns.\n  \"\"\"\n  @spec assign(t, atom, term) :: t\n"
                         "  def assign(conn, key, value) when is_atom(key) do\n"
                         "    conn\n  end\n\n  defp halted(conn), do: conn\n\n  defmodule NotSentError do\n"
                         "    def message(_), do: \"not sent\"\n  end\nend\n",
                         {("Plug.Conn", "module", 1, 2), ("Plug.Conn.assign", "function", 4, 10),
                          ("Plug.Conn.halted", "function", 12, 12),
                          ("Plug.Conn.NotSentError.message", "function", 15, 15)}),
    "lib/plug/conn/cookies.ex": ("defmodule Plug.Conn.Cookies do\n  defp month_name(1), do: \"Jan\"\n"
                                 "  defp month_name(2), do: \"Feb\"\n\n  defp month_name(3) do\n"
                                 "    \"Mar\"\n  end\nend\n",
                                 {("Plug.Conn.Cookies.month_name", "function", 2, 7)}),
    "test/plug/conn_test.exs": ("defmodule Plug.ConnTest do\n  describe \"assign/3\" do\n"
                                "    test \"assigns a key\", %{conn: conn} do\n      assert conn\n"
                                "    end\n  end\nend\n",
                                {("Plug.ConnTest.assign/3.assigns_a_key", "test", 3, 5)}),
    "src/views/Table.vue": ("<template>\n  <el-button @click=\"handleCreate\">Add</el-button>\n</template>\n\n"
                            "<script>\nimport { fetchList } from '@/api/article'\n\nexport default {\n  methods: {\n"
                            "    handleCreate() {\n      this.resetTemp()\n    },\n"
                            "    getSortClass: function(key) {\n      return key\n    }\n  }\n}\n</script>\n\n"
                            "<style scoped>\n.filter { padding: 0; }\n</style>\n",
                            {("handleCreate", "method", 10, 12), ("getSortClass", "function", 13, 15)}),
    "src/lib/Counter.svelte": ("<script lang=\"ts\">\n  let count = 0;\n  function increment(by: number) {\n"
                               "    count += by;\n  }\n</script>\n\n"
                               "<button on:click={() => increment(1)}>{count}</button>\n",
                               {("increment", "function", 3, 5)}),
    "lib/counter.dart": ("/// A counter.\nclass Counter {\n  @override\n  String toString() => 'c';\n\n"
                         "  factory Counter.make() {\n    return Counter();\n  }\n\n  int get value => 1;\n"
                         "  const Counter.value({required int v})\n      : _v = v;\n"
                         "  bool operator ==(Object other) => true;\n}\n\n"
                         "mixin Loud {\n  void shout() {}\n}\n\nvoid main() {\n  run();\n}\n",
                         {("Counter", "class", 1, 2), ("Counter.toString", "method", 3, 4),
                          ("Counter.make", "constructor", 6, 8), ("Counter.value", "method", 10, 10),
                          ("Counter.value", "constructor", 11, 12), ("Counter.operator==", "method", 13, 13),
                          ("Loud.shout", "method", 17, 17), ("main", "function", 20, 22)}),
    "test/counter_test.dart": ("void main() {\n  group('Counter', () {\n    test('adds one', () {\n"
                               "      expect(1, 1);\n    });\n    blocTest<C, int>(\n      'emits [1]',\n"
                               "      build: () => C(),\n    );\n  });\n}\n",
                               {("main.Counter.adds_one", "test", 3, 5), ("main.Counter.emits_[1]", "test", 6, 9)}),
    "R/filter.R": ("#' Keep rows.\n#' @export\nfilter <- function(.data, ...) {\n  lapply(1:3, function(i) i)\n}\n\n"
                   "obj$method = function() NULL\n\nCounter <- R6::R6Class(\"Counter\", public = list(\n"
                   "  add = function(n = 1) {\n    tryCatch(n, error = function(e) NULL)\n  }\n))\n",
                   {("filter", "function", 1, 5), ("obj.method", "function", 7, 7), ("add", "function", 10, 12)}),
    "t/mojo/promise.t": ("use Test::More;\n\nsubtest 'Resolved' => sub {\n  my $p = Mojo::Promise->new;\n"
                         "  is $p->$cb, 1, 'right';\n};\n\ndone_testing();\n", {("Resolved", "test", 3, 6)}),
    "lib/Mojo/UserAgent.pm": ("package Mojo::UserAgent;\nuse Mojo::Base -base;\n\nhas max_redirects => sub { 0 };\n"
                              "has 'name' => (is => 'ro');\nhas [qw(ca cert)];\n",
                              {("Mojo.UserAgent.max_redirects", "property", 4, 4),
                               ("Mojo.UserAgent.name", "property", 5, 5)}),
    "tests/testthat/test-order-by.R": ("test_that(\"with_order works\", {\n  expect_equal(1, 1)\n})\n",
                                       {("with_order_works", "test", 1, 3)}),
    "lib/Mojo/URL.pm": ("package Mojo::URL;\nuse Mojo::Base -base;\n\n# The path.\nsub path {\n  my $self = shift;\n"
                        "  return $self;\n}\n\npackage Mojo::URL::Query { sub pairs { 1 } }\n\nsub host { 2 }\n1;\n",
                        {("Mojo.URL.path", "function", 4, 8), ("Mojo.URL.Query.pairs", "function", 10, 10),
                         ("Mojo.URL.host", "function", 12, 12)}),
    "AFNetworking/AFSecurityPolicy.h": ("#import <Foundation/Foundation.h>\n\n"
                                        "typedef NS_ENUM(NSUInteger, AFSSLPinningMode) {\n"
                                        "    AFSSLPinningModeNone,\n};\n\n"
                                        "/// The policy.\n@interface AFSecurityPolicy : NSObject <NSCopying>\n"
                                        "@property (readonly, nonatomic) AFSSLPinningMode SSLPinningMode;\n"
                                        "@property (nonatomic, copy) void (^done)(NSError *error);\n"
                                        "@property (strong) NSURLSessionTaskMetrics *metrics AF_API_AVAILABLE(ios(10), "
                                        "macosx(10.12));\n- (instancetype)initWithTask:(NSURLSessionTask *)task "
                                        "NS_DESIGNATED_INITIALIZER;\n"
                                        "- (BOOL)evaluateServerTrust:(SecTrustRef)trust\n"
                                        "                  forDomain:(nullable NSString *)domain;\n@end\n",
                                        {("AFSSLPinningMode", "enum", 3, 5), ("AFSecurityPolicy", "class", 7, 8),
                                         ("AFSecurityPolicy.SSLPinningMode", "property", 9, 9),
                                         ("AFSecurityPolicy.done", "property", 10, 10),
                                         ("AFSecurityPolicy.metrics", "property", 11, 11),
                                         ("AFSecurityPolicy.initWithTask:", "method", 12, 12),
                                         ("AFSecurityPolicy.evaluateServerTrust:forDomain:", "method", 13, 14)}),
    "AFNetworking/AFSecurityPolicy.m": ("#import \"AFSecurityPolicy.h\"\n\n@implementation AFSecurityPolicy\n\n"
                                        "- (BOOL)evaluateServerTrust:(SecTrustRef)trust\n"
                                        "                  forDomain:(NSString *)domain\n{\n    return YES;\n}\n\n"
                                        "+ (instancetype)defaultPolicy API_AVAILABLE(ios(13.0)) {\n    return nil;\n}\n"
                                        "@end\n\n@implementation AFSecurityPolicy (Pins)\n- (void)pin { }\n@end\n\n"
                                        "static BOOL AFServerTrustIsValid(SecTrustRef serverTrust) {\n"
                                        "    return NO;\n}\n",
                                        {("AFSecurityPolicy", "class", 3, 3),
                                         ("AFSecurityPolicy.evaluateServerTrust:forDomain:", "method", 5, 9),
                                         ("AFSecurityPolicy.defaultPolicy", "method", 11, 13),
                                         ("AFSecurityPolicy", "extension", 16, 16),
                                         ("AFSecurityPolicy.pin", "method", 17, 17),
                                         ("AFServerTrustIsValid", "function", 20, 22)}),
    "src/Pester.Utility.ps1": ("<#\n.SYNOPSIS\n  Folds a block.\n#>\nfunction Fold-Block {\n    param(\n"
                               "        $OnBlock = {},\n        $OnTest = { }\n    )\n    process {\n"
                               "        foreach ($b in $Block) {\n            $Accumulator = & $OnBlock $b\n"
                               "        }\n    }\n}\n\nfunction Fold-Run {\n    if ($a) {}\n}\n\n"
                               "enum Mode { Default; All }\nclass Greeter {\n    [string]$Name\n"
                               "    [string] Greet([string]$who) {\n        return \"hi $who\"\n    }\n}\n\n"
                               "Describe \"Fold-Block\" {\n    It \"folds\" {\n        Mock Get-Thing {}\n"
                               "        Fold-Block | Should -Be 1\n    }\n}\n",
                               {("Fold-Block", "function", 1, 15), ("Fold-Run", "function", 17, 19),
                                ("Mode", "enum", 21, 21), ("Greeter.Greet", "method", 24, 26),
                                ("Fold-Block.folds", "test", 30, 33)}),
    "src/GitTabExpansion.ps1": ("function GitTabExpansionInternal($lastBlock) {\n"
                                "    switch -regex ($lastBlock) {\n"
                                "        \"^flow (?<cmd>$($flow.Keys -join '|'))\\s+(?<op>\\S*)$\" {\n"
                                "            gitCmdOperations $flow $matches['cmd']\n        }\n"
                                "        \"^push${ignoreGitParams}\\s+(?<remote>\\S*)$\"\n        {\n"
                                "            gitRemotes $matches['remote']\n        }\n    }\n}\n\n"
                                "function WriteTabExpLog([string] $Message) {\n    $Message\n}\n",
                                {("GitTabExpansionInternal", "function", 1, 11),
                                 ("WriteTabExpLog", "function", 13, 15)}),
    "modules/bucket/main.tf": ("# The log bucket.\nresource \"aws_s3_bucket\" \"logs\" {\n  bucket = var.name\n"
                               "  lifecycle {\n    prevent_destroy = true\n  }\n}\n\nvariable \"name\" {\n"
                               "  type = string\n}\n\nmodule \"vpc\" {\n  source = \"./vpc\"\n}\n\n"
                               "data \"aws_iam_policy_document\" \"assume\" {\n  statement {\n  }\n}\n\n"
                               "locals {\n  a = 1\n}\n",
                               {("aws_s3_bucket.logs", "resource", 1, 7), ("var.name", "variable", 9, 11),
                                ("module.vpc", "module_call", 13, 15),
                                ("data.aws_iam_policy_document.assume", "data", 17, 20), ("local", "block", 22, 22),
                                ("local.a", "local", 23, 23)}),
    "src/ShellCheck/Checker.hs": ("module ShellCheck.Checker (check) where\n\nimport Data.List\n\n"
                                  "{- | Checks a script.\n   Every rule. -}\ncheck :: String -> [Int]\n"
                                  "check \"\" = []\ncheck src = go src\n  where\n    go x = [length x]\n\n"
                                  "-- | A comment.\ndata Comment = Comment { code :: Int }\n\n"
                                  "class Named a where\n  nameOf :: a -> String\n\n"
                                  "instance Named Comment where\n  nameOf = show . code\n\n"
                                  "(<+>) :: Int -> Int -> Int\na <+> b = a + b\n\nprop_checks = check \"\" == []\n",
                                  {("check", "function", 5, 11), ("Comment", "type", 13, 14),
                                   ("Named.nameOf", "method", 17, 17), ("Comment", "instance", 19, 19),
                                   ("Comment.nameOf", "method", 20, 20), ("<+>", "function", 22, 23),
                                   ("prop_checks", "test", 25, 25)}),
    "src/Greeters.jl": ("module Greeters\n\n\"\"\"\n    greet(g, who)\n\nGreets.\n\"\"\"\n"
                        "function greet(g::Greeter, who::String)::String where T\n    x = 1\n    return who\nend\n\n"
                        "mutable struct Counter{T} <: Animal\n    n::T\nend\n\nsquare(x) = x^2\nlimit = 10\n\n"
                        "Base.show(io::IO, g::Greeter) = print(io, g.name)\n\n"
                        "@testset \"greet\" begin\n    @test greet(1, \"b\") == \"b\"\nend\n\n"
                        "(c::Counter)(x) = c.n + x\n\nmacro shown(T)\n    quote\n"
                        "        function Base.show(io::IO, x::$T)\n        end\n    end\nend\n\nend\n",
                        {("Greeters", "module", 1, 1), ("Greeters.greet", "function", 3, 11),
                         ("Greeters.Counter", "struct", 13, 15), ("Greeters.square", "function", 17, 17),
                         ("Greeters.Base.show", "function", 20, 20), ("Greeters.greet", "test", 22, 24),
                         ("Greeters.Counter", "method", 26, 26), ("Greeters.shown", "macro", 28, 33)}),
    "src/greeter.zig": ("const std = @import(\"std\");\n\n/// A greeter.\npub const Greeter = struct {\n"
                        "    name: []const u8,\n\n    /// Greets.\n    pub fn greet(self: Greeter) void {\n"
                        "        _ = self;\n    }\n};\n\npub const Color = enum { red, green };\n\n"
                        "fn helper(x: i32) i32 {\n    return x + 1;\n}\n\ntest \"greet says hi\" {\n"
                        "    _ = helper(1);\n}\n",
                        {("Greeter", "struct", 3, 5), ("Greeter.greet", "method", 7, 10), ("Color", "enum", 13, 13),
                         ("helper", "function", 15, 17), ("greet_says_hi", "test", 19, 21)}),
    "src/vsr/replica.zig": ("pub fn ReplicaType(comptime T: type) type {\n    return struct {\n"
                            "        const Replica = @This();\n\n        count: u32,\n\n"
                            "        pub fn on_request(self: *Replica, x: T) void {\n            self.count += x;\n"
                            "        }\n    };\n}\n\npub fn ListType(comptime T: type) type {\n    return struct {\n"
                            "        const Self = @This();\n\n        pub fn append(self: *Self, x: T) void {\n"
                            "            _ = x;\n        }\n    };\n}\n",
                            {("ReplicaType", "function", 1, 1), ("ReplicaType.Replica", "struct", 2, 5),
                             ("ReplicaType.Replica.on_request", "method", 7, 9),
                             ("ListType.append", "function", 17, 19)}),
}


def test_definitions_in_more_languages_are_named_by_their_declarators_and_scopes() -> None:
    """C functions by their declarator (not the return type or a macro), a typedef'd struct by its alias, a C++ header
    read as C++, C++ scopes and operators (a namespace or a class after a macro, a declaration after specifier
    macros, a function returning a reference), a C macro type before a function's name, a template with its
    `template <...>` line and comment, gtest's TEST(a, b), Kotlin's names (no `name` field; a Multiplatform class
    with its constructor on the next line, after comments, a KDoc or annotation lines; a secondary constructor with a
    modifier), a Java or Kotlin field holding an anonymous class, Ruby's `::` and `class << self`, C# namespaces and
    structs, Java enum constants' bodies, a test framework's tests (busted's in Lua too), C# and Swift code under
    `#if` (an `else if` after one, a header written once per branch, an `#else` branch in a file with an error
    elsewhere, `#error`; Swift's `nonisolated(unsafe)`), Lua functions bound to a name or a table's field (a callback
    given to a call is part of its caller), bats's `@test "title" {` (no bash the grammar reads), Elixir's calls that
    define (`defmodule`, `def ... when`, a one-line `defp`, their `@doc` and `@spec` above; ExUnit's tests), Perl's
    subs by their package (`package X;` or `package X {...}`), a Vue or Svelte component's `<script>`, Dart's
    functions (a signature and the body beside it; a constructor with no body, an operator; `test`, `group`,
    `blocTest`), an Elixir function's clauses as one, Perl's Test::More subtests and `has` attributes, R's testthat
    tests, Objective-C's classes, categories, properties and methods named by their selectors (in a `.h` too, past
    availability macros and NS_ENUM), PowerShell's functions (their `<# #>` help above, past empty script blocks
    given as values and switch clauses written as strings with spaces, which the grammar cannot read), classes, methods
    and Pester tests, Terraform's blocks named as
    Terraform refers to them (a resource's nested blocks part of it), Haskell's functions (a type signature and its
    equations as one, their `{- -}` or `-- |` docs above, `where` bindings part of them), types, classes and
    instances, Julia's functions (the one-line form too, with the docstring above), structs, macros and testsets,
    Zig's functions, types bound to a name or naming themselves (`const Replica = @This();` in a type function's
    `return struct {`; `Self` names none) and tests, a JS object's property holding a function outside any
    function (Vue's `methods: { getSortClass: function(key) {...} }`), R's functions bound to a
    name (an anonymous one given to a call, a handler too, is its caller's); a `#` directive above a definition is not
    its comment, and the header line is the one naming it (not `@Override`)."""
    for path, (text, expected) in MORE_LANGUAGES.items():
        units = units_of(path, text)
        assert expected <= {(u.name, u.kind, u.start_line, u.end_line) for u in units}, (path, units)
        lines = text.split("\n")
        assert all(u.text == "\n".join(lines[u.start_line - 1 : u.end_line]) for u in units), path
    forward = units_of("Post.h", "@class User;\n\n@interface Post : NSObject\n@end\n")  # (declared, defined elsewhere)
    assert [u.name for u in forward if u.kind != "module"] == ["Post"], forward
    assert all(u.kind == "module" for u in units_of("lib.rs", "mod handler;\npub mod other;\n"))
    php = units_of("app/Http/UserController.php", "<?php\n\nnamespace App\\Http;\n\nclass UserController\n{\n}\n")
    assert [(u.kind, u.start_line) for u in php] == [("module", 1), ("class", 5)], php  # (a file's namespace line)
    assert all(u.kind == "module" and u.start_line == 1 for u in units_of(  # (a module's name, no definition)
        "src/Parser.hs", "module Parser where\n\nimport qualified Data.Map as M\nimport Data.Text (Text)\n"))
    promise = units_of("t/mojo/promise.t", MORE_LANGUAGES["t/mojo/promise.t"][0])
    assert not any("$cb" in u.name for u in promise), "a Perl method called by a variable defines none"
    cookies = units_of("lib/plug/conn/cookies.ex", MORE_LANGUAGES["lib/plug/conn/cookies.ex"][0])
    assert [u.name for u in cookies].count("Plug.Conn.Cookies.month_name") == 1, "an Elixir function's clauses: one"
    replica = units_of("src/vsr/replica.zig", MORE_LANGUAGES["src/vsr/replica.zig"][0])
    assert [u.name for u in replica if looked_up(u, frozenset({"Replica.on_request"}))] == \
        ["ReplicaType.Replica.on_request"], "a Zig type is looked up by the name its code calls it"
    r = units_of("R/filter.R", MORE_LANGUAGES["R/filter.R"][0])
    assert not {"function", "error"} & {u.name.rsplit(".", 1)[-1] for u in r}, "an anonymous R function is none"
    lua = units_of("history.lua", MORE_LANGUAGES["history.lua"][0])
    assert [u.name for u in lua if u.start_line <= 14 <= u.end_line] == ["write_async"], "a callback is its caller's"
    for path in ("ByteString.kt", "gtest.h"):  # (a checkout with Windows line ends: the same definitions)
        crlf = MORE_LANGUAGES[path][0].replace("\n", "\r\n")
        assert MORE_LANGUAGES[path][1] <= {(u.name, u.kind, u.start_line, u.end_line) for u in units_of(path, crlf)}
    translate = next(u for u in units_of("Policy.java", MORE_LANGUAGES["Policy.java"][0])
                     if u.name == "Policy.IDENTITY.translate")
    assert translate.signature == "String translate(String n) {"
    objc = units_of("AFNetworking/AFSecurityPolicy.m", MORE_LANGUAGES["AFNetworking/AFSecurityPolicy.m"][0])
    assert not any(u.text.strip() == "@end" for u in objc), "an `@end` alone is no code of its class"
    assert [u.leaf for u in objc if u.kind == "method"] == ["evaluateServerTrust", "defaultPolicy", "pin"]
    matlab = "function y = area(r)\n  % the area\n  y = pi * r^2;\nend\n\nfunction z = twice(x)\n  z = 2 * x;\nend\n"
    assert [u.kind for u in units_of("area.m", matlab)] == ["module"], "MATLAB's .m is no Objective-C (nor JS)"
    julia = units_of("src/Greeters.jl", MORE_LANGUAGES["src/Greeters.jl"][0])
    assert not any(u.name.endswith(("limit", ".x")) for u in julia), "a value bound, or a function's local, is none"
    assert [u.name for u in julia].count("Greeters.Base.show") == 1, "a function a macro quotes is none"
    haskell = units_of("src/ShellCheck/Checker.hs", MORE_LANGUAGES["src/ShellCheck/Checker.hs"][0])
    assert [u.name for u in haskell].count("check") == 1 and not any(u.name.endswith("go") for u in haskell)
    terraform = units_of("modules/bucket/main.tf", MORE_LANGUAGES["modules/bucket/main.tf"][0])
    assert len([u for u in terraform if u.kind != "module"]) == 6, "a block in a block is no definition of its own"
    directive = [u for u in units_of("Id.cs", MORE_LANGUAGES["Id.cs"][0]) if "#endif" in u.text]
    assert not any(u.start_line <= 5 <= u.end_line and u.name == "N.Id.Equals" for u in directive)


def test_a_powershell_switch_clause_written_as_a_string_is_read_by_the_grammar() -> None:
    """The grammar reads a switch clause's double-quoted string holding a space or an anchored group as an error; in
    posh-git's GitTabExpansion.ps1 that error took the rest of the file, three functions with it. The grammar is
    given the strings as plain words, the units their true text; a line of a string cut short by a subexpression's
    own quotes is left as it is."""
    from tree_sitter_language_pack import get_parser

    from ctxsieve.ingest.kinds.code import _powershell_for_grammar, _tree

    path = "src/GitTabExpansion.ps1"
    source = MORE_LANGUAGES[path][0].encode()
    assert not _tree(get_parser("powershell"), source, "powershell").root_node.has_error
    assert get_parser("powershell").parse(source).root_node.has_error, "fixture: the grammar alone errs"
    cut_short = b'    "    Filter: $(if (-not $b.IsDefault) { "{ $($b.Filter) }" } else { \'$null\' })`n"\n'
    assert _powershell_for_grammar(cut_short) == cut_short


def test_a_test_frameworks_calls_are_tests_and_other_calls_in_them_are_not() -> None:
    """Jest/Playwright's `it(title, fn, timeout)` and `test.describe.only`, RSpec's `describe :symbol`, Go's
    `t.Run("title", func...)` are tests; a call on an object that happens to share a test call's name (`context.on`,
    `suite.add`, `self.test`) is not."""
    page = ("describe('page', () => {\n  it('loads', async ({ page, context }) => {\n"
            "    context.on('request', (r) => {\n      log(r);\n    });\n  }, 30000);\n"
            "  test.describe.only('nested', () => {\n    suite.add('x', () => {\n      y();\n    });\n  });\n});\n")
    assert {(u.name, u.start_line, u.end_line) for u in units_of("e2e/page.spec.ts", page) if u.kind == "test"} == {
        ("page", 1, 1), ("page.loads", 2, 6), ("page.nested", 7, 11)}
    go = ('package x\n\nfunc TestParse(t *testing.T) {\n\tt.Run("empty input", func(t *testing.T) {\n\t\tcheck("")\n'
          '\t})\n\tfor _, tc := range cases {\n\t\tt.Run(tc.name, func(t *testing.T) {\n\t\t\tcheck(tc)\n\t\t})\n'
          '\t}\n}\n')
    assert {(u.name, u.start_line, u.end_line) for u in units_of("parse_test.go", go) if u.kind == "test"} == {
        ("TestParse.empty_input", 4, 6)}, "a subtest with a literal title"
    spec = "describe :fetch do\n  it 'gets __init__' do\n    self.test 'x' do\n      1\n    end\n  end\nend\n"
    assert {(u.name, u.start_line, u.end_line) for u in units_of("spec/fetch_spec.rb", spec) if u.kind == "test"} == {
        ("fetch", 1, 1), ("fetch.gets___init__", 2, 6)}


def test_a_look_up_puts_every_definition_it_names_first_and_an_impl_block_names_none() -> None:
    """Names alone come back first, each as written (case too: `serve` before `Serve`'s impl blocks); a Rust `impl`
    block is kind `impl`, never the type's definition, which is its `struct`; nor is a test titled by a name."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    impl = "impl<M, S> Service<{}> for Serve<M, S> where M: Clone {{\n    fn call(&self) {{ serve() }}\n}}\n\n"
    serve = "pub fn serve(listener: Listener) -> Serve {\n    todo!()\n}\n"
    struct = "pub struct Serve<M, S> {\n    make: M,\n    _s: S,\n}\n\n"
    memory.put_file("serve.rs", "a", units_of("serve.rs", struct + "".join(impl.format(i) for i in range(6)) + serve))
    memory.put_file("context.go", "b", units_of("context.go", GO))
    engine = ("package gin\n\ntype Engine struct {\n\tRouterGroup\n}\n\nfunc (engine *Engine) addRoute(method, path "
              "string) {\n\tcleanPath(path)\n}\n\nfunc cleanPath(p string) string {\n\treturn p\n}\n")
    memory.put_file("gin.go", "c", units_of("gin.go", engine))
    assert memory.search(read_code_query("serve"), 3)[0].unit.name == "serve"
    assert memory.search(read_code_query("Serve"), 3)[0].unit.kind == "struct", "the struct, not an impl block"
    first = [h.unit.name for h in memory.search(read_code_query("Context.Param Engine.addRoute cleanPath"), 5)[:3]]
    assert sorted(first) == ["Context.Param", "Engine.addRoute", "cleanPath"], first
    memory.put_file("retry.ts", "d", units_of("retry.ts", "export function calculateRetryDelay() {\n  return 0;\n}\n"))
    memory.put_file("test/retry.test.ts", "e", units_of("test/retry.test.ts", MORE_LANGUAGES["retry.test.ts"][0]))
    assert not memory.defines("calculateRetryDelay", "test/*"), "a test group titled by a name does not define it"
    assert memory.search(read_code_query("calculateRetryDelay"), 3)[0].unit.path == "retry.ts"
    units, rows = memory.candidates(read_code_query("calculateRetryDelay"))
    defined = next(i for i, u in enumerate(units) if u.path == "retry.ts" and u.kind == "function")
    assert rows[defined, 1] == 1.0, "the only definition of its name: a test titled by it makes it no less rare"


def test_tests_are_known_by_each_languages_conventions() -> None:
    tests = ["src/test/java/com/google/gson/JsonReaderTest.java", "Src/Newtonsoft.Json.Tests/Linq/JTokenTests.cs",
             "spec/builder_spec.rb", "src/components/__tests__/Popover.jsx", "okio/src/jvmTest/BufferTest.kt",
             "gin/context_test.go", "tests/test_units.py", "source/core/index.test.ts",
             "sinatra-contrib/spec/okjson.rb"]
    shipped = ["gson/src/main/java/com/google/gson/JsonReader.java", "Src/Newtonsoft.Json/Linq/JToken.cs",
               "lib/sinatra/base.rb", "src/latest.java", "src/Contest.cs", "lib/attestation.py",
               "pkg/spec/openapi.go"]  # a Go package named spec is an API's, not Ruby's tests
    assert all(place_factor(p) == WEIGHTS.tests for p in tests), [p for p in tests if place_factor(p) == 1.0]
    assert all(place_factor(p) == 1.0 for p in shipped), [p for p in shipped if place_factor(p) != 1.0]


def test_a_search_that_asks_for_tests_gets_tests_first_and_one_that_does_not_the_code() -> None:
    """Tests count for less than the code they exercise, but a search asking for them ("tests for", "where is it
    tested", 测试) is answered with them: before, every test ranked below every line of the code it exercises.
    A name that holds the word (`TestMode`) and an issue that speaks of a test ask for nothing of the kind."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    code = ("def clean_path(path):\n    \"\"\"Clean a route path: collapse repeated slashes.\"\"\"\n"
            "    return '/' + '/'.join(p for p in path.split('/') if p)\n")
    test = ("from router import clean_path\n\n\ndef test_clean_path_collapses_slashes():\n"
            "    assert clean_path('//a//b') == '/a/b'\n")
    memory.put_file("router.py", "a", units_of("router.py", code))
    memory.put_file("tests/test_router.py", "b", units_of("tests/test_router.py", test))
    for asked in ("tests for clean path", "where is path cleaning tested", "clean_path 的测试", "unit test clean path"):
        assert read_code_query(asked).tests, asked
        assert memory.search(read_code_query(asked), 3)[0].unit.path == "tests/test_router.py", asked
    issue = ("clean path keeps a trailing slash. Steps: call clean path on a route that ends in a slash and the "
             "result keeps it, where the docs say it is dropped; a test shows it, and the router then matches twice.")
    assert not read_code_query("Faraday::Adapter::Test::Stubs::NotFound: no stubbed request for get").tests, \
        "a qualified name's part (a trial's error put specs first)"
    for plain in ("clean path", "how are repeated slashes collapsed in a route path", "TestMode clean path", issue):
        assert not read_code_query(plain).tests, plain
        assert memory.search(read_code_query(plain), 3)[0].unit.path == "router.py", plain
    for tool in ("how does the test client follow redirects", "testing client cookies", "test server startup"):
        assert not read_code_query(tool).tests, "a tool for tests the code ships (werkzeug's test client)"


def test_an_error_line_as_java_ruby_and_php_print_it_is_read_for_its_message() -> None:
    """A trial pasted errors as the JVM, Ruby and PHP print them: `java.lang.IllegalArgumentException: Unable to create
    converter for class com.example.User` (the code: `"Unable to create converter for %s"`), Ruby's
    `Faraday::ConnectionFailed: ...` and PHP's `PHP Fatal error:  Uncaught RuntimeException: ...`. None was read as an
    error's line (a dotted value, `::` and `\\` in the name, PHP's prefix), and the words before the class's name were
    a bag: the code that raises it was not in the first ten (with the bare message, first)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    for pasted, phrase in (
            ("java.lang.IllegalArgumentException: Unable to create converter for class com.example.User",
             "unable to create converter for class"),
            ("Faraday::ConnectionFailed: unknown http method: fetch", "unknown http method: fetch"),
            ("PHP Fatal error:  Uncaught RuntimeException: SSL CA bundle not found: /etc/ssl/certs/ca.pem",
             "ssl ca bundle not found"),
            ("Fatal error: Uncaught GuzzleHttp\\Exception\\ConnectException: cURL error 7 failed to connect",
             "curl error * failed to connect"),
            ('Psr\\Log\\InvalidArgumentException: Level "verbose" is not defined, use one of: DEBUG',
             "level * is not defined, use one of: debug")):
        assert read_code_query(pasted).phrases == (phrase,), pasted
    assert not read_code_query("Notice: the session cookie is not refreshed on each request").phrases, "prose"
    assert not read_code_query("\\r\\n").lookup and not read_code_query("calling res.json on line 12").frames
    assert read_code_query("Unable to create converter for class com.example.User").said == (
        "unable to create converter for class",), "pasted alone: a dotted value parts the runs"
    memory = RepoMemory()
    memory.put_file("retrofit/HttpServiceMethod.java", "a", units_of("retrofit/HttpServiceMethod.java", (
        "final class HttpServiceMethod {\n  static Converter createResponseConverter(Retrofit retrofit, Type type) {\n"
        "    try {\n      return retrofit.responseBodyConverter(type);\n    } catch (RuntimeException e) {\n"
        "      throw methodError(e, \"Unable to create converter for %s\", type);\n    }\n  }\n}\n")))
    memory.put_file("jaxb/JaxbConverterFactory.java", "b", units_of("jaxb/JaxbConverterFactory.java", (
        "final class JaxbConverterFactory {\n  JAXBContext contextForType(Class<?> type) {\n    try {\n"
        "      return JAXBContext.newInstance(type);\n    } catch (JAXBException e) {\n"
        "      throw new IllegalArgumentException(e);\n    }\n  }\n}\n")))
    hits = memory.search(read_code_query("java.lang.IllegalArgumentException: Unable to create converter for class "
                                         "com.example.User"), 2)
    assert hits[0].unit.name == "HttpServiceMethod.createResponseConverter", hits


def test_a_ruby_constant_bound_to_a_class_a_call_makes_is_a_class() -> None:
    """A trial over faraday: `Env = Options.new(:method, ...) do ... end` and `Stub = Struct.new(...) do` were no
    definitions, their methods named as the enclosing module's (`Faraday.success?`), so `Faraday::Env` was said to be
    defined nowhere and `Stub#matches?` found `Stubs#matches?` first. A block that only runs code makes no class."""
    source = ("module Faraday\n  Env = Options.new(:method, :body) do\n    def success?\n      true\n    end\n  end\n"
              "  Stub = Struct.new(:host, :path) do\n    def matches?(env)\n      1\n    end\n  end\n"
              "  NotFound = Class.new(StandardError)\n  CONFIG = build(1) do\n    puts 1\n  end\nend\n")
    assert [(u.kind, u.name, u.start_line) for u in units_of("lib/faraday/env.rb", source) if u.kind != "module"] == [
        ("class", "Faraday.Env", 2), ("method", "Faraday.Env.success?", 3), ("class", "Faraday.Stub", 7),
        ("method", "Faraday.Stub.matches?", 8), ("class", "Faraday.NotFound", 12)]


def test_a_look_up_finds_names_as_each_language_writes_them() -> None:
    """Found by a user trial, each a look-up that missed or an answer that said a name was not defined when it was:
    Ruby's `route!` and `class << self` methods (named `Base.self.route`), a TS private method `#delay` looked up as
    `delay`, and a Rust path as a backtrace writes it (`axum::routing::Router::merge`)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    ruby = ("module Sinatra\n  class Base\n    class << self\n      def route(verb, path)\n        1\n      end\n"
            "    end\n\n    def route!(base = settings)\n      2\n    end\n\n    def routes\n      3\n    end\n"
            "  end\nend\n")
    memory.put_file("lib/base.rb", "a", units_of("lib/base.rb", ruby))
    assert {(u.name, u.within) for u in units_of("lib/base.rb", ruby) if u.kind == "method"} == {
        ("Sinatra.Base.route", "class << self"), ("Sinatra.Base.route!", ""), ("Sinatra.Base.routes", "")}, \
        "a singleton class's are the class's own, said to be its (sidekiq's class and instance `Client.push`)"
    assert memory.search(read_code_query("Sinatra::Base#route"), 1)[0].unit.within == "class << self", "the only one"
    memory.put_file("lib/client.rb", "z", units_of("lib/client.rb", (
        "class Client\n  class << self\n    def push(item)\n      new.push(item)\n    end\n  end\n\n"
        "  def push(item)\n    raw_push(item)\n  end\nend\n")))
    assert [h.unit.within for h in memory.search(read_code_query("Client#push"), 2)] == ["", "class << self"], \
        "`#`: the instance method first (sidekiq's)"
    ts = ("class Ky {\n  #calculateRetryDelay(error: Error) {\n    return 1;\n  }\n\n  retry() {\n    return 2;\n  }\n"
          "}\n")
    memory.put_file("source/ky.ts", "b", units_of("source/ky.ts", ts))
    rust = ("pub struct Router {}\n\nimpl Router {\n    pub fn merge(self, other: Router) -> Self {\n"
            "        self\n    }\n}\n\npub fn merge(a: u8) -> u8 {\n    a\n}\n")
    memory.put_file("axum/src/routing/mod.rs", "c", units_of("axum/src/routing/mod.rs", rust))
    php = ("<?php\n\nnamespace GuzzleHttp\\Exception;\n\nuse Psr\\Http\\Client\\NetworkExceptionInterface;\n\n"
           "class ConnectException extends TransferException\n{\n    public function getHandlerContext(): array\n"
           "    {\n        return $this->handlerContext;\n    }\n}\n")
    memory.put_file("src/Exception/ConnectException.php", "d", units_of("src/Exception/ConnectException.php", php))
    for asked, name in (("GuzzleHttp\\Exception\\ConnectException", "ConnectException"),  # (PHP's: its `use` lines)
                        ("\\GuzzleHttp\\Exception\\ConnectException::getHandlerContext",
                         "ConnectException.getHandlerContext"),
                        ("route!", "Sinatra.Base.route!"), ("Base.route", "Sinatra.Base.route"),
                        ("calculateRetryDelay", "Ky.#calculateRetryDelay"), ("Ky.calculateRetryDelay",
                                                                              "Ky.#calculateRetryDelay"),
                        ("routes?", "Sinatra.Base.routes"),  # a question, in a language without `?` names
                        ("axum::routing::Router::merge", "Router.merge")):
        query = read_code_query(asked)
        assert query.lookup, asked
        assert memory.search(query, 3)[0].unit.name == name, (asked, memory.search(query, 3))
        assert all(memory.defines(n) for n in query.lookup), asked
    assert not memory.defines("axum.routing.Router.route"), "a path whose last parts no definition has"
    assert read_code_query("GuzzleHttp\\Psr7\\Request").lookup == {"GuzzleHttp.Psr7.Request"}, "one no unit defines"


def test_a_cpp_look_up_of_an_operator_a_compilers_name_and_a_class() -> None:
    """A trial over fmt: `operator==` was no look-up (its answer `operator=` and `operator()`, no word that none was
    named so), `fmt::v12::basic_memory_buffer<char, 500>::grow` (as a compiler writes it) missed the method found
    without `<char, 500>`, `file` at k 1 showed its constructor `file.file`, not the class, and `formatter` one of
    forty specializations before the template."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    header = ("FMT_BEGIN_NAMESPACE\n" + "".join(f"/// Formats bytes as hex, the doc's line {i}.\n" for i in range(12))
              + "template <> struct formatter<bytes> {\n  auto format(bytes) -> int { return 0; }\n"
              "};\n"
              "template <typename T, typename Char = char> struct formatter {\n  formatter() = delete;\n};\n"
              "class file {\n  int fd_;\n public:\n  file() : fd_(-1) {}\n"
              "  file& operator=(file&& other) { return *this; }\n"
              "  bool operator==(const file& o) const { return fd_ == o.fd_; }\n};\n"
              "template <typename T, size_t SIZE> class basic_memory_buffer {\n  void grow(size_t size) {}\n};\n"
              "inline namespace literals {\nconstexpr auto operator\"\"_a(const char* s, size_t) -> int { return 0; }\n"
              "}\nFMT_END_NAMESPACE\n")
    memory = RepoMemory()
    memory.put_file("include/fmt/os.h", "a", units_of("include/fmt/os.h", header))
    for asked, name in (("operator==", "file.operator=="), ("file::operator==", "file.operator=="),
                        ("fmt::v12::file<char>::operator==", "file.operator=="),  # (both at once)
                        ('operator""_a', 'literals.operator""_a'), ("file", "file"),
                        ("fmt::v12::basic_memory_buffer<char, 500>::grow", "basic_memory_buffer.grow"),
                        ("formatter", "formatter"), ("formatter<bytes>", "formatter")):
        query = read_code_query(asked)
        assert memory.search(query, 1)[0].unit.name == name, (asked, memory.search(query, 3))
        first_line = memory.search(query, 1)[0].unit.start_line  # (the template first, unless a specialization is
        assert name != "formatter" or first_line == (2 if "<" in asked else 17), (asked, first_line)  # named; a
        # long doc comment above the specialization is no part of its header)
        assert all(memory.defines(n) for n in query.lookup), (asked, query.lookup)
    assert read_code_query("operator<=>").lookup == {"operator<=>"} and not memory.defines("operator<=>")
    from ctxsieve.indexes.repos.memory import _specialization_of

    specialized = units_of("include/fmt/os.h", header)[1]  # (its header below a doc of 12 lines: it was looked
    assert specialized.start_line == 2 and _specialization_of(specialized, "formatter"), specialized  # for in the
    assert _specialization_of(specialized, "formatter<bytes>"), specialized  # first 400 characters alone)
    generic = units_of("src/routing.rs", "pub struct Router<S = ()> {\n    inner: S,\n}\n")[0]  # (no template:
    assert generic.kind == "struct" and not _specialization_of(generic, "Router"), generic  # Rust's own generic)


def test_a_rust_functions_attributes_over_several_lines_are_its_own() -> None:
    """`#[should_panic(\\n expected = ...\\n)]` above a test was a unit of its module apart (14 functions of axum),
    and the function began at its `fn` line; a comment after code on its line stays the code's."""
    source = ("#[cfg(test)]\nmod tests {\n    use super::*;\n\n    #[tokio::test]\n    #[should_panic(\n"
              "        expected = \"Overlapping method route\"\n    )]\n    async fn handler_overlaps() {\n"
              "        let x = 1;\n    }\n\n    /// Doc.\n    #[test]\n    fn simple() {\n        assert!(true);\n"
              "    }\n    const Y: u8 = 2; // trailing\n    fn after() {}\n}\n")
    units = {(u.name, u.kind, u.start_line, u.end_line) for u in units_of("src/routing/tests.rs", source)}
    assert {("tests.handler_overlaps", "function", 5, 11), ("tests.simple", "function", 13, 17),
            ("tests.after", "function", 19, 19)} <= units, units
    assert not any(start <= 8 <= end for name, kind, start, end in units if kind == "module"), units


def test_a_go_panics_frames_in_the_module_cache_point_into_the_modules_own_files() -> None:
    """A Go panic names each frame's file in the module cache (`.../gin@v1.9.1/tree.go`): read as `v1.9.1/tree.go`,
    no frame pointed into the repository's `tree.go` (on gin, the innermost frame's `node.getValue` was below ten of
    gin.go's methods, whose file every frame's package path names; now it is first)."""
    from ctxsieve.ingest.coderank.ranker import frames_at
    from ctxsieve.ingest.request import read_request

    tree = "package gin\n\nfunc (n *node) getValue(path string) (value nodeValue) {\n\tn = nil\n\treturn n.value\n}\n"
    cache = "/home/dev/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1"
    panic = ("panic: runtime error: invalid memory address or nil pointer dereference\n\ngoroutine 34 [running]:\n"
             "github.com/gin-gonic/gin.(*node).getValue(0xc0001a2000, {0xc00012e0b0, 0x9})\n"
             f"\t{cache}/tree.go:4 +0x1a5\n"
             "github.com/gin-gonic/gin.(*Engine).handleHTTPRequest(0xc0000d8000, 0xc000190000)\n"
             f"\t{cache}/binding/form.go:620 +0x65e\n"
             "net/http.serverHandler.ServeHTTP({0xc000184000}, {0x8a3f20, 0xc0001c2000}, 0xc0001a6000)\n"
             "\t/usr/local/go/src/net/http/server.go:2936 +0x316\n")
    assert [f.path for f in read_request(panic).frames] == ["tree.go", "binding/form.go"], "Go's own library left out"
    query = read_code_query(panic)
    unit = next(u for u in units_of("tree.go", tree) if u.name == "node.getValue")
    assert frames_at(query, [unit])[0] == 1.0
    assert query.names_file("tree.go") == 1 and query.names_file("binding/form.go")


def test_a_request_of_places_alone_gets_what_lies_there_first() -> None:
    """`tree.go:452` (a compiler's or a linter's line, a frame) asks for the definition holding that line: it came
    7th, below the file's definitions whose words are the file's name. A path alone lists its file in order (its
    one-line declarations came first, as the shortest matches of the file's name)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    tree = "package gin\n\n" + "".join(f"// walkTree{i} walks the tree.\nfunc walkTree{i}(t *tree) {{\n\treturn\n}}\n\n"
                                       for i in range(6))
    tree += "func (n *node) getValue(path string) {\n\tx := 1\n\ty := 2\n\t_ = x + y\n}\n"
    memory.put_file("tree.go", "a", units_of("tree.go", tree))
    at = tree.split("\n").index("\ty := 2") + 1
    for asked in (f"tree.go:{at}", f"gin/tree.go:{at}:5",
                  f"/home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/tree.go:{at}",  # an installed copy's
                  f"\t/home/u/go/pkg/mod/github.com/gin-gonic/gin@v1.9.1/tree.go:{at} +0x6a5"):  # a panic's line
        query = read_code_query(asked)
        assert query.at_lines, asked
        assert memory.search(query, 3)[0].unit.name == "node.getValue", (asked, memory.search(query, 3))
    assert not read_code_query(f"a panic at tree.go:{at}").at_lines, "words and a place: the words rank"
    memory.put_file("gin.go", "b", units_of("gin.go", "package gin\n\n// the tree of routes\nvar tree = 1\n"))
    listed = memory.search(read_code_query("tree.go"), 10)  # a path alone: the file's units in its order, and no
    own = sorted(u.start_line for u in units_of("tree.go", tree))  # others (gin.go says `tree` too: it came last,
    assert read_code_query("`tree.go`").paths_only and [h.unit.start_line for h in listed] == own  # under "in their
    assert [h.unit.path for h in listed] == ["tree.go"] * len(own), listed  # files' order")
    for name in ("torch.Tensor.t", "i18n.global.t", "express.Router.js"):  # (a qualified name, not a file: a first
        assert read_code_query(name).lookup == {name} and not read_code_query(name).paths_only, name  # rule read
    for file in ("jquery.min.js", "types.d.ts", "src/a.b.c.ts"):  # `torch.Tensor.t` as a file the repository lacks)
        assert read_code_query(file).paths_only, file
    test_file = "src/tree.test.ts"  # (a file name of several dots, hono's `components.test.tsx`, was read as words)
    memory.put_file(test_file, "t", units_of(test_file, "describe('tree', () => {\n  it('walks', () => {})\n})\n"))
    listed = memory.search(read_code_query(test_file), 10)
    assert read_code_query(test_file).paths_only and {h.unit.path for h in listed} == {test_file}, listed
    memory.put_file("a.go", "c", units_of("a.go", "package gin\n\n// a tree\nvar a = 2\n"))
    memory.put_file("z.go", "d", units_of("z.go", "package gin\n\n// tree tree tree go\nvar treeGo = 2\n"))
    nearest = memory.search(read_code_query("src/tree_go.go"), 20)  # a file it has not: the nearest, as ranked
    assert nearest and [h.score for h in nearest] == sorted((h.score for h in nearest), reverse=True), \
        "as the rule ranks them, not by path"



def test_a_short_search_meets_the_codes_words_by_their_stems_and_an_issue_does_not() -> None:
    """"JSON response rendering" found gin's context.go before render/json.go: "rendering" is not `render`. A search
    of a few words is read by stems (a stem's words one term: `render`, `renderer` count once); an issue's words as
    written, as the rule was measured."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.lexical import UnitIndex, unit_terms

    memory = RepoMemory()
    memory.put_file("render/json.go", "a", units_of("render/json.go", (
        "package render\n\n// JSON writes the object.\n"
        "func (r JSON) Render(w Writer) error {\n\treturn write(w)\n}\n")))
    memory.put_file("context.go", "b", units_of("context.go", (
        "package gin\n\n// JSON serializes the response body as JSON into the response.\n"
        "func (c *Context) JSON(code int, obj any) {\n\tc.response(code, obj)\n}\n")))
    assert read_code_query("JSON response rendering").short
    assert memory.search(read_code_query("JSON response rendering"), 1)[0].unit.path == "render/json.go"
    issue = "JSON response rendering " + " ".join(["the handler writes a body"] * 6)
    assert not read_code_query(issue).short
    index = UnitIndex()
    ids = index.add([unit_terms(u) for u in units_of("a.py", "def render():\n    renderer = 1\n")])
    one = index.add([unit_terms(u) for u in units_of("b.py", "def render():\n    pass\n")])
    stemmed = index.scores(["rendering"], stems=True)
    assert stemmed[ids[0]] > 0 and stemmed[one[0]] > 0 and not index.scores(["rendering"]).any()
    assert index.scores(["render"], stems=True)[ids[0]] == index.scores(["rendering"], stems=True)[ids[0]], \
        "the words of a stem are one term, whichever the search wrote"


def test_a_short_searchs_first_hits_are_each_files_best() -> None:
    """A few words ask where something is: ten definitions of one file hid the other files that answer them."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("base.rb", "a", units_of("base.rb", "".join(
        f"def log_request_{i}(env)\n  logger.info(env)\nend\n\n" for i in range(5))))
    memory.put_file("middleware/logger.rb", "b", units_of("middleware/logger.rb",
                                                          "class Logger\n  def call(env)\n    env\n  end\nend\n"))
    hits = memory.search(read_code_query("request logger"), 10)
    assert [h.unit.path for h in hits[:2]] == ["base.rb", "middleware/logger.rb"], hits
    assert [h.score for h in hits[2:]] == sorted((h.score for h in hits[2:]), reverse=True), "then as ranked"
    issue = memory.search(read_code_query("request logger " + "the logger logs each request " * 5), 10)
    assert [h.unit.path for h in issue[:2]] == ["base.rb", "base.rb"], "an issue's hits as ranked"


def test_a_look_up_puts_the_definition_before_its_overload_signatures() -> None:
    """`Response.iter_content` answered the two `@overload` stubs first (`-k 1`: a stub alone)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("from typing import overload\n\n\nclass Response:\n"
              "    @overload\n    def iter_content(self, n: int) -> bytes: ...\n"
              "    @t.overload\n    def iter_content(self, n: None) -> str: ...\n"
              "    def iter_content(self, n=None):\n        return self.raw.read(n)\n")
    memory = RepoMemory()
    memory.put_file("models.py", "a", units_of("models.py", source))
    hits = memory.search(read_code_query("Response.iter_content"), 3)
    assert [h.unit.start_line for h in hits] == [9, 5, 7], hits


def test_words_put_an_overload_signature_after_the_code_it_types() -> None:
    """A user trial over aiohttp: "retry failed requests with backoff" answered `BaseRequest.__setitem__`'s two-line
    `@overload` stub first (its `RequestKey` and class name held "request", and a stub is short). A stub counts as a
    `.pyi`'s does, and a class holding overloads is no stub (a look-up of it comes first)."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.ranker import overload_signature

    source = ("from typing import overload\n\n\nclass BaseRequest:\n"
              "    @overload  # type: ignore[override]\n"
              "    def __setitem__(self, key: RequestKey[_T], value: _T) -> None: ...\n\n"
              "    @overload\n    def __setitem__(self, key: str, value: Any) -> None: ...\n\n"
              "    def __setitem__(self, key: str | RequestKey[_T], value: Any) -> None:\n"
              "        self._state[key] = value\n\n"
              "    def read_body(self):\n        return self._payload.read()\n")
    units = units_of("web_request.py", source)
    assert [u.start_line for u in units if overload_signature(u)] == [5, 8], units
    memory = RepoMemory()
    memory.put_file("web_request.py", "a", units)
    hits = memory.search(read_code_query("retry failed requests with backoff"), 6)
    assert [h.unit.start_line for h in hits if h.unit.name == "BaseRequest.__setitem__"] == [11, 5, 8], hits
    assert [h.unit.start_line for h in hits][:2] == [4, 11], hits
    looked = memory.search(read_code_query("BaseRequest"), 1)
    assert [h.unit.name for h in looked] == ["BaseRequest"], "a class holding overloads is no overload"


def test_a_pasted_error_finds_the_definition_that_says_it_verbatim() -> None:
    """"Attempted to call an async iterator on a sync stream." and "... a sync iterator on an async stream." are the
    same bag of words: httpx's raising method was not among the first 10. The message's words held verbatim (the
    beginning of a printed message, whose values are filled in after it) now tell them apart; a dotted exception
    name (`requests.exceptions.InvalidSchema: ...`) no longer buries the raise under its module's classes."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.query import message_phrases

    models = "".join(
        f"    def {name}(self):\n        if not isinstance(self.stream, {kind}):\n"
        f"            raise RuntimeError(\"Attempted to call {what} on {where} stream.\")\n"
        "        return self.stream\n\n"
        for name, kind, what, where in (("iter_raw", "SyncByteStream", "a sync iterator", "an async"),
                                        ("aiter_raw", "AsyncByteStream", "an async iterator", "a sync"),
                                        ("close", "SyncByteStream", "an sync close", "an async"),
                                        ("aclose", "AsyncByteStream", "an async close", "a sync")))
    memory = RepoMemory()
    memory.put_file("httpx/_models.py", "a", units_of("httpx/_models.py", f"class Response:\n{models}"))
    memory.put_file("httpx/sessions.py", "b", units_of("httpx/sessions.py", (
        "def get_adapter(url):\n    raise InvalidSchema(\n        f\"No connection adapters were found for \"\n"
        "        f\"{url!r}\"\n    )\n")))
    memory.put_file("httpx/exceptions.py", "c", units_of("httpx/exceptions.py", "".join(
        f"class {name}(RequestException):\n    \"\"\"An invalid {name} for the connection.\"\"\"\n\n\n"
        for name in ("InvalidSchema", "InvalidURL", "InvalidHeader", "MissingSchema"))))
    pasted = "RuntimeError: Attempted to call an async iterator on a sync stream."
    assert memory.search(read_code_query(pasted), 1)[0].unit.name == "Response.aiter_raw"
    schema = "httpx.exceptions.InvalidSchema: No connection adapters were found for 'htp://x'"
    assert message_phrases(schema) == ("no connection adapters were found for",)
    assert memory.search(read_code_query(schema), 1)[0].unit.name == "get_adapter", "adjacent literals are one"
    assert message_phrases("Note: a plain sentence of words") == (), "not an error's line"
    spaced = f"ValueError: the first words {' ' * 64_000}and the last ones  \r\nnext line"
    assert message_phrases(spaced) == ("the first words and the last ones",), "a long run of spaces, a CRLF"


def test_a_programs_own_error_line_finds_the_format_string_that_prints_it() -> None:
    """jq's `jq: error (at <stdin>:1): Cannot index number with string ("foo")`: the program's prefix and the
    parenthesis kept the line from being read as an error's, and the code says `"Cannot index %s with %s (%s)"`, not
    the words printed: `jv_get` was not in the first 15."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.query import message_phrases
    from ctxsieve.ingest.coderank.ranker import phrases_held

    pasted = 'jq: error (at <stdin>:1): Cannot index number with string ("foo")'
    assert message_phrases(pasted) == ("cannot index number with string",)
    assert message_phrases("fatal: not a git repository (or any of the parent directories): .git")[0] == \
        "not a git repository * any of the parent"
    memory = RepoMemory()
    memory.put_file("src/jv_aux.c", "a", units_of("src/jv_aux.c", (
        "jv jv_get(jv t, jv k) {\n  jv v;\n  if (jv_get_kind(t) == JV_KIND_OBJECT) {\n    v = jv_object_get(t, k);\n"
        "  } else {\n    v = jv_invalid_with_msg(jv_string_fmt(\"Cannot index %s with %s (%s)\",\n"
        "                                          jv_kind_name(jv_get_kind(t)), jv_kind_name(jv_get_kind(k))));\n"
        "  }\n  return v;\n}\n")))
    memory.put_file("src/jv.c", "b", units_of("src/jv.c", "".join(
        f"jv jv_{name}(jv j, jv k) {{\n  /* index the {name} with a number or a string */\n"
        f"  return jv_number(jv_string_length_bytes(j) + {i});\n}}\n\n"
        for i, name in enumerate(("string_indexes", "number_index", "string_index", "array_index")))))
    memory.put_file("src/main.c", "c", units_of("src/main.c", (
        "int main(int argc, char **argv) {\n  fprintf(stderr, \"jq: error (at %s): %s\\n\", where, msg);\n"
        "  return 5;\n}\n")))
    assert memory.search(read_code_query(pasted), 1)[0].unit.name == "jv_get"
    held = phrases_held(["cannot index number with string"], [
        CodeUnit("a.c", "a", "function", 1, 1, 'fail("Cannot %s %s %s %s", a, b, c, d);'),
        CodeUnit("b.c", "b", "function", 1, 1, 'fail("Cannot index %d with %-8s", a, b);')])
    assert list(held) == [0.0, 1.0], "three of its words written out, at least"
    filled = phrases_held(["can't append foo@1a2b3c as it has unknown type"], [  # (a trial's Kotlin message)
        CodeUnit(f"a.{suffix}", "a", "function", 1, 1, f'throw Error("Can\'t append {value} as it has unknown type")')
        for suffix, value in (("kt", "$item"), ("rb", "#{item}"), ("swift", "\\(item)"), ("py", "?"))])
    assert list(filled) == [1.0, 1.0, 1.0, 0.0], "Kotlin's `$item`, Ruby's `#{item}` and Swift's `\\(item)` filled in"


def test_a_message_pasted_alone_finds_the_definition_that_prints_it() -> None:
    """A trial pasted axum's panic message alone, as it printed (`Overlapping method route. Handler for `GET /users`
    already exists`): with no `Error:` before it, read as words, the function that says it was not among the first
    ten once the vectors re-ranked. A short search is now also read whole as a message printed, held where a string
    literal opens with four of its words; a comment holding them is not a message (gson's `Unit tests for the ...`
    came before the tests asked for)."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.query import said_phrases
    from ctxsieve.ingest.coderank.ranker import phrases_held

    pasted = "Overlapping method route. Handler for `GET /users` already exists"
    query = read_code_query(pasted)
    assert query.phrases == () and query.said == ("overlapping method route. handler for * already exists",), query
    assert read_code_query(f'"{pasted}"').phrases == query.said, "a quoted message may quote code"
    for not_said in ("RuntimeError: a message read as an error's", "Router::nest", "src/lib.rs:120", "route method"):
        assert read_code_query(not_said).said == (), not_said
    memory = RepoMemory()
    memory.put_file("src/routing/method_routing.rs", "a", units_of("src/routing/method_routing.rs", (
        "fn merge_inner(path: &str, name: &str, first: Endpoint, second: Endpoint) -> Result<Endpoint, String> {\n"
        "    match (first, second) {\n        (Endpoint::None, pick) => Ok(pick),\n"
        "        _ => Err(format!(\"Overlapping method route. Handler for `{name} {path}` already exists\")),\n"
        "    }\n}\n")))
    memory.put_file("src/routing/mod.rs", "b", units_of("src/routing/mod.rs", "".join(
        "/// Whether a handler for the method route already exists: routes overlapping.\n"
        f"pub fn route_handler_exists_{i}(method: Method, route: &Route) -> bool {{\n"
        "    route.handler(method).exists()\n}\n\n" for i in range(6))))
    assert [h.unit.name for h in memory.search(replace(query, said=()), 2)] == [
        "route_handler_exists_0", "merge_inner"], "read as words alone, the message's raiser is second"
    assert memory.search(query, 1)[0].unit.name == "merge_inner"
    comment = CodeUnit("a.java", "a", "class", 1, 2, "/** Unit tests for the {@link Gson} policy. */\nclass A {}")
    literal = CodeUnit("b.py", "b", "function", 1, 1, "raise ValueError(f'{name!r} unit tests for the policy')")
    assert said_phrases("unit tests for the number policy") == ("unit tests for the number policy",)
    assert list(phrases_held(["unit tests for the number policy"], [comment, literal], 4, literal=True)) == [
        0.0, 4 / 6], "a comment's words are not a message's; a literal's after a value filled in are"


def test_a_message_whose_values_part_it_into_short_runs_finds_its_format_string() -> None:
    """A trial pasted viper's `File "config" not found in [/etc/app /home/u/.app]`: between the values it fills in,
    no run of words is long enough to count, and `Viper.findConfigFileOld` (the words `file`, `config`, `not found`)
    came first, not the `Error()` whose `"File %q not found"` prints it. The message is now also read whole, each
    value one word that the code's placeholder there (or what it writes as it is) fills; a placeholder bears the
    value out, a placeholder in a written word's stead does not."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.ranker import phrases_held

    pasted = 'File "config" not found in [/etc/app /home/u/.app]'
    assert read_code_query(pasted).said == ("file * not found in",)
    assert read_code_query("TypeError: Duplicate 'x', already handled by 'y'").phrases == (
        "duplicate * already handled by",), "a value's punctuation is the value's"
    for too_few in ("'nargs' must be 'x'", "Unknown method 'x'", "a plain search of words alone"):
        assert FILLED not in " ".join(read_code_query(too_few).said), too_few
    memory = RepoMemory()
    memory.put_file("errors.go", "a", units_of("errors.go", (
        "package viper\n\n// Error returns the formatted error.\n"
        "func (e FileNotFoundFromSearchError) Error() string {\n"
        "\tmessage := fmt.Sprintf(\"File %q not found\", e.name)\n\tif len(e.locations) > 0 {\n"
        "\t\tmessage += fmt.Sprintf(\" in %v\", e.locations)\n\t}\n\treturn message\n}\n")))
    memory.put_file("file.go", "b", units_of("file.go", "package viper\n\n" + "".join(
        f"// findConfigFile{i} finds the config file: a file not found in the config paths is an error.\n"
        f"func (v *Viper) findConfigFile{i}() (string, error) {{\n\tfor _, file := range v.configPaths {{\n"
        "\t\tif exists(file) {\n\t\t\treturn file, nil\n\t\t}\n\t}\n"
        "\treturn \"\", ConfigFileNotFoundError{name: v.configName, locations: v.configPaths}\n}\n\n"
        for i in range(3))))
    assert memory.search(read_code_query(pasted), 1)[0].unit.name == "FileNotFoundFromSearchError.Error"
    units = [CodeUnit(f"{n}.py", "a", "function", 1, 1, text) for n, text in enumerate((
        "raise RuntimeError(f'StaticFiles directory {directory!r} does not exist.')",
        "raise RuntimeError('StaticFiles directory static does not exist.')",
        "raise RuntimeError(f'StaticFiles {kind} {directory!r} does not exist.')",
        "# the StaticFiles directory, which does not exist.\nx = 1"))]
    phrase = "staticfiles directory * does not exist"
    assert list(phrases_held([phrase], units, 4, literal=True)) == [1.0, 0.0, 1.0, 0.0], \
        "a placeholder for the value (one for a word still leaves four); the value's copy as written is not the code " \
        "that fills it in; a comment is no message"
    assert list(phrases_held([phrase], units[1:2] + units[3:], 4, literal=True)) == [1.0, 0.0], \
        "where no code fills the value in, the value as written holds it"
    assert list(phrases_held([phrase], units[2:3], 6, literal=True)) == [0.0], "a word's placeholder bears nothing"
    starlette = [CodeUnit(f"{n}.py", "a", "function", 1, 1, text) for n, text in enumerate((
        "raise RuntimeError(f'File at path {self.path} does not exist.')",
        "raise RuntimeError(f'Directory {directory!r} does not exist')",
        "raise RuntimeError(f'StaticFiles directory {self.directory!r} does not exist.')"))]
    assert read_code_query("RuntimeError: File at path 'x' does not exist.").phrases == (
        "file at path * does not exist",), "the message whole, not its runs apart"
    assert list(phrases_held(["file at path * does not exist"], starlette)) == [1.0, 0.0, 0.0], \
        "held whole with its value filled in, by one; runs of it, by the others"
    assert list(phrases_held(["file at path * does not exist"], starlette[1:])) == [3 / 7, 3 / 7], \
        "a run after a value counts as the part of the message it is"
    copies = [CodeUnit(f"{n}.py", "a", "function", 1, 1, 'raise RuntimeError("QueryParams are immutable since '
                       f'0.18.0. "\n    "Use `q = {call}` to create an updated copy.")') for n, call in enumerate((
                           "q.merge(...)", "q.set(key, value)"))]
    assert list(phrases_held(["queryparams are immutable since * use * to create an updated copy"], copies)) == [
        1.0, 1.0], "a value of four words, as written"
    built = CodeUnit("parser.py", "a", "function", 1, 6, (
        'message = [f"Encountered unknown tag {name!r}."]\n'
        'message.append(f"Jinja was looking for the following tags: {currently_looking}.")\n'
        'message.append(\n    "The innermost block that needs to be closed is"\n    f" {self._tag_stack[-1]!r}."\n)\n'))
    pasted = read_code_query("jinja2.exceptions.TemplateSyntaxError: Encountered unknown tag 'endfor'. Jinja was "
                             "looking for the following tags: 'endif'. The innermost block that needs to be closed is "
                             "'if'.").phrases
    assert list(phrases_held(pasted, [built])) == [1.0], "a message built of three strings, held by all of them"
    joined = CodeUnit("src/OptionParser.java", "a", "method", 1, 1,
                      'throw new OptionException("Unknown option \'" + name + "\' for command " + command);')
    asserted = CodeUnit("test/OptionParserTest.java", "b", "method", 1, 1,
                        'assertEquals(String.format("Unknown option \'%s\' for command %s", n, c), e.getMessage());')
    django = CodeUnit("validators.py", "c", "class", 1, 1,
                      'message = _("Ensure this value is less than or equal to %(limit_value)s and not more.")')
    held = phrases_held(["unknown option * for command"], [joined, asserted])
    assert held[0] > 0 and held[1] > 0, "a test's placeholder does not outweigh the code that joins the message"
    assert list(phrases_held(["ensure this value is less than or equal to * and not more"], [django])) == [1.0]
    long = read_code_query("ValueError: " + " ".join(f"the value 'v{i}' is not valid" for i in range(80)))
    assert all(len(p.split()) <= MESSAGE_WORDS for p in long.phrases), "a message read by its first words"
    held = phrases_held(["directory * does not exist"], starlette)
    assert held[1] == 1.0 and 0 < held[2] < held[1], "held inside a longer message, less: the printed one opens so"


def test_a_printed_error_finds_the_code_that_fills_it_in_not_the_tests_that_assert_it() -> None:
    """A trial pasted clap's output whole (`error: unexpected argument '--foo' found`, a `tip:`, `Usage:`): read as an
    issue, its message was not read at all, and alone, the 28 tests asserting it, each a holder, left the format
    string's function (`"unexpected argument '{invalid}{invalid_arg}{invalid:#}' found"`) a 28th of the phrase's
    weight: `ErrorKind.as_str` came first. Where code fills the message's values in, it is what says the message;
    and tests or examples holding a phrase are no rivals of the code holding it."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.ranker import phrases_held

    printed = ("error: unexpected argument '--foo' found\n\n  tip: to pass '--foo' as a value, use '-- --foo'\n\n"
               "Usage: mytool [OPTIONS]\n\nFor more information, try '--help'.\n")
    query = read_code_query(printed)
    assert not query.short and query.phrases == ("unexpected argument * found",), query
    assert read_code_query("Error: a report opening with an error line" + " and more words" * 20).phrases == (), \
        "an issue opening with an error line is read as an issue"
    memory = RepoMemory()
    memory.put_file("src/error/format.rs", "a", units_of("src/error/format.rs", (
        "fn write_dynamic_context(error: &Error, styled: &mut StyledStr) -> bool {\n    let invalid = 1;\n"
        "    let _ = write!(styled, \"unexpected argument '{invalid}{invalid_arg}{invalid:#}' found\");\n"
        "    true\n}\n")))
    memory.put_file("src/error/kind.rs", "b", units_of("src/error/kind.rs", (
        "impl ErrorKind {\n    pub fn as_str(self) -> Option<&'static str> {\n        match self {\n"
        "            Self::UnknownArgument => Some(\"unexpected argument found\"),\n"
        "            Self::InvalidValue => Some(\"invalid value for an unexpected argument\"),\n"
        "            _ => None,\n        }\n    }\n}\n")))
    memory.put_file("tests/builder/opts.rs", "c", units_of("tests/builder/opts.rs", "".join(
        f"#[test]\nfn unexpected_argument_{i}() {{\n    let expected = \"error: unexpected argument '--foo{i}' found\n"
        f"\";\n    assert_error(expected);\n}}\n\n" for i in range(12))))
    assert memory.search(query, 1)[0].unit.name == "write_dynamic_context"
    units = [CodeUnit(f"{path}", "a", "function", 1, 1, text) for path, text in (
        ("src/a.rs", 'format!("the following required arguments were not provided:")'),
        *((f"tests/t{i}.rs", 'let e = "the following required arguments were not provided:";') for i in range(5)))]
    held = phrases_held(["the following required arguments were not provided"], units)
    assert held[0] == 1.0 and held[1] == held[0] * 1.0, "the code alone holds it: each holder counts whole"


def test_a_dotnet_exception_whose_message_runs_over_lines_is_a_trace() -> None:
    """Json.NET's `Unhandled exception. Newtonsoft.Json.JsonSerializationException: Cannot deserialize ...` goes on
    over two more lines (`To fix this error ...`, `Path 'orders', line 1, position 11.`) before its frames: .NET's
    prefix kept the first from being read as an error's line, and the next ones counted as an issue's words, so the
    frames lost their order."""
    message = ("Unhandled exception. Newtonsoft.Json.JsonSerializationException: Cannot deserialize the current JSON "
               "object into type 'List`1[Order]' because the type requires a JSON array to deserialize correctly.\n"
               "To fix this error either change the JSON to a JSON array or change the deserialized type so that it "
               "is a normal .NET type that can be deserialized from a JSON object. JsonObjectAttribute can also be "
               "added to the type to force it to deserialize from a JSON object.\nPath 'orders', line 1, position "
               "11.\n")
    frames = "".join(f"   at Newtonsoft.Json.JsonConvert.Deserialize{i}(String value) in /_/Src/Newtonsoft.Json/"
                     f"JsonConvert.cs:line {800 + i}\n" for i in range(4))
    query = read_code_query(message + frames)
    assert query.trace and query.phrases[0].startswith("cannot deserialize the current json object into type *"), query
    assert not read_code_query(message + "\n" + frames).trace, "a blank line before the frames: words about them"


def test_a_short_search_holding_a_files_name_puts_that_file_first() -> None:
    """"JSON element hierarchy and tree model" found gson's TreeTypeAdapter.java (its words many times over) before
    JsonElement.java, whose name is the search's own words. An issue, a look-up or a pasted error is not read so."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("gson/JsonElement.java", "a", units_of("gson/JsonElement.java", (
        "public abstract class JsonElement {\n  public boolean isJsonArray() {\n    return this instanceof JsonArray;\n"
        "  }\n}\n")))
    memory.put_file("gson/bind/TreeTypeAdapter.java", "b", units_of("gson/bind/TreeTypeAdapter.java", (
        "/** Adapts a tree model to a tree of the model's hierarchy. */\npublic final class TreeTypeAdapter {\n"
        "  Object tree(Object model) {\n    return model;\n  }\n}\n")))
    hits = memory.search(read_code_query("JSON element hierarchy and tree model"), 2)
    assert [h.unit.path for h in hits] == ["gson/JsonElement.java", "gson/bind/TreeTypeAdapter.java"], hits
    issue = memory.search(read_code_query("JSON element hierarchy and tree model " + "the tree model " * 10), 1)
    assert issue[0].unit.path == "gson/bind/TreeTypeAdapter.java", "an issue as the rule was measured"


def test_stems_are_the_same_whichever_threads_ask_at_once() -> None:
    """One Snowball stemmer shared by the index worker and the searches kept state between calls: under threads it
    raised IndexError (a sync failed) and cached wrong stems for good (`rendered` -> `authentationses`)."""
    import random
    import threading

    import snowballstemmer  # type: ignore[import-untyped]

    from ctxsieve.ingest.coderank.lexical import stem

    words = sorted({f"{a}{b}{end}" for a in ("render", "authent", "stream", "pars", "valid", "complet")
                    for b in ("", "at", "iz", "ic") for end in ("ing", "ed", "er", "ers", "ation", "ations", "s", "")})
    words += [f"{w}{i}" for w in words for i in range(8)]
    truth = {w: snowballstemmer.stemmer("english").stemWord(w) for w in words}
    stem.cache_clear()
    wrong: list[str] = []

    def ask(seed: int) -> None:
        order = list(words)
        random.Random(seed).shuffle(order)
        wrong.extend(w for w in order if stem(w) != truth[w])

    threads = [threading.Thread(target=ask, args=(seed,)) for seed in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not wrong, wrong[:5]


def test_an_installed_copys_frame_points_into_a_checkouts_src_layout() -> None:
    """A traceback from an installed flask (`.../site-packages/flask/app.py`) points into a checkout's
    `src/flask/app.py`: the ranking found the file, but the place did not meet it, so the hit was shown from its first
    lines, never around the frame's line."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    body = "".join(f"        step_{i} = {i}\n" for i in range(60))
    source = f"class Flask:\n    def make_response(self, rv):\n{body}        raise TypeError('no response')\n"
    memory = RepoMemory()
    memory.put_file("src/flask/app.py", "a", units_of("src/flask/app.py", source))
    frame = ('Traceback (most recent call last):\n  File "/srv/.venv/lib/python3.12/site-packages/flask/app.py", '
             "line 63, in make_response\n    raise TypeError('no response')\nTypeError: no response")
    hits = memory.search(read_code_query(frame), 1)
    assert hits[0].unit.name == "Flask.make_response" and hits[0].focus == 63, hits
    elsewhere = memory.search(read_code_query(frame.replace("site-packages/flask", "site-packages/quart")), 1)
    assert elsewhere[0].focus == 0, "another package's app.py is not this one"


def test_a_tracebacks_frames_come_first_innermost_first_even_from_another_release() -> None:
    """A pylint traceback through an installed astroid (astroid's issue 1866): the frame of the top-level module
    `dist-packages/astroid/inference_tip.py` did not name the checkout's `astroid/inference_tip.py` (a longer path
    ending in the whole of a file's path now does); the frame `scoped_nodes.py:1749, in infer_call_result` came from
    another release, where line 1749 is another method (it now points at the `infer_call_result` nearest it); and
    ten definitions of the raising file that only share the traceback's words came before the frames' own."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.ranker import frames_at
    from ctxsieve.ingest.request import read_request

    memory = RepoMemory()
    brain = "".join(f"def infer_{w}(node, context=None):\n    return node.infer(context) or format_template\n\n"
                    for w in ("len", "str", "int", "dict", "issubclass", "isinstance", "tuple", "set"))
    brain += ("def _infer_str_format_call(node, context=None):\n    format_template = node.value\n"
              "    return format_template.format(*node.args)\n")
    memory.put_file("astroid/brain/brain_builtin_inference.py", "a",
                    units_of("astroid/brain/brain_builtin_inference.py", brain))
    tip = "import functools\n\n\ndef _inference_tip_cached(func, instance, args, kwargs):\n" + "    x = 1\n" * 8
    memory.put_file("astroid/inference_tip.py", "b", units_of("astroid/inference_tip.py", tip))
    nodes = "class FunctionDef:\n    def infer_call_result(self, caller, context=None):\n" + "        pass\n" * 20
    nodes += "    def bool_value(self, context=None):\n" + "        return True\n" * 10
    memory.put_file("astroid/nodes/scoped_nodes/scoped_nodes.py", "c",
                    units_of("astroid/nodes/scoped_nodes/scoped_nodes.py", nodes))
    site = "/usr/lib/python3/dist-packages"
    traceback = ("Traceback (most recent call last):\n"
                 f'  File "{site}/pylint/checkers/classes/special_methods_checker.py", line 42, in _safe_infer\n'
                 "    value = next(inferit)\n"
                 f'  File "{site}/astroid/nodes/scoped_nodes/scoped_nodes.py", line 28, in infer_call_result\n'
                 "    yield from returnnode.value.infer(context)\n"
                 f'  File "{site}/astroid/inference_tip.py", line 9, in _inference_tip_cached\n'
                 "    result = _cache[func, node] = list(func(*args, **kwargs))\n"
                 f'  File "{site}/astroid/brain/brain_builtin_inference.py", line 27, in _infer_str_format_call\n'
                 "    formatted_string = format_template.format(*pos_values, **keyword_values)\n"
                 "TypeError: unsupported format string passed to NoneType.__format__")
    assert [f.function for f in read_request(traceback).frames][:2] == ["_infer_str_format_call",
                                                                        "_inference_tip_cached"]
    hits = [h.unit.name for h in memory.search(read_code_query(traceback), 4)]
    assert hits[:3] == ["_infer_str_format_call", "_inference_tip_cached", "FunctionDef.infer_call_result"], hits
    methods = memory.units_of("astroid/nodes/scoped_nodes/scoped_nodes.py")
    pointed = {u.name for u, at in zip(methods, frames_at(read_code_query(traceback), methods), strict=True) if at}
    stale = next(u for u in methods if u.leaf == "bool_value")
    assert stale.start_line <= 28 <= stale.end_line and pointed == {"FunctionDef.infer_call_result"}, pointed
    assert not memory.elsewhere(read_code_query(traceback), set()), "said only of a definition the answer shows"
    assert memory.elsewhere(read_code_query(traceback), {(
        "astroid/nodes/scoped_nodes/scoped_nodes.py", "FunctionDef.infer_call_result")}) == (
        "astroid/nodes/scoped_nodes/scoped_nodes.py:28 in infer_call_result (line 28 is in FunctionDef.bool_value "
        "here; FunctionDef.infer_call_result is lines 2-22)",), "the answer says the frame's line is another's here"


def test_a_frame_on_the_blank_line_between_two_methods_is_said_to_be_in_their_class() -> None:
    """A trial's Json.NET frame fell on the blank line between two overloads (a trace of another release): the answer
    said the line was "in no definition" here, though it is inside the class."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    text = ("class JsonConverter:\n    def read_json(self, reader):\n        return reader.read()\n\n"
            "    def write_json(self, writer, value):\n        writer.write(value)\n")
    memory.put_file("json/converter.py", "h", units_of("json/converter.py", text), 6)
    trace = ("Traceback (most recent call last):\n"
             '  File "/app/json/converter.py", line 4, in write_json\n'
             "    writer.write(value)\n"
             "ValueError: cannot write")
    assert memory.elsewhere(read_code_query(trace), {("json/converter.py", "JsonConverter.write_json")}) == (
        "json/converter.py:4 in write_json (line 4 is in JsonConverter here; JsonConverter.write_json is lines 5-6)",)


def test_jvm_dotnet_and_ruby_frames_name_their_function_and_package() -> None:
    """A Java stack trace's frame (`at com.google.gson.Gson.fromJson(Gson.java:932)`) was read as `Gson.java:932`
    alone: any `Gson.java` met it, and its method was not known, so a line of another release pointed nowhere useful.
    Its package is now its folders and its method its function, as are .NET's (`at X.Read() in C:\\src\\X.cs:line 42`)
    and Ruby's (`base.rb:1050:in 'Sinatra::Base#route!'`)."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.request import Frame, read_request

    trace = ("com.google.gson.JsonSyntaxException: Expected BEGIN_OBJECT but was STRING\n"
             "\tat com.google.gson.internal.bind.ReflectiveTypeAdapterFactory$Adapter.read("
             "ReflectiveTypeAdapterFactory.java:226)\n"
             "\tat com.google.gson.Gson.fromJson(Gson.java:40)\n"
             "\tat Newtonsoft.Json.JsonTextReader.ReadInternal() in C:\\src\\Json\\JsonTextReader.cs:line 42\n"
             "lib/sinatra/base.rb:1050:in `block in dispatch!'\n"
             "lib/sinatra/base.rb:1200:in 'Sinatra::Base#call!'\n")
    assert read_request(trace).frames == (
        Frame("com/google/gson/internal/bind/ReflectiveTypeAdapterFactory.java", 226, "read"),
        Frame("com/google/gson/Gson.java", 40, "fromJson"), Frame("C:/src/Json/JsonTextReader.cs", 42, "ReadInternal"),
        Frame("lib/sinatra/base.rb", 1050, "dispatch!"), Frame("lib/sinatra/base.rb", 1200, "call!"))
    memory = RepoMemory()
    methods = "".join(f"    public Object m{i}(String json) {{\n        return null;\n    }}\n" for i in range(12))
    gson = ("package com.google.gson;\n\npublic final class Gson {\n" + methods
            + "    public <T> T fromJson(String json, Class<T> type) {\n        return null;\n    }\n}\n")
    for path in ("gson/src/main/java/com/google/gson/Gson.java", "extras/src/main/java/com/other/Gson.java"):
        memory.put_file(path, path, units_of(path, gson))
    hits = memory.search(read_code_query("\tat com.google.gson.Gson.fromJson(Gson.java:40)\n" * 2 + "failed"), 2)
    assert (hits[0].unit.path, hits[0].unit.name) == ("gson/src/main/java/com/google/gson/Gson.java",
                                                      "Gson.fromJson"), hits


def test_a_rust_panic_finds_the_code_that_says_its_message_not_the_users_main() -> None:
    """`thread 'main' panicked at src/main.rs:20:10:` and the message on the next line (Rust 1.73 on): the message
    was not read as one, and the place, the user's own `src/main.rs`, put every example's `src/main.rs` first."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    routing = ("fn merge_inner(path: Option<&str>, name: &str) -> Result<(), String> {\n"
               "    Err(format!(\"Overlapping method route. Handler for `{name} {path}` already exists\"))\n}\n"
               "fn merge(a: u8) -> u8 {\n    a\n}\n")
    memory.put_file("axum/src/routing/method_routing.rs", "r", units_of("axum/src/routing/method_routing.rs", routing))
    tests = "".join(f"#[test]\n#[should_panic(expected = \"Overlapping method route. Handler for `GET /{i}` already "
                    f"exists\")]\nfn overlapping_{i}() {{\n    let x = {i};\n}}\n" for i in range(8))
    memory.put_file("axum/src/routing/tests/mod.rs", "t", units_of("axum/src/routing/tests/mod.rs", tests))
    for example in ("readme", "hello-world"):
        main = "".join(f"fn step_{i}() {{}}\n" for i in range(18)) + "fn main() {\n    let app = route();\n}\n"
        memory.put_file(f"examples/{example}/src/main.rs", example, units_of(f"examples/{example}/src/main.rs", main))
    panic = ("thread 'main' panicked at src/main.rs:20:10:\n"
             "Overlapping method route. Handler for `GET /users` already exists\n")
    query = read_code_query(panic)
    assert query.phrases == ("overlapping method route. handler for * already exists",) and query.trace, query
    assert memory.search(query, 1)[0].unit.name == "merge_inner", memory.search(query, 3)


def test_a_ruby_class_hash_method_look_up_finds_the_method_and_a_mixins() -> None:
    """`Sinatra::Helpers#redirect` (Ruby's and Javadoc's way to name a method) was read as words: `redirect?` came
    first; `Sinatra::Base#render`, a method Base gets from the module Templates it includes, put `render_ruby` first."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("module Sinatra\n  module Helpers\n    def redirect?(uri)\n      uri\n    end\n\n"
              "    def redirect(uri, *args)\n      halt uri\n    end\n  end\n\n"
              "  module Templates\n    def render_ruby(engine, template)\n      render engine, template\n    end\n\n"
              "    def render(engine, data)\n      compile engine, data\n    end\n  end\n\n"
              "  class Base\n    include Templates\n    def call(env)\n      render :erb, env\n    end\n  end\nend\n")
    memory = RepoMemory()
    memory.put_file("lib/sinatra/base.rb", "a", units_of("lib/sinatra/base.rb", source))
    for asked, name in (("Sinatra::Helpers#redirect", "Sinatra.Helpers.redirect"),
                        ("Sinatra::Base#render", "Sinatra.Templates.render"),
                        ("Helpers#redirect?", "Sinatra.Helpers.redirect?")):
        query = read_code_query(asked)
        assert query.lookup, asked
        assert memory.search(query, 3)[0].unit.name == name, (asked, memory.search(query, 3))
    assert not memory.defines("Sinatra.Base.render"), "the answer still says no definition has that name"


def test_a_nested_class_as_the_jvm_names_it_is_a_look_up_of_it() -> None:
    """`JsonParser$Feature` (the JVM's binary name, as a stack trace or a log writes a nested class) was no name: the
    outer class's constructors came first, the enum `JsonParser.Feature` was not in the first five. A `$` between two
    capitalised names reads as the dot; a JavaScript name with `$` in it stays whole."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("package com.fasterxml.jackson.core;\n\npublic abstract class JsonParser {\n"
              "    public enum Feature {\n        AUTO_CLOSE_SOURCE(true);\n\n"
              "        private final boolean _default;\n\n"
              "        Feature(boolean defaultState) { _default = defaultState; }\n\n"
              "        public boolean enabledIn(int flags) { return (flags & 1) != 0; }\n    }\n\n"
              "    protected JsonParser() { }\n\n"
              "    public JsonParser enable(Feature f) { return this; }\n}\n")
    memory = RepoMemory()
    path = "src/main/java/com/fasterxml/jackson/core/JsonParser.java"
    memory.put_file(path, "a", units_of(path, source))
    for asked, name in (("JsonParser$Feature", "JsonParser.Feature"),
                        ("com.fasterxml.jackson.core.JsonParser$Feature.enabledIn", "JsonParser.Feature.enabledIn")):
        query = read_code_query(asked)
        assert query.lookup, asked
        assert memory.search(query, 1)[0].unit.name == name, (asked, memory.search(query, 3))
    assert lookup_names("jQuery$Deferred") == frozenset({"jQuery$Deferred"})


def test_a_short_searchs_words_meet_the_short_forms_code_writes_them_in() -> None:
    """"where are route parameters parsed" left gin's `node.getValue`, whose code says `params`, out of the first 40:
    `parameters` and `params` share no stem. A short search's word meets its short form's indexed words (and the
    other way), as one term; an issue's words are read as written."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("tree.go", "a", units_of("tree.go", (
        "package gin\n\nfunc (n *node) getValue(path string, params *Params) (value nodeValue) {\n"
        "\tvalue.params = params\n\treturn\n}\n")))
    memory.put_file("gin.go", "b", units_of("gin.go", (
        "package gin\n\nfunc (engine *Engine) addRoute(method, path string) {\n\tengine.route(path)\n}\n")))
    hits = memory.search(read_code_query("where are route parameters parsed"), 2)
    assert [h.unit.name for h in hits] == ["Engine.addRoute", "node.getValue"], hits
    alone = memory.search(read_code_query("parameters"), 1)
    assert alone and alone[0].unit.name == "node.getValue", alone


def test_a_function_assigned_to_a_property_or_made_by_a_call_is_a_definition() -> None:
    """Express's API is written `res.sendStatus = function (code) {...}` under a doc comment and a blank line, and
    `View.prototype.lookup = function (name) {...}`: its response.js was one module unit of 900 lines, `res.redirect`
    never shown by a search of its words. zod v4's classes are `export const $ZodString = core.$constructor(...)`.
    Express's request getters are `defineGetter(req, 'protocol', function protocol(){...})`. React's handlers are
    `const handleDayClick = useCallback((day) => {...}, [])` in a component (react-day-picker's "no definition is
    named handleDayClick"), telescope's previewers `previewers.vimgrep = defaulter(function(opts) ... end, {})`."""
    express = ("'use strict';\n\nvar res = Object.create(http.ServerResponse.prototype);\n\n"
               "/**\n * Send given HTTP status code.\n *\n * @public\n */\n\n"
               "res.sendStatus = function sendStatus(statusCode) {\n  this.statusCode = statusCode;\n"
               "  return this;\n};\n\nView.prototype.lookup = function lookup(name) {\n  return name;\n};\n")
    units = {(u.name, u.kind, u.start_line, u.end_line) for u in units_of("lib/response.js", express)}
    assert {("res.sendStatus", "function", 5, 14), ("View.lookup", "function", 16, 18)} <= units, units
    zod = ("export const $ZodString = core.$constructor(\"$ZodString\", (inst, def) => {\n"
           "  inst._zod.parse = (payload) => payload;\n});\n\nexport const version = { major: 4 };\n")
    names = {(u.name, u.kind) for u in units_of("core/schemas.ts", zod)}
    assert ("$ZodString", "function") in names and not any(n == "version" for n, _ in names), names
    getters = ("defineGetter(req, 'protocol', function protocol(){\n  return 'http';\n});\n\n"
               "defineGetter(req, 'fresh', function(){\n  return true;\n});\n\n"
               "function defineGetter(obj, name, getter) {\n  items.forEach(function each(item) {\n    use(item);\n"
               "  });\n}\n")
    names = {(u.name, u.kind) for u in units_of("lib/request.js", getters)}
    assert ("protocol", "function") in names and ("defineGetter", "function") in names, names
    assert not any(n in ("fresh", "each", "defineGetter.each") for n, _ in names), "no name, or inside a function"
    adapters = ("const isHttpAdapterSupported = typeof process !== 'undefined';\n\n"
                "export default isHttpAdapterSupported && function httpAdapter(config) {\n"
                "  function lookup(host) {\n    return host;\n  }\n  return lookup(config.host);\n}\n")
    units = {(u.name, u.kind, u.start_line, u.end_line) for u in units_of("lib/adapters/http.js", adapters)}
    assert {("httpAdapter", "function", 3, 3), ("httpAdapter.lookup", "function", 4, 6)} <= units, units
    for written in ("export default isSupported ? (function xhrAdapter(config) {\n  return 1;\n}) : null;\n",
                    "isSupported || function xhrAdapter(config) {\n  return 1;\n};\n"):
        assert ("xhrAdapter", "function") in {(u.name, u.kind) for u in units_of("lib/xhr.js", written)}, written
    anonymous = "export default isSupported && function (config) {\n  return 1;\n};\n"
    assert [u.kind for u in units_of("lib/xhr.js", anonymous)] == ["module"], "no name of its own: the module's code"
    component = ("export function Nav({ onPrev }: Props) {\n  const handlePreviousClick = useCallback(\n"
                 "    (e: MouseEvent) => {\n      onPrev(e);\n    },\n    [onPrev]\n  );\n"
                 "  const label = React.useMemo(() => format(month), [month]);\n"
                 "  const names = items.map((item) => item.name);\n  const timer = setTimeout(() => done(), 5);\n"
                 "  return <button onClick={handlePreviousClick}>{label}</button>;\n}\n")
    units = {(u.name, u.kind, u.start_line, u.end_line) for u in units_of("src/components/Nav.tsx", component)}
    assert {("Nav.handlePreviousClick", "function", 2, 7), ("Nav.label", "function", 8, 8)} <= units, units
    assert not any(u[0] in ("Nav.names", "Nav.timer") for u in units), "a hook's callback names; other calls' do not"
    previewers = ("local previewers = {}\n\npreviewers.vimgrep = defaulter(function(opts)\n  return previewers.new {\n"
                  "    define_preview = function(self, entry)\n      return entry\n    end,\n  }\nend, {})\n\n"
                  "local function helper()\n  local ok = pcall(function() return 1 end)\nend\n\nreturn previewers\n")
    units = {(u.name, u.kind, u.start_line, u.end_line)
             for u in units_of("lua/telescope/previewers/buffer_previewer.lua", previewers)}
    assert {("previewers.vimgrep", "function", 3, 4), ("previewers.vimgrep.define_preview", "function", 5, 7),
            ("helper", "function", 11, 13)} <= units, units
    assert not any(u[0] == "helper.ok" for u in units), "a call given a function inside a function is a value"
    assert ("telescope.previewers.buffer_previewer", "module") in {(u[0], u[1]) for u in units}, "lua/ a root"


def test_a_lua_method_is_named_and_asked_for_as_lua_writes_it() -> None:
    """telescope's `function Picker:find()` was named `Picker:find` and a search of `Picker:find` read two words, so
    `Picker:_next_find_id` came first and `Picker:find` 9th. A Lua method is named as a table's function
    (`Picker.find`), and `Picker:find` in a request names it (a table's name first: `status:open` does not)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("local Picker = {}\n\nfunction Picker:_next_find_id()\n  self._find_id = self._find_id + 1\n"
              "  return self._find_id\nend\n\nfunction Picker:find()\n  local find_id = self:_next_find_id()\n"
              "  return find_id\nend\n\nreturn Picker\n")
    units = units_of("lua/telescope/pickers.lua", source)
    assert {("Picker._next_find_id", 3, 6), ("Picker.find", 8, 11)} <= {(u.name, u.start_line, u.end_line)
                                                                       for u in units}
    memory = RepoMemory()
    memory.put_file("lua/telescope/pickers.lua", "a", units)
    assert memory.search(read_code_query("Picker:find"), 1)[0].unit.name == "Picker.find"
    assert ("status", "open") not in read_code_query("the status:open filter").pairs


def test_a_lua_table_of_functions_is_a_definition_and_init_lua_its_package() -> None:
    """telescope's actions are `actions.select_vertical = { pre = ..., action = function(prompt_bufnr) ... end }`
    in lua/telescope/actions/init.lua: "no definition is named actions.select_vertical", and 18 functions named
    `action` of nothing. A file's own table holding a function is a definition (a table of values is data), and an
    `init.lua` names its folder's package, as `require("telescope.actions")` loads it."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("local actions = {}\n\nactions.select_vertical = {\n  pre = append_to_history,\n"
              "  action = function(prompt_bufnr)\n    return select(prompt_bufnr, 'vertical')\n  end,\n}\n\n"
              "actions.defaults = {\n  layout = 'vertical',\n}\n\nreturn actions\n")
    path = "lua/telescope/actions/init.lua"
    units = {(u.name, u.kind, u.start_line, u.end_line) for u in units_of(path, source)}
    assert {("actions.select_vertical", "table", 3, 4), ("actions.select_vertical.action", "function", 5, 7),
            ("telescope.actions", "module", 10, 14)} <= units, units
    memory = RepoMemory()
    memory.put_file(path, "a", units_of(path, source))
    assert memory.search(read_code_query("actions.select_vertical"), 1)[0].unit.name == "actions.select_vertical"
    assert module_name("lua/telescope/actions/init.lua") == "telescope.actions" and module_name("pkg/init.py") \
        == "pkg.init", "a Lua package's init.lua only"


def test_a_long_run_of_module_code_is_shown_around_the_line_the_search_matches() -> None:
    """A module's code outside every definition is one unit: Express's response.js was 900 lines of it, shown from
    its imports, so `res.redirect` (line 815) never reached the agent. Such a run is now focused on its line that
    holds the most of the request's words (shown around it by clients that ask for windows); of two such lines
    alike, the one among more of the request's words."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = "".join(f"var dep{i} = require('dep{i}');\n" for i in range(40))
    source += "var redirectStatus = statusFor('Location header', 302);\n" + "var tail = 1;\n" * 5
    memory = RepoMemory()
    memory.put_file("lib/response.js", "a", units_of("lib/response.js", source))
    hits = memory.search(read_code_query("redirect Location header"), 1, focused=True)
    assert hits[0].unit.kind == "module" and hits[0].focus == 41, hits
    short = memory.search(read_code_query("dep3 require"), 1, focused=True)
    assert short[0].focus == 0, "a match among its first lines: shown from its start, as before"
    assert memory.search(read_code_query("redirect Location header"), 1)[0].focus == 0, "no windows: not counted"
    assert memory.search(read_code_query("lib/response.js"), 1, focused=True)[0].focus == 0, "a path: its start"

    # one message written twice (nvm's `leads to an infinite loop`, in `nvm use` and in `nvm which`): the line among
    # more of the request's words is the one shown, not the first
    message = '      nvm_err "The alias leads to an infinite loop. Aborting."\n'
    steps = "      step\n" * 30
    use = f"    use)\n{steps}{message}      return 8\n{steps}"
    which = f"    which)\n{steps}{message}      echo \"${{provided_version}}\"\n{steps}"
    nvm = f"nvm() {{\n  case $1 in\n{use}{which}  esac\n}}\n"
    memory.put_file("nvm.sh", "b", units_of("nvm.sh", nvm))
    asked = read_code_query("nvm which: the alias in the infinite loop error message is empty, use provided_version")
    found = memory.search(asked, 1, path_glob="nvm.sh", focused=True)[0]
    assert found.unit.name == "nvm" and found.focus == nvm[: nvm.rindex(message)].count("\n") + 1, found


def test_a_traces_frames_from_an_installed_copy_a_root_cause_and_rubys_builtins() -> None:
    """Found by a second user trial: a traceback through an installed flask (`site-packages/flask/app.py`, a
    checkout's `src/flask/app.py`) pointed at nothing, so its innermost frame came 4th; a JVM trace's root cause
    (`Caused by:`) came after the frames that wrapped it; a Ruby frame labelled with a built-in (`in 'call'`, a
    line of `compile!`) pointed at an unrelated `call`; `View.prototype.lookup` was said to be defined nowhere."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.ranker import frame_targets
    from ctxsieve.ingest.request import read_request

    memory = RepoMemory()
    app = "class Flask:\n" + "".join(f"    def {name}(self):\n" + "        step = 1\n" * 8
                                     for name in ("wsgi_app", "full_dispatch_request", "dispatch_request"))
    memory.put_file("src/flask/app.py", "a", units_of("src/flask/app.py", app))
    site = "/usr/lib/python3.12/site-packages/flask/app.py"
    trace = ("Traceback (most recent call last):\n"
             + "".join(f'  File "{site}", line {line}, in {name}\n    step = 1\n'
                       for line, name in ((3, "wsgi_app"), (12, "full_dispatch_request"), (21, "dispatch_request")))
             + "KeyError: 'user'\n")
    hits = [h.unit.name for h in memory.search(read_code_query(trace), 3)]
    assert hits == ["Flask.dispatch_request", "Flask.full_dispatch_request", "Flask.wsgi_app"], hits

    jvm = ("com.google.gson.JsonSyntaxException: boom\n\tat com.google.gson.Gson.fromJson(Gson.java:932)\n"
           "Caused by: java.lang.IllegalStateException: Expected BEGIN_OBJECT\n"
           "\tat com.google.gson.stream.JsonReader.beginObject(JsonReader.java:507)\n\t... 3 more\n")
    assert [f.function for f in read_request(jvm).frames] == ["beginObject", "fromJson"]

    base = ("class Base\n  def call(env)\n    dup\n  end\n\n  def compile!(verb, path)\n"
            "    block.call\n    wrapper\n  end\nend\n")
    units = units_of("lib/sinatra/base.rb", base)
    ruby = read_code_query("lib/sinatra/base.rb:7:in 'call'\nlib/sinatra/base.rb:3:in 'call'\nboom")
    pointed = [[units[i].name for i in held] for held in frame_targets(ruby, units)]
    assert pointed == [["Base.compile!"], ["Base.call"]], pointed
    job = ("module Job\n  def sidekiq_options(opts = {})\n    opts.merge!(x)\n  end\n\n  def client_push(item)\n"
           "    build_client.push(item)\n  end\nend\n")  # (a trial's trace of sidekiq 7.2 over 8.1: line 3 here is
    jobs = units_of("lib/sidekiq/job.rb", job)  # in sidekiq_options, and the frame names client_push)
    moved = read_code_query("undefined method 'merge' for nil\n/app/gems/sidekiq-7.2.0/lib/sidekiq/job.rb:3:in "
                            "'client_push'\n")
    assert [[jobs[i].name for i in held] for held in frame_targets(moved, jobs)] == [["Job.client_push"]]
    loader = units_of("lib/loader.rb", "class Loader\n  def initialize\n    @a = 1\n  end\n\n  def load(path)\n"
                                       "    File.open(path)\n  end\nend\n")  # (a review: Errno::ENOENT raised in
    opened = read_code_query("lib/loader.rb:7:in `initialize': No such file or directory @ rb_sysopen - config.yml "
                             "(Errno::ENOENT)\n\tfrom lib/loader.rb:7:in `open'\n\tfrom lib/loader.rb:7:in `load'\n")
    assert [[loader[i].name for i in held] for held in frame_targets(opened, loader)] == [["Loader.load"]] * 3, \
        "File.open's `initialize`, a C method's frame at the line calling it, is that line's"

    view = "function View(name) {\n  this.name = name;\n}\n\nView.prototype.lookup = function lookup(name) {\n" \
           "  return name;\n};\n"
    memory.put_file("lib/view.js", "v", units_of("lib/view.js", view))
    asked = read_code_query("View.prototype.lookup")
    assert asked.lookup == frozenset({"View.lookup"}) and memory.defines("View.lookup")
    assert memory.search(asked, 1)[0].unit.name == "View.lookup"


def test_a_pasted_traces_message_is_read_and_a_frame_many_files_meet_points_at_none() -> None:
    """zod's error printed with Node frames: its message (`"message": "Invalid input: expected string, received
    number"`) was not read, the trace having more than 20 words; the Rust panic's `src/main.rs:20`, which every
    example's `src/main.rs` meets, pointed at each example's line 20 in a trace."""
    from ctxsieve.ingest.coderank.ranker import frame_targets

    zod = ('ZodError: [\n  {\n    "expected": "string",\n    "code": "invalid_type",\n    "path": ["name"],\n'
           '    "message": "Invalid input: expected string, received number"\n  }\n]\n'
           "    at new ZodError (file:///app/node_modules/zod/v4/core/errors.js:12:5)\n"
           "    at parse (file:///app/node_modules/zod/v4/core/parse.js:31:11)\n"
           "    at main (file:///app/src/index.ts:9:3)\n")
    query = read_code_query(zod)
    assert query.trace and "invalid input: expected string, received number" in query.phrases, query.phrases
    units = [u for example in ("readme", "hello") for u in units_of(
        f"examples/{example}/src/main.rs", "".join(f"fn s{i}() {{}}\n" for i in range(19)) + "fn main() {\n}\n")]
    panic = read_code_query("thread 'main' panicked at src/main.rs:20:1:\nboom went the route\n")
    assert panic.trace and frame_targets(panic, units) == [[]], frame_targets(panic, units)


def test_a_short_searchs_second_definition_of_a_file_outranks_weak_files() -> None:
    """"how does c.Negotiate pick which format to render": gin's `Context.NegotiateFormat`, second in the whole
    repository by score, never showed even at k 50, behind every other file's best (each file's best first)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("context.go", "c", units_of("context.go", (
        "package gin\n\nfunc (c *Context) Negotiate(code int, config Negotiate) {\n\tformat := c.NegotiateFormat()\n"
        "\trender(format)\n}\n\nfunc (c *Context) NegotiateFormat(offered ...string) string {\n"
        "\treturn negotiate format accept header render\n}\n")))
    for i in range(12):
        memory.put_file(f"other{i}.go", str(i), units_of(f"other{i}.go", (
            f"package gin\n\nfunc helper{i}(w Writer) {{\n\trender(w)\n\tstep{i}()\n\tmore{i}()\n}}\n")))
    names = [h.unit.name for h in memory.search(read_code_query("negotiate which format to render"), 5)]
    assert names[:2] == ["Context.NegotiateFormat", "Context.Negotiate"] or names[:2] == [
        "Context.Negotiate", "Context.NegotiateFormat"], names


def test_the_reviews_cases_of_traces_and_javascript_read_as_they_are() -> None:
    """A review of this stop's change found: a callback's value inside a function read as a definition (`const names
    = items.map(...)` split `render`), `module.exports = function createApplication` named `module.exports`, a
    license header taken for the first function's doc comment, a one-line issue naming `adapters.py:412` taken for a
    pasted trace, a chained trace's root cause not first, a frame in a function's later part moved to its first part,
    another installed package's `lib/index.js` and Go's own `net/http/server.go` met as the repository's files."""
    from ctxsieve.ingest.coderank.ranker import frame_targets
    from ctxsieve.ingest.request import read_request

    js = ("/**\n * @fileoverview the app\n * @license MIT\n */\n\nfunction render(items) {\n"
          "  const names = items.map((item) => item.name);\n  return names;\n}\n\n"
          "module.exports = function createApplication() {\n  return 1;\n};\n")
    units = {(u.name, u.start_line, u.end_line) for u in units_of("lib/app.js", js) if u.kind == "function"}
    assert units == {("render", 6, 9), ("createApplication", 11, 13)}, units
    issue = ("When I send a request through my proxy I see an error raised in requests/adapters.py:412 and the "
             "connection is retried again and again until the pool is exhausted, which makes every later request "
             "hang for minutes; this started after upgrading and did not happen with the previous version at all.")
    assert not read_code_query(issue).trace
    chained = ('Traceback (most recent call last):\n  File "db.py", line 5, in fetch\n    raise KeyError\nKeyError\n\n'
               "The above exception was the direct cause of the following exception:\n\n"
               'Traceback (most recent call last):\n  File "api.py", line 9, in handle\n    load()\n'
               '  File "api.py", line 3, in load\n    raise RuntimeError\n    ^^^^^^^^^^^^^^^^^^\nRuntimeError: boom\n')
    assert [f.function for f in read_request(chained).frames] == ["fetch", "load", "handle"]
    assert read_code_query(chained).trace, "the carets are no words"
    jvm = ("A: outer\n\tat a.b.Outer.run(Outer.java:1)\nCaused by: B: middle\n\tat a.b.Middle.go(Middle.java:2)\n"
           "Caused by: C: root\n\tat a.b.Root.start(Root.java:3)\n")
    assert [f.function for f in read_request(jvm).frames] == ["start", "go", "run"]
    nested = ("def outer(x):\n    def inner(y):\n        return y\n\n    total = inner(x)\n    return total\n")
    parts = units_of("sorting.py", nested)
    frame = read_code_query('Traceback (most recent call last):\n  File "sorting.py", line 6, in outer\nboom')
    assert [[(parts[i].start_line, parts[i].rest) for i in held] for held in frame_targets(frame, parts)] == [
        [(5, True)]]
    index = units_of("lib/index.js", "function other() {\n  return 1;\n}\n" * 5)
    elsewhere = read_code_query("TypeError: x is undefined\n"
                                "    at parse (/app/node_modules/other-lib/lib/index.js:4:3)")
    assert frame_targets(elsewhere, index) == [[]]
    assert not read_request("\t/usr/local/go/src/net/http/server.go:2136 +0x1\n").frames
    adapter = units_of("lib/adapters/http.js", "export default isSupported && function httpAdapter(config) {\n"
                       "  req.setTimeout(timeout, function handleRequestTimeout() {\n    reject(timedOut());\n  });\n"
                       "  return next(req);\n}\n")
    core = units_of("lib/core/Axios.js", "class Axios {\n  request(config) {\n    return dispatch(config);\n  }\n}\n")
    root = units_of("index.js", "import axios from './lib/axios.js';\n\nexport default axios;\n")
    frames = ("    at RedirectableRequest.handleRequestTimeout (/app/node_modules/axios/lib/adapters/http.js:3:5)\n"
              "    at Timeout.<anonymous> (/app/node_modules/follow-redirects/index.js:2:12)\n"
              "    at Axios.request (/app/node_modules/axios/lib/core/Axios.js:3:5)\n"
              "    at async main (/app/index.js:3:3)\n")
    units = [*adapter, *core, *root]
    trace = read_code_query(f"AxiosError: timeout of 1000ms exceeded\n{frames}")
    assert [[units[i].name for i in held] for held in frame_targets(trace, units)] == [
        ["httpAdapter"], [], ["Axios.request"], []], \
        "a callback its definition writes is the repository's; another package's file and the program's own are not"
    for unnamed in (frames.replace("Axios.request", "Axios.<anonymous>"),  # (no frame names its definition here:
                    frames.replace("/app/node_modules/axios/lib/core", "/home/me/axios/lib/core")):  # or a checkout)
        held = frame_targets(read_code_query(f"AxiosError: timeout\n{unnamed}"), units)
        assert [units[i].name for i in held[3]] == ["index"], "no installed copy is shown to be the repository"
    dependency = read_code_query("Error: boom\n    at next (/app/node_modules/router/lib/adapters/http.js:5:3)\n"
                                 "    at Axios.request (/app/node_modules/axios/lib/core/Axios.js:3:5)\n")
    assert [[units[i].name for i in held] for held in frame_targets(dependency, units)] == [[], ["Axios.request"]], \
        "a line that calls the frame's function is not its definition: another package's file"


def test_a_files_imports_alone_count_less_than_its_code() -> None:
    """axum's `strip_prefix.rs:1-8`, eight `use` lines, came first for "where does axum strip the prefix of the uri
    for nested routers", the `strip_prefix` function fifth: the file's name held the search's words and the short
    run of imports held `Uri` and `Request`. A module run of imports alone counts for less, as one of comments does."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.kinds.code import only_imports

    imports = ("use http::{Request, Uri};\nuse crate::routing::{nested::NestedRouters, Prefix};\nuse std::{\n"
               "    sync::Arc,\n    task::{Context, Poll},\n};\nuse tower::Layer;\n\n")
    code = ("pub(super) fn strip_prefix(uri: &Uri, prefix: &str) -> Option<Uri> {\n"
            "    let path = uri.path().strip_prefix(prefix)?;\n    let query = uri.query();\n"
            "    let scheme = uri.scheme();\n    Some(rebuild(uri, path, query, scheme))\n}\n\n"
            "fn rebuild(uri: &Uri, path: &str) -> Uri {\n    let mut parts = uri.clone().into_parts();\n"
            "    parts.path_and_query = path.parse().ok();\n    Uri::from_parts(parts).unwrap()\n}\n")
    memory = RepoMemory()
    memory.put_file("axum/src/routing/strip_prefix.rs", "a", units_of("axum/src/routing/strip_prefix.rs",
                                                                       imports + code))
    found = memory.search(read_code_query("where does axum strip the prefix of the uri for nested routers"), 3)
    assert [h.unit.name for h in found][:1] == ["strip_prefix"], [(h.unit.name, h.unit.kind) for h in found]
    assert any(h.unit.imports_only for h in found), "still found, lower"
    assert only_imports(imports, "rust") and only_imports("from a import (\n    b,\n)\nimport os\n", "python")
    assert only_imports('package main\n\nimport (\n\t"fmt"\n)\n', "go")
    assert only_imports('import { a,\n  b } from "./x";\nconst y = require("y");\n', "typescript")
    assert not only_imports("import os\nTIMEOUT = 5\n", "python") and not only_imports("\n", "python")
    assert not only_imports('"use strict";\nmodule.exports = { a };\n', "javascript")
    head = ("#region License\n// Copyright (c) 2007 James Newton-King\n#endregion\n\nusing System;\n"
            "#if HAVE_BIG_INTEGER\nusing System.Numerics;\n#endif\n")
    assert only_imports(head, "csharp") and only_imports("namespace Newtonsoft.Json\n{", "csharp"), \
        "a trial's Json.NET: its license region, the `#if` around an import, a namespace's brace"
    assert only_imports("namespace fmt {\n", "cpp") and not only_imports("}\n", "csharp")
    assert only_imports("'use strict';\n\nimport utils from './utils.js';\n", "javascript"), "axios's file heads"
    assert not only_imports("#if FMT_USE_X\n#include <x>\n#endif\n", "cpp"), "a C header's #if: its platform"
    assert not only_imports("#if DEBUG\nusing System;\nstatic int x = 1;\n#endif\n", "csharp")


def test_a_module_run_of_no_word_counts_less() -> None:
    """axios's `xhr.js:92`, a `}` alone between two functions, came second for "how is the adapter chosen": its only
    words were its path's (`adapters`), the shortest unit holding them, and its vector its path's."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("function dispatchXhrRequest(config) {\n  request.onabort = function handleAbort() {\n"
              "    reject(new Error('aborted'));\n  };\n  if (config.cancelToken) {\n    config.cancelToken.x();\n"
              "  }\n}\n}\n\nfunction chooseAdapter(names) {\n  // the adapter is chosen by its name\n"
              "  return names.map(pick)[0];\n}\n")
    memory = RepoMemory()
    memory.put_file("lib/adapters/xhr.js", "a", units_of("lib/adapters/xhr.js", source))
    found = memory.search(read_code_query("how is the adapter chosen"), 5)
    assert found[0].unit.name == "chooseAdapter", [(h.unit.name, h.unit.text) for h in found]
    wordless = [u for u in units_of("lib/adapters/xhr.js", source) if u.kind == "module"]
    assert wordless and all(factor_of(u) < 1.0 for u in wordless), wordless


def test_code_commented_out_counts_less_than_code_that_runs_but_is_found_by_its_name() -> None:
    """gin's tree_test.go keeps a test commented out (`/*func TestTreeDuplicateWildcard(...) {...}*/`): it came first
    for "tests for duplicate wildcard in the tree", above the live tests. A run of comments counts for less, but a
    look-up of a name it holds still finds it; a C directive (`#define`) is code, Python's `#` a comment."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.kinds.code import only_comments

    live = ("package gin\n\nimport \"testing\"\n\nfunc TestTreeDoubleWildcard(t *testing.T) {\n"
            "\ttree := &node{}\n\ttree.addRoute(\"/:id/:name\", nil) // a wildcard test\n}\n\n")
    dead = ("/*func TestTreeDuplicateWildcard(t *testing.T) {\n\ttree := &node{}\n"
            "\troutes := [...]string{\"/:id/:name/:id\"} // duplicate wildcard in the tree\n}*/\n\n")
    memory = RepoMemory()
    memory.put_file("tree_test.go", "a", units_of("tree_test.go", live + dead + live.replace("Double", "Single")
                                                  .replace("package gin\n\nimport \"testing\"\n\n", "")))
    found = memory.search(read_code_query("tests for duplicate wildcard in the tree"), 3)
    assert found[0].unit.name == "TestTreeDoubleWildcard", [(h.unit.name, h.unit.kind) for h in found]
    assert any(h.unit.commented_out for h in found), "still found, lower"
    named = memory.search(read_code_query("TestTreeDuplicateWildcard"), 3)
    assert any(h.unit.commented_out for h in named), [(h.unit.name, h.unit.kind) for h in named]
    assert only_comments("# a note\n\n#   more\n", "python") and not only_comments("#define X 1\n", "c")
    assert only_comments("/* a\n * b\n */\n// c\n", "c") and not only_comments("/* a */ int x;\n", "c")
    assert not only_comments("/* a\n*/ int x;\n", "go") and not only_comments("\n\n", "go")
    assert not line_unit("pkg/a.py", "# frobnicate the widget first", 3).commented_out, "a grep's comment line"
    magic = units_of("lib/faraday/utils.rb", "# frozen_string_literal: true\n\nmodule Faraday\n  def x; end\nend\n")[0]
    assert (magic.kind, magic.commented_out) == ("module", True), "a trial's hits held Ruby's magic comment alone"
    assert not units_of("a.py", "# the widget's timeout\nTIMEOUT = 3\n")[0].commented_out


def test_a_rust_backtrace_is_a_trace_its_functions_read_and_its_crate_folder_kept() -> None:
    """RUST_BACKTRACE=1's frames: a numbered line naming the function (`Router<S>::route::{{closure}}`), the place on
    the next in Cargo's copy of the crate (`.../index.crates.io-.../axum-0.8.1/src/routing/mod.rs`). Its function
    lines were read as words (a backtrace was no trace), its functions were not read, the toolchain's own files were
    places, and `axum-extra/src/routing/mod.rs` made the crate's `src/routing/mod.rs` ambiguous (so no frame pointed
    anywhere)."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.request import read_request

    memory = RepoMemory()
    routing = ("pub struct Router<S> {\n    inner: S,\n}\n\nimpl<S> Router<S> {\n"
               + "".join(f"    pub fn helper_{i}(self) -> Self {{\n        self\n    }}\n" for i in range(4))
               + "    pub fn route(self, path: &str) -> Self {\n        self.inner.route(path);\n        self\n"
               "    }\n}\n")
    extra = "".join(f"pub fn extra_{i}(path: &str) {{\n    route(path);\n}}\n" for i in range(8))
    memory.put_file("axum/src/routing/mod.rs", "a", units_of("axum/src/routing/mod.rs", routing))
    memory.put_file("axum-extra/src/routing/mod.rs", "b", units_of("axum-extra/src/routing/mod.rs", extra))
    cache = "/home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/axum-0.8.1/src/routing/mod.rs"
    trace = ("thread 'main' panicked at src/main.rs:12:15:\nOverlapping method route. Handler for `GET /users` "
             "already exists\nstack backtrace:\n   0: rust_begin_unwind\n             at /rustc/90b35a6239c3d8bdab"
             "c530a6a0816f7ff89a0aaf/library/std/src/panicking.rs:665:5\n"
             + "".join(f"   {i}: core::panicking::panic_fmt_{i}\n             at /rustc/90b35a6239c3d8bdabc530a6a08"
                       f"16f7ff89a0aaf/library/core/src/panicking.rs:{70 + i}:14\n" for i in range(1, 5))
             + f"   5: axum::routing::Router<S>::route::{{{{closure}}}}\n             at {cache}:19:9\n"
             f"   6: <axum::routing::Router<S> as tower::Service<R>>::call::h5d2e0a1b2c3d4e5f\n"
             f"             at {cache}:3:1\n   7: myapp::main\n             at ./src/main.rs:12:15\n"
             "note: Some details are omitted, run with `RUST_BACKTRACE=full` for a verbose backtrace.\n")
    frames = read_request(trace).frames
    assert [(f.path, f.line, f.function) for f in frames][:3] == [
        ("src/main.rs", 12, None), ("axum/src/routing/mod.rs", 19, "route"), ("axum/src/routing/mod.rs", 3, "call")]
    assert not any("rustc" in f.path for f in frames), frames
    query = read_code_query(trace)
    assert query.trace, "the function lines are the trace's, not words besides it"
    assert memory.search(query, 1)[0].unit.name == "Router.route", memory.search(query, 3)


def test_a_look_up_shows_the_code_writing_the_name_after_its_definitions() -> None:
    """flask's `Flask` looked up: after its definition came one-line runs of `src/flask/cli.py` that share only their
    folder's word with it (`run_command.params.insert(0, _debug_option)`), before any code that uses `Flask`."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("src/flask/app.py", "a", units_of("src/flask/app.py", "class Flask:\n    \"\"\"The app.\"\"\"\n"
                                                      + "".join(f"    def m{i}(self):\n        return {i}\n"
                                                                for i in range(6))))
    cli = ("import click\n\nrun_command.params.insert(0, _debug_option)\n\n\ndef make_app(info):\n"
           "    \"\"\"The application the command line runs.\"\"\"\n    app = Flask(info.name)\n"
           "    app.config.update(\n"
           "        debug=info.debug, testing=info.testing, secret=info.secret, root=info.root, static=info.static,\n"
           "    )\n    return app\n\n\nversion = click.Option(['--version'])\n")
    memory.put_file("src/flask/cli.py", "b", units_of("src/flask/cli.py", cli))
    names = [h.unit.name for h in memory.search(read_code_query("Flask"), 3)]
    assert names[:2] == ["Flask", "make_app"], names


def test_a_rust_impl_for_a_slice_is_named_by_its_element() -> None:
    """`impl<T: Serialize> Serialize for [T]` was named `?` (the head line said `impl ?`)."""
    text = ("impl<T: Serialize> Serialize for [T] {\n    fn serialize(&self) {}\n}\n\n"
            "impl<'a> Deserialize<'a> for &'a [u8] {\n    fn deserialize() {}\n}\n")
    assert {(u.name, u.kind) for u in units_of("src/ser/impls.rs", text)} >= {
        ("T", "impl"), ("T.serialize", "method"), ("u8", "impl"), ("u8.deserialize", "method")}


def test_each_type_of_a_go_group_is_a_definition_of_its_own() -> None:
    """gin's `type (\n\tformBinding struct{}\n\tformPostBinding struct{}\n...)` was one unit named `?`, and a search
    for `formPostBinding` said no definition had the name; a lone `type One struct` stays whole, its comment too. A
    struct and an interface are of those kinds, as Go writes them (`type IRoutes` did not say which)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    text = ("package binding\n\ntype (\n\t// formBinding binds a form.\n\tformBinding struct{}\n"
            "\tformPostBinding struct {\n\t\tA int\n\t}\n\tAlias = int\n)\n\n// One is one.\ntype One struct {\n"
            "\tA int\n}\n\ntype IRoutes interface {\n\tUse() IRoutes\n}\n\ntype HandlerFunc func(*Context)\n\n"
            "type (\n\tLone struct{}\n)\n")
    units = units_of("binding/form.go", text)
    assert {(u.name, u.kind, u.start_line, u.end_line) for u in units if u.kind != "module"} == {
        ("formBinding", "struct", 4, 5), ("formPostBinding", "struct", 6, 8), ("Alias", "type", 9, 9),
        ("One", "struct", 12, 15), ("IRoutes", "interface", 17, 19), ("HandlerFunc", "type", 21, 21),
        ("Lone", "struct", 24, 24)}  # (a group of one type too)
    memory = RepoMemory()
    memory.put_file("binding/form.go", "a", units)
    assert memory.defines("formPostBinding") and \
        memory.search(read_code_query("formPostBinding"), 1)[0].unit.name == "formPostBinding"


def test_a_rust_trait_impls_method_says_which_impl_it_is_in(tokenizer) -> None:  # type: ignore[no-untyped-def]
    """axum's `Json` has `from_request` in `impl FromRequest` and in `impl OptionalFromRequest` (a type's `Display` and
    `Debug` both have `fmt`): two heads `Json.from_request` a model could not tell apart. A method of a trait impl
    carries the impl's header, and its head line says it; a method of the type's own impl says nothing more."""
    from ctxsieve_client.code_search import render_answer

    text = ("impl<T, S> FromRequest<S> for Json<T>\nwhere\n    T: DeserializeOwned,\n{\n"
            "    async fn from_request(req: Request) -> Self {\n        todo!()\n    }\n}\n\n"
            "impl<T, S> OptionalFromRequest<S> for Json<T> {\n    async fn from_request(req: Request) -> Self {\n"
            "        todo!()\n    }\n}\n\nimpl<T> Json<T> {\n    fn from_bytes(bytes: &[u8]) -> Self {\n"
            "        todo!()\n    }\n}\n")
    units = [u for u in units_of("axum/src/json.rs", text) if u.kind == "method"]
    methods = [(u.name, u.start_line, u.within) for u in units]
    assert methods == [("Json.from_request", 5, "impl<T, S> FromRequest<S> for Json<T>"),
                       ("Json.from_request", 11, "impl<T, S> OptionalFromRequest<S> for Json<T>"),
                       ("Json.from_bytes", 17, "")], methods
    from ctxsieve.indexes.repos.memory import Hit
    from ctxsieve.indexes.repos.results import pack_hits

    shown = pack_hits([Hit(u, 1.0) for u in units], tokenizer.count, 2000, windows=True)
    answer = render_answer("axum", shown, 3, "lexical")
    assert "axum/src/json.rs:5-7 method Json.from_request (in impl<T, S> FromRequest<S> for Json<T>)\n" in answer
    assert "axum/src/json.rs:11-13 method Json.from_request (in impl<T, S> OptionalFromRequest<S> for Json<T>)\n" \
        in answer and "axum/src/json.rs:17-19 method Json.from_bytes\n" in answer, answer
    from ctxsieve.indexes.repos.records import file_point, units_of_point

    stored = file_point("t", "axum", "axum/src/json.rs", "h", text, units_of("axum/src/json.rs", text))
    assert units_of_point(stored.payload) == units_of("axum/src/json.rs", text), "kept as the file is stored"


def test_a_rust_blanket_impl_is_named_by_its_trait() -> None:
    """axum's `impl<F, Fut, Res, S> Handler<((),), S> for F` was `impl F` and its method `F.call`: a type parameter
    names nothing, so a blanket impl is its trait's (`Handler::call`, as Rust calls it); a type is still its own."""
    text = ("impl<F, Fut, S> Handler<((),), S> for F\nwhere\n    F: Clone,\n{\n    fn call(self) {}\n}\n\n"
            "impl<T> From<T> for Wrapper {\n    fn from(t: T) -> Self {}\n}\n")
    assert [(u.name, u.kind) for u in units_of("axum/src/handler/mod.rs", text)] == [
        ("Handler", "impl"), ("Handler.call", "method"), ("Wrapper", "impl"), ("Wrapper.from", "method")]


def test_a_look_up_by_a_module_qualified_name_finds_the_definition_it_names() -> None:
    """`click.core.Option` (as an import writes it) put the class first but said no definition had the name; a Java
    class's full name (`org.apache.commons.lang3.StringUtils.isBlank`) too."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("src/click/core.py", "a", units_of("src/click/core.py", "class Option:\n    def full(self):\n"
                                                       "        return 1\n"))
    memory.put_file("src/click/types.py", "b", units_of("src/click/types.py", "class Option:\n    pass\n"))
    java = "package org.apache.commons.lang3;\n\npublic class StringUtils {\n    public static boolean isBlank() {\n" \
           "        return true;\n    }\n}\n"
    path = "src/main/java/org/apache/commons/lang3/StringUtils.java"
    memory.put_file(path, "c", units_of(path, java))
    for asked, where in (("click.core.Option", "src/click/core.py"), ("core.Option.full", "src/click/core.py"),
                         ("org.apache.commons.lang3.StringUtils.isBlank", path), ("lang3.StringUtils", path)):
        assert memory.defines(asked, None), asked
        assert memory.search(read_code_query(asked), 1)[0].unit.path == where, asked
    assert not memory.defines("click.parser.Option", None), "another module's"


def test_a_node_frame_in_compiled_javascript_finds_its_typescript_source() -> None:
    """A Node trace names the `.js` an installed package ships, as an ES module's URL
    (`file:///app/node_modules/zod/v4/core/parse.js:27:15`); the repository holds the `.ts` it was compiled from. The
    frame was not read (the URL), then met no file: now it points at the definition its function names in the source,
    whose lines are not the compiled file's (no line of it is taken for the frame's, nor said to be missing)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("export const finalize = (x: number): number => {\n  return x;\n};\n\n"
              + "".join(f"export const check{i} = (x: number): number => {{\n  return x + {i};\n}};\n\n"
                        for i in range(12))
              + "export const _parse = (schema: Schema): number => {\n  const result = schema.run();\n"
              "  return result;\n};\n")
    memory = RepoMemory()
    memory.put_file("packages/zod/src/v4/core/parse.ts", "a", units_of("packages/zod/src/v4/core/parse.ts", source))
    memory.put_file("packages/zod/src/v4/core/run.ts", "b", units_of(
        "packages/zod/src/v4/core/run.ts", "export function run(schema: Schema) {\n  return schema.parse();\n}\n"))
    trace = ("ZodError: invalid input\n    at _parse (file:///app/node_modules/zod/v4/core/parse.js:27:15)\n"
             "    at main (file:///app/src/index.js:6:16)\n")
    read = read_code_query(trace)
    assert read.trace and read.frames[0].path == "/app/node_modules/zod/v4/core/parse.js", read.frames
    assert read.frames[0].function == "_parse", read.frames
    first = memory.search(read, 1)[0]
    assert (first.unit.name, first.unit.path) == ("_parse", "packages/zod/src/v4/core/parse.ts"), first
    assert first.focus == 0, "the compiled file's line is not the source's"
    windows = read_code_query(trace.replace("file:///app/", "file:///C:/app/"))  # (the drive's `:` had ended it)
    assert windows.frames[0] == replace(read.frames[0], path="/app/node_modules/zod/v4/core/parse.js"), windows
    spaced = read_code_query(trace.replace("file:///app/", "file:///home/my%20app/"))  # (a URL's escape: it had
    assert spaced.frames[0].path == "/home/my app/node_modules/zod/v4/core/parse.js", spaced  # ended the path)
    place = read_code_query("node_modules/zod/v4/core/parse.js:27")  # (no name: its line cannot be placed)
    assert memory.missing(place) == ("node_modules/zod/v4/core/parse.js:27",) and memory.between(place) == ()
    assert memory.missing(read_code_query("node_modules/zod/v4/core/gone.js:27")) == (
        "node_modules/zod/v4/core/gone.js:27",)


def test_a_place_on_a_definitions_closing_line_is_that_definition() -> None:
    """A trial's `axum/src/json.rs:114`, the `}` closing an impl whose one method is a unit of its own, was answered
    with that method and the next impl: the impl the line closes was not shown. Its first part now comes first, the
    method above it next; a blank line between two methods still gets the methods either side."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("pub struct Json<T>(pub T);\n\n"
              "impl<T, S> FromRequest<S> for Json<T>\nwhere\n    T: DeserializeOwned,\n{\n"
              "    type Rejection = JsonRejection;\n\n"
              "    fn from_request(req: Request) -> Self {\n        Self::from_bytes(req)\n    }\n\n"
              "    fn other(req: Request) -> Self {\n        Self::from_bytes(req)\n    }\n}\n\n"
              "impl<T> Display for Json<T> {\n    fn fmt(&self) -> String {\n        String::new()\n    }\n}\n")
    assert source.split("\n")[15] == "}"  # line 16 closes the first impl; 12 is blank between its two methods
    memory = RepoMemory()
    memory.put_file("src/json.rs", "a", units_of("src/json.rs", source))
    named = [(h.unit.kind, h.unit.start_line, h.unit.name) for h in memory.search(read_code_query("src/json.rs:16"), 2)]
    assert named == [("impl", 3, "Json"), ("method", 13, "Json.other")], named
    between = memory.search(read_code_query("src/json.rs:12"), 2)
    assert {h.unit.name for h in between} == {"Json.from_request", "Json.other"}, between
    assert memory.between(read_code_query("src/json.rs:16")) == ()


def test_a_frames_file_is_one_as_long_as_its_frames_go() -> None:
    """gdb's frames in `/usr/include/nlohmann/json.hpp` (the installed single header) at lines past the end of the
    checkout's `include/nlohmann/json.hpp` were pointed into the latter, at unrelated functions: the generated
    `single_include/nlohmann/json.hpp` is the file as long as they go."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    def header(count: int, name: str) -> str:
        return "".join(f"int {name}_{i}(int a) {{\n    int b = a;\n    return b + {i};\n}}\n\n" for i in range(count))

    memory = RepoMemory()
    memory.put_file("include/nlohmann/json.hpp", "a", units_of("include/nlohmann/json.hpp", header(10, "split")))
    memory.put_file("single_include/nlohmann/json.hpp", "b", units_of("single_include/nlohmann/json.hpp",
                                                                      header(60, "amalgamated")))
    trace = ("Program received signal SIGABRT, Aborted.\n"
             "#0  0x00007ffff7a42e2c in __pthread_kill_implementation () from /lib/x86_64-linux-gnu/libc.so.6\n"
             "#1  0x0000555555556f1a in nlohmann::basic_json::at (this=0x7fffffffd8f0) at /usr/include/nlohmann/"
             "json.hpp:12\n#2  0x0000555555557a3b in nlohmann::detail::from_json (j=...) at /usr/include/nlohmann/"
             "json.hpp:232\n#3  0x0000555555555c10 in main () at main.cpp:9\n")
    found = memory.search(read_code_query(trace), 2)
    assert [(h.unit.path, h.unit.name) for h in found] == [
        ("single_include/nlohmann/json.hpp", "amalgamated_2"), ("single_include/nlohmann/json.hpp", "amalgamated_46")]


def test_php_and_dotnet_traces_name_their_functions() -> None:
    """PHP's `#0 /app/vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php(158): ...CurlFactory::createRejection(...)`
    was no frame (every answer was CurlFactory.php's by its words), and a .NET frame of a generic method
    (`Deserialize[T](...)`) was dropped. A PHP frame's line is in the function the next frame calls."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.request import read_request

    php = ("PHP Fatal error:  Uncaught GuzzleHttp\\Exception\\ConnectException: cURL error 28: timed out in "
           "/app/vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php:9\nStack trace:\n"
           "#0 /app/vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php(4): GuzzleHttp\\Handler\\CurlFactory::"
           "createRejection(Object(GuzzleHttp\\Handler\\EasyHandle), Array)\n"
           "#1 /app/vendor/guzzlehttp/guzzle/src/Middleware.php(3): GuzzleHttp\\Handler\\CurlFactory::finish(Array)\n"
           "#2 /app/vendor/guzzlehttp/guzzle/src/Client.php(3): GuzzleHttp\\Middleware::GuzzleHttp\\{closure}(Array)\n"
           "#3 /app/src/Fetcher.php(42): GuzzleHttp\\Client->send(Object(GuzzleHttp\\Psr7\\Request), Array)\n"
           "#4 {main}\n  thrown in /app/vendor/guzzlehttp/guzzle/src/Handler/CurlFactory.php on line 9\n")
    assert [(f.path.rsplit("/", 1)[-1], f.line, f.function) for f in read_request(php).frames] == [
        ("CurlFactory.php", 9, "createRejection"), ("CurlFactory.php", 4, "finish"), ("Middleware.php", 3, None),
        ("Client.php", 3, "send"), ("Fetcher.php", 42, None)]
    memory = RepoMemory()
    factory = ("<?php\nclass CurlFactory\n{\n    public static function finish($easy) {\n        return 1;\n    }\n\n"
               "    private static function createRejection($easy) {\n        throw new ConnectException('x');\n"
               "    }\n}\n")
    memory.put_file("src/Handler/CurlFactory.php", "a", units_of("src/Handler/CurlFactory.php", factory))
    client = "<?php\nclass Client\n{\n    public function send($request) {\n        return 1;\n    }\n}\n"
    memory.put_file("src/Client.php", "b", units_of("src/Client.php", client))
    names = [h.unit.name for h in memory.search(read_code_query(php), 3)]
    assert names == ["CurlFactory.createRejection", "CurlFactory.finish", "Client.send"], names
    dotnet = ("System.IO.EndOfStreamException: Attempted to read past the end of the stream.\n   at MessagePack."
              "MessagePackSerializer.Deserialize[T](MessagePackReader& reader) in /_/src/MessagePackSerializer.cs:"
              "line 235\n   at MyApp.Client.<SendAsync>d__12.MoveNext() in C:\\src\\MyApp\\Client.cs:line 31\n")
    assert [(f.line, f.function) for f in read_request(dotnet).frames] == [(235, "Deserialize"), (31, "SendAsync")]
    placed = read_code_query("src/RedirectMiddleware.php on line 152")  # (PHP's own words for a place)
    assert placed.at_lines and [(f.path, f.line) for f in placed.frames] == [("src/RedirectMiddleware.php", 152)]
    warned = read_code_query("PHP Warning:  Undefined array key 1 in /app/src/Middleware.php on line 3")
    assert [(f.path, f.line) for f in warned.frames] == [("/app/src/Middleware.php", 3)], warned.frames


def test_a_php_fatal_errors_trace_is_read_in_its_frames_order_after_the_lines_monolog_adds() -> None:
    """A trial pasted Laravel's fatal error from monolog as PHP prints it: `PHP Fatal error:  Uncaught ...`, then the
    two lines monolog adds (`The exception occurred while attempting to log: ...`, `Context: ...`). The first line was
    not read as an error's, so its words and theirs were too many for a trace: `Logger.addRecord` came first, the
    handler that threw not in order (without monolog's line, right)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    vendor = "/var/www/html/vendor/monolog/monolog/src/Monolog"
    trace = ('PHP Fatal error:  Uncaught UnexpectedValueException: The stream or file "/var/www/html/storage/logs/'
             'laravel.log" could not be opened in append mode: Failed to open stream: Permission denied\n'
             "The exception occurred while attempting to log: Undefined variable $user\n"
             f'Context: {{"exception":{{}}}} in {vendor}/Handler/StreamHandler.php:5\nStack trace:\n'
             f"#0 {vendor}/Handler/AbstractProcessingHandler.php(5): Monolog\\Handler\\StreamHandler->write("
             "Object(Monolog\\LogRecord))\n"
             f"#1 {vendor}/Logger.php(5): Monolog\\Handler\\AbstractProcessingHandler->handle("
             "Object(Monolog\\LogRecord))\n"
             "#2 /var/www/html/app/Http/Controllers/UserController.php(22): Monolog\\Logger->addRecord(Array)\n"
             f"#3 {{main}}\n  thrown in {vendor}/Handler/StreamHandler.php on line 5\n")
    assert read_code_query(trace).trace
    memory = RepoMemory()
    for path, owner, method in (("src/Monolog/Handler/StreamHandler.php", "StreamHandler", "write"),
                                ("src/Monolog/Handler/AbstractProcessingHandler.php", "AbstractProcessingHandler",
                                 "handle"), ("src/Monolog/Logger.php", "Logger", "addRecord")):
        body = "log: opened in append mode, stream or file" if method == "addRecord" else "x"
        memory.put_file(path, owner, units_of(path, f"<?php\nclass {owner}\n{{\n    public function {method}($r)\n"
                                                    f"    {{\n        return '{body}';\n    }}\n}}\n"))
    names = [h.unit.name for h in memory.search(read_code_query(trace), 3)]
    assert names == ["StreamHandler.write", "AbstractProcessingHandler.handle", "Logger.addRecord"], names


def test_scala_swift_and_csharp_types_as_each_language_declares_them() -> None:
    """circe's `trait Decoder` and `object Decoder` were no definitions (their members unqualified); Swift's struct,
    enum and extension were all `class`, an extension answered a look-up of its type before the type, and every `let`
    among a function's statements was a definition; C#'s `ref partial struct MessagePackReader` was misread (a
    property named `struct`), its members lost."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    scala = ("trait Decoder[A] extends Serializable { self =>\n  def apply(c: HCursor): Result[A]\n}\n\n"
             "object Decoder {\n  def instance[A](f: HCursor => Result[A]): Decoder[A] = ???\n}\n")
    assert {(u.name, u.kind) for u in units_of("io/circe/Decoder.scala", scala)} >= {
        ("Decoder", "trait"), ("Decoder.apply", "method"), ("Decoder", "object"), ("Decoder.instance", "method")}
    swift = ("public struct HTTPHeaders {\n    var headers: [String] = []\n}\n\npublic enum RetryResult {\n"
             "    case retry\n}\n\nextension Session: RequestDelegate {\n    func retryResult() {\n"
             "        let retryError = 1\n        run { let inner = retryError }\n    }\n}\n\n"
             "open class Session {\n    let rootQueue: DispatchQueue\n}\n")
    units = {(u.name, u.kind) for u in units_of("Source/Session.swift", swift)}
    assert {("HTTPHeaders", "struct"), ("RetryResult", "enum"), ("Session", "extension"),
            ("Session.retryResult", "method"), ("Session", "class")} <= units, units
    assert not any(name.endswith(("retryError", "inner")) for name, _ in units), "locals are no definitions"
    memory = RepoMemory()
    memory.put_file("Source/Session.swift", "s", units_of("Source/Session.swift", swift))
    assert memory.search(read_code_query("Session"), 1)[0].unit.kind == "class", "the type before its extension"
    csharp = ("namespace MessagePack\n{\n#pragma warning disable SA1205\n"
              "    public ref partial struct MessagePackReader\n#pragma warning restore SA1205\n    {\n"
              "        public int ReadInt32() { return 1; }\n    }\n}\n")
    assert {(u.name, u.kind) for u in units_of("MessagePackReader.cs", csharp)} >= {
        ("MessagePack.MessagePackReader", "struct"), ("MessagePack.MessagePackReader.ReadInt32", "method")}


def test_a_possessive_is_no_term() -> None:
    """"how is a request's timeout applied" searched for the term `s` too (every `$s` of a PHP repository)."""
    terms = read_code_query("how is a request's timeout applied").terms
    assert terms[:3] == ("request", "timeout", "applied") and "s" not in terms and "iart" in terms, terms
    assert "s" in read_code_query("the 's' flag").terms, "a quoted letter is still a word"


def test_a_node_trace_with_a_long_message_is_a_trace_and_cpp_what_is_a_message() -> None:
    """redux's "Actions must be plain objects..." runs to 57 words: with its frames it was no pasted trace, and
    `at Object.saveCart [as onSave] (webpack://shop-ui/node_modules/redux/src/bindActionCreators.ts:14:12)` was no
    frame of its own (a bound action creator is an anonymous function: its line says which). C++'s `what():  ...`
    is an error's message."""
    from ctxsieve.ingest.request import read_request

    message = ("Uncaught Error: Actions must be plain objects. Instead, the actual type was: 'Promise'. You may need "
               "to add middleware to your store setup to handle dispatching other values, such as 'redux-thunk' to "
               "handle dispatching functions. See https://redux.js.org/tutorials/fundamentals/part-4-store#middleware "
               "and https://redux.js.org/tutorials/fundamentals/part-6-async-logic for examples.\n")
    trace = message + ("    at dispatch (webpack://shop-ui/node_modules/redux/src/createStore.ts:272:13)\n"
                       "    at Object.saveCart [as onSave] (webpack://shop-ui/node_modules/redux/src/"
                       "bindActionCreators.ts:14:12)\n    at async handleClick (/home/u/shop/src/Cart.tsx:41:11)\n")
    assert [(f.path, f.line, f.function) for f in read_request(trace).frames] == [
        ("node_modules/redux/src/createStore.ts", 272, "dispatch"),
        ("node_modules/redux/src/bindActionCreators.ts", 14, None), ("/home/u/shop/src/Cart.tsx", 41, "handleClick")]
    query = read_code_query(trace)
    assert query.trace and query.phrases[0].startswith("actions must be plain objects"), query
    what = ("terminate called after throwing an instance of 'nlohmann::json_abi_v3_11_3::detail::type_error'\n"
            "  what():  [json.exception.type_error.302] type must be string, but is number\n")
    assert read_code_query(what).phrases == ("type must be string, but is number",)


def test_the_reviews_cases_of_frames_tests_and_bundles() -> None:
    """A review of the frames read this stop: `at new Client (...)` named the class (its one-line head, not the
    constructor holding the line); Cargo's cache outside `~/.cargo` (the Rust image's `/usr/local/cargo`) kept its
    path; a PHP trace's `[internal function]` frames, a chain's `Next` trace and an indented trace shifted or lost
    the frames' functions; a Rust backtrace's inlined frames (an indented symbol, no number) were words. And a test
    framework's call given a named function became a function, `--i;` was a comment, and `-min` in a hand-written
    file's name or `\\r` line ends made it a bundle."""
    from ctxsieve.indexes.repos.walk import minified
    from ctxsieve.ingest.kinds.code import only_comments
    from ctxsieve.ingest.request import read_request

    def frames(text: str) -> list[tuple[str, int, str | None]]:
        return [(f.path.rsplit("/", 1)[-1], f.line or 0, f.function) for f in read_request(text).frames]

    assert frames("TypeError: url is required\n    at new Client (/app/src/client.js:5:30)\n") == [
        ("client.js", 5, None)]
    cargo = "/usr/local/cargo/registry/src/index.crates.io-6f17d22bba15001f/axum-0.8.1/src/routing/mod.rs"
    assert read_request(f"   3: axum::routing::Router<S>::route\n             at {cargo}:19:9\n").frames[0].path \
        == "axum/src/routing/mod.rs"
    php = ("PHP Fatal error:  Uncaught PDOException: could not connect in /app/src/Db.php:10\nStack trace:\n"
           "#0 /app/src/Db.php(10): PDO->__construct('mysql:host=db')\n#1 [internal function]: App\\Db->connect()\n"
           "#2 /app/src/Repo.php(20): call_user_func(Array)\n#3 {main}\n\nNext RuntimeException: unavailable in "
           "/app/src/Repo.php:25\nStack trace:\n    #0 /app/src/Service.php(30): App\\Repo->load()\n"
           "    #1 /app/src/Controller.php(40): App\\Service->run()\n    #2 {main}\n")
    assert frames(php) == [("Db.php", 10, "connect"), ("Db.php", 10, "connect"), ("Repo.php", 20, None),
                           ("Repo.php", 25, "load"), ("Service.php", 30, "run"), ("Controller.php", 40, None)]
    inlined = ("   7: <axum::routing::route::RouteFuture<E> as core::future::future::Future>::poll\n"
               "             at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/axum-0.8.1/src/routing/"
               "route.rs:157:34\n      <tower::util::oneshot::Oneshot<S,Req> as core::future::future::Future>::poll\n"
               "             at /home/u/.cargo/registry/src/index.crates.io-6f17d22bba15001f/tower-0.5.2/src/util/"
               "oneshot.rs:97:42\n")
    assert frames(inlined) == [("route.rs", 157, "poll"), ("oneshot.rs", 97, "poll")]
    assert read_code_query(inlined).trace, "an inlined frame's symbol line is the trace's, no words besides it"
    suite = "describe('parse', function parseSuite() {\n  it('reads numbers', function () {\n    run();\n  });\n});\n"
    assert {(u.name, u.kind) for u in units_of("parse.test.js", suite)} >= {
        ("parse", "test"), ("parse.reads_numbers", "test")}
    assert not only_comments("--i;\n", "javascript") and only_comments("-- a note\n--\n", "lua")
    assert not minified("lib/array-min.js", b"function arrayMin(a) {\n  return Math.min(...a);\n}\n")
    assert minified("js/prettify-min.js", b"var q=null;window.PR_SHOULD_USE_CONTINUATION=!0;\n"
                    + b"(function(){function L(a){var f=a.charCodeAt(0);return f}" * 10 + b"\n"), "drf's, 490 a line"
    assert not minified("mac/app.js", b"function f(){return 1}\r" * 2000), "old Mac line ends are line ends"
    assert not minified("data.js", b"var d = '" + b"0" * 15_000 + b"';\n"), "a 15 KB line is no bundle"


def test_a_c_test_macro_names_its_test() -> None:
    """libuv's every test was `function TEST_IMPL` (C's grammar reads `TEST_IMPL(timer_order) {...}` as a function of
    type TEST_IMPL named `(timer_order)`): each is named by its test now, and a name in parentheses is a name."""
    text = "TEST_IMPL(timer_order) {\n  return 0;\n}\n\nint (plain)(int x) {\n  return x;\n}\n"
    assert {(u.name, u.kind) for u in units_of("test/test-timer.c", text)} == {
        ("timer_order", "function"), ("plain", "function")}


C_HEADER = """\
#ifndef UV_H
#define UV_H
#ifdef __cplusplus
extern "C" {
#endif

typedef struct uv_loop_s uv_loop_t;
typedef void (*uv_close_cb)(uv_handle_t* handle);
typedef enum {
  UV_RUN_DEFAULT = 0,
  UV_RUN_ONCE
} uv_run_mode;

enum {
  UV_PIPE_NO_TRUNCATE = 1u << 0
};

#define UV_HANDLE_FIELDS                                                      \\
  /* public */                                                                \\
  void* data;                                                                 \\
  /* read-only */                                                             \\
  uv_handle_type type;                                                        \\
  /* private */                                                               \\
  UV_HANDLE_PRIVATE_FIELDS                                                    \\

/* The abstract base class of all handles. */
struct uv_handle_s {
  UV_HANDLE_FIELDS
};

struct uv_loop_s {
  void* data;
  union {
    void* unused;
    unsigned int count;
  } active_reqs;
};

#ifdef __cplusplus
extern "C++" {
inline int uv_tty_set_mode(uv_tty_t* handle, int mode) {
  return mode;
}
}
#endif

UV_EXTERN int uv_run(uv_loop_t*, uv_run_mode mode);

#ifdef __cplusplus
}
#endif
#endif /* UV_H */
"""


def test_a_c_header_reads_past_its_commented_macros_and_names_its_typedefs() -> None:
    """libuv's uv.h: a `#define` continued over lines with a comment in them made the grammar read the struct after it
    as a function, and lose the definitions after; a typedef's name
    (`uv_loop_t`, the name its users write) defined nothing, an enum named by its typedef was module code, and a
    struct's anonymous union was a definition of its own."""
    units = spans("include/uv.h", C_HEADER)
    assert units[("uv_handle_s", "struct")] == (26, 29) and units[("uv_loop_s", "struct")] == (31, 37)
    assert units[("uv_loop_t", "type")] == (7, 7) and units[("uv_close_cb", "type")] == (8, 8)
    assert units[("uv_run_mode", "enum")] == (9, 12)
    assert units[("uv_tty_set_mode", "function")] == (41, 43)
    assert not any(kind in ("union", "enum") for name, kind in units if name not in ("uv_run_mode",))
    assert not any("?" in name or name.endswith(".union") for name, _ in units)


def test_gdb_and_apple_crash_frames_name_their_functions_and_are_a_trace() -> None:
    """gdb's `#5 0x... in uv__io_poll (loop=..., timeout=0) at src/unix/linux.c:1552` gave its place but no function,
    its arguments words of the request; an Apple crash report's `1 Alamofire 0x... RetryPolicy.retry(...) + 412
    (RetryPolicy.swift:312)` likewise, so neither was read as a pasted trace (the innermost frame came 5th); an
    Objective-C frame, `-[Class selector:with:]`, names its method."""
    from ctxsieve.ingest.request import read_request

    gdb = ("Program received signal SIGABRT, Aborted.\n"
           "#0  __pthread_kill_implementation (no_tid=0, signo=6, threadid=14073735) at ./nptl/pthread_kill.c:44\n"
           "#1  0x000055555557d3a1 in uv__stream_io (loop=0x5555555a4140 <default_loop_struct>, w=0x7fffffffd9a8, "
           "events=1) at src/unix/stream.c:1199\n#2  0x0000555555583e5c in uv__io_poll (loop=0x5555555a4140 "
           "<default_loop_struct>, timeout=0) at src/unix/linux.c:1552\n"
           "#3  0x00007ffff7a42e2c in nlohmann::basic_json<std::map>::at (this=0x7f) at /usr/include/json.hpp:20913\n")
    assert [(f.line, f.function) for f in read_request(gdb).frames] == [
        (44, "__pthread_kill_implementation"), (1199, "uv__stream_io"), (1552, "uv__io_poll"), (20913, "at")]
    assert read_code_query(gdb).trace
    apple = ("Exception Type:  EXC_BREAKPOINT (SIGTRAP)\nThread 3 Crashed:: Dispatch queue: org.alamofire.session\n"
             "0   libswiftCore.dylib            \t0x00000001a3f2c8e4 _assertionFailure(_:_:file:line:flags:) + 264\n"
             "1   Alamofire                     \t0x0000000104a1c2d4 RetryPolicy.retry(_:for:dueTo:completion:) + 412 "
             "(RetryPolicy.swift:312)\n2   Alamofire                     \t0x00000001049f8c44 closure #1 in "
             "Request.didCompleteTask(_:with:) + 96 (Request.swift:520)\n")
    assert [(f.path, f.line, f.function) for f in read_request(apple).frames] == [
        ("RetryPolicy.swift", 312, "retry"), ("Request.swift", 520, "didCompleteTask")]
    assert read_code_query(apple).trace
    objc = ("Thread 0 Crashed:\n0   AFNetworking                  \t0x0000000100a1b2c4 "
            "-[AFURLSessionManagerTaskDelegate "
            "URLSession:task:didCompleteWithError:] + 120 (AFURLSessionManager.m:210)\n"
            "and +[AFSecurityPolicy(Pins) policyWithPinningMode:] is in the log")
    request = read_request(objc)
    assert [(f.path, f.line, f.function) for f in request.frames] == [("AFURLSessionManager.m", 210, "URLSession")]
    assert {("AFURLSessionManagerTaskDelegate", "URLSession"), ("AFSecurityPolicy", "policyWithPinningMode")} <= \
        request.pairs, "an Objective-C message names its class's method by its selector's first word"


def test_a_modules_main_block_counts_as_an_example() -> None:
    """A user trial over rich: "where is console markup parsed into styles" answered `markup.py`'s `if __name__ ==
    "__main__":` block first, a list of sample markup, above the parser. Such a block counts as an example does; one
    after other module code in its run, or in a script named so, is the module's code."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ('def render(markup):\n    """Render console markup in to a Text instance."""\n    return _parse(markup)\n'
              '\n\nif __name__ == "__main__":  # pragma: no cover\n'
              '    MARKUP = ["[red]Hello World[/red]", "[magenta]Hello [b]World[/b]"]\n'
              '    for markup in MARKUP:\n        print(render(markup), "console markup parsed into styles", markup)\n')
    units = units_of("rich/markup.py", source)
    assert [(u.kind, u.start_line, u.main_guard) for u in units] == [("function", 1, False), ("module", 6, True)]
    assert not units_of("tool.py", "X = 1\nif __name__ == '__main__':\n    main()\n")[0].main_guard
    for after in ("\nREGISTRY = {}\n", "else:\n    register()\n"):  # (runs on import too: the module's code)
        assert not units_of("tool.py", "if __name__ == '__main__':\n    main()\n" + after)[0].main_guard, after
    assert units_of("tool.py", "# run it\r\nif __name__=='__main__':\r\n    main()\r\n")[0].main_guard
    memory = RepoMemory()
    memory.put_file("rich/markup.py", "a", units)
    hits = memory.search(read_code_query("where is console markup parsed into styles"), 2)
    assert [h.unit.name for h in hits] == ["render", "rich.markup"], hits


def test_a_chinese_question_naming_only_the_project_is_read_by_meaning() -> None:
    """A trial's "httpx 的超时配置在哪里定义" was answered from what `httpx`, in nearly every path, picked, and
    another's "jinja 的沙箱在哪里检查属性访问" from the docstrings holding `jinja` (no definition's name). The
    project's own name beside words no definition holds says nowhere; a repository named by a definition's name few
    definitions hold (a checkout in `main/`, `def main()`) is still found by it, and so is any other English word."""
    from ctxsieve.indexes.repos.memory import RepoMemory, own_words

    memory = RepoMemory()
    for name in ("client", "config", "models", "urls", "auth", "decoders", "exceptions", "status", "types", "utils",
                 "content"):
        memory.put_file(f"httpx/_{name}.py", name, units_of(f"httpx/_{name}.py", f"def {name}_of(x):\n    return x\n"))
    memory.put_file("cli.py", "cli", units_of("cli.py", "def main():\n    return 0\n"))  # (1 of 12: too few)
    own = own_words("httpx", "/home/me/src/httpx")
    assert own == {"httpx"} and own_words("app", "/work/main") == {"app", "main"}
    assert memory.names_only_itself(read_code_query("httpx 的超时配置在哪里定义"), own)
    fifth, few = RepoMemory(), RepoMemory()  # (hono's name is in a fifth of its definitions)
    for i in range(20):
        fifth.put_file(f"src/m{i}.ts", str(i), units_of(f"src/m{i}.ts", f"export function f{i}(hono: number) {{\n"
                                                        f"  return hono\n}}\n" if i < 4 else
                                                        f"export function f{i}(x: number) {{\n  return x\n}}\n"))
        few.put_file(f"src/m{i}.ts", str(i), units_of(f"src/m{i}.ts", f"export function f{i}(hono: number) {{\n"
                                                      f"  return hono\n}}\n" if i < 1 else
                                                      f"export function f{i}(x: number) {{\n  return x\n}}\n"))
    asked = read_code_query("hono 如何处理跨域请求")
    assert fifth.names_only_itself(asked, own_words("hono", "/src/hono"))
    assert few.names_only_itself(asked, own_words("hono", "/src/hono")), "a word of few and no definition's name"
    few.put_file("src/hono.ts", "h", units_of("src/hono.ts", "export class Hono {\n  hono = 1\n}\n"))
    assert not few.names_only_itself(asked, own_words("hono", "/src/hono")), "a name few hold and one defines"
    for query, words in (("httpx 的 timeout 配置在哪里定义", own), ("超时配置在哪里定义", own),
                         ("main 函数在哪里定义", own_words("app", "/work/main")), ("httpx config", own)):
        assert not memory.names_only_itself(read_code_query(query), words), query


def test_a_chinese_question_naming_the_projects_package_is_read_by_meaning() -> None:
    """A trial asked "jinja2 的沙箱..." of jinja (whose package is `jinja2`) and "Newtonsoft.Json 的..." of Json.NET
    (`Src/Newtonsoft.Json/`): the package's name is the project's as much as the repository's is. A folder that holds
    most of the files but not nearly all (monolog's `Handler/`) is no package of the whole."""
    from ctxsieve.indexes.repos.memory import RepoMemory, own_words

    memory = RepoMemory()
    for name in ("sandbox", "nodes", "lexer", "parser", "runtime"):
        memory.put_file(f"src/jinja2/{name}.py", name, units_of(f"src/jinja2/{name}.py",
                                                                f"def {name}_of(jinja2):\n    return jinja2\n"))
    memory.put_file("tests/test_api.py", "t", units_of("tests/test_api.py", "def test_api():\n    assert 1\n"))
    assert memory.package_words() == {"jinja2"}
    own = own_words("jinja", "/src/jinja")
    assert memory.names_only_itself(read_code_query("jinja2 的沙箱在哪里检查属性访问"), own)
    assert not memory.names_only_itself(read_code_query("jinja2 sandbox"), own), "English words: read by them"
    logs = RepoMemory()
    for i in range(10):
        path = f"src/Monolog/Handler/H{i}.php" if i < 7 else f"src/Monolog/F{i}.php"
        logs.put_file(path, str(i), units_of(path, f"<?php\nfunction handle{i}() {{\n    return 1;\n}}\n"))
    assert logs.package_words() == {"monolog"}, "most of its files, not nearly all: not a package of the whole"
    memory.put_file("src/markup/text.py", "r", units_of("src/markup/text.py", "def release():\n    return 0\n"))
    memory.put_file("src/markup/escape.py", "d", units_of("src/markup/escape.py", "def build():\n    return 0\n"))
    assert memory.package_words() == set(), "asked again after a change: 5 of 7 shipped files"


def test_a_deprecated_wrapper_comes_after_the_code_it_names() -> None:
    """A trial's guzzle answered "choose the http handler" with `functions.php`'s `choose_handler` (`@deprecated ...
    Use Utils::chooseHandler instead.`) first: a wrapper kept for old callers counts as an example does, but where the
    request speaks of deprecation or looks its name up."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    wrapper = ("<?php\n\nnamespace GuzzleHttp;\n\n/**\n * Chooses and creates a default handler to use based on the "
               "environment.\n *\n * @deprecated choose_handler will be removed in guzzlehttp/guzzle:8.0. Use "
               "Utils::chooseHandler instead.\n */\nfunction choose_handler(): callable\n{\n"
               "    return Utils::chooseHandler();\n}\n")
    utils = ("<?php\n\nnamespace GuzzleHttp;\n\nfinal class Utils\n{\n    /**\n     * Chooses and creates a default "
             "handler to use based on the environment.\n     */\n    public static function chooseHandler(): callable\n"
             "    {\n        $handler = null;\n        if (\\function_exists('curl_multi_exec')) {\n"
             "            $handler = new CurlMultiHandler();\n        }\n        return $handler;\n    }\n}\n")
    memory = RepoMemory()
    memory.put_file("src/functions.php", "a", units_of("src/functions.php", wrapper))
    memory.put_file("src/Utils.php", "b", units_of("src/Utils.php", utils))
    first = {asked: memory.search(read_code_query(asked), 1)[0].unit.name
             for asked in ("choose the http handler", "the deprecated way to choose the http handler",
                           "choose_handler")}
    assert first == {"choose the http handler": "Utils.chooseHandler",
                     "the deprecated way to choose the http handler": "choose_handler",
                     "choose_handler": "choose_handler"}, first


def test_a_pasted_message_is_held_past_a_label_a_leading_value_a_wrapped_error_and_a_continued_literal() -> None:
    r"""Three trials' pasted errors that came second or lower: drf's `ParseError: JSON parse error - Expecting value:
    ...` (the class named came before `JSONParser.parse`, whose `'JSON parse error - %s' % str(exc)` fills the rest
    in), fastify's `onRequest hook should be a function, instead got [object Undefined]` (its template opens with
    `%s`), ripgrep's `rg: regex could not be compiled with either the default regex engine ...` (rg's label before
    it, a Rust literal continued with `\` at a line's end)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    sources = {
        "rest_framework/exceptions.py": (
            "class ParseError(APIException):\n    status_code = status.HTTP_400_BAD_REQUEST\n"
            "    default_detail = _('Malformed request.')\n    default_code = 'parse_error'\n\n\n"
            "def server_error(request, *args, **kwargs):\n    \"\"\"Generic 500 error handler.\"\"\"\n"
            "    data = {'error': 'Server Error (500)'}\n    return JsonResponse(data, status=500)\n\n\n"
            "def bad_request(request, exception, *args, **kwargs):\n    \"\"\"Generic 400 error handler.\"\"\"\n"
            "    data = {'error': 'Bad Request (400)'}\n    return JsonResponse(data, status=400)\n"),
        "rest_framework/parsers.py": (
            "class JSONParser(BaseParser):\n    def parse(self, stream, media_type=None, parser_context=None):\n"
            "        try:\n            return json.load(stream)\n        except ValueError as exc:\n"
            "            raise ParseError('JSON parse error - %s' % str(exc))\n"),
        "lib/errors.js": (
            "const codes = {\n  FST_ERR_HOOK_INVALID_HANDLER: createError(\n    'FST_ERR_HOOK_INVALID_HANDLER',\n"
            "    '%s hook should be a function, instead got %s',\n    500,\n    TypeError\n  ),\n}\n"),
        "lib/hooks.js": (
            "function validate (hook, fn) {\n  if (typeof fn !== 'function') {\n"
            "    throw new FST_ERR_HOOK_INVALID_HANDLER(hook, Object.prototype.toString.call(fn))\n  }\n}\n"),
        "crates/core/flags/hiargs.rs": (
            "impl HiArgs {\n    fn matcher(&self) -> anyhow::Result<PatternMatcher> {\n        anyhow::bail!(\n"
            "            \"regex could not be compiled with either the default \\\n             regex engine or with "
            "PCRE2.\\n\\n\\\n             default regex engine error:\\n{err}\"\n        )\n    }\n}\n"),
        "crates/core/flags/defs.rs": (
            "fn doc_long() -> &'static str {\n    \"When this flag is used, ripgrep will dynamically choose between "
            "supported regex engines depending on the features used in a pattern. When ripgrep chooses a regex engine, "
            "it applies that choice for every regex provided to ripgrep: the default regex engine or PCRE2, when it is "
            "compiled with either.\"\n}\n"),
    }
    memory = RepoMemory()
    for path, source in sources.items():
        memory.put_file(path, path, units_of(path, source))
    first = {asked[:20]: memory.search(read_code_query(asked), 1)[0].unit.name for asked in (
        "rest_framework.exceptions.ParseError: JSON parse error - Expecting value: line 1 column 1 (char 0)",
        "onRequest hook should be a function, instead got [object Undefined]",
        "rg: regex could not be compiled with either the default regex engine or with PCRE2.")}
    assert first == {"rest_framework.excep": "JSONParser.parse", "onRequest hook shoul": "errors",
                     "rg: regex could not ": "HiArgs.matcher"}, first
    from ctxsieve.ingest.coderank.ranker import phrases_held

    pasted = read_code_query("rg: regex could not be compiled with either the default regex engine or with PCRE2.")
    matcher = memory.search(pasted, 1)[0].unit
    assert phrases_held(pasted.said, [matcher], literal=True).tolist() == [1.0], pasted.said


def test_a_files_module_code_gives_its_place_to_a_definition_nearly_as_good() -> None:
    """drf's "where are serializer field errors collected" was answered first by serializers.py's docstring and
    imports (85 lines, 908 of 2,000 tokens), a definition of the file nearly as good after every other file's best.
    The file keeps its place; the definition is shown in it first."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ('"""\nSerializers and their fields, as forms have, with errors.\n"""\n\nimport copy\n'
              "from collections import defaultdict\n\nfrom rest_framework import fields\n\n\n"
              "def as_serializer_error(exc):\n    detail = exc.detail\n    return {'errors': detail}\n\n\n"
              "class Serializer:\n    def to_internal_value(self, data):\n        errors = {}\n"
              "        for field in self.fields:\n            errors[field.name] = field.errors\n"
              "        return errors\n")
    memory = RepoMemory()
    memory.put_file("rest_framework/serializers.py", "a", units_of("rest_framework/serializers.py", source))
    memory.put_file("rest_framework/fields.py", "b", units_of("rest_framework/fields.py", (
        "class Field:\n    def fail(self, key):\n        raise ValidationError(self.error_messages[key])\n")))
    hits = memory.search(read_code_query("where are serializer field errors collected"), 3)
    assert hits[0].unit.path == "rest_framework/serializers.py" and not hits[0].unit.module_run, hits


def test_a_python_stub_comes_after_the_code_that_does_what_it_says() -> None:
    """Two trials: celery's `Task.on_retry` (a docstring alone, "Retry handler. This is run by the worker when the
    task is to be retried.") came before `Task.retry`; drf's `BaseThrottle.wait` (`return None`) before
    `SimpleRateThrottle.wait`. A function whose body does nothing counts as an example does; a look-up still finds
    it first."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    task = ("class Task:\n    def retry(self, exc=None, countdown=None):\n"
            "        \"\"\"Retry the task, adding it to the back of the queue.\"\"\"\n"
            "        request = self.request\n        if request.retries >= self.max_retries:\n"
            "            raise MaxRetriesExceededError()\n"
            "        return self.signature_from_request(request).apply_async()\n"
            "\n    def on_retry(self, exc, task_id, args, kwargs, einfo):\n        \"\"\"Retry handler.\n\n"
            "        This is run by the worker when the task is to be retried after an exception.\n        \"\"\"\n"
            "\n    def after_return(self):\n        pass\n\n"
            "    def run(self):\n        raise NotImplementedError()\n\n"
            "    def send(self):\n        raise NotImplementedError(\"The 'send' method must be implemented.\")\n")
    units = units_of("celery/app/task.py", task)
    assert [u.name for u in units if u.stub] == ["Task.on_retry", "Task.after_return", "Task.run"], units
    memory = RepoMemory()
    memory.put_file("celery/app/task.py", "a", units)
    first = {asked: memory.search(read_code_query(asked), 1)[0].unit.name
             for asked in ("how does celery retry a task after an exception", "on_retry")}
    assert first == {"how does celery retry a task after an exception": "Task.retry", "on_retry": "Task.on_retry"}


def test_a_python_tracebacks_header_is_no_words_of_the_search() -> None:
    """A trial's werkzeug traceback pointed at `MapAdapter.build`'s docstring lines about "most use cases" as where
    the request's words are most: "most" came from `Traceback (most recent call last):`."""
    pasted = ("Traceback (most recent call last):\n  File \"/app/app.py\", line 9, in index\n"
              "    return url_for('index')\nBuildError: Could not build url for endpoint 'index'.")
    assert not {"most", "recent", "call", "last", "traceback"} & set(read_code_query(pasted).terms)
    assert {"most", "recent"} <= set(read_code_query("the most recent call is shown last").terms)


def test_a_names_one_letter_points_at_no_line() -> None:
    """fastify's `kReplyIsError` pointed at `kAvvioBoot`'s, `kChildren`'s and `kServerBindings`' lines as where "the
    request's words" are most: the name's `k` was one of its words."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("'use strict'\n\nconst keys = {\n  kAvvioBoot: Symbol('fastify.avvioBoot'),\n"
              "  kChildren: Symbol('fastify.children'),\n  kReplyIsError: Symbol('fastify.reply.isError'),\n}\n")
    memory = RepoMemory()
    memory.put_file("lib/symbols.js", "a", units_of("lib/symbols.js", source))
    unit = memory.units_of("lib/symbols.js")[0]
    weights = memory.line_weights(read_code_query("kReplyIsError"), unit.text, unit.path)
    assert [i + unit.start_line for i, w in enumerate(weights) if w > 0] == [6], weights


def test_a_look_up_shows_the_definition_before_an_alias_of_its_name() -> None:
    """A trial's `MaxRetriesExceededError` answered celery's whole `Task` class first (its head holds
    `MaxRetriesExceededError = MaxRetriesExceededError`, and task.py's other hits lifted it); the class itself came
    second. A definition of the name comes before a unit that declares it; echo's `Router` interface, which declares
    `Route(`, after `DefaultRouter.Route`."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    task = ("from celery.exceptions import MaxRetriesExceededError, Retry\n\n\nclass Task:\n"
            "    \"\"\"A task: retry, Retry and MaxRetriesExceededError on it.\"\"\"\n\n"
            "    MaxRetriesExceededError = MaxRetriesExceededError\n    Retry = Retry\n\n"
            "    def retry(self):\n        raise self.MaxRetriesExceededError()\n\n"
            "    def on_retry(self):\n        raise Retry()\n")
    errors = "class MaxRetriesExceededError(Exception):\n    \"\"\"The max restart limit was exceeded.\"\"\"\n"
    router = ("package echo\n\ntype Router interface {\n\tAdd(r Route) error\n\tRoute(c *Context) HandlerFunc\n}\n\n"
              "func (r *DefaultRouter) Route(c *Context) HandlerFunc {\n\treturn nil\n}\n")
    memory = RepoMemory()
    memory.put_file("celery/app/task.py", "a", units_of("celery/app/task.py", task))
    memory.put_file("celery/exceptions.py", "b", units_of("celery/exceptions.py", errors))
    memory.put_file("router.go", "c", units_of("router.go", router))
    hits = memory.search(read_code_query("MaxRetriesExceededError"), 2)
    assert [h.unit.name for h in hits] == ["MaxRetriesExceededError", "Task"], hits
    hits = memory.search(read_code_query("Route"), 2)
    assert [h.unit.name for h in hits] == ["DefaultRouter.Route", "Router"], hits


def test_a_look_up_in_another_case_or_a_letter_off_finds_the_definition() -> None:
    """Two trials' look-ups as typed: `APIview` showed 26 of `APIView`'s methods before the class, `Task.retyr` and
    `is_case_insensitve` missed the method, `buildRoutng` put it 14th. A name no definition has is read as the
    shipped code spells it: another case, or a code-shaped name written nowhere a letter off; a plain word only in
    another case. The review's misfires stay as asked: a name the code uses (`BigDecimal`, not a test's
    `bigDecimals`), a word a test's class is named by (`throttle`, not a test's `Throttle`)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    head = "".join(f"    setting_{i} = api_settings.SETTING_{i}\n" for i in range(40))
    views = ("class APIView(View):\n    \"\"\"The base of every view.\"\"\"\n" + head
             + "".join(f"\n    def get_{name}(self):\n        return self.{name}\n"
                       for name in ("renderers", "parsers", "throttles", "permissions")))
    task = ("class Task:\n    max_retries = 3\n\n    def retry(self, exc=None):\n        raise Retry(exc)\n\n"
            "    def apply(self):\n        return BigDecimal(self.run())\n")
    tests = ("class ScalarTest:\n    def bigDecimals(self):\n        return BigDecimal(1)\n\n\n"
             "class ThrottlingTests:\n    def setUp(self):\n        class Throttle:\n            rate = 1\n")
    memory = RepoMemory()
    memory.put_file("rest_framework/views.py", "a", units_of("rest_framework/views.py", views))
    memory.put_file("celery/app/task.py", "b", units_of("celery/app/task.py", task))
    memory.put_file("tests/test_scalars.py", "c", units_of("tests/test_scalars.py", tests))
    first = {asked: memory.search(read_code_query(asked), 1)[0].unit.name
             for asked in ("APIview", "apiview", "Task.retyr", "get_rendrers", "API_View")}
    assert first == {"APIview": "APIView", "apiview": "APIView", "Task.retyr": "Task.retry",
                     "get_rendrers": "APIView.get_renderers", "API_View": "APIView"}, first
    assert not memory.defines("Task.retyr"), "the answer still says no definition is named as asked"
    for asked, never in (("BigDecimal", "ScalarTest.bigDecimals"), ("throttle", "ThrottlingTests.setUp.Throttle")):
        assert never not in [h.unit.name for h in memory.search(read_code_query(asked), 3)], asked


def test_deprecated_is_read_in_a_definitions_head_as_each_language_marks_it() -> None:
    """`CodeUnit.deprecated`: a doc comment's tag, an annotation or attribute, Go's paragraph, a Python docstring's
    directive or decorator; not a class whose field is deprecated, nor a function that warns of a deprecated
    argument (its body says so, not its head)."""
    marked = {
        "Client.java": "class Client {\n    /** Old. */\n    @Deprecated\n    void send() {\n        go();\n    }\n}\n",
        "lib.rs": "#[deprecated(since = \"1.2\", note = \"use `run`\")]\npub fn start() {\n    run();\n}\n",
        "client.go": "package echo\n\n// Start starts.\n//\n// Deprecated: use Run.\nfunc Start() {\n\tRun()\n}\n\n"
                     "// Mark only worked for zsh.\n//\n// Deprecated\nfunc Mark() error {\n\treturn nil\n}\n",
        "api.py": "def load(path):\n    \"\"\"Load a file.\n\n    .. deprecated:: 2.0\n        Use :func:`read`.\n"
                  "    \"\"\"\n    return read(path)\n",
        "old.py": "@deprecated(\"use read\")\ndef fetch(path):\n    return read(path)\n\n\n"
                  "def spectrum(\n    x,\n    precenter=False,\n):\n    \"\"\"Spectrum.\n\n"
                  "    .. deprecated:: 1.15\n        Use periodogram.\n    \"\"\"\n    return x\n",
        "Api.cs": "class Api\n{\n    [Obsolete(\"Use Run\")]\n    public void Start()\n    {\n        Run();\n"
                  "    }\n}\n",
    }
    found = {path: [u.name for u in units_of(path, source) if u.deprecated] for path, source in marked.items()}
    assert found == {"Client.java": ["Client.send"], "lib.rs": ["start"], "client.go": ["Start", "Mark"],
                     "api.py": ["load"], "old.py": ["fetch", "spectrum"], "Api.cs": ["Api.Start"]}, found
    plain = {  # (the review's: a parameter's `.. deprecated::`, one deprecated overload of a TS method)
        "stats.py": "def anderson(x, midrank=True):\n    \"\"\"Test.\n\n    midrank : bool\n        Midrank.\n\n"
                    "        .. deprecated:: 1.10\n            Use method.\n    \"\"\"\n    return x\n",
        "Observable.ts": "export class Observable<T> {\n  subscribe(observer?: Observer<T>): Subscription;\n"
                         "  /** @deprecated Use an observer. */\n"
                         "  subscribe(next?: (value: T) => void): Subscription;\n"
                         "  subscribe(\n    observerOrNext?: Observer<T> | null,\n  ): Subscription {\n"
                         "    return this.x;\n  }\n}\n",
        "Config.java": "class Config {\n    @Deprecated\n    int old;\n\n    void read() {\n        go();\n    }\n}\n",
        "conf.py": "def read(path, strict=None):\n    \"\"\"Read a file.\"\"\"\n    if strict is not None:\n"
                   "        warnings.warn(\"strict is deprecated\", DeprecationWarning)\n    return open(path)\n",
    }
    for path, source in plain.items():
        assert not [u.name for u in units_of(path, source) if u.deprecated], path


def test_a_typescript_function_keeps_its_overload_signatures() -> None:
    """redux's `createStore` had its overload signatures in the module's code, and its implementation alone as the
    function; a class's overloaded method likewise had its signatures in the class's own lines."""
    text = ("import { A } from './a'\n\n/** Creates a store. */\nexport function createStore<S>(r: R<S>): Store<S>\n"
            "/** With an enhancer. */\nexport function createStore<S, E>(\n  r: R<S>,\n  e?: E\n): Store<S> & E\n"
            "export function createStore(r: any, e?: any): any {\n  return e(r)\n}\n\n"
            "function other(a: string): string;\nfunction plain(a: any) {\n  return a\n}\n\n"
            "export class Emitter {\n  on(event: 'a'): this;\n  on(event: string): this {\n    return this\n  }\n}\n")
    units = spans("src/store.ts", text)
    assert units[("createStore", "function")] == (3, 12)
    assert units[("plain", "function")] == (15, 17)  # a signature of another name is not its overload
    assert units[("Emitter", "class")] == (19, 19) and units[("Emitter.on", "method")] == (20, 23)


CPP_CONDITIONAL = """\
namespace leveldb {
class Limiter {
 public:
  Limiter(int max_acquires)
      :
#if !defined(NDEBUG)
        max_acquires_(max_acquires),
#endif  // !defined(NDEBUG)
        acquires_allowed_(max_acquires) {
  }
  bool Acquire() LOCKS_EXCLUDED(mu_) { return true; }
  void Unlock() UNLOCK_FUNCTION() { mu_.unlock(); }

 JSON_PRIVATE_UNLESS_TESTED:
  int acquires_allowed_;
};

class PosixEnv {
 public:
  void Schedule();
};

void PosixEnv::Schedule() {
}
}  // namespace leveldb
"""

C_BRANCHES = """\
static int gethex(const char *s) {
  int decpt = 0;
#ifdef USE_LOCALE
  if (*s == *decimalpoint && !decpt) {
    decpt = 1;
#else
  if (*s == '.' && !decpt) {
    decpt = 2;
#endif
    s++;
  }
  return decpt;
}

double jvp_strtod(const char *s) {
  return 0;
}
"""

C_ELSE_BRANCH = """\
#include "uv.h"

static int broken = ;

#if TARGET_OS_IPHONE
int uv__fsevents_init(uv_fs_event_t* handle) {
  return 0;
}
#else /* TARGET_OS_IPHONE */
#define UV__FSEVENTS_PROCESS(handle, block)                                   \\
    do {                                                                      \\
      /* NOTE: Checking uv__is_active() is required here, because handle    \\
       * callback may close handle */                                         \\
      if (uv__is_active((handle)))                                            \\
        block                                                                 \\
    } while (0)

static void uv__fsevents_cb(uv_async_t* cb) {
  return;
}

int uv__fsevents_init(uv_fs_event_t* handle) {
  return 0;
}
#endif /* TARGET_OS_IPHONE */
"""


def test_c_and_cpp_read_through_conditional_compilation_and_annotation_macros() -> None:
    """leveldb's `#if` inside a constructor's initializer list made `class Limiter` hold every later class and the
    out-of-class `PosixEnv::Schedule` a method of it; its thread-safety macros named methods (`UNLOCK_FUNCTION`,
    `mu_`); nlohmann's access-label macro ended its class; jq's `if (...) {` opened in both branches of an `#ifdef`
    lost the functions after it. A file whose code is all in an `#else` (libuv's fsevents.c) keeps it, and a comment
    over a macro's continued lines does not end the macro. A member defined outside its class is a method."""
    units = spans("util/env_posix.cc", CPP_CONDITIONAL)
    assert units[("leveldb.Limiter.Limiter", "method")] == (4, 10)
    assert units[("leveldb.Limiter.Acquire", "method")] == (11, 11)
    assert units[("leveldb.Limiter.Unlock", "method")] == (12, 12)
    assert units[("leveldb.PosixEnv", "class")] == (18, 21) and ("leveldb.PosixEnv.Schedule", "method") in units
    assert max(end for (name, _), (_, end) in units.items() if name.startswith("leveldb.Limiter")) == 16
    units = spans("src/jv_dtoa.c", C_BRANCHES)
    assert units[("gethex", "function")] == (1, 13) and units[("jvp_strtod", "function")] == (15, 17)
    units = spans("src/unix/fsevents.c", C_ELSE_BRANCH)
    assert units[("uv__fsevents_cb", "function")] == (18, 20), "a comment over a macro's continued lines"


def test_a_rust_macro_called_with_a_name_at_a_files_level_defines_that_name() -> None:
    """ripgrep's tests/regression.rs is 109 `rgtest!(r16, |dir: Dir, mut cmd: TestCommand| {...});`, and was one
    module record: the test a fix added could not be found. Each is a function named by its first argument; a
    `macro_rules!` is a macro; a macro called inside a function, on one line, or with no name first is not."""
    text = ("use crate::util::{Dir, TestCommand};\n\nmacro_rules! rgtest {\n    ($name:ident, $fun:expr) => {\n"
            "        #[test]\n        fn $name() { $fun(Dir::new(), TestCommand::new()); }\n    };\n}\n\n"
            "// See: https://github.com/BurntSushi/ripgrep/issues/16\nrgtest!(r16, |dir: Dir, mut cmd: TestCommand| {\n"
            "    dir.create_dir(\".git\");\n    cmd.arg(\"xyz\").assert_err();\n});\n\n"
            "rgtest!(r25, |dir: Dir, cmd: TestCommand| { cmd.arg(\"test\"); });\n\n"
            "include!(\n    \"generated.rs\"\n);\n\nfn helper() {\n    eqnice!(\n        a,\n        b\n    );\n}\n")
    units = spans("tests/regression.rs", text)
    assert units[("rgtest", "macro")] == (3, 8)
    assert units[("r16", "function")] == (10, 14)
    assert not any(name in ("r25", "a", "eqnice") for name, _ in units), units
    assert units[("helper", "function")] == (22, 27)


def test_a_script_with_no_suffix_is_read_by_its_interpreter_line(tmp_path: Path) -> None:
    """jq's tests/shtest and tests/jqtest (`#!/bin/sh`, no suffix) were not indexed, and a search naming one answered
    with unrelated C. A file with no suffix is a source file when its `#!` line names an interpreter whose grammar is
    read; any other (a Makefile, a licence, an awk script) is not."""
    from ctxsieve.indexes.repos.walk import walk

    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "shtest").write_text("#!/bin/sh\n\nfaketty() {\n  script -qec \"$*\" /dev/null\n}\n")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "serve").write_text("#!/usr/bin/env -S python3 -u\ndef main():\n    pass\n")
    (tmp_path / "bin" / "report").write_text("#!/usr/bin/awk -f\n{ print $1 }\n")
    (tmp_path / "Makefile").write_text("all:\n\tcc -o jq main.c\n")
    (tmp_path / "LICENSE").write_bytes(b"\x00\x01")
    (tmp_path / "bin" / "serve-again").symlink_to("serve")  # (ansible's bin/ansible: the same file again)
    (tmp_path / "gradlew").write_text("#!/bin/sh\nexec java -jar gradle/wrapper/gradle-wrapper.jar \"$@\"\n")
    os.mkfifo(tmp_path / "pipe")  # (opened, it would never answer)
    assert walk(tmp_path).files == ["bin/serve", "tests/shtest"]
    assert [(u.name, u.kind) for u in units_of("tests/shtest", (tmp_path / "tests" / "shtest").read_text())
            if u.kind != "module"] == [("faketty", "function")]
    assert units_of("tests/shtest", (tmp_path / "tests" / "shtest").read_text())[0].kind == "function", \
        "its `#!` line alone is no module run: nvm's test scripts' `#!/bin/sh` came 1st for 'leads to an infinite loop'"
    header = "#!/usr/bin/env bash\n# shellcheck shell=bash\n\nrun() {\n  echo 1\n}\n"
    assert [(u.kind, u.start_line) for u in units_of("bin/run", header)] == [("function", 4)]
    code = header.replace("run() {\n  echo 1\n}", "source ./lib.sh")
    assert [(u.kind, u.start_line, u.end_line) for u in units_of("bin/run", code)] == [("module", 1, 4)], "with code"


def test_a_hyphenated_word_is_also_the_word_code_writes() -> None:
    """black's fix for "a crash when an f-string follows # fmt: off" edits `visit_fstring`: `f-string` was the terms
    `f` and `string`, never `fstring`. Its parts joined are a term besides them (`e-mail`, `built-in`), and a longer
    chain of hyphens (an id, `x-y-z`) is not."""
    terms = read_code_query("a crash on an f-string after a built-in e-mail check, x-y-z").terms
    assert {"fstring", "builtin", "email", "f", "string"} <= set(terms) and "xyz" not in terms and "xy" not in terms


def test_a_phrase_is_also_its_initials_in_a_short_search() -> None:
    """shellcheck's check for "useless use of cat" is `checkUuoc`: a search of those words found tests of other
    checks first. In a search of a few words each run of four plain words is also the term of its initials; an
    issue's text (more words) is not read so, nor are three-letter runs, which on semble's dev queries met unrelated
    identifier parts."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    assert "uuoc" in read_code_query("useless use of cat").terms
    assert "uuo" not in read_code_query("useless use of cat").terms, "three letters: too many chance meetings"
    issue = "useless use of cat " + "word " * 30
    assert "uuoc" not in read_code_query(issue).terms, "an issue's text"
    memory = RepoMemory()
    text = ("checkUuoc params t = catOf t\n\ncheckUselessBang params t = bangOf t\n\n"
            "prop_checkCatUse = verify checkCatUse \"cat foo | use\"\ncheckCatUse params t = t\n")
    memory.put_file("src/Analytics.hs", "a", units_of("src/Analytics.hs", text))
    hits = [h.unit.name for h in memory.search(read_code_query("useless use of cat"), 3)]
    assert hits[0] == "checkUuoc", hits


def test_an_operator_asked_alone_is_looked_up() -> None:
    """aeson's `.:?` asked alone found nothing: an operator has no word for BM25, and its name's dots were taken for
    a qualifier (its last part `:?`, then `` as a `?`-less name). An operator written alone (or in Haskell's
    parentheses) is a look-up of its definition, and `.:?` is not `.:`."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    text = ("(.:) :: FromJSON a => Object -> Key -> Parser a\n(.:) = explicitParseField parseJSON\n\n"
            "(.:?) :: FromJSON a => Object -> Key -> Parser (Maybe a)\n(.:?) = explicitParseFieldMaybe parseJSON\n\n"
            "instance Semigroup Series where\n  (<>) = mappend\n")
    memory = RepoMemory()
    memory.put_file("src/Data/Aeson/Types/FromJSON.hs", "a", units_of("src/Data/Aeson/Types/FromJSON.hs", text))
    assert lookup_names_of(".:?") == frozenset({".:?"}) == lookup_names_of("(.:?)")
    for asked, wanted in ((".:?", ".:?"), ("(.:?)", ".:?"), (".:", ".:"), ("<>", "<>")):
        hits = memory.search(read_code_query(asked), 2)
        assert hits and hits[0].unit.leaf == wanted, (asked, [h.unit.name for h in hits])
    assert memory.defines(".:?") and not memory.defines(".:!")
    assert lookup_names_of("-") == frozenset(), "one symbol alone is punctuation"


def lookup_names_of(text: str) -> frozenset[str]:
    from ctxsieve.ingest.coderank.query import lookup_names

    return lookup_names(text)


def test_a_shell_functions_hyphenated_name_is_a_name() -> None:
    """bats's semver script defines `function command-bump {...}`: a search of `command-bump` read two words and
    ranked the function 11th, below the code that calls it (`command_bump` found it 2nd)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    semver = ("#!/usr/bin/env bash\n\nfunction command-bump {\n  local new=$(bump \"$1\")\n  echo \"$new\"\n}\n\n"
              "function command-get {\n  echo \"$1\"\n}\n\ncase $1 in\n  bump) command-bump \"$@\";;\n"
              "  get) command-get \"$@\";;\n  *) echo 'unknown command: bump or get'; exit 1;;\nesac\n")
    memory = RepoMemory()
    memory.put_file("contrib/semver", "a", units_of("contrib/semver", semver))
    assert [h.unit.name for h in memory.search(read_code_query("command-bump"), 2)][0] == "command-bump"
    assert "command-bump" in read_code_query("why does command-bump drop the prerelease").names
    assert "gather-test-outputs-in" not in read_code_query("--gather-test-outputs-in").names, "an option, not a name"


def test_tests_asked_for_a_name_their_group_is_titled_by_come_from_that_group() -> None:
    """rack's "tests for Rack::Lint" showed one test of `describe Rack::Lint do` and then one each from other spec
    files (`Rack::ETag`, `Rack::CommonLogger`): a short search shows each file's best first. Where the tests asked for
    are a group titled by a name the search writes as code (`Rack::Lint`, read as Ruby writes it), that file's tests
    all come first."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    lint = "".join(f"  it 'notices lint error {i}' do\n    Rack::Lint.new(app).call(env({i}))\n  end\n\n"
                   for i in range(6))
    memory = RepoMemory()
    memory.put_file("test/spec_lint.rb", "a", units_of("test/spec_lint.rb", f"describe Rack::Lint do\n{lint}end\n"))
    for other in ("ETag", "CommonLogger", "Files", "Builder"):
        memory.put_file(f"test/spec_{other.lower()}.rb", other, units_of(f"test/spec_{other.lower()}.rb", (
            f"describe Rack::{other} do\n  it 'passes lint for a linted error app' do\n"
            f"    Rack::Lint.new(Rack::{other}.new(app)).call(env)\n  end\nend\n")))
    memory.put_file("lib/rack/lint.rb", "l", units_of("lib/rack/lint.rb", (
        "module Rack\n  class Lint\n    def call(env)\n      check(env)\n    end\n  end\nend\n")))
    query = read_code_query("tests for Rack::Lint")
    assert {"Rack", "Lint"} <= query.names and ("Rack", "Lint") in query.pairs
    paths = [hit.unit.path for hit in memory.search(query, 7)]
    assert paths[:7] == ["test/spec_lint.rb"] * 7, paths


def test_a_run_of_conditional_compilation_alone_is_no_module_code() -> None:
    """jq's `#ifndef No_Hex_NaN` between two functions was a one-line module record that ranked 3rd for a NaN bug:
    a run of `#if`/`#endif` lines alone is no code of its own in C; a Python comment run is still a run."""
    text = "int a(void) {\n  return 1;\n}\n#ifndef No_Hex_NaN\nint b(void) {\n  return 2;\n}\n#endif\n#define X 1\n"
    assert [(u.kind, u.start_line) for u in units_of("src/jv_dtoa.c", text) if u.kind == "module"] == [("module", 8)]
    assert [u.kind for u in units_of("a.py", "def a():\n    pass\n# if x\n")] == ["function", "module"]


def test_a_look_up_of_a_constant_a_field_or_an_alias_finds_where_it_is_declared() -> None:
    """date-fns's `enUS` (`export const enUS: Locale = {...}`), symfony's `Command::SUCCESS` (`public const SUCCESS =
    0;`), jackson's `DEFAULT_BUILD_METHOD` (a `static final` field) and a Go constant in a `const` block are no
    definition's name: the answer said "no definition is named", their files not first. The code that declares one
    comes first, shown around its line."""
    from ctxsieve.indexes.repos.memory import RepoMemory
    from ctxsieve.ingest.coderank.ranker import declares

    sources = {
        "src/locale/en-US/index.ts": "import { formatLong } from './_lib/formatLong'\n\nexport const enUS: Locale = {\n"
                                     "  code: 'en-US',\n  formatLong,\n};\n",
        "src/locale/test.ts": ("import { enUS } from './en-US'\n\nit('uses enUS', () => {\n"
                               "  expect(enUS.code).toBe(1);\n});\n"),
        "Command/Command.php": ("<?php\nclass Command\n{\n    public const SUCCESS = 0;\n"
                                "    public const FAILURE = 1;\n\n    public function run(): int\n    {\n"
                                "        return self::SUCCESS;\n    }\n}\n"),
        "Tester/CommandIsSuccessful.php": "<?php\nclass CommandIsSuccessful\n{\n    public function matches($code)\n"
                                          "    {\n        return Command::SUCCESS === $code;\n    }\n}\n",
        "consts.go": "package http\n\nconst (\n" + "".join(f"\tStatus{i} Code = {i}\n" for i in range(30))
                     + "\tStatusTeapot Code = 418\n)\n",
    }
    memory = RepoMemory()
    for path, text in sources.items():
        memory.put_file(path, path, units_of(path, text))
    for asked, path in (("enUS", "src/locale/en-US/index.ts"), ("Command::SUCCESS", "Command/Command.php"),
                        ("StatusTeapot", "consts.go")):
        hits = memory.search(read_code_query(asked), 3, focused=True)
        assert hits[0].unit.path == path, (asked, hits)
    teapot = memory.search(read_code_query("StatusTeapot"), 1, focused=True)[0]
    assert teapot.focus == 34, teapot  # shown around its line, past the block's first lines
    other = "<?php\nclass CommandSuccess\n{\n    public const SUCCESS = 2;\n" + \
        "    // the Command's SUCCESS, Command::SUCCESS\n" * 4 + "}\n"
    alike = RepoMemory()
    alike.put_file("src/Command.php", "c", units_of("src/Command.php", "<?php\nclass Command\n{\n"
                                                                       "    public const SUCCESS = 0;\n}\n"))
    alike.put_file("src/Command/CommandSuccess.php", "o", units_of("src/Command/CommandSuccess.php", other))
    hits = alike.search(read_code_query("Command::SUCCESS"), 2)
    assert [h.unit.path for h in hits] == ["src/Command.php", "src/Command/CommandSuccess.php"], hits
    assert hits[0].score < hits[1].score, "the name as asked before its last part alone (okhttp's `Request` declares"
    # `isHttps` too, and ranked above `HttpUrl` for `HttpUrl.isHttps`)
    command = next(u for u in units_of("Command/Command.php", sources["Command/Command.php"]) if u.kind == "class")
    assert declares(command, "Command.SUCCESS") and not declares(command, "Other.SUCCESS")
    assert not declares(next(u for u in units_of("src/locale/test.ts", sources["src/locale/test.ts"])), "enUS")


def test_abstract_classes_annotation_elements_type_aliases_and_properties_are_definitions() -> None:
    """date-fns's `export abstract class Setter` was no class (its methods unqualified, its abstract `set` module
    code); jackson's `@interface JsonDeserialize` element `using()` and Kingfisher's `typealias DownloadProgressBlock`
    were no definitions; C#'s and Swift's properties were called methods."""
    ts = ("export abstract class Setter {\n  public subPriority = 0;\n  validate(date: Date): boolean {\n"
          "    return true;\n  }\n  abstract set(date: Date): Date;\n}\n")
    java = "public @interface JsonDeserialize {\n    public Class<?> using() default None.class;\n}\n"
    swift = ("public typealias DownloadProgressBlock = ((Int64, Int64) -> Void)\nstruct RetrieveImageResult {\n"
             "    public let image: KFCrossPlatformImage\n}\n")
    csharp = "class ConstructorMap\n{\n    public Type DestinationType { get; }\n}\n"
    found = {(u.name, u.kind, u.start_line, u.end_line) for path, text in (
        ("Setter.ts", ts), ("JsonDeserialize.java", java), ("Result.swift", swift), ("ConstructorMap.cs", csharp))
        for u in units_of(path, text)}
    assert {("Setter", "class", 1, 2), ("Setter.validate", "method", 3, 5), ("Setter.set", "method", 6, 6),
            ("JsonDeserialize.using", "method", 2, 2), ("DownloadProgressBlock", "type", 1, 1),
            ("RetrieveImageResult.image", "property", 3, 3), ("ConstructorMap.DestinationType", "property", 3, 3)
            } <= found, found


def test_a_kotlin_companion_members_look_up_is_by_its_class() -> None:
    """okhttp's `Protocol.get` (how callers write it) found `Protocol.Companion.get` first, and the answer still said
    "no definition is named Protocol.get"."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    text = ("enum class Protocol(private val protocol: String) {\n  HTTP_1_1(\"http/1.1\");\n\n  companion object {\n"
            "    fun get(protocol: String): Protocol = valueOf(protocol)\n  }\n}\n")
    memory = RepoMemory()
    memory.put_file("Protocol.kt", "a", units_of("Protocol.kt", text))
    assert memory.defines("Protocol.get")
    assert memory.search(read_code_query("Protocol.get"), 1)[0].unit.name == "Protocol.Companion.get"
    assert memory.defines("Protocol.Companion.get"), "as it is named (a trial was told it was defined nowhere)"
    entry = memory.search(read_code_query("Protocol.HTTP_1_1"), 1)[0].unit  # (an enum class was a class: its entries
    assert (entry.kind, entry.name) == ("enum", "Protocol") and declares(entry, "Protocol.HTTP_1_1"), entry  # none)


def test_rust_crate_visible_constants_ts_interface_methods_and_crate_paths_are_named() -> None:
    """A trial over ripgrep and fastify: `DEFAULT_TYPES` (`pub(crate) const`), `FastifyInstance.addHook` (17 generic
    overloads in an interface) and `FastifyReply.send` were said to be defined nowhere; `ignore::WalkBuilder` (the
    crate's root re-exports walk.rs's struct) too, though the struct came first."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    types = ("/// The default types.\n#[rustfmt::skip]\npub(crate) const DEFAULT_TYPES: &[(&[&str], &[&str])] = &[\n"
             "    (&[\"ada\"], &[\"*.adb\"]),\n];\n")
    module = next(u for u in units_of("crates/ignore/src/default_types.rs", types) if u.kind == "module")
    assert declares(module, "DEFAULT_TYPES") and not declares(module, "DEFAULT_KINDS")
    instance = ("export interface FastifyInstance<\n  RawServer = Server,\n> {\n  server: RawServer;\n"
                "  register: FastifyRegister<FastifyInstance>;\n\n  /**\n   * `onRequest` is the first hook.\n   */\n"
                "  addHook<\n    Fn extends onRequestHookHandler = onRequestHookHandler\n  >(\n    name: 'onRequest',\n"
                "    hook: Fn\n  ): FastifyInstance;\n  send(...args: SendArgs): FastifyReply;\n"
                "  ready?(): Promise<void>;\n}\n")
    interface = next(u for u in units_of("types/instance.d.ts", instance) if u.kind == "interface")
    assert all(declares(interface, f"FastifyInstance.{name}") for name in ("addHook", "send", "ready", "register"))
    assert not declares(interface, "FastifyInstance.RawServer") and not declares(interface, "FastifyInstance.Fn")
    memory = RepoMemory()
    memory.put_file("crates/ignore/src/walk.rs", "w", units_of("crates/ignore/src/walk.rs", (
        "pub struct WalkBuilder {\n    paths: Vec<PathBuf>,\n}\n\nimpl WalkBuilder {\n"
        "    pub fn new() -> WalkBuilder {\n        WalkBuilder { paths: vec![] }\n    }\n}\n")))
    assert memory.defines("ignore.WalkBuilder") and memory.defines("ignore.WalkBuilder.new")
    assert not memory.defines("globset.WalkBuilder")
    memory.put_file("crates/searcher/src/searcher/mod.rs", "s", units_of("crates/searcher/src/searcher/mod.rs", (
        "pub struct SearcherBuilder {\n    config: Config,\n}\n")))  # (the crate is named grep-searcher)
    assert memory.defines("grep_searcher.SearcherBuilder") and not memory.defines("grep_printer.SearcherBuilder")


def test_php_enum_cases_and_promoted_properties_are_declarations() -> None:
    """A trial over monolog: `Level::Warning` (`case Warning = 300;` of `enum Level: int`) and `LogRecord::$extra`
    (a PHP 8 constructor's `public array $extra = []`) were said to be defined nowhere."""
    enum = "<?php\n\nenum Level: int\n{\n    case Debug = 100;\n    case Warning = 300;\n\n" \
        "    public function getName(): string\n    {\n        return 'x';\n    }\n}\n"
    record = "<?php\n\nclass LogRecord\n{\n    public function __construct(\n" \
        "        public readonly string $channel,\n        public array $extra = [],\n        string $plain = '',\n" \
        "    ) {\n    }\n}\n"
    level = next(u for u in units_of("src/Monolog/Level.php", enum) if u.kind == "enum")
    assert declares(level, "Level.Warning") and declares(level, "Warning") and not declares(level, "Level.Notice")
    constructor = next(u for u in units_of("src/Monolog/LogRecord.php", record) if u.leaf == "__construct")
    assert declares(constructor, "LogRecord.$extra") and declares(constructor, "LogRecord.channel")
    assert not declares(constructor, "LogRecord.plain") and not declares(constructor, "Other.channel")
    adapter = next(u for u in units_of("src/Ftp/FtpAdapter.php", (  # (flysystem's nullable and namespaced types)
        "<?php\nclass FtpAdapter\n{\n    private ?bool $isPureFtpdServer = null;\n    private \\Closure $picker;\n"
        "    private \\FTP\\Connection|false $connection = false;\n}\n")) if u.kind == "class")
    assert declares(adapter, "FtpAdapter.$isPureFtpdServer") and declares(adapter, "FtpAdapter.$picker")
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()  # (a class at the top of `src/`, named with its namespace: said to be defined nowhere)
    memory.put_file("src/Visibility.php", "v", units_of("src/Visibility.php", (
        "<?php\n\nnamespace League\\Flysystem;\n\nfinal class Visibility\n{\n    const A = 'a';\n}\n")))
    assert memory.defines("League.Flysystem.Visibility")
    memory.put_file("src/Utils.php", "u", units_of("src/Utils.php", (
        "<?php\n\nnamespace GuzzleHttp;\n\nfinal class Utils\n{\n    const A = 'a';\n}\n")))
    assert memory.defines("GuzzleHttp.Utils") and not memory.defines("GuzzleHttp.Psr7.Utils"), \
        "a review: psr7's Utils is not guzzle's (the namespace its file declares decides)"


def test_go_names_as_go_code_writes_them() -> None:
    """A trial over echo: `middleware.CORSWithConfig` and `echo.Context` (a package's name before the definition, as
    every Go caller writes it) were said to be defined nowhere though found first; `Binder.Bind`, a method an
    interface declares, likewise; `(*DefaultRouter).Route` (the receiver's form) was no name at all."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("middleware/cors.go", "a", units_of("middleware/cors.go", (
        "package middleware\n\nfunc CORSWithConfig(config CORSConfig) echo.MiddlewareFunc {\n\treturn nil\n}\n")))
    memory.put_file("context.go", "b", units_of("context.go", "package echo\n\ntype Context struct {\n\tp string\n}\n"))
    memory.put_file("bind.go", "c", units_of("bind.go", (
        "package echo\n\ntype Binder interface {\n\tBind(c *Context, i any) error\n}\n")))
    memory.put_file("route.go", "d", units_of("route.go", "package echo\n\ntype Route struct {\n\tName string\n}\n"))
    memory.put_file("router.go", "e", units_of("router.go", (
        "package echo\n\ntype DefaultRouter struct {\n\troutes []Route\n}\n\n"
        "func (r *DefaultRouter) Route(c *Context) HandlerFunc {\n\treturn nil\n}\n")))
    for name in ("middleware.CORSWithConfig", "echo.Context", "Binder.Bind"):
        assert memory.defines(name) or any(declares(u, name) for u in memory.units_of("bind.go")), name
    assert not memory.defines("other.CORSWithConfig") and not memory.defines("DefaultRouter.Context"), \
        "a Go package is the one its files declare"
    memory.put_file("gin.go", "g", units_of("gin.go", "package echo\n\nfunc New() *Echo {\n\treturn nil\n}\n"))
    assert memory.defines("echo.New") and not memory.defines("errors.New"), "a review: the standard library's"
    assert memory.search(read_code_query("(*DefaultRouter).Route"), 1)[0].unit.name == "DefaultRouter.Route"
    assert read_code_query("(*Echo).ServeHTTP").lookup == {"Echo.ServeHTTP"}


def test_a_path_as_an_installed_copy_writes_it_names_the_checkouts_file() -> None:
    """A trial's paths through installed copies: Go's module cache (`.../echo/v5@v5.3.1/context.go`) and a sources
    jar's path (`...-sources.jar!/com/...`) were searches, not listings. Another package's file of a name the
    repository has once is not the repository's (a review: click's `testing.py` in a flask traceback had become
    flask's), nor is a package of a monorepo installed on its own (flysystem-local: a miss left in the issue)."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("context.go", "b", units_of("context.go", "package echo\n\nfunc Bind() error {\n\treturn nil\n}\n"))
    java = "package com.acme.core;\n\npublic class JsonFactory {\n  public int version() {\n    return 1;\n  }\n}\n"
    memory.put_file("src/main/java/com/acme/core/JsonFactory.java", "c",
                    units_of("src/main/java/com/acme/core/JsonFactory.java", java))
    memory.put_file("src/flask/testing.py", "t", units_of("src/flask/testing.py", "def invoke():\n    return 1\n"))
    for written, path in (("/root/go/pkg/mod/github.com/labstack/echo/v5@v5.3.1/context.go", "context.go"),
                          ("/h/.m2/acme-core-2.1-sources.jar!/com/acme/core/JsonFactory.java",
                           "src/main/java/com/acme/core/JsonFactory.java")):
        query = read_code_query(written)
        assert query.paths_only and not memory.missing(query), written
        assert {u.path for u in memory.listed_units(query)} == {path}, written
    assert memory.missing(read_code_query("/usr/lib/python3/site-packages/click/testing.py"))


def test_ruby_attributes_are_declarations_of_their_class() -> None:
    """A trial's `Faraday.default_adapter` (`attr_reader :default_adapter` in `class << self`) and
    `RackBuilder#handlers` (`attr_accessor :handlers`) were said to be defined nowhere."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    source = ("module Faraday\n  class << self\n    attr_reader :default_adapter\n\n    def default_adapter=(a)\n"
              "      @default_adapter = a\n    end\n  end\n\n  class RackBuilder\n    attr_accessor :handlers, :app\n"
              "\n    def build\n      1\n    end\n  end\nend\n")
    memory = RepoMemory()
    memory.put_file("lib/faraday.rb", "a", units_of("lib/faraday.rb", source))
    for asked, line in (("Faraday.default_adapter", 3), ("Faraday::RackBuilder#handlers", 11),
                        ("RackBuilder#app", 11)):
        first = memory.search(read_code_query(asked), 1)[0].unit
        assert first.start_line <= line <= first.end_line and declares(first, asked.replace("#", ".")), (asked, first)
    assert not declares(memory.search(read_code_query("RackBuilder#build"), 1)[0].unit, "RackBuilder.handler")


def test_a_types_own_method_comes_before_an_extension_of_the_same_name_elsewhere() -> None:
    """A trial's `Retrofit#create` (Javadoc's form) found the one-line Kotlin extension `Retrofit.create` in
    KotlinExtensions.kt before the method of Retrofit.java: of one name's definitions, the type's own file's first."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    memory = RepoMemory()
    memory.put_file("retrofit/KotlinExtensions.kt", "a", units_of("retrofit/KotlinExtensions.kt", (
        "/** Create a Retrofit service: `retrofit.create<Service>()` for Retrofit.create. */\n"
        "inline fun <reified T> Retrofit.create(): T = create(T::class.java)\n")))
    memory.put_file("retrofit/Retrofit.java", "b", units_of("retrofit/Retrofit.java", (
        "public final class Retrofit {\n  public <T> T create(final Class<T> service) {\n    validate(service);\n"
        + "".join(f"    Object proxy{i} = Proxy.newProxyInstance(loader, interfaces, handler{i});\n" for i in range(30))
        + "    return null;\n  }\n}\n")))
    for asked in ("Retrofit#create", "Retrofit.create"):
        assert [h.unit.path for h in memory.search(read_code_query(asked), 2)] == [
            "retrofit/Retrofit.java", "retrofit/KotlinExtensions.kt"], asked
    gin = RepoMemory()  # (a bare name: not the method of the type its file is named after, gin's `Engine`)
    gin.put_file("gin.go", "a", units_of("gin.go", "package gin\n\ntype Engine struct {\n\tpool int\n}\n"))
    gin.put_file("binding/default_validator.go", "b", units_of("binding/default_validator.go", (
        "package binding\n\n// Engine returns the underlying validator engine.\n"
        "func (v *defaultValidator) Engine() any {\n\treturn v.validate\n}\n")))
    assert gin.search(read_code_query("Engine"), 1)[0].unit.name == "Engine"


def test_a_long_function_is_shown_around_its_line_of_code_that_holds_the_most_words() -> None:
    """date-fns's `getOverlappingDaysInIntervals` opens with 31 lines of JSDoc: an answer of ten showed them and cut
    the two lines of its bug. A long function, like a long run of module code, is shown around its line of code (not a
    comment's) holding the most of the request's words, when that is below its first lines."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    doc = "".join(f" * @example overlapping intervals, day {i}\n" for i in range(30))
    text = (f"/**\n * Get the number of days that overlap in two intervals\n{doc} */\n"
            "export function overlap(a, b) {\n"
            "  const start = Math.max(a.start, b.start);\n  const end = Math.min(a.end, b.end);\n"
            "  const differenceInMs = end - start;\n  return Math.ceil(differenceInMs / millisecondsInDay);\n}\n")
    memory = RepoMemory()
    memory.put_file("src/overlap/index.ts", "a", units_of("src/overlap/index.ts", text))
    hit = memory.search(read_code_query("the overlap rounds the milliseconds up with Math.ceil"), 1, focused=True)[0]
    assert text.split("\n")[hit.focus - 1] == "  return Math.ceil(differenceInMs / millisecondsInDay);", hit.focus
    assert memory.search(read_code_query("the overlap rounds the milliseconds up with Math.ceil"), 1)[0].focus == 0


def test_what_a_review_found_in_the_new_rules() -> None:
    """A review's cases: a long constant after a cast took the trailing-macro pattern 40 s (every way of cutting it
    into macros), an error line of nothing but spaces the message pattern seconds; an expression 600 terms deep in a
    file with errors lost every definition to Python's stack; a call's keyword argument, an object's arrow function
    and a comment's `# define` were declarations; a URL's or a file's anchor was a Ruby name; `impl_op!(Meters, ...)`
    a function named Meters; a lone Swift `#elseif` a module record. (The alarm guards against a hang, not a speed.)"""
    import signal

    from ctxsieve.ingest.coderank.ranker import declares
    from ctxsieve.ingest.request import read_request

    def hung(signum: int, frame: object) -> None:
        raise TimeoutError("a pattern ran away")

    previous = signal.signal(signal.SIGALRM, hung)
    signal.alarm(20)
    try:
        cast = ("void Setup(Device& d) {\n  auto f = (VkPipelineCreateFlags)"
                "VK_PIPELINE_CREATE_RAY_TRACING_SHADER_GROUP_HANDLE_CAPTURE_REPLAY_BIT_KHR | y;\n}\n")
        assert [u.name for u in units_of("render/pipeline.cpp", cast)] == ["Setup"]
        assert read_code_query("Error:" + " " * 40_000).phrases == ()
        deep = "int f(void) {\n#ifdef X\n  int x = (a $ b)" + " + a" * 600 + ";\n#endif\n  return 0;\n}\n" \
            "int g(void) { return 1; }\n"
        assert [u.name for u in units_of("deep.c", deep)] == ["f", "g"]
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    call = CodeUnit("a.py", "a", "module", 1, 5, "r = requests.get(\n    URL,\n    timeout=5,\n    max_retries=3,\n)")
    config = CodeUnit("vite.config.ts", "vite.config", "module", 1, 3, "export default {\n  resolve: x => x,\n}")
    comment = CodeUnit("a.py", "a", "module", 1, 1, "# define handler here")
    assert not declares(call, "max_retries") and not declares(config, "resolve") and not declares(comment, "handler")
    assert not read_request("see http://host/api/v1/items#details and README.md#configuration").names
    assert [u.kind for u in units_of("src/ops.rs", "impl_op!(Meters,\n    Add, add);\n")] == ["module"]
    assert [u.kind for u in units_of("a.swift", "func a() {}\n#elseif os(macOS)\nfunc b() {}\n")] == ["function"] * 2


def test_enum_members_fields_object_keys_and_keyword_look_ups_are_declarations() -> None:
    """A third trial's cases: curl's `CURLE_OPERATION_TIMEDOUT` (an enum member) and `Curl_easy.state` (a struct's
    field), viper's `Viper.envKeyReplacer` (a Go struct's field) and `features.BindStruct` (a package's constant),
    undici's `kDestroyed` (an exported object's key) answered "no definition is named" or hid the line; `struct
    Curl_easy` was read as words; an `if` after an `#ifdef` block was a function named `if`."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    sources = {
        "include/curl/curl.h": "typedef enum {\n  CURLE_OK = 0,\n"
                               + "".join(f"  CURLE_CODE_{i},   /* {i} */\n" for i in range(30))
                               + "  CURLE_OPERATION_TIMEDOUT,  /* 28 */\n} CURLcode;\n",
        "lib/urldata.h": "struct Curl_easy {\n  unsigned int magic;\n" + "".join(
            f"  int field_{i};\n" for i in range(30)) + "  struct UrlState state;\n};\n",
        "viper.go": "package viper\n\ntype Viper struct {\n" + "".join(f"\tfield{i} string\n" for i in range(30))
                    + "\tenvKeyReplacer StringReplacer\n}\n",
        "internal/features/bind_struct.go": "//go:build bind\n\npackage features\n\nconst BindStruct = true\n",
        "lib/core/symbols.js": "module.exports = {\n"
                               + "".join(f"  kName{i}: Symbol('name {i}'),\n" for i in range(30))
                               + "  kDestroyed: Symbol('destroyed'),\n}\n",
        "src/hono-base.ts": "class Hono {\n" + "".join(f"  field{i}: string\n" for i in range(30))  # (a field
                            + "  post!: HandlerInterface<E, 'post', S>\n  route(path: string) {\n    return this\n"
                            "  }\n}\n",  # assigned elsewhere, `!`: hono's `Hono.post` was said undefined)
    }
    memory = RepoMemory()
    for path, text in sources.items():
        memory.put_file(path, path, units_of(path, text))
    for asked, path, line in (("CURLE_OPERATION_TIMEDOUT", "include/curl/curl.h", 33),
                              ("Curl_easy.state", "lib/urldata.h", 33), ("Viper.envKeyReplacer", "viper.go", 34),
                              ("features.BindStruct", "internal/features/bind_struct.go", 0),
                              ("kDestroyed", "lib/core/symbols.js", 32), ("struct Curl_easy", "lib/urldata.h", 0),
                              ("Hono.post", "src/hono-base.ts", 32)):
        hit = memory.search(read_code_query(asked), 1, focused=True)[0]
        assert (hit.unit.path, hit.focus) == (path, line), (asked, hit)
    text = ("static CURLcode parallel_transfers(void)\n{\n  CURLcode result = add(&s);\n  if(result) {\n"
            "    return result;\n  }\n\n#ifdef DEBUGBUILD\n  if(global->test_event_based)\n#ifdef USE_LIBUV\n"
            "    return parallel_event(s);\n#else\n    errorf(\"Testing requires libuv\");\n#endif\n  else\n#endif\n\n"
            "  if(all_added) {\n    run();\n  }\n  return result;\n}\n")
    assert [(u.name, u.start_line, u.end_line) for u in units_of("src/tool_operate.c", text)] == [
        ("parallel_transfers", 1, 22)]


def test_a_function_named_with_its_arity_is_named() -> None:
    """Elixir's and Erlang's `Module.function/arity` (`Plug.Conn.assign/3`): the function of that name first (the
    arity alone had read as a path's part, and `assign/3` ranked `merge_assigns` first); a path stays a path."""
    from ctxsieve.indexes.repos.memory import RepoMemory

    doc = "".join(f"  Assign {i}: assign each key, as assign does; assign, assign, assign.\n" for i in range(6))
    conn = (f"defmodule Plug.Conn do\n  @doc \"\"\"\n{doc}  \"\"\"\n  def merge_assigns(conn, assigns) do\n"
            "    Enum.reduce(assigns, conn, fn {k, v}, acc -> assign(acc, k, v) end)\n  end\n\n"
            "  def assign(conn, key, value), do: conn\nend\n")
    memory = RepoMemory()
    memory.put_file("lib/plug/conn.ex", "a", units_of("lib/plug/conn.ex", conn))
    for asked in ("assign/3", "Plug.Conn.assign/3", "`Plug.Conn.assign/3` drops the key"):
        assert memory.search(read_code_query(asked), 1)[0].unit.name == "Plug.Conn.assign", asked
    assert read_code_query("lib/plug/conn.ex").files == ("lib/plug/conn.ex",)
    assert read_code_query("see tests/fixtures/2").text == "see tests/fixtures/2", "a folder's part is no name"


def test_an_objective_c_class_doc_above_its_region_macro_is_the_classs() -> None:
    """AFNetworking writes a class's doc comment, a blank line, `NS_ASSUME_NONNULL_BEGIN`, a blank line, then its
    `@interface`: the doc was counted as the module's, and a search for what the doc says found the module. It is the
    class's; a doc with no such macro between it and the next line of code stays where it was."""
    header = ("#import <Foundation/Foundation.h>\n\n/**\n `AFSecurityPolicy` evaluates server trust against pinned "
              "certificates.\n */\n\nNS_ASSUME_NONNULL_BEGIN\n\n@interface AFSecurityPolicy : NSObject\n\n"
              "@property (readonly) BOOL pinned;\n\n@end\n\nNS_ASSUME_NONNULL_END\n")
    units = {u.name: (u.kind, u.start_line, u.end_line) for u in units_of("AFNetworking/AFSecurityPolicy.h", header)}
    assert units["AFSecurityPolicy"][:2] == ("class", 3), units
    plain = header.replace("NS_ASSUME_NONNULL_BEGIN\n\n", "#define AF_PINNED 1\n\n")
    moved = {u.name: (u.kind, u.start_line) for u in units_of("AFNetworking/AFSecurityPolicy.h", plain)}
    assert moved["AFSecurityPolicy"] == ("class", 9), moved


def test_the_closing_line_says_what_became_of_words_no_definition_holds() -> None:
    from ctxsieve_client.code_search import Caveats, closing_line

    foreign = Caveats(foreign_words=True)
    assert "they only re-rank by meaning what its other words found" in closing_line("app", 3, 0, "ready", foreign)
    assert "not read until the repository's vectors are made" in closing_line("app", 3, 0, "lexical", foreign)
    off = Caveats(foreign_words=True, vectors_off=True)
    assert "not read (this service makes no vectors)" in closing_line("app", 3, 0, "lexical", off)
    assert "Chinese" not in closing_line("app", 3, 0, "ready")


def test_a_powershell_type_literal_is_no_definition() -> None:
    """PowerShell's grammar calls a type literal's name `type_spec` too (`[System.IO.File]`): read as Go's group
    member, ansible's `async_wrapper.ps1` became dozens of one-line types, and its ranking on localization moved."""
    text = "param(\n    [Parameter(Mandatory)][System.String]$Path\n)\n\n$x = [System.IO.File]::ReadAllText($Path)\n"
    assert [(u.kind, u.start_line, u.end_line) for u in units_of("lib/wrapper.ps1", text)] == [("module", 1, 5)]
