// Validating reader for the model file (see model_reader.h). Order of checks: magic, version,
// header size, hyperparameters, section ranges, then every tensor entry. Nothing is trusted
// before it has been checked against the file size.
#include "format/model_reader.h"

#include <cmath>
#include <cstring>
#include <set>

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
  if (h.architecture < 1 || h.architecture > 3)
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

// Expected [rows, cols] of every canonical tensor, derived from the header.
bool expected_shape(const FileHeader& h, const std::string& name, uint64_t* rows, uint64_t* cols,
                    bool* is_norm) {
  const uint64_t dim = h.dim, hidden = h.hidden_dim, hd = h.head_dim;
  const uint64_t q = h.n_heads * hd, kv = h.n_kv_heads * hd;
  *is_norm = false;
  if (name == "tok_embeddings" || name == "output") {
    *rows = h.vocab_size;
    *cols = dim;
    return true;
  }
  if (name == "output_norm") {
    *rows = 1, *cols = dim, *is_norm = true;
    return true;
  }
  if (name.rfind("layers.", 0) != 0) return false;
  size_t dot = name.find('.', 7);
  if (dot == std::string::npos) return false;
  std::string index = name.substr(7, dot - 7);
  if (index.empty() || index.size() > 5 || index.find_first_not_of("0123456789") != std::string::npos)
    return false;
  if (std::stoul(index) >= h.n_layers) return false;
  std::string leaf = name.substr(dot + 1);
  if (leaf == "attn_norm" || leaf == "ffn_norm" || leaf == "post_attn_norm" ||
      leaf == "post_ffn_norm") {
    *rows = 1, *cols = dim, *is_norm = true;
    return true;
  }
  if (leaf == "wqkv") return *rows = q + 2 * kv, *cols = dim, true;
  if (leaf == "wo") return *rows = dim, *cols = q, true;
  if (leaf == "w_gate_up") return *rows = 2 * hidden, *cols = dim, true;
  if (leaf == "w_down") return *rows = dim, *cols = hidden, true;
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
  MAGNETAR_TRY(check_header(h, file_size));
  if (h.version < 2) h.tokenizer_kind = 0;  // version 1 had reserved bytes there: SentencePiece
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
    uint64_t rows = 0, cols = 0;
    bool is_norm = false;
    if (!expected_shape(h, name, &rows, &cols, &is_norm))
      return Status::error(where + ": not a tensor this format defines");
    if (e.shape[0] != rows || e.shape[1] != cols)
      return Status::error(where + ": shape [" + std::to_string(e.shape[0]) + ", " +
                           std::to_string(e.shape[1]) + "] does not match the header's [" +
                           std::to_string(rows) + ", " + std::to_string(cols) + "]");
    if (is_norm && e.dtype != static_cast<uint32_t>(DType::F32))
      return Status::error(where + ": norm weights must be f32");
    DType dt = static_cast<DType>(e.dtype);
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
  MAGNETAR_TRY(require("tok_embeddings"));
  MAGNETAR_TRY(require("output_norm"));
  if (!(h.flags & kFlagTiedEmbeddings)) MAGNETAR_TRY(require("output"));
  for (uint32_t l = 0; l < h.n_layers; ++l) {
    std::string p = "layers." + std::to_string(l) + ".";
    for (const char* leaf : {"attn_norm", "wqkv", "wo", "ffn_norm", "w_gate_up", "w_down"})
      MAGNETAR_TRY(require(p + leaf));
    if (h.flags & kFlagPostNorms) {
      MAGNETAR_TRY(require(p + "post_attn_norm"));
      MAGNETAR_TRY(require(p + "post_ffn_norm"));
    }
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
