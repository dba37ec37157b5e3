// Filters, tests, methods and lookups of the Jinja interpreter: see builtins.h.
//
// Index: budget · argument helpers · lookups and slices · str methods · dict methods ·
//        tests · filters
#include "tokenizer/jinja/builtins.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace magnetar::jinja {

// ---- budget -------------------------------------------------------------------------------

void Budget::charge_string(size_t bytes) {
  if (bytes > max_string_bytes) fail("a string would exceed the template size limit");
  if (bytes > bytes_left) fail("the template created too much text");
  bytes_left -= bytes;
}

void Budget::check_items(size_t n) const {
  if (n > max_items) fail("a list would exceed the limit of " + std::to_string(max_items) + " items");
}

namespace {

// ---- argument helpers ---------------------------------------------------------------------

[[noreturn]] void undefined_error(const Value& v) {
  fail(v.text.empty() ? std::string("a value is undefined") : v.text.bytes());
}

const std::string& need_string(const Value& v, const char* what) {
  if (v.kind == Value::Kind::Undefined) undefined_error(v);
  if (v.kind != Value::Kind::String) fail(std::string(what) + " needs a string, not " + type_name(v));
  return v.text.bytes();
}

int64_t need_int(const Value& v, const char* what) {
  if (v.kind == Value::Kind::Int) return v.integer;
  if (v.kind == Value::Kind::Bool) return v.flag;
  if (v.kind == Value::Kind::Undefined) undefined_error(v);
  fail(std::string(what) + " needs an integer, not " + type_name(v));
}

bool arg_flag(const CallArgs& a, size_t i, std::string_view name, bool fallback) {
  const Value* v = a.get(i, name);
  return v ? truthy(*v) : fallback;
}

void check_arity(const CallArgs& a, size_t max_positional, const char* what) {
  if (a.positional.size() > max_positional)
    fail(std::string(what) + " takes at most " + std::to_string(max_positional) + " argument(s)");
}

Value bound(std::string name, std::function<Value(const CallArgs&)> f) {
  return Value::callable(std::move(name), std::move(f));
}

// Code-point index → byte offset, Python's negative and clamped rules for slices.
int64_t clamp_slice_index(const Value& v, int64_t n, int64_t fallback, bool forward) {
  if (v.kind == Value::Kind::None || v.kind == Value::Kind::Undefined) return fallback;
  int64_t i = need_int(v, "a slice");
  if (i < 0) i += n;
  if (forward) return std::clamp<int64_t>(i, 0, n);
  return std::clamp<int64_t>(i, -1, n - 1);
}

// ---- str methods ---------------------------------------------------------------------------

Text ascii_case(const Text& s, int mode) {  // 0 lower, 1 upper, 2 title, 3 capitalize
  std::string out = s.bytes();
  bool previous_cased = false;
  bool first = true;
  for (char& c : out) {
    const bool alpha = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
    bool upper = false;
    if (mode == 1) upper = true;
    else if (mode == 2) upper = !previous_cased;
    else if (mode == 3) upper = first;
    if (alpha) c = upper ? static_cast<char>(std::toupper(c)) : static_cast<char>(std::tolower(c));
    previous_cased = alpha;
    if (static_cast<unsigned char>(c) < 0x80 || (static_cast<unsigned char>(c) & 0xC0) != 0x80) first = false;
  }
  return s.derived(std::move(out));
}

// str.split(sep=None, maxsplit=-1): on whitespace runs when sep is missing.
Value split(const Text& s, const Value* sep, int64_t maxsplit, Budget& budget) {
  List parts;
  const std::string& b = s.bytes();
  if (!sep || sep->kind == Value::Kind::None) {
    const std::vector<size_t> offs = code_point_offsets(b);
    const auto space = [&](size_t k) {
      size_t p = offs[k];
      return is_python_space(next_code_point(b, &p));
    };
    size_t k = 0, n = offs.size() - 1;
    while (true) {
      while (k < n && space(k)) ++k;
      if (k >= n) break;
      if (maxsplit >= 0 && static_cast<int64_t>(parts.size()) == maxsplit) {
        size_t end = n;
        while (end > k && space(end - 1)) --end;
        parts.push_back(Value::string(s.slice(offs[k], offs[end])));
        break;
      }
      size_t start = k;
      while (k < n && !space(k)) ++k;
      parts.push_back(Value::string(s.slice(offs[start], offs[k])));
      budget.check_items(parts.size());
    }
    return Value::from_list(std::move(parts));
  }
  const std::string& d = need_string(*sep, "split");
  if (d.empty()) fail("split: empty separator");
  size_t start = 0;
  while (true) {
    const size_t at = (maxsplit >= 0 && static_cast<int64_t>(parts.size()) >= maxsplit) ? std::string::npos
                                                                                       : b.find(d, start);
    if (at == std::string::npos) {
      parts.push_back(Value::string(s.slice(start, b.size())));
      break;
    }
    parts.push_back(Value::string(s.slice(start, at)));
    budget.check_items(parts.size());
    start = at + d.size();
  }
  return Value::from_list(std::move(parts));
}

Value replace(const Text& s, const std::string& old, const std::string& with, int64_t count, Budget& budget) {
  std::string out;
  const std::string& b = s.bytes();
  size_t start = 0;
  int64_t done = 0;
  if (old.empty()) {  // Python inserts `with` between code points
    const std::vector<size_t> offs = code_point_offsets(b);
    for (size_t k = 0; k + 1 < offs.size(); ++k) {
      if (count < 0 || done < count) out += with, ++done;
      out.append(b, offs[k], offs[k + 1] - offs[k]);
      budget.charge_string(out.size());
    }
    if (count < 0 || done < count) out += with;
  } else {
    while (count < 0 || done < count) {
      const size_t at = b.find(old, start);
      if (at == std::string::npos) break;
      out.append(b, start, at - start);
      out += with;
      budget.charge_string(out.size());
      start = at + old.size();
      ++done;
    }
    out.append(b, start, std::string::npos);
  }
  budget.charge_string(out.size());
  if (done == 0) return Value::string(s);
  return Value::string(s.derived(std::move(out)));
}

bool affix_matches(const std::string& s, const Value& affix, bool prefix) {
  const auto one = [&](const Value& v) {
    const std::string& a = need_string(v, prefix ? "startswith" : "endswith");
    if (a.size() > s.size()) return false;
    return prefix ? s.compare(0, a.size(), a) == 0 : s.compare(s.size() - a.size(), a.size(), a) == 0;
  };
  if (affix.kind == Value::Kind::List)
    return std::any_of(affix.list->begin(), affix.list->end(), one);
  return one(affix);
}

template <typename Pred>
bool all_code_points(const std::string& s, Pred pred) {
  if (s.empty()) return false;
  for (size_t p = 0; p < s.size();)
    if (!pred(next_code_point(s, &p))) return false;
  return true;
}

Value join(const Value& separator_value, const List& items, Budget& budget) {
  const Text separator = to_text(separator_value);
  Text out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) out.append(separator);
    out.append(to_text(items[i]));
    budget.charge_string(out.size());
  }
  return Value::string(std::move(out));
}

