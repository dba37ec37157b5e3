// Unit tests of the Jinja interpreter (engine/tokenizer/jinja/): each construct with Python
// Jinja2's output (trim_blocks and lstrip_blocks on, as transformers sets them), each error
// with its line, each limit, and the content ranges that follow message text through
// concatenation, slicing, trimming and filters.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tokenizer/jinja/template.h"

namespace magnetar::jinja {
namespace {

using ojson = nlohmann::ordered_json;

struct Outcome {
  Status status = Status::ok();
  RenderResult result;
};

// Renders `source` with the JSON object `vars` as variables; "content" marks every string of
// the variable `messages` as message content.
Outcome run(const std::string& source, const std::string& vars = "{}", const RenderLimits& limits = {}) {
  Outcome o;
  std::unique_ptr<Template> t;
  o.status = Template::parse(source, &t);
  if (!o.status) return o;
  Dict d;
  const ojson j = ojson::parse(vars);
  for (auto it = j.begin(); it != j.end(); ++it) {
    Value v;
    EXPECT_TRUE(value_from_json(it.value(), it.key() == "messages", &v));
    d.set(it.key(), v);
  }
  o.status = t->render(d, limits, &o.result);
  return o;
}

std::string render(const std::string& source, const std::string& vars = "{}") {
  const Outcome o = run(source, vars);
  EXPECT_TRUE(o.status) << source << " → " << o.status.message();
  return o.result.text;
}

std::string error(const std::string& source, const std::string& vars = "{}", const RenderLimits& limits = {}) {
  const Outcome o = run(source, vars, limits);
  EXPECT_FALSE(o.status) << source << " rendered " << o.result.text;
  return o.status.message();
}

#define EXPECT_ERROR_HAS(source, fragment) \
  EXPECT_NE(error(source).find(fragment), std::string::npos) << error(source)

// ---- whitespace control ------------------------------------------------------------------

TEST(Jinja, TrimBlocksEatsTheNewlineAfterATag) {
  EXPECT_EQ(render("{% if true %}\nyes\n{% endif %}\nafter"), "yes\nafter");
  EXPECT_EQ(render("{{ 'a' }}\nb"), "a\nb");  // not after an expression
  EXPECT_EQ(render("{# comment #}\nx"), "x");
}

TEST(Jinja, LstripBlocksRemovesIndentBeforeATag) {
  EXPECT_EQ(render("<\n    {% if true %}\n  x\n    {% endif %}\n>"), "<\n  x\n>");
  EXPECT_EQ(render("a  {% if true %}b{% endif %}"), "a  b");  // text before the tag on its line
  EXPECT_EQ(render("  {{ 'x' }}"), "  x");                    // expressions are not stripped
  EXPECT_EQ(render("  {%+ if true %}x{% endif %}"), "  x");   // + opts out
}

TEST(Jinja, MinusStripsAllWhitespace) {
  EXPECT_EQ(render("a \n {{- 'b' -}} \n c"), "abc");
  EXPECT_EQ(render("a\n\n{%- if true -%}\n\n b {%- endif %}"), "ab");
  EXPECT_EQ(render("x {%+ if true +%}\ny{% endif %}"), "x \ny");
}

TEST(Jinja, OneTrailingNewlineIsDroppedAndNewlinesNormalised) {
  EXPECT_EQ(render("a\n"), "a");
  EXPECT_EQ(render("a\n\n"), "a\n");
  EXPECT_EQ(render("a\r\nb\rc"), "a\nb\nc");
}

TEST(Jinja, RawBlocksAndComments) {
  EXPECT_EQ(render("{% raw %}{{ x }}{% endraw %}"), "{{ x }}");
  EXPECT_EQ(render("a{# {{ x }} #}b"), "ab");
  EXPECT_ERROR_HAS("{# open", "unterminated comment");
}

// ---- expressions --------------------------------------------------------------------------

TEST(Jinja, Literals) {
  EXPECT_EQ(render("{{ 'a\\n\\t\\u00e9\\x41\\\\' }}"), "a\n\t\xc3\xa9" "A\\");
  EXPECT_EQ(render("{{ \"it's\" }}|{{ 'a' 'b' }}"), "it's|ab");
  EXPECT_EQ(render("{{ 1 }} {{ 1.5 }} {{ 2.0 }} {{ 1e20 }} {{ 0.0001 }} {{ 1_000 }}"), "1 1.5 2.0 1e+20 0.0001 1000");
  EXPECT_EQ(render("{{ true }} {{ False }} {{ none }} {{ [1, 'a'] }} {{ {'k': \"it's\"} }}"),
            "True False None [1, 'a'] {'k': \"it's\"}");
  EXPECT_EQ(render("{{ 'line\nbreak' }}"), "line\nbreak");  // raw newline inside a literal
}

TEST(Jinja, Arithmetic) {
  EXPECT_EQ(render("{{ 7 + 3 }} {{ 7 - 10 }} {{ 7 * 3 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ 7 % 3 }} {{ 2 ** 10 }}"),
            "10 -3 21 3.5 3 1 1024");
  EXPECT_EQ(render("{{ -7 // 2 }} {{ -7 % 3 }} {{ 7 % -3 }} {{ 1 + 0.5 }} {{ 6 / 3 }}"), "-4 2 -2 1.5 2.0");
  EXPECT_EQ(render("{{ 'ab' * 3 }} {{ [1] * 2 }} {{ [1] + [2] }} {{ 'a' ~ 1 ~ none }}"), "ababab [1, 1] [1, 2] a1None");
  EXPECT_EQ(render("{{ 1 + 2 * 3 }} {{ (1 + 2) * 3 }} {{ -2 ** 2 }}"), "7 9 4");
}

TEST(Jinja, ComparisonsAndLogic) {
  EXPECT_EQ(render("{{ 1 < 2 }} {{ 2 <= 1 }} {{ 'a' < 'b' }} {{ 1 == 1.0 }} {{ true == 1 }} {{ 1 != 2 }}"),
            "True False True True True True");
  EXPECT_EQ(render("{{ 1 < 2 < 3 }} {{ 3 > 2 > 2 }}"), "True False");
  EXPECT_EQ(render("{{ 'b' in 'abc' }} {{ 2 in [1, 2] }} {{ 'k' in {'k': 1} }} {{ 'x' not in 'abc' }}"),
            "True True True True");
  EXPECT_EQ(render("{{ 0 or 'x' }} {{ 1 and 'y' }} {{ not 0 }} {{ not (1 and 0) }} {{ [] or none }}"),
            "x y True True None");
  EXPECT_EQ(render("{{ (true != false) }} {{ 'a' if 1 else 'b' }} {{ 'a' if 0 else 'b' }}[{{ 'a' if 0 }}]"),
            "True a b[]");
}

TEST(Jinja, IndexingAttributesAndSlices) {
  const char* vars = R"({"m": [{"role": "user", "content": "hi"}, {"role": "bot"}], "s": "héllo"})";
  EXPECT_EQ(render("{{ m[0]['role'] }} {{ m[0].content }} {{ m[-1].role }} [{{ m[5] }}] [{{ m[1].content }}]", vars),
            "user hi bot [] []");
  EXPECT_EQ(render("{{ s[1] }} {{ s[1:3] }} {{ s[::-1] }} {{ s[-2:] }} {{ s[:100] }} {{ m[1:]|length }}", vars),
            "é él olléh lo héllo 1");
  EXPECT_EQ(render("{{ [1,2,3,4,5][::2] }} {{ [1,2,3][5:] }} {{ [1,2,3][-1:0:-1] }}"), "[1, 3, 5] [] [3, 2]");
  EXPECT_EQ(render("{{ m.0.role }}", vars), "user");
}

TEST(Jinja, FilterPrecedenceIsTighterThanArithmetic) {
  EXPECT_EQ(render("{{ m|length - 1 }}", R"({"m": [1, 2, 3]})"), "2");
  EXPECT_EQ(render("{{ -3|abs }} {{ 'a' + 'b'|upper }}"), "3 aB");
}

TEST(Jinja, Tests) {
  EXPECT_EQ(render("{{ x is defined }} {{ x is undefined }} {{ none is none }} {{ 1 is not none }}"),
            "False True True True");
  EXPECT_EQ(render("{{ 'a' is string }} {{ {} is mapping }} {{ [] is iterable }} {{ 'a' is iterable }} {{ 1 is iterable }}"),
            "True True True True False");
  EXPECT_EQ(render("{{ 1 is number }} {{ 1.5 is float }} {{ 1 is integer }} {{ [] is sequence }} {{ false is false }} {{ 1 is true }}"),
            "True True True True True False");
  EXPECT_EQ(render("{{ 3 is odd }} {{ 4 is even }} {{ 9 is divisibleby 3 }} {{ 2 is divisibleby(4) }} {{ 'a' is eq 'a' }}"),
            "True True True False True");
  EXPECT_EQ(render("{{ x is defined and x }} {{ 'ab' is lower }}"), "False True");
}

TEST(Jinja, StringMethods) {
  EXPECT_EQ(render("[{{ '  a b  '.strip() }}] [{{ 'xxaxx'.strip('x') }}] [{{ '\\n\\na\\n'.lstrip('\\n') }}] [{{ 'a  '.rstrip() }}]"),
            "[a b] [a] [a\n] [a]");
  EXPECT_EQ(render("{{ 'abc'.startswith('ab') }} {{ 'abc'.endswith(('x', 'c')) }} {{ 'a,b,,c'.split(',') }} {{ ' a  b '.split() }}"),
            "True True ['a', 'b', '', 'c'] ['a', 'b']");
  EXPECT_EQ(render("{{ 'a-b-c'.split('-', 1) }} {{ 'aXbX'.replace('X', '_') }} {{ 'Hello'.upper() }} {{ 'Hello'.lower() }}"),
            "['a', 'b-c'] a_b_ HELLO hello");
  EXPECT_EQ(render("{{ 'hello world'.title() }} {{ 'hELLO'.capitalize() }} {{ 'abcb'.find('b') }} {{ 'abcb'.count('b') }}"),
            "Hello World Hello 1 2");
  EXPECT_EQ(render("{{ ', '.join(['a', 'b']) }} {{ 'a\\nb'.splitlines() }} {{ '12'.isdigit() }}"), "a, b ['a', 'b'] True");
  EXPECT_EQ(render("{{ x.split('</think>')[-1].lstrip('\\n') }}", R"({"x": "<think>r</think>\n\nanswer"})"), "answer");
}

TEST(Jinja, PythonWhitespaceForStripAndTrim) {
  // str.strip() removes U+0085, U+001C–U+001F and U+3000 but not U+FEFF.
  EXPECT_EQ(render("[{{ x|trim }}]", R"({"x": "\u0085\u001c a \u3000"})"), "[a]");
  EXPECT_EQ(render("[{{ x.strip() }}]", R"({"x": "\ufeffa\ufeff"})"), "[\xef\xbb\xbf" "a\xef\xbb\xbf]");
}

TEST(Jinja, DictMethods) {
  const char* vars = R"({"d": {"b": 1, "a": 2}})";
  EXPECT_EQ(render("{% for k, v in d.items() %}{{ k }}={{ v }};{% endfor %}", vars), "b=1;a=2;");
  EXPECT_EQ(render("{{ d.keys()|list }} {{ d.values()|list }} {{ d.get('a') }} {{ d.get('z', 0) }} {{ d.get('z') }}", vars),
            "['b', 'a'] [1, 2] 2 0 None");
  EXPECT_EQ(render("{% for k, v in d|items %}{{ k }}{% endfor %} {% for k in d %}{{ k }}{% endfor %}", vars), "ba ba");
  EXPECT_EQ(render("{{ d|dictsort }}", vars), "[['a', 2], ['b', 1]]");
}

TEST(Jinja, Filters) {
  EXPECT_EQ(render("{{ [3, 1, 2]|first }} {{ [3, 1, 2]|last }} {{ [3, 1, 2]|sort }} {{ [3, 1, 2]|sort(reverse=true) }}"),
            "3 2 [1, 2, 3] [3, 2, 1]");
  EXPECT_EQ(render("{{ ['a', 'b']|join(', ') }} {{ [1, 2]|join }} {{ 'ab'|upper }} {{ 'AB'|lower }} {{ 'ab cd'|title }}"),
            "a, b 12 AB ab Ab Cd");
  EXPECT_EQ(render("{{ x|default('d') }} {{ ''|default('d') }} {{ ''|default('d', true) }} {{ none|d('n') }}"),
            "d  d None");
  EXPECT_EQ(render("{{ 'abc'|length }} {{ [1]|count }} {{ x|length }} {{ 'ab'|list }} {{ 12|string ~ 'x' }} {{ '<b>'|safe }}"),
            "3 1 0 ['a', 'b'] 12x <b>");
  EXPECT_EQ(render("{{ ['a', 'b', 'a']|unique|list }} {{ [1, 2]|reverse|list }} {{ 'abc'|reverse }} {{ [1, 2, 3]|sum }}"),
            "['a', 'b'] [2, 1] cba 6");
  EXPECT_EQ(render("{{ ['a', 'code', 'b']|reject('equalto', 'code')|join(', ') }} {{ [1, 2, 3, 4]|select('odd')|list }}"),
            "a, b [1, 3]");
  const char* people = R"({"p": [{"n": "x", "ok": true}, {"n": "y", "ok": false}]})";
  EXPECT_EQ(render("{{ p|selectattr('ok')|map(attribute='n')|list }} {{ p|rejectattr('ok')|map(attribute='n')|first }}", people),
            "['x'] y");
  EXPECT_EQ(render("{{ p|map(attribute='n')|map('upper')|join }}", people), "XY");
  EXPECT_EQ(render("{{ '3'|int + 1 }} {{ 'x'|int }} {{ '2.5'|float }} {{ 2.567|round(2) }} {{ -1|abs }} {{ [1, 5, 2]|max }}"),
            "4 0 2.5 2.57 1 5");
  EXPECT_EQ(render("{{ 'a\\nb'|indent(2) }}|{{ 'a\\nb'|indent(2, true) }}"), "a\n  b|  a\n  b");
  EXPECT_EQ(render("{{ '<a href=\"x\">'|e }} {{ 'a b'|replace(' ', '_') }} {{ 'one two'|wordcount }}"),
            "&lt;a href=&#34;x&#34;&gt; a_b 2");
}

TEST(Jinja, ToJsonIsPythonJsonDumpsWithoutAsciiEscapes) {
  const char* vars = R"({"t": {"name": "get", "args": {"city": "Zürich", "n": 1.5, "ok": true, "none": null}, "list": [1, "a\"b\n"]}})";
  EXPECT_EQ(render("{{ t|tojson }}", vars),
            R"({"name": "get", "args": {"city": "Zürich", "n": 1.5, "ok": true, "none": null}, "list": [1, "a\"b\n"]})");
  EXPECT_EQ(render("{{ {'b': [1, {}], 'a': []}|tojson(indent=2) }}"), "{\n  \"b\": [\n    1,\n    {}\n  ],\n  \"a\": []\n}");
  EXPECT_EQ(render("{{ {'b': 1, 'a': 2}|tojson(sort_keys=true) }} {{ '\\u0001'|tojson }} {{ 1e16|tojson }}"),
            "{\"a\": 2, \"b\": 1} \"\\u0001\" 1e+16");
}

