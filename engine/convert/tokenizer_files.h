// Tokenizer inputs of a conversion: checking a SentencePiece model and looking ids up in it,
// reading tokenizer_config.json (add_bos_token, chat_template), detecting the template kind.
#pragma once
#include <map>
#include <string>
#include <vector>

#include "magnetar/engine.h"
#include "magnetar/status.h"

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

struct TokenizerConfig {
  bool add_bos = true;
  std::string chat_template;
  std::string eos_token;  // "eos_token" as a string or {"content": ...}; empty when absent
};
// Missing file: defaults (add_bos, no template). Malformed JSON: an error naming the file.
Status read_tokenizer_config(const std::string& path, TokenizerConfig* out);

// The template's family, for display (every template renders from its Jinja text).
ChatTemplate detect_chat_template(const std::string& template_text);

}  // namespace magnetar::convert
