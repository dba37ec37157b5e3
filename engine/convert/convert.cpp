// The converter's public API (magnetar/convert.h): plan the source (Hugging Face folder, GGUF
// file or llama2.c checkpoint), then stream every planned tensor chunk by chunk — read, widen to FP32, permute
// llama2.c q/k rows, fold Gemma's norm offset, narrow to the output type — into the model writer.
// Peak extra memory is a few chunk buffers (kChunkBytes each), whatever the model size.
#include "magnetar/convert.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <vector>

#include "convert/gguf_import.h"
#include "convert/input_file.h"
#include "convert/plan.h"
#include "core/thread_pool.h"
#include "format/model_writer.h"
#include "format/quant_mix.h"
#include "kernels/quant.h"
#include "kernels/type_traits.h"
#include "kernels/kernels.h"
#include "magnetar/engine.h"
#include "ops/parallel_quantize.h"

namespace magnetar {

using convert::ConversionPlan;
using convert::PlannedTensor;
using convert::SourceDType;
using convert::SourceRange;

namespace {

constexpr uint64_t kChunkBytes = 8ull << 20;  // source bytes read per step

Status plan_source(const std::string& source, const std::string& tokenizer_path,
                   ConversionPlan* plan) {
  if (convert::is_directory(source)) return convert::plan_hf_folder(source, plan);
  if (convert::is_regular_file(source)) {
    std::string name = convert::file_name(source);
    if (name == "config.json" || name.find(".safetensors") != std::string::npos)
      return convert::plan_hf_folder(convert::parent_dir(source), plan);
    if (convert::looks_like_gguf(source)) return convert::plan_gguf(source, plan);
    return convert::plan_llama2c(source, tokenizer_path, plan);
  }
  return Status::error(source + ": not found (expected a Hugging Face model folder or a "
                       "llama2.c .bin checkpoint)");
}

// Every file a conversion of `source` may read: the tensor data files of the plan, the source
// itself, the tokenizer given, and the side files of a folder (configs, tokenizers, index) or of
// a checkpoint's folder (the tokenizer found beside it).
std::vector<std::string> conversion_inputs(const std::string& source, const std::string& tokenizer_path,
                                           const ConversionPlan& plan) {
  std::vector<std::string> inputs = {source};
  if (!tokenizer_path.empty()) inputs.push_back(tokenizer_path);
  for (const PlannedTensor& t : plan.tensors)
    for (const SourceRange& r : t.parts) inputs.push_back(r.file);
  const std::string folder = convert::is_directory(source) ? source : convert::parent_dir(source);
  const std::string v = std::to_string(plan.header.vocab_size);  // llama2.c's tok<vocab>.{model,bin}
  for (const std::string& name : {std::string("config.json"), std::string("generation_config.json"),
                                  std::string("tokenizer_config.json"), std::string("tokenizer.model"),
                                  std::string("tokenizer.json"), std::string("model.safetensors.index.json"),
                                  "tok" + v + ".model", "tok" + v + ".bin"})
    inputs.push_back(convert::join_path(folder, name));
  std::sort(inputs.begin(), inputs.end());
  inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
  return inputs;
}

// The output must not be an input under another name (the same path, a hard link or a
// symlink): the final rename would replace the source with the model file.
Status check_output_is_not_an_input(const std::string& out_path, const std::vector<std::string>& inputs) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path out = convert::utf8_path(out_path);
  if (!fs::exists(out, ec)) return Status::ok();
  for (const std::string& input : inputs) {
    if (fs::equivalent(out, convert::utf8_path(input), ec) && !ec)
      return Status::error(out_path + ": is " + (input == out_path ? "" : "the same file as ") +
                           (input == out_path ? "" : input + ", ") +
                           "an input of this conversion; refusing to overwrite it");
  }
  return Status::ok();
}

bool cancelled(const ConvertOptions& options) {
  return options.cancel && options.cancel->load(std::memory_order_relaxed);
}

Status cancelled_error() { return Status::error("conversion cancelled"); }

// Widens n source elements to FP32.
void widen(SourceDType dtype, const uint8_t* src, float* dst, uint64_t n) {
  switch (dtype) {
    case SourceDType::F32: std::memcpy(dst, src, n * 4); break;
    case SourceDType::F16:
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = kernels::f16_to_f32_scalar(h);
      }
      break;
    case SourceDType::BF16:
      for (uint64_t i = 0; i < n; ++i) {
        uint16_t h;
        std::memcpy(&h, src + 2 * i, 2);
        dst[i] = kernels::bf16_to_f32_scalar(h);
      }
      break;
    case SourceDType::Blocks: break;  // widen_part
    case SourceDType::Other: break;  // rejected while planning
  }
}

