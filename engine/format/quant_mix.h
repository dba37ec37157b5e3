// Which type each matrix is stored as when the converter or `synth` quantizes: the one place that holds
// llama.cpp's per-tensor choices for its K-quant mixes (Q2_K, Q3_K_M, Q4_K_M, Q5_K_M;
// llama_tensor_get_type in llama-quant.cpp, dense models without an importance matrix) and the fallback for rows that
// are not whole blocks of the chosen type. docs/MODEL_FORMAT.md states the rule for people.
#pragma once
#include <cstdint>
#include <string>

#include "format/model_format.h"

namespace magnetar::format {

// Q2_K is llama.cpp's file type of that name: mostly Q2_K, with Q3_K / Q4_K / Q6_K tensors.
enum class QuantMix : uint8_t { Q4_K_M, Q5_K_M, Q3_K_M, Q2_K };

// What the rule needs of the model.
struct MixModel {
  int n_layers = 0;
  bool tied_embeddings = false;  // tok_embeddings is also the LM head
  bool llama_70b = false;        // an 80-layer GQA Llama (llama.cpp's LLM_TYPE_70B)
  int gqa_ratio = 1;             // query heads per KV head (llama.cpp's n_gqa())
};
MixModel mix_model_of(const FileHeader& h);

// The type of matrix `name` (a canonical name, model_format.h) under `mix`; `part` is the index
// of the source part being typed in a fused tensor made of `n_parts` sources (wqkv from q, k, v:
// 3 parts; Phi-3's single qkv_proj: 1 part, llama.cpp's attn_qkv rule). Includes the fallback
// for `cols` (fallback_type).
DType mix_tensor_type(QuantMix mix, const MixModel& model, const std::string& name, size_t part,
                              size_t n_parts, uint64_t cols);

// `type` if a row of `cols` values is whole blocks of it; else llama.cpp's fallback chain:
// Q4_K -> Q5_0, Q5_K -> Q5_1, Q6_K -> Q8_0, Q2_K / Q3_K / IQ4_XS -> IQ4_NL (32-value blocks),
// and F16 when even 32 does not divide the row.
DType fallback_type(DType type, uint64_t cols);

}  // namespace magnetar::format
