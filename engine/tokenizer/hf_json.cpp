// Checked tokenizer.json reads: see hf_json.h.
#include "tokenizer/hf_json.h"

#include <nlohmann/json.hpp>

namespace magnetar::tok {

using nlohmann::json;

int json_nesting_depth(std::string_view text, int limit) {
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

Status parse_json_object(std::string_view text, const std::string& origin, json* out) {
  *out = json();
  if (json_nesting_depth(text, kMaxJsonDepth) > kMaxJsonDepth)
    return Status::error(origin + ": JSON nested deeper than " + std::to_string(kMaxJsonDepth) + " levels");
  json parsed = json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return Status::error(origin + ": malformed JSON");
  if (!parsed.is_object()) return Status::error(origin + ": malformed JSON (expected an object)");
  *out = std::move(parsed);
  return Status::ok();
}

Status component_type(const json& spec, std::string* out) {
  if (!spec.is_object()) return Status::error("component is not an object");
  auto it = spec.find("type");
  if (it == spec.end() || !it->is_string()) return Status::error("component has no \"type\"");
  *out = it->get<std::string>();
  return Status::ok();
}

Status get_string(const json& obj, const char* key, std::string* out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_string())
    return Status::error(std::string("\"") + key + "\" must be a string");
  *out = it->get<std::string>();
  return Status::ok();
}

Status get_optional_string(const json& obj, const char* key, std::string* out) {
  out->clear();
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) return Status::ok();
  return get_string(obj, key, out);
}

Status get_bool(const json& obj, const char* key, bool fallback, bool* out) {
  auto it = obj.find(key);
  if (it == obj.end() || it->is_null()) {
    *out = fallback;
    return Status::ok();
  }
  if (!it->is_boolean()) return Status::error(std::string("\"") + key + "\" must be true or false");
  *out = it->get<bool>();
  return Status::ok();
}

Status get_array(const json& obj, const char* key, const json** out) {
  auto it = obj.find(key);
  if (it == obj.end() || !it->is_array())
    return Status::error(std::string("\"") + key + "\" must be a list");
  *out = &*it;
  return Status::ok();
}

Status get_pattern(const json& obj, std::string* pattern, bool* is_regex) {
  auto it = obj.find("pattern");
  if (it == obj.end() || !it->is_object())
    return Status::error("\"pattern\" must be {\"String\": ...} or {\"Regex\": ...}");
  if (auto s = it->find("String"); s != it->end() && s->is_string()) {
    *pattern = s->get<std::string>();
    *is_regex = false;
    return Status::ok();
  }
  if (auto r = it->find("Regex"); r != it->end() && r->is_string()) {
    *pattern = r->get<std::string>();
    *is_regex = true;
    return Status::ok();
  }
  return Status::error("\"pattern\" must be {\"String\": ...} or {\"Regex\": ...}");
}

Status unsupported_component(const char* what, const std::string& type) {
  return Status::error(std::string(what) + " \"" + type.substr(0, 60) +
                       "\" is not supported by Magnetar");
}

Status add_components(const json& spec, const char* children_key, const AddComponent& add_one, int depth) {
  if (depth > kMaxComponentDepth) return Status::error("Sequence nested too deeply");
  std::string type;
  MAGNETAR_TRY(component_type(spec, &type));
  if (type != "Sequence") return add_one(spec, type);
  const json* list = nullptr;
  MAGNETAR_TRY(get_array(spec, children_key, &list));
  for (const json& child : *list) MAGNETAR_TRY(add_components(child, children_key, add_one, depth + 1));
  return Status::ok();
}

}  // namespace magnetar::tok