Value string_method(const Value& self, std::string_view name, Budget& budget) {
  const Text s = self.text;
  const std::string n(name);
  Budget* b = &budget;
  if (n == "strip" || n == "lstrip" || n == "rstrip") {
    const StripSide side = n == "strip" ? StripSide::Both : n == "lstrip" ? StripSide::Left : StripSide::Right;
    return bound(n, [s, side, n](const CallArgs& a) {
      check_arity(a, 1, n.c_str());
      const Value* chars = a.get(0, "chars");
      if (chars && chars->kind != Value::Kind::None) {
        const std::string set = need_string(*chars, n.c_str());
        return Value::string(strip(s, side, &set));
      }
      return Value::string(strip(s, side, nullptr));
    });
  }
  if (n == "startswith" || n == "endswith") {
    const bool prefix = n == "startswith";
    return bound(n, [s, prefix](const CallArgs& a) {
      const Value* affix = a.get(0, "prefix");
      if (!affix) fail("startswith/endswith need an argument");
      return Value::boolean(affix_matches(s.bytes(), *affix, prefix));
    });
  }
  if (n == "split" || n == "rsplit") {
    const bool right = n == "rsplit";
    return bound(n, [s, b, right](const CallArgs& a) {
      const Value* max = a.get(1, "maxsplit");
      const int64_t maxsplit = max ? need_int(*max, "split") : -1;
      if (right && maxsplit >= 0) fail("rsplit with maxsplit is not supported");
      return split(s, a.get(0, "sep"), maxsplit, *b);
    });
  }
  if (n == "replace") {
    return bound(n, [s, b](const CallArgs& a) {
      const Value* old = a.get(0, "old");
      const Value* with = a.get(1, "new");
      if (!old || !with) fail("replace needs two arguments");
      const Value* count = a.get(2, "count");
      return replace(s, need_string(*old, "replace"), need_string(*with, "replace"),
                     count ? need_int(*count, "replace") : -1, *b);
    });
  }
  if (n == "upper" || n == "lower" || n == "title" || n == "capitalize") {
    const int mode = n == "lower" ? 0 : n == "upper" ? 1 : n == "title" ? 2 : 3;
    return bound(n, [s, mode](const CallArgs&) { return Value::string(ascii_case(s, mode)); });
  }
  if (n == "find" || n == "rfind" || n == "count" || n == "index") {
    return bound(n, [s, n](const CallArgs& a) {
      const Value* sub_value = a.get(0, "sub");
      if (!sub_value) fail(n + " needs an argument");
      const std::string& sub = need_string(*sub_value, n.c_str());
      const std::string& str = s.bytes();
      if (n == "count") {
        if (sub.empty()) return Value::from_int(static_cast<int64_t>(code_point_count(str)) + 1);
        int64_t c = 0;
        for (size_t at = str.find(sub); at != std::string::npos; at = str.find(sub, at + sub.size())) ++c;
        return Value::from_int(c);
      }
      const size_t at = n == "rfind" ? str.rfind(sub) : str.find(sub);
      if (at == std::string::npos) {
        if (n == "index") fail("substring not found");
        return Value::from_int(-1);
      }
      return Value::from_int(static_cast<int64_t>(code_point_count(std::string_view(str).substr(0, at))));
    });
  }
  if (n == "join") {
    return bound(n, [self, b](const CallArgs& a) {
      const Value* items = a.get(0, "iterable");
      if (!items) fail("join needs an argument");
      return join(self, iterate(*items, b->max_items), *b);
    });
  }
  if (n == "splitlines") {
    return bound(n, [s](const CallArgs&) {
      List lines;
      const std::string& str = s.bytes();
      size_t start = 0;
      for (size_t i = 0; i < str.size(); ++i)
        if (str[i] == '\n' || str[i] == '\r') {
          lines.push_back(Value::string(s.slice(start, i)));
          if (str[i] == '\r' && i + 1 < str.size() && str[i + 1] == '\n') ++i;
          start = i + 1;
        }
      if (start < str.size()) lines.push_back(Value::string(s.slice(start, str.size())));
      return Value::from_list(std::move(lines));
    });
  }
  using Pred = bool (*)(uint32_t);
  static const std::map<std::string, Pred, std::less<>> kPredicates = {
      {"isdigit", [](uint32_t c) { return c >= '0' && c <= '9'; }},
      {"isalpha", [](uint32_t c) { return (c | 0x20) >= 'a' && (c | 0x20) <= 'z'; }},
      {"isalnum", [](uint32_t c) { return (c >= '0' && c <= '9') || ((c | 0x20) >= 'a' && (c | 0x20) <= 'z'); }},
      {"isspace", [](uint32_t c) { return is_python_space(c); }},
  };
  if (auto it = kPredicates.find(n); it != kPredicates.end()) {
    const Pred pred = it->second;
    return bound(n, [s, pred](const CallArgs&) { return Value::boolean(all_code_points(s.bytes(), pred)); });
  }
  if (n == "islower" || n == "isupper") {
    const bool lower = n == "islower";
    return bound(n, [s, lower](const CallArgs&) {
      bool cased = false;
      for (char c : s.bytes()) {
        if (c >= 'a' && c <= 'z') {
          if (!lower) return Value::boolean(false);
          cased = true;
        } else if (c >= 'A' && c <= 'Z') {
          if (lower) return Value::boolean(false);
          cased = true;
        }
      }
      return Value::boolean(cased);
    });
  }
  return Value::undefined("'str object' has no attribute '" + n + "'");
}

