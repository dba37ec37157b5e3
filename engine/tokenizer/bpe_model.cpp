// tokenizer.json BPE model: see bpe_model.h.
#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <queue>

#include "tokenizer/byte_level.h"
#include "tokenizer/hf_json.h"
#include "tokenizer/utf8.h"

namespace magnetar::tok {

using nlohmann::json;

namespace {

constexpr size_t kMaxVocab = size_t(1) << 24;  // 16 M tokens: far above any real vocabulary

std::string byte_fallback_token(int b) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
  return buf;
}

}  // namespace

void BpeModel::MergeTable::reserve(size_t n) {
  size_t capacity = 16;
  while (capacity < n * 2) capacity *= 2;  // at most half full
  slots_.assign(capacity, Slot{});
  size_ = 0;
}

void BpeModel::MergeTable::insert(uint64_t key, Merge merge) {
  if ((size_ + 1) * 2 > slots_.size()) {  // grow: re-insert everything
    std::vector<Slot> old;
    old.swap(slots_);
    reserve(std::max<size_t>(size_ + 1, old.size()));
    for (const Slot& s : old)
      if (s.key != kEmpty) insert(s.key, s.merge);
  }
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
    if (slots_[i].key == key) {
      slots_[i].merge = merge;
      return;
    }
    if (slots_[i].key == kEmpty) {
      slots_[i] = Slot{key, merge};
      ++size_;
      return;
    }
  }
}

const BpeModel::Merge* BpeModel::MergeTable::find(uint64_t key) const {
  if (slots_.empty()) return nullptr;
  const size_t mask = slots_.size() - 1;
  for (size_t i = hash(key) & mask;; i = (i + 1) & mask) {
    if (slots_[i].key == key) return &slots_[i].merge;
    if (slots_[i].key == kEmpty) return nullptr;
  }
}

Status BpeModel::load(const json& spec, bool byte_level) {
  std::string type;
  MAGNETAR_TRY(component_type(spec, &type).with_context("model"));
  if (type != "BPE") return unsupported_component("model", type);
  byte_level_ = byte_level;
  if (auto d = spec.find("dropout"); d != spec.end() && !d->is_null() &&
                                     !(d->is_number() && d->get<double>() == 0.0))
    return Status::error("model: BPE dropout is not supported (encoding would be random)");
  MAGNETAR_TRY(get_bool(spec, "ignore_merges", false, &ignore_merges_).with_context("model"));
  MAGNETAR_TRY(get_bool(spec, "byte_fallback", false, &byte_fallback_).with_context("model"));
  MAGNETAR_TRY(get_bool(spec, "fuse_unk", false, &fuse_unk_).with_context("model"));
  MAGNETAR_TRY(get_optional_string(spec, "continuing_subword_prefix", &prefix_).with_context("model"));
  MAGNETAR_TRY(get_optional_string(spec, "end_of_word_suffix", &suffix_).with_context("model"));
  if (byte_level_ && (!prefix_.empty() || !suffix_.empty()))
    return Status::error("model: continuing_subword_prefix/end_of_word_suffix with a ByteLevel "
                         "pre-tokenizer is not supported");

  auto v = spec.find("vocab");
  if (v == spec.end() || !v->is_object()) return Status::error("model: \"vocab\" must be an object");
  if (v->size() > kMaxVocab) return Status::error("model: vocabulary too large");
  vocab_.clear();
  vocab_.reserve(v->size());
  int max_id = -1;
  for (auto it = v->begin(); it != v->end(); ++it) {
    if (!it.value().is_number_integer() || it.value().get<int64_t>() < 0 ||
        it.value().get<int64_t>() >= int64_t(kMaxVocab))
      return Status::error("model: vocab id of \"" + it.key().substr(0, 40) + "\" is not a valid id");
    const int id = int(it.value().get<int64_t>());
    vocab_[it.key()] = id;
    max_id = std::max(max_id, id);
  }
  id_to_token_.assign(size_t(max_id + 1), std::string());
  for (const auto& [token, id] : vocab_) {
    if (!id_to_token_[size_t(id)].empty())
      return Status::error("model: vocab id " + std::to_string(id) + " is given to two tokens");
    id_to_token_[size_t(id)] = token;
  }

  unk_id_ = -1;
  std::string unk;
  MAGNETAR_TRY(get_optional_string(spec, "unk_token", &unk).with_context("model"));
  if (!unk.empty()) {
    auto it = vocab_.find(unk);
    if (it == vocab_.end()) return Status::error("model: unk_token \"" + unk.substr(0, 40) + "\" is not in the vocabulary");
    unk_id_ = it->second;
  }

  for (int c = 0; c < 128; ++c) {
    const char ch = static_cast<char>(c);
    auto it = vocab_.find(std::string_view(&ch, 1));
    ascii_ids_[c] = it == vocab_.end() ? -1 : it->second;
  }
  for (int b = 0; b < 256; ++b) {
    auto it = vocab_.find(byte_fallback_token(b));
    fallback_ids_[b] = it == vocab_.end() ? -1 : it->second;
  }
  byte_vocab_.clear();
  if (byte_level_) {
    byte_vocab_.reserve(vocab_.size());
    std::string bytes;
    for (const auto& [token, id] : vocab_)
      if (unmap_byte_level(token, &bytes)) byte_vocab_.emplace(bytes, id);
    for (int b = 0; b < 256; ++b) {
      const char byte = static_cast<char>(b);
      auto it = byte_vocab_.find(std::string_view(&byte, 1));
      if (it == byte_vocab_.end())
        return Status::error("model: byte-level vocabulary has no token for byte " + std::to_string(b));
      byte_ids_[b] = it->second;
    }
  }
  auto m = spec.find("merges");
  if (m == spec.end() || m->is_null()) {
    merges_.clear();
    return Status::ok();
  }
  return load_merges(*m).with_context("model merges");
}