// Widens n elements (whole rows) of a source part to FP32.
void widen_part(const SourceRange& part, const uint8_t* src, float* dst, uint64_t n) {
  if (part.dtype == SourceDType::Blocks)
    quant::type_traits(part.block_type).dequantize_row(src, dst, int64_t(n));
  else
    widen(part.dtype, src, dst, n);
}

bool same_block_type(const SourceRange& source, format::DType out) {
  return source.dtype == SourceDType::Blocks && source.block_type == out;
}

// llama2.c (Meta) interleaved RoPE rows → Hugging Face rotate-half rows, per head:
// hf[j * half + i] = meta[2 i + j] for i < head_dim / 2, j ∈ {0, 1}
// (the permutation transformers' convert_llama_weights_to_hf.py applies to Meta checkpoints).
// Rows of any encoding (row_bytes each): quantized rows move as whole rows, unchanged.
void interleaved_to_rotate_half_rows(const uint8_t* src, uint8_t* dst, uint64_t n_heads,
                                     uint64_t head_dim, uint64_t row_bytes) {
  const uint64_t half = head_dim / 2;
  for (uint64_t h = 0; h < n_heads; ++h)
    for (uint64_t i = 0; i < half; ++i)
      for (uint64_t j = 0; j < 2; ++j)
        std::memcpy(dst + (h * head_dim + j * half + i) * row_bytes,
                    src + (h * head_dim + 2 * i + j) * row_bytes, row_bytes);
}

void interleaved_to_rotate_half(const float* src, float* dst, uint64_t n_heads, uint64_t head_dim,
                                uint64_t cols) {
  interleaved_to_rotate_half_rows(reinterpret_cast<const uint8_t*>(src), reinterpret_cast<uint8_t*>(dst),
                                  n_heads, head_dim, cols * 4);
}

// How matrices are stored: as the source's own types (WeightType::Auto on a GGUF file), as
// one type, or as a K-quant mix (format/quant_mix.h chooses per tensor).
struct TypeChoice {
  enum class Kind { KeepSource, One, Mix } kind = Kind::One;
  format::DType dtype = format::DType::F16;       // Kind::One
  format::QuantMix mix = format::QuantMix::Q4_K_M;  // Kind::Mix
};

// The stored types: one choice for the embedding table and LM head, one for every other matrix.
struct OutputTypes {
  TypeChoice weights;
  TypeChoice embeddings;  // tok_embeddings and output
  format::MixModel model;  // what a mix's rule needs
};

bool is_embedding_or_head(const std::string& name) { return name == "tok_embeddings" || name == "output"; }

const TypeChoice& choice_for(const std::string& name, const OutputTypes& types) {
  return is_embedding_or_head(name) ? types.embeddings : types.weights;
}

// The type a source part keeps under WeightType::Auto (BF16, which the file has not, as F16).
format::DType source_type(const SourceRange& r) {
  if (r.dtype == SourceDType::Blocks) return r.block_type;
  return r.dtype == SourceDType::F32 ? format::DType::F32 : format::DType::F16;
}

