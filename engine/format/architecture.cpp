// The architecture table and the one tensor list every reader and writer derives from
// (see architecture.h).
#include "format/architecture.h"

namespace magnetar::format {

// ---- Families -----------------------------------------------------------------------------------
// Options as transformers' modeling_<family>.py defines them; GGUF names as llama.cpp writes them.

const std::vector<ArchitectureTraits>& architectures() {
  static const std::vector<ArchitectureTraits> table = [] {
    ArchitectureTraits llama{};
    llama.arch = Architecture::Llama;
    llama.name = "llama";
    llama.display_name = "Llama / Mistral";
    llama.hf_names[0] = "LlamaForCausalLM";
    llama.hf_names[1] = "MistralForCausalLM";
    llama.gguf_name = "llama";
    llama.hf_activation_key = "hidden_act";
    llama.hf_default_activation = "silu";
    llama.gguf_rope_interleaved = true;
    llama.sliding = SlidingLayers::All;  // Mistral's sliding_window (null or absent: none)

    ArchitectureTraits gemma{};
    gemma.arch = Architecture::Gemma;
    gemma.name = "gemma";
    gemma.display_name = "Gemma";
    gemma.hf_names[0] = "GemmaForCausalLM";
    gemma.gguf_name = "gemma";
    gemma.hf_activation_key = "hidden_activation";  // transformers falls back to the tanh GELU
    gemma.hf_default_activation = "gelu_pytorch_tanh";
    gemma.hf_tied_default = true;
    gemma.norm_plus_one = true;
    gemma.embed_scale = true;

    ArchitectureTraits gemma2 = gemma;
    gemma2.arch = Architecture::Gemma2;
    gemma2.name = "gemma2";
    gemma2.display_name = "Gemma 2";
    gemma2.hf_names[0] = "Gemma2ForCausalLM";
    gemma2.gguf_name = "gemma2";
    gemma2.sandwich_norms = true;
    gemma2.softcaps = true;
    gemma2.query_pre_attn_scalar = true;
    gemma2.sliding = SlidingLayers::Pattern;
    // Gemma2Config: every other layer slides (layer_types, when given, says so too).
    gemma2.hf_config_defaults = R"({"sliding_window": 4096, "sliding_window_pattern": 2})";

    ArchitectureTraits qwen2{};
    qwen2.arch = Architecture::Qwen2;
    qwen2.name = "qwen2";
    qwen2.display_name = "Qwen 2 / 2.5";
    qwen2.hf_names[0] = "Qwen2ForCausalLM";
    qwen2.gguf_name = "qwen2";
    qwen2.hf_activation_key = "hidden_act";
    qwen2.hf_default_activation = "silu";
    qwen2.qkv_bias = true;

    ArchitectureTraits qwen3 = qwen2;
    qwen3.arch = Architecture::Qwen3;
    qwen3.name = "qwen3";
    qwen3.display_name = "Qwen 3";
    qwen3.hf_names[0] = "Qwen3ForCausalLM";
    qwen3.gguf_name = "qwen3";
    qwen3.qkv_bias = false;
    qwen3.qk_norm = true;

    ArchitectureTraits gemma3 = gemma2;
    gemma3.arch = Architecture::Gemma3;
    gemma3.name = "gemma3";
    gemma3.display_name = "Gemma 3";
    gemma3.hf_names[0] = "Gemma3ForCausalLM";
    gemma3.hf_names[1] = "Gemma3ForConditionalGeneration";  // its language model
    gemma3.gguf_name = "gemma3";
    gemma3.qk_norm = true;
    gemma3.local_rope_base = true;
    // Gemma3TextConfig's defaults: the text_config of Gemma3ForConditionalGeneration checkpoints
    // (gemma-3-4b and up) gives only the keys that differ from them.
    gemma3.hf_config_defaults = R"({"vocab_size": 262208, "num_attention_heads": 8,
        "num_key_value_heads": 4, "head_dim": 256, "max_position_embeddings": 131072,
        "rms_norm_eps": 1e-6, "rope_theta": 1000000.0, "rope_local_base_freq": 10000.0,
        "query_pre_attn_scalar": 256, "sliding_window": 4096, "sliding_window_pattern": 6})";

    ArchitectureTraits phi3{};
    phi3.arch = Architecture::Phi3;
    phi3.name = "phi3";
    phi3.display_name = "Phi-3 / 3.5";
    phi3.hf_names[0] = "Phi3ForCausalLM";
    phi3.gguf_name = "phi3";
    phi3.hf_activation_key = "hidden_act";
    phi3.hf_default_activation = "silu";
    phi3.fused_qkv = true;
    phi3.sliding = SlidingLayers::All;
    return std::vector<ArchitectureTraits>{llama, gemma, gemma2, qwen2, qwen3, gemma3, phi3};
  }();
  return table;
}

