// The transformer forward pass for every family of the architecture table (Llama/Mistral, Gemma 1-3,
// Qwen 2/3, Phi-3), as Hugging Face transformers defines them. One function handles a batch of tokens: a prefill batch goes through the
// matrix–matrix kernels, a single decode token through the matrix–vector ones. The hot path
// allocates, logs and fails nothing: every buffer lives in RunState.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "model/model_impl.h"

namespace magnetar {

namespace {

// Multiply-adds of attention below which it runs on the calling thread alone.
constexpr int64_t kParallelAttentionMinWork = 1 << 16;

// y[n, w.rows] = x[n, w.cols] · wᵀ
void linear(ThreadPool& pool, const ops::Matrix& w, const float* x, int n, float* y) {
  if (n == 1)
    ops::matvec(pool, w, x, y);
  else
    ops::matmul(pool, w, x, n, y);
}

void add_in_place(float* dst, const float* src, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] += src[i];
}

void softcap_in_place(float* x, int64_t n, float cap) {
  for (int64_t i = 0; i < n; ++i) x[i] = cap * std::tanh(x[i] / cap);
}

struct AttentionJob {
  const Config* config;
  RunState* state;
  int layer, n_tokens, n_past;
};

// Int8 KV rows: each head's vector is stored as round(x / scale), scale = absmax / 127.
void quantize_kv_int8(const float* x, int n_heads, int head_dim, int8_t* q, float* scales) {
  for (int h = 0; h < n_heads; ++h) {
    const float* v = x + int64_t(h) * head_dim;
    float absmax = 0.0f;
    for (int i = 0; i < head_dim; ++i) absmax = std::max(absmax, std::fabs(v[i]));
    const float scale = absmax / 127.0f;
    const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
    scales[h] = scale;
    for (int i = 0; i < head_dim; ++i)
      q[int64_t(h) * head_dim + i] = static_cast<int8_t>(std::lrint(v[i] * inverse));
  }
}

// Writes one position's keys and values (kv_dim each) into the cache in its element type.
void store_kv(const Config& c, RunState& s, int layer, int pos, const float* key, const float* value) {
  const int64_t row = (int64_t(layer) * s.context + pos) * c.kv_dim;
  switch (s.kv_type) {
    case KvType::F32:
      std::memcpy(s.key_cache.get() + row, key, sizeof(float) * c.kv_dim);
      std::memcpy(s.value_cache.get() + row, value, sizeof(float) * c.kv_dim);
      break;
    case KvType::F16: {
      uint16_t* keys = reinterpret_cast<uint16_t*>(s.key_cache.get()) + row;
      uint16_t* values = reinterpret_cast<uint16_t*>(s.value_cache.get()) + row;
      for (int i = 0; i < c.kv_dim; ++i) {
        keys[i] = kernels::f32_to_f16_scalar(key[i]);
        values[i] = kernels::f32_to_f16_scalar(value[i]);
      }
      break;
    }
    case KvType::Int8: {
      const int64_t scale_row = (int64_t(layer) * s.context + pos) * c.n_kv_heads;
      quantize_kv_int8(key, c.n_kv_heads, c.head_dim, reinterpret_cast<int8_t*>(s.key_cache.get()) + row,
                       s.key_scales.get() + scale_row);
      quantize_kv_int8(value, c.n_kv_heads, c.head_dim, reinterpret_cast<int8_t*>(s.value_cache.get()) + row,
                       s.value_scales.get() + scale_row);
      break;
    }
  }
}

// Scores and weighted value sums over an F16 / Int8 cache, in scalar C++ (the compiler
// vectorises the inner loops). The F32 cache goes through the kernels instead.
float dot_kv(const float* q, const uint16_t* k, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += q[i] * kernels::f16_to_f32_scalar(k[i]);
  return sum;
}
float dot_kv(const float* q, const int8_t* k, int n) {
  float sum = 0.0f;
  for (int i = 0; i < n; ++i) sum += q[i] * static_cast<float>(k[i]);
  return sum;
}
void axpy_kv(float* out, const uint16_t* v, int n, float a) {
  for (int i = 0; i < n; ++i) out[i] += a * kernels::f16_to_f32_scalar(v[i]);
}
void axpy_kv(float* out, const int8_t* v, int n, float a) {
  for (int i = 0; i < n; ++i) out[i] += a * static_cast<float>(v[i]);
}

// One (token, head) pair: scores over the visible cache rows, softmax, weighted sum of values.
void attention_head(const AttentionJob& job, int t, int h, float* scores) {
  const Config& c = *job.config;
  const RunState& s = *job.state;
  const auto& k = kernels::active();
  const int hd = c.head_dim;
  const int qkv_stride = c.q_dim + 2 * c.kv_dim;
  const int kv_head = h / (c.n_heads / c.n_kv_heads);
  const int pos = job.n_past + t;
  const int start = c.layer_slides(job.layer) ? std::max(0, pos - c.sliding_window + 1) : 0;
  const float* q = s.qkv.get() + int64_t(t) * qkv_stride + int64_t(h) * hd;
  const int64_t layer_base = int64_t(job.layer) * s.context * c.kv_dim;
  const int64_t head_offset = layer_base + kv_head * hd;
  // Int8 scales of this head at cache row r: scales[r * n_kv_heads].
  const int64_t scale_offset = int64_t(job.layer) * s.context * c.n_kv_heads + kv_head;

  const int n_visible = pos - start + 1;
  for (int j = 0; j < n_visible; ++j) {
    const int64_t r = start + j;
    float d;
    switch (s.kv_type) {
      case KvType::F32: k.dot_f32(q, s.key_cache.get() + head_offset + r * c.kv_dim, hd, &d); break;
      case KvType::F16:
        d = dot_kv(q, reinterpret_cast<const uint16_t*>(s.key_cache.get()) + head_offset + r * c.kv_dim, hd);
        break;
      case KvType::Int8:
        d = dot_kv(q, reinterpret_cast<const int8_t*>(s.key_cache.get()) + head_offset + r * c.kv_dim, hd) *
            s.key_scales.get()[scale_offset + r * c.n_kv_heads];
        break;
    }
    d *= c.query_scale;
    if (c.attn_softcap > 0) d = c.attn_softcap * std::tanh(d / c.attn_softcap);
    scores[j] = d;
  }
  k.softmax(scores, n_visible);
  float* out = s.att.get() + int64_t(t) * c.q_dim + int64_t(h) * hd;
  std::memset(out, 0, sizeof(float) * hd);
  for (int j = 0; j < n_visible; ++j) {
    const int64_t r = start + j;
    switch (s.kv_type) {
      case KvType::F32: k.axpy_f32(out, s.value_cache.get() + head_offset + r * c.kv_dim, hd, &scores[j]); break;
      case KvType::F16:
        axpy_kv(out, reinterpret_cast<const uint16_t*>(s.value_cache.get()) + head_offset + r * c.kv_dim, hd,
                scores[j]);
        break;
      case KvType::Int8:
        axpy_kv(out, reinterpret_cast<const int8_t*>(s.value_cache.get()) + head_offset + r * c.kv_dim, hd,
                scores[j] * s.value_scales.get()[scale_offset + r * c.n_kv_heads]);
        break;
    }
  }
}

}  // namespace

