// Tokenizer inputs of a conversion: see tokenizer_files.h.
#include "convert/tokenizer_files.h"

#include <sentencepiece_processor.h>

#include <cstdlib>
#include <set>

#include <nlohmann/json.hpp>

#include "convert/input_file.h"
#include "convert/json_input.h"
#include "tokenizer/hf_tokenizer.h"

namespace magnetar::convert {

using nlohmann::json;

namespace {

constexpr uint64_t kMaxTokenizerJsonBytes = 256ull << 20;

// "bos_token": "<s>" or {"content": "<s>", ...} or null.
std::string special_token_text(const json& config, const char* key) {
  auto it = config.find(key);
  if (it == config.end()) return "";
  if (it->is_string()) return it->get<std::string>();
  if (it->is_object() && it->contains("content") && (*it)["content"].is_string())
    return (*it)["content"].get<std::string>();
  return "";
}

}  // namespace

Status build_hf_tokenizer(const std::string& path, const TokenizerConfig& config, int model_vocab,
                          const std::vector<std::string>& lookups, std::string* stored,
                          VocabInfo* info, std::vector<int>* prefix_ids) {
  *info = VocabInfo{};
  std::string text;
  MAGNETAR_TRY(read_small_file(path, kMaxTokenizerJsonBytes, &text));
  json t;
  MAGNETAR_TRY(parse_json_object(text, path, &t));
  text.clear();
  text.shrink_to_fit();
  if (auto added = t.find("added_tokens"); added != t.end() && added->is_array()) {
    json kept = json::array();
    for (json& a : *added)
      if (!(a.is_object() && a.contains("id") && a["id"].is_number_unsigned() &&
            a["id"].get<uint64_t>() >= uint64_t(model_vocab)))
        kept.push_back(std::move(a));
    *added = std::move(kept);
  }
  bool clean_up = false;
  if (!config.text.empty()) {
    json c;  // already checked when it was read (parse_tokenizer_config); unreadable: the default
    if (parse_json_object(config.text, "tokenizer_config.json", &c).is_ok() && c.contains("clean_up_tokenization_spaces") && c["clean_up_tokenization_spaces"].is_boolean())
      clean_up = c["clean_up_tokenization_spaces"].get<bool>();
  }
  tok::HfTokenizer built;
  MAGNETAR_TRY(tok::make_stored_hf_tokenizer(t, clean_up, stored, &built).with_context(path));
  info->n_pieces = built.vocab_size();
  info->bos_id = config.bos_token.empty() ? -1 : built.token_to_id(config.bos_token);
  info->eos_id = config.eos_token.empty() ? -1 : built.token_to_id(config.eos_token);
  for (const std::string& piece : lookups)
    if (int id = built.token_to_id(piece); id >= 0) info->found[piece] = id;
  *prefix_ids = built.prefix_ids();
  return Status::ok();
}

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
  return parse_tokenizer_config(text, path, out);
}

Status parse_tokenizer_config(const std::string& text, const std::string& path, TokenizerConfig* out) {
  *out = TokenizerConfig{};
  json j;
  MAGNETAR_TRY(parse_json_object(text, path, &j));
  out->text = text;
  out->bos_token = special_token_text(j, "bos_token");
  out->eos_token = special_token_text(j, "eos_token");
  if (j.contains("add_bos_token")) {
    out->add_bos_given = j["add_bos_token"].is_boolean();
    if (j["add_bos_token"].is_boolean()) out->add_bos = j["add_bos_token"].get<bool>();
    else if (!j["add_bos_token"].is_null())
      return Status::error(path + ": add_bos_token must be true or false");
  }
  if (j.contains("added_tokens_decoder") && !j["added_tokens_decoder"].is_null()) {
    const json& added = j["added_tokens_decoder"];
    if (!added.is_object()) return Status::error(path + ": added_tokens_decoder must be an object");
    for (const auto& [key, token] : added.items()) {
      char* end = nullptr;
      const long id = std::strtol(key.c_str(), &end, 10);
      if (key.empty() || *end != '\0' || id < 0 || id > (1L << 30) || !token.is_object() ||
          !token.contains("content") || !token["content"].is_string() || token["content"].get<std::string>().empty())
        return Status::error(path + ": added_tokens_decoder entry \"" + key + "\" is not id: {\"content\": text, ...}");
      const json special = token.value("special", json(false));
      out->added_tokens[static_cast<int>(id)] = {token["content"].get<std::string>(),
                                                 special.is_boolean() && special.get<bool>()};
    }
  }
  if (j.contains("chat_template")) {
    const json& t = j["chat_template"];
    if (t.is_string()) {
      out->chat_template = t.get<std::string>();
    } else if (t.is_array()) {  // [{"name": "default", "template": "..."}, ...]
      for (const json& e : t) {
        // Every entry is {"name": string, "template": string}; anything else is refused, not
        // skipped (e.value() would throw on a number where a string belongs).
        if (!e.is_object() || !e.contains("name") || !e["name"].is_string() ||
            !e.contains("template") || !e["template"].is_string())
          return Status::error(path + ": chat_template entry " + json_excerpt(e) +
                               " is not {\"name\": string, \"template\": string}");
        if (e["name"].get<std::string>() == "default")
          out->chat_template = e["template"].get<std::string>();
      }
    } else if (!t.is_null()) {
      return Status::error(path + ": chat_template must be a string or a list of named templates");
    }
  }
  return Status::ok();
}

Status sentencepiece_added_pieces(const TokenizerConfig& config, int n_pieces, int model_vocab,
                                  const std::string& origin, std::vector<spm::VocabPiece>* out) {
  out->clear();
  std::set<std::string> names;
  for (auto it = config.added_tokens.lower_bound(n_pieces); it != config.added_tokens.end(); ++it) {
    const auto& [id, token] = *it;
    const int expected = n_pieces + static_cast<int>(out->size());
    if (id != expected)
      return Status::error(origin + ": added token " + std::to_string(id) + " \"" + token.content +
                           "\" leaves a gap after the tokenizer.model's pieces (the next id is " +
                           std::to_string(expected) + ")");
    if (id >= model_vocab)
      return Status::error(origin + ": added token " + std::to_string(id) + " \"" + token.content +
                           "\" is outside config.json's vocab_size " + std::to_string(model_vocab));
    if (!names.insert(token.content).second)
      return Status::error(origin + ": added token \"" + token.content + "\" appears twice");
    out->push_back({token.content, 0.0f, token.special ? spm::PieceType::Control : spm::PieceType::UserDefined});
  }
  return Status::ok();
}

ChatTemplate detect_chat_template(const std::string& text) {
  if (text.find("<start_of_turn>") != std::string::npos) return ChatTemplate::Gemma;
  if (text.find("[INST]") != std::string::npos) return ChatTemplate::Llama2;
  return ChatTemplate::None;
}

}  // namespace magnetar::convert
