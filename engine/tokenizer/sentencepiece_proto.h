// Writing a SentencePiece ModelProto (the bytes of a tokenizer.model) from a vocabulary, without
// protobuf: the wire format is written by hand. Used to turn a llama2.c tok*.bin vocabulary into
// a model libsentencepiece loads, and to give synthetic models a vocabulary.
//
// Only the fields that change encoding are written: pieces (piece, score, type), trainer_spec
// (model_type, vocab_size, byte_fallback, special ids and pieces, ...) and normalizer_spec
// (identity, add_dummy_prefix, remove_extra_whitespaces, escape_whitespaces).
#pragma once
#include <string>
#include <vector>

#include "magnetar/status.h"

namespace magnetar::spm {

// SentencePiece.Type values of sentencepiece_model.proto.
enum class PieceType : int { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct VocabPiece {
  std::string piece;  // UTF-8; spaces written as U+2581 "▁" in normal pieces; bytes as "<0xAB>"
  float score = 0.0f;
  PieceType type = PieceType::Normal;
};

enum class ModelType : int { Unigram = 1, Bpe = 2 };

// Defaults match Llama 2's tokenizer.model: BPE, identity normalizer, dummy prefix, whitespace
// kept as is, byte fallback when the vocabulary has <0x..> pieces.
struct ModelSpec {
  std::vector<VocabPiece> pieces;
  ModelType model_type = ModelType::Bpe;
  bool add_dummy_prefix = true;
  bool remove_extra_whitespaces = false;
  bool escape_whitespaces = true;
  bool split_digits = true;
  // Ids of the special pieces (-1: none). The pieces at these ids must have type Unknown /
  // Control; their text becomes trainer_spec's unk/bos/eos/pad piece.
  int unk_id = 0, bos_id = 1, eos_id = 2, pad_id = -1;
};

// Serialized ModelProto. Errors: empty or duplicate pieces, special ids out of range or of the
// wrong type, no unknown piece.
Status build_sentencepiece_model(const ModelSpec& spec, std::string* out);

// Appends pieces to a serialized ModelProto: `pieces` is a repeated field, so they take the ids
// after its last piece. For added tokens a tokenizer_config.json lists past the end of a
// tokenizer.model (Phi-3's <|user|>, <|end|>, ...). The caller checks names are new.
void append_pieces(const std::vector<VocabPiece>& pieces, std::string* model_proto);

// A llama2.c tokenizer file (int32 max_token_length, then per token: float32 score, int32 length,
// bytes) as a ModelSpec: "<unk>" → Unknown, "\n<s>\n" / "\n</s>\n" → Control "<s>" / "</s>",
// "<0xAB>" → Byte, other pieces Normal with ' ' turned back into "▁". `origin` names the file.
Status llama2c_vocab_to_spec(const std::string& file_bytes, const std::string& origin,
                             ModelSpec* out);

}  // namespace magnetar::spm
