// Checked reads from tokenizer.json objects: every accessor returns a Status naming the key, so
// a malformed file gives a clear error instead of a nlohmann exception or a wrong pipeline.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::tok {

// Sequences inside sequences: real files nest one level; more is malformed input.
inline constexpr int kMaxComponentDepth = 8;

// spec["type"] as a string ("component has no type" otherwise).
Status component_type(const nlohmann::json& spec, std::string* out);
Status get_string(const nlohmann::json& obj, const char* key, std::string* out);
// Missing or null → `fallback`; another type is an error.
Status get_bool(const nlohmann::json& obj, const char* key, bool fallback, bool* out);
Status get_optional_string(const nlohmann::json& obj, const char* key, std::string* out);
Status get_array(const nlohmann::json& obj, const char* key, const nlohmann::json** out);
// "pattern": {"String": s} or {"Regex": r}.
Status get_pattern(const nlohmann::json& obj, std::string* pattern, bool* is_regex);
Status unsupported_component(const char* what, const std::string& type);

}  // namespace magnetar::tok
