// Planning the conversion of a Hugging Face folder: config.json → header (the family's options
// from format/architecture.h), safetensors tensors → canonical tensors (plan_tensors.h: q/k/v
// fused into wqkv, gate/up into w_gate_up, Gemma norms as 1 + w), tokenizer.model or
// tokenizer.json + tokenizer_config.json + generation_config.json → tokenizer, ids, template.
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <optional>

#include "convert/input_file.h"
#include "convert/json_input.h"
#include "convert/plan.h"
#include "convert/plan_tensors.h"
#include "format/architecture.h"
#include "convert/tokenizer_files.h"
#include "magnetar/engine.h"
#include "tokenizer/chat_template.h"
#include "tokenizer/tokenizer.h"

namespace magnetar::convert {

using nlohmann::json;
using format::FileHeader;

namespace {

constexpr uint64_t kMaxJsonBytes = 16ull << 20;
constexpr uint64_t kMaxTokenizerBytes = 256ull << 20;

Status read_json_file(const std::string& path, json* out) {
  return read_json_object_file(path, kMaxJsonBytes, out);
}

// Typed, range-checked access to config.json fields; messages name the file and the key.
class ConfigReader {
 public:
  ConfigReader(const json& j, std::string path) : j_(j), path_(std::move(path)) {}

  // A missing or null key takes `fallback` (if given) or is an error.
  Status get_int(const char* key, int64_t min, int64_t max, std::optional<int64_t> fallback,
                 int64_t* out) const {
    if (!j_.contains(key) || j_[key].is_null()) {
      if (!fallback) return Status::error(path_ + ": missing \"" + key + "\"");
      *out = *fallback;
      return Status::ok();
    }
    const json& v = j_[key];
    double d = 0;
    if (v.is_number_integer()) d = static_cast<double>(v.get<int64_t>());
    else if (v.is_number_unsigned()) d = static_cast<double>(v.get<uint64_t>());
    else if (v.is_number_float()) d = v.get<double>();
    else return Status::error(path_ + ": \"" + key + "\" must be a number, got " + json_excerpt(v));
    if (d != std::floor(d) || d < static_cast<double>(min) || d > static_cast<double>(max))
      return Status::error(path_ + ": \"" + key + "\" = " + json_excerpt(v) + " is not an integer in [" +
                           std::to_string(min) + ", " + std::to_string(max) + "]");
    *out = static_cast<int64_t>(d);
    return Status::ok();
  }

  Status get_float(const char* key, std::optional<double> fallback, double* out) const {
    if (!j_.contains(key) || j_[key].is_null()) {
      if (!fallback) return Status::error(path_ + ": missing \"" + key + "\"");
      *out = *fallback;
      return Status::ok();
    }
    if (!j_[key].is_number() || !std::isfinite(j_[key].get<double>()))
      return Status::error(path_ + ": \"" + key + "\" must be a number, got " +
                           json_excerpt(j_[key]));
    *out = j_[key].get<double>();
    return Status::ok();
  }

  // A missing or null key takes `fallback`; any other non-boolean is an error.
  Status get_bool(const char* key, bool fallback, bool* out) const {
    *out = fallback;
    if (!j_.contains(key) || j_[key].is_null()) return Status::ok();
    if (!j_[key].is_boolean())
      return Status::error(path_ + ": \"" + key + "\" must be true or false, got " +
                           json_excerpt(j_[key]));
    *out = j_[key].get<bool>();
    return Status::ok();
  }

  // A missing or null key gives ""; any other non-string is an error.
  Status get_string(const char* key, std::string* out) const {
    out->clear();
    if (!j_.contains(key) || j_[key].is_null()) return Status::ok();
    if (!j_[key].is_string())
      return Status::error(path_ + ": \"" + key + "\" must be a string, got " +
                           json_excerpt(j_[key]));
    *out = j_[key].get<std::string>();
    return Status::ok();
  }