// The stored type of part `part` (of `n_parts`) of matrix `name` with rows of `cols` values;
// `source` is that part's source type (for Kind::KeepSource).
format::DType matrix_part_dtype(const std::string& name, size_t part, size_t n_parts, uint64_t cols,
                                format::DType source, const OutputTypes& types) {
  const TypeChoice& choice = choice_for(name, types);
  switch (choice.kind) {
    case TypeChoice::Kind::KeepSource: return source;
    case TypeChoice::Kind::Mix: return format::mix_tensor_type(choice.mix, types.model, name, part, n_parts, cols);
    case TypeChoice::Kind::One: break;
  }
  return format::fallback_type(choice.dtype, cols);  // rows not of whole blocks: MODEL_FORMAT.md
}

format::DType part_dtype(const PlannedTensor& t, size_t part, const OutputTypes& types) {
  if (t.is_norm) return format::DType::F32;
  return matrix_part_dtype(t.name, part, t.parts.size(), t.cols, source_type(t.parts[part]), types);
}

// A fused tensor whose parts get different types (a *_K_M file's or mix's attn_v beside attn_q
// / attn_k) is written as its parts (format::fused_parts), each in its type; then every planned
// tensor has one type, part_dtype(t, 0).
Status split_mixed_types(const std::vector<PlannedTensor>& in, const OutputTypes& types,
                         std::vector<PlannedTensor>* out) {
  out->clear();
  for (const PlannedTensor& t : in) {
    bool mixed = false;
    for (size_t i = 0; i < t.parts.size(); ++i) mixed |= part_dtype(t, i, types) != part_dtype(t, 0, types);
    if (!mixed) {
      out->push_back(t);
      continue;
    }
    const std::vector<std::string> names = format::fused_parts(t.name);
    if (names.size() != t.parts.size())
      return Status::error("tensor " + t.name + ": its parts have different types and it has no stored parts");
    for (size_t i = 0; i < names.size(); ++i) {
      PlannedTensor part = t;
      part.name = names[i];
      part.rows = t.parts[i].rows;
      part.parts = {t.parts[i]};
      out->push_back(std::move(part));
    }
  }
  return Status::ok();
}

class OpenFiles {
 public:
  Status get(const std::string& path, convert::InputFile** out) {
    auto it = files_.find(path);
    if (it == files_.end()) {
      auto f = std::make_unique<convert::InputFile>();
      MAGNETAR_TRY(f->open(path));
      it = files_.emplace(path, std::move(f)).first;
    }
    *out = it->second.get();
    return Status::ok();
  }

 private:
  std::map<std::string, std::unique_ptr<convert::InputFile>> files_;
};

