// A compiled PCRE2 regex (UTF + UCP, JIT when available) for tokenizer.json patterns, which are
// written for Oniguruma/Rust: `\s` is rewritten to Unicode White_Space exactly (PCRE2's `\s`
// also matches U+180E), everything else runs as written. Not for the hot inference path.
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "magnetar/status.h"

namespace magnetar::tok {

class UnicodeRegex {
 public:
  UnicodeRegex();
  ~UnicodeRegex();
  UnicodeRegex(UnicodeRegex&&) noexcept;
  UnicodeRegex& operator=(UnicodeRegex&&) noexcept;

  // Errors name the pattern and PCRE2's message with its offset.
  Status compile(std::string_view pattern);
  // Appends the [start, end) byte ranges of the non-empty, non-overlapping matches in `text`
  // (valid UTF-8 expected; invalid input gives an error rather than a partial split).
  Status find_all(std::string_view text, std::vector<std::pair<size_t, size_t>>* out) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// `\s`/`\S` → explicit White_Space classes (exposed for tests).
std::string rewrite_whitespace_classes(std::string_view pattern);

}  // namespace magnetar::tok
