// Bounded JSON reading for the converter: see json_input.h.
#include "convert/json_input.h"

#include "convert/input_file.h"

namespace magnetar::convert {

int json_nesting_depth(const std::string& text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) deepest = depth;
      if (deepest > limit) return deepest;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

Status parse_json_object(const std::string& text, const std::string& origin, nlohmann::json* out) {
  *out = nlohmann::json();
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return Status::error(origin + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) +
                         " levels");
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::error(origin + ": malformed JSON");
  if (!parsed.is_object()) return Status::error(origin + ": malformed JSON (expected an object)");
  *out = std::move(parsed);
  return Status::ok();
}

Status read_json_object_file(const std::string& path, uint64_t max_bytes, nlohmann::json* out) {
  std::string text;
  MAGNETAR_TRY(read_small_file(path, max_bytes, &text));
  return parse_json_object(text, path, out);
}

std::string json_excerpt(const nlohmann::json& value, size_t max_chars) {
  // Depth is bounded by parse_json_object, so dump() cannot exhaust the stack; replace keeps
  // invalid UTF-8 from throwing.
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  if (text.size() <= max_chars) return text;
  size_t cut = max_chars;
  while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0) == 0x80) --cut;  // UTF-8 start
  return text.substr(0, cut) + "…";
}

}  // namespace magnetar::convert