// ---- statements ---------------------------------------------------------------------------

TEST(Jinja, ForLoopVariables) {
  EXPECT_EQ(render("{% for x in 'abc' %}{{ loop.index0 }}{{ loop.index }}{{ loop.first }}{{ loop.last }}{{ loop.length }}"
                   "{{ loop.revindex }} {% endfor %}"),
            "01TrueFalse33 12FalseFalse32 23FalseTrue31 ");
  EXPECT_EQ(render("{% for x in [1, 2, 3] %}{{ loop.previtem }}{{ loop.nextitem }}{{ loop.cycle('a', 'b') }},{% endfor %}"),
            "2a,13b,2a,");
  EXPECT_EQ(render("{% for x in [] %}x{% else %}empty{% endfor %}"), "empty");
  EXPECT_EQ(render("{% for x in y %}x{% else %}undefined is empty{% endfor %}"), "undefined is empty");
  EXPECT_EQ(render("{% for x in range(10) if x is odd %}{{ x }}{{ loop.index }} {% endfor %}"), "11 32 53 74 95 ");
  EXPECT_EQ(render("{% for a, b in [[1, 2], [3, 4]] %}{{ a + b }}{% endfor %}"), "37");
  EXPECT_EQ(render("{% for x in [3, 1, 2]|sort %}{{ x }}{% endfor %}"), "123");
  EXPECT_EQ(render("{% for x in range(5) %}{% if x == 1 %}{% continue %}{% endif %}{% if x == 3 %}{% break %}{% endif %}{{ x }}{% endfor %}"),
            "02");
  EXPECT_EQ(render("{% for i in range(2) %}{% for j in range(2) %}{{ i }}{{ j }}{{ loop.index }} {% endfor %}{% endfor %}"),
            "001 012 101 112 ");
}

