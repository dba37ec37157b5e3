// Tainted UTF-8 text and Python string helpers: see text.h.
#include "tokenizer/jinja/text.h"

#include <algorithm>

#include "tokenizer/utf8.h"

namespace magnetar::jinja {

Text::Text(std::string bytes, bool content) : bytes_(std::move(bytes)) {
  if (content && !bytes_.empty()) content_.push_back({0, bytes_.size()});
}

void Text::add_range(ByteRange r) {
  if (r.begin >= r.end) return;
  if (!content_.empty() && content_.back().end >= r.begin) {
    content_.back().end = std::max(content_.back().end, r.end);
    return;
  }
  content_.push_back(r);
}

void Text::append(const Text& other) {
  const size_t shift = bytes_.size();
  bytes_ += other.bytes_;
  for (ByteRange r : other.content_) add_range({r.begin + shift, r.end + shift});
}

void Text::append_plain(std::string_view bytes) { bytes_.append(bytes); }

Text Text::slice(size_t begin, size_t end) const {
  end = std::min(end, bytes_.size());
  begin = std::min(begin, end);
  Text out(bytes_.substr(begin, end - begin));
  for (ByteRange r : content_) {
    const size_t b = std::max(r.begin, begin), e = std::min(r.end, end);
    if (b < e) out.add_range({b - begin, e - begin});
  }
  return out;
}

void Text::mark_all_content() {
  content_.clear();
  if (!bytes_.empty()) content_.push_back({0, bytes_.size()});
}

uint32_t next_code_point(std::string_view s, size_t* pos) {
  const size_t len = tok::utf8_valid_length(s, *pos);
  if (len == 0) return static_cast<uint8_t>(s[(*pos)++]);  // an invalid byte stands for itself
  const uint32_t cp = tok::utf8_decode(s, *pos, len);
  *pos += len;
  return cp;
}

void append_utf8(uint32_t cp, std::string* out) { tok::utf8_append(cp, out); }

std::vector<size_t> code_point_offsets(std::string_view s) {
  std::vector<size_t> offsets;
  offsets.reserve(s.size() + 1);
  for (size_t pos = 0; pos < s.size();) {
    offsets.push_back(pos);
    next_code_point(s, &pos);
  }
  offsets.push_back(s.size());
  return offsets;
}

size_t code_point_count(std::string_view s) {
  size_t n = 0;
  for (size_t pos = 0; pos < s.size(); ++n) next_code_point(s, &pos);
  return n;
}

bool is_python_space(uint32_t cp) {
  if (cp >= 0x09 && cp <= 0x0D) return true;
  if (cp >= 0x1C && cp <= 0x20) return true;
  switch (cp) {
    case 0x85: case 0xA0: case 0x1680: case 0x2028: case 0x2029: case 0x202F: case 0x205F:
    case 0x3000:
      return true;
    default: return cp >= 0x2000 && cp <= 0x200A;
  }
}

Text strip(const Text& s, StripSide side, const std::string* chars) {
  std::vector<uint32_t> set;
  if (chars)
    for (size_t pos = 0; pos < chars->size();) set.push_back(next_code_point(*chars, &pos));
  const auto strippable = [&](uint32_t cp) {
    return chars ? std::find(set.begin(), set.end(), cp) != set.end() : is_python_space(cp);
  };
  const std::vector<size_t> offsets = code_point_offsets(s.bytes());
  const size_t n = offsets.size() - 1;
  size_t first = 0, last = n;  // code points [first, last) survive
  const auto cp_at = [&](size_t k) {
    size_t pos = offsets[k];
    return next_code_point(s.bytes(), &pos);
  };
  if (static_cast<int>(side) & static_cast<int>(StripSide::Left))
    while (first < last && strippable(cp_at(first))) ++first;
  if (static_cast<int>(side) & static_cast<int>(StripSide::Right))
    while (last > first && strippable(cp_at(last - 1))) --last;
  return s.slice(offsets[first], offsets[last]);
}

}  // namespace magnetar::jinja