Status run_plan(const ConversionPlan& source_plan, const std::string& out_path, const OutputTypes& types,
                const ConvertOptions& options) {
  ConversionPlan plan = source_plan;
  MAGNETAR_TRY(split_mixed_types(source_plan.tensors, types, &plan.tensors));
  ConvertProgress progress;
  progress.bytes_total = plan.bytes_to_read;
  auto report = [&](const std::string& stage) {
    if (!options.on_progress) return;
    progress.stage = stage;
    options.on_progress(progress);
  };

  std::vector<format::TensorDecl> decls;
  for (const PlannedTensor& t : plan.tensors)
    decls.push_back({t.name, part_dtype(t, 0, types), t.rows, t.cols, t.n_dims});
  std::unique_ptr<format::ModelWriter> writer;
  MAGNETAR_TRY(format::ModelWriter::create(out_path, plan.header, decls, plan.tokenizer,
                                           plan.chat_template, &writer));

  OpenFiles files;
  // Quantizing runs on every core (a pool made for the first quantized tensor); reading,
  // widening and writing stay on this thread.
  std::unique_ptr<ThreadPool> pool;
  std::vector<uint8_t> raw;
  std::vector<float> wide, permuted;
  std::vector<uint8_t> encoded;
  for (size_t ti = 0; ti < plan.tensors.size(); ++ti) {
    const PlannedTensor& t = plan.tensors[ti];
    if (cancelled(options)) return cancelled_error();
    report("tensor " + t.name);
    const format::DType dtype = decls[ti].dtype;
    uint64_t written = 0;
    for (const SourceRange& part : t.parts) {
      convert::InputFile* file = nullptr;
      MAGNETAR_TRY(files.get(part.file, &file));
      const uint64_t row_bytes = part.row_bytes();
      // Rows per chunk; whole heads when the rows get permuted.
      const uint64_t head_rows = part.interleaved_rope_heads ? part.rows / part.interleaved_rope_heads : 1;
      uint64_t chunk_rows = std::max<uint64_t>(1, kChunkBytes / row_bytes);
      chunk_rows = std::max<uint64_t>(head_rows, chunk_rows / head_rows * head_rows);
      for (uint64_t row = 0; row < part.rows; row += chunk_rows) {
        if (cancelled(options)) return cancelled_error();
        const uint64_t rows = std::min(chunk_rows, part.rows - row);
        const uint64_t n = rows * part.cols;
        raw.resize(rows * row_bytes);
        MAGNETAR_TRY(file->read_at(part.offset + row * row_bytes, raw.data(), raw.size())
                         .with_context("tensor " + part.name));
        if (same_block_type(part, dtype) && t.add == 0.0f) {
          // GGUF blocks into the same type: copied (rows permuted whole), never requantised.
          const uint8_t* out_rows = raw.data();
          if (part.interleaved_rope_heads) {
            encoded.resize(raw.size());
            interleaved_to_rotate_half_rows(raw.data(), encoded.data(), rows / head_rows, head_rows,
                                            row_bytes);
            out_rows = encoded.data();
          }
          MAGNETAR_TRY(writer->write_tensor_part(ti, written, out_rows, raw.size()));
          written += raw.size();
          progress.bytes_done += raw.size();
          report("tensor " + t.name);
          continue;
        }
        wide.resize(n);
        widen_part(part, raw.data(), wide.data(), n);
        const float* values = wide.data();
        if (part.interleaved_rope_heads) {
          permuted.resize(n);
          interleaved_to_rotate_half(wide.data(), permuted.data(), rows / head_rows, head_rows,
                                     part.cols);
          values = permuted.data();
        }
        if (t.add != 0.0f)
          for (uint64_t i = 0; i < n; ++i) wide[i] += t.add;  // only norms; never permuted
        const void* out = values;
        uint64_t out_bytes = n * 4;
        if (format::dtype_is_quantized(dtype)) {
          // The type's quantizer (type_traits.h) over the chunk's rows, whole blocks each, split
          // across the pool: the same bytes for any thread count.
          if (quant::type_traits(dtype).quantize_row == nullptr)
            return Status::error("tensor " + t.name + ": Magnetar cannot quantize to " + format::dtype_name(dtype) +
                                 " (copying a GGUF tensor of that type needs --dtype auto)");
          if (!pool) pool = std::make_unique<ThreadPool>(options.threads > 0 ? options.threads : ThreadPool::default_threads());
          out_bytes = format::tensor_bytes(dtype, rows, part.cols);
          encoded.resize(out_bytes);
          ops::quantize_parallel(*pool, dtype, values, n, encoded.data());
          out = encoded.data();
        } else if (dtype == format::DType::F16) {
          encoded.resize(n * 2);
          for (uint64_t i = 0; i < n; ++i) {
            uint16_t h = kernels::f32_to_f16_scalar(values[i]);
            std::memcpy(encoded.data() + 2 * i, &h, 2);
          }
          out = encoded.data();
          out_bytes = n * 2;
        }
        MAGNETAR_TRY(writer->write_tensor_part(ti, written, out, out_bytes));
        written += out_bytes;
        progress.bytes_done += rows * row_bytes;
        report("tensor " + t.name);
      }
    }
  }
  if (cancelled(options)) return cancelled_error();
  report("writing " + out_path);
  MAGNETAR_TRY(writer->commit());
  report("done");
  return Status::ok();
}