TEST(Jinja, SetScopes) {
  // A loop body has its own scope; if does not.
  EXPECT_EQ(render("{% set x = 1 %}{% for i in [1] %}{% set x = 2 %}{{ x }}{% endfor %}{{ x }}"), "21");
  EXPECT_EQ(render("{% if true %}{% set x = 5 %}{% endif %}{{ x }}"), "5");
  EXPECT_EQ(render("{% set ns = namespace(found=false, n=0) %}{% for i in range(3) %}{% set ns.n = ns.n + i %}"
                   "{% if i == 1 %}{% set ns.found = true %}{% endif %}{% endfor %}{{ ns.found }} {{ ns.n }}"),
            "True 3");
  EXPECT_EQ(render("{% set a, b = 1, 2 %}{{ a }}{{ b }}"), "12");
  EXPECT_EQ(render("{% set block %}in {{ 'side' }}{% endset %}[{{ block }}]"), "[in side]");
  EXPECT_EQ(render("{% set messages = messages[1:] %}{{ messages|length }}", R"({"messages": [1, 2, 3]})"), "2");
  EXPECT_EQ(render("{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}[{{ a }}]"), "3[]");
}

TEST(Jinja, IfElifElse) {
  const std::string t = "{% if x == 1 %}one{% elif x == 2 %}two{% elif x == 3 %}three{% else %}many{% endif %}";
  EXPECT_EQ(render(t, R"({"x": 1})"), "one");
  EXPECT_EQ(render(t, R"({"x": 3})"), "three");
  EXPECT_EQ(render(t, R"({"x": 9})"), "many");
}