// ---- dict methods ---------------------------------------------------------------------------

Value items_of(const Value& d) {
  List items;
  for (const auto& [k, v] : d.dict->entries) items.push_back(Value::from_list({Value::string(k), v}));
  return Value::from_list(std::move(items));
}

Value dict_method(const Value& self, std::string_view name) {
  if (name == "items") return bound("items", [self](const CallArgs&) { return items_of(self); });
  if (name == "keys") return bound("keys", [self](const CallArgs&) { return Value::from_list(iterate(self, SIZE_MAX)); });
  if (name == "values")
    return bound("values", [self](const CallArgs&) {
      List values;
      for (const auto& e : self.dict->entries) values.push_back(e.second);
      return Value::from_list(std::move(values));
    });
  if (name == "get")
    return bound("get", [self](const CallArgs& a) {
      const Value* key = a.get(0, "key");
      if (!key) fail("get needs a key");
      if (key->kind == Value::Kind::String)
        if (const Value* v = self.dict->find(key->text.bytes())) return *v;
      const Value* fallback = a.get(1, "default");
      return fallback ? *fallback : Value::none();
    });
  return Value::undefined();
}

// ---- tests ----------------------------------------------------------------------------------

using TestFn = bool (*)(const Value&, const CallArgs&);

const Value& test_arg(const CallArgs& a, const char* test) {
  const Value* v = a.get(0, "other");
  if (!v) fail(std::string("the test '") + test + "' needs an argument");
  return *v;
}

bool contains(const Value& container, const Value& item);