// Auto keeps a GGUF's types (F16 for other sources); a mix chooses per tensor; any other type
// must be one Magnetar can quantize to (every block type; F32 / F16 are written as they are).
Status type_choice_for(WeightType type, bool keeps_source_types, TypeChoice* out) {
  if (type == WeightType::Auto) {
    out->kind = keeps_source_types ? TypeChoice::Kind::KeepSource : TypeChoice::Kind::One;
    out->dtype = format::DType::F16;
    return Status::ok();
  }
  if (convert::weight_mix_for(type, &out->mix)) {
    out->kind = TypeChoice::Kind::Mix;
    return Status::ok();
  }
  out->kind = TypeChoice::Kind::One;
  MAGNETAR_TRY(convert::weight_dtype_for(type, &out->dtype));
  if (format::dtype_is_quantized(out->dtype) && quant::type_traits(out->dtype).quantize_row == nullptr)
    return Status::error(std::string("converting to ") + weight_type_name(type) + " is not supported (Magnetar " +
                         "quantizes to " + convertible_weight_type_names() + "; other GGUF tensor types are " +
                         "copied from GGUF files with --dtype auto)");
  return Status::ok();
}

// The K-quant mixes: WeightType, name, rule.
struct MixName {
  WeightType type;
  const char* name;
  format::QuantMix mix;
};
// llama.cpp's Q2_K file type is a mix too, and has the Q2_K type's name: `--dtype q2_k` is the
// mix (as in llama-quantize), so the Q2_K type is not offered alone.
constexpr MixName kMixes[] = {{WeightType::Q4_K_M, "q4_k_m", format::QuantMix::Q4_K_M},
                              {WeightType::Q5_K_M, "q5_k_m", format::QuantMix::Q5_K_M},
                              {WeightType::Q3_K_M, "q3_k_m", format::QuantMix::Q3_K_M},
                              {WeightType::Q2_K_Mix, "q2_k", format::QuantMix::Q2_K}};

bool named_like_a_mix(format::DType t) {
  for (const MixName& m : kMixes)
    if (std::strcmp(m.name, format::dtype_name(t)) == 0) return true;
  return false;
}

// F32, F16 and the block types Magnetar has a quantizer for, unless a mix has the type's name.
bool quantizable(format::DType t) {
  if (named_like_a_mix(t)) return false;
  return !format::dtype_is_quantized(t) || quant::type_traits(t).quantize_row != nullptr;
}

}  // namespace

namespace convert {

// WeightType's values 0..13 are format::DType's (plus the mixes and Auto): one list of types.
static_assert(uint32_t(WeightType::Q5_1) + 1 == format::kDTypeCount, "WeightType and format::DType must agree");

Status weight_dtype_for(WeightType type, format::DType* out) {
  if (type == WeightType::Auto) {  // a folder's auto (synth, predictions)
    *out = format::DType::F16;
    return Status::ok();
  }
  format::QuantMix mix;
  if (weight_mix_for(type, &mix))
    return Status::error(std::string(weight_type_name(type)) + " is a mix of types, chosen per tensor");
  if (!format::dtype_is_valid(uint32_t(type))) return Status::error("unknown weight type " + std::to_string(uint32_t(type)));
  *out = format::DType(uint32_t(type));
  return Status::ok();
}

bool weight_mix_for(WeightType type, format::QuantMix* out) {
  for (const MixName& m : kMixes)
    if (m.type == type) {
      *out = m.mix;
      return true;
    }
  return false;
}

WeightType weight_type_of(format::DType dtype) { return WeightType(uint32_t(dtype)); }

}  // namespace convert

const char* weight_type_name(WeightType type) {
  if (type == WeightType::Auto) return "auto";
  for (const MixName& m : kMixes)
    if (m.type == type) return m.name;
  return format::dtype_is_valid(uint32_t(type)) ? format::dtype_name(format::DType(uint32_t(type))) : "unknown";
}

