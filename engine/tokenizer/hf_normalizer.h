// The normalizer of a tokenizer.json (Hugging Face tokenizers): NFC/NFD/NFKC/NFKD (utf8proc),
// Prepend, Replace (string or regex), Lowercase, Strip and Sequence, flattened into a list of
// steps applied in order. Anything else is an error naming the component.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::tok {

class Normalizer {
 public:
  Normalizer();
  ~Normalizer();
  Normalizer(Normalizer&&) noexcept;
  Normalizer& operator=(Normalizer&&) noexcept;

  // `spec` is the "normalizer" value (null: no normalization).
  Status load(const nlohmann::json& spec);
  bool empty() const { return steps_.empty(); }
  // `text` must be valid UTF-8; so is the result.
  Status apply(std::string* text) const;

  struct Step;

 private:
  Status add(const nlohmann::json& spec, const std::string& type);  // one non-Sequence component
  std::vector<std::unique_ptr<Step>> steps_;
};

}  // namespace magnetar::tok