TEST(Jinja, MacrosAndCallBlocks) {
  EXPECT_EQ(render("{% macro greet(name, punct='!') %}Hi {{ name }}{{ punct }}{% endmacro %}"
                   "{{ greet('a') }} {{ greet('b', '?') }} {{ greet(name='c', punct='.') }}"),
            "Hi a! Hi b? Hi c.");
  EXPECT_EQ(render("{% macro wrap(tag) %}<{{ tag }}>{{ caller() }}</{{ tag }}>{% endmacro %}"
                   "{% call wrap('b') %}bold {{ 1 + 1 }}{% endcall %}"),
            "<b>bold 2</b>");
  EXPECT_EQ(render("{% macro each(xs) %}{% for x in xs %}{{ caller(x) }}{% endfor %}{% endmacro %}"
                   "{% call(item) each([1, 2]) %}[{{ item }}]{% endcall %}"),
            "[1][2]");
  // Macros see template globals, not the caller's loop variables.
  EXPECT_EQ(render("{% macro m() %}{{ g }}{{ i }}{% endmacro %}{% for i in [1] %}{{ m() }}{% endfor %}", R"({"g": "G"})"), "G");
}

TEST(Jinja, FilterBlockAndGeneration) {
  EXPECT_EQ(render("{% filter upper %}abc {{ 'd' }}{% endfilter %}"), "ABC D");
  EXPECT_EQ(render("{% filter trim|upper %}  x  {% endfilter %}"), "X");
  EXPECT_EQ(render("{% generation %}kept{% endgeneration %}"), "kept");
}

