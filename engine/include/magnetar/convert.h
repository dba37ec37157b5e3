// Converting a Hugging Face folder, a GGUF file or a llama2.c checkpoint into a Magnetar model file.
// Streams tensor by tensor, reports progress, can be cancelled, and writes atomically
// (temporary file, then rename): a failed or cancelled conversion leaves nothing behind.
#pragma once
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "magnetar/status.h"

namespace magnetar {

// Auto: the source's own types where it has them — a GGUF file's tensors are copied as stored
// (F32, F16, Q8_0, Q4_0, K-quants, IQ4...; BF16 becomes F16), never requantised — and F16 for
// Hugging Face folders and llama2.c checkpoints.
// Values 0..13 are the model file's types (docs/MODEL_FORMAT.md), which `info` reports; the
// converter quantizes to each of them (every matrix that type, rows that are not whole blocks
// falling back as MODEL_FORMAT.md says) but Q2_K, whose name belongs to the mix below.
// Q2_K_Mix ("q2_k"), Q3_K_M, Q4_K_M and Q5_K_M are llama.cpp's mixes of the K-quants, chosen per
// tensor (Q6_K LM head and more bits for some attn_v / attn_output / ffn_down tensors; the rule
// is format/quant_mix.h, stated in MODEL_FORMAT.md).
enum class WeightType : uint32_t {
  F32 = 0, F16 = 1, Q8_0 = 2, Q4_0 = 3,
  Q2_K = 4, Q3_K = 5, Q4_K = 6, Q5_K = 7, Q6_K = 8, IQ4_NL = 9, IQ4_XS = 10, Q4_1 = 11, Q5_0 = 12, Q5_1 = 13,
  Q4_K_M = 64, Q5_K_M = 65, Q3_K_M = 66,
  Q2_K_Mix = 67,  // llama.cpp's Q2_K file type, named "q2_k": mostly Q2_K, some Q3_K / Q4_K / Q6_K
  Auto = 255,
};
const char* weight_type_name(WeightType type);  // "q4_k_m", "f16", "auto", ...
// A type `convert --dtype` accepts: auto, f32, f16, the mixes, or a block type Magnetar quantizes to.
bool parse_weight_type(const std::string& name, WeightType* out);
// The types the converter can write for every matrix (parse_weight_type's list, largest first).
const char* convertible_weight_type_names();  // "f32, f16, q8_0, q6_k, ..."
// Average bytes per parameter of a big model's matrices stored as `type` (the type records'
// block bytes; a mix weighs in its Q6_K share as for a 7B-sized Llama). For the app's estimates.
double weight_type_bytes_per_parameter(WeightType type);

struct ConvertProgress {
  uint64_t bytes_done = 0;   // source bytes processed so far
  uint64_t bytes_total = 0;  // source bytes to process
  std::string stage;         // "reading config", "tensor model.layers.3.mlp.up_proj.weight", ...
};

struct ConvertOptions {
  WeightType weight_type = WeightType::Auto;
  // The embedding table and LM head (tok_embeddings, output): empty = weight_type. With q8_0 /
  // q4_0 the same rule as for the other matrices holds: rows not of whole 32-blocks stay F16.
  std::optional<WeightType> output_weight_type;
  std::string tokenizer_path;  // llama2.c checkpoints: tokenizer.model or tok*.bin; empty = look beside
  // Called from the converting thread; keep it cheap.
  std::function<void(const ConvertProgress&)> on_progress;
  const std::atomic<bool>* cancel = nullptr;  // set to true to stop; convert() then returns an error
  // Threads that quantize (0: every core). The output bytes are the same for any count.
  int threads = 0;
};

// What a source folder or checkpoint holds, read without converting (for the app's drop dialog).
struct SourceSummary {
  std::string architecture;  // "LlamaForCausalLM", ...
  std::string kind;          // "Hugging Face folder", "GGUF file" or "llama2.c checkpoint"
  std::string family;        // "Qwen 3", ... (architecture_display_name)
  std::string notice;        // what the conversion leaves out (a vision tower, ...); empty: nothing
  uint64_t n_params = 0;
  uint64_t source_bytes = 0;
  int n_layers = 0, dim = 0, vocab_size = 0, max_context = 0;
  int n_kv_heads = 0, head_dim = 0;  // the KV cache holds n_layers × n_kv_heads × head_dim per token
  // For predicted_model_file_bytes: tensors in the output, parameters stored as F32 norms
  // whatever the weight type, and tokenizer + chat template bytes.
  int n_tensors = 0;
  uint64_t n_norm_params = 0;
  uint64_t tokenizer_bytes = 0;
  // Matrix parameters of tok_embeddings + output (stored as ConvertOptions::output_weight_type),
  // and the matrix parameters whose rows are not whole 32-blocks, of the other matrices and of
  // those two.
  uint64_t n_output_params = 0;
  uint64_t n_unblocked_params = 0;
  uint64_t n_output_unblocked_params = 0;
  // Every matrix of the output, for predicted_model_file_bytes, which applies the converter's
  // own per-tensor type rule to each: its canonical name ("layers.3.wqkv"), row length and the
  // rows and stored type (GGUF) of each source part.
  struct MatrixPart {
    uint64_t rows = 0;
    WeightType source_type = WeightType::F16;
  };
  struct Matrix {
    std::string name;
    uint64_t cols = 0;
    std::vector<MatrixPart> parts;
  };
  std::vector<Matrix> matrices;
  bool keeps_source_types = false;  // Auto keeps each tensor's type (a GGUF file)
  bool tied_embeddings = false;
  bool llama_70b_shape = false;     // 80-layer grouped-query Llama: a mix gives attn_v more bits
  int gqa_ratio = 1;                // query heads per KV head (q2_k gives attn_v Q4_K from 4)
};

// A source inspect_source has read and planned, so that converting it right after (the app's
// drop dialog: inspect, the user picks a type, convert) does not read and plan it again. It keeps
// the size and modification time of every input file: convert_model plans again if one changed.
struct PlannedSource {
  struct Plan;                       // the engine's; opaque here
  std::shared_ptr<const Plan> plan;  // null: nothing planned
  std::string source_path;
};

Status inspect_source(const std::string& source_path, SourceSummary* out);
// The same, keeping the plan in *planned for convert_model.
Status inspect_source(const std::string& source_path, SourceSummary* out, PlannedSource* planned);
// Size in bytes of the model file a conversion with `options` (weight_type, output_weight_type)
// would produce: an upper bound, at most 63 bytes per tensor above the real size (padding).
uint64_t predicted_model_file_bytes(const SourceSummary& summary, const ConvertOptions& options);
// The same with every matrix of `type` (output_weight_type unset).
uint64_t predicted_model_file_bytes(const SourceSummary& summary, WeightType type);

Status convert_model(const std::string& source_path, const std::string& out_path,
                     const ConvertOptions& options);
// Converts a source inspect_source planned, without planning it again unless an input file
// changed since (or options.tokenizer_path is set: the plan was made without one).
Status convert_model(const PlannedSource& source, const std::string& out_path, const ConvertOptions& options);
// Removes "<name>.tmp-<pid>" files in `folder` whose converting process is gone (killed with
// SIGKILL, a power cut); a running conversion's file stays. Returns how many were removed.
// convert_model does this for its own output; the app runs it over its model library at start.
int remove_stale_conversion_files(const std::string& folder);

}  // namespace magnetar
