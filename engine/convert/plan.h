// A conversion plan: the output file's header and, for every output tensor, which byte ranges of
// which input files it is made of. Planning reads only configs, headers and the tokenizer; the
// runner (convert.cpp) then streams the ranges chunk by chunk into the model writer.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "convert/safetensors.h"
#include "format/model_format.h"
#include "format/quant_mix.h"
#include "magnetar/convert.h"
#include "magnetar/status.h"

namespace magnetar::convert {

// A [rows, cols] row-major block of one input tensor.
struct SourceRange {
  std::string file;  // path of the file holding it
  std::string name;  // source tensor name, for messages and progress
  uint64_t offset = 0;  // absolute byte offset of element [0, 0]
  SourceDType dtype = SourceDType::F32;
  format::DType block_type = format::DType::F32;  // dtype == Blocks: the GGUF tensor's type
  uint64_t rows = 0, cols = 0;
  // > 0: the rows are this many attention heads whose q/k rows are in llama2.c's interleaved
  // RoPE layout; they are permuted to Hugging Face's rotate-half layout while converting.
  uint64_t interleaved_rope_heads = 0;
  uint64_t row_bytes() const {
    return dtype == SourceDType::Blocks ? format::tensor_bytes(block_type, 1, cols) : cols * source_dtype_bytes(dtype);
  }
  uint64_t bytes() const { return rows * row_bytes(); }
};

struct PlannedTensor {
  std::string name;  // canonical name (model_format.h)
  int n_dims = 2;
  uint64_t rows = 1, cols = 0;
  bool is_norm = false;   // stored as F32 whatever the weight type
  float add = 0.0f;       // added to every value (Gemma norms store 1 + w)
  std::vector<SourceRange> parts;  // concatenated along rows
};

struct ConversionPlan {
  std::string architecture;  // "LlamaForCausalLM", ...
  std::string kind;          // "Hugging Face folder", "GGUF file" or "llama2.c checkpoint"
  std::string notice;        // what the conversion leaves out, for people (empty: nothing)
  format::FileHeader header{};  // hyperparameters, flags, token ids (offsets set by the writer)
  std::vector<PlannedTensor> tensors;
  std::string tokenizer;      // SentencePiece ModelProto bytes
  std::string chat_template;  // as found in tokenizer_config.json
  uint64_t source_bytes = 0;  // bytes of the input files
  uint64_t bytes_to_read = 0;  // tensor bytes the conversion reads
  // WeightType::Auto stores each source tensor in its own type (GGUF); otherwise Auto is F16.
  bool keeps_source_types = false;
};

Status plan_hf_folder(const std::string& folder, ConversionPlan* plan);
Status plan_llama2c(const std::string& checkpoint, const std::string& tokenizer_path,
                    ConversionPlan* plan);

// The file's element type of each public weight type (an error for one the format cannot store),
// and back.
// A mix (Q4_K_M, Q5_K_M) is not one type: an error; weight_mix_for names its rule.
Status weight_dtype_for(WeightType type, format::DType* out);
bool weight_mix_for(WeightType type, format::QuantMix* out);
WeightType weight_type_of(format::DType dtype);

}  // namespace magnetar::convert