TEST(Jinja, Globals) {
  EXPECT_EQ(render("{{ range(3)|list }} {{ range(1, 7, 2)|list }} {{ range(3, 0, -1)|list }} {{ dict(a=1) }}"),
            "[0, 1, 2] [1, 3, 5] [3, 2, 1] {'a': 1}");
  EXPECT_EQ(render("{{ strftime_now('%Y')|length }}"), "4");
  const Outcome o = run("{{ raise_exception('no system role') }}");
  EXPECT_FALSE(o.status);
  EXPECT_TRUE(o.result.raised_by_template);
  EXPECT_NE(o.status.message().find("no system role"), std::string::npos);
}

TEST(Jinja, UndefinedFollowsJinjaDefaults) {
  EXPECT_EQ(render("[{{ missing }}] {{ missing is defined }} {{ missing|length }} {% if not missing %}falsy{% endif %}"),
            "[] False 0 falsy");
  EXPECT_EQ(render("{{ d.nope is defined }} [{{ d.nope }}] {{ d['nope']|default('x') }}", R"({"d": {}})"),
            "False [] x");
  EXPECT_ERROR_HAS("{{ missing.attr }}", "'missing' is undefined");
  EXPECT_ERROR_HAS("{{ missing + 1 }}", "'missing' is undefined");
}

