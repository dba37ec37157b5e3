// Text and file helpers (see text_util.h).
#include "text_util.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <system_error>

namespace magnetar::app {

std::string trim(const std::string& text) {
  size_t begin = 0, end = text.size();
  while (begin < end && std::isspace(static_cast<unsigned char>(text[begin]))) ++begin;
  while (end > begin && std::isspace(static_cast<unsigned char>(text[end - 1]))) --end;
  return text.substr(begin, end - begin);
}

size_t utf8_complete_prefix(const char* text, size_t length) {
  // Walk back over at most 3 continuation bytes to the lead byte of the last character.
  size_t i = length, back = 0;
  while (i > 0 && back < 4 && (static_cast<unsigned char>(text[i - 1]) & 0xC0) == 0x80) {
    --i;
    ++back;
  }
  if (i == 0) return back == 0 ? 0 : length;  // only continuation bytes: leave them alone
  const unsigned char lead = static_cast<unsigned char>(text[i - 1]);
  size_t need = 1;
  if (lead >= 0xF0) need = 4;
  else if (lead >= 0xE0) need = 3;
  else if (lead >= 0xC0) need = 2;
  else return length;  // ASCII lead: everything is complete
  return back + 1 >= need ? length : i - 1;
}

size_t utf8_offset_of_codepoint(const std::string& text, size_t index) {
  size_t offset = 0;
  for (size_t n = 0; n < index && offset < text.size(); ++n) {
    const unsigned char lead = static_cast<unsigned char>(text[offset]);
    const size_t length = lead < 0xC0 ? 1 : lead < 0xE0 ? 2 : lead < 0xF0 ? 3 : 4;  // as ImGui decodes it
    offset = std::min(text.size(), offset + length);
  }
  return offset;
}

SoftWrappedText soft_wrap(const std::string& text, const std::function<size_t(std::string_view line)>& fit) {
  SoftWrappedText out;
  out.text.reserve(text.size() + text.size() / 32);
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    std::string_view line(text.data() + pos, end - pos);
    while (!line.empty()) {
      size_t n = std::min(fit(line), line.size());
      if (n == line.size()) break;
      if (line[n] == ' ') {  // break at the space: it becomes the line end
        out.text.append(line.substr(0, n));
        out.replaced.push_back(out.text.size());
        out.text.push_back('\n');
        line.remove_prefix(n + 1);
        continue;
      }
      if (n == 0) {  // not even one character fits: take one, or nothing would ever advance
        n = 1;
        while (n < line.size() && (static_cast<unsigned char>(line[n]) & 0xC0) == 0x80) ++n;
        if (n == line.size()) break;
      }
      out.text.append(line.substr(0, n));
      out.inserted.push_back(out.text.size());
      out.text.push_back('\n');
      line.remove_prefix(n);
    }
    out.text.append(line);
    if (end == text.size()) break;
    out.text.push_back('\n');  // the paragraph's own line end
    pos = end + 1;
  }
  return out;
}

std::string SoftWrappedText::original(size_t begin, size_t end) const {
  end = std::min(end, text.size());
  std::string out;
  if (begin >= end) return out;
  out.reserve(end - begin);
  auto replaced_it = std::lower_bound(replaced.begin(), replaced.end(), begin);
  auto inserted_it = std::lower_bound(inserted.begin(), inserted.end(), begin);
  for (size_t i = begin; i < end; ++i) {
    if (inserted_it != inserted.end() && *inserted_it == i) {
      ++inserted_it;
      continue;
    }
    if (replaced_it != replaced.end() && *replaced_it == i) {
      ++replaced_it;
      out.push_back(' ');
      continue;
    }
    out.push_back(text[i]);
  }
  return out;
}

std::string utf8_truncate(const std::string& text, size_t max_bytes) {
  if (text.size() <= max_bytes) return text;
  size_t cut = max_bytes;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;
  return text.substr(0, cut);
}

bool contains_case_insensitive(const std::string& haystack, const std::string& needle) {
  if (needle.empty()) return true;
  auto lower = [](unsigned char c) { return static_cast<char>(std::tolower(c)); };
  for (size_t i = 0; i + needle.size() <= haystack.size(); ++i) {
    size_t k = 0;
    while (k < needle.size() && lower(haystack[i + k]) == lower(needle[k])) ++k;
    if (k == needle.size()) return true;
  }
  return false;
}

bool is_safe_file_stem(const std::string& stem) {
  if (stem.empty() || stem.size() > 128 || stem[0] == '.') return false;
  for (unsigned char c : stem)
    if (!std::isalnum(c) && c != '-' && c != '_' && c != '.') return false;
  return true;
}

std::string format_bytes(uint64_t bytes) {
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 ? "%.0f %s" : value < 10 ? "%.2f %s" : "%.1f %s",
                value, units[unit]);
  return buffer;
}

std::string format_count(uint64_t count) {
  const char* units[] = {"", "K", "M", "B", "T"};
  double value = static_cast<double>(count);
  int unit = 0;
  while (value >= 1000.0 && unit < 4) {
    value /= 1000.0;
    ++unit;
  }
  char buffer[32];
  std::snprintf(buffer, sizeof buffer, unit == 0 || value >= 100 ? "%.0f%s" : "%.1f%s", value,
                units[unit]);
  return buffer;
}

std::string format_seconds(double seconds) {
  if (!(seconds > 0)) seconds = 0;
  char buffer[32];
  const double ms = seconds * 1000.0;
  if (ms < 9.95) std::snprintf(buffer, sizeof buffer, "%.1f ms", ms);
  else if (ms < 999.5) std::snprintf(buffer, sizeof buffer, "%.0f ms", ms);
  else std::snprintf(buffer, sizeof buffer, "%.2f s", seconds);
  return buffer;
}

Status read_whole_file(const std::string& path, std::string* out) {
#ifdef _WIN32
  FILE* file = _wfopen(to_path(path).c_str(), L"rb");  // a UTF-16 path: fopen would read ANSI
#else
  FILE* file = std::fopen(path.c_str(), "rb");
#endif
  if (!file) return Status::error("cannot open " + path + ": " + std::strerror(errno));
  std::string data;
  char chunk[65536];
  size_t n;
  while ((n = std::fread(chunk, 1, sizeof chunk, file)) > 0) data.append(chunk, n);
  const bool failed = std::ferror(file);
  std::fclose(file);
  if (failed) return Status::error("cannot read " + path);
  *out = std::move(data);
  return Status::ok();
}

}  // namespace magnetar::app
