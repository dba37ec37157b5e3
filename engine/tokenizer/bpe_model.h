// The BPE model of a tokenizer.json: vocabulary, merges ("a b" strings or [a, b] pairs) and the
// options that change encoding (ignore_merges, byte_fallback, unk_token + fuse_unk,
// continuing_subword_prefix, end_of_word_suffix). Merging uses a min-heap over (rank, position)
// and a linked list of symbols, O(n log n) per word, with the same tie-breaking as Hugging
// Face's Word::merge_all, so a 5,000-character word (Gemma 3) costs no more than its length.
//
// Byte-level vocabularies (GPT-2's byte→character mapping, used when the pre-tokenizer ends with
// ByteLevel) are re-keyed by the raw bytes each token stands for, so words are matched as bytes
// and never converted to the mapped characters.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::tok {

// Heterogeneous lookup: find(std::string_view) without building a std::string.
struct StringHash {
  using is_transparent = void;
  size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};
using TokenMap = std::unordered_map<std::string, int, StringHash, std::equal_to<>>;

class BpeModel {
 public:
  // `spec` is the "model" object; `byte_level`: words arrive as raw bytes (see above).
  Status load(const nlohmann::json& spec, bool byte_level);

  // Appends the ids of one pre-tokenized word. Memory: a few words of state per byte.
  void encode_word(std::string_view word, std::vector<int>* out) const;

  // The vocabulary as written in the file (mapped characters for byte-level models).
  const TokenMap& vocab() const { return vocab_; }
  const std::vector<std::string>& tokens_by_id() const { return id_to_token_; }

 private:
  struct Merge {
    int rank;
    int merged_id;
  };
  static uint64_t pair_key(int a, int b) { return (uint64_t(uint32_t(a)) << 32) | uint32_t(b); }
  // (left id, right id) → merge, open addressing in one array: a lookup is one cache miss, where
  // a node-based map costs several (the merge loop's main cost).
  class MergeTable {
   public:
    void clear() {
      slots_.clear();
      size_ = 0;
    }
    bool empty() const { return size_ == 0; }
    void reserve(size_t n);
    void insert(uint64_t key, Merge merge);  // an existing key is overwritten
    const Merge* find(uint64_t key) const;

   private:
    struct Slot {
      uint64_t key = kEmpty;
      Merge merge{};
    };
    static constexpr uint64_t kEmpty = ~uint64_t(0);  // ids are < 2^24: no real key is this
    static size_t hash(uint64_t key) { return size_t((key * 0x9E3779B97F4A7C15ull) >> 20); }
    std::vector<Slot> slots_;
    size_t size_ = 0;
  };
  Status load_merges(const nlohmann::json& merges);
  void initial_symbols(std::string_view word, std::vector<int>* ids) const;
  void merge(std::vector<int>* ids) const;

  TokenMap vocab_;                     // token text → id
  TokenMap byte_vocab_;                // byte-level: raw bytes → id
  std::vector<std::string> id_to_token_;
  MergeTable merges_;
  bool byte_level_ = false;
  bool ignore_merges_ = false;
  bool byte_fallback_ = false;
  bool fuse_unk_ = false;
  int unk_id_ = -1;
  std::string prefix_, suffix_;        // continuing_subword_prefix, end_of_word_suffix
  int byte_ids_[256];                  // byte-level: the token of each single byte
  int ascii_ids_[128];                 // character models: the token of each ASCII character (-1: none)
  int fallback_ids_[256];              // byte_fallback: "<0xAB>" tokens (-1: absent)
};

}  // namespace magnetar::tok
