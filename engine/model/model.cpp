// Model: loading and validating a model file, building the weight views, tokenizer and RoPE
// tables; tokenization and chat-template helpers of the public API.
#include <algorithm>
#include <cmath>

#include "format/architecture.h"
#include "kernels/kernels.h"
#include "magnetar/tuning.h"
#include "model/model_impl.h"
#include "ops/quant_ops.h"

namespace magnetar {

const char* architecture_name(Architecture arch) {
  const format::ArchitectureTraits* a = format::find_architecture(arch);
  return a ? a->name : "unknown";
}

const char* architecture_display_name(Architecture arch) {
  const format::ArchitectureTraits* a = format::find_architecture(arch);
  return a ? a->display_name : "unknown";
}

std::string supported_model_families() { return format::supported_families(); }

const char* kv_type_name(KvType type) {
  switch (type) {
    case KvType::F32: return "f32";
    case KvType::F16: return "f16";
    case KvType::Int8: return "int8";
  }
  return "unknown";
}

bool parse_kv_type(const std::string& name, KvType* out) {
  for (KvType t : {KvType::F32, KvType::F16, KvType::Int8})
    if (name == kv_type_name(t)) {
      *out = t;
      return true;
    }
  return false;
}

const char* chat_template_name(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::None: return "none (plain completion)";
    case ChatTemplate::Llama2: return "llama-2-chat";
    case ChatTemplate::Gemma: return "gemma-it";
  }
  return "unknown";
}

const char* stop_reason_name(StopReason r) {
  switch (r) {
    case StopReason::None: return "none";
    case StopReason::EndOfGeneration: return "end of generation";
    case StopReason::MaxTokens: return "token limit";
    case StopReason::Cancelled: return "stopped";
    case StopReason::ContextFull: return "context full";
    case StopReason::Error: return "error";
  }
  return "unknown";
}