namespace {
// Every type `convert --dtype` takes, largest (bytes per parameter) first; Auto last.
std::vector<WeightType> convertible_types() {
  std::vector<WeightType> types;
  for (uint32_t i = 0; i < format::kDTypeCount; ++i)
    if (quantizable(format::DType(i))) types.push_back(WeightType(i));
  for (const MixName& m : kMixes) types.push_back(m.type);
  std::stable_sort(types.begin(), types.end(), [](WeightType a, WeightType b) {
    return weight_type_bytes_per_parameter(a) > weight_type_bytes_per_parameter(b);
  });
  return types;
}
}  // namespace

const char* convertible_weight_type_names() {
  static const std::string names = [] {
    std::string r;
    for (WeightType t : convertible_types()) r += (r.empty() ? "" : ", ") + std::string(weight_type_name(t));
    return r;
  }();
  return names.c_str();
}

bool parse_weight_type(const std::string& name, WeightType* out) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  std::vector<WeightType> types = convertible_types();
  types.push_back(WeightType::Auto);
  for (WeightType t : types)
    if (n == weight_type_name(t)) {
      *out = t;
      return true;
    }
  return false;
}

double weight_type_bytes_per_parameter(WeightType type) {
  format::QuantMix mix;
  if (!convert::weight_mix_for(type, &mix)) {
    format::DType dtype = format::DType::F32;
    if (!convert::weight_dtype_for(type, &dtype).is_ok()) return 4.0;
    const format::DTypeLayout& l = format::dtype_layout(dtype);
    return double(l.block_bytes) / double(l.block_elements);
  }
  // A mix: its rule over the matrices of a Llama-2-7B-shaped model (32 layers, hidden 4096,
  // feed-forward 11008, 32000 tokens, untied), where its Q6_K share is typical.
  constexpr uint64_t kDim = 4096, kHidden = 11008, kVocab = 32000;
  constexpr int kLayers = 32;
  const format::MixModel model{kLayers, false, false, 1};
  double bytes = 0, params = 0;
  auto add = [&](const std::string& name, size_t part, size_t n_parts, uint64_t rows, uint64_t cols) {
    bytes += double(format::tensor_bytes(format::mix_tensor_type(mix, model, name, part, n_parts, cols), rows, cols));
    params += double(rows * cols);
  };
  add("tok_embeddings", 0, 1, kVocab, kDim);
  add("output", 0, 1, kVocab, kDim);
  for (int l = 0; l < kLayers; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    for (size_t part = 0; part < 3; ++part) add(p + "wqkv", part, 3, kDim, kDim);
    add(p + "wo", 0, 1, kDim, kDim);
    for (size_t part = 0; part < 2; ++part) add(p + "w_gate_up", part, 2, kHidden, kDim);
    add(p + "w_down", 0, 1, kDim, kHidden);
  }
  return bytes / params;
}

// ---- Planned sources ------------------------------------------------------------------------

namespace {

// What convert_model checks before reusing a plan: an input file that appeared, vanished, or
// changed size or modification time since the plan was made means planning again.
struct InputStamp {
  bool exists = false;
  uint64_t bytes = 0;
  std::filesystem::file_time_type modified{};
  bool operator==(const InputStamp&) const = default;
};

InputStamp stamp_of(const std::string& path) {
  std::error_code ec;
  const std::filesystem::path p = convert::utf8_path(path);
  InputStamp s;
  s.exists = std::filesystem::is_regular_file(p, ec);
  if (!s.exists) return s;
  s.bytes = std::filesystem::file_size(p, ec);
  s.modified = std::filesystem::last_write_time(p, ec);
  return s;
}

}  // namespace

struct PlannedSource::Plan {
  ConversionPlan plan;
  std::vector<std::string> inputs;  // conversion_inputs(source, "", plan)
  std::vector<InputStamp> stamps;   // of each input, when planned

  bool inputs_unchanged() const {
    for (size_t i = 0; i < inputs.size(); ++i)
      if (!(stamp_of(inputs[i]) == stamps[i])) return false;
    return true;
  }
};

