// Small text and file helpers shared by the app's logic: trimming, UTF-8-safe truncation,
// human-readable sizes, reading a whole file.
#pragma once
#include <cstdint>
#include <filesystem>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "magnetar/status.h"
#include "magnetar/system.h"  // to_path, from_path, write_file_atomically

namespace magnetar::app {

std::string trim(const std::string& text);
// At most max_bytes bytes, never cutting a UTF-8 sequence in half.
std::string utf8_truncate(const std::string& text, size_t max_bytes);
// Length of the longest prefix of `text` that ends on a complete UTF-8 character.
size_t utf8_complete_prefix(const char* text, size_t length);
// Byte offset of the code point with index `index` (text.size() past the end). ImGui's text
// boxes count positions in code points; the app's strings are UTF-8.
size_t utf8_offset_of_codepoint(const std::string& text, size_t index);

// A copy of `text` broken into visual lines for a read-only, selectable box (ImGui 1.86's
// multiline InputText does not wrap). `fit(line)` says how many bytes of `line` (the rest of a
// paragraph) fit on one line. A break replaces the space at that point, or inserts a '\n' inside
// a word too long for a line; both are recorded, so a selection of the wrapped text maps back to
// the original bytes.
struct SoftWrappedText {
  std::string text;
  std::vector<size_t> replaced;  // offsets in `text` of spaces turned into '\n' (ascending)
  std::vector<size_t> inserted;  // offsets in `text` of inserted '\n' (ascending)
  std::string original(size_t begin, size_t end) const;  // the original text of text[begin, end)
};
SoftWrappedText soft_wrap(const std::string& text, const std::function<size_t(std::string_view line)>& fit);

bool contains_case_insensitive(const std::string& haystack, const std::string& needle);
// Letters, digits, '-', '_' and '.' only, not starting with '.': safe as a file name stem.
bool is_safe_file_stem(const std::string& stem);

std::string format_bytes(uint64_t bytes);   // "1.4 GB", "512 KB"
std::string format_count(uint64_t count);   // "260K", "6.7B"
// A duration read at a glance: "0.4 ms", "38 ms", "1.25 s" (negative or NaN: "0 ms").
std::string format_seconds(double seconds);

// UTF-8 paths (to_path, from_path) and atomic saves (write_file_atomically) are the engine's:
// magnetar/system.h.
Status read_whole_file(const std::string& path, std::string* out);

}  // namespace magnetar::app