// ---- errors -------------------------------------------------------------------------------

TEST(Jinja, SyntaxErrorsNameTheLine) {
  EXPECT_ERROR_HAS("line 1\n{% if x %}\nno end", "line 3");
  EXPECT_ERROR_HAS("line 1\n{% if x %}\nno end", "{% endif %}");
  EXPECT_ERROR_HAS("{{ 'open }}", "unterminated string");
  EXPECT_ERROR_HAS("a\n{{ x", "line 2: unterminated '{{'");
  EXPECT_ERROR_HAS("{% for x in y %}{% endif %}", "template line 1");
  EXPECT_ERROR_HAS("{{ 1 + }}", "unexpected '}}'");
  EXPECT_ERROR_HAS("{{ x | nosuchfilter }}", "unknown filter 'nosuchfilter'");
  EXPECT_ERROR_HAS("{{ x is nosuchtest }}", "unknown test 'nosuchtest'");
  EXPECT_ERROR_HAS("{% include 'other.jinja' %}", "'{% include %}' statement is not supported");
  EXPECT_ERROR_HAS("{% extends 'base' %}", "not supported");
  EXPECT_ERROR_HAS("{% frobnicate %}", "unknown statement");
  EXPECT_ERROR_HAS("{% break %}", "outside a loop");
  EXPECT_ERROR_HAS("{{ a ; b }}", "unexpected character ';'");
  EXPECT_ERROR_HAS("{{ f(**kw) }}", "not supported");
  EXPECT_ERROR_HAS("{{ 99999999999999999999 }}", "too large");
}

