// Q8_0 / Q4_0: GGML-exact quantizers and dequantizers, the reference twins of the integer
// matrix–vector kernels (see quant.h for the formats).
#include "kernels/quant.h"

#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace magnetar::quant {

// ================================================================================================
// GGML-exact quantizers and dequantizers
// ================================================================================================

namespace {
// float -> int8 as GGML's implicit conversion does for in-range values; non-finite inputs (where
// GGML's conversion is undefined) become 0 instead of undefined behaviour.
int8_t clamp_to_int8(float v, float lo, float hi) {
  if (!(v >= lo)) return v < lo ? int8_t(lo) : int8_t(0);  // NaN -> 0
  if (v > hi) return int8_t(hi);
  return int8_t(v);
}
}  // namespace

void quantize_row_q8_0(const float* x, BlockQ8_0* y, int64_t n) {
  assert(n % kBlock == 0 && "quantize_row_q8_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.0f;
    for (int64_t i = 0; i < kBlock; ++i) {
      const float a = std::fabs(xb[i]);
      amax = amax > a ? amax : a;  // GGML's MAX(amax, a), NaN behaviour included
    }
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = kernels::f32_to_f16_scalar(d);
    for (int64_t i = 0; i < kBlock; ++i) y[b].qs[i] = clamp_to_int8(std::round(xb[i] * id), -127, 127);
  }
}

void quantize_row_q4_0(const float* x, BlockQ4_0* y, int64_t n) {
  assert(n % kBlock == 0 && "quantize_row_q4_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.0f, max = 0.0f;  // largest magnitude and its signed value (first one wins)
    for (int64_t i = 0; i < kBlock; ++i) {
      if (amax < std::fabs(xb[i])) {
        amax = std::fabs(xb[i]);
        max = xb[i];
      }
    }
    const float d = max / -8.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    y[b].d = kernels::f32_to_f16_scalar(d);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      // GGML: MIN(15, (int8_t)(x * id + 8.5f)); the argument lies in [0.5, 16.5] for finite x.
      const float lo_f = xb[j] * id + 8.5f;
      const float hi_f = xb[j + kBlock / 2] * id + 8.5f;
      const int lo = clamp_to_int8(lo_f, 0, 15);
      const int hi = clamp_to_int8(hi_f, 0, 15);
      y[b].qs[j] = uint8_t(lo | (hi << 4));
    }
  }
}

void dequantize_row_q8_0(const BlockQ8_0* x, float* y, int64_t n) {
  assert(n % kBlock == 0 && "dequantize_row_q8_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = kernels::f16_to_f32_scalar(x[b].d);
    for (int64_t i = 0; i < kBlock; ++i) y[b * kBlock + i] = float(x[b].qs[i]) * d;
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n) {
  assert(n % kBlock == 0 && "dequantize_row_q4_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = kernels::f16_to_f32_scalar(x[b].d);
    for (int64_t j = 0; j < kBlock / 2; ++j) {
      y[b * kBlock + j] = float((x[b].qs[j] & 0x0f) - 8) * d;
      y[b * kBlock + j + kBlock / 2] = float((x[b].qs[j] >> 4) - 8) * d;
    }
  }
}

// ================================================================================================
// Reference twins of the kernels
// ================================================================================================

void quantize_act_ref(const float* x, ActBlock* out, int64_t n) {
  assert(n % kBlock == 0 && "quantize_act: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float* xb = x + b * kBlock;
    float amax = 0.0f;
    for (int64_t i = 0; i < kBlock; ++i) amax = std::fmax(amax, std::fabs(xb[i]));
    const float d = amax / 127.0f;
    const float id = d != 0.0f ? 1.0f / d : 0.0f;
    int32_t sum = 0;
    for (int64_t i = 0; i < kBlock; ++i) {
      // Round to nearest even, as vcvtps2dq does under the default MXCSR.
      const int8_t q = clamp_to_int8(std::nearbyint(xb[i] * id), -127, 127);
      out[b].qs[i] = q;
      sum += q;
    }
    out[b].d = d;
    out[b].sum = sum;
  }
}

void matvec_q8_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  assert(cols % kBlock == 0 && cols > 0 && "matvec_q8_0: cols must be a positive multiple of 32");
  const int64_t n_blocks = cols / kBlock;
  const auto* blocks = static_cast<const BlockQ8_0*>(w);  // [rows, n_blocks]
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0.0f;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const BlockQ8_0& wb = blocks[r * n_blocks + b];
      int32_t dot = 0;
      for (int64_t i = 0; i < kBlock; ++i) dot += int32_t(wb.qs[i]) * int32_t(x[b].qs[i]);
      acc += float(dot) * (kernels::f16_to_f32_scalar(wb.d) * x[b].d);
    }
    y[r] = acc;
  }
}

void matvec_q4_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  assert(cols % kBlock == 0 && cols > 0 && "matvec_q4_0: cols must be a positive multiple of 32");
  const int64_t n_blocks = cols / kBlock;
  const auto* blocks = static_cast<const BlockQ4_0*>(w);  // [rows, n_blocks]
  for (int64_t r = 0; r < rows; ++r) {
    float acc = 0.0f;
    for (int64_t b = 0; b < n_blocks; ++b) {
      const BlockQ4_0& wb = blocks[r * n_blocks + b];
      int32_t dot = 0;  // sum (q - 8) * x  =  sum q * x  -  8 * sum x
      for (int64_t j = 0; j < kBlock / 2; ++j) {
        dot += int32_t(wb.qs[j] & 0x0f) * int32_t(x[b].qs[j]);
        dot += int32_t(wb.qs[j] >> 4) * int32_t(x[b].qs[j + kBlock / 2]);
      }
      dot -= 8 * x[b].sum;
      acc += float(dot) * (kernels::f16_to_f32_scalar(wb.d) * x[b].d);
    }
    y[r] = acc;
  }
}

// The prefill twins are the matvec twins per token: the asm matches them bit for bit, and
// nothing here may be contracted into FMAs (the engine is built without -mfma; see quant.h).
void matmul_q8_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                     int64_t n_tokens, int64_t y_stride) {
  for (int64_t t = 0; t < n_tokens; ++t) matvec_q8_0_ref(w, x + t * (cols / kBlock), y + t * y_stride, rows, cols);
}

void matmul_q4_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols,
                     int64_t n_tokens, int64_t y_stride) {
  for (int64_t t = 0; t < n_tokens; ++t) matvec_q4_0_ref(w, x + t * (cols / kBlock), y + t * y_stride, rows, cols);
}

}  // namespace magnetar::quant