 private:
  const json& j_;
  std::string path_;
};

// Token ids from an "eos_token_id"-style field: a number or a list of numbers.
Status collect_ids(const json& j, const char* key, const std::string& path, std::vector<int>* ids) {
  if (!j.contains(key) || j[key].is_null()) return Status::ok();
  auto add = [&](const json& v) -> Status {
    if (!v.is_number_integer() || v.get<int64_t>() < 0 || v.get<int64_t>() > INT32_MAX)
      return Status::error(path + ": \"" + key + "\" holds " + json_excerpt(v) + ", not a token id");
    int id = static_cast<int>(v.get<int64_t>());
    for (int x : *ids)
      if (x == id) return Status::ok();
    ids->push_back(id);
    return Status::ok();
  };
  if (j[key].is_array()) {
    if (j[key].size() > 1024)  // the header holds 8; a longer list is not a model's
      return Status::error(path + ": \"" + key + "\" lists " + std::to_string(j[key].size()) +
                           " ids");
    for (const json& v : j[key]) MAGNETAR_TRY(add(v));
    return Status::ok();
  }
  return add(j[key]);
}

// Maps hidden_act / hidden_activation to the activations the engine implements.
Status parse_activation(const std::string& name, const std::string& path, format::Activation* out) {
  if (name == "silu" || name == "swish") {
    *out = format::Activation::Silu;
    return Status::ok();
  }
  if (name == "gelu_pytorch_tanh" || name == "gelu_new" || name == "gelu_tanh") {
    *out = format::Activation::GeluTanh;
    return Status::ok();
  }
  return Status::error(path + ": activation \"" + abridged(name) +
                       "\" is not supported (supported: silu, gelu_pytorch_tanh)");
}

// Weights of a layer past num_hidden_layers mean the config describes a truncated model.
Status check_no_extra_layers(const SafetensorsSet& set, const std::string& name_prefix, int64_t n_layers,
                             const std::string& config_path) {
  const std::string prefix = name_prefix + "model.layers.";
  for (const auto& [name, where] : set.by_name) {
    if (name.rfind(prefix, 0) != 0) continue;
    const size_t dot = name.find('.', prefix.size());
    const std::string index = name.substr(prefix.size(), dot == std::string::npos ? std::string::npos
                                                                                  : dot - prefix.size());
    if (index.empty() || index.size() > 6 || index.find_first_not_of("0123456789") != std::string::npos)
      continue;
    if (std::stoll(index) >= n_layers)
      return Status::error(config_path + ": num_hidden_layers is " + std::to_string(n_layers) +
                           " but the weights have tensor " + abridged(name) +
                           " (a config for fewer layers than the weights hold)");
  }
  return Status::ok();
}

// The source tensor `name` with exactly the shape {rows, cols} (cols = 0: 1-D of rows).
Status find_source(const std::string& folder, const SafetensorsSet& set, const std::string& name,
                   uint64_t rows, uint64_t cols, SourceRange* out) {
  const SafetensorsFile* file = nullptr;
  const SafetensorsTensor* t = set.find(name, &file);
  if (!t) return Status::error(folder + ": missing tensor " + name + " in the safetensors files");
  if (t->dtype == SourceDType::Other)
    return Status::error(file->path + ": tensor " + name + " has dtype " + abridged(t->dtype_name) +
                         "; supported: F32, F16, BF16");
  std::vector<uint64_t> want = cols ? std::vector<uint64_t>{rows, cols} : std::vector<uint64_t>{rows};
  if (t->shape != want)
    return Status::error(file->path + ": tensor " + name + " has shape " + show_shape(t->shape) +
                         ", expected " + show_shape(want) + " from config.json");
  out->file = file->path;
  out->name = name;
  out->offset = t->data_offset;
  out->dtype = t->dtype;
  out->rows = cols ? rows : 1;
  out->cols = cols ? cols : rows;
  return Status::ok();
}

// rope_scaling → header fields. Types not implemented are named in the error.
Status parse_rope_scaling(const json& config, const std::string& path, FileHeader* h) {
  if (!config.contains("rope_scaling") || config["rope_scaling"].is_null()) return Status::ok();
  const json& r = config["rope_scaling"];
  if (!r.is_object()) return Status::error(path + ": rope_scaling must be an object or null");
  std::string type;
  for (const char* key : {"rope_type", "type"})
    if (r.contains(key) && r[key].is_string()) type = r[key].get<std::string>();
  if (type == "default") return Status::ok();
  ConfigReader reader(r, path + " rope_scaling");
  double factor = 0;
  if (type == "linear" || type == "llama3") MAGNETAR_TRY(reader.get_float("factor", std::nullopt, &factor));
  if (type == "linear") {
    if (!(factor > 0)) return Status::error(path + ": rope_scaling factor must be positive");
    h->rope_scaling = uint32_t(format::RopeScaling::Linear);
    h->rope_scaling_factor = float(factor);
    return Status::ok();
  }
  if (type == "llama3") {
    double low, high;
    int64_t original;
    MAGNETAR_TRY(reader.get_float("low_freq_factor", std::nullopt, &low));
    MAGNETAR_TRY(reader.get_float("high_freq_factor", std::nullopt, &high));
    MAGNETAR_TRY(reader.get_int("original_max_position_embeddings", 1, 1 << 24, std::nullopt, &original));
    if (!(factor > 0) || !(low > 0) || !(high > low))
      return Status::error(path + ": llama3 rope_scaling needs factor > 0 and high_freq_factor > "
                           "low_freq_factor > 0");
    h->rope_scaling = uint32_t(format::RopeScaling::Llama3);
    h->rope_scaling_factor = float(factor);
    h->rope_low_freq_factor = float(low);
    h->rope_high_freq_factor = float(high);
    h->rope_original_context = uint32_t(original);
    return Status::ok();
  }
  return Status::error(path + ": rope_scaling type \"" + (type.empty() ? json_excerpt(r) : abridged(type)) +
                       "\" is not supported (supported: default, linear, llama3; not yet: longrope, "
                       "yarn, dynamic)");
}

// Which layers slide: header.sliding_window / sliding_window_period from sliding_window and,
// for pattern families, layer_types or sliding_window_pattern.
Status parse_sliding_layers(const format::ArchitectureTraits& a, const ConfigReader& cfg, const json& config,
                            const std::string& path, uint32_t n_layers, FileHeader* h) {
  bool use_sliding_window;
  MAGNETAR_TRY(cfg.get_bool("use_sliding_window", false, &use_sliding_window));
  if (use_sliding_window)
    return Status::error(path + ": use_sliding_window (sliding layers from max_window_layers on) is not "
                         "supported");
  if (a.sliding == format::SlidingLayers::None) return Status::ok();
  int64_t window = 0;
  MAGNETAR_TRY(cfg.get_int("sliding_window", 0, 1 << 30, 0, &window));
  if (window == 0) return Status::ok();
  h->sliding_window = uint32_t(std::min<int64_t>(window, UINT32_MAX));
  if (a.sliding == format::SlidingLayers::All) {
    h->sliding_window_period = 0;
    return Status::ok();
  }
  int64_t period = 0;
  if (config.contains("layer_types") && config["layer_types"].is_array()) {
    // Only the periodic form (layer i full iff (i + 1) % period == 0) is stored in the header.
    const json& types = config["layer_types"];
    if (types.size() != n_layers)
      return Status::error(path + ": layer_types has " + std::to_string(types.size()) + " entries for " +
                           std::to_string(n_layers) + " layers");
    std::vector<bool> slides;
    for (const json& t : types) {
      if (!t.is_string() || (t != "sliding_attention" && t != "full_attention"))
        return Status::error(path + ": layer_types entry " + json_excerpt(t) + " is not sliding_attention or "
                             "full_attention");
      slides.push_back(t == "sliding_attention");
    }
    int64_t first_full = -1;
    for (size_t i = 0; i < slides.size() && first_full < 0; ++i)
      if (!slides[i]) first_full = int64_t(i);
    period = first_full < 0 ? 0 : first_full + 1;
    for (size_t i = 0; i < slides.size(); ++i)
      if (slides[i] != (period == 0 || int64_t(i + 1) % period != 0))
        return Status::error(path + ": layer_types is not a repeating pattern of sliding layers then one "
                             "full layer, which is all this build supports");
    if (period == 1) h->sliding_window = 0;  // no layer slides
  } else {
    MAGNETAR_TRY(cfg.get_int("sliding_window_pattern", 1, 4096, std::nullopt, &period));
  }
  h->sliding_window_period = uint32_t(period);
  return Status::ok();
}

}  // namespace

Status plan_hf_folder(const std::string& folder, ConversionPlan* plan) {
  *plan = ConversionPlan{};
  plan->kind = "Hugging Face folder";
  const std::string config_path = join_path(folder, "config.json");
  if (!is_regular_file(config_path))
    return Status::error(folder + ": no config.json (is this a Hugging Face model folder?)");
  json file_config;
  MAGNETAR_TRY(read_json_file(config_path, &file_config));

  // Architecture.
  std::string arch_name;
  if (file_config.contains("architectures") && file_config["architectures"].is_array() &&
      !file_config["architectures"].empty() && file_config["architectures"][0].is_string())
    arch_name = file_config["architectures"][0].get<std::string>();
  if (arch_name.empty())
    return Status::error(config_path + ": no \"architectures\" entry; supported: " +
                         format::supported_hf_architectures());
  const format::ArchitectureTraits* arch = format::find_hf_architecture(arch_name);
  if (!arch)
    return Status::error(config_path + ": architecture " + abridged(arch_name) +
                         " is not supported; supported: " + format::supported_hf_architectures());
  plan->architecture = arch_name;
  // A multimodal checkpoint: its language model's config is text_config, its tensors carry the
  // language_model. prefix, and the vision tower is left out.
  const bool multimodal = arch_name == "Gemma3ForConditionalGeneration";
  TensorPlanOptions tensor_options;
  tensor_options.format = format::SourceFormat::HuggingFace;
  tensor_options.fold_norm_plus_one = arch->norm_plus_one;
  json config = arch->hf_config_defaults ? json::parse(arch->hf_config_defaults) : json::object();
  const json& given = multimodal ? file_config.value("text_config", json()) : file_config;
  if (!given.is_object()) return Status::error(config_path + ": no \"text_config\" object for " + arch_name);
  for (const auto& [key, value] : given.items())
    if (!value.is_null() || !config.contains(key)) config[key] = value;
  if (multimodal) {
    tensor_options.name_prefix = "language_model.";
    plan->notice = "the vision tower is skipped: Magnetar runs the language model only";
  }
  ConfigReader cfg(config, config_path);

  // Hyperparameters.
  int64_t n_layers, dim, hidden, n_heads, n_kv_heads, head_dim, vocab, max_context;
  constexpr int64_t kMaxDim = 1 << 20;
  MAGNETAR_TRY(cfg.get_int("num_hidden_layers", 1, 4096, std::nullopt, &n_layers));
  MAGNETAR_TRY(cfg.get_int("hidden_size", 1, kMaxDim, std::nullopt, &dim));
  MAGNETAR_TRY(cfg.get_int("intermediate_size", 1, kMaxDim, std::nullopt, &hidden));
  MAGNETAR_TRY(cfg.get_int("num_attention_heads", 1, 4096, std::nullopt, &n_heads));
  MAGNETAR_TRY(cfg.get_int("num_key_value_heads", 1, 4096, n_heads, &n_kv_heads));
  MAGNETAR_TRY(cfg.get_int("vocab_size", 1, 1 << 24, std::nullopt, &vocab));
  MAGNETAR_TRY(cfg.get_int("max_position_embeddings", 1, 1 << 24, 2048, &max_context));
  const bool explicit_head_dim = config.contains("head_dim") && !config["head_dim"].is_null();
  if (dim % n_heads != 0 && !explicit_head_dim)
    return Status::error(config_path + ": hidden_size " + std::to_string(dim) +
                         " is not a multiple of num_attention_heads " + std::to_string(n_heads));
  MAGNETAR_TRY(cfg.get_int("head_dim", 2, 65536, dim / n_heads, &head_dim));
  if (head_dim % 2 != 0)
    return Status::error(config_path + ": head_dim " + std::to_string(head_dim) + " must be even");
  if (n_heads % n_kv_heads != 0)
    return Status::error(config_path + ": num_attention_heads " + std::to_string(n_heads) +
                         " is not a multiple of num_key_value_heads " + std::to_string(n_kv_heads));
  double eps, theta;
  MAGNETAR_TRY(cfg.get_float("rms_norm_eps", 1e-6, &eps));
  MAGNETAR_TRY(cfg.get_float("rope_theta", 10000.0, &theta));
  if (eps <= 0 || theta <= 0)
    return Status::error(config_path + ": rms_norm_eps and rope_theta must be positive");
  bool attention_bias, mlp_bias;
  MAGNETAR_TRY(cfg.get_bool("attention_bias", false, &attention_bias));
  MAGNETAR_TRY(cfg.get_bool("mlp_bias", false, &mlp_bias));
  if (attention_bias || mlp_bias)
    return Status::error(config_path + ": attention_bias / mlp_bias are not supported for " + arch_name);

  format::Activation activation = format::Activation::Silu;
  std::string act;
  MAGNETAR_TRY(cfg.get_string(arch->hf_activation_key, &act));
  MAGNETAR_TRY(parse_activation(act.empty() ? arch->hf_default_activation : act, config_path, &activation));

  FileHeader& h = plan->header;
  h.architecture = static_cast<uint32_t>(arch->arch);
  h.n_layers = static_cast<uint32_t>(n_layers);
  h.dim = static_cast<uint32_t>(dim);
  h.hidden_dim = static_cast<uint32_t>(hidden);
  h.n_heads = static_cast<uint32_t>(n_heads);
  h.n_kv_heads = static_cast<uint32_t>(n_kv_heads);
  h.head_dim = static_cast<uint32_t>(head_dim);
  h.vocab_size = static_cast<uint32_t>(vocab);
  h.max_context = static_cast<uint32_t>(max_context);
  h.activation = static_cast<uint32_t>(activation);
  h.norm_eps = static_cast<float>(eps);
  h.rope_theta = static_cast<float>(theta);
  int64_t query_pre_attn_scalar = head_dim;
  if (arch->query_pre_attn_scalar)
    MAGNETAR_TRY(cfg.get_int("query_pre_attn_scalar", 1, 1 << 24, head_dim, &query_pre_attn_scalar));
  h.query_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(query_pre_attn_scalar)));
  if (arch->embed_scale) h.flags |= format::kFlagEmbedScaleSqrtDim;
  if (arch->sandwich_norms) h.flags |= format::kFlagPostNorms;
  if (arch->softcaps) {
    double attn_cap, final_cap;
    MAGNETAR_TRY(cfg.get_float("attn_logit_softcapping", 0.0, &attn_cap));
    MAGNETAR_TRY(cfg.get_float("final_logit_softcapping", 0.0, &final_cap));
    if (attn_cap < 0 || final_cap < 0)
      return Status::error(config_path + ": softcapping values must not be negative");
    h.attn_softcap = static_cast<float>(attn_cap);
    h.final_softcap = static_cast<float>(final_cap);
  }
  MAGNETAR_TRY(parse_rope_scaling(config, config_path, &h));
  if (arch->local_rope_base) {
    double local_theta;
    MAGNETAR_TRY(cfg.get_float("rope_local_base_freq", std::nullopt, &local_theta));
    if (!(local_theta > 0)) return Status::error(config_path + ": rope_local_base_freq must be positive");
    h.rope_local_theta = static_cast<float>(local_theta);
  }
  MAGNETAR_TRY(parse_sliding_layers(*arch, cfg, config, config_path, h.n_layers, &h));

  // Tensors.
  SafetensorsSet set;
  MAGNETAR_TRY(open_safetensors_folder(folder, &set));
  plan->source_bytes = set.total_file_bytes;
  bool tie;
  MAGNETAR_TRY(cfg.get_bool("tie_word_embeddings", arch->hf_tied_default, &tie));
  const bool has_lm_head = set.find(tensor_options.name_prefix + "lm_head.weight", nullptr) != nullptr;
  if (tie || !has_lm_head) h.flags |= format::kFlagTiedEmbeddings;
  MAGNETAR_TRY(plan_model_tensors(
      *arch, tensor_options,
      [&](const std::string& name, uint64_t rows, uint64_t cols, SourceRange* out) {
        return find_source(folder, set, name, rows, cols, out);
      },
      plan));
  MAGNETAR_TRY(check_no_extra_layers(set, tensor_options.name_prefix, n_layers, config_path));

  // Tokenizer, special ids, chat template: tokenizer.model (SentencePiece) when there is one,
  // else tokenizer.json.
  TokenizerConfig tok_config;
  MAGNETAR_TRY(read_tokenizer_config(join_path(folder, "tokenizer_config.json"), &tok_config));
  plan->chat_template = tok_config.chat_template;
  if (!plan->chat_template.empty())  // an unusable template fails now, not at the first chat
    MAGNETAR_TRY(check_chat_template(plan->chat_template).with_context(folder + "/tokenizer_config.json"));
  h.chat_template_kind = static_cast<uint32_t>(detect_chat_template(tok_config.chat_template));
  // Generation also stops on the template's end-of-turn markers and tokenizer_config's eos_token.
  std::vector<std::string> stop_pieces = end_of_turn_markers(plan->chat_template);
  if (!tok_config.eos_token.empty()) stop_pieces.push_back(tok_config.eos_token);
  std::string tokenizer_path = join_path(folder, "tokenizer.model");
  VocabInfo vocab_info;
  if (is_regular_file(tokenizer_path)) {
    MAGNETAR_TRY(read_small_file(tokenizer_path, kMaxTokenizerBytes, &plan->tokenizer));
    if (tok_config.add_bos) h.flags |= format::kFlagAddBos;
    // Added tokens past its pieces (Phi-3's turn markers) join it, so prompts and stops find them.
    std::vector<std::string> added_names;
    for (const auto& [id, token] : tok_config.added_tokens) added_names.push_back(token.content);
    MAGNETAR_TRY(inspect_sentencepiece(plan->tokenizer, tokenizer_path, added_names, &vocab_info));
    std::vector<spm::VocabPiece> added;
    const std::string tokenizer_config_path = join_path(folder, "tokenizer_config.json");
    MAGNETAR_TRY(sentencepiece_added_pieces(tok_config, vocab_info.n_pieces, vocab, tokenizer_config_path, &added));
    for (const spm::VocabPiece& piece : added)  // a name the model has would get a second id
      if (auto it = vocab_info.found.find(piece.piece); it != vocab_info.found.end())
        return Status::error(tokenizer_config_path + ": added token \"" + piece.piece + "\" is already piece " +
                             std::to_string(it->second));
    spm::append_pieces(added, &plan->tokenizer);
    MAGNETAR_TRY(inspect_sentencepiece(plan->tokenizer, tokenizer_path, stop_pieces, &vocab_info));
  } else if (tokenizer_path = join_path(folder, "tokenizer.json"); is_regular_file(tokenizer_path)) {
    std::vector<int> prefix_ids;
    MAGNETAR_TRY(build_hf_tokenizer(tokenizer_path, tok_config, vocab, stop_pieces, &plan->tokenizer,
                                    &vocab_info, &prefix_ids));
    h.tokenizer_kind = static_cast<uint32_t>(TokenizerKind::HuggingFace);
    // The post-processor decides (transformers' fast tokenizers follow it, not add_bos_token).
    if (!prefix_ids.empty()) {
      h.flags |= format::kFlagAddBos;
      if (vocab_info.bos_id < 0) vocab_info.bos_id = prefix_ids[0];
    }
  } else {
    return Status::error(folder + ": no tokenizer.model or tokenizer.json");
  }
  if (vocab_info.n_pieces > vocab)
    return Status::error(tokenizer_path + ": has " + std::to_string(vocab_info.n_pieces) +
                         " pieces but config.json's vocab_size is " + std::to_string(vocab));

  json generation = json::object();
  const std::string generation_path = join_path(folder, "generation_config.json");
  if (is_regular_file(generation_path)) MAGNETAR_TRY(read_json_file(generation_path, &generation));
  std::vector<int> bos_ids, eog;
  MAGNETAR_TRY(collect_ids(file_config, "bos_token_id", config_path, &bos_ids));
  MAGNETAR_TRY(collect_ids(generation, "bos_token_id", generation_path, &bos_ids));
  MAGNETAR_TRY(collect_ids(file_config, "eos_token_id", config_path, &eog));
  MAGNETAR_TRY(collect_ids(generation, "eos_token_id", generation_path, &eog));
  if (bos_ids.empty() && vocab_info.bos_id >= 0) bos_ids.push_back(vocab_info.bos_id);
  if (eog.empty() && vocab_info.eos_id >= 0) eog.push_back(vocab_info.eos_id);
  for (const std::string& piece : stop_pieces) {
    auto it = vocab_info.found.find(piece);
    if (it != vocab_info.found.end() && std::find(eog.begin(), eog.end(), it->second) == eog.end())
      eog.push_back(it->second);
  }
  if (bos_ids.empty()) return Status::error(folder + ": no bos_token_id in config.json and none in "
                                            "the tokenizer");
  h.bos_id = bos_ids[0];
  if (eog.empty()) return Status::error(folder + ": no eos_token_id in config.json or "
                                        "generation_config.json and none in the tokenizer");
  if (eog.size() > static_cast<size_t>(format::kMaxEogIds))
    return Status::error(folder + ": " + std::to_string(eog.size()) +
                         " end-of-generation ids; at most " + std::to_string(format::kMaxEogIds));
  for (int id : eog)
    if (id >= vocab) return Status::error(folder + ": eos id " + std::to_string(id) +
                                          " is outside the vocabulary");
  if (h.bos_id >= vocab) return Status::error(folder + ": bos id " + std::to_string(h.bos_id) +
                                              " is outside the vocabulary");
  h.n_eog_ids = static_cast<int32_t>(eog.size());
  for (size_t i = 0; i < eog.size(); ++i) h.eog_ids[i] = eog[i];
  return Status::ok();
}

}  // namespace magnetar::convert