const std::map<std::string, TestFn, std::less<>>& tests() {
  using K = Value::Kind;
  static const std::map<std::string, TestFn, std::less<>> kTests = {
      {"defined", [](const Value& v, const CallArgs&) { return !v.is_undefined(); }},
      {"undefined", [](const Value& v, const CallArgs&) { return v.is_undefined(); }},
      {"none", [](const Value& v, const CallArgs&) { return v.is(K::None); }},
      {"boolean", [](const Value& v, const CallArgs&) { return v.is(K::Bool); }},
      {"true", [](const Value& v, const CallArgs&) { return v.is(K::Bool) && v.flag; }},
      {"false", [](const Value& v, const CallArgs&) { return v.is(K::Bool) && !v.flag; }},
      {"integer", [](const Value& v, const CallArgs&) { return v.is(K::Int); }},
      {"float", [](const Value& v, const CallArgs&) { return v.is(K::Float); }},
      {"number", [](const Value& v, const CallArgs&) { return v.is_number(); }},
      {"string", [](const Value& v, const CallArgs&) { return v.is(K::String); }},
      {"mapping", [](const Value& v, const CallArgs&) { return v.is(K::Dict); }},
      {"iterable", [](const Value& v, const CallArgs&) {
         return v.is(K::List) || v.is(K::Dict) || v.is(K::String) || v.is_undefined();
       }},
      {"sequence", [](const Value& v, const CallArgs&) {
         return v.is(K::List) || v.is(K::Dict) || v.is(K::String) || v.is_undefined();
       }},
      {"callable", [](const Value& v, const CallArgs&) { return v.is(K::Function); }},
      {"odd", [](const Value& v, const CallArgs&) { return need_int(v, "odd") % 2 != 0; }},
      {"even", [](const Value& v, const CallArgs&) { return need_int(v, "even") % 2 == 0; }},
      {"divisibleby", [](const Value& v, const CallArgs& a) {
         const int64_t d = need_int(test_arg(a, "divisibleby"), "divisibleby");
         return d != 0 && need_int(v, "divisibleby") % d == 0;
       }},
      {"lower", [](const Value& v, const CallArgs&) {
         return v.is(K::String) && v.text.bytes() == ascii_case(v.text, 0).bytes();
       }},
      {"upper", [](const Value& v, const CallArgs&) {
         return v.is(K::String) && v.text.bytes() == ascii_case(v.text, 1).bytes();
       }},
      {"sameas", [](const Value& v, const CallArgs& a) {
         const Value& o = test_arg(a, "sameas");
         if (v.kind != o.kind) return false;
         if (v.is(K::List)) return v.list == o.list;
         if (v.is(K::Dict) || v.is(K::Namespace)) return v.dict == o.dict;
         return equals(v, o);
       }},
      {"eq", [](const Value& v, const CallArgs& a) { return equals(v, test_arg(a, "eq")); }},
      {"ne", [](const Value& v, const CallArgs& a) { return !equals(v, test_arg(a, "ne")); }},
      {"lt", [](const Value& v, const CallArgs& a) { return compare(v, test_arg(a, "lt")) < 0; }},
      {"le", [](const Value& v, const CallArgs& a) { return compare(v, test_arg(a, "le")) <= 0; }},
      {"gt", [](const Value& v, const CallArgs& a) { return compare(v, test_arg(a, "gt")) > 0; }},
      {"ge", [](const Value& v, const CallArgs& a) { return compare(v, test_arg(a, "ge")) >= 0; }},
      {"in", [](const Value& v, const CallArgs& a) { return contains(test_arg(a, "in"), v); }},
  };
  return kTests;
}

std::string_view test_alias(std::string_view name) {
  static const std::pair<std::string_view, std::string_view> kAliases[] = {
      {"equalto", "eq"}, {"==", "eq"}, {"!=", "ne"}, {"lessthan", "lt"}, {"<", "lt"},
      {"<=", "le"}, {"greaterthan", "gt"}, {">", "gt"}, {">=", "ge"}};
  for (const auto& [alias, real] : kAliases)
    if (name == alias) return real;
  return name;
}

bool contains(const Value& container, const Value& item) {
  switch (container.kind) {
    case Value::Kind::String:
      return container.text.bytes().find(need_string(item, "'in' on a string")) != std::string::npos;
    case Value::Kind::List:
      return std::any_of(container.list->begin(), container.list->end(),
                         [&](const Value& e) { return equals(e, item); });
    case Value::Kind::Dict:
    case Value::Kind::Namespace:
      return item.kind == Value::Kind::String && container.dict->find(item.text.bytes()) != nullptr;
    case Value::Kind::Undefined: return false;
    default: fail(std::string("argument of type '") + type_name(container) + "' is not iterable");
  }
}

// ---- filters --------------------------------------------------------------------------------

using FilterFn = Value (*)(const Value&, const CallArgs&, Budget&);

// `attribute` of map/sort/...: "a.b" walks nested attributes, "0" indexes.
Value attribute_path(const Value& v, const std::string& path, Budget& budget) {
  Value cur = v;
  size_t start = 0;
  while (start <= path.size()) {
    const size_t dot = std::min(path.find('.', start), path.size());
    const std::string part = path.substr(start, dot - start);
    const bool numeric = !part.empty() && std::all_of(part.begin(), part.end(), [](char c) { return c >= '0' && c <= '9'; });
    cur = numeric ? get_item(cur, Value::from_int(std::stoll(part)), budget) : get_item(cur, Value::string(part), budget);
    start = dot + 1;
  }
  return cur;
}

// select/reject/selectattr/rejectattr.
Value select_items(const Value& input, const CallArgs& a, Budget& budget, bool keep, bool by_attribute) {
  List out;
  size_t next_arg = 0;
  std::string attribute;
  if (by_attribute) {
    const Value* attr = a.get(next_arg++, "attribute");
    if (!attr) fail("selectattr/rejectattr need an attribute name");
    attribute = need_string(*attr, "selectattr");
  }
  std::string test;
  CallArgs test_args;
  if (next_arg < a.positional.size()) {
    test = std::string(test_alias(need_string(a.positional[next_arg++], "select")));
    if (!tests().count(test)) fail("unknown test '" + test + "'");
    test_args.positional.assign(a.positional.begin() + static_cast<long>(next_arg), a.positional.end());
  }
  for (const Value& item : iterate(input, budget.max_items)) {
    const Value subject = by_attribute ? attribute_path(item, attribute, budget) : item;
    const bool pass = test.empty() ? truthy(subject) : tests().at(test)(subject, test_args);
    if (pass == keep) out.push_back(item);
  }
  return Value::from_list(std::move(out));
}

