// A Hugging Face tokenizer.json pipeline, built from the file with no per-model code:
// added tokens → normalizer → pre-tokenizer → BPE model, and the decoder and post-processor
// (which decides the BOS/EOS ids that add_special_tokens adds). Every unsupported component
// fails load() with its name, so conversion rejects a model rather than mis-encode it later.
//
// Stored form (the model file's tokenizer section for TokenizerKind::HuggingFace): a JSON
// object {"format": "magnetar-hf-tokenizer-1", "clean_up_tokenization_spaces": bool,
// "tokenizer": <tokenizer.json>}; see make_stored_hf_tokenizer.
#pragma once
#include <string>
#include <unordered_map>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"
#include "tokenizer/added_tokens.h"
#include "tokenizer/bpe_model.h"
#include "tokenizer/hf_decoder.h"
#include "tokenizer/hf_normalizer.h"
#include "tokenizer/hf_pre_tokenizer.h"

namespace magnetar::tok {

// Inputs larger than this are refused (spans are 32-bit; a prompt is far smaller).
inline constexpr size_t kMaxEncodeBytes = size_t(1) << 30;

class HfTokenizer {
 public:
  // `tokenizer_json`: the parsed tokenizer.json. `clean_up_spaces`: tokenizer_config.json's
  // clean_up_tokenization_spaces, applied by decode().
  Status load(const nlohmann::json& tokenizer_json, bool clean_up_spaces);
  Status load_stored(std::string_view stored);
  // tokenizer.json's text and tokenizer_config.json's (may be empty).
  Status load_files(std::string_view tokenizer_json, std::string_view tokenizer_config);

  // Text → ids without the post-processor's special tokens. `allow_special`: added tokens
  // marked special are recognised in the text; `content`: sorted byte ranges in which they are
  // not (non-special added tokens are recognised everywhere, as Hugging Face does).
  Status encode(std::string_view text, bool allow_special, const ByteRanges& content,
                std::vector<int>* out) const;
  std::string decode(const std::vector<int>& ids) const;
  // A token's text when streamed (special tokens: empty), precomputed at load.
  std::string_view piece_text(int id) const;

  int vocab_size() const { return int(id_to_token_.size()); }
  const std::string& token(int id) const;  // the token's text in the file ("Ġthe", "<bos>")
  int token_to_id(std::string_view token) const;  // -1 when absent
  bool is_special(int id) const;
  // Ids the post-processor puts before / after a single sequence.
  const std::vector<int>& prefix_ids() const { return prefix_ids_; }
  const std::vector<int>& suffix_ids() const { return suffix_ids_; }
  // True when the decoder drops the first space (Metaspace with prepend).
  bool strips_leading_space() const { return decoder_.strips_leading_space(); }

 private:
  Status load_added_tokens(const nlohmann::json& list);
  Status load_post_processor(const nlohmann::json& spec, int depth);
  // Ids of short words already encoded during one encode() call: prose repeats its words.
  using WordCache = std::unordered_map<std::string, std::vector<int>, StringHash, std::equal_to<>>;
  Status encode_text(std::string_view text, bool at_text_start, bool allow_special, WordCache* cache,
                     std::vector<int>* out) const;

  Normalizer normalizer_;
  PreTokenizer pre_tokenizer_;
  BpeModel model_;
  Decoder decoder_;
  std::vector<AddedToken> added_;
  AddedTokenMatcher raw_matcher_, normalized_matcher_;
  std::vector<std::string> id_to_token_;
  std::vector<uint8_t> special_;  // per id: 1 for special added tokens
  TokenMap added_by_content_;
  std::vector<int> prefix_ids_, suffix_ids_;
  bool clean_up_spaces_ = false;
  std::string piece_bytes_;             // piece_text of every id, packed
  std::vector<uint32_t> piece_offsets_;  // [vocab + 1]
};

// The stored form from tokenizer.json's text and tokenizer_config.json's (may be empty).
// Loads the result once, so an unsupported component is reported here, at conversion.
Status make_stored_hf_tokenizer(std::string_view tokenizer_json, std::string_view tokenizer_config,
                                std::string* out);
// The same from an already built tokenizer.json object (GGUF vocabularies). `loaded`, when
// given, receives the tokenizer built to check it.
Status make_stored_hf_tokenizer(const nlohmann::json& tokenizer, bool clean_up_spaces, std::string* out,
                                HfTokenizer* loaded = nullptr);
// Python transformers' clean_up_tokenization: " ." → "." etc.
std::string clean_up_tokenization_spaces(std::string text);

}  // namespace magnetar::tok