Status BpeModel::load_merges(const json& merges) {
  if (!merges.is_array()) return Status::error("must be a list");
  merges_.clear();
  merges_.reserve(merges.size());
  std::string a, b;
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const json& m = merges[rank];
    if (m.is_string()) {  // "a b"
      const std::string& s = m.get_ref<const std::string&>();
      const size_t space = s.find(' ');
      if (space == std::string::npos || s.find(' ', space + 1) != std::string::npos)
        return Status::error("merge " + std::to_string(rank) + " \"" + s.substr(0, 40) + "\" is not \"a b\"");
      a = s.substr(0, space);
      b = s.substr(space + 1);
    } else if (m.is_array() && m.size() == 2 && m[0].is_string() && m[1].is_string()) {
      a = m[0].get<std::string>();
      b = m[1].get<std::string>();
    } else {
      return Status::error("merge " + std::to_string(rank) + " is neither \"a b\" nor [a, b]");
    }
    auto ia = vocab_.find(a), ib = vocab_.find(b);
    if (ia == vocab_.end() || ib == vocab_.end())
      return Status::error("merge " + std::to_string(rank) + " uses a token missing from the vocabulary");
    // As Hugging Face: the merged token drops b's continuing-subword prefix.
    const std::string merged = a + (b.size() >= prefix_.size() ? b.substr(prefix_.size()) : b);
    auto im = vocab_.find(merged);
    if (im == vocab_.end())
      return Status::error("merge " + std::to_string(rank) + " makes a token missing from the vocabulary");
    merges_.insert(pair_key(ia->second, ib->second), Merge{int(rank), im->second});
  }
  return Status::ok();
}

