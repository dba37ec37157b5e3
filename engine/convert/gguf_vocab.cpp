// GGUF vocabulary → SentencePiece ModelSpec (see gguf_import.h). Kept apart from the planner so
// the fuzz target can exercise it with only the reader and the proto writer.
#include <cstdint>
#include <string>

#include "convert/gguf_import.h"

namespace magnetar::convert {
namespace {

// SentencePiece piece types; GGUF's token_type uses the same numbers.
bool piece_type_from_gguf(int64_t t, spm::PieceType* out) {
  if (t < 1 || t > 6) return false;
  *out = static_cast<spm::PieceType>(t);
  return true;
}

Status optional_id(const gguf::File& f, const std::string& key, int* id) {
  if (f.find(key) == nullptr) return Status::ok();
  uint32_t v = 0;
  MAGNETAR_TRY(f.get_u32(key, &v));
  if (v > uint32_t(INT32_MAX)) return Status::error(key + " is out of range");
  *id = int(v);
  return Status::ok();
}

}  // namespace

Status gguf_vocab_to_spec(const gguf::File& f, spm::ModelSpec* out) {
  *out = spm::ModelSpec{};
  std::string_view model;
  MAGNETAR_TRY(f.get_string("tokenizer.ggml.model", &model));
  if (model != "llama")
    return Status::error("GGUF tokenizer model \"" + std::string(model.substr(0, 40)) +
                         "\" is not supported (only SentencePiece vocabularies, tokenizer.ggml.model = llama)");
  std::vector<std::string_view> tokens;
  MAGNETAR_TRY(f.get_string_array("tokenizer.ggml.tokens", &tokens));
  if (tokens.empty()) return Status::error("GGUF tokenizer.ggml.tokens is empty");
  std::vector<float> scores(tokens.size(), 0.0f);
  if (f.find("tokenizer.ggml.scores") != nullptr) {
    MAGNETAR_TRY(f.get_f32_array("tokenizer.ggml.scores", &scores));
    if (scores.size() != tokens.size())
      return Status::error("GGUF tokenizer.ggml.scores has " + std::to_string(scores.size()) +
                           " entries for " + std::to_string(tokens.size()) + " tokens");
  }
  std::vector<int64_t> types(tokens.size(), int64_t(spm::PieceType::Normal));
  if (f.find("tokenizer.ggml.token_type") != nullptr) {
    MAGNETAR_TRY(f.get_i64_array("tokenizer.ggml.token_type", &types));
    if (types.size() != tokens.size())
      return Status::error("GGUF tokenizer.ggml.token_type has " + std::to_string(types.size()) +
                           " entries for " + std::to_string(tokens.size()) + " tokens");
  }
  out->pieces.resize(tokens.size());
  for (size_t i = 0; i < tokens.size(); ++i) {
    spm::VocabPiece& p = out->pieces[i];
    p.piece.assign(tokens[i]);
    p.score = scores[i];
    if (!piece_type_from_gguf(types[i], &p.type))
      return Status::error("GGUF token " + std::to_string(i) + " has token type " + std::to_string(types[i]) +
                           " (1..6 expected)");
  }
  out->unk_id = -1;
  out->bos_id = -1;
  out->eos_id = -1;
  out->pad_id = -1;
  MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.unknown_token_id", &out->unk_id));
  MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.bos_token_id", &out->bos_id));
  MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.eos_token_id", &out->eos_id));
  MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.padding_token_id", &out->pad_id));
  if (out->unk_id < 0)  // SentencePiece needs one; llama.cpp's default is 0
    for (size_t i = 0; i < out->pieces.size() && out->unk_id < 0; ++i)
      if (out->pieces[i].type == spm::PieceType::Unknown) out->unk_id = int(i);
  for (int* id : {&out->unk_id, &out->bos_id, &out->eos_id, &out->pad_id})
    if (*id >= int(out->pieces.size()))
      return Status::error("GGUF special token id " + std::to_string(*id) + " is outside the " +
                           std::to_string(out->pieces.size()) + "-token vocabulary");
  // llama.cpp's Gemma vocabularies mark <unk> CONTROL and name it only by unknown_token_id;
  // SentencePiece needs exactly one UNKNOWN piece, so that one becomes it when none is.
  bool has_unknown = false;
  for (const spm::VocabPiece& p : out->pieces) has_unknown |= p.type == spm::PieceType::Unknown;
  if (!has_unknown && out->unk_id >= 0 && out->pieces[size_t(out->unk_id)].type == spm::PieceType::Control)
    out->pieces[size_t(out->unk_id)].type = spm::PieceType::Unknown;
  if (f.find("tokenizer.ggml.add_space_prefix") != nullptr)
    MAGNETAR_TRY(f.get_bool("tokenizer.ggml.add_space_prefix", &out->add_dummy_prefix));
  return Status::ok();
}

}  // namespace magnetar::convert
