// What templates can call: Jinja's filters and tests, the Python str/dict methods templates use
// (`s.strip()`, `d.items()`), and attribute/item lookup with Jinja's rules. Every function is
// bounded by a Budget, so no template can build unbounded strings or lists.
#pragma once
#include <cstddef>
#include <string_view>

#include "tokenizer/jinja/value.h"

namespace magnetar::jinja {

// Bytes of strings and items of lists a render may still create.
struct Budget {
  size_t max_string_bytes = 0;   // per string or list
  size_t bytes_left = 0;         // all strings created together
  size_t max_items = 0;          // per list
  void charge_string(size_t bytes);
  void check_items(size_t n) const;
};

bool has_filter(std::string_view name);
bool has_test(std::string_view name);
Value apply_filter(std::string_view name, const Value& input, const CallArgs& args, Budget& budget);
bool apply_test(std::string_view name, const Value& input, const CallArgs& args);

// x.name: dict keys and namespace attributes, str/dict methods (bound to x); undefined when
// missing; fails on an undefined x, as Jinja's default Undefined does.
Value get_attribute(const Value& object, std::string_view name, Budget& budget);
// x[key]: list/str index (negative from the end), dict key, then attribute; undefined when missing.
Value get_item(const Value& object, const Value& key, Budget& budget);
// x[start:stop:step] on lists and strings (code points), Python rules.
Value get_slice(const Value& object, const Value& start, const Value& stop, const Value& step);

}  // namespace magnetar::jinja
