// The model's internal structs (llama2.c style): Config from the file header, Weights as views
// into the loaded file, RunState with every buffer a session needs, allocated once.
#pragma once
#include <memory>
#include <vector>

#include "core/platform.h"
#include "core/thread_pool.h"
#include "format/model_reader.h"
#include "magnetar/engine.h"
#include "ops/ops.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace magnetar {

struct Config {
  Architecture arch = Architecture::Llama;
  int n_layers = 0, dim = 0, hidden_dim = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
  int vocab_size = 0, max_context = 0;
  int q_dim = 0, kv_dim = 0;  // n_heads * head_dim, n_kv_heads * head_dim
  float norm_eps = 1e-5f, rope_theta = 10000.f, query_scale = 1.f;
  float attn_softcap = 0.f, final_softcap = 0.f;
  // Layer l slides when sliding_window > 0 and (period == 0 or (l + 1) % period != 0).
  int sliding_window = 0, sliding_period = 0;
  bool embed_scale_sqrt_dim = false, post_norms = false, tied_embeddings = false;
  bool qkv_bias = false, qk_norm = false;  // from the architecture table
  bool local_rope = false;                 // sliding layers use their own RoPE table
  format::Activation activation = format::Activation::Silu;

  bool layer_slides(int layer) const {
    return sliding_window > 0 && (sliding_period == 0 || (layer + 1) % sliding_period != 0);
  }
};

struct LayerWeights {
  const float* attn_norm;       // [dim]
  ops::Matrix wqkv;             // [q_dim + 2 kv_dim, dim]
  const float* bqkv;            // [q_dim + 2 kv_dim] (Qwen 2) or null
  const float* q_norm;          // [head_dim] per-head query norm (Qwen 3, Gemma 3) or null
  const float* k_norm;          // [head_dim] per-head key norm, with q_norm
  ops::Matrix wo;               // [dim, q_dim]
  const float* post_attn_norm;  // [dim] (Gemma 2/3) or null
  const float* ffn_norm;        // [dim]
  ops::Matrix w_gate_up;        // [2 hidden_dim, dim]
  ops::Matrix w_down;           // [dim, hidden_dim]
  const float* post_ffn_norm;   // [dim] (Gemma 2/3) or null
};

struct Weights {
  ops::Matrix tok_embeddings;  // [vocab, dim]
  ops::Matrix output;          // [vocab, dim] (= tok_embeddings when tied)
  const float* output_norm;    // [dim]
  const float* rope_freqs = nullptr;  // [head_dim / 2] divisors of global layers' RoPE frequencies, or null
  std::vector<LayerWeights> layers;
};

struct Model::Impl {
  platform::FileBuffer file;
  format::ModelFileView view;
  Config config;
  Weights weights;
  Tokenizer tokenizer;
  ModelInfo info;
  std::unique_ptr<ThreadPool> pool;
  int requested_threads = 0;
  std::vector<float> rope_cos, rope_sin;  // [context_length, head_dim / 2]
  std::vector<float> rope_local_cos, rope_local_sin;  // sliding layers' (config.local_rope), same shape
  std::vector<int> eog_ids;
  std::unique_ptr<PromptTemplate> prompt_template;  // null when the stored one does not parse
  Status template_status = Status::ok();            // why it did not

  // bos_token / eos_token for the template: the pieces of the BOS and first end-of-generation
  // ids (the plain built-in writes BOS only when the model adds one).
  SpecialTokenText template_special_tokens() const;
};

// The engine's access to a Model's internals (Model::Impl is opaque to frontends).
struct ModelInternals {
  static Model::Impl& impl(Model& model) { return *model.impl_; }
  static const Model::Impl& impl(const Model& model) { return *model.impl_; }
};

