// The converter's public API (magnetar/convert.h): plan the source (HF folder or llama2.c
// checkpoint), then stream every planned tensor chunk by chunk — read, widen to FP32, permute
// llama2.c q/k rows, fold Gemma's norm offset, narrow to the output type — into the model writer.
// Peak extra memory is a few chunk buffers (kChunkBytes each), whatever the model size.
#include "magnetar/convert.h"

#include <algorithm>
#include <cctype>
#include <cstring>
#include <map>
#include <memory>
#include <vector>

#include "convert/gguf_import.h"
#include "convert/input_file.h"
#include "kernels/quant.h"
#include "convert/plan.h"
#include "format/model_writer.h"
#include "kernels/kernels.h"
#include "magnetar/engine.h"

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
    case SourceDType::Q8_0:  // whole rows of whole blocks: n is a multiple of 32
      quant::dequantize_row_q8_0(reinterpret_cast<const quant::BlockQ8_0*>(src), dst, int64_t(n));
      break;
    case SourceDType::Q4_0:
      quant::dequantize_row_q4_0(reinterpret_cast<const quant::BlockQ4_0*>(src), dst, int64_t(n));
      break;
    case SourceDType::Other: break;  // rejected while planning
  }
}

bool same_block_type(SourceDType source, format::DType out) {
  return (source == SourceDType::Q8_0 && out == format::DType::Q8_0) ||
         (source == SourceDType::Q4_0 && out == format::DType::Q4_0);
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

// The stored types: one for the embedding table and LM head, one for every other matrix.
struct OutputTypes {
  format::DType weights = format::DType::F16;
  format::DType embeddings = format::DType::F16;  // tok_embeddings and output
};

bool is_embedding_or_head(const PlannedTensor& t) {
  return t.name == "tok_embeddings" || t.name == "output";
}

format::DType output_dtype(const PlannedTensor& t, const OutputTypes& types) {
  if (t.is_norm) return format::DType::F32;
  const format::DType wanted = is_embedding_or_head(t) ? types.embeddings : types.weights;
  const bool quantized = wanted == format::DType::Q8_0 || wanted == format::DType::Q4_0;
  // Quantized rows are whole 32-blocks; other matrices stay F16 (`info` shows which).
  if (quantized && t.cols % quant::kBlock != 0) return format::DType::F16;
  return wanted;
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

Status run_plan(const ConversionPlan& plan, const std::string& out_path, const OutputTypes& types,
                const ConvertOptions& options) {
  ConvertProgress progress;
  progress.bytes_total = plan.bytes_to_read;
  auto report = [&](const std::string& stage) {
    if (!options.on_progress) return;
    progress.stage = stage;
    options.on_progress(progress);
  };

  std::vector<format::TensorDecl> decls;
  for (const PlannedTensor& t : plan.tensors)
    decls.push_back({t.name, output_dtype(t, types), t.rows, t.cols, t.n_dims});
  std::unique_ptr<format::ModelWriter> writer;
  MAGNETAR_TRY(format::ModelWriter::create(out_path, plan.header, decls, plan.tokenizer,
                                           plan.chat_template, &writer));

  OpenFiles files;
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
      const uint64_t row_bytes = convert::source_row_bytes(part.dtype, part.cols);
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
        if (same_block_type(part.dtype, dtype) && t.add == 0.0f) {
          // GGUF Q8_0 / Q4_0 into the same type: blocks are copied (rows permuted whole), never
          // requantised.
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
        widen(part.dtype, raw.data(), wide.data(), n);
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
        if (dtype == format::DType::Q8_0 || dtype == format::DType::Q4_0) {
          // GGML's reference quantizers, row by row (bit-exact with llama.cpp's output).
          const bool q8 = dtype == format::DType::Q8_0;
          const uint64_t qrow = uint64_t(q8 ? quant::row_bytes_q8_0(int64_t(part.cols))
                                            : quant::row_bytes_q4_0(int64_t(part.cols)));
          encoded.resize(rows * qrow);
          for (uint64_t r = 0; r < rows; ++r) {
            uint8_t* dst = encoded.data() + r * qrow;
            if (q8)
              quant::quantize_row_q8_0(values + r * part.cols, reinterpret_cast<quant::BlockQ8_0*>(dst),
                                       int64_t(part.cols));
            else
              quant::quantize_row_q4_0(values + r * part.cols, reinterpret_cast<quant::BlockQ4_0*>(dst),
                                       int64_t(part.cols));
          }
          out = encoded.data();
          out_bytes = rows * qrow;
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

Status weight_dtype_for(WeightType type, format::DType* out) {
  switch (type) {
    case WeightType::F32: *out = format::DType::F32; return Status::ok();
    case WeightType::F16: *out = format::DType::F16; return Status::ok();
    case WeightType::Q8_0: *out = format::DType::Q8_0; return Status::ok();
    case WeightType::Q4_0: *out = format::DType::Q4_0; return Status::ok();
  }
  return Status::error(std::string("weight type ") + weight_type_name(type) +
                       " is not supported by the converter (use f32, f16, q8_0 or q4_0)");
}

}  // namespace

const char* weight_type_name(WeightType type) {
  switch (type) {
    case WeightType::F32: return "f32";
    case WeightType::F16: return "f16";
    case WeightType::Q8_0: return "q8_0";
    case WeightType::Q4_0: return "q4_0";
  }
  return "unknown";
}

bool parse_weight_type(const std::string& name, WeightType* out) {
  std::string n = name;
  std::transform(n.begin(), n.end(), n.begin(), [](unsigned char c) { return std::tolower(c); });
  for (WeightType t : {WeightType::F32, WeightType::F16, WeightType::Q8_0, WeightType::Q4_0})
    if (n == weight_type_name(t)) {
      *out = t;
      return true;
    }
  return false;
}

Status inspect_source(const std::string& source_path, SourceSummary* out) {
  *out = SourceSummary{};
  ConversionPlan plan;
  MAGNETAR_TRY(plan_source(source_path, "", &plan));
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
  for (const PlannedTensor& t : plan.tensors) {
    const uint64_t n = t.rows * t.cols;
    out->n_params += n;
    if (t.is_norm) {
      out->n_norm_params += n;
      continue;
    }
    const bool unblocked = t.cols % quant::kBlock != 0;
    if (is_embedding_or_head(t)) {
      out->n_output_params += n;
      if (unblocked) out->n_output_unblocked_params += n;
    } else if (unblocked) {
      out->n_unblocked_params += n;
    }
  }
  return Status::ok();
}

namespace {
// Bytes of `params` matrix parameters stored as `type`, `unblocked` of them in matrices whose
// rows are not whole 32-blocks (F16 when `type` is quantized; output_dtype's rule).
uint64_t matrix_bytes(uint64_t params, uint64_t unblocked, WeightType type) {
  const uint64_t blocked = params - unblocked;  // whole 32-blocks: a multiple of 32
  switch (type) {
    case WeightType::F32: return params * 4;
    case WeightType::F16: return params * 2;
    case WeightType::Q8_0: return (blocked + quant::kBlock - 1) / quant::kBlock * sizeof(quant::BlockQ8_0) + unblocked * 2;
    case WeightType::Q4_0: return (blocked + quant::kBlock - 1) / quant::kBlock * sizeof(quant::BlockQ4_0) + unblocked * 2;
  }
  return params * 4;  // unreachable for valid enums; F32 is the largest
}
}  // namespace

uint64_t predicted_model_file_bytes(const SourceSummary& s, WeightType type) {
  ConvertOptions options;
  options.weight_type = type;
  return predicted_model_file_bytes(s, options);
}

uint64_t predicted_model_file_bytes(const SourceSummary& s, const ConvertOptions& options) {
  const uint64_t matrix_params = s.n_params - s.n_norm_params - s.n_output_params;
  const uint64_t matrix_bytes_total =
      matrix_bytes(matrix_params, s.n_unblocked_params, options.weight_type) +
      matrix_bytes(s.n_output_params, s.n_output_unblocked_params,
                   options.output_weight_type.value_or(options.weight_type));
  const uint64_t n_tensors = static_cast<uint64_t>(s.n_tensors);
  const uint64_t meta = sizeof(format::FileHeader) + n_tensors * sizeof(format::TensorEntry) +
                        s.tokenizer_bytes;
  // Upper bound: every tensor may need up to 63 bytes of padding to the next 64-byte boundary.
  return format::align_up(meta, format::kAlignment) + matrix_bytes_total + s.n_norm_params * 4 +
         n_tensors * (format::kAlignment - 1);
}

Status convert_model(const std::string& source_path, const std::string& out_path,
                     const ConvertOptions& options) {
  OutputTypes types;
  MAGNETAR_TRY(weight_dtype_for(options.weight_type, &types.weights));
  MAGNETAR_TRY(weight_dtype_for(options.output_weight_type.value_or(options.weight_type), &types.embeddings));
  if (out_path.empty()) return Status::error("no output path given");
  if (convert::is_directory(out_path))
    return Status::error(out_path + ": is a folder; give the model file's path");
  const std::string out_dir = convert::parent_dir(out_path);
  if (!convert::is_directory(out_dir))
    return Status::error(out_path + ": the folder " + out_dir + " does not exist");
  if (options.on_progress) options.on_progress({0, 0, "reading " + source_path});
  ConversionPlan plan;
  MAGNETAR_TRY(plan_source(source_path, options.tokenizer_path, &plan));
  if (cancelled(options)) return cancelled_error();
  return run_plan(plan, out_path, types, options);
}

}  // namespace magnetar
