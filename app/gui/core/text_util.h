// Small text and file helpers shared by the app's logic: trimming, UTF-8-safe truncation,
// human-readable sizes, UTF-8 paths, and the atomic file write every save goes through.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>

#include "magnetar/status.h"

namespace magnetar::app {

std::string trim(const std::string& text);
// At most max_bytes bytes, never cutting a UTF-8 sequence in half.
std::string utf8_truncate(const std::string& text, size_t max_bytes);
// Length of the longest prefix of `text` that ends on a complete UTF-8 character.
size_t utf8_complete_prefix(const char* text, size_t length);
bool contains_case_insensitive(const std::string& haystack, const std::string& needle);
// Letters, digits, '-', '_' and '.' only, not starting with '.': safe as a file name stem.
bool is_safe_file_stem(const std::string& stem);

std::string format_bytes(uint64_t bytes);   // "1.4 GB", "512 KB"
std::string format_count(uint64_t count);   // "260K", "6.7B"

// Paths are UTF-8 std::strings in the app; these convert to and from std::filesystem.
std::filesystem::path to_path(const std::string& utf8);
std::string from_path(const std::filesystem::path& path);

// Writes `bytes` to path.tmp, flushes it to disk, then renames it over `path`: readers (and a
// crash at any moment) see either the old or the new file, never a mix.
Status atomic_write_file(const std::string& path, const std::string& bytes);
Status read_whole_file(const std::string& path, std::string* out);

}  // namespace magnetar::app
