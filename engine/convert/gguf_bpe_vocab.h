// GGUF byte-level BPE vocabularies (tokenizer.ggml.model = "gpt2") → the tokenizer.json the
// Hugging Face tokenizer would have been made from: tokens → vocab, tokenizer.ggml.merges →
// merges, control / user-defined tokens → added tokens (special / not), and
// tokenizer.ggml.pre → the pre-tokenizer of that family (its split regex). A `pre` name not in
// the table is an error at conversion: guessing a regex would give wrong ids later.
#pragma once
#include <string>

#include <nlohmann/json_fwd.hpp>

#include "convert/gguf_reader.h"
#include "magnetar/status.h"

namespace magnetar::convert {

Status gguf_bpe_vocab_to_tokenizer_json(const gguf::File& file, nlohmann::json* tokenizer_json,
                                        int* n_tokens);

// The pre-tokenizer object for a tokenizer.ggml.pre name; false for unknown names.
bool gguf_pre_tokenizer(const std::string& pre, nlohmann::json* pre_tokenizer, nlohmann::json* normalizer);

}  // namespace magnetar::convert
