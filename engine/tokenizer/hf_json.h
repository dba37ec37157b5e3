// Checked reads from tokenizer.json objects: every accessor returns a Status naming the key, so
// a malformed file gives a clear error instead of a nlohmann exception or a wrong pipeline.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::tok {

// Sequences inside sequences: real files nest one level; more is malformed input.
inline constexpr int kMaxComponentDepth = 8;

// Real tokenizer.json and model-folder JSON nests 4-7 levels; anything deeper is hostile or
// broken (nlohmann's parser, dump() and destructor recurse once per level).
inline constexpr int kMaxJsonDepth = 64;
// The deepest nesting of arrays and objects in `text` (strings skipped); stops counting at limit + 1.
int json_nesting_depth(std::string_view text, int limit);
// Parses `text` (from `origin`, named in errors) into an object, refusing nesting deeper than
// kMaxJsonDepth before nlohmann builds anything, malformed JSON and non-object documents.
Status parse_json_object(std::string_view text, const std::string& origin, nlohmann::json* out);

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

// A pipeline component that may be a "Sequence": its children (the array under `children_key`,
// "normalizers", "pretokenizers" or "decoders") are expanded in order, Sequences inside
// Sequences at most kMaxComponentDepth deep; every other component goes to add_one with its type.
using AddComponent = std::function<Status(const nlohmann::json& spec, const std::string& type)>;
Status add_components(const nlohmann::json& spec, const char* children_key, const AddComponent& add_one,
                      int depth = 0);

}  // namespace magnetar::tok
