// Tokenizer inputs of a conversion: see tokenizer_files.h.
#include "convert/tokenizer_files.h"

#include <sentencepiece_processor.h>

#include <nlohmann/json.hpp>

#include "convert/input_file.h"

namespace magnetar::convert {

using nlohmann::json;

Status inspect_sentencepiece(const std::string& model_bytes, const std::string& origin,
                             const std::vector<std::string>& lookups, VocabInfo* out) {
  *out = VocabInfo{};
  sentencepiece::SentencePieceProcessor sp;
  auto st = sp.LoadFromSerializedProto(model_bytes);
  if (!st.ok())
    return Status::error(origin + ": not a valid SentencePiece model (" +
                         std::string(st.message()) + ")");
  out->n_pieces = sp.GetPieceSize();
  out->bos_id = sp.bos_id();
  out->eos_id = sp.eos_id();
  for (const std::string& piece : lookups) {
    int id = sp.PieceToId(piece);  // unknown pieces map to unk: confirm by the reverse lookup
    if (id >= 0 && id < out->n_pieces && sp.IdToPiece(id) == piece) out->found[piece] = id;
  }
  return Status::ok();
}

Status read_tokenizer_config(const std::string& path, TokenizerConfig* out) {
  *out = TokenizerConfig{};
  if (!is_regular_file(path)) return Status::ok();
  std::string text;
  MAGNETAR_TRY(read_small_file(path, 64ull << 20, &text));
  json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error(path + ": malformed JSON");
  if (j.contains("add_bos_token")) {
    if (j["add_bos_token"].is_boolean()) out->add_bos = j["add_bos_token"].get<bool>();
    else if (!j["add_bos_token"].is_null())
      return Status::error(path + ": add_bos_token must be true or false");
  }
  if (j.contains("eos_token")) {
    const json& e = j["eos_token"];
    if (e.is_string()) out->eos_token = e.get<std::string>();
    else if (e.is_object() && e.contains("content") && e["content"].is_string())
      out->eos_token = e["content"].get<std::string>();
  }
  if (j.contains("chat_template")) {
    const json& t = j["chat_template"];
    if (t.is_string()) {
      out->chat_template = t.get<std::string>();
    } else if (t.is_array()) {  // [{"name": "default", "template": "..."}, ...]
      for (const json& e : t)
        if (e.is_object() && e.value("name", "") == "default" && e.contains("template") &&
            e["template"].is_string())
          out->chat_template = e["template"].get<std::string>();
    } else if (!t.is_null()) {
      return Status::error(path + ": chat_template must be a string or a list of named templates");
    }
  }
  return Status::ok();
}

ChatTemplate detect_chat_template(const std::string& text) {
  if (text.find("<start_of_turn>") != std::string::npos) return ChatTemplate::Gemma;
  if (text.find("[INST]") != std::string::npos) return ChatTemplate::Llama2;
  return ChatTemplate::None;
}

}  // namespace magnetar::convert
