// The engine's one tokenizer interface over both kinds a model file can hold:
//   SentencePiece — a serialized ModelProto (tokenizer.model, llama2.c, GGUF "llama");
//   HuggingFace   — a tokenizer.json pipeline (hf_tokenizer.h; HF folders, GGUF "gpt2").
// Three ways to encode, by where special-token strings may become their ids:
//   encode               — nowhere: the text is plain text (`--no-special`);
//   encode_with_special  — anywhere (raw prompts, as Hugging Face and llama.cpp do by default);
//   encode_chat_prompt   — only outside the byte ranges that came from message contents, so a
//                          user who types "<|im_end|>" cannot forge a turn.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "magnetar/status.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace magnetar {

namespace tok {
class HfTokenizer;
}

// Stored in the model file header (FileHeader::tokenizer_kind); the numbers are part of the format.
enum class TokenizerKind : uint32_t { SentencePiece = 0, HuggingFace = 1 };
const char* tokenizer_kind_name(TokenizerKind kind);

// Sorted, non-overlapping [begin, end) byte ranges of a rendered chat prompt.
using ContentRanges = std::vector<std::pair<size_t, size_t>>;

class Tokenizer {
 public:
  Tokenizer();
  ~Tokenizer();
  Status load(TokenizerKind kind, std::string_view bytes);
  Status load(std::string_view serialized_model_proto) {  // SentencePiece
    return load(TokenizerKind::SentencePiece, serialized_model_proto);
  }

  // A tokenizer.json and its tokenizer_config.json (may be empty) as they come from a folder.
  Status load_tokenizer_json(std::string_view tokenizer_json, std::string_view tokenizer_config);

  TokenizerKind kind() const { return kind_; }
  int vocab_size() const;
  // Plain text → ids (no BOS; special-token strings stay text).
  Status encode(std::string_view text, std::vector<int>* out) const;
  // Special-token strings written in the text become their ids.
  Status encode_with_special(std::string_view text, std::vector<int>* out) const;
  // A rendered chat prompt: special-token strings become ids only outside `message_contents`.
  // The text between special tokens is encoded as a whole, so the ids equal Hugging Face's
  // whenever the contents hold no special-token strings.
  Status encode_chat_prompt(std::string_view text, const ContentRanges& message_contents,
                            std::vector<int>* out) const;
  std::string decode(const std::vector<int>& ids) const;
  // One token's text as it appears when streamed (special tokens: empty; byte tokens: their
  // raw byte). Precomputed at load, so the decode loop does not allocate; valid while the
  // tokenizer lives.
  std::string_view piece_text(int id) const;
  std::string piece_string(int id) const;         // the raw vocabulary piece ("<bos>", "▁the", "Ġthe")
  int piece_to_id(std::string_view piece) const;  // -1 when absent
  // True when the first streamed piece carries a space that is not part of the text
  // (SentencePiece's add_dummy_prefix, a Metaspace that prepends).
  bool adds_dummy_prefix() const { return adds_dummy_prefix_; }
  // Control tokens (SentencePiece) / added tokens marked special (tokenizer.json).
  bool is_special(int id) const;
  // Ids a tokenizer.json post-processor adds around a single text (add_special_tokens);
  // empty for SentencePiece (its BOS comes from the model header).
  std::vector<int> added_prefix_ids() const;

 private:
  Status load_sentencepiece(std::string_view proto);
  // `contents` (offsets relative to text + `offset`): user-defined pieces SentencePiece finds
  // inside them ("<start_of_turn>" typed by a user) are spelled out character by character.
  Status encode_sentencepiece(std::string_view text, std::vector<int>* out,
                              const ContentRanges* contents = nullptr, size_t offset = 0) const;
  void append_as_characters(std::string_view text, std::vector<int>* out) const;
  Status encode_sentencepiece_split(std::string_view text, bool allow_special,
                                    const ContentRanges& contents, std::vector<int>* out) const;

  TokenizerKind kind_ = TokenizerKind::SentencePiece;
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::unique_ptr<tok::HfTokenizer> hf_;
  std::vector<std::pair<std::string, int>> specials_;  // SentencePiece control pieces, longest first
  bool adds_dummy_prefix_ = false;
  bool sp_collapses_spaces_ = false;
  std::vector<int> sp_user_defined_;  // sorted ids of pieces SentencePiece matches inside any text  // remove_extra_whitespaces: long texts are not chunked
  // SentencePiece piece_text, packed: id's text is piece_text_bytes_[offsets_[id], offsets_[id + 1]).
  std::string piece_text_bytes_;
  std::vector<uint32_t> piece_text_offsets_;  // [vocab + 1]
};

}  // namespace magnetar
