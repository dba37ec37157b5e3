// Tokenizer inputs of a conversion: checking a SentencePiece model and looking ids up in it,
// turning a tokenizer.json into the stored form, reading tokenizer_config.json (add_bos_token,
// chat_template, special-token strings), detecting the template kind.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "magnetar/engine.h"
#include "magnetar/status.h"
#include "tokenizer/sentencepiece_proto.h"

namespace magnetar::convert {

struct VocabInfo {
  int n_pieces = 0;
  int bos_id = -1, eos_id = -1;
  std::map<std::string, int> found;  // the looked-up pieces present in the vocabulary
};

// Loads `model_bytes` with libsentencepiece (so a bad model fails here, not at load time) and
// looks up each piece of `lookups`. `origin` names the file in messages.
Status inspect_sentencepiece(const std::string& model_bytes, const std::string& origin,
                             const std::vector<std::string>& lookups, VocabInfo* out);

struct AddedToken {
  std::string content;
  bool special = false;
};

struct TokenizerConfig {
  bool add_bos = true;
  bool add_bos_given = false;  // the file says add_bos_token
  std::string chat_template;
  std::string bos_token, eos_token;  // "bos_token"/"eos_token" (a string or {"content": ...})
  std::map<int, AddedToken> added_tokens;  // "added_tokens_decoder": id → {content, special}
  std::string text;                  // the whole file ("" when there is none)
};
// Missing file: defaults (add_bos, no template). Malformed JSON: an error naming the file.
Status read_tokenizer_config(const std::string& path, TokenizerConfig* out);
// The same on the file's text (`path` names it in messages).
Status parse_tokenizer_config(const std::string& text, const std::string& path, TokenizerConfig* out);

// The added tokens of `config` past the end of a tokenizer.model of `n_pieces` pieces (Phi-3's
// <|endoftext|> ... <|user|>, ids 32000-32010 over Llama 2's 32000 pieces), as pieces to append
// to it: special ones Control (split out of prompts, never made from plain text), the others
// UserDefined. They must follow the last piece without gaps, be new and have ids below
// `model_vocab`; `origin` names tokenizer_config.json in messages.
Status sentencepiece_added_pieces(const TokenizerConfig& config, int n_pieces, int model_vocab,
                                  const std::string& origin, std::vector<spm::VocabPiece>* out);

// tokenizer.json (+ tokenizer_config.json's clean-up flag) → the stored tokenizer section.
// Added tokens whose ids the model has no logits for (`model_vocab`, e.g. Gemma 3's
// <image_soft_token> = 262144) are dropped, so encoding can never produce them. The pipeline is
// built once here: an unsupported component fails the conversion. `info` as for SentencePiece,
// bos/eos from the config's bos_token/eos_token strings; `prefix_ids`: what the post-processor
// puts before a text (the BOS decision).
Status build_hf_tokenizer(const std::string& tokenizer_json_path, const TokenizerConfig& config,
                          int model_vocab, const std::vector<std::string>& lookups, std::string* stored,
                          VocabInfo* info, std::vector<int>* prefix_ids);

// The template's family, for display (every template renders from its Jinja text).
ChatTemplate detect_chat_template(const std::string& template_text);

}  // namespace magnetar::convert
