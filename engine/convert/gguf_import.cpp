// GGUF import planning: metadata → header, GGUF tensors → canonical tensors, tokenizer.ggml.* →
// SentencePiece model or stored tokenizer.json (see gguf_import.h for the conventions mapped).
#include "convert/gguf_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "convert/gguf_bpe_vocab.h"
#include "convert/input_file.h"
#include "convert/plan_tensors.h"
#include "format/architecture.h"
#include "convert/tokenizer_files.h"
#include "core/platform.h"
#include "tokenizer/chat_template.h"
#include "magnetar/engine.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace magnetar::convert {
namespace {

Status optional_id(const gguf::File& f, const std::string& key, int* id) {
  if (f.find(key) == nullptr) return Status::ok();
  uint32_t v = 0;
  MAGNETAR_TRY(f.get_u32(key, &v));
  if (v > uint32_t(INT32_MAX)) return Status::error(key + " is out of range");
  *id = int(v);
  return Status::ok();
}

std::string gguf_shape(const gguf::Tensor& t) {
  std::string s = "[";
  for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
  return s + "]";
}

// `name` as a [rows, cols] source (cols = 0: a vector of `rows` values). F32/F16/BF16 are widened;
// every block type with a format::DType is copied as stored (kernels/type_traits.h).
Status find_gguf_source(const std::string& path, const gguf::File& file, const std::string& name, uint64_t rows,
                        uint64_t cols, SourceRange* out) {
  const gguf::Tensor* t = file.find_tensor(name);
  if (t == nullptr) return Status::error(path + ": missing tensor " + name);
  const bool vector = cols == 0;
  const uint32_t want_dims = vector ? 1 : 2;
  const uint64_t want0 = vector ? rows : cols, want1 = vector ? 1 : rows;
  if (t->n_dims != want_dims || t->ne[0] != want0 || t->ne[1] != want1)
    return Status::error(path + ": tensor " + name + " has shape " + gguf_shape(*t) + ", expected " +
                         (vector ? show_shape({rows}) : show_shape({cols, rows})) +
                         " (GGUF order: innermost first) from the metadata");
  SourceDType dtype = SourceDType::Blocks;
  format::DType block_type = format::DType::F32;
  switch (gguf::TensorType(t->ggml_type)) {
    case gguf::TensorType::F32: dtype = SourceDType::F32; break;
    case gguf::TensorType::F16: dtype = SourceDType::F16; break;
    case gguf::TensorType::BF16: dtype = SourceDType::BF16; break;
    default:
      if (!format::dtype_from_ggml(t->ggml_type, &block_type) || !format::dtype_is_quantized(block_type))
        return Status::error(path + ": tensor " + name + " is " + gguf::tensor_type_name(t->ggml_type) +
                             "; GGUF import reads F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, "
                             "Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS tensors");
      if (!format::dtype_fits_cols(block_type, t->ne[0]))
        return Status::error(path + ": tensor " + name + " rows are not whole blocks");
  }
  out->file = path;
  out->name = name;
  out->offset = t->offset;
  out->dtype = dtype;
  out->block_type = block_type;
  out->rows = vector ? 1 : rows;
  out->cols = vector ? rows : cols;
  return Status::ok();
}

}  // namespace

// ================================================================================================
// Plan
// ================================================================================================

bool looks_like_gguf(const std::string& path) {
  char magic[4] = {};
  return platform::read_file_range(path, 0, magic, sizeof magic).is_ok() &&
         std::memcmp(magic, "GGUF", 4) == 0;
}

Status plan_gguf(const std::string& path, ConversionPlan* plan) {
  *plan = ConversionPlan{};
  platform::FileBuffer buffer;
  MAGNETAR_TRY(buffer.open(path, platform::FileBuffer::Mode::Map));
  return plan_gguf_bytes(path, buffer.data(), buffer.size(), plan);
}

