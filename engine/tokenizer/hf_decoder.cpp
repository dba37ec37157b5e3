// tokenizer.json decoders: see hf_decoder.h.
#include "tokenizer/hf_decoder.h"

#include <nlohmann/json.hpp>

#include "tokenizer/byte_level.h"
#include "tokenizer/hf_json.h"
#include "tokenizer/utf8.h"

namespace magnetar::tok {

using nlohmann::json;

namespace {

// "<0xAB>" → 0xAB; -1 otherwise.
int parse_byte_token(const std::string& t) {
  if (t.size() != 6 || t.compare(0, 3, "<0x") != 0 || t[5] != '>') return -1;
  int v = 0;
  for (int i = 3; i < 5; ++i) {
    const char c = t[size_t(i)];
    int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

}  // namespace

struct Decoder::Step {
  enum class Kind { ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace } kind;
  std::string pattern, content;  // Replace; Strip: content; Metaspace: replacement in `pattern`
  int strip_start = 0, strip_stop = 0;
  bool prepend = true;  // Metaspace: drop the leading space of the first token

  void apply(std::vector<std::string>* tokens, bool streaming) const {
    switch (kind) {
      case Kind::ByteLevel: {
        // Hugging Face maps every character back to its byte; a token with an unmapped
        // character keeps its own bytes. The result is one string.
        std::string all, bytes;
        for (const std::string& t : *tokens) all += unmap_byte_level(t, &bytes) ? bytes : t;
        tokens->assign(1, streaming ? all : utf8_repair(all));
        return;
      }
      case Kind::ByteFallback: {
        std::vector<std::string> out;
        std::string pending;
        auto flush = [&] {
          if (pending.empty()) return;
          if (streaming || is_valid_utf8(pending)) {
            out.push_back(pending);
          } else {
            std::string replacement;
            for (size_t i = 0; i < pending.size(); ++i) replacement += "\xEF\xBF\xBD";
            out.push_back(replacement);
          }
          pending.clear();
        };
        for (std::string& t : *tokens) {
          const int b = parse_byte_token(t);
          if (b >= 0) {
            pending.push_back(static_cast<char>(b));
          } else {
            flush();
            out.push_back(std::move(t));
          }
        }
        flush();
        tokens->swap(out);
        return;
      }
      case Kind::Fuse: {
        std::string all;
        for (const std::string& t : *tokens) all += t;
        tokens->assign(1, all);
        return;
      }
      case Kind::Strip:
        // Strips the ends of the (usually fused) text: when streaming, one token is not an end.
        if (streaming) return;
        for (std::string& t : *tokens) {
          int n = 0;
          while (n < strip_start && t.size() >= content.size() && !content.empty() &&
                 t.compare(0, content.size(), content) == 0) {
            t.erase(0, content.size());
            ++n;
          }
          n = 0;
          while (n < strip_stop && t.size() >= content.size() && !content.empty() &&
                 t.compare(t.size() - content.size(), content.size(), content) == 0) {
            t.erase(t.size() - content.size());
            ++n;
          }
        }
        return;
      case Kind::Replace:
        for (std::string& t : *tokens) replace_all(&t, pattern, content);
        return;
      case Kind::Metaspace:
        for (size_t i = 0; i < tokens->size(); ++i) {
          std::string& t = (*tokens)[i];
          replace_all(&t, pattern, " ");
          if (i == 0 && prepend && !streaming && !t.empty() && t[0] == ' ') t.erase(0, 1);
        }
        return;
    }
  }
};

Decoder::Decoder() = default;
Decoder::~Decoder() = default;
Decoder::Decoder(Decoder&&) noexcept = default;
Decoder& Decoder::operator=(Decoder&&) noexcept = default;

Status Decoder::load(const json& spec) {
  steps_.clear();
  has_decoder_ = !spec.is_null();
  strips_leading_space_ = false;
  if (!has_decoder_) return Status::ok();
  return add_components(spec, "decoders", [this](const json& one, const std::string& type) {
           return add(one, type);
         }).with_context("decoder");
}

Status Decoder::add(const json& spec, const std::string& type) {
  auto step = std::make_unique<Step>();
  if (type == "ByteLevel") {
    step->kind = Step::Kind::ByteLevel;
  } else if (type == "ByteFallback") {
    step->kind = Step::Kind::ByteFallback;
  } else if (type == "Fuse") {
    step->kind = Step::Kind::Fuse;
  } else if (type == "Strip") {
    step->kind = Step::Kind::Strip;
    MAGNETAR_TRY(get_string(spec, "content", &step->content));
    auto count = [&](const char* key, int* out) -> Status {
      auto it = spec.find(key);
      if (it == spec.end() || !it->is_number_unsigned() || it->get<uint64_t>() > 1024)
        return Status::error(std::string("Strip \"") + key + "\" must be a small count");
      *out = int(it->get<uint64_t>());
      return Status::ok();
    };
    MAGNETAR_TRY(count("start", &step->strip_start));
    MAGNETAR_TRY(count("stop", &step->strip_stop));
    // Llama-2-style files: a normalizer prepends "▁" and this removes its space again.
    strips_leading_space_ = strips_leading_space_ || (step->content == " " && step->strip_start > 0);
  } else if (type == "Replace") {
    step->kind = Step::Kind::Replace;
    bool is_regex = false;
    MAGNETAR_TRY(get_pattern(spec, &step->pattern, &is_regex));
    if (is_regex) return Status::error("Replace with a regex pattern is not supported");
    MAGNETAR_TRY(get_string(spec, "content", &step->content));
  } else if (type == "Metaspace") {
    step->kind = Step::Kind::Metaspace;
    MAGNETAR_TRY(get_string(spec, "replacement", &step->pattern));
    std::string scheme;
    MAGNETAR_TRY(get_optional_string(spec, "prepend_scheme", &scheme));
    if (scheme.empty()) MAGNETAR_TRY(get_bool(spec, "add_prefix_space", true, &step->prepend));
    else step->prepend = scheme != "never";
    strips_leading_space_ = strips_leading_space_ || step->prepend;
  } else {
    return unsupported_component("decoder", type);
  }
  steps_.push_back(std::move(step));
  return Status::ok();
}

std::vector<std::string> Decoder::run(std::vector<std::string> tokens, bool streaming) const {
  for (const auto& step : steps_) step->apply(&tokens, streaming);
  return tokens;
}

std::string Decoder::decode(std::vector<std::string> tokens) const {
  std::string out;
  if (!has_decoder_) {
    for (size_t i = 0; i < tokens.size(); ++i) out += (i ? " " : "") + tokens[i];
    return out;
  }
  for (const std::string& t : run(std::move(tokens), false)) out += t;
  return out;
}

std::string Decoder::token_bytes(const std::string& token) const {
  if (!has_decoder_) return token;
  std::string out;
  for (const std::string& t : run({token}, true)) out += t;
  return out;
}

}  // namespace magnetar::tok