namespace {

void summarize(const ConversionPlan& plan, SourceSummary* out) {
  *out = SourceSummary{};
  out->architecture = plan.architecture;
  out->kind = plan.kind;
  out->family = architecture_display_name(static_cast<Architecture>(plan.header.architecture));
  out->notice = plan.notice;
  out->source_bytes = plan.source_bytes;
  out->n_layers = static_cast<int>(plan.header.n_layers);
  out->dim = static_cast<int>(plan.header.dim);
  out->vocab_size = static_cast<int>(plan.header.vocab_size);
  out->max_context = static_cast<int>(plan.header.max_context);
  out->n_kv_heads = static_cast<int>(plan.header.n_kv_heads);
  out->head_dim = static_cast<int>(plan.header.head_dim);
  out->n_tensors = static_cast<int>(plan.tensors.size());
  out->tokenizer_bytes = plan.tokenizer.size() + plan.chat_template.size();
  out->keeps_source_types = plan.keeps_source_types;
  const format::MixModel mix_model = format::mix_model_of(plan.header);
  out->tied_embeddings = mix_model.tied_embeddings;
  out->llama_70b_shape = mix_model.llama_70b;
  out->gqa_ratio = mix_model.gqa_ratio;
  for (const PlannedTensor& t : plan.tensors) {
    const uint64_t n = t.rows * t.cols;
    out->n_params += n;
    if (t.is_norm) {
      out->n_norm_params += n;
      continue;
    }
    SourceSummary::Matrix m{t.name, t.cols, {}};
    for (const SourceRange& r : t.parts) m.parts.push_back({r.rows, convert::weight_type_of(source_type(r))});
    out->matrices.push_back(std::move(m));
    const bool unblocked = t.cols % quant::kBlock != 0;
    if (is_embedding_or_head(t.name)) {
      out->n_output_params += n;
      if (unblocked) out->n_output_unblocked_params += n;
    } else if (unblocked) {
      out->n_unblocked_params += n;
    }
  }
}

}  // namespace

Status inspect_source(const std::string& source_path, SourceSummary* out) {
  return inspect_source(source_path, out, nullptr);
}

Status inspect_source(const std::string& source_path, SourceSummary* out, PlannedSource* planned) {
  *out = SourceSummary{};
  if (planned != nullptr) *planned = PlannedSource{};
  auto kept = std::make_shared<PlannedSource::Plan>();
  // Stamped before reading: a file changed while it is planned counts as changed.
  kept->inputs = conversion_inputs(source_path, "", kept->plan);
  for (const std::string& input : kept->inputs) kept->stamps.push_back(stamp_of(input));
  MAGNETAR_TRY(plan_source(source_path, "", &kept->plan));
  summarize(kept->plan, out);
  if (planned == nullptr) return Status::ok();
  // The plan's own data files (shards, a GGUF file) join the side files stamped above.
  for (const std::string& input : conversion_inputs(source_path, "", kept->plan))
    if (std::find(kept->inputs.begin(), kept->inputs.end(), input) == kept->inputs.end()) {
      kept->inputs.push_back(input);
      kept->stamps.push_back(stamp_of(input));
    }
  planned->plan = std::move(kept);
  planned->source_path = source_path;
  return Status::ok();
}

uint64_t predicted_model_file_bytes(const SourceSummary& s, WeightType type) {
  ConvertOptions options;
  options.weight_type = type;
  return predicted_model_file_bytes(s, options);
}

