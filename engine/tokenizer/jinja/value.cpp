// Jinja values with Python semantics: see value.h.
#include "tokenizer/jinja/value.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>

namespace magnetar::jinja {

void fail(std::string message) { throw Error{std::move(message)}; }

const Value* Dict::find(std::string_view key) const {
  for (const auto& [k, v] : entries)
    if (k == key) return &v;
  return nullptr;
}

void Dict::set(std::string key, Value value) {
  for (auto& [k, v] : entries)
    if (k == key) {
      v = std::move(value);
      return;
    }
  entries.emplace_back(std::move(key), std::move(value));
}

const Value* CallArgs::get(size_t i, std::string_view name) const {
  if (i < positional.size()) return &positional[i];
  return keyword_only(name);
}

const Value* CallArgs::keyword_only(std::string_view name) const {
  for (const auto& [k, v] : keyword)
    if (k == name) return &v;
  return nullptr;
}

Value Value::undefined(std::string what) {
  Value v;
  v.text = Text(std::move(what));
  return v;
}

namespace {
// A value of `kind` whose one payload field `set` fills (the named constructors below).
template <typename Set>
Value make(Value::Kind kind, Set&& set) {
  Value v;
  v.kind = kind;
  set(v);
  return v;
}
}  // namespace

Value Value::none() { return make(Kind::None, [](Value&) {}); }
Value Value::boolean(bool b) { return make(Kind::Bool, [&](Value& v) { v.flag = b; }); }
Value Value::from_int(int64_t i) { return make(Kind::Int, [&](Value& v) { v.integer = i; }); }
Value Value::from_float(double f) { return make(Kind::Float, [&](Value& v) { v.number = f; }); }
Value Value::string(Text t) { return make(Kind::String, [&](Value& v) { v.text = std::move(t); }); }
namespace {

int element_depth(const Value& e) { return e.kind == Value::Kind::List || e.kind == Value::Kind::Dict ? e.depth : 0; }

void check_depth(int depth) {
  if (depth > Value::kMaxDepth) fail("values nested more than " + std::to_string(Value::kMaxDepth) + " levels deep");
}

}  // namespace

Value Value::from_list(List items) {
  Value v;
  v.kind = Kind::List;
  for (const Value& e : items) v.depth = std::max(v.depth, element_depth(e));
  check_depth(++v.depth);
  v.list = std::make_shared<const List>(std::move(items));
  return v;
}
Value Value::from_dict(Dict d) {
  Value v;
  v.kind = Kind::Dict;
  for (const auto& e : d.entries) v.depth = std::max(v.depth, element_depth(e.second));
  check_depth(++v.depth);
  v.dict = std::make_shared<Dict>(std::move(d));
  return v;
}
Value Value::name_space(Dict d) {
  Value v = from_dict(std::move(d));
  v.kind = Kind::Namespace;
  v.depth = 0;
  return v;
}
Value Value::callable(std::string name, std::function<Value(const CallArgs&)> call) {
  Value v;
  v.kind = Kind::Function;
  v.function = std::make_shared<const Function>(Function{std::move(name), std::move(call)});
  return v;
}

double Value::as_double() const {
  switch (kind) {
    case Kind::Int: return static_cast<double>(integer);
    case Kind::Float: return number;
    case Kind::Bool: return flag ? 1.0 : 0.0;
    default: return 0;
  }
}

const char* type_name(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return "undefined";
    case Value::Kind::None: return "NoneType";
    case Value::Kind::Bool: return "bool";
    case Value::Kind::Int: return "int";
    case Value::Kind::Float: return "float";
    case Value::Kind::String: return "str";
    case Value::Kind::List: return "list";
    case Value::Kind::Dict: return "dict";
    case Value::Kind::Namespace: return "Namespace";
    case Value::Kind::Function: return "function";
  }
  return "?";
}

bool truthy(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return false;
    case Value::Kind::Bool: return v.flag;
    case Value::Kind::Int: return v.integer != 0;
    case Value::Kind::Float: return v.number != 0;
    case Value::Kind::String: return !v.text.empty();
    case Value::Kind::List: return !v.list->empty();
    case Value::Kind::Dict: return !v.dict->entries.empty();
    case Value::Kind::Namespace:
    case Value::Kind::Function: return true;
  }
  return false;
}

