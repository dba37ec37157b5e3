// Chat templates: renders a conversation as text with control tokens written literally
// ("<start_of_turn>", "<s>"), to be tokenized by Tokenizer::encode_with_special. The kind is
// detected by the converter from tokenizer_config.json's chat_template and stored in the file.
#pragma once
#include <string>
#include <vector>

#include "magnetar/engine.h"

namespace magnetar {

struct SpecialTokenText {
  std::string bos;  // e.g. "<s>" or "<bos>"; empty when the vocabulary has none
  std::string eos;  // e.g. "</s>" or "<eos>"
};

// Gemma: "<bos><start_of_turn>user\n…<end_of_turn>\n<start_of_turn>model\n…"; a system message
// (which Gemma's template rejects) is prepended to the first user turn.
// Llama 2: "<s>[INST] <<SYS>>\n…\n<</SYS>>\n\n… [/INST] … </s><s>[INST] … [/INST]".
// None (base models): BOS, then the messages' contents separated by newlines.
std::string render_chat(ChatTemplate kind, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, const SpecialTokenText& special, bool add_bos);

}  // namespace magnetar
