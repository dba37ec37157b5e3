// tokenizer.json pre-tokenizers: see hf_pre_tokenizer.h.
#include "tokenizer/hf_pre_tokenizer.h"

#include <nlohmann/json.hpp>

#include "tokenizer/hf_json.h"
#include "tokenizer/unicode_regex.h"

namespace magnetar::tok {

using nlohmann::json;

namespace {

// GPT-2's pattern, used by ByteLevel when use_regex is true.
constexpr const char kGpt2Pattern[] =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

enum class Behavior { Removed, Isolated, MergedWithPrevious, MergedWithNext, Contiguous };

Status parse_behavior(const std::string& name, Behavior* out) {
  if (name == "Removed") *out = Behavior::Removed;
  else if (name == "Isolated") *out = Behavior::Isolated;
  else if (name == "MergedWithPrevious") *out = Behavior::MergedWithPrevious;
  else if (name == "MergedWithNext") *out = Behavior::MergedWithNext;
  else if (name == "Contiguous") *out = Behavior::Contiguous;
  else return Status::error("split behavior \"" + name.substr(0, 40) + "\" is not supported");
  return Status::ok();
}

struct Segment {
  uint32_t begin, end;
  bool is_match;
};

// Hugging Face's SplitDelimiterBehavior applied to one word's alternating segments.
void split_by_behavior(const std::vector<Segment>& segs, Behavior behavior,
                       std::vector<std::pair<uint32_t, uint32_t>>* out) {
  switch (behavior) {
    case Behavior::Removed:
      for (const Segment& s : segs)
        if (!s.is_match) out->emplace_back(s.begin, s.end);
      return;
    case Behavior::Isolated:
      for (const Segment& s : segs) out->emplace_back(s.begin, s.end);
      return;
    case Behavior::MergedWithPrevious: {
      const size_t first = out->size();
      bool previous_match = false;
      for (const Segment& s : segs) {
        if (s.is_match && !previous_match && out->size() > first) out->back().second = s.end;
        else out->emplace_back(s.begin, s.end);
        previous_match = s.is_match;
      }
      return;
    }
    case Behavior::MergedWithNext: {
      std::vector<std::pair<uint32_t, uint32_t>> reversed;
      bool previous_match = false;
      for (size_t i = segs.size(); i-- > 0;) {
        const Segment& s = segs[i];
        if (s.is_match && !previous_match && !reversed.empty()) reversed.back().first = s.begin;
        else reversed.emplace_back(s.begin, s.end);
        previous_match = s.is_match;
      }
      out->insert(out->end(), reversed.rbegin(), reversed.rend());
      return;
    }
    case Behavior::Contiguous: {
      const size_t first = out->size();
      bool previous_match = false;
      for (const Segment& s : segs) {
        if (s.is_match == previous_match && out->size() > first) out->back().second = s.end;
        else out->emplace_back(s.begin, s.end);
        previous_match = s.is_match;
      }
      return;
    }
  }
}

}  // namespace

struct PreTokenizer::Step {
  enum class Kind { Split, PrefixSpace, Metaspace } kind = Kind::Split;
  // Split: by regex, or by a literal string when `literal` is set.
  UnicodeRegex regex;
  std::string literal;
  bool is_literal = false;
  Behavior behavior = Behavior::Isolated;
  bool invert = false;
  // Metaspace.
  std::string replacement;
  enum class Prepend { Always, First, Never } prepend = Prepend::Always;
  bool metaspace_split = true;

  Status find_matches(std::string_view word, std::vector<std::pair<size_t, size_t>>* out) const {
    if (!is_literal) return regex.find_all(word, out);
    if (literal.empty()) return Status::ok();
    for (size_t at = word.find(literal); at != std::string_view::npos; at = word.find(literal, at + literal.size()))
      out->emplace_back(at, at + literal.size());
    return Status::ok();
  }

  Status split(Words* w) const {
    std::vector<std::pair<uint32_t, uint32_t>> next;
    next.reserve(w->spans.size() * 2);
    std::vector<std::pair<size_t, size_t>> matches;
    std::vector<Segment> segs;
    for (auto [begin, end] : w->spans) {
      matches.clear();
      segs.clear();
      MAGNETAR_TRY(find_matches(std::string_view(w->text).substr(begin, end - begin), &matches));
      uint32_t pos = begin;
      for (auto [mb, me] : matches) {
        const uint32_t b = begin + uint32_t(mb), e = begin + uint32_t(me);
        if (b > pos) segs.push_back({pos, b, invert});
        segs.push_back({b, e, !invert});
        pos = e;
      }
      if (pos < end) segs.push_back({pos, end, invert});
      split_by_behavior(segs, behavior, &next);
    }
    w->spans.swap(next);
    return Status::ok();
  }

  // Rebuilds the text with `edit(word, is_first_word, out)` applied to every word.
  template <typename Edit>
  static void rewrite(Words* w, Edit edit) {
    std::string text;
    text.reserve(w->text.size() + w->spans.size() * 3);
    std::vector<std::pair<uint32_t, uint32_t>> spans;
    spans.reserve(w->spans.size());
    for (size_t i = 0; i < w->spans.size(); ++i) {
      auto [b, e] = w->spans[i];
      const uint32_t start = uint32_t(text.size());
      edit(std::string_view(w->text).substr(b, e - b), i, &text);
      spans.emplace_back(start, uint32_t(text.size()));
    }
    w->text.swap(text);
    w->spans.swap(spans);
  }

