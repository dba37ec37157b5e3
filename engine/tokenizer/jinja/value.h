// Values of the Jinja interpreter, with Python semantics: undefined (Jinja's default Undefined),
// none, booleans, 64-bit integers, floats, tainted strings (text.h), lists (tuples too), dicts
// with string keys in insertion order, namespaces (the one mutable object), and callables
// (globals, bound methods, macros). Lists and dicts are shared and never modified after creation.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tokenizer/jinja/text.h"

namespace magnetar::jinja {

// Errors while parsing or rendering. Thrown inside the interpreter only; the API boundary
// (template.h) turns them into a Status.
struct Error {
  std::string message;
  bool from_template = false;  // raised by the template itself (raise_exception)
};
[[noreturn]] void fail(std::string message);

struct Value;
using List = std::vector<Value>;

struct Dict {
  std::vector<std::pair<std::string, Value>> entries;
  const Value* find(std::string_view key) const;
  void set(std::string key, Value value);
};

struct CallArgs {
  std::vector<Value> positional;
  std::vector<std::pair<std::string, Value>> keyword;
  // Positional argument i, or keyword `name`, or nullptr.
  const Value* get(size_t i, std::string_view name) const;
  const Value* keyword_only(std::string_view name) const;
};

struct Function {
  std::string name;
  std::function<Value(const CallArgs&)> call;
};

struct Value {
  enum class Kind : uint8_t { Undefined, None, Bool, Int, Float, String, List, Dict, Namespace, Function };
  Kind kind = Kind::Undefined;
  bool flag = false;    // Bool
  int64_t integer = 0;  // Int
  double number = 0;    // Float
  Text text;            // String; for Undefined, a description of what is missing
  std::shared_ptr<const List> list;
  std::shared_ptr<Dict> dict;  // Dict (read only) and Namespace (mutable)
  std::shared_ptr<const Function> function;
  // Lists and dicts: 1 + the deepest element (namespaces count as leaves: they are the only
  // mutable values, so only they can form cycles, and nothing recurses into them).
  int depth = 0;
  static constexpr int kMaxDepth = 100;

  static Value undefined(std::string what = {});
  static Value none();
  static Value boolean(bool b);
  static Value from_int(int64_t i);
  static Value from_float(double f);
  static Value string(Text t);
  static Value string(std::string s) { return string(Text(std::move(s))); }
  static Value from_list(List items);
  static Value from_dict(Dict d);
  static Value name_space(Dict d);
  static Value callable(std::string name, std::function<Value(const CallArgs&)> call);

  bool is(Kind k) const { return kind == k; }
  bool is_undefined() const { return kind == Kind::Undefined; }
  bool is_number() const { return kind == Kind::Int || kind == Kind::Float || kind == Kind::Bool; }
  bool is_mapping() const { return kind == Kind::Dict; }
  double as_double() const;
};

const char* type_name(const Value& v);  // Python's names: "str", "int", "dict", ...
bool truthy(const Value& v);
// Python str(): what {{ v }} prints (undefined prints nothing).
Text to_text(const Value& v);
std::string repr(const Value& v);
bool equals(const Value& a, const Value& b);
// <0, 0, >0; fails for types Python cannot order.
int compare(const Value& a, const Value& b);
// Python float repr ("1.0", "1e+16", "0.0001", "inf").
std::string format_float(double f);
// json.dumps(v, ensure_ascii=False) with separators ", " / ": " (or "," and newlines + indent
// when indent >= 0), keys in insertion order. Strings that came from contents taint the whole.
Text to_json(const Value& v, int indent, bool sort_keys);
// Elements of an iterable: list items, dict keys, string characters; undefined is empty.
// Fails beyond max_items elements.
List iterate(const Value& v, size_t max_items);

}  // namespace magnetar::jinja
