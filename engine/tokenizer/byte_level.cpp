// GPT-2 byte mapping: see byte_level.h.
#include "tokenizer/byte_level.h"

#include <array>

#include "tokenizer/utf8.h"

namespace magnetar::tok {

namespace {

bool maps_to_itself(int b) { return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF); }

const std::array<uint32_t, 256>& forward_table() {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    uint32_t next = 256;
    for (int b = 0; b < 256; ++b) t[b] = maps_to_itself(b) ? uint32_t(b) : next++;
    return t;
  }();
  return table;
}

}  // namespace

uint32_t byte_to_code_point(uint8_t byte) { return forward_table()[byte]; }

int code_point_to_byte(uint32_t cp) {
  if (cp < 256) return maps_to_itself(int(cp)) ? int(cp) : -1;
  static const std::array<int16_t, 68> extra = [] {
    std::array<int16_t, 68> t{};
    for (int b = 0; b < 256; ++b)
      if (!maps_to_itself(b)) t[forward_table()[b] - 256] = int16_t(b);
    return t;
  }();
  return cp - 256 < extra.size() ? extra[cp - 256] : -1;
}

bool unmap_byte_level(std::string_view token, std::string* bytes) {
  bytes->clear();
  for (size_t i = 0; i < token.size();) {
    const size_t n = utf8_valid_length(token, i);
    if (n == 0) return false;
    const int b = code_point_to_byte(utf8_decode(token, i, n));
    if (b < 0) return false;
    bytes->push_back(static_cast<char>(b));
    i += n;
  }
  return true;
}

}  // namespace magnetar::tok
