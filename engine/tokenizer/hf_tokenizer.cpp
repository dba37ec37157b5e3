// tokenizer.json pipeline: see hf_tokenizer.h.
#include "tokenizer/hf_tokenizer.h"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "tokenizer/hf_json.h"
#include "tokenizer/utf8.h"

namespace magnetar::tok {

using nlohmann::json;

namespace {

constexpr const char kStoredFormat[] = "magnetar-hf-tokenizer-1";
constexpr size_t kMaxAddedTokens = size_t(1) << 20;

// Invalid UTF-8 → U+FFFD (the pipeline works on text, as Hugging Face's Rust strings do).
// Content ranges move with the repaired bytes: each side of every boundary is repaired alone.
void repair_with_ranges(std::string_view text, const ByteRanges& content, std::string* out,
                        ByteRanges* out_content) {
  out->clear();
  out_content->clear();
  size_t pos = 0;
  for (auto [b, e] : content) {
    b = std::min(std::max(b, pos), text.size());
    e = std::min(std::max(e, b), text.size());
    *out += utf8_repair(text.substr(pos, b - pos));
    const size_t start = out->size();
    *out += utf8_repair(text.substr(b, e - b));
    out_content->emplace_back(start, out->size());
    pos = e;
  }
  *out += utf8_repair(text.substr(pos));
}

}  // namespace

Status HfTokenizer::load(const json& j, bool clean_up_spaces) {
  if (!j.is_object()) return Status::error("tokenizer.json is not a JSON object");
  clean_up_spaces_ = clean_up_spaces;
  auto field = [&](const char* key) -> const json& {
    static const json null_value;
    auto it = j.find(key);
    return it == j.end() ? null_value : *it;
  };
  // "truncation" and "padding" only shape fixed-length batches: a prompt is never cut or padded.
  MAGNETAR_TRY(normalizer_.load(field("normalizer")));
  MAGNETAR_TRY(pre_tokenizer_.load(field("pre_tokenizer")));
  MAGNETAR_TRY(model_.load(field("model"), pre_tokenizer_.byte_level()));
  MAGNETAR_TRY(decoder_.load(field("decoder")));
  prefix_ids_.clear();
  suffix_ids_.clear();
  if (!field("post_processor").is_null())
    MAGNETAR_TRY(load_post_processor(field("post_processor"), 0).with_context("post_processor"));

  id_to_token_ = model_.tokens_by_id();
  MAGNETAR_TRY(load_added_tokens(field("added_tokens")).with_context("added_tokens"));
  raw_matcher_.build(added_, false);
  normalized_matcher_.build(added_, true);

  for (int id : prefix_ids_)
    if (id < 0 || id >= vocab_size()) return Status::error("post_processor: id " + std::to_string(id) + " is outside the vocabulary");
  for (int id : suffix_ids_)
    if (id < 0 || id >= vocab_size()) return Status::error("post_processor: id " + std::to_string(id) + " is outside the vocabulary");

  // Streaming texts, packed in one buffer (262k tokens for Gemma 3).
  piece_offsets_.assign(id_to_token_.size() + 1, 0);
  piece_bytes_.clear();
  for (size_t id = 0; id < id_to_token_.size(); ++id) {
    if (!special_[id] && !id_to_token_[id].empty()) piece_bytes_ += decoder_.token_bytes(id_to_token_[id]);
    if (piece_bytes_.size() > UINT32_MAX) return Status::error("vocabulary text too large");
    piece_offsets_[id + 1] = uint32_t(piece_bytes_.size());
  }
  return Status::ok();
}

Status HfTokenizer::load_added_tokens(const json& list) {
  added_.clear();
  added_by_content_.clear();
  special_.assign(id_to_token_.size(), 0);
  if (list.is_null()) return Status::ok();
  if (!list.is_array()) return Status::error("must be a list");
  if (list.size() > kMaxAddedTokens) return Status::error("too many added tokens");
  for (const json& t : list) {
    AddedToken a;
    if (!t.is_object()) return Status::error("entry is not an object");
    auto id = t.find("id");
    if (id == t.end() || !id->is_number_unsigned() || id->get<uint64_t>() >= (uint64_t(1) << 24))
      return Status::error("entry has no valid \"id\"");
    a.id = int(id->get<uint64_t>());
    MAGNETAR_TRY(get_string(t, "content", &a.content));
    if (a.content.empty()) return Status::error("token " + std::to_string(a.id) + " has empty content");
    MAGNETAR_TRY(get_bool(t, "special", false, &a.special));
    MAGNETAR_TRY(get_bool(t, "lstrip", false, &a.lstrip));
    MAGNETAR_TRY(get_bool(t, "rstrip", false, &a.rstrip));
    MAGNETAR_TRY(get_bool(t, "single_word", false, &a.single_word));
    MAGNETAR_TRY(get_bool(t, "normalized", !a.special, &a.normalized));
    if (a.normalized) {  // matched in normalized text, so compare with normalized content
      if (!is_valid_utf8(a.content)) return Status::error("token " + std::to_string(a.id) + " is not UTF-8");
      MAGNETAR_TRY(normalizer_.apply(&a.content));
      if (a.content.empty()) continue;
    }
    if (size_t(a.id) >= id_to_token_.size()) {
      id_to_token_.resize(size_t(a.id) + 1);
      special_.resize(size_t(a.id) + 1, 0);
    }
    id_to_token_[size_t(a.id)] = a.content;
    special_[size_t(a.id)] = a.special ? 1 : 0;
    added_by_content_[a.content] = a.id;
    added_.push_back(std::move(a));
  }
  return Status::ok();
}

Status HfTokenizer::load_post_processor(const json& spec, int depth) {
  if (depth > kMaxComponentDepth) return Status::error("Sequence nested too deeply");
  std::string type;
  MAGNETAR_TRY(component_type(spec, &type));
  if (type == "ByteLevel") return Status::ok();  // offsets only
  if (type == "Sequence") {
    const json* list = nullptr;
    MAGNETAR_TRY(get_array(spec, "processors", &list));
    for (const json& p : *list) MAGNETAR_TRY(load_post_processor(p, depth + 1));
    return Status::ok();
  }
  if (type == "TemplateProcessing") {
    const json* single = nullptr;
    MAGNETAR_TRY(get_array(spec, "single", &single));
    auto specials = spec.find("special_tokens");
    bool seen_sequence = false;
    for (const json& piece : *single) {
      if (piece.contains("Sequence")) {
        if (seen_sequence) return Status::error("TemplateProcessing: two sequences in \"single\"");
        seen_sequence = true;
        continue;
      }
      auto st = piece.find("SpecialToken");
      if (st == piece.end() || !st->is_object() || !st->contains("id") || !(*st)["id"].is_string())
        return Status::error("TemplateProcessing: a piece is neither Sequence nor SpecialToken");
      const std::string name = (*st)["id"].get<std::string>();
      if (specials == spec.end() || !specials->is_object() || !specials->contains(name))
        return Status::error("TemplateProcessing: special token \"" + name.substr(0, 40) + "\" is not defined");
      const json& def = (*specials)[name];
      const json* ids = nullptr;
      MAGNETAR_TRY(get_array(def, "ids", &ids));
      for (const json& id : *ids) {
        if (!id.is_number_unsigned() || id.get<uint64_t>() >= (uint64_t(1) << 24))
          return Status::error("TemplateProcessing: invalid id for \"" + name.substr(0, 40) + "\"");
        (seen_sequence ? suffix_ids_ : prefix_ids_).push_back(int(id.get<uint64_t>()));
      }
    }
    return Status::ok();
  }
  if (type == "RobertaProcessing" || type == "BertProcessing") {  // cls A sep
    for (const char* key : {"cls", "sep"}) {
      auto it = spec.find(key);
      if (it == spec.end() || !it->is_array() || it->size() != 2 || !(*it)[1].is_number_unsigned())
        return Status::error(type + ": \"" + key + "\" must be [token, id]");
      (key[0] == 'c' ? prefix_ids_ : suffix_ids_).push_back(int((*it)[1].get<uint64_t>() & 0xFFFFFF));
    }
    return Status::ok();
  }
  return unsupported_component("post-processor", type);
}

Status HfTokenizer::load_stored(std::string_view stored) {
  json j;
  const bool parsed = parse_json_object(stored, "stored tokenizer", &j).is_ok();
  const auto format = parsed ? j.find("format") : j.end();
  if (!parsed || format == j.end() || !format->is_string() || *format != kStoredFormat)
    return Status::error("tokenizer section is not a stored tokenizer.json (" + std::string(kStoredFormat) + ")");
  bool clean_up = false;
  MAGNETAR_TRY(get_bool(j, "clean_up_tokenization_spaces", false, &clean_up));
  auto t = j.find("tokenizer");
  if (t == j.end()) return Status::error("stored tokenizer has no \"tokenizer\"");
  return load(*t, clean_up);
}

Status HfTokenizer::encode_text(std::string_view text, bool at_text_start, bool allow_special,
                                WordCache* cache, std::vector<int>* out) const {
  Words words;
  words.text.assign(text);
  MAGNETAR_TRY(normalizer_.apply(&words.text));
  std::vector<TextPiece> pieces;
  if (normalized_matcher_.empty()) {
    pieces.push_back({0, words.text.size(), -1});
  } else {
    normalized_matcher_.split(words.text, allow_special, {}, &pieces);
  }
  const std::string normalized = pieces.size() == 1 ? std::string() : words.text;
  for (const TextPiece& p : pieces) {
    if (p.id >= 0) {
      out->push_back(p.id);
      continue;
    }
    if (pieces.size() > 1) words.text = normalized.substr(p.begin, p.end - p.begin);
    MAGNETAR_TRY(pre_tokenizer_.apply(&words, at_text_start && p.begin == 0));
    for (auto [b, e] : words.spans) model_.encode_word(std::string_view(words.text).substr(b, e - b), cache, out);
  }
  return Status::ok();
}

Status HfTokenizer::encode(std::string_view text, bool allow_special, const ByteRanges& content,
                           std::vector<int>* out) const {
  out->clear();
  if (text.size() > kMaxEncodeBytes) return Status::error("text too long to tokenize");
  std::string repaired;
  ByteRanges repaired_content;
  const ByteRanges* ranges = &content;
  if (!is_valid_utf8(text)) {
    repair_with_ranges(text, content, &repaired, &repaired_content);
    text = repaired;
    ranges = &repaired_content;
  }
  std::vector<TextPiece> pieces;
  raw_matcher_.split(text, allow_special, *ranges, &pieces);
  WordCache cache;
  for (const TextPiece& p : pieces) {
    if (p.id >= 0) out->push_back(p.id);
    else MAGNETAR_TRY(encode_text(text.substr(p.begin, p.end - p.begin), p.begin == 0, allow_special, &cache, out));
  }
  return Status::ok();
}

std::string HfTokenizer::decode(const std::vector<int>& ids) const {
  std::vector<std::string> tokens;
  tokens.reserve(ids.size());
  for (int id : ids)
    if (id >= 0 && id < vocab_size() && !id_to_token_[size_t(id)].empty()) tokens.push_back(id_to_token_[size_t(id)]);
  std::string text = decoder_.decode(std::move(tokens));
  return clean_up_spaces_ ? clean_up_tokenization_spaces(std::move(text)) : text;
}

std::string_view HfTokenizer::piece_text(int id) const {
  if (id < 0 || id >= vocab_size()) return {};
  return std::string_view(piece_bytes_).substr(piece_offsets_[size_t(id)], piece_offsets_[size_t(id) + 1] - piece_offsets_[size_t(id)]);
}

const std::string& HfTokenizer::token(int id) const {
  static const std::string none;
  return id >= 0 && id < vocab_size() ? id_to_token_[size_t(id)] : none;
}

int HfTokenizer::token_to_id(std::string_view token) const {
  if (auto it = added_by_content_.find(token); it != added_by_content_.end()) return it->second;
  if (auto it = model_.vocab().find(token); it != model_.vocab().end()) return it->second;
  return -1;
}

bool HfTokenizer::is_special(int id) const { return id >= 0 && id < vocab_size() && special_[size_t(id)]; }

std::string clean_up_tokenization_spaces(std::string text) {
  static const std::pair<const char*, const char*> kRules[] = {
      {" .", "."}, {" ?", "?"}, {" !", "!"}, {" ,", ","}, {" ' ", "'"}, {" n't", "n't"},
      {" 'm", "'m"}, {" 's", "'s"}, {" 've", "'ve"}, {" 're", "'re"}};
  for (const auto& [from, to] : kRules) replace_all(&text, from, to);
  return text;
}

Status make_stored_hf_tokenizer(const json& tokenizer, bool clean_up_spaces, std::string* out,
                                HfTokenizer* loaded) {
  HfTokenizer check;
  MAGNETAR_TRY((loaded ? loaded : &check)->load(tokenizer, clean_up_spaces));
  json stored = json::object();
  stored["format"] = kStoredFormat;
  stored["clean_up_tokenization_spaces"] = clean_up_spaces;
  stored["tokenizer"] = tokenizer;
  // A GGUF vocabulary can hold strings that are not UTF-8; JSON cannot store them as text.
  try {
    *out = stored.dump();
  } catch (const json::type_error&) {
    return Status::error("the vocabulary holds a token that is not valid UTF-8");
  }
  return Status::ok();
}

namespace {

Status parse_files(std::string_view tokenizer_json, std::string_view tokenizer_config, json* tokenizer,
                   bool* clean_up) {
  MAGNETAR_TRY(parse_json_object(tokenizer_json, "tokenizer.json", tokenizer));
  *clean_up = false;
  if (tokenizer_config.empty()) return Status::ok();
  json c;
  MAGNETAR_TRY(parse_json_object(tokenizer_config, "tokenizer_config.json", &c));
  return get_bool(c, "clean_up_tokenization_spaces", false, clean_up).with_context("tokenizer_config.json");
}

}  // namespace

Status HfTokenizer::load_files(std::string_view tokenizer_json, std::string_view tokenizer_config) {
  json t;
  bool clean_up = false;
  MAGNETAR_TRY(parse_files(tokenizer_json, tokenizer_config, &t, &clean_up));
  return load(t, clean_up).with_context("tokenizer.json");
}

Status make_stored_hf_tokenizer(std::string_view tokenizer_json, std::string_view tokenizer_config,
                                std::string* out) {
  json t;
  bool clean_up = false;
  MAGNETAR_TRY(parse_files(tokenizer_json, tokenizer_config, &t, &clean_up));
  return make_stored_hf_tokenizer(t, clean_up, out).with_context("tokenizer.json");
}

}  // namespace magnetar::tok
