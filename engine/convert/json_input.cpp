// Bounded JSON reading for the converter: see json_input.h.
#include "convert/json_input.h"

#include "convert/input_file.h"

namespace magnetar::convert {

Status read_json_object_file(const std::string& path, uint64_t max_bytes, nlohmann::json* out) {
  std::string text;
  MAGNETAR_TRY(read_small_file(path, max_bytes, &text));
  return parse_json_object(text, path, out);
}

std::string json_excerpt(const nlohmann::json& value, size_t max_chars) {
  // Depth is bounded by parse_json_object, so dump() cannot exhaust the stack; replace keeps
  // invalid UTF-8 from throwing.
  return abridged(value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), max_chars);
}

std::string abridged(const std::string& text, size_t max_chars) {
  if (text.size() <= max_chars) return text;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 start
  return text.substr(0, cut) + "…";
}

}  // namespace magnetar::convert
