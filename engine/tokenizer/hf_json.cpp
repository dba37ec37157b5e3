// Checked tokenizer.json reads: see hf_json.h.
#include "tokenizer/hf_json.h"

#include <nlohmann/json.hpp>

namespace magnetar::tok {

using nlohmann::json;

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

}  // namespace magnetar::tok
