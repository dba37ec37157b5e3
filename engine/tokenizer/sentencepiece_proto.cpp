// Hand-written protobuf encoding of sentencepiece_model.proto's ModelProto: see
// sentencepiece_proto.h. Field numbers (proto2):
//   ModelProto     { pieces = 1; trainer_spec = 2; normalizer_spec = 3; }
//   SentencePiece  { piece = 1 (string); score = 2 (float); type = 3 (enum); }
//   TrainerSpec    { model_type = 3; vocab_size = 4; split_digits = 25; byte_fallback = 35;
//                    unk_id = 40; bos_id = 41; eos_id = 42; pad_id = 43; unk_piece = 45;
//                    bos_piece = 46; eos_piece = 47; pad_piece = 48; }
//   NormalizerSpec { name = 1; add_dummy_prefix = 3; remove_extra_whitespaces = 4;
//                    escape_whitespaces = 5; }
#include "tokenizer/sentencepiece_proto.h"

#include <cstdint>
#include <cstring>
#include <set>

namespace magnetar::spm {

namespace {

enum WireType : uint32_t { kVarint = 0, kFixed32 = 5, kLengthDelimited = 2 };

void put_varint(std::string* out, uint64_t v) {
  while (v >= 0x80) {
    out->push_back(static_cast<char>((v & 0x7f) | 0x80));
    v >>= 7;
  }
  out->push_back(static_cast<char>(v));
}

void put_key(std::string* out, uint32_t field, WireType wire) {
  put_varint(out, (static_cast<uint64_t>(field) << 3) | wire);
}

// int32 fields are sign-extended to 64 bits on the wire (so -1 takes ten bytes).
void put_int(std::string* out, uint32_t field, int64_t v) {
  put_key(out, field, kVarint);
  put_varint(out, static_cast<uint64_t>(v));
}

void put_bytes(std::string* out, uint32_t field, const std::string& bytes) {
  put_key(out, field, kLengthDelimited);
  put_varint(out, bytes.size());
  out->append(bytes);
}

void put_float(std::string* out, uint32_t field, float f) {
  put_key(out, field, kFixed32);
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  for (int i = 0; i < 4; ++i) out->push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

// ModelProto field 1: one SentencePiece {piece, score, type}.
void put_piece(std::string* out, const VocabPiece& p) {
  std::string piece;
  put_bytes(&piece, 1, p.piece);
  put_float(&piece, 2, p.score);
  put_int(&piece, 3, static_cast<int>(p.type));
  put_bytes(out, 1, piece);
}

bool is_byte_piece(const std::string& p) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'F'); };
  return p.size() == 6 && p.compare(0, 3, "<0x") == 0 && hex(p[3]) && hex(p[4]) && p[5] == '>';
}

}  // namespace