const ArchitectureTraits* find_architecture(Architecture arch) {
  for (const auto& a : architectures())
    if (a.arch == arch) return &a;
  return nullptr;
}

const ArchitectureTraits* find_hf_architecture(std::string_view hf_name) {
  for (const auto& a : architectures())
    for (const char* n : a.hf_names)
      if (n && hf_name == n) return &a;
  return nullptr;
}

const ArchitectureTraits* find_gguf_architecture(std::string_view gguf_name) {
  for (const auto& a : architectures())
    if (a.gguf_name && gguf_name == a.gguf_name) return &a;
  return nullptr;
}

std::string supported_hf_architectures() {
  std::string s;
  for (const auto& a : architectures())
    for (const char* n : a.hf_names)
      if (n) s += (s.empty() ? "" : ", ") + std::string(n);
  return s;
}

std::string supported_gguf_architectures() {
  std::string s;
  for (const auto& a : architectures())
    if (a.gguf_name) s += (s.empty() ? "" : ", ") + std::string(a.gguf_name);
  return s;
}

std::string supported_families() {
  std::string s;
  for (const auto& a : architectures()) s += (s.empty() ? "" : ", ") + std::string(a.display_name);
  return s;
}

// ---- Tensors --------------------------------------------------------------------------------------

namespace {

std::string layer_name(int layer, const char* leaf) {
  return "layers." + std::to_string(layer) + "." + leaf;
}

TensorSpec matrix(TensorRole role, std::string name, int layer, uint64_t rows, uint64_t cols) {
  return TensorSpec{role, std::move(name), layer, rows, cols, 2, false};
}

TensorSpec vector_spec(TensorRole role, std::string name, int layer, uint64_t n, bool is_norm_weight) {
  return TensorSpec{role, std::move(name), layer, 1, n, 1, is_norm_weight};
}

}  // namespace

std::vector<TensorSpec> model_tensors(const FileHeader& h) {
  const ArchitectureTraits* a = find_architecture(static_cast<Architecture>(h.architecture));
  const uint64_t dim = h.dim, hidden = h.hidden_dim, hd = h.head_dim, vocab = h.vocab_size;
  const uint64_t q = uint64_t(h.n_heads) * hd, kv = uint64_t(h.n_kv_heads) * hd;
  const bool post_norms = (h.flags & kFlagPostNorms) != 0;
  std::vector<TensorSpec> out;
  out.push_back(matrix(TensorRole::TokEmbeddings, "tok_embeddings", -1, vocab, dim));
  for (int l = 0; l < int(h.n_layers); ++l) {
    out.push_back(vector_spec(TensorRole::AttnNorm, layer_name(l, "attn_norm"), l, dim, true));
    out.push_back(matrix(TensorRole::Wqkv, layer_name(l, "wqkv"), l, q + 2 * kv, dim));
    if (a && a->qkv_bias) out.push_back(vector_spec(TensorRole::Bqkv, layer_name(l, "bqkv"), l, q + 2 * kv, false));
    if (a && a->qk_norm) {
      out.push_back(vector_spec(TensorRole::QNorm, layer_name(l, "q_norm"), l, hd, true));
      out.push_back(vector_spec(TensorRole::KNorm, layer_name(l, "k_norm"), l, hd, true));
    }
    out.push_back(matrix(TensorRole::Wo, layer_name(l, "wo"), l, dim, q));
    if (post_norms) out.push_back(vector_spec(TensorRole::PostAttnNorm, layer_name(l, "post_attn_norm"), l, dim, true));
    out.push_back(vector_spec(TensorRole::FfnNorm, layer_name(l, "ffn_norm"), l, dim, true));
    out.push_back(matrix(TensorRole::WGateUp, layer_name(l, "w_gate_up"), l, 2 * hidden, dim));
    out.push_back(matrix(TensorRole::WDown, layer_name(l, "w_down"), l, dim, hidden));
    if (post_norms) out.push_back(vector_spec(TensorRole::PostFfnNorm, layer_name(l, "post_ffn_norm"), l, dim, true));
  }
  out.push_back(vector_spec(TensorRole::OutputNorm, "output_norm", -1, dim, true));
  if (!(h.flags & kFlagTiedEmbeddings)) out.push_back(matrix(TensorRole::Output, "output", -1, vocab, dim));
  if (h.flags & kFlagRopeFreqFactors) out.push_back(vector_spec(TensorRole::RopeFreqs, "rope_freqs", -1, hd / 2, false));
  return out;
}

