// The model file's tensor data types: one layout row per DType (see model_format.h).
#include "format/model_format.h"

#include <cctype>

namespace magnetar::format {

namespace {
// Indexed by DType. Block layouts are GGUF's (QK_K = 256 for the K-quants and IQ4_XS).
constexpr DTypeLayout kLayouts[kDTypeCount] = {
    {"f32", 1, 4, 0},         {"f16", 1, 2, 1},           {"q8_0", 32, 34, 8},
    {"q4_0", 32, 18, 2},      {"q2_k", 256, 84, 10},      {"q3_k", 256, 110, 11},
    {"q4_k", 256, 144, 12},   {"q5_k", 256, 176, 13},     {"q6_k", 256, 210, 14},
    {"iq4_nl", 32, 18, 20},   {"iq4_xs", 256, 136, 23},   {"q4_1", 32, 20, 3},
    {"q5_0", 32, 22, 6},      {"q5_1", 32, 24, 7},
};
}  // namespace

bool dtype_is_valid(uint32_t dtype) { return dtype < kDTypeCount; }

const DTypeLayout& dtype_layout(DType dtype) {
  return kLayouts[dtype_is_valid(uint32_t(dtype)) ? uint32_t(dtype) : 0];
}

uint64_t tensor_bytes(DType dtype, uint64_t rows, uint64_t cols) {
  if (!dtype_is_valid(uint32_t(dtype))) return 0;
  const DTypeLayout& l = dtype_layout(dtype);
  return rows * (cols / l.block_elements) * l.block_bytes;
}

const char* dtype_name(DType dtype) {
  return dtype_is_valid(uint32_t(dtype)) ? dtype_layout(dtype).name : "unknown";
}

bool dtype_is_quantized(DType dtype) {
  return dtype_is_valid(uint32_t(dtype)) && dtype_layout(dtype).quantized();
}

bool dtype_fits_cols(DType dtype, uint64_t cols) {
  return dtype_is_valid(uint32_t(dtype)) && cols % dtype_layout(dtype).block_elements == 0;
}

bool dtype_from_ggml(uint32_t ggml_type, DType* out) {
  for (uint32_t i = 0; i < kDTypeCount; ++i)
    if (kLayouts[i].ggml_type == ggml_type) {
      *out = DType(i);
      return true;
    }
  return false;
}

bool dtype_from_name(const char* name, DType* out) {
  for (uint32_t i = 0; i < kDTypeCount; ++i) {
    const char* a = kLayouts[i].name;
    const char* b = name;
    while (*a && *b && *a == std::tolower(static_cast<unsigned char>(*b))) ++a, ++b;
    if (*a == '\0' && *b == '\0') {
      *out = DType(i);
      return true;
    }
  }
  return false;
}

std::vector<std::string> fused_parts(const std::string& name) {
  const size_t dot = name.rfind('.');
  if (name.rfind("layers.", 0) != 0 || dot == std::string::npos) return {};
  const std::string prefix = name.substr(0, dot + 1), leaf = name.substr(dot + 1);
  if (leaf == "wqkv") return {prefix + "wq", prefix + "wk", prefix + "wv"};
  if (leaf == "w_gate_up") return {prefix + "w_gate", prefix + "w_up"};
  return {};
}

}  // namespace magnetar::format