Value sorted(const Value& input, const CallArgs& a, Budget& budget) {
  List items = iterate(input, budget.max_items);
  const bool reverse = arg_flag(a, 0, "reverse", false);
  const bool case_sensitive = arg_flag(a, 1, "case_sensitive", false);
  const Value* attr = a.get(2, "attribute");
  const std::string attribute = attr ? need_string(*attr, "sort") : "";
  std::vector<std::pair<Value, Value>> keyed;
  for (Value& item : items) {
    Value key = attribute.empty() ? item : attribute_path(item, attribute, budget);
    if (!case_sensitive && key.is(Value::Kind::String)) key = Value::string(ascii_case(key.text, 0));
    keyed.emplace_back(std::move(key), std::move(item));
  }
  std::stable_sort(keyed.begin(), keyed.end(), [&](const auto& x, const auto& y) {
    return reverse ? compare(y.first, x.first) < 0 : compare(x.first, y.first) < 0;
  });
  List out;
  for (auto& [k, v] : keyed) out.push_back(std::move(v));
  return Value::from_list(std::move(out));
}

Value min_max(const Value& input, const CallArgs& a, Budget& budget, bool want_max) {
  const List items = iterate(input, budget.max_items);
  if (items.empty()) return Value::undefined("min/max of an empty sequence");
  const bool case_sensitive = arg_flag(a, 0, "case_sensitive", false);
  const Value* attr = a.get(1, "attribute");
  const auto key = [&](const Value& v) {
    Value k = attr ? attribute_path(v, need_string(*attr, "min/max"), budget) : v;
    return (!case_sensitive && k.is(Value::Kind::String)) ? Value::string(ascii_case(k.text, 0)) : k;
  };
  size_t best = 0;
  for (size_t i = 1; i < items.size(); ++i) {
    const int c = compare(key(items[i]), key(items[best]));
    if (want_max ? c > 0 : c < 0) best = i;
  }
  return items[best];
}

int64_t checked_add(int64_t x, int64_t y) {
  int64_t r;
  if (__builtin_add_overflow(x, y, &r)) fail("integer overflow");
  return r;
}

Value sum(const Value& input, const CallArgs& a, Budget& budget) {
  const Value* attr = a.get(0, "attribute");
  const Value* start = a.get(1, "start");
  Value total = start ? *start : Value::from_int(0);
  for (const Value& item : iterate(input, budget.max_items)) {
    const Value v = attr ? attribute_path(item, need_string(*attr, "sum"), budget) : item;
    if (!v.is_number() || !total.is_number()) fail("sum needs numbers");
    if (v.is(Value::Kind::Float) || total.is(Value::Kind::Float))
      total = Value::from_float(total.as_double() + v.as_double());
    else
      total = Value::from_int(checked_add(need_int(total, "sum"), need_int(v, "sum")));
  }
  return total;
}

Value html_escape(const Value& input, Budget& budget) {
  const Text t = to_text(input);
  std::string out;
  for (char c : t.bytes()) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&#34;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  budget.charge_string(out.size());
  return Value::string(t.derived(std::move(out)));
}

Value indent(const Value& input, const CallArgs& a, Budget& budget) {
  const Value* width_value = a.get(0, "width");
  std::string pad = "    ";
  if (width_value && width_value->is(Value::Kind::String)) pad = width_value->text.bytes();
  else if (width_value) pad = std::string(static_cast<size_t>(std::clamp<int64_t>(need_int(*width_value, "indent"), 0, 1024)), ' ');
  const bool first = arg_flag(a, 1, "first", false);
  const bool blank = arg_flag(a, 2, "blank", false);
  const Text s = to_text(input);
  Text out;
  const std::string& b = s.bytes();
  size_t start = 0;
  bool first_line = true;
  while (start <= b.size()) {
    const size_t nl = b.find('\n', start);
    const size_t end = nl == std::string::npos ? b.size() : nl;
    const bool is_blank = end == start;
    if ((!first_line || first) && (blank || !is_blank)) out.append_plain(pad);
    out.append(s.slice(start, nl == std::string::npos ? end : end + 1));
    budget.charge_string(out.size());
    if (nl == std::string::npos) break;
    start = nl + 1;
    first_line = false;
  }
  return Value::string(std::move(out));
}

Value round_filter(const Value& input, const CallArgs& a) {
  if (!input.is_number()) fail("round needs a number");
  const Value* p = a.get(0, "precision");
  const int64_t precision = p ? std::clamp<int64_t>(need_int(*p, "round"), -300, 300) : 0;
  const Value* m = a.get(1, "method");
  const std::string method = m ? need_string(*m, "round") : "common";
  const double scale = std::pow(10.0, static_cast<double>(precision));
  const double x = input.as_double() * scale;
  double r;
  if (method == "common") r = std::round(x);
  else if (method == "ceil") r = std::ceil(x);
  else if (method == "floor") r = std::floor(x);
  else fail("round: method must be common, ceil or floor");
  return Value::from_float(r / scale);
}

Value to_int(const Value& input, const CallArgs& a) {
  const Value* fallback = a.get(0, "default");
  const Value def = fallback ? *fallback : Value::from_int(0);
  switch (input.kind) {
    case Value::Kind::Int: return input;
    case Value::Kind::Bool: return Value::from_int(input.flag);
    case Value::Kind::Float:
      if (!std::isfinite(input.number) || std::fabs(input.number) >= 9.2e18) return def;
      return Value::from_int(static_cast<int64_t>(input.number));
    case Value::Kind::String: {
      const std::string t = strip(input.text, StripSide::Both, nullptr).bytes();
      size_t used = 0;
      try {
        const long long v = std::stoll(t, &used, 10);
        if (used == t.size()) return Value::from_int(v);
      } catch (...) {
      }
      try {
        const double d = std::stod(t, &used);
        if (used == t.size() && std::isfinite(d) && std::fabs(d) < 9.2e18)
          return Value::from_int(static_cast<int64_t>(d));
      } catch (...) {
      }
      return def;
    }
    default: return def;
  }
}