void forward(Model::Impl& m, RunState& s, const int* tokens, int n, int n_past,
             float* all_logits) {
  const Config& c = m.config;
  const Weights& w = m.weights;
  ThreadPool& pool = *m.pool;
  const auto& k = kernels::active();
  const int dim = c.dim, hidden = c.hidden_dim, hd = c.head_dim, half = hd / 2;
  const int qkv_stride = c.q_dim + 2 * c.kv_dim;
  float* x = s.x.get();
  float* xb = s.xb.get();
  float* qkv = s.qkv.get();
  float* gate_up = s.gate_up.get();
  float* act = s.hidden.get();
  const float eps = c.norm_eps;

  // Token embeddings (Gemma scales them by sqrt(dim)).
  for (int t = 0; t < n; ++t) {
    ops::embedding_row(w.tok_embeddings, tokens[t], x + int64_t(t) * dim);
    if (c.embed_scale_sqrt_dim) {
      const float scale = std::sqrt(static_cast<float>(dim));
      for (int i = 0; i < dim; ++i) x[int64_t(t) * dim + i] *= scale;
    }
  }

  for (int l = 0; l < c.n_layers; ++l) {
    const LayerWeights& L = w.layers[l];

    // --- attention block ---
    for (int t = 0; t < n; ++t)
      k.rmsnorm(xb + int64_t(t) * dim, x + int64_t(t) * dim, L.attn_norm, dim, &eps);
    linear(pool, L.wqkv, xb, n, qkv);
    const bool local = c.local_rope && c.layer_slides(l);
    const float* rope_cos = local ? m.rope_local_cos.data() : m.rope_cos.data();
    const float* rope_sin = local ? m.rope_local_sin.data() : m.rope_sin.data();
    for (int t = 0; t < n; ++t) {
      const int pos = n_past + t;
      float* q = qkv + int64_t(t) * qkv_stride;
      float* key = q + c.q_dim;
      float* value = key + c.kv_dim;
      if (L.bqkv) add_in_place(q, L.bqkv, qkv_stride);
      if (L.q_norm) {  // per-head RMSNorm before RoPE
        for (int h = 0; h < c.n_heads; ++h) k.rmsnorm(q + h * hd, q + h * hd, L.q_norm, hd, &eps);
        for (int h = 0; h < c.n_kv_heads; ++h) k.rmsnorm(key + h * hd, key + h * hd, L.k_norm, hd, &eps);
      }
      const float* cos = rope_cos + int64_t(pos) * half;
      const float* sin = rope_sin + int64_t(pos) * half;
      k.rope(q, c.n_heads, hd, cos, sin);
      k.rope(key, c.n_kv_heads, hd, cos, sin);
      store_kv(c, s, l, pos, key, value);
    }
    AttentionJob job{&c, &s, l, n, n_past};
    auto attend = [&](int thread, int n_threads) {
      int64_t begin, end;
      ThreadPool::split(int64_t(n) * c.n_heads, 1, thread, n_threads, &begin, &end);
      float* scores = s.scores.get() + int64_t(thread) * s.context;
      for (int64_t i = begin; i < end; ++i)
        attention_head(job, static_cast<int>(i / c.n_heads), static_cast<int>(i % c.n_heads),
                       scores);
    };
    // Waking the workers costs more than a little attention (tiny models, short contexts).
    const int64_t attention_work = int64_t(n) * c.n_heads * (n_past + n) * hd;
    if (attention_work < kParallelAttentionMinWork)
      attend(0, 1);
    else
      pool.parallel(attend);
    linear(pool, L.wo, s.att.get(), n, xb);
    if (L.post_attn_norm)
      for (int t = 0; t < n; ++t)
        k.rmsnorm(xb + int64_t(t) * dim, xb + int64_t(t) * dim, L.post_attn_norm, dim, &eps);
    add_in_place(x, xb, int64_t(n) * dim);

    // --- feed-forward block ---
    for (int t = 0; t < n; ++t)
      k.rmsnorm(xb + int64_t(t) * dim, x + int64_t(t) * dim, L.ffn_norm, dim, &eps);
    linear(pool, L.w_gate_up, xb, n, gate_up);
    const kernels::GatedActFn gated =
        c.activation == format::Activation::GeluTanh ? k.gelu_tanh_mul : k.silu_mul;
    for (int t = 0; t < n; ++t) {
      float* g = gate_up + int64_t(t) * 2 * hidden;
      gated(g, g + hidden, hidden);
      std::memcpy(act + int64_t(t) * hidden, g, sizeof(float) * hidden);
    }
    linear(pool, L.w_down, act, n, xb);
    if (L.post_ffn_norm)
      for (int t = 0; t < n; ++t)
        k.rmsnorm(xb + int64_t(t) * dim, xb + int64_t(t) * dim, L.post_ffn_norm, dim, &eps);
    add_in_place(x, xb, int64_t(n) * dim);
  }

  // --- final norm and LM head ---
  if (all_logits) {
    for (int t = 0; t < n; ++t)
      k.rmsnorm(xb + int64_t(t) * dim, x + int64_t(t) * dim, w.output_norm, dim, &eps);
    linear(pool, w.output, xb, n, all_logits);
    if (c.final_softcap > 0) softcap_in_place(all_logits, int64_t(n) * c.vocab_size, c.final_softcap);
  } else {
    const int64_t last = int64_t(n - 1) * dim;
    k.rmsnorm(xb, x + last, w.output_norm, dim, &eps);
    ops::matvec(pool, w.output, xb, s.logits.get());
    if (c.final_softcap > 0) softcap_in_place(s.logits.get(), c.vocab_size, c.final_softcap);
  }
}

