// The tensor half of every conversion plan (HF folders and GGUF files alike): walks the
// architecture table's tensor list for the planned header and asks the source format for each
// source tensor. The formats differ only in how a name becomes a byte range (SourceLookup).
#pragma once
#include <functional>

#include "convert/plan.h"
#include "format/architecture.h"

namespace magnetar::convert {

// Finds source tensor `name` and checks it is exactly [rows, cols] (cols = 0: a vector of `rows`
// values); fills the byte range. Errors name the file and the tensor.
using SourceLookup =
    std::function<Status(const std::string& name, uint64_t rows, uint64_t cols, SourceRange* out)>;

struct TensorPlanOptions {
  format::SourceFormat format = format::SourceFormat::HuggingFace;
  std::string name_prefix;         // put before every source name ("language_model.")
  bool fold_norm_plus_one = false; // add 1 to norm weights (HF Gemma: (1 + w))
  bool unpermute_rope_rows = false;  // q/k weight rows stored interleaved (GGUF llama)
};

// Appends every tensor of plan->header's file to plan->tensors and counts plan->bytes_to_read.
Status plan_model_tensors(const format::ArchitectureTraits& arch, const TensorPlanOptions& options,
                          const SourceLookup& lookup, ConversionPlan* plan);

// "[a, b]" for shape messages.
std::string show_shape(const std::vector<uint64_t>& shape);

}  // namespace magnetar::convert
