// SentencePiece tokenizer loaded from the model file's serialized ModelProto, plus the splitting
// of control tokens ("<start_of_turn>", "<s>", ...) out of rendered chat text, as Hugging Face's
// tokenizers do for added special tokens.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "magnetar/status.h"
#include "tokenizer/jinja/text.h"

namespace sentencepiece {
class SentencePieceProcessor;
}

namespace magnetar {

class Tokenizer {
 public:
  Tokenizer();
  ~Tokenizer();
  Status load(std::string_view serialized_model_proto);

  int vocab_size() const;
  // Plain text → ids (no BOS; control-token strings in the text stay text).
  Status encode(std::string_view text, std::vector<int>* out) const;
  // Text that may contain control tokens written literally ("<start_of_turn>"): they become
  // their ids, the text between them is encoded normally.
  Status encode_with_special(std::string_view text, std::vector<int>* out) const;
  // The same, but control-token strings inside `plain_ranges` (sorted byte ranges: the message
  // contents of a rendered chat) stay text, so a user cannot type a control token.
  Status encode_with_special(std::string_view text, const std::vector<jinja::ByteRange>& plain_ranges,
                             std::vector<int>* out) const;
  std::string decode(const std::vector<int>& ids) const;
  // One token's text as it appears when streamed after `previous` (leading-space rules follow
  // SentencePiece: "▁" becomes a space; byte tokens are emitted as raw bytes).
  // Precomputed at load, so the decode loop does not allocate; valid while the tokenizer lives.
  std::string_view piece_text(int id) const;
  std::string piece_string(int id) const;         // the raw vocabulary piece ("<bos>", "▁the")
  int piece_to_id(std::string_view piece) const;  // -1 when absent
  // True when SentencePiece prefixes text with a space ("add_dummy_prefix"), so the first
  // decoded piece of a text carries a space that is not part of it.
  bool adds_dummy_prefix() const { return adds_dummy_prefix_; }
  bool is_control(int id) const;

 private:
  std::unique_ptr<sentencepiece::SentencePieceProcessor> sp_;
  std::vector<std::pair<std::string, int>> specials_;  // control/user-defined pieces, longest first
  bool adds_dummy_prefix_ = false;
  // What piece_text returns, packed: piece id's text is piece_text_bytes_[offsets_[id],
  // offsets_[id + 1]). One buffer instead of a string per piece (256k pieces for Gemma).
  std::string piece_text_bytes_;
  std::vector<uint32_t> piece_text_offsets_;  // [vocab + 1]
};

}  // namespace magnetar
