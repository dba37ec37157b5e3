// The architecture table: for each model family Magnetar runs, its names (Hugging Face
// `architectures`, GGUF `general.architecture`), the options it has (norm style, biases, per-head
// q/k norms, sandwich norms, fused source tensors, sliding layers) and, in one list shared by all
// families, every tensor of a model file with its shape and its Hugging Face and GGUF source names.
//
// The HF converter, the GGUF importer, the model-file reader, the model loader, `synth`, `info`
// and the app's inspector all read this table; adding a family is one entry here (plus any
// operation it truly adds to the forward pass). Not here: how a tensor's values are computed with.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "format/model_format.h"
#include "magnetar/engine.h"

namespace magnetar::format {

// Which layers use a sliding attention window (header: sliding_window, sliding_window_period).
enum class SlidingLayers : uint8_t {
  None,      // no window
  All,       // every layer, when the config sets sliding_window (Mistral, Phi-3)
  Pattern,   // layer i slides iff (i + 1) % period != 0 (Gemma 2: period 2; Gemma 3: configured)
};

struct ArchitectureTraits {
  Architecture arch;
  const char* name;           // architecture_name(): "llama", "qwen2", ...
  const char* display_name;   // for people: "Llama", "Qwen 2", ...
  const char* hf_names[2];    // config.json `architectures` values (nullptr = unused slot)
  const char* gguf_name;      // general.architecture (nullptr: no GGUF import)
  const char* hf_activation_key;      // "hidden_act" or "hidden_activation"
  const char* hf_default_activation;  // when the key is absent
  bool hf_tied_default;       // tie_word_embeddings when config.json does not say
  // config.json keys the family's transformers config class defaults (JSON object text): a key
  // the file leaves out or sets to null takes this value. nullptr: none.
  const char* hf_config_defaults;
  bool norm_plus_one;         // HF RMSNorm weights w apply as (1 + w) (Gemma); folded at conversion
  bool embed_scale;           // embeddings × sqrt(hidden size)
  bool sandwich_norms;        // post-attention, pre- and post-feed-forward norms (Gemma 2/3)
  bool qkv_bias;              // biases on q, k and v projections (Qwen 2)
  bool qk_norm;               // per-head RMSNorm of queries and keys before RoPE (Qwen 3, Gemma 3)
  bool fused_qkv;             // HF stores qkv_proj and gate_up_proj fused (Phi-3)
  bool gguf_rope_interleaved; // llama.cpp stores q/k rows permuted for interleaved RoPE (llama)
  bool softcaps;              // attn/final logit softcapping keys (Gemma 2)
  bool query_pre_attn_scalar; // query scale from query_pre_attn_scalar (Gemma 2/3)
  bool local_rope_base;       // sliding layers use rope_local_base_freq (Gemma 3)
  SlidingLayers sliding;
};

// Every architecture this build runs, in Architecture order.
const std::vector<ArchitectureTraits>& architectures();
const ArchitectureTraits* find_architecture(Architecture arch);
const ArchitectureTraits* find_hf_architecture(std::string_view hf_name);
const ArchitectureTraits* find_gguf_architecture(std::string_view gguf_name);
// "LlamaForCausalLM, MistralForCausalLM, ..." / "llama, qwen2, ..." for messages and docs.
std::string supported_hf_architectures();
std::string supported_gguf_architectures();
// "Llama 3.x, Mistral, Qwen 2/2.5, ..." for people (welcome text, drop dialog).
std::string supported_families();

// ---- Tensors ----------------------------------------------------------------------------------

enum class TensorRole : uint8_t {
  TokEmbeddings, AttnNorm, Wqkv, Bqkv, QNorm, KNorm, Wo, PostAttnNorm, FfnNorm, WGateUp, WDown,
  PostFfnNorm, OutputNorm, Output, RopeFreqs,
};

// One source tensor of a model-file tensor: its name (a layer's names with "{}" for the index)
// and how many of the output rows it gives.
struct SourcePart {
  std::string name;
  uint64_t rows = 0;
  bool rope_rows = false;  // q or k rows (GGUF llama: stored interleaved)
  uint64_t rope_heads = 0; // heads in those rows
};

// One tensor of a model file, derived from the header.
struct TensorSpec {
  TensorRole role;
  std::string name;  // canonical name: "tok_embeddings", "layers.3.wqkv", ...
  int layer = -1;    // -1 for model-level tensors
  uint64_t rows = 1, cols = 0;
  int n_dims = 2;    // 1: F32 vector (norm weights, biases)
  bool is_norm_weight = false;  // (1 + w) folding applies (norm_plus_one families)
};

// Every tensor a file with this header holds, in file order.
std::vector<TensorSpec> model_tensors(const FileHeader& h);
// The canonical name's expected spec, or false if no such tensor belongs in the file.
bool find_tensor_spec(const FileHeader& h, std::string_view name, TensorSpec* out);

enum class SourceFormat : uint8_t { HuggingFace, Gguf };
// The source tensors (concatenated along rows) that make `t` in a Hugging Face folder (names
// relative to the language-model prefix, e.g. "layers.0.self_attn.q_proj.weight" under "model.")
// or a GGUF file ("blk.0.attn_q.weight").
std::vector<SourcePart> tensor_sources(const ArchitectureTraits& a, const FileHeader& h,
                                       const TensorSpec& t, SourceFormat format);

// True when layer `layer` of a file with this header attends through the sliding window.
bool layer_slides(const FileHeader& h, int layer);

}  // namespace magnetar::format
