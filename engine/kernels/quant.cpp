// Q8_0 / Q4_0: GGML-exact quantizers and dequantizers, the reference twins of the integer
// matrix–vector kernels, and the quant kernel table (see quant.h for the formats).
#include "kernels/quant.h"

#include <cassert>
#include <cmath>
#include <cstdlib>
#include <cstring>

namespace magnetar::quant {

// ================================================================================================
// IEEE half <-> float
// ================================================================================================

namespace {
uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}
}  // namespace

float half_to_float(uint16_t h) {
  const uint32_t sign = uint32_t(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  const uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf / NaN
  if (exponent != 0) return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float.
  const float magnitude = float(mantissa) * bits_float(0x33800000u);  // 2^-24
  return sign ? -magnitude : magnitude;
}

uint16_t float_to_half(float f) {
  uint32_t bits = float_bits(f);
  const uint32_t sign = bits & 0x80000000u;
  bits ^= sign;
  uint16_t out;
  if (bits >= 0x47800000u) {  // |f| >= 65536 (or inf / NaN): inf, or a quiet NaN
    out = bits > 0x7f800000u ? 0x7e00 : 0x7c00;
  } else if (bits < 0x38800000u) {  // below the smallest normal half: subnormal or zero
    // Adding 0.5 shifts the value so the float adder's own round-to-nearest-even does the work.
    const float shifted = bits_float(bits) + 0.5f;
    out = uint16_t(float_bits(shifted) - 0x3f000000u);
  } else {
    const uint32_t mantissa_odd = (bits >> 13) & 1u;
    bits += 0xc8000fffu + mantissa_odd;  // rebias exponent (-112 << 23), round half to even
    out = uint16_t(bits >> 13);          // a carry out of the mantissa rounds up to inf
  }
  return uint16_t(out | (sign >> 16));
}

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
    y[b].d = float_to_half(d);
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
    y[b].d = float_to_half(d);
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
    const float d = half_to_float(x[b].d);
    for (int64_t i = 0; i < kBlock; ++i) y[b * kBlock + i] = float(x[b].qs[i]) * d;
  }
}

void dequantize_row_q4_0(const BlockQ4_0* x, float* y, int64_t n) {
  assert(n % kBlock == 0 && "dequantize_row_q4_0: n must be a multiple of 32");
  for (int64_t b = 0; b < n / kBlock; ++b) {
    const float d = half_to_float(x[b].d);
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
      acc += float(dot) * (half_to_float(wb.d) * x[b].d);
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
      acc += float(dot) * (half_to_float(wb.d) * x[b].d);
    }
    y[r] = acc;
  }
}

// ================================================================================================
// Dispatch
// ================================================================================================

namespace {
const QuantKernelTable kReferenceTable = {quantize_act_ref, matvec_q8_0_ref, matvec_q4_0_ref,
                                          "reference"};
#if defined(__x86_64__) || defined(_M_X64)
const QuantKernelTable kAsmTable = {magnetar_quantize_act_avx2, magnetar_matvec_q8_0_avx2,
                                    magnetar_matvec_q4_0_avx2, "avx2"};
#endif

QuantKernelTable g_active = kReferenceTable;
bool g_selected = false;

bool forced_reference() {
  const char* env = std::getenv("MAGNETAR_KERNELS");
  return env != nullptr && std::strcmp(env, "reference") == 0;
}
}  // namespace

bool asm_available() {
#if (defined(__x86_64__) || defined(_M_X64)) && (defined(__GNUC__) || defined(__clang__))
  // libgcc's checks include the OS's XSAVE support for YMM state (XGETBV).
  __builtin_cpu_init();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
#else
  return false;
#endif
}

const QuantKernelTable& reference_table() { return kReferenceTable; }

const QuantKernelTable& asm_table() {
#if defined(__x86_64__) || defined(_M_X64)
  assert(asm_available() && "quant::asm_table: the CPU lacks AVX2/FMA/F16C; use active()");
  return kAsmTable;
#else
  return kReferenceTable;
#endif
}

void select(kernels::KernelChoice choice) {
  bool use_asm = false;
  switch (choice) {
    case kernels::KernelChoice::Auto: use_asm = asm_available() && !forced_reference(); break;
    case kernels::KernelChoice::Reference: use_asm = false; break;
    case kernels::KernelChoice::Asm: use_asm = asm_available(); break;
  }
  g_active = use_asm ? asm_table() : kReferenceTable;
  g_selected = true;
}

const QuantKernelTable& active() {
  if (!g_selected) quant::select(kernels::KernelChoice::Auto);
  return g_active;
}

}  // namespace magnetar::quant