Value to_float(const Value& input, const CallArgs& a) {
  const Value* fallback = a.get(0, "default");
  const Value def = fallback ? *fallback : Value::from_float(0.0);
  if (input.is_number()) return Value::from_float(input.as_double());
  if (input.is(Value::Kind::String)) {
    const std::string t = strip(input.text, StripSide::Both, nullptr).bytes();
    size_t used = 0;
    try {
      const double d = std::stod(t, &used);
      if (used == t.size()) return Value::from_float(d);
    } catch (...) {
    }
  }
  return def;
}

Value dictsort(const Value& input, const CallArgs& a) {
  if (!input.is(Value::Kind::Dict)) fail("dictsort needs a dict");
  const bool case_sensitive = arg_flag(a, 0, "case_sensitive", false);
  const Value* by = a.get(1, "by");
  const bool by_value = by && need_string(*by, "dictsort") == "value";
  const bool reverse = arg_flag(a, 2, "reverse", false);
  List pairs = *items_of(input).list;
  std::stable_sort(pairs.begin(), pairs.end(), [&](const Value& x, const Value& y) {
    Value kx = (*x.list)[by_value ? 1 : 0], ky = (*y.list)[by_value ? 1 : 0];
    if (!case_sensitive && kx.is(Value::Kind::String)) kx = Value::string(ascii_case(kx.text, 0));
    if (!case_sensitive && ky.is(Value::Kind::String)) ky = Value::string(ascii_case(ky.text, 0));
    return reverse ? compare(ky, kx) < 0 : compare(kx, ky) < 0;
  });
  return Value::from_list(std::move(pairs));
}

Value map_filter(const Value& input, const CallArgs& a, Budget& budget) {
  List out;
  const Value* attr = a.keyword_only("attribute");
  if (attr) {
    const std::string path = need_string(*attr, "map");
    const Value* fallback = a.keyword_only("default");
    for (const Value& item : iterate(input, budget.max_items)) {
      Value v = attribute_path(item, path, budget);
      out.push_back(v.is_undefined() && fallback ? *fallback : v);
    }
    return Value::from_list(std::move(out));
  }
  if (a.positional.empty()) fail("map needs a filter name or attribute=");
  const std::string name = need_string(a.positional[0], "map");
  if (!has_filter(name) || name == "map") fail("map: unknown filter '" + name + "'");
  CallArgs rest;
  rest.positional.assign(a.positional.begin() + 1, a.positional.end());
  rest.keyword = a.keyword;
  for (const Value& item : iterate(input, budget.max_items)) out.push_back(apply_filter(name, item, rest, budget));
  return Value::from_list(std::move(out));
}

Value unique(const Value& input, const CallArgs& a, Budget& budget) {
  const bool case_sensitive = arg_flag(a, 0, "case_sensitive", false);
  const Value* attr = a.get(1, "attribute");
  List out;
  List seen;
  for (const Value& item : iterate(input, budget.max_items)) {
    Value key = attr ? attribute_path(item, need_string(*attr, "unique"), budget) : item;
    if (!case_sensitive && key.is(Value::Kind::String)) key = Value::string(ascii_case(key.text, 0));
    if (std::none_of(seen.begin(), seen.end(), [&](const Value& s) { return equals(s, key); })) {
      seen.push_back(key);
      out.push_back(item);
    }
  }
  return Value::from_list(std::move(out));
}

