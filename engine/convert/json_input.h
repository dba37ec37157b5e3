// The one way the converter reads JSON from a model folder (config.json, tokenizer_config.json,
// generation_config.json, the safetensors header and index): a size and nesting-depth bound
// checked on the raw text before nlohmann builds anything (its dump() and destructor recurse), and
// an abridged rendering of values for error messages, so untrusted JSON never reaches a message
// whole. Field access stays typed at the call sites: every value is checked before get<>().
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "magnetar/status.h"
#include "tokenizer/hf_json.h"

namespace magnetar::convert {

// The bound and the bounded parse are the tokenizer layer's (tokenizer/hf_json.h), which reads
// tokenizer.json the same way.
using tok::json_nesting_depth;
using tok::kMaxJsonDepth;
using tok::parse_json_object;

// Reads a whole file of at most max_bytes and parses it as above.
Status read_json_object_file(const std::string& path, uint64_t max_bytes, nlohmann::json* out);
// A value as JSON text for a message, cut to about max_chars ("…" marks the cut).
std::string json_excerpt(const nlohmann::json& value, size_t max_chars = 80);
// Untrusted text (a tensor name, a key) for a message as it is, cut the same way.
std::string abridged(const std::string& text, size_t max_chars = 80);

}  // namespace magnetar::convert
