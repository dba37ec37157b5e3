// The decoder of a tokenizer.json: ByteLevel, ByteFallback, Fuse, Strip, Replace, Metaspace
// and Sequence, each working on the list of token texts as Hugging Face's decode_chain does.
// No decoder: tokens are joined with spaces, as Hugging Face does.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::tok {

class Decoder {
 public:
  Decoder();
  ~Decoder();
  Decoder(Decoder&&) noexcept;
  Decoder& operator=(Decoder&&) noexcept;

  Status load(const nlohmann::json& spec);  // null: no decoder
  // Whole-sequence decode: invalid UTF-8 becomes U+FFFD (Hugging Face's lossy conversion).
  std::string decode(std::vector<std::string> tokens) const;
  // One token's bytes when streamed in the middle of a text: byte tokens stay raw bytes (the
  // caller joins partial UTF-8), and rules that only apply at the start of a text are skipped.
  std::string token_bytes(const std::string& token) const;
  // True when decoding drops a leading space that an encoder prepended (Metaspace prepend,
  // Strip of a leading " ").
  bool strips_leading_space() const { return strips_leading_space_; }

  struct Step;

 private:
  Status add(const nlohmann::json& spec, const std::string& type);  // one non-Sequence component
  std::vector<std::string> run(std::vector<std::string> tokens, bool streaming) const;
  std::vector<std::unique_ptr<Step>> steps_;
  bool has_decoder_ = false;
  bool strips_leading_space_ = false;
};

}  // namespace magnetar::tok
