// Strings of the Jinja interpreter: UTF-8 text that remembers which byte ranges came from
// message contents ("taint"), and the Python string semantics templates rely on (code-point
// indexing, str.isspace() whitespace). The tokenizer matches control tokens only outside those
// ranges, so text a user typed never becomes a control token.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace magnetar::jinja {

struct ByteRange {
  size_t begin = 0, end = 0;  // [begin, end)
  bool operator==(const ByteRange&) const = default;
};

class Text {
 public:
  Text() = default;
  explicit Text(std::string bytes, bool content = false);

  const std::string& bytes() const { return bytes_; }
  size_t size() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  // Sorted, disjoint, non-adjacent ranges of bytes that came from message contents.
  const std::vector<ByteRange>& content_ranges() const { return content_; }
  bool has_content() const { return !content_.empty(); }

  void append(const Text& other);
  void append_plain(std::string_view bytes);
  // Bytes [begin, end) with the ranges that fall inside them.
  Text slice(size_t begin, size_t end) const;
  // A string derived from this one by a transform that cannot track bytes (upper, replace...):
  // all of it counts as content when any of the source did.
  Text derived(std::string bytes) const { return Text(std::move(bytes), has_content()); }
  void mark_all_content();

 private:
  void add_range(ByteRange r);
  std::string bytes_;
  std::vector<ByteRange> content_;
};

// ---- UTF-8 and Python string helpers (invalid bytes count as one code point each) ----------
// Decodes the code point at bytes[*pos] and advances *pos past it.
uint32_t next_code_point(std::string_view bytes, size_t* pos);
void append_utf8(uint32_t cp, std::string* out);
// Byte offset of each code point, plus bytes.size() at the end: [n_code_points + 1].
std::vector<size_t> code_point_offsets(std::string_view bytes);
size_t code_point_count(std::string_view bytes);
// Python's str.isspace(): Unicode White_Space plus U+001C–001F (not U+FEFF, U+200B).
bool is_python_space(uint32_t cp);

enum class StripSide { Left = 1, Right = 2, Both = 3 };
// str.strip() / lstrip() / rstrip(): whitespace when chars is null, else any code point of *chars.
Text strip(const Text& s, StripSide side, const std::string* chars);

}  // namespace magnetar::jinja
