// Added tokens of a tokenizer.json ("added_tokens": special or not, lstrip, rstrip,
// single_word, normalized): found in text leftmost-longest with a byte trie, as Hugging Face's
// AddedVocabulary does with Aho-Corasick. Tokens with normalized=true are matched in the
// normalized text of the pieces between the others.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::tok {

struct AddedToken {
  int id = -1;
  std::string content;
  bool special = false, lstrip = false, rstrip = false, single_word = false, normalized = false;
};

// One piece of a split text: either an added token (id >= 0) or text to encode.
struct TextPiece {
  size_t begin, end;  // byte range in the split text
  int id = -1;        // added token id, or -1 for ordinary text
};

// Byte ranges inside which special tokens are not recognised (chat message contents).
using ByteRanges = std::vector<std::pair<size_t, size_t>>;

class AddedTokenMatcher {
 public:
  // Builds the trie from `tokens` (those with `normalized == want_normalized`).
  void build(const std::vector<AddedToken>& tokens, bool want_normalized);
  bool empty() const { return nodes_.size() <= 1; }
  // Splits `text` into pieces. `allow_special`: false turns off special tokens everywhere;
  // `content` (sorted, may be empty): no special token is matched that overlaps one of them.
  // Non-special added tokens are matched everywhere.
  void split(std::string_view text, bool allow_special, const ByteRanges& content,
             std::vector<TextPiece>* out) const;

 private:
  struct Node {
    std::vector<std::pair<uint8_t, int32_t>> children;  // sorted by byte
    int32_t token = -1;                                 // index into tokens_
  };
  int32_t child(int32_t node, uint8_t byte) const;
  // The longest token starting at `pos` that may be used there; its index or -1 and its end.
  int32_t match_at(std::string_view text, size_t pos, bool allow_special, const ByteRanges& content,
                   size_t* end) const;
  std::vector<Node> nodes_{1};
  std::vector<AddedToken> tokens_;
};

}  // namespace magnetar::tok