bool find_tensor_spec(const FileHeader& h, std::string_view name, TensorSpec* out) {
  // Model-level names, or "layers.<i>.<leaf>" with i < n_layers: only one layer's list is built.
  FileHeader one_layer = h;
  one_layer.n_layers = 0;
  std::string_view leaf;
  int layer = -1;
  if (name.rfind("layers.", 0) == 0) {
    const size_t dot = name.find('.', 7);
    if (dot == std::string_view::npos) return false;
    const std::string_view index = name.substr(7, dot - 7);
    if (index.empty() || index.size() > 5 || index.find_first_not_of("0123456789") != std::string_view::npos)
      return false;
    layer = std::stoi(std::string(index));
    if (layer >= int(h.n_layers)) return false;
    one_layer.n_layers = 1;
    leaf = name.substr(dot);  // ".wqkv"
  }
  for (TensorSpec& t : model_tensors(one_layer)) {
    const bool match = layer < 0 ? t.layer < 0 && t.name == name
                                 : t.layer == 0 && std::string_view(t.name).substr(t.name.find('.', 7)) == leaf;
    if (!match) continue;
    if (layer >= 0) t.layer = layer, t.name = std::string(name);
    *out = std::move(t);
    return true;
  }
  return false;
}

std::vector<SourcePart> tensor_sources(const ArchitectureTraits& a, const FileHeader& h,
                                       const TensorSpec& t, SourceFormat format) {
  const bool hf = format == SourceFormat::HuggingFace;
  const uint64_t hd = h.head_dim, q = uint64_t(h.n_heads) * hd, kv = uint64_t(h.n_kv_heads) * hd;
  const uint64_t hidden = h.hidden_dim;
  const std::string p = hf ? "model.layers." + std::to_string(t.layer) + "."
                           : "blk." + std::to_string(t.layer) + ".";
  auto one = [&](const char* hf_leaf, const char* gguf_leaf) {
    return std::vector<SourcePart>{{p + (hf ? hf_leaf : gguf_leaf), t.n_dims == 1 ? t.cols : t.rows}};
  };
  auto q_k_v = [&](const char* kind) {  // kind: "weight" or "bias"
    const std::string k = kind;
    if (hf)
      return std::vector<SourcePart>{{p + "self_attn.q_proj." + k, q, true, h.n_heads},
                                     {p + "self_attn.k_proj." + k, kv, true, h.n_kv_heads},
                                     {p + "self_attn.v_proj." + k, kv}};
    return std::vector<SourcePart>{{p + "attn_q." + k, q, true, h.n_heads},
                                   {p + "attn_k." + k, kv, true, h.n_kv_heads},
                                   {p + "attn_v." + k, kv}};
  };
  switch (t.role) {
    case TensorRole::TokEmbeddings:
      return {{hf ? "model.embed_tokens.weight" : "token_embd.weight", t.rows}};
    case TensorRole::OutputNorm: return {{hf ? "model.norm.weight" : "output_norm.weight", t.cols}};
    case TensorRole::Output: return {{hf ? "lm_head.weight" : "output.weight", t.rows}};
    case TensorRole::RopeFreqs:  // llama.cpp's; a Hugging Face config describes its scaling instead
      return {{hf ? "" : "rope_freqs.weight", t.cols}};
    case TensorRole::AttnNorm: return one("input_layernorm.weight", "attn_norm.weight");
    case TensorRole::Wqkv:
      if (a.fused_qkv) return one("self_attn.qkv_proj.weight", "attn_qkv.weight");
      return q_k_v("weight");
    case TensorRole::Bqkv: return q_k_v("bias");
    case TensorRole::QNorm: return one("self_attn.q_norm.weight", "attn_q_norm.weight");
    case TensorRole::KNorm: return one("self_attn.k_norm.weight", "attn_k_norm.weight");
    case TensorRole::Wo: return one("self_attn.o_proj.weight", "attn_output.weight");
    case TensorRole::PostAttnNorm: return one("post_attention_layernorm.weight", "post_attention_norm.weight");
    case TensorRole::FfnNorm:
      return one(a.sandwich_norms ? "pre_feedforward_layernorm.weight" : "post_attention_layernorm.weight",
                 "ffn_norm.weight");
    case TensorRole::WGateUp:
      // llama.cpp keeps Phi-3's fused gate/up as ffn_up with 2 × hidden rows (gate rows first).
      if (a.fused_qkv) return one("mlp.gate_up_proj.weight", "ffn_up.weight");
      if (hf) return {{p + "mlp.gate_proj.weight", hidden}, {p + "mlp.up_proj.weight", hidden}};
      return {{p + "ffn_gate.weight", hidden}, {p + "ffn_up.weight", hidden}};
    case TensorRole::WDown: return one("mlp.down_proj.weight", "ffn_down.weight");
    case TensorRole::PostFfnNorm: return one("post_feedforward_layernorm.weight", "post_ffw_norm.weight");
  }
  return {};
}

bool layer_slides(const FileHeader& h, int layer) {
  if (h.sliding_window == 0) return false;
  const uint32_t period = h.sliding_window_period;
  return period == 0 || (uint32_t(layer) + 1) % period != 0;
}

}  // namespace magnetar::format
