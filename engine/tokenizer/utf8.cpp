// UTF-8 helpers: see utf8.h.
#include "tokenizer/utf8.h"

namespace magnetar::tok {

size_t utf8_valid_length(std::string_view s, size_t pos) {
  const auto b = [&](size_t i) { return static_cast<unsigned char>(s[i]); };
  const unsigned char c = b(pos);
  if (c < 0x80) return 1;
  size_t need = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // allowed range of the second byte
  if (c >= 0xC2 && c <= 0xDF) need = 1;
  else if (c == 0xE0) need = 2, lo = 0xA0;
  else if (c >= 0xE1 && c <= 0xEC) need = 2;
  else if (c == 0xED) need = 2, hi = 0x9F;  // no surrogates
  else if (c >= 0xEE && c <= 0xEF) need = 2;
  else if (c == 0xF0) need = 3, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) need = 3;
  else if (c == 0xF4) need = 3, hi = 0x8F;
  else return 0;
  if (pos + need >= s.size()) return 0;  // truncated
  if (b(pos + 1) < lo || b(pos + 1) > hi) return 0;
  for (size_t i = 2; i <= need; ++i)
    if ((b(pos + i) & 0xC0) != 0x80) return 0;
  return need + 1;
}

uint32_t utf8_decode(std::string_view s, size_t pos, size_t length) {
  const auto b = [&](size_t i) { return static_cast<uint32_t>(static_cast<unsigned char>(s[pos + i])); };
  switch (length) {
    case 1: return b(0);
    case 2: return ((b(0) & 0x1F) << 6) | (b(1) & 0x3F);
    case 3: return ((b(0) & 0x0F) << 12) | ((b(1) & 0x3F) << 6) | (b(2) & 0x3F);
    default: return ((b(0) & 0x07) << 18) | ((b(1) & 0x3F) << 12) | ((b(2) & 0x3F) << 6) | (b(3) & 0x3F);
  }
}

void utf8_append(uint32_t cp, std::string* out) {
  if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

bool is_valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    if (static_cast<unsigned char>(s[i]) < 0x80) {
      ++i;
      continue;
    }
    const size_t n = utf8_valid_length(s, i);
    if (n == 0) return false;
    i += n;
  }
  return true;
}

std::string utf8_repair(std::string_view s) {
  std::string out;
  out.reserve(s.size() + 16);
  for (size_t i = 0; i < s.size();) {
    const size_t n = utf8_valid_length(s, i);
    if (n > 0) {
      out.append(s.substr(i, n));
      i += n;
      continue;
    }
    // One U+FFFD per maximal invalid subpart: the lead byte plus the continuation bytes that
    // could still have belonged to it.
    out += "\xEF\xBF\xBD";
    const unsigned char c = static_cast<unsigned char>(s[i]);
    size_t need = c >= 0xF0 && c <= 0xF4 ? 3 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xC2 && c <= 0xDF ? 1 : 0;
    size_t j = i + 1;
    for (size_t k = 0; k < need && j < s.size(); ++k, ++j) {
      const unsigned char d = static_cast<unsigned char>(s[j]);
      bool ok = (d & 0xC0) == 0x80;
      if (k == 0) {  // the second byte's narrower ranges
        if (c == 0xE0) ok = d >= 0xA0 && d <= 0xBF;
        else if (c == 0xED) ok = d >= 0x80 && d <= 0x9F;
        else if (c == 0xF0) ok = d >= 0x90 && d <= 0xBF;
        else if (c == 0xF4) ok = d >= 0x80 && d <= 0x8F;
      }
      if (!ok) break;
    }
    i = j;
  }
  return out;
}

bool is_unicode_white_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20 || cp == 0x85 || cp == 0xA0 || cp == 0x1680 ||
         (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 || cp == 0x202F ||
         cp == 0x205F || cp == 0x3000;
}

}  // namespace magnetar::tok
