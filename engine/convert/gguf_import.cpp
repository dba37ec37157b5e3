// GGUF import planning: metadata → header, GGUF tensors → canonical tensors, tokenizer.ggml.* →
// SentencePiece model or stored tokenizer.json (see gguf_import.h for the conventions mapped).
#include "convert/gguf_import.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include <nlohmann/json.hpp>

#include "convert/gguf_bpe_vocab.h"
#include "convert/input_file.h"
#include "convert/tokenizer_files.h"
#include "core/platform.h"
#include "tokenizer/chat_template.h"
#include "magnetar/engine.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/tokenizer.h"

namespace magnetar::convert {
namespace {

struct GgufArchitecture {
  const char* gguf_name;  // general.architecture
  const char* hf_name;    // ConversionPlan::architecture (as the HF planner reports it)
  Architecture arch;
};
constexpr GgufArchitecture kArchitectures[] = {
    {"llama", "LlamaForCausalLM", Architecture::Llama},
    {"gemma", "GemmaForCausalLM", Architecture::Gemma},
    {"gemma2", "Gemma2ForCausalLM", Architecture::Gemma2},
};

Status optional_id(const gguf::File& f, const std::string& key, int* id) {
  if (f.find(key) == nullptr) return Status::ok();
  uint32_t v = 0;
  MAGNETAR_TRY(f.get_u32(key, &v));
  if (v > uint32_t(INT32_MAX)) return Status::error(key + " is out of range");
  *id = int(v);
  return Status::ok();
}

// Tensor planning against the parsed GGUF (shapes checked, types limited to what the runner reads).
class GgufTensorPlanner {
 public:
  GgufTensorPlanner(std::string path, const gguf::File& file, ConversionPlan* plan)
      : path_(std::move(path)), file_(file), plan_(plan) {}

  // `name` as a [rows, cols] source (cols = 0: a vector of `rows` values).
  Status source(const std::string& name, uint64_t rows, uint64_t cols, uint64_t rope_heads,
                SourceRange* out) const {
    const gguf::Tensor* t = file_.find_tensor(name);
    if (t == nullptr) return Status::error(path_ + ": missing tensor " + name);
    const bool vector = cols == 0;
    const uint32_t want_dims = vector ? 1 : 2;
    const uint64_t want0 = vector ? rows : cols, want1 = vector ? 1 : rows;
    if (t->n_dims != want_dims || t->ne[0] != want0 || t->ne[1] != want1)
      return Status::error(path_ + ": tensor " + name + " has shape " + shape(*t) + ", expected " +
                           (vector ? "[" + std::to_string(rows) + "]"
                                   : "[" + std::to_string(cols) + ", " + std::to_string(rows) + "]") +
                           " (GGUF order: innermost first) from the metadata");
    SourceDType dtype = SourceDType::Blocks;
    format::DType block_type = format::DType::F32;
    switch (gguf::TensorType(t->ggml_type)) {
      case gguf::TensorType::F32: dtype = SourceDType::F32; break;
      case gguf::TensorType::F16: dtype = SourceDType::F16; break;
      case gguf::TensorType::BF16: dtype = SourceDType::BF16; break;
      default:
        // Block types: every one with a format::DType is copied as stored (kernels/type_traits.h).
        if (!format::dtype_from_ggml(t->ggml_type, &block_type) || !format::dtype_is_quantized(block_type))
          return Status::error(path_ + ": tensor " + name + " is " + gguf::tensor_type_name(t->ggml_type) +
                               "; GGUF import reads F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q2_K, "
                               "Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL and IQ4_XS tensors");
        if (!format::dtype_fits_cols(block_type, t->ne[0]))
          return Status::error(path_ + ": tensor " + name + " rows are not whole blocks");
    }
    out->file = path_;
    out->name = name;
    out->offset = t->offset;
    out->dtype = dtype;
    out->block_type = block_type;
    out->rows = vector ? 1 : rows;
    out->cols = vector ? rows : cols;
    out->interleaved_rope_heads = rope_heads;
    return Status::ok();
  }

  Status matrix(const std::string& out_name, const std::vector<std::string>& sources,
                const std::vector<uint64_t>& rows, uint64_t cols,
                const std::vector<uint64_t>& rope_heads = {}) {
    PlannedTensor t;
    t.name = out_name;
    t.n_dims = 2;
    t.rows = 0;
    t.cols = cols;
    for (size_t i = 0; i < sources.size(); ++i) {
      SourceRange r;
      MAGNETAR_TRY(source(sources[i], rows[i], cols, i < rope_heads.size() ? rope_heads[i] : 0, &r));
      t.rows += rows[i];
      t.parts.push_back(r);
    }
    plan_->tensors.push_back(std::move(t));
    return Status::ok();
  }

  Status norm(const std::string& out_name, const std::string& source_name, uint64_t dim) {
    PlannedTensor t;
    t.name = out_name;
    t.n_dims = 1;
    t.rows = 1;
    t.cols = dim;
    t.is_norm = true;
    t.add = 0.0f;  // Gemma's 1 + w is already folded in by llama.cpp's converter
    SourceRange r;
    MAGNETAR_TRY(source(source_name, dim, 0, 0, &r));
    t.parts.push_back(r);
    plan_->tensors.push_back(std::move(t));
    return Status::ok();
  }

