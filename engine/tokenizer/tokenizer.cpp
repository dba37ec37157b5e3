// SentencePiece wrapper: see tokenizer.h.
#include "tokenizer/tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>

namespace magnetar {

namespace {

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

}  // namespace

Tokenizer::Tokenizer() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
Tokenizer::~Tokenizer() = default;

Status Tokenizer::load(std::string_view proto) {
  auto status = sp_->LoadFromSerializedProto(proto);
  if (!status.ok()) return Status::error("tokenizer: " + status.ToString());
  specials_.clear();
  for (int id = 0; id < sp_->GetPieceSize(); ++id) {
    // User-defined pieces are matched by SentencePiece itself; control pieces never are.
    if (!sp_->IsControl(id)) continue;
    std::string piece = sp_->IdToPiece(id);
    if (!piece.empty()) specials_.emplace_back(piece, id);
  }
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
  piece_text_bytes_.clear();
  piece_text_bytes_.reserve(total);
  for (int id = 0; id < n_pieces; ++id) piece_text_bytes_ += compute_piece_text(*sp_, id);
  // The normalizer spec is not exposed by the library: probe it instead.
  std::vector<std::string> pieces;
  adds_dummy_prefix_ = sp_->Encode("a", &pieces).ok() && !pieces.empty() &&
                       pieces[0].rfind("\xe2\x96\x81", 0) == 0;
  return Status::ok();
}

int Tokenizer::vocab_size() const { return sp_->GetPieceSize(); }

Status Tokenizer::encode(std::string_view text, std::vector<int>* out) const {
  out->clear();
  if (text.empty()) return Status::ok();
  auto status = sp_->Encode(text, out);
  if (!status.ok()) return Status::error("tokenizer: " + status.ToString());
  return Status::ok();
}

Status Tokenizer::encode_with_special(std::string_view text, std::vector<int>* out) const {
  return encode_with_special(text, {}, out);
}

Status Tokenizer::encode_with_special(std::string_view text, const std::vector<jinja::ByteRange>& plain_ranges,
                                      std::vector<int>* out) const {
  out->clear();
  size_t range = 0;  // the first plain range not yet behind pos
  size_t start = 0, pos = 0;
  std::vector<int> piece_ids;
  auto flush_text = [&](size_t end) -> Status {
    if (end > start) {
      MAGNETAR_TRY(encode(text.substr(start, end - start), &piece_ids));
      out->insert(out->end(), piece_ids.begin(), piece_ids.end());
    }
    return Status::ok();
  };
  while (pos < text.size()) {
    while (range < plain_ranges.size() && plain_ranges[range].end <= pos) ++range;
    const bool in_plain = range < plain_ranges.size() && plain_ranges[range].begin <= pos;
    // A match must also end before the next plain range starts.
    const size_t limit = range < plain_ranges.size() ? plain_ranges[range].begin : text.size();
    bool matched = false;
    if (text[pos] == '<' && !in_plain) {
      for (const auto& [piece, id] : specials_) {
        if (pos + piece.size() <= limit && text.compare(pos, piece.size(), piece) == 0) {
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

std::string Tokenizer::decode(const std::vector<int>& ids) const {
  std::vector<int> valid;
  valid.reserve(ids.size());
  for (int id : ids)
    if (id >= 0 && id < sp_->GetPieceSize() && !sp_->IsControl(id)) valid.push_back(id);
  std::string text;
  sp_->Decode(valid, &text).IgnoreError();
  return text;
}

std::string_view Tokenizer::piece_text(int id) const {
  if (id < 0 || static_cast<size_t>(id) + 1 >= piece_text_offsets_.size()) return {};
  return std::string_view(piece_text_bytes_)
      .substr(piece_text_offsets_[id], piece_text_offsets_[id + 1] - piece_text_offsets_[id]);
}


std::string Tokenizer::piece_string(int id) const {
  if (id < 0 || id >= sp_->GetPieceSize()) return "";
  return sp_->IdToPiece(id);
}

int Tokenizer::piece_to_id(std::string_view piece) const {
  int id = sp_->PieceToId(piece);
  if (id == sp_->unk_id() && piece != sp_->IdToPiece(sp_->unk_id())) return -1;
  return id;
}

bool Tokenizer::is_control(int id) const {
  return id >= 0 && id < sp_->GetPieceSize() && sp_->IsControl(id);
}

}  // namespace magnetar