  Status apply(Words* w, bool at_text_start) const {
    switch (kind) {
      case Kind::Split: return split(w);
      case Kind::PrefixSpace:
        rewrite(w, [](std::string_view word, size_t, std::string* out) {
          if (word.empty() || word[0] != ' ') out->push_back(' ');
          out->append(word);
        });
        return Status::ok();
      case Kind::Metaspace: {
        rewrite(w, [&](std::string_view word, size_t index, std::string* out) {
          const bool add = prepend == Prepend::Always ||
                           (prepend == Prepend::First && index == 0 && at_text_start);
          if (add && word.substr(0, replacement.size()) != replacement &&
              !(word.size() > 0 && word[0] == ' '))
            out->append(replacement);
          for (char c : word) {
            if (c == ' ') out->append(replacement);
            else out->push_back(c);
          }
        });
        if (!metaspace_split) return Status::ok();
        Step splitter;
        splitter.is_literal = true;
        splitter.literal = replacement;
        splitter.behavior = Behavior::MergedWithNext;
        return splitter.split(w);
      }
    }
    return Status::ok();
  }
};

PreTokenizer::PreTokenizer() = default;
PreTokenizer::~PreTokenizer() = default;
PreTokenizer::PreTokenizer(PreTokenizer&&) noexcept = default;
PreTokenizer& PreTokenizer::operator=(PreTokenizer&&) noexcept = default;

Status PreTokenizer::load(const json& spec) {
  steps_.clear();
  byte_level_ = false;
  if (spec.is_null()) return Status::ok();
  return add_components(spec, "pretokenizers", [this](const json& one, const std::string& type) {
           return add(one, type);
         }).with_context("pre_tokenizer");
}

Status PreTokenizer::add(const json& spec, const std::string& type) {
  if (byte_level_) return Status::error("ByteLevel must be the last pre-tokenizer");
  auto add_split = [&](std::string_view pattern, Behavior behavior, bool invert) -> Status {
    auto step = std::make_unique<Step>();
    MAGNETAR_TRY(step->regex.compile(pattern));
    step->behavior = behavior;
    step->invert = invert;
    steps_.push_back(std::move(step));
    return Status::ok();
  };
  if (type == "Split") {
    auto step = std::make_unique<Step>();
    std::string pattern, behavior;
    MAGNETAR_TRY(get_pattern(spec, &pattern, &step->is_literal));
    step->is_literal = !step->is_literal;
    if (step->is_literal) step->literal = pattern;
    else MAGNETAR_TRY(step->regex.compile(pattern));
    MAGNETAR_TRY(get_string(spec, "behavior", &behavior));
    MAGNETAR_TRY(parse_behavior(behavior, &step->behavior));
    MAGNETAR_TRY(get_bool(spec, "invert", false, &step->invert));
    steps_.push_back(std::move(step));
  } else if (type == "ByteLevel") {
    bool add_prefix_space = true, use_regex = true;
    MAGNETAR_TRY(get_bool(spec, "add_prefix_space", true, &add_prefix_space));
    MAGNETAR_TRY(get_bool(spec, "use_regex", true, &use_regex));
    if (add_prefix_space) {
      auto step = std::make_unique<Step>();
      step->kind = Step::Kind::PrefixSpace;
      steps_.push_back(std::move(step));
    }
    if (use_regex) MAGNETAR_TRY(add_split(kGpt2Pattern, Behavior::Isolated, false));
    byte_level_ = true;
  } else if (type == "Digits") {
    bool individual = false;
    MAGNETAR_TRY(get_bool(spec, "individual_digits", false, &individual));
    MAGNETAR_TRY(add_split(individual ? "\\p{N}" : "\\p{N}+",
                           individual ? Behavior::Isolated : Behavior::Contiguous, false));
  } else if (type == "Whitespace") {
    MAGNETAR_TRY(add_split("\\w+|[^\\w\\s]+", Behavior::Removed, true));
  } else if (type == "WhitespaceSplit") {
    MAGNETAR_TRY(add_split("\\s+", Behavior::Removed, false));
  } else if (type == "Metaspace") {
    auto step = std::make_unique<Step>();
    step->kind = Step::Kind::Metaspace;
    MAGNETAR_TRY(get_string(spec, "replacement", &step->replacement));
    if (step->replacement.empty()) return Status::error("Metaspace replacement is empty");
    std::string scheme;
    MAGNETAR_TRY(get_optional_string(spec, "prepend_scheme", &scheme));
    if (scheme.empty()) {  // files older than prepend_scheme: add_prefix_space decides
      bool add_prefix_space = true;
      MAGNETAR_TRY(get_bool(spec, "add_prefix_space", true, &add_prefix_space));
      scheme = add_prefix_space ? "always" : "never";
    }
    if (scheme == "always") step->prepend = Step::Prepend::Always;
    else if (scheme == "first") step->prepend = Step::Prepend::First;
    else if (scheme == "never") step->prepend = Step::Prepend::Never;
    else return Status::error("Metaspace prepend_scheme \"" + scheme.substr(0, 40) + "\" is not supported");
    MAGNETAR_TRY(get_bool(spec, "split", true, &step->metaspace_split));
    steps_.push_back(std::move(step));
  } else {
    return unsupported_component("pre-tokenizer", type);
  }
  return Status::ok();
}

Status PreTokenizer::apply(Words* w, bool at_text_start) const {
  w->spans.clear();
  if (!w->text.empty()) w->spans.emplace_back(0u, uint32_t(w->text.size()));
  for (const auto& step : steps_) MAGNETAR_TRY(step->apply(w, at_text_start));
  return Status::ok();
}

}  // namespace magnetar::tok