Status build_sentencepiece_model(const ModelSpec& spec, std::string* out) {
  out->clear();
  const int n = static_cast<int>(spec.pieces.size());
  if (n == 0) return Status::error("sentencepiece model: no pieces");
  std::set<std::string> seen;
  bool has_bytes = false;
  int n_unknown = 0;
  for (int i = 0; i < n; ++i) {
    const VocabPiece& p = spec.pieces[i];
    if (p.piece.empty())
      return Status::error("sentencepiece model: piece " + std::to_string(i) + " is empty");
    if (!seen.insert(p.piece).second)
      return Status::error("sentencepiece model: piece " + std::to_string(i) + " \"" + p.piece +
                           "\" appears twice");
    has_bytes |= p.type == PieceType::Byte;
    n_unknown += p.type == PieceType::Unknown;
  }
  if (n_unknown != 1) return Status::error("sentencepiece model: needs exactly one unknown piece");
  auto check_special = [&](int id, PieceType type, const char* what) -> Status {
    if (id == -1) return Status::ok();
    if (id < 0 || id >= n || spec.pieces[id].type != type)
      return Status::error(std::string("sentencepiece model: ") + what + " id " +
                           std::to_string(id) + " is not a piece of the right type");
    return Status::ok();
  };
  MAGNETAR_TRY(check_special(spec.unk_id, PieceType::Unknown, "unk"));
  MAGNETAR_TRY(check_special(spec.bos_id, PieceType::Control, "bos"));
  MAGNETAR_TRY(check_special(spec.eos_id, PieceType::Control, "eos"));
  MAGNETAR_TRY(check_special(spec.pad_id, PieceType::Control, "pad"));
  if (spec.unk_id < 0) return Status::error("sentencepiece model: unk_id is required");

  for (const VocabPiece& p : spec.pieces) put_piece(out, p);

  std::string trainer;
  put_int(&trainer, 3, static_cast<int>(spec.model_type));
  put_int(&trainer, 4, n);
  put_int(&trainer, 25, spec.split_digits ? 1 : 0);
  put_int(&trainer, 35, has_bytes ? 1 : 0);
  put_int(&trainer, 40, spec.unk_id);
  put_int(&trainer, 41, spec.bos_id);
  put_int(&trainer, 42, spec.eos_id);
  put_int(&trainer, 43, spec.pad_id);
  // The processor finds bos/eos/pad by these piece names, not by the ids above.
  put_bytes(&trainer, 45, spec.pieces[spec.unk_id].piece);
  if (spec.bos_id >= 0) put_bytes(&trainer, 46, spec.pieces[spec.bos_id].piece);
  if (spec.eos_id >= 0) put_bytes(&trainer, 47, spec.pieces[spec.eos_id].piece);
  if (spec.pad_id >= 0) put_bytes(&trainer, 48, spec.pieces[spec.pad_id].piece);
  put_bytes(out, 2, trainer);

  std::string normalizer;
  put_bytes(&normalizer, 1, "identity");
  put_int(&normalizer, 3, spec.add_dummy_prefix ? 1 : 0);
  put_int(&normalizer, 4, spec.remove_extra_whitespaces ? 1 : 0);
  put_int(&normalizer, 5, spec.escape_whitespaces ? 1 : 0);
  put_bytes(out, 3, normalizer);
  return Status::ok();
}

void append_pieces(const std::vector<VocabPiece>& pieces, std::string* model_proto) {
  for (const VocabPiece& p : pieces) put_piece(model_proto, p);
}

Status llama2c_vocab_to_spec(const std::string& bytes, const std::string& origin, ModelSpec* out) {
  *out = ModelSpec{};
  auto read_u32 = [&](size_t pos, uint32_t* v) {
    if (pos + 4 > bytes.size()) return false;
    std::memcpy(v, bytes.data() + pos, 4);
    return true;
  };
  uint32_t max_len = 0;
  if (!read_u32(0, &max_len))
    return Status::error(origin + ": truncated: too short for a llama2.c tokenizer");
  size_t pos = 4;
  out->unk_id = out->bos_id = out->eos_id = -1;
  static const std::string kSpace = "\xe2\x96\x81";  // U+2581
  while (pos < bytes.size()) {
    uint32_t score_bits = 0, len = 0;
    if (!read_u32(pos, &score_bits) || !read_u32(pos + 4, &len))
      return Status::error(origin + ": truncated inside token " + std::to_string(out->pieces.size()));
    pos += 8;
    if (len > bytes.size() - pos || len > max_len || len == 0)
      return Status::error(origin + ": token " + std::to_string(out->pieces.size()) +
                           " has length " + std::to_string(len) + " (max_token_length " +
                           std::to_string(max_len) + ", or past the end of the file)");
    VocabPiece p;
    std::memcpy(&p.score, &score_bits, 4);
    std::string text = bytes.substr(pos, len);
    pos += len;
    const int id = static_cast<int>(out->pieces.size());
    if (text == "<unk>") {
      p.type = PieceType::Unknown;
      if (out->unk_id < 0) out->unk_id = id;
    } else if (text == "\n<s>\n" || text == "<s>") {
      p.type = PieceType::Control;
      text = "<s>";
      if (out->bos_id < 0) out->bos_id = id;
    } else if (text == "\n</s>\n" || text == "</s>") {
      p.type = PieceType::Control;
      text = "</s>";
      if (out->eos_id < 0) out->eos_id = id;
    } else if (is_byte_piece(text)) {
      p.type = PieceType::Byte;
    } else {
      std::string piece;
      for (char c : text) {
        if (c == ' ') piece += kSpace;
        else piece.push_back(c);
      }
      text = std::move(piece);
    }
    p.piece = std::move(text);
    out->pieces.push_back(std::move(p));
  }
  if (out->pieces.empty()) return Status::error(origin + ": no tokens");
  if (out->unk_id < 0) return Status::error(origin + ": no <unk> token");
  return Status::ok();
}

}  // namespace magnetar::spm