 private:
  static std::string shape(const gguf::Tensor& t) {
    std::string s = "[";
    for (uint32_t d = 0; d < t.n_dims; ++d) s += (d ? ", " : "") + std::to_string(t.ne[d]);
    return s + "]";
  }
  std::string path_;
  const gguf::File& file_;
  ConversionPlan* plan_;
};

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
  plan->kind = "GGUF file";
  plan->keeps_source_types = true;
  platform::FileBuffer buffer;
  MAGNETAR_TRY(buffer.open(path, platform::FileBuffer::Mode::Map));
  gguf::File f;
  MAGNETAR_TRY(gguf::parse(buffer.data(), buffer.size(), &f).with_context(path));
  plan->source_bytes = buffer.size();

  std::string_view arch_name;
  MAGNETAR_TRY(f.get_string("general.architecture", &arch_name).with_context(path));
  const GgufArchitecture* arch = nullptr;
  for (const auto& a : kArchitectures)
    if (arch_name == a.gguf_name) arch = &a;
  if (arch == nullptr)
    return Status::error(path + ": GGUF architecture \"" + std::string(arch_name.substr(0, 40)) +
                         "\" is not supported (supported: llama, gemma, gemma2)");
  plan->architecture = arch->hf_name;
  const bool gemma = arch->arch != Architecture::Llama;
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
  if (const gguf::Value* scaling = f.find(a + ".rope.scaling.type")) {
    if (scaling->type != gguf::ValueType::String || scaling->string != "none")
      return Status::error(path + ": RoPE scaling (" + a + ".rope.scaling.type) is not supported");
  }
  if (f.find(a + ".rope.scaling.factor") != nullptr) {
    float factor = 1.0f;
    MAGNETAR_TRY(f.get_f32(a + ".rope.scaling.factor", &factor).with_context(path));
    if (factor != 1.0f) return Status::error(path + ": RoPE scaling factors are not supported");
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
  h.query_scale = float(1.0 / std::sqrt(double(head_dim)));
  if (gemma) h.flags |= format::kFlagEmbedScaleSqrtDim;
  if (gemma2) {
    uint32_t window = 4096;
    MAGNETAR_TRY(get_u32(a + ".attention.sliding_window", 1, 1u << 24, &window, &window));
    float attn_cap = 0.0f, final_cap = 0.0f;
    if (f.find(a + ".attn_logit_softcapping") != nullptr)
      MAGNETAR_TRY(f.get_f32(a + ".attn_logit_softcapping", &attn_cap).with_context(path));
    if (f.find(a + ".final_logit_softcapping") != nullptr)
      MAGNETAR_TRY(f.get_f32(a + ".final_logit_softcapping", &final_cap).with_context(path));
    if (!(attn_cap >= 0) || !(final_cap >= 0))
      return Status::error(path + ": softcapping values must not be negative");
    h.flags |= format::kFlagPostNorms;
    h.sliding_window = window;
    h.sliding_window_period = 2;  // layer i slides when i % 2 == 0
    // GGUF has no query_pre_attn_scalar; llama.cpp uses 1/sqrt(head_dim), except for the 27B
    // model (46 layers), whose scalar is hidden / heads.
    if (n_layers == 46) h.query_scale = float(1.0 / std::sqrt(double(dim) / n_heads));
    h.attn_softcap = attn_cap;
    h.final_softcap = final_cap;
  }

  const bool tied = f.find_tensor("output.weight") == nullptr;
  if (tied) h.flags |= format::kFlagTiedEmbeddings;
  const uint64_t D = dim, F = hidden, V = vocab;
  const uint64_t q_rows = uint64_t(n_heads) * head_dim, kv_rows = uint64_t(n_kv_heads) * head_dim;
  // llama.cpp stores llama's q/k rows interleaved per head; Gemma's as in Hugging Face.
  const uint64_t q_rope = gemma ? 0 : n_heads, k_rope = gemma ? 0 : n_kv_heads;
  GgufTensorPlanner tp(path, f, plan);
  MAGNETAR_TRY((tp.matrix("tok_embeddings", {"token_embd.weight"}, {V}, D)));
  for (uint32_t i = 0; i < n_layers; ++i) {
    const std::string src = "blk." + std::to_string(i) + ".";
    const std::string dst = "layers." + std::to_string(i) + ".";
    MAGNETAR_TRY(tp.norm(dst + "attn_norm", src + "attn_norm.weight", D));
    MAGNETAR_TRY((tp.matrix(dst + "wqkv", {src + "attn_q.weight", src + "attn_k.weight", src + "attn_v.weight"},
                            {q_rows, kv_rows, kv_rows}, D, {q_rope, k_rope, 0})));
    MAGNETAR_TRY((tp.matrix(dst + "wo", {src + "attn_output.weight"}, {D}, q_rows)));
    if (gemma2) MAGNETAR_TRY(tp.norm(dst + "post_attn_norm", src + "post_attention_norm.weight", D));
    MAGNETAR_TRY(tp.norm(dst + "ffn_norm", src + "ffn_norm.weight", D));
    MAGNETAR_TRY((tp.matrix(dst + "w_gate_up", {src + "ffn_gate.weight", src + "ffn_up.weight"}, {F, F}, D)));
    MAGNETAR_TRY((tp.matrix(dst + "w_down", {src + "ffn_down.weight"}, {D}, F)));
    if (gemma2) MAGNETAR_TRY(tp.norm(dst + "post_ffn_norm", src + "post_ffw_norm.weight", D));
  }
  MAGNETAR_TRY(tp.norm("output_norm", "output_norm.weight", D));
  if (!tied) MAGNETAR_TRY((tp.matrix("output", {"output.weight"}, {V}, D)));
  for (const PlannedTensor& t : plan->tensors)
    for (const SourceRange& r : t.parts) plan->bytes_to_read += r.bytes();

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