const std::map<std::string, FilterFn, std::less<>>& filters() {
  using K = Value::Kind;
  static const std::map<std::string, FilterFn, std::less<>> kFilters = {
      {"trim", [](const Value& v, const CallArgs& a, Budget&) {
         const Value* chars = a.get(0, "chars");
         if (chars && !chars->is(K::None)) {
           const std::string set = need_string(*chars, "trim");
           return Value::string(strip(to_text(v), StripSide::Both, &set));
         }
         return Value::string(strip(to_text(v), StripSide::Both, nullptr));
       }},
      {"length", [](const Value& v, const CallArgs&, Budget&) {
         switch (v.kind) {
           case K::String: return Value::from_int(static_cast<int64_t>(code_point_count(v.text.bytes())));
           case K::List: return Value::from_int(static_cast<int64_t>(v.list->size()));
           case K::Dict:
           case K::Namespace: return Value::from_int(static_cast<int64_t>(v.dict->entries.size()));
           case K::Undefined: return Value::from_int(0);
           default: fail(std::string("object of type '") + type_name(v) + "' has no len()");
         }
       }},
      {"tojson", [](const Value& v, const CallArgs& a, Budget& b) {
         const Value* ind = a.get(0, "indent");
         const int indent = ind && !ind->is(K::None)
                                ? static_cast<int>(std::clamp<int64_t>(need_int(*ind, "tojson"), 0, 64))
                                : -1;
         Text t = to_json(v, indent, arg_flag(a, 1, "sort_keys", false));
         b.charge_string(t.size());
         return Value::string(std::move(t));
       }},
      {"default", [](const Value& v, const CallArgs& a, Budget&) {
         const Value* def = a.get(0, "default_value");
         const bool boolean = arg_flag(a, 1, "boolean", false);
         if (v.is_undefined() || (boolean && !truthy(v))) return def ? *def : Value::string(std::string());
         return v;
       }},
      {"first", [](const Value& v, const CallArgs&, Budget& b) {
         List items = iterate(v, b.max_items);
         return items.empty() ? Value::undefined("first of an empty sequence") : items.front();
       }},
      {"last", [](const Value& v, const CallArgs&, Budget& b) {
         List items = iterate(v, b.max_items);
         return items.empty() ? Value::undefined("last of an empty sequence") : items.back();
       }},
      {"join", [](const Value& v, const CallArgs& a, Budget& b) {
         const Value* sep = a.get(0, "d");
         const Value* attr = a.get(1, "attribute");
         List items = iterate(v, b.max_items);
         if (attr)
           for (Value& item : items) item = attribute_path(item, need_string(*attr, "join"), b);
         return join(sep ? *sep : Value::string(std::string()), items, b);
       }},
      {"upper", [](const Value& v, const CallArgs&, Budget&) { return Value::string(ascii_case(to_text(v), 1)); }},
      {"lower", [](const Value& v, const CallArgs&, Budget&) { return Value::string(ascii_case(to_text(v), 0)); }},
      {"title", [](const Value& v, const CallArgs&, Budget&) { return Value::string(ascii_case(to_text(v), 2)); }},
      {"capitalize", [](const Value& v, const CallArgs&, Budget&) {
         return Value::string(ascii_case(ascii_case(to_text(v), 0), 3));
       }},
      {"items", [](const Value& v, const CallArgs&, Budget&) {
         if (v.is_undefined()) return Value::from_list({});
         if (!v.is(K::Dict)) fail(std::string("items needs a dict, not ") + type_name(v));
         return items_of(v);
       }},
      {"list", [](const Value& v, const CallArgs&, Budget& b) { return Value::from_list(iterate(v, b.max_items)); }},
      {"string", [](const Value& v, const CallArgs&, Budget&) { return Value::string(to_text(v)); }},
      {"safe", [](const Value& v, const CallArgs&, Budget&) { return v; }},
      {"escape", [](const Value& v, const CallArgs&, Budget& b) { return html_escape(v, b); }},
      {"replace", [](const Value& v, const CallArgs& a, Budget& b) {
         const Value* old = a.get(0, "old");
         const Value* with = a.get(1, "new");
         if (!old || !with) fail("replace needs two arguments");
         const Value* count = a.get(2, "count");
         return replace(to_text(v), need_string(*old, "replace"), need_string(*with, "replace"),
                        count && !count->is(K::None) ? need_int(*count, "replace") : -1, b);
       }},
      {"reverse", [](const Value& v, const CallArgs&, Budget& b) {
         List items = iterate(v, b.max_items);
         std::reverse(items.begin(), items.end());
         if (!v.is(K::String)) return Value::from_list(std::move(items));
         Text out;
         for (const Value& c : items) out.append(c.text);
         return Value::string(std::move(out));
       }},
      {"sort", [](const Value& v, const CallArgs& a, Budget& b) { return sorted(v, a, b); }},
      {"unique", [](const Value& v, const CallArgs& a, Budget& b) { return unique(v, a, b); }},
      {"map", [](const Value& v, const CallArgs& a, Budget& b) { return map_filter(v, a, b); }},
      {"select", [](const Value& v, const CallArgs& a, Budget& b) { return select_items(v, a, b, true, false); }},
      {"reject", [](const Value& v, const CallArgs& a, Budget& b) { return select_items(v, a, b, false, false); }},
      {"selectattr", [](const Value& v, const CallArgs& a, Budget& b) { return select_items(v, a, b, true, true); }},
      {"rejectattr", [](const Value& v, const CallArgs& a, Budget& b) { return select_items(v, a, b, false, true); }},
      {"dictsort", [](const Value& v, const CallArgs& a, Budget&) { return dictsort(v, a); }},
      {"min", [](const Value& v, const CallArgs& a, Budget& b) { return min_max(v, a, b, false); }},
      {"max", [](const Value& v, const CallArgs& a, Budget& b) { return min_max(v, a, b, true); }},
      {"sum", [](const Value& v, const CallArgs& a, Budget& b) { return sum(v, a, b); }},
      {"indent", [](const Value& v, const CallArgs& a, Budget& b) { return indent(v, a, b); }},
      {"round", [](const Value& v, const CallArgs& a, Budget&) { return round_filter(v, a); }},
      {"int", [](const Value& v, const CallArgs& a, Budget&) { return to_int(v, a); }},
      {"float", [](const Value& v, const CallArgs& a, Budget&) { return to_float(v, a); }},
      {"abs", [](const Value& v, const CallArgs&, Budget&) {
         if (v.is(K::Float)) return Value::from_float(std::fabs(v.number));
         const int64_t i = need_int(v, "abs");
         if (i == std::numeric_limits<int64_t>::min()) fail("integer overflow");
         return Value::from_int(i < 0 ? -i : i);
       }},
      {"attr", [](const Value& v, const CallArgs& a, Budget& b) {
         const Value* name = a.get(0, "name");
         if (!name) fail("attr needs a name");
         return get_attribute(v, need_string(*name, "attr"), b);
       }},
      {"wordcount", [](const Value& v, const CallArgs&, Budget& b) {
         return Value::from_int(static_cast<int64_t>(split(to_text(v), nullptr, -1, b).list->size()));
       }},
  };
  return kFilters;
}