uint64_t kv_cache_bytes(const Config& c, int context, KvType kv_type) {
  const uint64_t elements = uint64_t(c.n_layers) * uint64_t(context) * uint64_t(c.kv_dim);
  const uint64_t vectors = uint64_t(c.n_layers) * uint64_t(context) * uint64_t(c.n_kv_heads);
  switch (kv_type) {
    case KvType::F32: return 2 * elements * sizeof(float);
    case KvType::F16: return 2 * elements * sizeof(uint16_t);
    case KvType::Int8: return 2 * (elements * sizeof(int8_t) + vectors * sizeof(float));
  }
  return 0;
}

uint64_t kv_cache_bytes(int n_layers, int n_kv_heads, int head_dim, int context, KvType type) {
  Config c;
  c.n_layers = n_layers;
  c.n_kv_heads = n_kv_heads;
  c.head_dim = head_dim;
  c.kv_dim = n_kv_heads * head_dim;
  return kv_cache_bytes(c, context, type);
}

bool allocate_run_state(const Config& c, int context, int max_batch, int threads, KvType kv_type,
                        RunState* s) {
  s->max_batch = max_batch;
  s->context = context;
  s->kv_type = kv_type;
  const uint64_t b = static_cast<uint64_t>(max_batch);
  const uint64_t elements = uint64_t(c.n_layers) * uint64_t(context) * uint64_t(c.kv_dim);
  // Cache buffers are counted in floats: round the narrower element types up.
  const uint64_t bytes_per_element = kv_type == KvType::F32 ? 4 : kv_type == KvType::F16 ? 2 : 1;
  const uint64_t cache = (elements * bytes_per_element + sizeof(float) - 1) / sizeof(float);
  const uint64_t scales = kv_type == KvType::Int8 ? uint64_t(c.n_layers) * uint64_t(context) * c.n_kv_heads : 0;
  constexpr bool kSmallPages = false;  // batch buffers: decode touches one row (release_batch_scratch)
  bool ok = s->x.allocate(b * c.dim, kSmallPages) && s->xb.allocate(b * c.dim, kSmallPages) &&
            s->qkv.allocate(b * (c.q_dim + 2 * c.kv_dim), kSmallPages) &&
            s->att.allocate(b * c.q_dim, kSmallPages) &&
            s->gate_up.allocate(b * 2 * c.hidden_dim, kSmallPages) &&
            s->hidden.allocate(b * c.hidden_dim, kSmallPages) &&
            s->scores.allocate(uint64_t(threads) * context) && s->logits.allocate(c.vocab_size) &&
            s->key_cache.allocate(cache) && s->value_cache.allocate(cache) &&
            (scales == 0 || (s->key_scales.allocate(scales) && s->value_scales.allocate(scales)));
  if (!ok) return false;
  s->sampler_probs.resize(c.vocab_size);
  s->sampler_ids.resize(c.vocab_size);
  return true;
}

void release_batch_scratch(RunState* s) {
  for (LargeBuffer* b : {&s->x, &s->xb, &s->qkv, &s->att, &s->gate_up, &s->hidden}) b->discard();
}

}  // namespace magnetar
