// Small UTF-8 helpers for the tokenizer pipeline: decoding one code point, encoding one,
// repairing invalid input (Rust's String::from_utf8_lossy rules: each maximal invalid
// subpart becomes U+FFFD), and the Unicode White_Space test used by Strip.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace magnetar::tok {

// Length of the valid UTF-8 sequence at text[pos], 0 when it is invalid or truncated.
size_t utf8_valid_length(std::string_view text, size_t pos);
// Code point of the valid sequence of `length` bytes at text[pos].
uint32_t utf8_decode(std::string_view text, size_t pos, size_t length);
void utf8_append(uint32_t code_point, std::string* out);
bool is_valid_utf8(std::string_view text);
// Invalid sequences → U+FFFD, as Rust's from_utf8_lossy (and Python's errors="replace").
std::string utf8_repair(std::string_view text);
// Unicode White_Space (Rust's char::is_whitespace).
bool is_unicode_white_space(uint32_t cp);

}  // namespace magnetar::tok