std::string format_float(double f) {
  if (std::isnan(f)) return "nan";
  if (std::isinf(f)) return f > 0 ? "inf" : "-inf";
  // Shortest round-trip digits, then Python's layout: scientific below 1e-4 and from 1e16.
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, f, std::chars_format::scientific);
  std::string sci(buf, res.ptr);
  const size_t e_pos = sci.find('e');
  std::string mantissa = sci.substr(0, e_pos);
  const int exponent = std::stoi(sci.substr(e_pos + 1));
  std::string sign;
  if (mantissa[0] == '-') sign = "-", mantissa.erase(0, 1);
  std::string digits;
  for (char c : mantissa)
    if (c != '.') digits += c;
  if (exponent < -4 || exponent >= 16) {
    std::string out = sign + digits.substr(0, 1);
    if (digits.size() > 1) out += "." + digits.substr(1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp_buf;
  }
  std::string out;
  if (exponent < 0) {
    out = "0." + std::string(static_cast<size_t>(-exponent - 1), '0') + digits;
  } else if (static_cast<size_t>(exponent) + 1 >= digits.size()) {
    out = digits + std::string(exponent + 1 - digits.size(), '0') + ".0";
  } else {
    out = digits.substr(0, exponent + 1) + "." + digits.substr(exponent + 1);
  }
  return sign + out;
}

namespace {

std::string repr_string(const std::string& s) {
  // Python picks single quotes unless the text has a single quote and no double quote.
  const bool use_double = s.find('\'') != std::string::npos && s.find('"') == std::string::npos;
  const char q = use_double ? '"' : '\'';
  std::string out(1, q);
  for (size_t pos = 0; pos < s.size();) {
    const uint32_t cp = next_code_point(s, &pos);
    if (cp == static_cast<uint32_t>(q) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp < 0x20 || cp == 0x7F) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", cp);
      out += buf;
    } else {
      append_utf8(cp, &out);
    }
  }
  out += q;
  return out;
}

bool any_content(const Value& v) {
  switch (v.kind) {
    case Value::Kind::String: return v.text.has_content();
    case Value::Kind::List:
      return std::any_of(v.list->begin(), v.list->end(), [](const Value& e) { return any_content(e); });
    case Value::Kind::Dict:
      return std::any_of(v.dict->entries.begin(), v.dict->entries.end(),
                         [](const auto& e) { return any_content(e.second); });
    default: return false;  // namespaces print as "<Namespace>"
  }
}

void json_string(const std::string& s, std::string* out) {
  *out += '"';
  for (unsigned char c : s) {
    switch (c) {
      case '"': *out += "\\\""; break;
      case '\\': *out += "\\\\"; break;
      case '\n': *out += "\\n"; break;
      case '\r': *out += "\\r"; break;
      case '\t': *out += "\\t"; break;
      case '\b': *out += "\\b"; break;
      case '\f': *out += "\\f"; break;
      default:
        if (c < 0x20) {
          char buf[8];
          std::snprintf(buf, sizeof buf, "\\u%04x", c);
          *out += buf;
        } else {
          *out += static_cast<char>(c);
        }
    }
  }
  *out += '"';
}

void json_value(const Value& v, int indent, bool sort_keys, int depth, std::string* out) {
  if (depth > 256) fail("tojson: value nested too deeply");
  const auto newline = [&](int level) {
    if (indent < 0) return;
    *out += '\n';
    out->append(static_cast<size_t>(indent) * level, ' ');
  };
  const char* item_sep = indent < 0 ? ", " : ",";
  switch (v.kind) {
    case Value::Kind::None: *out += "null"; return;
    case Value::Kind::Bool: *out += v.flag ? "true" : "false"; return;
    case Value::Kind::Int: *out += std::to_string(v.integer); return;
    case Value::Kind::Float:
      if (std::isnan(v.number)) *out += "NaN";
      else if (std::isinf(v.number)) *out += v.number > 0 ? "Infinity" : "-Infinity";
      else *out += format_float(v.number);
      return;
    case Value::Kind::String: json_string(v.text.bytes(), out); return;
    case Value::Kind::List: {
      if (v.list->empty()) {
        *out += "[]";
        return;
      }
      *out += '[';
      for (size_t i = 0; i < v.list->size(); ++i) {
        if (i) *out += item_sep;
        newline(depth + 1);
        json_value((*v.list)[i], indent, sort_keys, depth + 1, out);
      }
      newline(depth);
      *out += ']';
      return;
    }
    case Value::Kind::Dict: {
      if (v.dict->entries.empty()) {
        *out += "{}";
        return;
      }
      std::vector<const std::pair<std::string, Value>*> entries;
      for (const auto& e : v.dict->entries) entries.push_back(&e);
      if (sort_keys)
        std::stable_sort(entries.begin(), entries.end(),
                         [](auto* a, auto* b) { return a->first < b->first; });
      *out += '{';
      for (size_t i = 0; i < entries.size(); ++i) {
        if (i) *out += item_sep;
        newline(depth + 1);
        json_string(entries[i]->first, out);
        *out += ": ";
        json_value(entries[i]->second, indent, sort_keys, depth + 1, out);
      }
      newline(depth);
      *out += '}';
      return;
    }
    case Value::Kind::Undefined:
    case Value::Kind::Namespace:
    case Value::Kind::Function: fail(std::string("tojson: a ") + type_name(v) + " is not JSON serializable");
  }
}

}  // namespace