void BpeModel::initial_symbols(std::string_view word, std::vector<int>* ids) const {
  ids->clear();
  if (byte_level_) {
    for (unsigned char c : word) ids->push_back(byte_ids_[c]);
    return;
  }
  bool previous_unknown = false;
  std::string decorated;
  for (size_t i = 0; i < word.size();) {
    size_t n = utf8_valid_length(word, i);
    if (n == 0) n = 1;  // the pipeline repairs input first; stay safe regardless
    std::string_view ch = word.substr(i, n);
    const bool first = i == 0, last = i + n == word.size();
    const bool plain = (first || prefix_.empty()) && (!last || suffix_.empty());
    if (plain && n == 1 && ascii_ids_[static_cast<unsigned char>(ch[0]) & 0x7F] >= 0 &&
        static_cast<unsigned char>(ch[0]) < 0x80) {
      ids->push_back(ascii_ids_[static_cast<unsigned char>(ch[0])]);
      previous_unknown = false;
      ++i;
      continue;
    }
    TokenMap::const_iterator it;
    if (plain) {
      it = vocab_.find(ch);
    } else {
      decorated.assign(first ? "" : prefix_).append(ch).append(last ? suffix_ : "");
      it = vocab_.find(decorated);
    }
    i += n;
    if (it != vocab_.end()) {
      ids->push_back(it->second);
      previous_unknown = false;
      continue;
    }
    if (byte_fallback_) {
      bool all = true;
      for (unsigned char c : ch) all = all && fallback_ids_[c] >= 0;
      if (all) {
        for (unsigned char c : ch) ids->push_back(fallback_ids_[c]);
        previous_unknown = false;
        continue;
      }
    }
    if (unk_id_ < 0) continue;  // no unk token: Hugging Face drops the character
    if (!(fuse_unk_ && previous_unknown)) ids->push_back(unk_id_);
    previous_unknown = true;
  }
}

void BpeModel::merge(std::vector<int>* ids) const {
  const int n = int(ids->size());
  if (n < 2 || merges_.empty()) return;
  struct Symbol {
    int id, prev, next;
  };
  struct Candidate {
    int rank, pos, merged_id, left, right;  // left/right: the pair's ids when it was found
    bool operator>(const Candidate& o) const { return rank != o.rank ? rank > o.rank : pos > o.pos; }
  };
  std::vector<Symbol> sym(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) sym[size_t(i)] = {(*ids)[size_t(i)], i - 1, i + 1 < n ? i + 1 : -1};
  std::vector<Candidate> heap_storage;
  heap_storage.reserve(size_t(n));
  std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap(std::greater<>{},
                                                                              std::move(heap_storage));
  auto consider = [&](int pos) {
    const int next = sym[size_t(pos)].next;
    if (next < 0) return;
    const int left = sym[size_t(pos)].id, right = sym[size_t(next)].id;
    if (const Merge* m = merges_.find(pair_key(left, right))) heap.push({m->rank, pos, m->merged_id, left, right});
  };
  for (int i = 0; i + 1 < n; ++i) consider(i);
  while (!heap.empty()) {
    const Candidate top = heap.top();
    heap.pop();
    Symbol& s = sym[size_t(top.pos)];
    if (s.id < 0 || s.next < 0) continue;  // merged away, or now the last symbol
    Symbol& right = sym[size_t(s.next)];
    if (s.id != top.left || right.id != top.right) continue;  // stale: a neighbour merged first
    s.id = top.merged_id;
    const int after = right.next;
    right.id = -1;
    s.next = after;
    if (after >= 0) sym[size_t(after)].prev = top.pos;
    if (s.prev >= 0) consider(s.prev);
    consider(top.pos);
  }
  ids->clear();
  for (int i = 0; i >= 0; i = sym[size_t(i)].next) ids->push_back(sym[size_t(i)].id);
}

void BpeModel::encode_word(std::string_view word, std::vector<int>* out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const TokenMap& whole = byte_level_ ? byte_vocab_ : vocab_;
    if (auto it = whole.find(word); it != whole.end()) {
      out->push_back(it->second);
      return;
    }
  }
  std::vector<int> ids;
  ids.reserve(word.size());
  initial_symbols(word, &ids);
  merge(&ids);
  out->insert(out->end(), ids.begin(), ids.end());
}

}  // namespace magnetar::tok
