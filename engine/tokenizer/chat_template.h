// Chat templates: the model's own Jinja template (tokenizer_config.json `chat_template`, GGUF
// `tokenizer.chat_template`), rendered by our sandboxed interpreter (tokenizer/jinja/) with the
// variables transformers' apply_chat_template passes. Control tokens come out written literally
// ("<|im_start|>"); the result also says which bytes came from message contents, so the tokenizer
// can keep a user's "<|im_start|>" as plain text. Models without a template (llama2.c
// checkpoints) use the built-in plain-completion template below.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/engine.h"
#include "tokenizer/jinja/template.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {

struct SpecialTokenText {
  std::string bos;  // e.g. "<s>" or "<bos>"; empty when the vocabulary has none
  std::string eos;  // e.g. "</s>" or "<eos>"
};

// BOS (when the model adds one), then the messages' contents separated by newlines: what a base
// model without a chat template continues.
extern const char* const kPlainCompletionTemplate;

class PromptTemplate {
 public:
  // Parses `source` (empty = the plain-completion built-in). `origin` says where it came from,
  // for `info` and the app ("tokenizer_config.json", "built-in").
  static Status create(const std::string& source, std::string origin, std::unique_ptr<PromptTemplate>* out);

  // `variables` beyond the standard ones (messages, add_generation_prompt, bos_token, eos_token,
  // tools = none, documents = none, date_string) override them.
  Status render(const jinja::Value& messages, bool add_generation_prompt, const SpecialTokenText& special,
                const jinja::Dict& extra_variables, jinja::RenderResult* out) const;
  Status render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                const SpecialTokenText& special, jinja::RenderResult* out) const;

  const std::string& source() const { return source_; }
  const std::string& origin() const { return origin_; }
  bool is_builtin() const { return builtin_; }

 private:
  std::unique_ptr<jinja::Template> template_;
  std::string source_, origin_;
  bool builtin_ = false;
};

// A conversation ({"role": ..., "content": ...} objects, contents may be lists of parts) as a
// template value: every string in a message except its role counts as content.
Status messages_value(const nlohmann::ordered_json& messages, jinja::Value* out);
jinja::Value messages_value(const std::vector<ChatMessage>& messages);

// tokenizer_config.json's text: its chat_template (a string, or the list entry named "default";
// empty when it has none) and the special-token strings it declares (bos_token, eos_token,
// pad_token, ... as strings or {"content": ...}; additional_special_tokens) as variables.
Status read_template_config(const std::string& json_text, std::string* source, jinja::Dict* special_variables);

// A render's content ranges in the form Tokenizer::encode_chat_prompt takes.
ContentRanges content_ranges(const jinja::RenderResult& rendered);

// Converter check: the template parses and renders a short user/assistant/user conversation
// (a raise_exception from the template itself is accepted: it may refuse that conversation).
Status check_chat_template(const std::string& source);

// End-of-turn control strings the template writes ("<|eot_id|>", "<|im_end|>", "<end_of_turn>",
// "<|end|>", ...): generation must stop on them even when the model's config omits them.
std::vector<std::string> end_of_turn_markers(const std::string& source);

}  // namespace magnetar
