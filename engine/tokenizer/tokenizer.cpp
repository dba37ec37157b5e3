// The tokenizer interface over SentencePiece and tokenizer.json: see tokenizer.h.
#include "tokenizer/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <cstdio>

#include "tokenizer/hf_tokenizer.h"

namespace magnetar {

namespace {

// Ids of the USER_DEFINED pieces of a serialized ModelProto (the library does not expose piece
// types other than control/unknown/unused/byte). Reads ModelProto.pieces (field 1) and each
// SentencePiece's type (field 3, USER_DEFINED = 4); anything malformed ends the scan.
std::vector<int> user_defined_ids(std::string_view proto) {
  std::vector<int> ids;
  size_t pos = 0;
  const auto varint = [](std::string_view b, size_t* p, uint64_t* v) {
    *v = 0;
    for (int shift = 0; shift < 64 && *p < b.size(); shift += 7) {
      const auto c = static_cast<uint8_t>(b[(*p)++]);
      *v |= uint64_t(c & 0x7F) << shift;
      if (c < 0x80) return true;
    }
    return false;
  };
  const auto skip = [&](std::string_view b, size_t* p, uint64_t wire) {
    uint64_t v = 0;
    if (wire == 0) return varint(b, p, &v);
    if (wire == 1) return (*p += 8) <= b.size();
    if (wire == 5) return (*p += 4) <= b.size();
    if (wire == 2) return varint(b, p, &v) && v <= b.size() - *p && ((*p += v), true);
    return false;
  };
  int index = 0;
  while (pos < proto.size()) {
    uint64_t key = 0, len = 0;
    if (!varint(proto, &pos, &key)) break;
    if ((key >> 3) != 1 || (key & 7) != 2) {
      if (!skip(proto, &pos, key & 7)) break;
      continue;
    }
    if (!varint(proto, &pos, &len) || len > proto.size() - pos) break;
    const std::string_view piece = proto.substr(pos, len);
    pos += len;
    for (size_t p = 0; p < piece.size();) {
      uint64_t k = 0, v = 0;
      if (!varint(piece, &p, &k)) break;
      if ((k >> 3) == 3 && (k & 7) == 0) {
        if (varint(piece, &p, &v) && v == 4) ids.push_back(index);
        break;
      }
      if (!skip(piece, &p, k & 7)) break;
    }
    ++index;
  }
  return ids;
}

// SentencePiece's encoder keeps several hundred bytes of state per input byte: a 2 MB paste
// cost 734 MB. Long texts are encoded in chunks cut where the encoding cannot change (see
// next_chunk_end); shorter texts go through whole, as before.
constexpr size_t kSentencePieceChunk = 32 * 1024;

// A token's text when streamed: '▁' becomes a space, byte tokens their raw byte, controls nothing.
std::string compute_piece_text(const sentencepiece::SentencePieceProcessor& sp, int id) {
  if (sp.IsControl(id)) return "";
  std::string piece = sp.IdToPiece(id);
  if (sp.IsByte(id) && piece.size() == 6 && piece.rfind("<0x", 0) == 0) {
    return std::string(1, static_cast<char>(std::stoi(piece.substr(3, 2), nullptr, 16)));
  }
  std::string out;
  out.reserve(piece.size());
  for (size_t i = 0; i < piece.size();) {
    if (piece.compare(i, 3, "\xe2\x96\x81") == 0) {  // U+2581 '▁' marks a space
      out += ' ';
      i += 3;
    } else {
      out += piece[i++];
    }
  }
  return out;
}

// SentencePiece splits words before each space: a single space between two non-space bytes
// starts a new word, so the text can be cut there. Returns text.size() when no such place
// follows `from` (one huge word stays whole).
size_t next_chunk_end(std::string_view text, size_t from) {
  for (size_t i = std::max<size_t>(from, 1); i + 1 < text.size(); ++i)
    if (text[i] == ' ' && text[i - 1] != ' ' && text[i + 1] != ' ') return i;
  return text.size();
}

}  // namespace

const char* tokenizer_kind_name(TokenizerKind kind) {
  switch (kind) {
    case TokenizerKind::SentencePiece: return "SentencePiece";
    case TokenizerKind::HuggingFace: return "tokenizer.json (BPE)";
  }
  return "unknown";
}

Tokenizer::Tokenizer() = default;
Tokenizer::~Tokenizer() = default;

Status Tokenizer::load(TokenizerKind kind, std::string_view bytes) {
  kind_ = kind;
  sp_.reset();
  hf_.reset();
  specials_.clear();
  piece_text_bytes_.clear();
  piece_text_offsets_.clear();
  switch (kind) {
    case TokenizerKind::SentencePiece: return load_sentencepiece(bytes);
    case TokenizerKind::HuggingFace: {
      auto hf = std::make_unique<tok::HfTokenizer>();
      MAGNETAR_TRY(hf->load_stored(bytes).with_context("tokenizer"));
      adds_dummy_prefix_ = hf->strips_leading_space();
      hf_ = std::move(hf);
      return Status::ok();
    }
  }
  return Status::error("tokenizer: unknown tokenizer kind " + std::to_string(uint32_t(kind)));
}

Status Tokenizer::load_tokenizer_json(std::string_view tokenizer_json, std::string_view tokenizer_config) {
  sp_.reset();
  specials_.clear();
  auto hf = std::make_unique<tok::HfTokenizer>();
  MAGNETAR_TRY(hf->load_files(tokenizer_json, tokenizer_config));
  kind_ = TokenizerKind::HuggingFace;
  adds_dummy_prefix_ = hf->strips_leading_space();
  hf_ = std::move(hf);
  return Status::ok();
}

Status Tokenizer::load_sentencepiece(std::string_view proto) {
  sp_ = std::make_unique<sentencepiece::SentencePieceProcessor>();
  auto status = sp_->LoadFromSerializedProto(proto);
  if (!status.ok()) {
    sp_.reset();
    return Status::error("tokenizer: " + status.ToString());
  }
  for (int id = 0; id < sp_->GetPieceSize(); ++id) {
    // User-defined pieces are matched by SentencePiece itself; control pieces never are.
    if (!sp_->IsControl(id)) continue;
    std::string piece = sp_->IdToPiece(id);
    if (!piece.empty()) specials_.emplace_back(piece, id);
  }
  sp_user_defined_ = user_defined_ids(proto);
  std::sort(specials_.begin(), specials_.end(),
            [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  // Two passes (sizes, then bytes) so the packed buffer is allocated once at its final size.
  const int n_pieces = sp_->GetPieceSize();
  piece_text_offsets_.assign(static_cast<size_t>(n_pieces) + 1, 0);
  uint64_t total = 0;
  for (int id = 0; id < n_pieces; ++id) {
    total += compute_piece_text(*sp_, id).size();
    if (total > UINT32_MAX) return Status::error("tokenizer: vocabulary text too large");
    piece_text_offsets_[static_cast<size_t>(id) + 1] = static_cast<uint32_t>(total);
  }
  piece_text_bytes_.reserve(total);
  for (int id = 0; id < n_pieces; ++id) piece_text_bytes_ += compute_piece_text(*sp_, id);
  // The normalizer spec is not exposed by the library: probe it instead.
  std::vector<std::string> pieces;
  adds_dummy_prefix_ = sp_->Encode("a", &pieces).ok() && !pieces.empty() &&
                       pieces[0].rfind("\xe2\x96\x81", 0) == 0;
  std::vector<int> one, two;
  sp_collapses_spaces_ = !sp_->Encode("a b", &one).ok() || !sp_->Encode("a  b", &two).ok() || one == two;
  return Status::ok();
}

int Tokenizer::vocab_size() const {
  if (hf_) return hf_->vocab_size();
  return sp_ ? sp_->GetPieceSize() : 0;
}

Status Tokenizer::encode_sentencepiece(std::string_view text, std::vector<int>* out,
                                       const ContentRanges* contents, size_t offset) const {
  std::vector<int> ids;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.size();
    if (!sp_collapses_spaces_ && text.size() - start > kSentencePieceChunk)
      end = next_chunk_end(text, start + kSentencePieceChunk);
    std::string_view chunk = text.substr(start, end - start);
    size_t chunk_offset = offset + start;
    // A later chunk starts with the space SentencePiece's dummy prefix stands for.
    if (start > 0 && adds_dummy_prefix_) chunk.remove_prefix(1), ++chunk_offset;
    const auto in_contents = [&](size_t b, size_t e) {
      for (const auto& [cb, ce] : *contents)
        if (cb < e && b < ce) return true;
      return false;
    };
    if (contents && !sp_user_defined_.empty() && in_contents(chunk_offset, chunk_offset + chunk.size())) {
      // Offsets of each piece, to find the user-defined ones a message typed.
      const sentencepiece::ImmutableSentencePieceText spt = sp_->EncodeAsImmutableProto(chunk);
      for (const auto& piece : spt.pieces()) {
        const int id = static_cast<int>(piece.id());
        if (std::binary_search(sp_user_defined_.begin(), sp_user_defined_.end(), id) &&
            in_contents(chunk_offset + piece.begin(), chunk_offset + piece.end()))
          append_as_characters(piece.surface(), out);
        else
          out->push_back(id);
      }
    } else {
      auto status = sp_->Encode(chunk, &ids);
      if (!status.ok()) return Status::error("tokenizer: " + status.ToString());
      out->insert(out->end(), ids.begin(), ids.end());
    }
    start = end;
  }
  return Status::ok();
}

void Tokenizer::append_as_characters(std::string_view text, std::vector<int>* out) const {
  const int unk = sp_->unk_id();
  for (size_t pos = 0; pos < text.size();) {
    size_t len = 1;
    const auto lead = static_cast<unsigned char>(text[pos]);
    if (lead >= 0xF0) len = 4;
    else if (lead >= 0xE0) len = 3;
    else if (lead >= 0xC0) len = 2;
    len = std::min(len, text.size() - pos);
    const std::string ch(text.substr(pos, len));
    const int id = sp_->PieceToId(ch);
    if (id != unk || ch == sp_->IdToPiece(unk)) {
      out->push_back(id);
    } else {  // byte fallback pieces, else unknown
      for (char byte : ch) {
        char name[8];
        std::snprintf(name, sizeof name, "<0x%02X>", static_cast<unsigned char>(byte));
        out->push_back(sp_->PieceToId(name));
      }
    }
    pos += len;
  }
}

Status Tokenizer::encode(std::string_view text, std::vector<int>* out) const {
  out->clear();
  if (hf_) return hf_->encode(text, false, {}, out);
  if (!sp_) return Status::error("tokenizer: not loaded");
  return encode_sentencepiece(text, out);
}

Status Tokenizer::encode_sentencepiece_split(std::string_view text, bool allow_special,
                                             const ContentRanges& contents, std::vector<int>* out) const {
  out->clear();
  if (!sp_) return Status::error("tokenizer: not loaded");
  auto in_contents = [&](size_t begin, size_t end) {
    for (const auto& [b, e] : contents)
      if (b < end && begin < e) return true;
    return false;
  };
  size_t start = 0, pos = 0;
  std::vector<int> piece_ids;
  auto flush_text = [&](size_t end) -> Status {
    if (end > start) {
      piece_ids.clear();
      MAGNETAR_TRY(encode_sentencepiece(text.substr(start, end - start), &piece_ids, &contents, start));
      out->insert(out->end(), piece_ids.begin(), piece_ids.end());
    }
    return Status::ok();
  };
  while (pos < text.size() && allow_special) {
    bool matched = false;
    if (text[pos] == '<') {
      for (const auto& [piece, id] : specials_) {
        if (text.compare(pos, piece.size(), piece) == 0 && !in_contents(pos, pos + piece.size())) {
          MAGNETAR_TRY(flush_text(pos));
          out->push_back(id);
          pos += piece.size();
          start = pos;
          matched = true;
          break;
        }
      }
    }
    if (!matched) ++pos;
  }
  return flush_text(text.size());
}

Status Tokenizer::encode_with_special(std::string_view text, std::vector<int>* out) const {
  if (hf_) {
    out->clear();
    return hf_->encode(text, true, {}, out);
  }
  return encode_sentencepiece_split(text, true, {}, out);
}

Status Tokenizer::encode_chat_prompt(std::string_view text, const ContentRanges& message_contents,
                                     std::vector<int>* out) const {
  if (hf_) {
    out->clear();
    return hf_->encode(text, true, message_contents, out);
  }
  return encode_sentencepiece_split(text, true, message_contents, out);
}

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  if (hf_) return hf_->decode(ids);
  if (!sp_) return "";
  std::vector<int> valid;
  valid.reserve(ids.size());
  for (int id : ids)
    if (id >= 0 && id < sp_->GetPieceSize() && !sp_->IsControl(id)) valid.push_back(id);
  std::string text;
  sp_->Decode(valid, &text).IgnoreError();
  return text;
}

std::string_view Tokenizer::piece_text(int id) const {
  if (hf_) return hf_->piece_text(id);
  if (id < 0 || static_cast<size_t>(id) + 1 >= piece_text_offsets_.size()) return {};
  return std::string_view(piece_text_bytes_)
      .substr(piece_text_offsets_[id], piece_text_offsets_[id + 1] - piece_text_offsets_[id]);
}

std::string Tokenizer::piece_string(int id) const {
  if (hf_) return hf_->token(id);
  if (!sp_ || id < 0 || id >= sp_->GetPieceSize()) return "";
  return sp_->IdToPiece(id);
}

int Tokenizer::piece_to_id(std::string_view piece) const {
  if (hf_) return hf_->token_to_id(piece);
  if (!sp_) return -1;
  int id = sp_->PieceToId(piece);
  if (id == sp_->unk_id() && piece != sp_->IdToPiece(sp_->unk_id())) return -1;
  return id;
}

bool Tokenizer::is_special(int id) const {
  if (hf_) return hf_->is_special(id);
  return sp_ && id >= 0 && id < sp_->GetPieceSize() && sp_->IsControl(id);
}

std::vector<int> Tokenizer::added_prefix_ids() const { return hf_ ? hf_->prefix_ids() : std::vector<int>{}; }

}  // namespace magnetar
