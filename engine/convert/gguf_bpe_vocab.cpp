// GGUF "gpt2" vocabularies as tokenizer.json: see gguf_bpe_vocab.h.
#include "convert/gguf_bpe_vocab.h"

#include <nlohmann/json.hpp>

namespace magnetar::convert {

using nlohmann::json;

namespace {

// The split regexes of the families llama.cpp names in tokenizer.ggml.pre (the same text as
// their tokenizer.json files).
constexpr const char kLlama3Regex[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char kQwen2Regex[] =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";
constexpr const char kO200kRegex[] =
    R"([^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

json split_then_byte_level(const char* regex) {
  return {{"type", "Sequence"},
          {"pretokenizers",
           {{{"type", "Split"}, {"pattern", {{"Regex", regex}}}, {"behavior", "Isolated"}, {"invert", false}},
            {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", false}}}}};
}

json gpt2_byte_level() { return {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"use_regex", true}}; }

}  // namespace

bool gguf_pre_tokenizer(const std::string& pre, json* pre_tokenizer, json* normalizer) {
  *normalizer = nullptr;
  if (pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3" || pre == "dbrx" || pre == "smaug-bpe") {
    *pre_tokenizer = split_then_byte_level(kLlama3Regex);
  } else if (pre == "qwen2" || pre == "deepseek-r1-qwen") {
    *pre_tokenizer = split_then_byte_level(kQwen2Regex);
    *normalizer = {{"type", "NFC"}};  // Qwen's tokenizer.json normalizes; GGUF does not say so
  } else if (pre == "gpt-4o") {
    *pre_tokenizer = split_then_byte_level(kO200kRegex);
  } else if (pre == "gpt-2" || pre == "gpt2" || pre == "default") {
    *pre_tokenizer = gpt2_byte_level();
  } else if (pre == "smollm") {  // SmolLM: every digit apart, then GPT-2's split
    *pre_tokenizer = {{"type", "Sequence"},
                      {"pretokenizers", {{{"type", "Digits"}, {"individual_digits", true}}, gpt2_byte_level()}}};
  } else {
    return false;
  }
  return true;
}

Status gguf_bpe_vocab_to_tokenizer_json(const gguf::File& f, json* out, int* n_tokens) {
  std::string_view model;
  MAGNETAR_TRY(f.get_string("tokenizer.ggml.model", &model));
  if (model != "gpt2") return Status::error("GGUF tokenizer model is not gpt2");
  std::string pre = "default";
  if (f.find("tokenizer.ggml.pre") != nullptr) {
    std::string_view p;
    MAGNETAR_TRY(f.get_string("tokenizer.ggml.pre", &p));
    pre.assign(p.substr(0, 64));
  }
  json pre_tokenizer, normalizer;
  if (!gguf_pre_tokenizer(pre, &pre_tokenizer, &normalizer))
    return Status::error("GGUF tokenizer.ggml.pre \"" + pre +
                         "\" is not supported (known: llama-bpe, qwen2, gpt-4o, gpt-2, smollm, dbrx, smaug-bpe)");
  std::vector<std::string_view> tokens, merges;
  MAGNETAR_TRY(f.get_string_array("tokenizer.ggml.tokens", &tokens));
  if (tokens.empty()) return Status::error("GGUF tokenizer.ggml.tokens is empty");
  MAGNETAR_TRY(f.get_string_array("tokenizer.ggml.merges", &merges));
  std::vector<int64_t> types(tokens.size(), 1);
  if (f.find("tokenizer.ggml.token_type") != nullptr) {
    MAGNETAR_TRY(f.get_i64_array("tokenizer.ggml.token_type", &types));
    if (types.size() != tokens.size())
      return Status::error("GGUF tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                           " entries for " + std::to_string(tokens.size()) + " tokens");
  }
  json vocab = json::object(), added = json::array();
  for (size_t i = 0; i < tokens.size(); ++i) {
    const std::string token(tokens[i]);
    if (token.empty()) continue;  // an unused id: nothing encodes to it
    if (vocab.contains(token)) return Status::error("GGUF token " + std::to_string(i) + " repeats an earlier token");
    vocab[token] = i;
    // llama.cpp's token types: 3 control, 4 user-defined; both are matched in raw text.
    if (types[i] == 3 || types[i] == 4)
      added.push_back({{"id", i}, {"content", token}, {"single_word", false}, {"lstrip", false},
                       {"rstrip", false}, {"normalized", false}, {"special", types[i] == 3}});
  }
  json merge_list = json::array();
  for (std::string_view m : merges) merge_list.push_back(std::string(m));
  *out = {{"version", "1.0"},
          {"added_tokens", std::move(added)},
          {"normalizer", normalizer},
          {"pre_tokenizer", pre_tokenizer},
          {"post_processor", nullptr},
          {"decoder", {{"type", "ByteLevel"}, {"add_prefix_space", true}, {"use_regex", true}}},
          {"model",
           {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"fuse_unk", false},
            {"byte_fallback", false}, {"ignore_merges", pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3"},
            {"vocab", std::move(vocab)}, {"merges", std::move(merge_list)}}}};
  *n_tokens = int(tokens.size());
  return Status::ok();
}

}  // namespace magnetar::convert