TEST(Jinja, RuntimeErrorsNameTheLineAndConstruct) {
  EXPECT_ERROR_HAS("\n\n{{ 1 + 'a' }}", "template line 3 ({{ ... }}): unsupported operand types for +: 'int' and 'str'");
  EXPECT_ERROR_HAS("{% for x in 5 %}{% endfor %}", "({% for %}): 'int' object is not iterable");
  EXPECT_ERROR_HAS("{{ 1 // 0 }}", "division by zero");
  EXPECT_ERROR_HAS("{{ 1 < 'a' }}", "cannot compare");
  EXPECT_ERROR_HAS("{{ 9223372036854775807 + 1 }}", "integer overflow");
  EXPECT_ERROR_HAS("{{ 'x'.nosuchmethod() }}", "has no attribute 'nosuchmethod'");
  EXPECT_ERROR_HAS("{{ 5() }}", "not callable");
  EXPECT_ERROR_HAS("{% set x = 1 %}{% set x.a = 2 %}", "only namespace() objects");
  EXPECT_ERROR_HAS("{% macro m(a) %}{% endmacro %}{{ m(1, 2) }}", "takes 1 argument");
  EXPECT_ERROR_HAS("{% for a, b in [[1]] %}{% endfor %}", "cannot unpack");
  EXPECT_ERROR_HAS("{{ {}|tojson ~ (x|tojson) }}", "not JSON serializable");
}

// ---- limits -------------------------------------------------------------------------------

TEST(Jinja, LoopIterationsAreBounded) {
  RenderLimits limits;
  limits.max_loop_iterations = 1000;
  EXPECT_NE(error("{% for i in range(100) %}{% for j in range(100) %}{% endfor %}{% endfor %}", "{}", limits)
                .find("more than 1000 loop iterations"),
            std::string::npos);
  EXPECT_EQ(run("{% for i in range(9) %}{% for j in range(100) %}{% endfor %}{% endfor %}", "{}", limits).status.is_ok(),
            true);
  EXPECT_ERROR_HAS("{{ range(100000000000)|length }}", "limit of 100000 items");
  EXPECT_ERROR_HAS("{{ ([1] * 100001)|length }}", "limit of 100000 items");
}

TEST(Jinja, RecursionIsBounded) {
  EXPECT_ERROR_HAS("{% macro r(n) %}{{ r(n + 1) }}{% endmacro %}{{ r(0) }}", "nested deeper than 64");
  // Nesting in the source is bounded by the parser: no stack overflow on "((((((...".
  EXPECT_ERROR_HAS("{{ " + std::string(100000, '(') + " }}", "nested too deeply");
  EXPECT_ERROR_HAS(std::string(50000, '{') + "% if x %}", "template line 1");
}

TEST(Jinja, ValuesAndExpressionTreesAreBounded) {
  // A flat chain builds a deep tree without parser recursion; the interpreter would recurse.
  std::string chain = "{{ 1";
  for (int i = 0; i < 1000; ++i) chain += " + 1";
  EXPECT_ERROR_HAS(chain + " }}", "expression nested too deeply");
  EXPECT_ERROR_HAS("{% set ns = namespace(x=[]) %}{% for i in range(200) %}{% set ns.x = [ns.x] %}{% endfor %}",
                   "nested more than 100 levels");
  // A namespace cannot hold a namespace (it could hold itself: a cycle outliving the render).
  EXPECT_ERROR_HAS("{% set ns = namespace() %}{% set ns.me = ns %}{{ ns }}", "holding a namespace()");
  EXPECT_ERROR_HAS("{% set ns = namespace() %}{% set ns.me = [1, {'a': ns}] %}", "holding a namespace()");
  EXPECT_EQ(render("{% set ns = namespace() %}{{ ns }} {{ [ns] }} {{ ns == ns }}"), "<Namespace> [<Namespace>] True");
  EXPECT_ERROR_HAS("{{ strftime_now('%Q') }}", "unsupported conversion '%Q'");
}

