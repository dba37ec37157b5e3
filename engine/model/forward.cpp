// The transformer forward pass for every family of the architecture table (Llama/Mistral, Gemma 1-3,
// Qwen 2/3, Phi-3), as Hugging Face transformers defines them. One function handles a batch of
// tokens: a prefill batch goes through the matrix–matrix kernels, a single decode token through the
// matrix–vector ones; attention goes by blocks of query rows against one KV head's cache, as matrix
// products too. The hot path allocates, logs and fails nothing: every buffer lives in RunState.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "model/model_impl.h"

namespace magnetar {

namespace {

// Multiply-adds of attention below which it runs on the calling thread alone.
constexpr int64_t kParallelAttentionMinWork = 1 << 16;
// Work units of an attention step below which a KV head's query heads are split between units.
constexpr int64_t kMinAttentionUnits = 4;
// Int8 keys widened to floats per matrix product (kDequantKeys x head_dim floats per worker; also
// holds a widened value block, kValueBlock <= kDequantKeys).
constexpr int kDequantKeys = 256;
static_assert(kValueBlock <= kDequantKeys, "a widened value block fits the widened keys' scratch");

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

// Int8 KV vectors: each head's vector is stored as round(x / scale), scale = absmax / 127; element i
// of head h goes to q[h * head_stride + i * stride] (the cache layouts: key_index, value_index).
void quantize_kv_int8(const float* x, int n_heads, int head_dim, int8_t* q, int64_t head_stride, int64_t stride,
                      float* scales) {
  for (int h = 0; h < n_heads; ++h) {
    const float* v = x + int64_t(h) * head_dim;
    float absmax = 0.0f;
    for (int i = 0; i < head_dim; ++i) absmax = std::max(absmax, std::fabs(v[i]));
    const float scale = absmax / 127.0f;
    const float inverse = scale > 0.0f ? 1.0f / scale : 0.0f;
    scales[h] = scale;
    for (int i = 0; i < head_dim; ++i)
      q[h * head_stride + i * stride] = static_cast<int8_t>(std::lrint(v[i] * inverse));
  }
}

// Element index of key channel 0 of KV head kv_head at position pos: the keys are head-major
// ([n_layers, n_kv_heads, context, head_dim]), so a head's keys are one contiguous stream and its
// pages are touched only as the context grows.
int64_t key_index(const Config& c, const RunState& s, int layer, int64_t pos, int kv_head) {
  return ((int64_t(layer) * c.n_kv_heads + kv_head) * s.context + pos) * c.head_dim;
}

// Element index of value channel `channel` (< kv_dim) at position pos: head-major like the keys,
// each head's positions in blocks of kValueBlock, each block channel-major ([head_dim,
// kValueBlock]) — the weighted sum of a head's values over a block is one matrix product with the
// block's channels as the weight rows, and a head's blocks follow each other, one stream.
int64_t value_index(const Config& c, const RunState& s, int layer, int64_t pos, int64_t channel) {
  const int64_t head = channel / c.head_dim;
  const int64_t block = (int64_t(layer) * c.n_kv_heads + head) * value_blocks(s.context) + pos / kValueBlock;
  return (block * c.head_dim + channel % c.head_dim) * kValueBlock + pos % kValueBlock;
}

// Writes one position's keys and values into the cache in its element type.
void store_kv(const Config& c, RunState& s, int layer, int pos, const float* key, const float* value) {
  const int hd = c.head_dim;
  const int64_t key_head_stride = int64_t(s.context) * hd;  // key_index(h + 1) - key_index(h)
  const int64_t keys = key_index(c, s, layer, pos, 0);
  const int64_t values = value_index(c, s, layer, pos, 0);
  const int64_t value_head_stride = int64_t(value_blocks(s.context)) * hd * kValueBlock;  // per KV head, as above
  switch (s.kv_type) {
    case KvType::F32:
      for (int h = 0; h < c.n_kv_heads; ++h)
        std::memcpy(s.key_cache.get() + keys + h * key_head_stride, key + int64_t(h) * hd, sizeof(float) * hd);
      for (int h = 0; h < c.n_kv_heads; ++h)
        for (int i = 0; i < hd; ++i)
          s.value_cache.get()[values + h * value_head_stride + int64_t(i) * kValueBlock] = value[h * hd + i];
      break;
    case KvType::F16: {
      auto* key_cache = reinterpret_cast<uint16_t*>(s.key_cache.get());
      auto* value_cache = reinterpret_cast<uint16_t*>(s.value_cache.get());
      for (int h = 0; h < c.n_kv_heads; ++h)
        for (int i = 0; i < hd; ++i)
          key_cache[keys + h * key_head_stride + i] = kernels::f32_to_f16_scalar(key[int64_t(h) * hd + i]);
      for (int h = 0; h < c.n_kv_heads; ++h)
        for (int i = 0; i < hd; ++i)
          value_cache[values + h * value_head_stride + int64_t(i) * kValueBlock] =
              kernels::f32_to_f16_scalar(value[h * hd + i]);
      break;
    }
    case KvType::Int8: {
      const int64_t scale_row = (int64_t(layer) * s.context + pos) * c.n_kv_heads;
      quantize_kv_int8(key, c.n_kv_heads, hd, reinterpret_cast<int8_t*>(s.key_cache.get()) + keys, key_head_stride,
                       1, s.key_scales.get() + scale_row);
      quantize_kv_int8(value, c.n_kv_heads, hd, reinterpret_cast<int8_t*>(s.value_cache.get()) + values,
                       value_head_stride, kValueBlock, s.value_scales.get() + scale_row);
      break;
    }
  }
}

// Query rows per attention block: many, so that each key and value read serves many queries, but
// few enough that their scores (rows x context floats) stay about 4 MiB per worker. A multiple of
// the query heads per KV head (whole tokens); at most a prefill batch of tokens.
int attention_block_rows(const Config& c, int context, int max_batch) {
  const int group = c.n_heads / c.n_kv_heads;
  const int64_t by_memory = (int64_t{1} << 20) / std::max(context, 1);
  const int64_t tokens = std::clamp<int64_t>(by_memory / group, 1, std::max(max_batch, 1));
  return static_cast<int>(tokens * group);
}

// Tokens [t0, t1) (a block of a prefill, or the one decode token) against one KV head, query heads
// [h0, h1) of its group at once: the scores of every query row against the keys the block sees as
// one matrix–matrix product (the head's keys as the weight rows), masked (causal, sliding window)
// and soft-maxed per row, then the weighted sums of values as one product per value block (the
// block's channels as the weight rows). The int8 cache goes through the F32 kernels too: its keys
// widened kDequantKeys at a time and its value blocks widened with their scales into `widened`
// (the key scales multiply the scores).
void attention_block(const AttentionJob& job, int t0, int t1, int kv_head, int h0, int h1, float* queries,
                     float* scores, float* out, float* widened) {
  const Config& c = *job.config;
  const RunState& s = *job.state;
  const auto& k = kernels::active();
  const int hd = c.head_dim;
  const int group = h1 - h0;  // query heads kv_head * (n_heads / n_kv_heads) + [h0, h1)
  const int first_head = kv_head * (c.n_heads / c.n_kv_heads) + h0;
  const int qkv_stride = c.q_dim + 2 * c.kv_dim;
  const bool slides = c.layer_slides(job.layer);
  auto first_visible = [&](int pos) { return slides ? std::max(0, pos - c.sliding_window + 1) : 0; };
  const int k0 = first_visible(job.n_past + t0), k1 = job.n_past + t1;  // keys [k0, k1)
  const int n_keys = k1 - k0;
  const int rows = (t1 - t0) * group;  // row (t - t0) * group + g: token t, query head first_head + g
  for (int t = t0; t < t1; ++t)
    std::memcpy(queries + int64_t(t - t0) * group * hd,
                s.qkv.get() + int64_t(t) * qkv_stride + int64_t(first_head) * hd, sizeof(float) * group * hd);

  const int64_t keys = key_index(c, s, job.layer, k0, kv_head);
  // The int8 scales of this head at position r: scales[scale_offset + r * n_kv_heads].
  const int64_t scale_offset = int64_t(job.layer) * s.context * c.n_kv_heads + kv_head;
  switch (s.kv_type) {
    case KvType::F32:
      k.matmul_f32(s.key_cache.get() + keys, hd, queries, hd, scores, n_keys, n_keys, hd, rows, 0);
      break;
    case KvType::F16:
      k.matmul_f16(reinterpret_cast<const uint16_t*>(s.key_cache.get()) + keys, hd, queries, hd, scores, n_keys,
                   n_keys, hd, rows, 0);
      break;
    case KvType::Int8:
      for (int j0 = 0; j0 < n_keys; j0 += kDequantKeys) {
        const int n = std::min(kDequantKeys, n_keys - j0);
        const int8_t* q8 = reinterpret_cast<const int8_t*>(s.key_cache.get()) + keys + int64_t(j0) * hd;
        for (int64_t i = 0; i < int64_t(n) * hd; ++i) widened[i] = static_cast<float>(q8[i]);
        k.matmul_f32(widened, hd, queries, hd, scores + j0, n_keys, n, hd, rows, 0);
      }
      break;
  }
  for (int t = t0; t < t1; ++t) {
    const int pos = job.n_past + t;
    const int lo = first_visible(pos) - k0, hi = pos - k0 + 1;  // visible: [lo, hi)
    for (int g = 0; g < group; ++g) {
      float* row = scores + int64_t((t - t0) * group + g) * n_keys;
      if (s.kv_type == KvType::Int8)
        for (int j = lo; j < hi; ++j) row[j] *= s.key_scales.get()[scale_offset + int64_t(k0 + j) * c.n_kv_heads];
      for (int j = lo; j < hi; ++j) {
        float d = row[j] * c.query_scale;
        if (c.attn_softcap > 0) d = c.attn_softcap * std::tanh(d / c.attn_softcap);
        row[j] = d;
      }
      k.softmax(row + lo, hi - lo);
      std::fill(row, row + lo, 0.0f);
      std::fill(row + hi, row + n_keys, 0.0f);
    }
  }

  for (int j0 = k0; j0 < k1;) {
    const int n = std::min(kValueBlock - j0 % kValueBlock, k1 - j0);  // positions in this block
    const int64_t at = value_index(c, s, job.layer, j0, int64_t(kv_head) * hd);
    const float* p = scores + (j0 - k0);
    switch (s.kv_type) {
      case KvType::F32:
        k.matmul_f32(s.value_cache.get() + at, kValueBlock, p, n_keys, out, hd, hd, n, rows, j0 > k0);
        break;
      case KvType::F16:
        k.matmul_f16(reinterpret_cast<const uint16_t*>(s.value_cache.get()) + at, kValueBlock, p, n_keys, out, hd,
                     hd, n, rows, j0 > k0);
        break;
      case KvType::Int8: {
        const int8_t* q8 = reinterpret_cast<const int8_t*>(s.value_cache.get()) + at;
        const float* scales = s.value_scales.get() + scale_offset + int64_t(j0) * c.n_kv_heads;
        for (int i = 0; i < hd; ++i)
          for (int j = 0; j < n; ++j)
            widened[i * n + j] = static_cast<float>(q8[int64_t(i) * kValueBlock + j]) * scales[int64_t(j) * c.n_kv_heads];
        k.matmul_f32(widened, n, p, n_keys, out, hd, hd, n, rows, j0 > k0);
        break;
      }
    }
    j0 += n;
  }
  for (int t = t0; t < t1; ++t)
    std::memcpy(s.att.get() + int64_t(t) * c.q_dim + int64_t(first_head) * hd,
                out + int64_t(t - t0) * group * hd, sizeof(float) * group * hd);
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
    // By blocks of tokens x one KV head (attention_block).
    const int group = c.n_heads / c.n_kv_heads;
    const int block_tokens = s.attention_rows / group;
    const int64_t n_blocks = (n + block_tokens - 1) / block_tokens;
    // Fewer (block, KV head) pairs than kMinAttentionUnits (a decode token of a model with one or
    // two KV heads): each pair's query heads go in `splits` parts, so more threads share the work.
    // A function of the shapes alone, never of the thread count: the logits stay the same for
    // every thread count.
    const int64_t pairs = n_blocks * c.n_kv_heads;
    const int splits = static_cast<int>(std::clamp<int64_t>((kMinAttentionUnits + pairs - 1) / pairs, 1, group));
    const int split_heads = (group + splits - 1) / splits;
    auto attend = [&](int thread, int n_threads) {
      float* scores = s.scores.get() + int64_t(thread) * s.attention_rows * s.context;
      float* queries = s.attention_queries.get() + int64_t(thread) * s.attention_rows * hd;
      float* out = s.attention_out.get() + int64_t(thread) * s.attention_rows * hd;
      float* widened = s.attention_widened.get() + int64_t(thread) * kDequantKeys * hd;
      int64_t begin, end;
      ThreadPool::split(pairs * splits, 1, thread, n_threads, &begin, &end);
      for (int64_t i = begin; i < end; ++i) {
        const int t0 = static_cast<int>(i / (int64_t(c.n_kv_heads) * splits)) * block_tokens;
        const int kv_head = static_cast<int>(i / splits % c.n_kv_heads);
        const int h0 = static_cast<int>(i % splits) * split_heads;
        if (h0 < group)
          attention_block(job, t0, std::min(n, t0 + block_tokens), kv_head, h0, std::min(group, h0 + split_heads),
                          queries, scores, out, widened);
      }
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
  const uint64_t keys = uint64_t(c.n_layers) * uint64_t(context) * uint64_t(c.kv_dim);
  const uint64_t values = uint64_t(c.n_layers) * uint64_t(value_blocks(context)) * kValueBlock * uint64_t(c.kv_dim);
  const uint64_t vectors = uint64_t(c.n_layers) * uint64_t(context) * uint64_t(c.n_kv_heads);
  switch (kv_type) {
    case KvType::F32: return (keys + values) * sizeof(float);
    case KvType::F16: return (keys + values) * sizeof(uint16_t);
    case KvType::Int8: return keys + values + 2 * vectors * sizeof(float);
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
  const uint64_t keys = uint64_t(c.n_layers) * uint64_t(context) * uint64_t(c.kv_dim);
  const uint64_t values = uint64_t(c.n_layers) * uint64_t(value_blocks(context)) * kValueBlock * uint64_t(c.kv_dim);
  // Cache buffers are counted in floats: round the narrower element types up.
  const uint64_t bytes_per_element = kv_type == KvType::F32 ? 4 : kv_type == KvType::F16 ? 2 : 1;
  const uint64_t key_floats = (keys * bytes_per_element + sizeof(float) - 1) / sizeof(float);
  const uint64_t value_floats = (values * bytes_per_element + sizeof(float) - 1) / sizeof(float);
  const uint64_t scales = kv_type == KvType::Int8 ? uint64_t(c.n_layers) * uint64_t(context) * c.n_kv_heads : 0;
  constexpr bool kSmallPages = false;  // batch buffers: decode touches one row (release_batch_scratch)
  bool ok = s->x.allocate(b * c.dim, kSmallPages) && s->xb.allocate(b * c.dim, kSmallPages) &&
            s->qkv.allocate(b * (c.q_dim + 2 * c.kv_dim), kSmallPages) &&
            s->att.allocate(b * c.q_dim, kSmallPages) &&
            s->gate_up.allocate(b * 2 * c.hidden_dim, kSmallPages) &&
            s->hidden.allocate(b * c.hidden_dim, kSmallPages) &&
            allocate_attention_scratch(c, threads, s) && s->logits.allocate(c.vocab_size) &&
            s->key_cache.allocate(key_floats) && s->value_cache.allocate(value_floats) &&
            (scales == 0 || (s->key_scales.allocate(scales) && s->value_scales.allocate(scales)));
  if (!ok) return false;
  s->sampler_probs.resize(c.vocab_size);
  s->sampler_ids.resize(c.vocab_size);
  return true;
}

bool allocate_attention_scratch(const Config& c, int threads, RunState* s) {
  s->attention_rows = attention_block_rows(c, s->context, s->max_batch);
  const uint64_t rows = uint64_t(threads) * uint64_t(s->attention_rows);
  return s->scores.allocate(rows * uint64_t(s->context)) && s->attention_queries.allocate(rows * c.head_dim) &&
         s->attention_out.allocate(rows * c.head_dim) &&
         s->attention_widened.allocate(uint64_t(threads) * kDequantKeys * c.head_dim);
}

void release_batch_scratch(RunState* s) {
  for (LargeBuffer* b : {&s->x, &s->xb, &s->qkv, &s->att, &s->gate_up, &s->hidden}) b->discard();
}

}  // namespace magnetar
