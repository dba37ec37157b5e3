// tokenizer.json normalizers: see hf_normalizer.h.
#include "tokenizer/hf_normalizer.h"

#include <utf8proc.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "tokenizer/hf_json.h"
#include "tokenizer/unicode_regex.h"
#include "tokenizer/utf8.h"

namespace magnetar::tok {

using nlohmann::json;

struct Normalizer::Step {
  enum class Kind { Unicode, Prepend, ReplaceString, ReplaceRegex, Lowercase, Strip } kind;
  utf8proc_option_t unicode_options{};
  std::string text;     // Prepend: the prefix; Replace: the literal pattern
  std::string content;  // Replace: the replacement
  UnicodeRegex regex;
  bool strip_left = false, strip_right = false;
};

namespace {

// Normalizes only the non-ASCII stretches, each with the ASCII character before it: an ASCII
// character is a starter that no normalization form reorders across or composes with what
// precedes it, so the text can be cut before every ASCII character. Mostly-ASCII text (prose,
// code) then costs a copy.
Status apply_unicode_form(utf8proc_option_t options, std::string* text) {
  const std::string& in = *text;
  size_t i = 0;
  while (i < in.size() && static_cast<unsigned char>(in[i]) < 0x80) ++i;
  if (i == in.size()) return Status::ok();
  std::string out;
  out.reserve(in.size() + in.size() / 8);
  out.append(in, 0, i);
  while (i < in.size()) {
    if (static_cast<unsigned char>(in[i]) < 0x80) {
      out.push_back(in[i++]);
      continue;
    }
    size_t start = i;
    if (start > 0 && static_cast<unsigned char>(in[start - 1]) < 0x80) {
      --start;
      out.pop_back();
    }
    size_t end = i;
    while (end < in.size() && static_cast<unsigned char>(in[end]) >= 0x80) ++end;
    utf8proc_uint8_t* mapped = nullptr;
    const utf8proc_ssize_t n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(in.data() + start),
                                            static_cast<utf8proc_ssize_t>(end - start), &mapped, options);
    if (n < 0) return Status::error(std::string("unicode normalization: ") + utf8proc_errmsg(n));
    out.append(reinterpret_cast<const char*>(mapped), static_cast<size_t>(n));
    std::free(mapped);
    i = end;
  }
  text->swap(out);
  return Status::ok();
}

void lowercase(std::string* text) {
  std::string out;
  out.reserve(text->size());
  for (size_t i = 0; i < text->size();) {
    const size_t n = utf8_valid_length(*text, i);
    const uint32_t cp = utf8_decode(*text, i, n);
    utf8_append(static_cast<uint32_t>(utf8proc_tolower(static_cast<utf8proc_int32_t>(cp))), &out);
    i += n;
  }
  text->swap(out);
}

void strip(std::string* text, bool left, bool right) {
  size_t begin = 0, end = text->size();
  if (left) {
    while (begin < end) {
      const size_t n = utf8_valid_length(*text, begin);
      if (!is_unicode_white_space(utf8_decode(*text, begin, n))) break;
      begin += n;
    }
  }
  if (right) {
    while (end > begin) {
      size_t start = end - 1;
      while (start > begin && (static_cast<unsigned char>((*text)[start]) & 0xC0) == 0x80) --start;
      if (!is_unicode_white_space(utf8_decode(*text, start, end - start))) break;
      end = start;
    }
  }
  *text = text->substr(begin, end - begin);
}

}  // namespace

Normalizer::Normalizer() = default;
Normalizer::~Normalizer() = default;
Normalizer::Normalizer(Normalizer&&) noexcept = default;
Normalizer& Normalizer::operator=(Normalizer&&) noexcept = default;

Status Normalizer::load(const json& spec) {
  steps_.clear();
  if (spec.is_null()) return Status::ok();
  return add_components(spec, "normalizers", [this](const json& one, const std::string& type) {
           return add(one, type);
         }).with_context("normalizer");
}

Status Normalizer::add(const json& spec, const std::string& type) {
  auto step = std::make_unique<Step>();
  if (type == "NFC" || type == "NFD" || type == "NFKC" || type == "NFKD") {
    step->kind = Step::Kind::Unicode;
    int options = UTF8PROC_STABLE | (type[type.size() - 1] == 'C' ? UTF8PROC_COMPOSE : UTF8PROC_DECOMPOSE);
    if (type.size() == 4) options |= UTF8PROC_COMPAT;
    step->unicode_options = static_cast<utf8proc_option_t>(options);
  } else if (type == "Prepend") {
    step->kind = Step::Kind::Prepend;
    MAGNETAR_TRY(get_string(spec, "prepend", &step->text));
  } else if (type == "Replace") {
    MAGNETAR_TRY(get_string(spec, "content", &step->content));
    bool is_regex = false;
    MAGNETAR_TRY(get_pattern(spec, &step->text, &is_regex));
    step->kind = is_regex ? Step::Kind::ReplaceRegex : Step::Kind::ReplaceString;
    if (is_regex) MAGNETAR_TRY(step->regex.compile(step->text));
  } else if (type == "Lowercase") {
    step->kind = Step::Kind::Lowercase;
  } else if (type == "Strip") {
    step->kind = Step::Kind::Strip;
    MAGNETAR_TRY(get_bool(spec, "strip_left", true, &step->strip_left));
    MAGNETAR_TRY(get_bool(spec, "strip_right", true, &step->strip_right));
  } else {
    return unsupported_component("normalizer", type);
  }
  steps_.push_back(std::move(step));
  return Status::ok();
}

Status Normalizer::apply(std::string* text) const {
  for (const auto& step : steps_) {
    switch (step->kind) {
      case Step::Kind::Unicode: MAGNETAR_TRY(apply_unicode_form(step->unicode_options, text)); break;
      case Step::Kind::Prepend:
        if (!text->empty()) text->insert(0, step->text);
        break;
      case Step::Kind::ReplaceString: replace_all(text, step->text, step->content); break;
      case Step::Kind::ReplaceRegex: {
        std::vector<std::pair<size_t, size_t>> matches;
        MAGNETAR_TRY(step->regex.find_all(*text, &matches));
        if (matches.empty()) break;
        std::string out;
        size_t pos = 0;
        for (auto [b, e] : matches) {
          out.append(*text, pos, b - pos);
          out += step->content;
          pos = e;
        }
        out.append(*text, pos, std::string::npos);
        text->swap(out);
        break;
      }
      case Step::Kind::Lowercase: lowercase(text); break;
      case Step::Kind::Strip: strip(text, step->strip_left, step->strip_right); break;
    }
  }
  return Status::ok();
}

}  // namespace magnetar::tok