std::string repr(const Value& v) {
  switch (v.kind) {
    case Value::Kind::String: return repr_string(v.text.bytes());
    case Value::Kind::List: {
      std::string out = "[";
      for (size_t i = 0; i < v.list->size(); ++i) out += (i ? ", " : "") + repr((*v.list)[i]);
      return out + "]";
    }
    case Value::Kind::Dict: {
      std::string out = "{";
      bool first = true;
      for (const auto& [k, e] : v.dict->entries) {
        out += (first ? "" : ", ") + repr_string(k) + ": " + repr(e);
        first = false;
      }
      return out + "}";
    }
    default: return to_text(v).bytes();
  }
}

Text to_text(const Value& v) {
  switch (v.kind) {
    case Value::Kind::Undefined: return Text();
    case Value::Kind::None: return Text("None");
    case Value::Kind::Bool: return Text(v.flag ? "True" : "False");
    case Value::Kind::Int: return Text(std::to_string(v.integer));
    case Value::Kind::Float: return Text(format_float(v.number));
    case Value::Kind::String: return v.text;
    case Value::Kind::List:
    case Value::Kind::Dict: return Text(repr(v), any_content(v));
    case Value::Kind::Namespace: return Text("<Namespace>");
    case Value::Kind::Function: return Text("<function " + v.function->name + ">");
  }
  return Text();
}

bool equals(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Value::Kind::Float || b.kind == Value::Kind::Float) return a.as_double() == b.as_double();
    const int64_t x = a.kind == Value::Kind::Bool ? a.flag : a.integer;
    const int64_t y = b.kind == Value::Kind::Bool ? b.flag : b.integer;
    return x == y;
  }
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case Value::Kind::Undefined:
    case Value::Kind::None: return true;
    case Value::Kind::String: return a.text.bytes() == b.text.bytes();
    case Value::Kind::List:
      if (a.list->size() != b.list->size()) return false;
      for (size_t i = 0; i < a.list->size(); ++i)
        if (!equals((*a.list)[i], (*b.list)[i])) return false;
      return true;
    case Value::Kind::Dict:
      if (a.dict->entries.size() != b.dict->entries.size()) return false;
      for (const auto& [k, e] : a.dict->entries) {
        const Value* other = b.dict->find(k);
        if (!other || !equals(e, *other)) return false;
      }
      return true;
    default: return a.dict == b.dict && a.function == b.function;
  }
}

int compare(const Value& a, const Value& b) {
  if (a.is_number() && b.is_number()) {
    if (a.kind == Value::Kind::Int && b.kind == Value::Kind::Int)
      return a.integer < b.integer ? -1 : a.integer > b.integer ? 1 : 0;
    const double x = a.as_double(), y = b.as_double();
    return x < y ? -1 : x > y ? 1 : 0;
  }
  if (a.kind == Value::Kind::String && b.kind == Value::Kind::String) {
    // UTF-8 byte order is code point order, as Python compares.
    const int c = a.text.bytes().compare(b.text.bytes());
    return c < 0 ? -1 : c > 0 ? 1 : 0;
  }
  if (a.kind == Value::Kind::List && b.kind == Value::Kind::List) {
    for (size_t i = 0; i < a.list->size() && i < b.list->size(); ++i)
      if (int c = compare((*a.list)[i], (*b.list)[i]); c != 0) return c;
    return a.list->size() < b.list->size() ? -1 : a.list->size() > b.list->size() ? 1 : 0;
  }
  fail(std::string("cannot compare ") + type_name(a) + " with " + type_name(b));
}

Text to_json(const Value& v, int indent, bool sort_keys) {
  std::string out;
  json_value(v, indent, sort_keys, 0, &out);
  return Text(std::move(out), any_content(v));
}

List iterate(const Value& v, size_t max_items) {
  switch (v.kind) {
    case Value::Kind::Undefined: return {};
    case Value::Kind::List: return *v.list;
    case Value::Kind::Dict: {
      List keys;
      for (const auto& e : v.dict->entries) keys.push_back(Value::string(e.first));
      return keys;
    }
    case Value::Kind::String: {
      List chars;
      if (code_point_count(v.text.bytes()) > max_items)
        fail("iterating a string of more than " + std::to_string(max_items) + " characters");
      const std::vector<size_t> offsets = code_point_offsets(v.text.bytes());
      for (size_t i = 0; i + 1 < offsets.size(); ++i)
        chars.push_back(Value::string(v.text.slice(offsets[i], offsets[i + 1])));
      return chars;
    }
    default: fail(std::string("'") + type_name(v) + "' object is not iterable");
  }
}

}  // namespace magnetar::jinja
