// Added-token matching: see added_tokens.h.
#include "tokenizer/added_tokens.h"

#include <utf8proc.h>

#include <algorithm>

#include "tokenizer/utf8.h"

namespace magnetar::tok {

namespace {

// The code point that ends at `end` (exclusive), and its start.
uint32_t code_point_before(std::string_view text, size_t end, size_t* start) {
  size_t s = end - 1;
  while (s > 0 && (static_cast<unsigned char>(text[s]) & 0xC0) == 0x80 && end - s < 4) --s;
  const size_t n = utf8_valid_length(text, s);
  *start = s;
  return n == end - s ? utf8_decode(text, s, n) : 0xFFFD;
}

uint32_t code_point_at(std::string_view text, size_t pos, size_t* length) {
  size_t n = utf8_valid_length(text, pos);
  if (n == 0) {
    *length = 1;
    return 0xFFFD;
  }
  *length = n;
  return utf8_decode(text, pos, n);
}

bool is_word_character(uint32_t cp) {
  if (cp == '_') return true;
  const utf8proc_category_t c = utf8proc_category(static_cast<utf8proc_int32_t>(cp));
  return (c >= UTF8PROC_CATEGORY_LU && c <= UTF8PROC_CATEGORY_LO) ||
         (c >= UTF8PROC_CATEGORY_ND && c <= UTF8PROC_CATEGORY_NO);
}

bool overlaps(const ByteRanges& ranges, size_t begin, size_t end) {
  // `ranges` is sorted by start: the first range ending after `begin` decides.
  auto it = std::lower_bound(ranges.begin(), ranges.end(), begin,
                             [](const std::pair<size_t, size_t>& r, size_t b) { return r.second <= b; });
  return it != ranges.end() && it->first < end;
}

}  // namespace

void AddedTokenMatcher::build(const std::vector<AddedToken>& tokens, bool want_normalized) {
  nodes_.assign(1, Node{});
  tokens_.clear();
  for (const AddedToken& t : tokens) {
    if (t.normalized != want_normalized || t.content.empty()) continue;
    int32_t node = 0;
    for (unsigned char c : t.content) {
      int32_t next = child(node, c);
      if (next < 0) {
        next = int32_t(nodes_.size());
        auto& kids = nodes_[size_t(node)].children;
        kids.insert(std::upper_bound(kids.begin(), kids.end(), std::make_pair(c, int32_t(-1))),
                    std::make_pair(c, next));
        nodes_.emplace_back();
      }
      node = next;
    }
    // The same content twice: the later entry wins, as in Hugging Face's map.
    nodes_[size_t(node)].token = int32_t(tokens_.size());
    tokens_.push_back(t);
  }
}

int32_t AddedTokenMatcher::child(int32_t node, uint8_t byte) const {
  const auto& kids = nodes_[size_t(node)].children;
  auto it = std::lower_bound(kids.begin(), kids.end(), byte,
                             [](const std::pair<uint8_t, int32_t>& k, uint8_t b) { return k.first < b; });
  return it != kids.end() && it->first == byte ? it->second : -1;
}

int32_t AddedTokenMatcher::match_at(std::string_view text, size_t pos, bool allow_special,
                                    const ByteRanges& content, size_t* end) const {
  int32_t best = -1;
  int32_t node = 0;
  for (size_t i = pos; i < text.size(); ++i) {
    node = child(node, static_cast<uint8_t>(text[i]));
    if (node < 0) break;
    const int32_t t = nodes_[size_t(node)].token;
    if (t < 0) continue;
    const AddedToken& tok = tokens_[size_t(t)];
    if (tok.special && (!allow_special || overlaps(content, pos, i + 1))) continue;
    if (tok.single_word) {
      size_t s = 0, n = 0;
      if (pos > 0 && is_word_character(code_point_before(text, pos, &s))) continue;
      if (i + 1 < text.size() && is_word_character(code_point_at(text, i + 1, &n))) continue;
    }
    best = t;
    *end = i + 1;
  }
  return best;
}

void AddedTokenMatcher::split(std::string_view text, bool allow_special, const ByteRanges& content,
                              std::vector<TextPiece>* out) const {
  out->clear();
  size_t text_start = 0;  // start of the pending ordinary text
  for (size_t pos = 0; pos < text.size();) {
    size_t end = 0;
    const int32_t t = empty() ? -1 : match_at(text, pos, allow_special, content, &end);
    if (t < 0) {
      ++pos;
      continue;
    }
    const AddedToken& tok = tokens_[size_t(t)];
    size_t begin = pos;
    if (tok.lstrip) {  // the token takes the white space before it
      while (begin > text_start) {
        size_t s = 0;
        if (!is_unicode_white_space(code_point_before(text, begin, &s))) break;
        begin = s;
      }
    }
    if (tok.rstrip) {  // ... and after it
      while (end < text.size()) {
        size_t n = 0;
        if (!is_unicode_white_space(code_point_at(text, end, &n))) break;
        end += n;
      }
    }
    if (begin > text_start) out->push_back({text_start, begin, -1});
    out->push_back({begin, end, tok.id});
    pos = text_start = end;
  }
  if (text_start < text.size()) out->push_back({text_start, text.size(), -1});
}

}  // namespace magnetar::tok
