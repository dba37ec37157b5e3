// Chat template rendering: see chat_template.h. Mirrors the Jinja templates shipped in the
// models' tokenizer_config.json (transformers' apply_chat_template).
#include "tokenizer/chat_template.h"

namespace magnetar {

namespace {

std::string trim(const std::string& s) {
  const char* ws = " \t\n\r\f\v";
  size_t b = s.find_first_not_of(ws);
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

std::string render_gemma(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                         const SpecialTokenText& special) {
  std::string out = special.bos;
  std::string pending_system;
  for (const auto& m : messages) {
    if (m.role == "system") {
      pending_system += (pending_system.empty() ? "" : "\n\n") + trim(m.content);
      continue;
    }
    std::string content = trim(m.content);
    if (!pending_system.empty() && m.role == "user") {
      content = pending_system + "\n\n" + content;
      pending_system.clear();
    }
    const std::string role = m.role == "assistant" ? "model" : m.role;
    out += "<start_of_turn>" + role + "\n" + content + "<end_of_turn>\n";
  }
  if (add_generation_prompt) out += "<start_of_turn>model\n";
  return out;
}

std::string render_llama2(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                          const SpecialTokenText& special) {
  std::string out;
  std::string system;
  size_t first = 0;
  if (!messages.empty() && messages[0].role == "system") {
    system = messages[0].content;
    first = 1;
  }
  bool first_user = true;
  for (size_t i = first; i < messages.size(); ++i) {
    const auto& m = messages[i];
    if (m.role == "user") {
      std::string content = m.content;
      if (first_user && !system.empty())
        content = "<<SYS>>\n" + system + "\n<</SYS>>\n\n" + content;
      first_user = false;
      out += special.bos + "[INST] " + trim(content) + " [/INST]";
    } else if (m.role == "assistant") {
      // Appended piece by piece: `" " + std::string` trips a false GCC 12 -Wrestrict warning.
      out.append(" ").append(trim(m.content)).append(" ").append(special.eos);
    }
  }
  (void)add_generation_prompt;  // the template ends with " [/INST]": the answer follows directly
  return out;
}

std::string render_plain(const std::vector<ChatMessage>& messages, const SpecialTokenText& special,
                         bool add_bos) {
  std::string out = add_bos ? special.bos : "";
  for (size_t i = 0; i < messages.size(); ++i) {
    if (i) out += "\n";
    out += messages[i].content;
  }
  return out;
}

}  // namespace

std::string render_chat(ChatTemplate kind, const std::vector<ChatMessage>& messages,
                        bool add_generation_prompt, const SpecialTokenText& special, bool add_bos) {
  switch (kind) {
    case ChatTemplate::Gemma: return render_gemma(messages, add_generation_prompt, special);
    case ChatTemplate::Llama2: return render_llama2(messages, add_generation_prompt, special);
    case ChatTemplate::None: break;
  }
  return render_plain(messages, special, add_bos);
}

}  // namespace magnetar
