// llama.cpp's K-quant mixes, per tensor (see quant_mix.h; rule stated in docs/MODEL_FORMAT.md).
#include "format/quant_mix.h"

#include <cstdlib>

#include "magnetar/engine.h"

namespace magnetar::format {

namespace {



// llama.cpp's use_more_bits: the first and last eighth of the layers, and every third between.
bool use_more_bits(int layer, int n_layers) {
  return layer < n_layers / 8 || layer >= 7 * n_layers / 8 || (layer - n_layers / 8) % 3 == 2;
}

// "layers.<i>.<leaf>" -> i and leaf; false for model-level names.
bool split_layer_name(const std::string& name, int* layer, std::string* leaf) {
  if (name.rfind("layers.", 0) != 0) return false;
  const size_t dot = name.find('.', 7);
  if (dot == std::string::npos) return false;
  *layer = std::atoi(name.c_str() + 7);
  *leaf = name.substr(dot + 1);
  return true;
}

DType chosen_type(QuantMix mix, const MixModel& model, const std::string& name, size_t part, size_t n_parts) {
  const DType base = mix == QuantMix::Q4_K_M ? DType::Q4_K : DType::Q5_K;
  // The LM head (the embedding table when tied) keeps more bits: its errors reach every logit.
  if (name == "output" || (name == "tok_embeddings" && model.tied_embeddings)) return DType::Q6_K;
  int layer = 0;
  std::string leaf;
  if (!split_layer_name(name, &layer, &leaf)) return base;
  const bool more_bits = use_more_bits(layer, model.n_layers);
  if (leaf == "wqkv" && n_parts == 1)  // one fused qkv source (Phi-3): llama.cpp's attn_qkv rule
    return mix == QuantMix::Q4_K_M ? DType::Q5_K : DType::Q6_K;
  if ((leaf == "wqkv" && part == 2) || leaf == "wv") {  // attn_v
    if (more_bits) return DType::Q6_K;
    return model.llama_70b && base == DType::Q4_K ? DType::Q5_K : base;
  }
  if (leaf == "w_down" && more_bits) return DType::Q6_K;
  return base;
}

}  // namespace

MixModel mix_model_of(const FileHeader& h) {
  MixModel m;
  m.n_layers = int(h.n_layers);
  m.tied_embeddings = (h.flags & kFlagTiedEmbeddings) != 0;
  m.llama_70b = h.architecture == uint32_t(Architecture::Llama) && h.n_layers == 80 && h.n_heads != h.n_kv_heads;
  return m;
}

DType fallback_type(DType type, uint64_t cols) {
  if (dtype_fits_cols(type, cols)) return type;
  switch (type) {
    case DType::Q4_K: return fallback_type(DType::Q5_0, cols);
    case DType::Q5_K: return fallback_type(DType::Q5_1, cols);
    case DType::Q6_K: return fallback_type(DType::Q8_0, cols);
    default: return DType::F16;
  }
}

DType mix_tensor_type(QuantMix mix, const MixModel& model, const std::string& name, size_t part, size_t n_parts,
                      uint64_t cols) {
  return fallback_type(chosen_type(mix, model, name, part, n_parts), cols);
}

}  // namespace magnetar::format