uint64_t predicted_model_file_bytes(const SourceSummary& s, const ConvertOptions& options) {
  // The converter's own type choice for every matrix part (a type it cannot write: F32).
  OutputTypes types;
  const TypeChoice f32{TypeChoice::Kind::One, format::DType::F32, {}};
  if (!type_choice_for(options.weight_type, s.keeps_source_types, &types.weights).is_ok()) types.weights = f32;
  if (!type_choice_for(options.output_weight_type.value_or(options.weight_type), s.keeps_source_types,
                       &types.embeddings).is_ok())
    types.embeddings = f32;
  types.model = {s.n_layers, s.tied_embeddings, s.llama_70b_shape, s.gqa_ratio};
  uint64_t n_tensors = static_cast<uint64_t>(s.n_tensors), matrix_bytes = 0;
  for (const SourceSummary::Matrix& m : s.matrices) {
    std::vector<format::DType> dtypes;
    uint64_t rows = 0;
    for (size_t i = 0; i < m.parts.size(); ++i) {
      format::DType source = format::DType::F32;
      if (!convert::weight_dtype_for(m.parts[i].source_type, &source).is_ok()) source = format::DType::F32;
      dtypes.push_back(matrix_part_dtype(m.name, i, m.parts.size(), m.cols, source, types));
      rows += m.parts[i].rows;
    }
    const bool split = std::any_of(dtypes.begin(), dtypes.end(), [&](format::DType t) { return t != dtypes[0]; });
    if (!split) {
      matrix_bytes += format::tensor_bytes(dtypes[0], rows, m.cols);
      continue;
    }
    n_tensors += m.parts.size() - 1;  // stored as its parts (split_mixed_types)
    for (size_t i = 0; i < m.parts.size(); ++i) matrix_bytes += format::tensor_bytes(dtypes[i], m.parts[i].rows, m.cols);
  }
  const uint64_t meta = sizeof(format::FileHeader) + n_tensors * sizeof(format::TensorEntry) + s.tokenizer_bytes;
  // Upper bound: every tensor may need up to 63 bytes of padding to the next 64-byte boundary.
  return format::align_up(meta, format::kAlignment) + matrix_bytes + s.n_norm_params * 4 +
         n_tensors * (format::kAlignment - 1);
}

int remove_stale_conversion_files(const std::string& folder) {
  return format::remove_stale_temp_files_in(folder);
}

namespace {

Status check_output_path(const std::string& out_path) {
  if (out_path.empty()) return Status::error("no output path given");
  if (convert::is_directory(out_path))
    return Status::error(out_path + ": is a folder; give the model file's path");
  const std::string out_dir = convert::parent_dir(out_path);
  if (!convert::is_directory(out_dir))
    return Status::error(out_path + ": the folder " + out_dir + " does not exist");
  return Status::ok();
}

Status convert_plan(const ConversionPlan& plan, const std::string& source_path, const std::string& out_path,
                    const ConvertOptions& options) {
  OutputTypes types;
  MAGNETAR_TRY(type_choice_for(options.weight_type, plan.keeps_source_types, &types.weights));
  MAGNETAR_TRY(type_choice_for(options.output_weight_type.value_or(options.weight_type), plan.keeps_source_types,
                               &types.embeddings));
  types.model = format::mix_model_of(plan.header);
  MAGNETAR_TRY(check_output_is_not_an_input(
      out_path, conversion_inputs(source_path, options.tokenizer_path, plan)));
  if (cancelled(options)) return cancelled_error();
  return run_plan(plan, out_path, types, options);
}

}  // namespace

Status convert_model(const std::string& source_path, const std::string& out_path,
                     const ConvertOptions& options) {
  MAGNETAR_TRY(check_output_path(out_path));
  if (options.on_progress) options.on_progress({0, 0, "reading " + source_path});
  ConversionPlan plan;
  MAGNETAR_TRY(plan_source(source_path, options.tokenizer_path, &plan));
  return convert_plan(plan, source_path, out_path, options);
}

Status convert_model(const PlannedSource& source, const std::string& out_path, const ConvertOptions& options) {
  if (source.plan == nullptr || !options.tokenizer_path.empty() || !source.plan->inputs_unchanged())
    return convert_model(source.source_path, out_path, options);
  MAGNETAR_TRY(check_output_path(out_path));
  return convert_plan(source.plan->plan, source.source_path, out_path, options);
}

}  // namespace magnetar
