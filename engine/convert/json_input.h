// The one way the converter reads JSON from a model folder (config.json, tokenizer_config.json,
// generation_config.json, the safetensors header and index): a size and nesting-depth bound
// checked on the raw text before nlohmann builds anything (its dump() and destructor recurse), and
// an abridged rendering of values for error messages, so untrusted JSON never reaches a message
// whole. Field access stays typed at the call sites: every value is checked before get<>().
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "magnetar/status.h"

namespace magnetar::convert {

// Real model-folder JSON nests 4-5 levels; anything deeper is hostile or broken.
constexpr int kMaxJsonDepth = 64;

// Parses `text` (from `origin`, named in errors) into an object. Refuses nesting deeper than
// kMaxJsonDepth, malformed JSON and non-object documents.
Status parse_json_object(const std::string& text, const std::string& origin, nlohmann::json* out);
// Reads a whole file of at most max_bytes and parses it as above.
Status read_json_object_file(const std::string& path, uint64_t max_bytes, nlohmann::json* out);
// The deepest nesting of arrays and objects in `text` (strings skipped); stops counting at limit + 1.
int json_nesting_depth(const std::string& text, int limit);
// A value as JSON text for a message, cut to about max_chars ("…" marks the cut).
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 80);

}  // namespace magnetar::convert