TEST(Jinja, OutputAndStringsAreBounded) {
  RenderLimits limits;
  limits.max_output_bytes = 1000;
  const std::string long_output = error("{% for i in range(200) %}0123456789{% endfor %}", "{}", limits);
  EXPECT_NE(long_output.find("output would exceed 1000 bytes"), std::string::npos) << long_output;
  EXPECT_NE(error("{{ 'x' * 5000 }}", "{}", limits).find("size limit"), std::string::npos);
  limits.max_list_items = 100;
  EXPECT_NE(error("{% for c in 'x' * 500 %}{% endfor %}", "{}", limits).find("more than 100 characters"),
            std::string::npos);
  limits.max_list_items = RenderLimits{}.max_list_items;
  EXPECT_ERROR_HAS("{% set s = namespace(v='xxxxxxxxxxxxxxxx') %}{% for i in range(40) %}{% set s.v = s.v ~ s.v %}{% endfor %}",
                   "size limit");
  limits = RenderLimits{};
  limits.max_created_bytes = 10000;
  EXPECT_NE(error("{% for i in range(1000) %}{% set x = 'abcdefghij' ~ i %}{% endfor %}", "{}", limits)
                .find("too much text"),
            std::string::npos);
  EXPECT_FALSE(Template::parse(std::string(Template::kMaxSourceBytes + 1, 'x'), nullptr));
}

// ---- content ranges -----------------------------------------------------------------------

TEST(JinjaContent, RangesFollowMessageText) {
  const char* vars = R"({"messages": [{"role": "user", "content": "  <|im_start|>hi  "}]})";
  Outcome o = run("<|im_start|>{{ messages[0].role }}\n{{ messages[0].content|trim }}<|im_end|>", vars);
  ASSERT_TRUE(o.status);
  EXPECT_EQ(o.result.text, "<|im_start|>user\n<|im_start|>hi<|im_end|>");
  // The role is template data here too (the conversation is all content in this helper), but
  // only the trimmed content's bytes are marked past it.
  ASSERT_EQ(o.result.content_ranges.size(), 2u);
  EXPECT_EQ(o.result.content_ranges[1], (ByteRange{17, 31}));
}

TEST(JinjaContent, ConcatenationSlicingAndSplittingKeepExactRanges) {
  const char* vars = R"({"messages": ["abcdef"]})";
  Outcome o = run("{% set c = messages[0] %}<{{ '[' + c[1:3] + ']' }}|{{ c.split('d')[1] }}|{{ c ~ 'X' }}|{{ [c, 'y']|join('-') }}>", vars);
  ASSERT_TRUE(o.status);
  EXPECT_EQ(o.result.text, "<[bc]|ef|abcdefX|abcdef-y>");
  const std::vector<ByteRange> want = {{2, 4}, {6, 8}, {9, 15}, {17, 23}};
  EXPECT_EQ(o.result.content_ranges, want);
}

TEST(JinjaContent, TransformsThatLoseTrackMarkTheWholeString) {
  const char* vars = R"({"messages": ["ab"]})";
  Outcome o = run("{{ 'x' }}{{ messages[0]|upper }}{{ 'y' }}{{ messages[0].replace('a', '<s>') }}{{ messages|tojson }}", vars);
  ASSERT_TRUE(o.status);
  EXPECT_EQ(o.result.text, "xABy<s>b[\"ab\"]");
  const std::vector<ByteRange> want = {{1, 3}, {4, 14}};
  EXPECT_EQ(o.result.content_ranges, want);
}

TEST(JinjaContent, TemplateTextIsNeverContent) {
  Outcome o = run("<|im_start|>{{ 'literal' }}{{ x }}", R"({"x": "not a message"})");
  ASSERT_TRUE(o.status);
  EXPECT_TRUE(o.result.content_ranges.empty());
}

}  // namespace
}  // namespace magnetar::jinja
