// Sizes and names of the model file's tensor data types (see model_format.h).
#include "format/model_format.h"

namespace magnetar::format {

namespace {
// Quantized types store blocks of 32 weights: one FP16 scale, then the values. Layout and byte
// counts follow GGUF's Q8_0 (32 × int8) and Q4_0 (16 bytes of 4-bit pairs).
constexpr uint64_t kQuantBlock = 32;
constexpr uint64_t kQ8_0BlockBytes = 2 + 32;
constexpr uint64_t kQ4_0BlockBytes = 2 + 16;
}  // namespace

uint64_t tensor_bytes(DType dtype, uint64_t rows, uint64_t cols) {
  switch (dtype) {
    case DType::F32: return rows * cols * 4;
    case DType::F16: return rows * cols * 2;
    case DType::Q8_0: return rows * (cols / kQuantBlock) * kQ8_0BlockBytes;
    case DType::Q4_0: return rows * (cols / kQuantBlock) * kQ4_0BlockBytes;
  }
  return 0;
}

const char* dtype_name(DType dtype) {
  switch (dtype) {
    case DType::F32: return "f32";
    case DType::F16: return "f16";
    case DType::Q8_0: return "q8_0";
    case DType::Q4_0: return "q4_0";
  }
  return "unknown";
}

bool dtype_is_valid(uint32_t dtype) { return dtype <= static_cast<uint32_t>(DType::Q4_0); }

}  // namespace magnetar::format