namespace {

constexpr int kDefaultContextCap = 4096;

Config config_from_header(const format::FileHeader& h) {
  Config c;
  c.arch = static_cast<Architecture>(h.architecture);
  c.n_layers = static_cast<int>(h.n_layers);
  c.dim = static_cast<int>(h.dim);
  c.hidden_dim = static_cast<int>(h.hidden_dim);
  c.n_heads = static_cast<int>(h.n_heads);
  c.n_kv_heads = static_cast<int>(h.n_kv_heads);
  c.head_dim = static_cast<int>(h.head_dim);
  c.vocab_size = static_cast<int>(h.vocab_size);
  c.max_context = static_cast<int>(h.max_context);
  c.q_dim = c.n_heads * c.head_dim;
  c.kv_dim = c.n_kv_heads * c.head_dim;
  c.norm_eps = h.norm_eps;
  c.rope_theta = h.rope_theta;
  c.query_scale = h.query_scale;
  c.attn_softcap = h.attn_softcap;
  c.final_softcap = h.final_softcap;
  c.sliding_window = static_cast<int>(h.sliding_window);
  c.sliding_period = static_cast<int>(h.sliding_window_period);
  c.embed_scale_sqrt_dim = (h.flags & format::kFlagEmbedScaleSqrtDim) != 0;
  c.post_norms = (h.flags & format::kFlagPostNorms) != 0;
  c.tied_embeddings = (h.flags & format::kFlagTiedEmbeddings) != 0;
  c.activation = static_cast<format::Activation>(h.activation);
  const format::ArchitectureTraits& a = *format::find_architecture(c.arch);  // checked by the reader
  c.qkv_bias = a.qkv_bias;
  c.qk_norm = a.qk_norm;
  c.local_rope = h.rope_local_theta > 0;
  return c;
}

// RoPE inverse frequencies θ^(−2i/d) as transformers' modeling_rope_utils computes them, with the
// header's scaling: linear divides every frequency by the factor; llama3 keeps short wavelengths,
// divides long ones by the factor and blends in between.
// A rope_freqs tensor (llama.cpp's factors) divides the scaled frequencies further.
std::vector<double> rope_inverse_frequencies(const format::FileHeader& h, float theta, bool scaled,
                                             const float* freq_factors) {
  const int half = int(h.head_dim) / 2;
  std::vector<double> inv(half);
  for (int i = 0; i < half; ++i) inv[i] = 1.0 / std::pow(double(theta), (2.0 * i) / h.head_dim);
  if (scaled && freq_factors)
    for (int i = 0; i < half; ++i) inv[i] /= double(freq_factors[i]);
  const auto scaling = static_cast<format::RopeScaling>(h.rope_scaling);
  if (!scaled || scaling == format::RopeScaling::None) return inv;
  const double factor = h.rope_scaling_factor;
  if (scaling == format::RopeScaling::Linear) {
    for (double& f : inv) f /= factor;
    return inv;
  }
  const double low = h.rope_low_freq_factor, high = h.rope_high_freq_factor;
  const double original = h.rope_original_context;
  const double low_freq_wavelen = original / low, high_freq_wavelen = original / high;
  constexpr double kPi = 3.14159265358979323846;
  for (double& f : inv) {
    const double wavelen = 2 * kPi / f;
    if (wavelen < high_freq_wavelen) continue;
    if (wavelen > low_freq_wavelen) {
      f /= factor;
      continue;
    }
    const double smooth = (original / wavelen - low) / (high - low);
    f = (1 - smooth) * f / factor + smooth * f;
  }
  return inv;
}

// cos/sin tables [context, head_dim / 2]: frequencies rounded to float, angles in float, as
// transformers does in float32.
void fill_rope_table(const std::vector<double>& inv_freq, int context, std::vector<float>* cos_table,
                     std::vector<float>* sin_table) {
  const size_t half = inv_freq.size();
  cos_table->resize(size_t(context) * half);
  sin_table->resize(size_t(context) * half);
  for (size_t i = 0; i < half; ++i) {
    const float f = static_cast<float>(inv_freq[i]);
    for (int pos = 0; pos < context; ++pos) {
      const float angle = static_cast<float>(pos) * f;
      (*cos_table)[size_t(pos) * half + i] = std::cos(angle);
      (*sin_table)[size_t(pos) * half + i] = std::sin(angle);
    }
  }
}

ops::Matrix matrix_of(const format::TensorView& t) {
  ops::Matrix m;
  m.data = t.data;
  m.dtype = t.dtype;
  m.rows = static_cast<int64_t>(t.rows);
  m.cols = static_cast<int64_t>(t.cols);
  return m;
}

// A fused matrix stored as parts of different types (format::fused_parts) as one ops::Matrix.
ops::Matrix matrix_of_parts(const std::vector<const format::TensorView*>& parts) {
  ops::Matrix m = matrix_of(*parts[0]);
  m.rows = 0;
  m.n_parts = int(parts.size());
  for (size_t i = 0; i < parts.size(); ++i) {
    m.parts[i] = {parts[i]->data, parts[i]->dtype, int64_t(parts[i]->rows), false};
    m.rows += int64_t(parts[i]->rows);
  }
  return m;
}

Status build_weights(const format::ModelFileView& v, const Config& c, Weights* w) {
  w->layers.assign(size_t(c.n_layers), LayerWeights{});
  for (const format::TensorSpec& spec : format::model_tensors(v.header)) {
    const format::TensorView* t = v.find(spec.name);
    if (spec.n_dims == 1) {
      if (!t) return Status::error("missing tensor '" + spec.name + "'");
      const float* values = reinterpret_cast<const float*>(t->data);  // the reader checked: F32
      LayerWeights* L = spec.layer >= 0 ? &w->layers[size_t(spec.layer)] : nullptr;
      switch (spec.role) {
        case format::TensorRole::OutputNorm: w->output_norm = values; break;
        case format::TensorRole::RopeFreqs: w->rope_freqs = values; break;
        case format::TensorRole::AttnNorm: L->attn_norm = values; break;
        case format::TensorRole::Bqkv: L->bqkv = values; break;
        case format::TensorRole::QNorm: L->q_norm = values; break;
        case format::TensorRole::KNorm: L->k_norm = values; break;
        case format::TensorRole::PostAttnNorm: L->post_attn_norm = values; break;
        case format::TensorRole::FfnNorm: L->ffn_norm = values; break;
        case format::TensorRole::PostFfnNorm: L->post_ffn_norm = values; break;
        default: return Status::error("tensor '" + spec.name + "' is not a vector");
      }
      continue;
    }
    ops::Matrix* m = nullptr;
    LayerWeights* L = spec.layer >= 0 ? &w->layers[size_t(spec.layer)] : nullptr;
    switch (spec.role) {
      case format::TensorRole::TokEmbeddings: m = &w->tok_embeddings; break;
      case format::TensorRole::Output: m = &w->output; break;
      case format::TensorRole::Wqkv: m = &L->wqkv; break;
      case format::TensorRole::Wo: m = &L->wo; break;
      case format::TensorRole::WGateUp: m = &L->w_gate_up; break;
      case format::TensorRole::WDown: m = &L->w_down; break;
      default: return Status::error("tensor '" + spec.name + "' is not a matrix");
    }
    if (t) {
      *m = matrix_of(*t);
      continue;
    }
    // A fused matrix stored as its parts, each in its own type (a mixed-type GGUF import).
    std::vector<const format::TensorView*> parts;
    for (const std::string& part : format::fused_parts(spec.name)) parts.push_back(v.find(part));
    if (parts.empty() || std::count(parts.begin(), parts.end(), nullptr) > 0)
      return Status::error("missing tensor '" + spec.name + "'");
    *m = matrix_of_parts(parts);
  }
  if (c.tied_embeddings) w->output = w->tok_embeddings;
  return Status::ok();
}

// Read mode owns its copy of the weights: lay the wide F16/F32 matrices out in column stripes
// and the Q8_0/Q4_0 ones in x16 row tiles, which a decode pass reads near the bandwidth ceiling
// (ops/ops.h, kernels/quant.h). A mapped file keeps the plain layout. The embedding table is
// striped only when it is also the LM head (lookups read one row; tiles serve lookups too).
struct DecodeLayouts {
  int striped = 0, tiled = 0;
  int64_t stripe_cols = 0;
};
// What to lay out how: the built-in choices, or the decode tuning's (F16 only; F32 keeps the
// built-in stripes, which the calibration does not measure).
struct LayoutPlan {
  int64_t f16_stripe_cols = ops::kStripeCols;
  bool q8_0_tiles = true, q4_0_tiles = true;
  int64_t stripe_cols(format::DType t) const { return t == format::DType::F16 ? f16_stripe_cols : ops::kStripeCols; }
  bool tiles(const ops::Matrix& m) const {
    return m.dtype == format::DType::Q8_0 ? q8_0_tiles : m.dtype == format::DType::Q4_0 ? q4_0_tiles : true;
  }
};
LayoutPlan layout_plan(const LoadOptions& options) {
  LayoutPlan plan;
  if (!options.use_tuning) return plan;
  const DecodeTuning tuning = active_decode_tuning();
  plan.f16_stripe_cols = tuning.f16_stripe_cols;
  plan.q8_0_tiles = tuning.q8_0_x16_tiles;
  plan.q4_0_tiles = tuning.q4_0_x16_tiles;
  return plan;
}

DecodeLayouts lay_out_for_decode(uint8_t* writable, const uint8_t* file_data, const Config& c, const LayoutPlan& plan,
                                 Weights* w) {
  std::vector<uint8_t> scratch;  // the largest striped matrix or 16-row tile, freed on return
  DecodeLayouts done;
  auto lay_out = [&](ops::Matrix* m) {
    for (int p = 0; p < m->n_parts; ++p) {  // a mixed-type fused matrix: its parts one by one
      ops::Matrix part = ops::part_matrix(*m, p);
      if (!ops::wants_x16_tiles(part) || !plan.tiles(part)) continue;
      ops::tile_x16_in_place(&part, writable + (static_cast<const uint8_t*>(part.data) - file_data), &scratch);
      m->parts[size_t(p)].x16_tiles = true;
      ++done.tiled;
    }
    if (m->n_parts > 0) return;
    uint8_t* own = writable + (static_cast<const uint8_t*>(m->data) - file_data);
    const int64_t stripe_cols = plan.stripe_cols(m->dtype);
    if (ops::wants_x16_tiles(*m)) {
      if (!plan.tiles(*m)) return;
      ops::tile_x16_in_place(m, own, &scratch);
      ++done.tiled;
    } else if (ops::wants_stripes(*m, stripe_cols)) {
      ops::stripe_in_place(m, own, &scratch, stripe_cols);
      ++done.striped;
      done.stripe_cols = stripe_cols;
    }
  };
  for (LayerWeights& L : w->layers) {
    lay_out(&L.wqkv);
    lay_out(&L.wo);
    lay_out(&L.w_gate_up);
    lay_out(&L.w_down);
  }
  lay_out(&w->output);
  if (c.tied_embeddings) w->tok_embeddings = w->output;
  return done;
}

struct LoadProgress {
  const LoadOptions* options;
};

void report_load_progress(void* ctx, uint64_t done, uint64_t total) {
  auto* p = static_cast<LoadProgress*>(ctx);
  if (p->options->on_progress) p->options->on_progress(done, total);
}

}  // namespace