std::string_view filter_alias(std::string_view name) {
  if (name == "d") return "default";
  if (name == "e") return "escape";
  if (name == "count") return "length";
  return name;
}

}  // namespace

bool has_filter(std::string_view name) { return filters().count(filter_alias(name)) != 0; }
bool has_test(std::string_view name) { return tests().count(test_alias(name)) != 0; }

Value apply_filter(std::string_view name, const Value& input, const CallArgs& args, Budget& budget) {
  auto it = filters().find(filter_alias(name));
  if (it == filters().end()) fail("unknown filter '" + std::string(name) + "'");
  return it->second(input, args, budget);
}

bool apply_test(std::string_view name, const Value& input, const CallArgs& args) {
  auto it = tests().find(test_alias(name));
  if (it == tests().end()) fail("unknown test '" + std::string(name) + "'");
  return it->second(input, args);
}

// ---- lookups and slices --------------------------------------------------------------------

Value get_attribute(const Value& object, std::string_view name, Budget& budget) {
  switch (object.kind) {
    case Value::Kind::Undefined: undefined_error(object);
    case Value::Kind::Dict: {
      Value method = dict_method(object, name);
      if (!method.is_undefined()) return method;
      if (const Value* v = object.dict->find(name)) return *v;
      return Value::undefined("'dict object' has no attribute '" + std::string(name) + "'");
    }
    case Value::Kind::Namespace:
      if (const Value* v = object.dict->find(name)) return *v;
      return Value::undefined("'Namespace' has no attribute '" + std::string(name) + "'");
    case Value::Kind::String: return string_method(object, name, budget);
    default:
      return Value::undefined("'" + std::string(type_name(object)) + " object' has no attribute '" +
                              std::string(name) + "'");
  }
}

Value get_item(const Value& object, const Value& key, Budget& budget) {
  if (object.is_undefined()) undefined_error(object);
  if ((object.is(Value::Kind::List) || object.is(Value::Kind::String)) &&
      (key.is(Value::Kind::Int) || key.is(Value::Kind::Bool))) {
    if (object.is(Value::Kind::List)) {
      const int64_t n = static_cast<int64_t>(object.list->size());
      int64_t i = need_int(key, "an index");
      if (i < 0) i += n;
      if (i < 0 || i >= n) return Value::undefined("list index out of range");
      return (*object.list)[static_cast<size_t>(i)];
    }
    const std::vector<size_t> offs = code_point_offsets(object.text.bytes());
    const int64_t n = static_cast<int64_t>(offs.size()) - 1;
    int64_t i = need_int(key, "an index");
    if (i < 0) i += n;
    if (i < 0 || i >= n) return Value::undefined("string index out of range");
    return Value::string(object.text.slice(offs[static_cast<size_t>(i)], offs[static_cast<size_t>(i) + 1]));
  }
  if ((object.is(Value::Kind::Dict) || object.is(Value::Kind::Namespace)) && key.is(Value::Kind::String))
    if (const Value* v = object.dict->find(key.text.bytes())) return *v;
  if (key.is(Value::Kind::String)) return get_attribute(object, key.text.bytes(), budget);
  return Value::undefined(std::string("'") + type_name(object) + " object' has no item " + repr(key));
}

Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step_value) {
  if (object.is_undefined()) undefined_error(object);
  const bool is_string = object.is(Value::Kind::String);
  if (!is_string && !object.is(Value::Kind::List))
    fail(std::string("'") + type_name(object) + "' object cannot be sliced");
  std::vector<size_t> offs;
  int64_t n;
  if (is_string) {
    offs = code_point_offsets(object.text.bytes());
    n = static_cast<int64_t>(offs.size()) - 1;
  } else {
    n = static_cast<int64_t>(object.list->size());
  }
  const int64_t step = (step_value.is(Value::Kind::None) || step_value.is_undefined()) ? 1 : need_int(step_value, "a slice");
  if (step == 0) fail("slice step cannot be zero");
  const bool forward = step > 0;
  const int64_t b = clamp_slice_index(start, n, forward ? 0 : n - 1, forward);
  const int64_t e = clamp_slice_index(stop, n, forward ? n : -1, forward);
  if (is_string && step == 1) {
    return Value::string(object.text.slice(offs[static_cast<size_t>(b)], offs[static_cast<size_t>(std::max(b, e))]));
  }
  List items;
  Text text;
  for (int64_t i = b; forward ? i < e : i > e; i += step) {
    if (is_string) text.append(object.text.slice(offs[static_cast<size_t>(i)], offs[static_cast<size_t>(i) + 1]));
    else items.push_back((*object.list)[static_cast<size_t>(i)]);
  }
  return is_string ? Value::string(std::move(text)) : Value::from_list(std::move(items));
}

}  // namespace magnetar::jinja