// A float buffer from platform::alloc_large (64-byte aligned, zeroed).
class LargeBuffer {
 public:
  LargeBuffer() = default;
  ~LargeBuffer() { platform::free_large(ptr_, bytes_); }
  LargeBuffer(const LargeBuffer&) = delete;
  LargeBuffer& operator=(const LargeBuffer&) = delete;
  // huge_pages = false for scratch that decode touches only in part (see discard()).
  bool allocate(uint64_t n_floats, bool huge_pages = true) {
    platform::free_large(ptr_, bytes_);
    ptr_ = nullptr;
    bytes_ = std::max<uint64_t>(n_floats * sizeof(float), 64);
    ptr_ = static_cast<float*>(platform::alloc_large(bytes_, huge_pages));
    return ptr_ != nullptr;
  }
  // Returns the pages to the OS; the buffer stays usable, its contents undefined.
  void discard() { platform::discard_pages(ptr_, bytes_); }
  float* get() const { return ptr_; }
  uint64_t bytes() const { return bytes_; }

 private:
  float* ptr_ = nullptr;
  uint64_t bytes_ = 0;
};

// Positions per block of the value cache (RunState::value_cache).
constexpr int kValueBlock = 64;
constexpr int value_blocks(int context) { return (context + kValueBlock - 1) / kValueBlock; }

struct RunState {
  int max_batch = 0;   // tokens per forward call
  int context = 0;     // KV cache capacity in tokens
  LargeBuffer x;       // [max_batch, dim] residual stream
  LargeBuffer xb;      // [max_batch, dim] normed input / block output
  LargeBuffer qkv;     // [max_batch, q_dim + 2 kv_dim]
  LargeBuffer att;     // [max_batch, q_dim] attention output per head
  LargeBuffer gate_up; // [max_batch, 2 hidden_dim]
  LargeBuffer hidden;  // [max_batch, hidden_dim] activated FFN input
  // Attention scratch per worker: a block of query rows (tokens x the query heads of one KV head),
  // their scores against the visible positions and their outputs (attention_block_rows).
  int attention_rows = 0;
  LargeBuffer scores;             // [threads, attention_rows, context]
  LargeBuffer attention_queries;  // [threads, attention_rows, head_dim]
  LargeBuffer attention_out;      // [threads, attention_rows, head_dim]
  LargeBuffer attention_widened;  // int8 cache: [threads, 256, head_dim] keys or a value block as floats
  LargeBuffer logits;  // [vocab] logits of the last token
  // The KV cache in elements of kv_type — float (F32), FP16 bits (F16, read as uint16_t) or int8_t
  // (Int8, read through the scales below). Keys: [n_layers, n_kv_heads, context, head_dim].
  // Values: [n_layers, n_kv_heads, value_blocks(context), head_dim, kValueBlock], a block's
  // positions side by side per channel (forward.cpp key_index, value_index).
  KvType kv_type = KvType::F32;
  LargeBuffer key_cache;
  LargeBuffer value_cache;
  LargeBuffer key_scales;    // Int8 only: [n_layers, context, n_kv_heads] absmax / 127 per head
  LargeBuffer value_scales;  // Int8 only: [n_layers, context, n_kv_heads]
  std::vector<float> sampler_probs;  // [vocab]
  std::vector<int> sampler_ids;      // [vocab]
};

// Runs tokens[0..n) at positions n_past.. through the model. Writes the last token's logits to
// state.logits, or every token's logits to all_logits ([n, vocab]) when it is not null.
// n <= state.max_batch, n_past + n <= state.context.
void forward(Model::Impl& model, RunState& state, const int* tokens, int n, int n_past,
             float* all_logits);

bool allocate_run_state(const Config& config, int context, int max_batch, int threads,
                        KvType kv_type, RunState* state);
// (Re)sizes the attention scratch for `threads` workers (state's context and max_batch set).
bool allocate_attention_scratch(const Config& config, int threads, RunState* state);
// After a prefill: gives the pages of the batch-sized activation buffers back to the OS, so that
// decode (one row of each) keeps only what it touches resident. Contents become undefined.
void release_batch_scratch(RunState* state);
// Bytes of one session's KV cache (keys, values and, for Int8, their scales).
uint64_t kv_cache_bytes(const Config& config, int context, KvType kv_type);

}  // namespace magnetar
