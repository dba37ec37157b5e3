// The pre-tokenizer of a tokenizer.json: Split (string or PCRE2 regex, with behavior and
// invert), ByteLevel (add_prefix_space, use_regex), Digits, Metaspace, Whitespace,
// WhitespaceSplit and Sequence. It cuts one normalized text into words for the BPE model.
// ByteLevel must be the last step: its byte→character mapping is folded into the BPE
// vocabulary (see bpe_model.h), so words stay raw UTF-8 bytes here.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::tok {

// A text and the words cut from it, as byte spans into `text`.
struct Words {
  std::string text;
  std::vector<std::pair<uint32_t, uint32_t>> spans;  // [begin, end), non-empty, in order
};

class PreTokenizer {
 public:
  PreTokenizer();
  ~PreTokenizer();
  PreTokenizer(PreTokenizer&&) noexcept;
  PreTokenizer& operator=(PreTokenizer&&) noexcept;

  Status load(const nlohmann::json& spec);  // null: the whole text is one word
  // True when the pipeline ends with ByteLevel: words are matched as bytes.
  bool byte_level() const { return byte_level_; }
  // Cuts `words->text` (one whole span on entry is set up here). `at_text_start`: this text
  // begins the input (Metaspace's prepend_scheme "first").
  Status apply(Words* words, bool at_text_start) const;

  struct Step;

 private:
  Status add(const nlohmann::json& spec, const std::string& type);  // one non-Sequence component
  std::vector<std::unique_ptr<Step>> steps_;
  bool byte_level_ = false;
};

}  // namespace magnetar::tok
