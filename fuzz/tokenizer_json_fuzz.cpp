// libFuzzer target for tokenizer.json pipelines (engine/tokenizer/hf_*.cpp, bpe_model.cpp,
// added_tokens.cpp, unicode_regex.cpp): the input is a tokenizer.json, a NUL byte, then a text.
// When the JSON loads, the text is encoded three ways (plain, with special tokens, as a chat
// prompt whose first half is message content), decoded, and every id's streamed piece read, so
// AddressSanitizer sees any out-of-range access and a hang or blow-up shows as a timeout or an
// RSS failure. Built and run like the GGUF target (fuzz/CMakeLists.txt; CTest fuzz.tokenizer_json).
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "tokenizer/hf_tokenizer.h"

namespace {
volatile size_t g_sink;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t nul = input.find('\0');
  const std::string_view json = input.substr(0, nul);
  const std::string_view text = nul == std::string_view::npos ? std::string_view() : input.substr(nul + 1);
  magnetar::tok::HfTokenizer tok;
  if (!tok.load_files(json, "").is_ok()) return 0;
  std::vector<int> ids;
  size_t sum = 0;
  const magnetar::tok::ByteRanges content = {{0, text.size() / 2}};
  for (int mode = 0; mode < 3; ++mode) {
    if (!tok.encode(text, mode > 0, mode == 2 ? content : magnetar::tok::ByteRanges{}, &ids).is_ok()) continue;
    for (int id : ids) {
      if (id < 0 || id >= tok.vocab_size()) __builtin_trap();  // every id must be a real token
      sum += tok.piece_text(id).size() + tok.token(id).size();
    }
    sum += tok.decode(ids).size();
  }
  g_sink = sum;
  return 0;
}
