// Validating reader for the model file (see model_reader.h). Order of checks: magic, version,
// header size, hyperparameters, section ranges, then every tensor entry. Nothing is trusted
// before it has been checked against the file size.
#include "format/model_reader.h"

#include <cmath>
#include <cstring>
#include <set>

#include "format/architecture.h"
#include "magnetar/engine.h"

namespace magnetar::format {

namespace {

bool range_inside(uint64_t offset, uint64_t bytes, uint64_t size) {
  return offset <= size && bytes <= size - offset;
}

std::string tensor_name(const TensorEntry& e) {
  size_t len = strnlen(e.name, kMaxTensorName);
  return std::string(e.name, len);
}

Status check_header(const FileHeader& h, uint64_t file_size) {
  if (std::memcmp(h.magic, kMagic, sizeof(kMagic)) != 0)
    return Status::error("not a Magnetar model file (bad magic)");
  if (h.version < kOldestReadableVersion || h.version > kVersion)
    return Status::error("unsupported format version " + std::to_string(h.version) +
                         " (this build reads versions " + std::to_string(kOldestReadableVersion) +
                         " to " + std::to_string(kVersion) + ")");
  if (h.header_bytes != sizeof(FileHeader))
    return Status::error("header size " + std::to_string(h.header_bytes) + " is not " +
                         std::to_string(sizeof(FileHeader)));
  if (h.file_bytes != file_size)
    return Status::error("file is " + std::to_string(file_size) + " bytes but its header says " +
                         std::to_string(h.file_bytes) + " (truncated or damaged)");
  if (find_architecture(static_cast<Architecture>(h.architecture)) == nullptr)
    return Status::error("unknown architecture id " + std::to_string(h.architecture));
  auto positive = [](uint32_t v) { return v > 0 && v <= (1u << 24); };
  if (!positive(h.n_layers) || !positive(h.dim) || !positive(h.hidden_dim) ||
      !positive(h.n_heads) || !positive(h.n_kv_heads) || !positive(h.head_dim) ||
      !positive(h.vocab_size) || !positive(h.max_context))
    return Status::error("header has a zero or absurd hyperparameter");
  if (h.n_layers > 4096) return Status::error("header says " + std::to_string(h.n_layers) + " layers");
  if (h.n_heads % h.n_kv_heads != 0)
    return Status::error("n_heads (" + std::to_string(h.n_heads) +
                         ") is not a multiple of n_kv_heads (" + std::to_string(h.n_kv_heads) + ")");
  if (h.head_dim % 2 != 0) return Status::error("head_dim must be even for RoPE");
  if (h.activation > 1) return Status::error("unknown activation id " + std::to_string(h.activation));
  if (h.chat_template_kind > 2)
    return Status::error("unknown chat template id " + std::to_string(h.chat_template_kind));
  if (!(h.norm_eps > 0 && h.norm_eps < 1) || !(h.rope_theta > 0) || !std::isfinite(h.rope_theta) ||
      !(h.query_scale > 0) || !std::isfinite(h.query_scale) || !(h.attn_softcap >= 0) ||
      !(h.final_softcap >= 0) || !std::isfinite(h.attn_softcap) || !std::isfinite(h.final_softcap))
    return Status::error("header has an invalid float parameter");
  // The model keeps these as int: a value past INT32_MAX would wrap and silently turn sliding
  // attention off.
  if (h.sliding_window > INT32_MAX || h.sliding_window_period > INT32_MAX)
    return Status::error("sliding window " + std::to_string(h.sliding_window) + " / period " +
                         std::to_string(h.sliding_window_period) + " is out of range");
  if (h.rope_scaling > static_cast<uint32_t>(RopeScaling::Llama3))
    return Status::error("unknown RoPE scaling id " + std::to_string(h.rope_scaling));
  if (h.rope_scaling != 0 &&
      (!(h.rope_scaling_factor > 0) || !std::isfinite(h.rope_scaling_factor) ||
       !(h.rope_low_freq_factor >= 0) || !std::isfinite(h.rope_low_freq_factor) ||
       !(h.rope_high_freq_factor >= 0) || !std::isfinite(h.rope_high_freq_factor)))
    return Status::error("header has an invalid RoPE scaling parameter");
  if (h.rope_scaling == static_cast<uint32_t>(RopeScaling::Llama3) &&
      (h.rope_original_context == 0 || !(h.rope_high_freq_factor > h.rope_low_freq_factor)))
    return Status::error("llama3 RoPE scaling needs an original context and high_freq_factor > low_freq_factor");
  if (!(h.rope_local_theta >= 0) || !std::isfinite(h.rope_local_theta))
    return Status::error("header has an invalid local RoPE base");
  if (h.bos_id < -1 || h.bos_id >= static_cast<int32_t>(h.vocab_size))
    return Status::error("BOS id " + std::to_string(h.bos_id) + " is outside the vocabulary");
  if (h.n_eog_ids < 0 || h.n_eog_ids > kMaxEogIds)
    return Status::error("bad count of end-of-generation ids");
  for (int i = 0; i < h.n_eog_ids; ++i)
    if (h.eog_ids[i] < 0 || h.eog_ids[i] >= static_cast<int32_t>(h.vocab_size))
      return Status::error("end-of-generation id " + std::to_string(h.eog_ids[i]) +
                           " is outside the vocabulary");
  if (h.n_tensors == 0 || h.n_tensors > 100000)
    return Status::error("bad tensor count " + std::to_string(h.n_tensors));
  if (h.tensor_table_offset < sizeof(FileHeader) ||
      !range_inside(h.tensor_table_offset, uint64_t(h.n_tensors) * sizeof(TensorEntry), file_size))
    return Status::error("tensor table lies outside the file");
  if (!range_inside(h.tokenizer_offset, h.tokenizer_bytes, file_size) || h.tokenizer_bytes == 0)
    return Status::error("tokenizer section lies outside the file or is empty");
  if (!range_inside(h.template_offset, h.template_bytes, file_size))
    return Status::error("chat template section lies outside the file");
  if (h.data_offset % kAlignment != 0 || h.data_offset > file_size)
    return Status::error("tensor data offset is misaligned or outside the file");
  return Status::ok();
}

// Version 1 files: the version-2 fields were reserved zeros, and sliding period 0 meant "no
// sliding layer" (version 2: every layer). Read them as the version-2 header they describe.
void upgrade_header(FileHeader* h) {
  if (h->version >= 2) return;
  h->tokenizer_kind = 0;  // SentencePiece
  h->flags &= ~uint32_t(kFlagRopeFreqFactors);
  if (h->sliding_window_period == 0) h->sliding_window = 0;
  h->rope_scaling = 0;
  h->rope_scaling_factor = h->rope_low_freq_factor = h->rope_high_freq_factor = 0.0f;
  h->rope_original_context = 0;
  h->rope_local_theta = 0.0f;
}

// A part of a fused matrix stored split (fused_parts: layers.i.wq, ..., layers.i.w_up): the
// fused tensor's spec with the part's own name and rows.
bool find_part_spec(const FileHeader& h, const std::string& name, TensorSpec* out) {
  const size_t dot = name.rfind('.');
  if (dot == std::string::npos) return false;
  const std::string prefix = name.substr(0, dot + 1);
  const uint64_t q = uint64_t(h.n_heads) * h.head_dim, kv = uint64_t(h.n_kv_heads) * h.head_dim;
  for (const char* fused : {"wqkv", "w_gate_up"}) {
    TensorSpec whole;
    if (!find_tensor_spec(h, prefix + fused, &whole)) continue;
    const std::vector<std::string> parts = fused_parts(whole.name);
    for (size_t i = 0; i < parts.size(); ++i) {
      if (parts[i] != name) continue;
      whole.name = name;
      whole.rows = std::string(fused) == "wqkv" ? (i == 0 ? q : kv) : uint64_t(h.hidden_dim);
      *out = std::move(whole);
      return true;
    }
  }
  return false;
}

}  // namespace

const TensorView* ModelFileView::find(std::string_view name) const {
  for (const auto& t : tensors)
    if (t.name == name) return &t;
  return nullptr;
}

Status parse_model_header(const uint8_t* prefix, uint64_t prefix_size, uint64_t file_size,
                          ModelFileView* out) {
  if (prefix_size < sizeof(FileHeader) || file_size < sizeof(FileHeader))
    return Status::error("file is too small to be a Magnetar model (" +
                         std::to_string(file_size) + " bytes)");
  FileHeader h;
  std::memcpy(&h, prefix, sizeof(h));
  upgrade_header(&h);
  MAGNETAR_TRY(check_header(h, file_size));
  if (h.tokenizer_kind > 1)
    return Status::error("unknown tokenizer kind " + std::to_string(h.tokenizer_kind));
  const uint64_t table_end = h.tensor_table_offset + uint64_t(h.n_tensors) * sizeof(TensorEntry);
  if (prefix_size < table_end) return Status::error("tensor table is not in the bytes given");
  out->header = h;
  out->tensors.clear();
  out->tensors.reserve(h.n_tensors);
  std::set<std::string> names;
  for (uint32_t i = 0; i < h.n_tensors; ++i) {
    TensorEntry e;
    std::memcpy(&e, prefix + h.tensor_table_offset + uint64_t(i) * sizeof(TensorEntry), sizeof(e));
    std::string name = tensor_name(e);
    std::string where = "tensor " + std::to_string(i) + " ('" + name + "')";
    if (name.empty() || strnlen(e.name, kMaxTensorName) == kMaxTensorName)
      return Status::error(where + ": name is empty or not terminated");
    if (!names.insert(name).second) return Status::error(where + ": duplicate name");
    if (!dtype_is_valid(e.dtype)) return Status::error(where + ": unknown dtype " + std::to_string(e.dtype));
    if (e.n_dims != 1 && e.n_dims != 2) return Status::error(where + ": must have 1 or 2 dimensions");
    TensorSpec spec;
    if (!find_tensor_spec(h, name, &spec) && !find_part_spec(h, name, &spec))
      return Status::error(where + ": not a tensor this format defines for " +
                           find_architecture(static_cast<Architecture>(h.architecture))->name);
    const uint64_t rows = spec.rows, cols = spec.cols;
    const bool is_vector = spec.n_dims == 1;
    if (e.shape[0] != rows || e.shape[1] != cols)
      return Status::error(where + ": shape [" + std::to_string(e.shape[0]) + ", " +
                           std::to_string(e.shape[1]) + "] does not match the header's [" +
                           std::to_string(rows) + ", " + std::to_string(cols) + "]");
    if (is_vector && e.dtype != static_cast<uint32_t>(DType::F32))
      return Status::error(where + ": norm weights and biases must be f32");
    DType dt = static_cast<DType>(e.dtype);
    if (!dtype_fits_cols(dt, cols))
      return Status::error(where + ": " + dtype_name(dt) + " rows must be whole blocks of " +
                           std::to_string(dtype_layout(dt).block_elements));
    if (e.bytes != tensor_bytes(dt, rows, cols))
      return Status::error(where + ": byte size does not match its dtype and shape");
    if (e.offset % kAlignment != 0 || e.offset < h.data_offset ||
        !range_inside(e.offset, e.bytes, file_size))
      return Status::error(where + ": data lies outside the file or is misaligned");
    TensorView v;
    v.name = std::move(name);
    v.dtype = dt;
    v.n_dims = static_cast<int>(e.n_dims);
    v.rows = rows;
    v.cols = cols;
    v.offset = e.offset;
    v.bytes = e.bytes;
    out->tensors.push_back(std::move(v));
  }
  // Every tensor the forward pass needs must be present.
  auto require = [&](const std::string& n) -> Status {
    return out->find(n) ? Status::ok() : Status::error("missing tensor '" + n + "'");
  };
  for (const TensorSpec& t : model_tensors(h)) {
    const std::vector<std::string> parts = fused_parts(t.name);
    if (parts.empty()) {
      MAGNETAR_TRY(require(t.name));
      continue;
    }
    // A fused matrix is stored whole or as all of its parts (a mixed-type GGUF import), never both.
    int parts_found = 0;
    for (const std::string& part : parts) parts_found += out->find(part) ? 1 : 0;
    if (out->find(t.name) ? parts_found != 0 : parts_found != int(parts.size()))
      return Status::error("'" + t.name + "' must be stored either whole or as all of its parts");
  }
  return Status::ok();
}

Status parse_model_file(const uint8_t* data, uint64_t size, ModelFileView* out) {
  MAGNETAR_TRY(parse_model_header(data, size, size, out));
  for (auto& t : out->tensors) t.data = data + t.offset;
  const FileHeader& h = out->header;
  out->tokenizer = std::string_view(reinterpret_cast<const char*>(data + h.tokenizer_offset),
                                    h.tokenizer_bytes);
  out->chat_template = std::string_view(reinterpret_cast<const char*>(data + h.template_offset),
                                        h.template_bytes);
  return Status::ok();
}

}  // namespace magnetar::format