Model::Model(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Model::~Model() = default;

Status Model::load(const std::string& path, const LoadOptions& options,
                   std::unique_ptr<Model>* out) {
  const double t0 = platform::now_seconds();
  auto m = std::make_unique<Impl>();
  LoadProgress progress{&options};
  const auto mode = options.mode == LoadMode::Map ? platform::FileBuffer::Mode::Map
                                                  : platform::FileBuffer::Mode::Read;
  MAGNETAR_TRY(m->file.open(path, mode, report_load_progress, &progress, options.cancel));
  MAGNETAR_TRY(format::parse_model_file(m->file.data(), m->file.size(), &m->view).with_context(path));
  const format::FileHeader& h = m->view.header;
  m->config = config_from_header(h);
  Config& c = m->config;
  MAGNETAR_TRY(build_weights(m->view, c, &m->weights).with_context(path));
  DecodeLayouts layouts;
  if (uint8_t* writable = m->file.writable_data(); writable && options.decode_layouts)
    layouts = lay_out_for_decode(writable, m->file.data(), c, layout_plan(options), &m->weights);
  MAGNETAR_TRY(m->tokenizer.load(static_cast<TokenizerKind>(h.tokenizer_kind), m->view.tokenizer).with_context(path));
  if (m->tokenizer.vocab_size() > c.vocab_size)
    return Status::error(path + ": the tokenizer has " + std::to_string(m->tokenizer.vocab_size()) +
                         " pieces but the model only " + std::to_string(c.vocab_size) + " logits");

  int context = options.context_length > 0 ? options.context_length
                                           : std::min(c.max_context, kDefaultContextCap);
  if (context < 1) return Status::error("context length must be at least 1");
  fill_rope_table(rope_inverse_frequencies(h, h.rope_theta, true, m->weights.rope_freqs), context, &m->rope_cos,
                  &m->rope_sin);
  if (c.local_rope)  // sliding layers: their own base, never scaled (Gemma 3)
    fill_rope_table(rope_inverse_frequencies(h, h.rope_local_theta, false, nullptr), context, &m->rope_local_cos,
                    &m->rope_local_sin);
  for (int i = 0; i < h.n_eog_ids; ++i) m->eog_ids.push_back(h.eog_ids[i]);

  m->requested_threads = options.threads;
  m->pool = std::make_unique<ThreadPool>(options.threads > 0 ? options.threads
                                                             : ThreadPool::default_threads());

  ModelInfo& info = m->info;
  info.arch = c.arch;
  info.path = path;
  info.n_layers = c.n_layers;
  info.dim = c.dim;
  info.hidden_dim = c.hidden_dim;
  info.n_heads = c.n_heads;
  info.n_kv_heads = c.n_kv_heads;
  info.head_dim = c.head_dim;
  info.vocab_size = c.vocab_size;
  info.max_context = c.max_context;
  info.context_length = context;
  info.weight_type = format::dtype_name(m->weights.layers.empty() ? m->weights.tok_embeddings.dtype
                                                                  : m->weights.layers[0].wqkv.dtype);
  for (const auto& t : m->view.tensors) {
    info.n_params += t.rows * t.cols;
    // A decode step reads every tensor once, except the embedding table (one row) unless it is
    // also the LM head.
    if (t.name == "tok_embeddings" && !c.tied_embeddings)
      info.weight_bytes_per_token += t.bytes / t.rows;
    else
      info.weight_bytes_per_token += t.bytes;
  }
  info.file_bytes = m->file.size();
  info.kv_type = options.kv_type;
  info.kv_cache_bytes = kv_cache_bytes(c, context, options.kv_type);
  info.chat_template = static_cast<ChatTemplate>(h.chat_template_kind);
  m->template_status = PromptTemplate::create(std::string(m->view.chat_template), "model file",
                                              &m->prompt_template);
  if (m->prompt_template) {
    info.chat_template_source = m->prompt_template->source();
    info.chat_template_origin = m->prompt_template->origin();
  } else {
    info.chat_template_source = std::string(m->view.chat_template);
    info.chat_template_origin = "model file";
    info.chat_template_error = m->template_status.message();
  }
  info.bos_id = h.bos_id;
  info.eog_ids = m->eog_ids;
  info.add_bos = (h.flags & format::kFlagAddBos) != 0;
  info.load_mode = options.mode;
  info.striped_matrices = layouts.striped;
  info.stripe_cols = static_cast<int>(layouts.stripe_cols);
  info.tiled_matrices = layouts.tiled;
  for (int id = 0; id < m->tokenizer.vocab_size(); ++id)
    info.max_piece_bytes = std::max(info.max_piece_bytes, static_cast<int>(m->tokenizer.piece_text(id).size()));
  info.load_seconds = platform::now_seconds() - t0;
  out->reset(new Model(std::move(m)));
  return Status::ok();
}

const ModelInfo& Model::info() const { return impl_->info; }
int Model::threads() const { return impl_->pool->size(); }

void Model::set_threads(int n) {
  n = n > 0 ? std::min(n, 256) : ThreadPool::default_threads();
  if (n != impl_->pool->size()) impl_->pool = std::make_unique<ThreadPool>(n);
  impl_->requested_threads = n;
}

Status Model::tokenize(std::string_view text, bool add_bos, std::vector<int>* out,
                       TokenizeOptions options) const {
  out->clear();
  const uint64_t max_bytes = uint64_t(options.max_tokens) * uint64_t(impl_->info.max_piece_bytes);
  if (options.max_tokens > 0 && text.size() > max_bytes)
    return Status::error("the text is " + std::to_string(text.size()) + " bytes, more than the " +
                         std::to_string(max_bytes) + " that " + std::to_string(options.max_tokens) +
                         " tokens can hold");
  MAGNETAR_TRY(options.parse_special ? impl_->tokenizer.encode_with_special(text, out)
                                     : impl_->tokenizer.encode(text, out));
  if (add_bos && impl_->info.bos_id >= 0) out->insert(out->begin(), impl_->info.bos_id);
  return Status::ok();
}

std::string Model::token_piece(int token) const { return std::string(impl_->tokenizer.piece_text(token)); }

std::string Model::detokenize(const std::vector<int>& tokens) const {
  return impl_->tokenizer.decode(tokens);
}

SpecialTokenText Model::Impl::template_special_tokens() const {
  // Control tokens have no text of their own: use their piece strings so that
  // encode_with_special turns them back into ids. A model's own template decides about BOS
  // itself, as in transformers.
  auto piece_string = [&](int id) -> std::string { return id >= 0 ? tokenizer.piece_string(id) : std::string(); };
  SpecialTokenText special;
  if (!prompt_template || !prompt_template->is_builtin() || info.add_bos) special.bos = piece_string(info.bos_id);
  special.eos = piece_string(info.eog_ids.empty() ? -1 : info.eog_ids[0]);
  return special;
}

Status Model::apply_chat_template(const std::vector<ChatMessage>& messages,
                                  bool add_generation_prompt, std::vector<int>* out) const {
  if (!impl_->prompt_template) return impl_->template_status;
  for (const auto& m : messages)
    if (m.role != "system" && m.role != "user" && m.role != "assistant")
      return Status::error("unknown chat role '" + m.role + "' (use system, user or assistant)");
  jinja::RenderResult rendered;
  const SpecialTokenText special = impl_->template_special_tokens();
  Status status = impl_->prompt_template->render(messages, add_generation_prompt, special, &rendered);
  // Templates without a system turn (Gemma's) refuse one: fold it into the first user message,
  // as the app's system prompt must still reach the model.
  if (!status && rendered.raised_by_template && messages.size() > 1 && messages[0].role == "system" &&
      messages[1].role == "user") {
    std::vector<ChatMessage> folded(messages.begin() + 1, messages.end());
    folded[0].content = messages[0].content + "\n\n" + folded[0].content;
    status = impl_->prompt_template->render(folded, add_generation_prompt, special, &rendered);
  }
  MAGNETAR_TRY(status);
  return impl_->tokenizer.encode_chat_prompt(rendered.text, content_ranges(rendered), out);
}

bool Model::is_end_of_generation(int token) const {
  return std::find(impl_->eog_ids.begin(), impl_->eog_ids.end(), token) != impl_->eog_ids.end();
}

}  // namespace magnetar
