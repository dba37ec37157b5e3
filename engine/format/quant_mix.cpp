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

DType base_type(QuantMix mix) {
  switch (mix) {
    case QuantMix::Q2_K: return DType::Q2_K;
    case QuantMix::Q3_K_M: return DType::Q3_K;
    case QuantMix::Q4_K_M: return DType::Q4_K;
    case QuantMix::Q5_K_M: break;
  }
  return DType::Q5_K;
}

// attn_v (llama.cpp counts attn_v tensors; in a dense model that is the layer index).
DType attn_v_type(QuantMix mix, const MixModel& model, int layer) {
  DType type = base_type(mix);
  switch (mix) {
    case QuantMix::Q2_K: type = model.gqa_ratio >= 4 ? DType::Q4_K : DType::Q3_K; break;
    case QuantMix::Q3_K_M: type = layer < 2 ? DType::Q5_K : DType::Q4_K; break;
    case QuantMix::Q4_K_M:
    case QuantMix::Q5_K_M:
      if (use_more_bits(layer, model.n_layers)) type = DType::Q6_K;
      break;
  }
  // "70B": eight query heads share each attn_v row, so more bits cost little.
  if (model.llama_70b && (type == DType::Q3_K || type == DType::Q4_K)) type = DType::Q5_K;
  return type;
}

DType ffn_down_type(QuantMix mix, const MixModel& model, int layer) {
  switch (mix) {
    case QuantMix::Q2_K: return DType::Q3_K;
    case QuantMix::Q3_K_M: return layer < model.n_layers / 16 ? DType::Q5_K : DType::Q4_K;
    case QuantMix::Q4_K_M:
    case QuantMix::Q5_K_M: break;
  }
  return use_more_bits(layer, model.n_layers) ? DType::Q6_K : base_type(mix);
}

DType attn_output_type(QuantMix mix) {
  switch (mix) {
    case QuantMix::Q2_K: return DType::Q3_K;
    case QuantMix::Q3_K_M: return DType::Q4_K;
    case QuantMix::Q4_K_M:
    case QuantMix::Q5_K_M: break;
  }
  return base_type(mix);
}

// One fused qkv source (Phi-3): llama.cpp's attn_qkv rule.
DType fused_qkv_type(QuantMix mix) {
  switch (mix) {
    case QuantMix::Q2_K: break;
    case QuantMix::Q3_K_M: return DType::Q4_K;
    case QuantMix::Q4_K_M: return DType::Q5_K;
    case QuantMix::Q5_K_M: return DType::Q6_K;
  }
  return base_type(mix);
}

DType chosen_type(QuantMix mix, const MixModel& model, const std::string& name, size_t part, size_t n_parts) {
  // The LM head (the embedding table when tied) keeps more bits: its errors reach every logit.
  if (name == "output" || (name == "tok_embeddings" && model.tied_embeddings)) return DType::Q6_K;
  int layer = 0;
  std::string leaf;
  if (!split_layer_name(name, &layer, &leaf)) return base_type(mix);
  if (leaf == "wqkv" && n_parts == 1) return fused_qkv_type(mix);
  if ((leaf == "wqkv" && part == 2) || leaf == "wv") return attn_v_type(mix, model, layer);
  if (leaf == "w_down") return ffn_down_type(mix, model, layer);
  if (leaf == "wo") return attn_output_type(mix);
  return base_type(mix);
}

}  // namespace

MixModel mix_model_of(const FileHeader& h) {
  MixModel m;
  m.n_layers = int(h.n_layers);
  m.tied_embeddings = (h.flags & kFlagTiedEmbeddings) != 0;
  m.llama_70b = h.architecture == uint32_t(Architecture::Llama) && h.n_layers == 80 && h.n_heads != h.n_kv_heads;
  m.gqa_ratio = h.n_kv_heads > 0 ? int(h.n_heads / h.n_kv_heads) : 1;
  return m;
}

DType fallback_type(DType type, uint64_t cols) {
  if (dtype_fits_cols(type, cols)) return type;
  switch (type) {
    case DType::Q4_K: return fallback_type(DType::Q5_0, cols);
    case DType::Q5_K: return fallback_type(DType::Q5_1, cols);
    case DType::Q6_K: return fallback_type(DType::Q8_0, cols);
    case DType::Q2_K:
    case DType::Q3_K:
    case DType::IQ4_XS: return fallback_type(DType::IQ4_NL, cols);
    default: return DType::F16;
  }
}

DType mix_tensor_type(QuantMix mix, const MixModel& model, const std::string& name, size_t part, size_t n_parts,
                      uint64_t cols) {
  return fallback_type(chosen_type(mix, model, name, part, n_parts), cols);
}

}  // namespace magnetar::format