Status plan_gguf_bytes(const std::string& path, const uint8_t* data, uint64_t size, ConversionPlan* plan) {
  *plan = ConversionPlan{};
  plan->kind = "GGUF file";
  plan->keeps_source_types = true;
  gguf::File f;
  MAGNETAR_TRY(gguf::parse(data, size, &f).with_context(path));
  plan->source_bytes = size;

  std::string_view arch_name;
  MAGNETAR_TRY(f.get_string("general.architecture", &arch_name).with_context(path));
  const format::ArchitectureTraits* arch = format::find_gguf_architecture(arch_name);
  if (arch == nullptr)
    return Status::error(path + ": GGUF architecture \"" + std::string(arch_name.substr(0, 40)) +
                         "\" is not supported (supported: " + format::supported_gguf_architectures() + ")");
  plan->architecture = arch->hf_names[0];
  const bool gemma = arch->norm_plus_one;
  const bool gemma2 = arch->arch == Architecture::Gemma2;
  const std::string a = arch->gguf_name;

  auto get_u32 = [&](const std::string& key, uint32_t min, uint32_t max, const uint32_t* fallback,
                     uint32_t* out) -> Status {
    if (f.find(key) == nullptr && fallback != nullptr) {
      *out = *fallback;
      return Status::ok();
    }
    MAGNETAR_TRY(f.get_u32(key, out).with_context(path));
    if (*out < min || *out > max)
      return Status::error(path + ": " + key + " = " + std::to_string(*out) + " is outside [" +
                           std::to_string(min) + ", " + std::to_string(max) + "]");
    return Status::ok();
  };
  constexpr uint32_t kMaxDim = 1u << 20;
  uint32_t n_layers, dim, hidden, n_heads, n_kv_heads, head_dim, max_context;
  MAGNETAR_TRY(get_u32(a + ".block_count", 1, 4096, nullptr, &n_layers));
  MAGNETAR_TRY(get_u32(a + ".embedding_length", 1, kMaxDim, nullptr, &dim));
  MAGNETAR_TRY(get_u32(a + ".feed_forward_length", 1, kMaxDim, nullptr, &hidden));
  MAGNETAR_TRY(get_u32(a + ".attention.head_count", 1, 4096, nullptr, &n_heads));
  MAGNETAR_TRY(get_u32(a + ".attention.head_count_kv", 1, 4096, &n_heads, &n_kv_heads));
  const uint32_t default_head_dim = dim / n_heads;
  MAGNETAR_TRY(get_u32(a + ".attention.key_length", 2, 65536, &default_head_dim, &head_dim));
  uint32_t value_dim = 0, rope_dims = 0;
  MAGNETAR_TRY(get_u32(a + ".attention.value_length", 2, 65536, &head_dim, &value_dim));
  MAGNETAR_TRY(get_u32(a + ".rope.dimension_count", 2, 65536, &head_dim, &rope_dims));
  const uint32_t default_context = 2048;
  MAGNETAR_TRY(get_u32(a + ".context_length", 1, 1u << 24, &default_context, &max_context));
  if (head_dim % 2 != 0 || value_dim != head_dim || rope_dims != head_dim)
    return Status::error(path + ": head size " + std::to_string(head_dim) + " (value " + std::to_string(value_dim) +
                         ", rotary " + std::to_string(rope_dims) +
                         ") is not supported: keys and values must share one even head size, all of it rotated");
  if (n_heads % n_kv_heads != 0)
    return Status::error(path + ": " + std::to_string(n_heads) + " attention heads are not a multiple of " +
                         std::to_string(n_kv_heads) + " key/value heads");
  float eps = 1e-6f, theta = 10000.0f;
  MAGNETAR_TRY(f.get_f32(a + ".attention.layer_norm_rms_epsilon", &eps).with_context(path));
  if (f.find(a + ".rope.freq_base") != nullptr) MAGNETAR_TRY(f.get_f32(a + ".rope.freq_base", &theta).with_context(path));
  if (!(eps > 0) || !(theta > 0) || !std::isfinite(eps) || !std::isfinite(theta))
    return Status::error(path + ": the RMS norm epsilon and RoPE base must be positive");
  format::RopeScaling scaling = format::RopeScaling::None;
  float scaling_factor = 0.0f;
  if (const gguf::Value* type = f.find(a + ".rope.scaling.type")) {
    if (type->type != gguf::ValueType::String || (type->string != "none" && type->string != "linear"))
      return Status::error(path + ": RoPE scaling " + a + ".rope.scaling.type is not supported (none, linear)");
    if (type->string == "linear") {
      scaling = format::RopeScaling::Linear;
      MAGNETAR_TRY(f.get_f32(a + ".rope.scaling.factor", &scaling_factor).with_context(path));
      if (!(scaling_factor > 0) || !std::isfinite(scaling_factor))
        return Status::error(path + ": " + a + ".rope.scaling.factor must be positive");
    }
  }

  // Vocabulary first: its size is the embedding's row count. SentencePiece ("llama") or
  // byte-level BPE ("gpt2"), the latter stored as a tokenizer.json.
  std::string_view tokenizer_model;
  MAGNETAR_TRY(f.get_string("tokenizer.ggml.model", &tokenizer_model).with_context(path));
  const bool bpe = tokenizer_model == "gpt2";
  spm::ModelSpec spec;
  nlohmann::json bpe_json;
  tok::HfTokenizer bpe_tokenizer;
  if (bpe) {
    int n_tokens = 0;
    MAGNETAR_TRY(gguf_bpe_vocab_to_tokenizer_json(f, &bpe_json, &n_tokens).with_context(path));
    spec.pieces.resize(size_t(n_tokens));  // only the count is used on this path
    spec.bos_id = spec.eos_id = -1;
    MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.bos_token_id", &spec.bos_id).with_context(path));
    MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.eos_token_id", &spec.eos_id).with_context(path));
  } else {
    MAGNETAR_TRY(gguf_vocab_to_spec(f, &spec).with_context(path));
  }
  const uint32_t vocab = uint32_t(spec.pieces.size());

  format::FileHeader& h = plan->header;
  h.architecture = uint32_t(arch->arch);
  h.n_layers = n_layers;
  h.dim = dim;
  h.hidden_dim = hidden;
  h.n_heads = n_heads;
  h.n_kv_heads = n_kv_heads;
  h.head_dim = head_dim;
  h.vocab_size = vocab;
  h.max_context = max_context;
  h.activation = uint32_t(gemma ? format::Activation::GeluTanh : format::Activation::Silu);
  h.norm_eps = eps;
  h.rope_theta = theta;
  h.rope_scaling = uint32_t(scaling);
  h.rope_scaling_factor = scaling_factor;
  h.query_scale = float(1.0 / std::sqrt(double(head_dim)));
  if (arch->embed_scale) h.flags |= format::kFlagEmbedScaleSqrtDim;
  if (arch->sandwich_norms) h.flags |= format::kFlagPostNorms;
  if (arch->softcaps) {
    float attn_cap = 0.0f, final_cap = 0.0f;
    if (f.find(a + ".attn_logit_softcapping") != nullptr)
      MAGNETAR_TRY(f.get_f32(a + ".attn_logit_softcapping", &attn_cap).with_context(path));
    if (f.find(a + ".final_logit_softcapping") != nullptr)
      MAGNETAR_TRY(f.get_f32(a + ".final_logit_softcapping", &final_cap).with_context(path));
    if (!(attn_cap >= 0) || !(final_cap >= 0))
      return Status::error(path + ": softcapping values must not be negative");
    h.attn_softcap = attn_cap;
    h.final_softcap = final_cap;
  }
  if (gemma2) {
    // GGUF has no query_pre_attn_scalar; llama.cpp uses 1/sqrt(head_dim), except for the 27B
    // model (46 layers), whose scalar is hidden / heads.
    if (n_layers == 46) h.query_scale = float(1.0 / std::sqrt(double(dim) / n_heads));
  }
  if (arch->sliding != format::SlidingLayers::None && f.find(a + ".attention.sliding_window") != nullptr) {
    uint32_t window = 0;
    MAGNETAR_TRY(get_u32(a + ".attention.sliding_window", 0, 1u << 30, nullptr, &window));
    h.sliding_window = window;
    // llama.cpp's fixed layer patterns: Gemma 2 every other layer, Gemma 3 five of six.
    uint32_t period = arch->sliding == format::SlidingLayers::All ? 0 : gemma2 ? 2 : 6;
    MAGNETAR_TRY(get_u32(a + ".attention.sliding_window_pattern", 0, 4096, &period, &period));
    h.sliding_window_period = period;
  } else if (gemma2) {
    h.sliding_window = 4096, h.sliding_window_period = 2;
  }
  if (arch->local_rope_base) {
    float local_theta = 10000.0f;  // llama.cpp's Gemma 3 default when the file does not say
    if (f.find(a + ".rope.freq_base_swa") != nullptr)
      MAGNETAR_TRY(f.get_f32(a + ".rope.freq_base_swa", &local_theta).with_context(path));
    if (!(local_theta > 0) || !std::isfinite(local_theta))
      return Status::error(path + ": " + a + ".rope.freq_base_swa must be positive");
    h.rope_local_theta = local_theta;
  }

  if (f.find_tensor("rope_factors_long.weight") != nullptr || f.find_tensor("rope_factors_short.weight") != nullptr)
    return Status::error(path + ": RoPE scaling longrope (rope_factors_long/short, Phi-3 128k) is not supported");
  if (f.find_tensor("output.weight") == nullptr) h.flags |= format::kFlagTiedEmbeddings;
  // llama.cpp's converter writes Llama 3's llama3 RoPE scaling as per-frequency divisors.
  if (f.find_tensor("rope_freqs.weight") != nullptr) h.flags |= format::kFlagRopeFreqFactors;
  TensorPlanOptions tensor_options;
  tensor_options.format = format::SourceFormat::Gguf;
  tensor_options.fold_norm_plus_one = false;  // llama.cpp's converter stored Gemma's 1 + w already
  tensor_options.unpermute_rope_rows = arch->gguf_rope_interleaved;
  MAGNETAR_TRY(plan_model_tensors(
      *arch, tensor_options,
      [&](const std::string& name, uint64_t rows, uint64_t cols, SourceRange* out) {
        return find_gguf_source(path, f, name, rows, cols, out);
      },
      plan));

  // Tokenizer, special ids, chat template.
  if (bpe) {
    MAGNETAR_TRY(tok::make_stored_hf_tokenizer(bpe_json, false, &plan->tokenizer, &bpe_tokenizer).with_context(path));
    h.tokenizer_kind = uint32_t(TokenizerKind::HuggingFace);
  } else {
    MAGNETAR_TRY(spm::build_sentencepiece_model(spec, &plan->tokenizer).with_context(path));
  }
  if (const gguf::Value* t = f.find("tokenizer.chat_template"); t != nullptr && t->type == gguf::ValueType::String)
    plan->chat_template.assign(t->string);
  if (!plan->chat_template.empty())
    MAGNETAR_TRY(check_chat_template(plan->chat_template).with_context(path + ": tokenizer.chat_template"));
  h.chat_template_kind = uint32_t(detect_chat_template(plan->chat_template));
  bool add_bos = true;
  if (f.find("tokenizer.ggml.add_bos_token") != nullptr)
    MAGNETAR_TRY(f.get_bool("tokenizer.ggml.add_bos_token", &add_bos).with_context(path));
  if (add_bos) h.flags |= format::kFlagAddBos;
  if (spec.bos_id < 0) return Status::error(path + ": no tokenizer.ggml.bos_token_id");
  h.bos_id = spec.bos_id;
  std::vector<int> eog;
  auto add_eog = [&](int id) {
    if (id < 0) return;
    for (int x : eog)
      if (x == id) return;
    eog.push_back(id);
  };
  add_eog(spec.eos_id);
  int eot = -1, eom = -1;
  MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.eot_token_id", &eot).with_context(path));
  MAGNETAR_TRY(optional_id(f, "tokenizer.ggml.eom_token_id", &eom).with_context(path));
  add_eog(eot < int(vocab) ? eot : -1);
  add_eog(eom < int(vocab) ? eom : -1);
  // The template's end-of-turn markers (Gemma's <end_of_turn> even when the file has no template).
  std::vector<std::string> markers = end_of_turn_markers(plan->chat_template);
  if (gemma) markers.push_back("<end_of_turn>");
  for (const std::string& marker : markers)
    if (bpe) add_eog(bpe_tokenizer.token_to_id(marker));
  for (size_t i = 0; i < spec.pieces.size(); ++i)
    if (std::find(markers.begin(), markers.end(), spec.pieces[i].piece) != markers.end()) add_eog(int(i));
  if (eog.empty()) return Status::error(path + ": no tokenizer.ggml.eos_token_id");
  if (eog.size() > size_t(format::kMaxEogIds))
    return Status::error(path + ": too many end-of-generation ids");
  h.n_eog_ids = int32_t(eog.size());
  for (size_t i = 0; i < eog.size(); ++i) h.eog_ids[i] = eog[i];
  return Status::ok();
}

}  // namespace magnetar::convert
