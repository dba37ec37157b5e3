// Planning a model file's tensors from the architecture table (see plan_tensors.h).
#include "convert/plan_tensors.h"

namespace magnetar::convert {

std::string show_shape(const std::vector<uint64_t>& shape) {
  std::string r = "[";
  for (size_t i = 0; i < shape.size(); ++i) r += (i ? ", " : "") + std::to_string(shape[i]);
  return r + "]";
}

Status plan_model_tensors(const format::ArchitectureTraits& arch, const TensorPlanOptions& options,
                          const SourceLookup& lookup, ConversionPlan* plan) {
  for (const format::TensorSpec& spec : format::model_tensors(plan->header)) {
    PlannedTensor t;
    t.name = spec.name;
    t.n_dims = spec.n_dims;
    t.rows = spec.rows;
    t.cols = spec.cols;
    t.is_norm = spec.n_dims == 1;  // vectors (norm weights, biases) are stored F32
    t.add = options.fold_norm_plus_one && spec.is_norm_weight ? 1.0f : 0.0f;
    for (const format::SourcePart& part : format::tensor_sources(arch, plan->header, spec, options.format)) {
      SourceRange r;
      // A vector's parts are vectors (concatenated); a matrix's parts are row blocks.
      MAGNETAR_TRY(lookup(options.name_prefix + part.name, part.rows, spec.n_dims == 1 ? 0 : spec.cols, &r));
      if (options.unpermute_rope_rows && part.rope_rows && spec.n_dims == 2)
        r.interleaved_rope_heads = part.rope_heads;
      plan->bytes_to_read += r.bytes();
      t.parts.push_back(std::move(r));
    }
    plan->tensors.push_back(std::move(t));
  }
  return Status::ok();
}

}  // namespace magnetar::convert
