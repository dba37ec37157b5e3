// Reference twins (see reference.h for the numerical contract) and the scalar FP16/BF16
// conversions. Deliberately plain: this is what the asm is checked against.
#include "kernels/reference.h"

#include <cassert>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"

namespace magnetar::kernels {

// ---- scalar conversions -------------------------------------------------------------------

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

float f16_to_f32_scalar(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exponent = (h >> 10) & 0x1fu;
  uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0) {
    if (mantissa == 0) return bits_float(sign);  // +-0
    // Subnormal half: normalise into an FP32 normal (every half subnormal is an FP32 normal).
    int32_t e = -14;
    while ((mantissa & 0x400u) == 0) {
      mantissa <<= 1;
      --e;
    }
    mantissa &= 0x3ffu;
    return bits_float(sign | (static_cast<uint32_t>(e + 127) << 23) | (mantissa << 13));
  }
  if (exponent == 31) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  return bits_float(sign | ((exponent + 112) << 23) | (mantissa << 13));
}

uint16_t f32_to_f16_scalar(float f) {
  uint32_t x = float_bits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x >= 0x7f800000u) {
    if (x > 0x7f800000u)  // NaN: keep the top payload bits, force quiet (as F16C does)
      return static_cast<uint16_t>(sign | 0x7e00u | ((x >> 13) & 0x3ffu));
    return static_cast<uint16_t>(sign | 0x7c00u);  // inf
  }
  if (x >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // >= 65520 rounds to inf
  if (x < 0x38800000u) {  // below 2^-14: a half subnormal (or zero)
    if (x < 0x33000000u) return sign;  // <= 2^-25 rounds to zero (the tie goes to even 0)
    const uint32_t e = x >> 23;
    const uint32_t m = (x & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14..24: value / 2^-24 = m >> shift
    uint32_t r = m >> shift;
    const uint32_t rest = m & ((1u << shift) - 1u);
    const uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (r & 1u))) ++r;  // may carry into the min normal
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = x - 0x38000000u;  // rebias exponent 127 -> 15
  const uint32_t rest = r & 0x1fffu;
  r >>= 13;
  if (rest > 0x1000u || (rest == 0x1000u && (r & 1u))) ++r;  // carry may reach inf: correct
  return static_cast<uint16_t>(sign | r);
}

float bf16_to_f32_scalar(uint16_t h) { return bits_float(static_cast<uint32_t>(h) << 16); }

// ---- reference twins ----------------------------------------------------------------------

namespace ref {
namespace {

constexpr int kLanes = 8;

float sum_lanes(const float* s) {
  return ((s[0] + s[4]) + (s[2] + s[6])) + ((s[1] + s[5]) + (s[3] + s[7]));
}

}  // namespace

float dot_f16_f32(const uint16_t* w, const float* x, int64_t n) {
  float s[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int j = 0; j < kLanes; ++j) s[j] += f16_to_f32_scalar(w[c + j]) * x[c + j];
  float total = sum_lanes(s);
  for (; c < n; ++c) total += f16_to_f32_scalar(w[c]) * x[c];
  return total;
}

float dot_f32_f32(const float* a, const float* b, int64_t n) {
  float s[kLanes] = {};
  int64_t c = 0;
  for (; c + kLanes <= n; c += kLanes)
    for (int j = 0; j < kLanes; ++j) s[j] += a[c + j] * b[c + j];
  float total = sum_lanes(s);
  for (; c < n; ++c) total += a[c] * b[c];
  return total;
}

void matvec_f16(const uint16_t* w, int64_t ldw, const float* x, float* y, int64_t rows,
                int64_t cols) {
  assert(ldw >= cols && rows >= 0 && cols >= 0 && "matvec_f16: need ldw >= cols >= 0");
  for (int64_t r = 0; r < rows; ++r) y[r] = dot_f16_f32(w + r * ldw, x, cols);
}

void matvec_f32(const float* w, int64_t ldw, const float* x, float* y, int64_t rows,
                int64_t cols) {
  assert(ldw >= cols && rows >= 0 && cols >= 0 && "matvec_f32: need ldw >= cols >= 0");
  for (int64_t r = 0; r < rows; ++r) y[r] = dot_f32_f32(w + r * ldw, x, cols);
}

void matmul_f16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, float* y,
                int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate) {
  assert(ldw >= cols && ldx >= cols && ldy >= rows && "matmul_f16: strides too small");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float sum = dot_f16_f32(w + r * ldw, x + t * ldx, cols);
      y[t * ldy + r] = accumulate ? y[t * ldy + r] + sum : sum;
    }
}

void matmul_f32(const float* w, int64_t ldw, const float* x, int64_t ldx, float* y, int64_t ldy,
                int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate) {
  assert(ldw >= cols && ldx >= cols && ldy >= rows && "matmul_f32: strides too small");
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t t = 0; t < n_tokens; ++t) {
      const float sum = dot_f32_f32(w + r * ldw, x + t * ldx, cols);
      y[t * ldy + r] = accumulate ? y[t * ldy + r] + sum : sum;
    }
}

void rmsnorm(float* out, const float* x, const float* weight, int64_t n, const float* eps) {
  assert(n > 0 && "rmsnorm: n must be positive");
  double sum_sq = 0.0;
  for (int64_t i = 0; i < n; ++i) sum_sq += static_cast<double>(x[i]) * x[i];
  const float scale =
      static_cast<float>(1.0 / std::sqrt(sum_sq / static_cast<double>(n) + *eps));
  for (int64_t i = 0; i < n; ++i) out[i] = (x[i] * scale) * weight[i];
}

void softmax(float* x, int64_t n) {
  // Contract: at least one element is finite (a fully masked row is the caller's bug).
  if (n <= 0) return;
  float max_value = x[0];
  for (int64_t i = 1; i < n; ++i) max_value = x[i] > max_value ? x[i] : max_value;
  double sum = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - max_value);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void silu_mul(float* gate, const float* up, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    gate[i] = static_cast<float>(g / (1.0 + std::exp(-g)) * up[i]);
  }
}

void gelu_tanh_mul(float* gate, const float* up, int64_t n) {
  const double k = 0.7978845608028654;  // sqrt(2 / pi)
  for (int64_t i = 0; i < n; ++i) {
    const double g = gate[i];
    const double gelu = 0.5 * g * (1.0 + std::tanh(k * (g + 0.044715 * g * g * g)));
    gate[i] = static_cast<float>(gelu * up[i]);
  }
}

void rope(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin) {
  assert(head_dim % 2 == 0 && "rope: head_dim must be even");
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* v = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const float a = v[i], b = v[i + half];
      v[i] = a * cos[i] - b * sin[i];
      v[i + half] = b * cos[i] + a * sin[i];
    }
  }
}

void f16_to_f32(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = f16_to_f32_scalar(src[i]);
}

void dot_f32(const float* a, const float* b, int64_t n, float* out) { *out = dot_f32_f32(a, b, n); }

void read_sum_f32(const float* p, int64_t n, float* out) {
  float acc[4][kLanes] = {};
  for (int64_t i = 0; i < n; ++i) acc[(i % 32) / 8][i % 8] += p[i];
  for (int j = 0; j < kLanes; ++j) out[j] = (acc[0][j] + acc[1][j]) + (acc[2][j] + acc[3][j]);
}

// a * b + c rounded once, like the FMA instruction, without trusting the C library's fmaf (mingw-w64's
// rounds twice). The product is exact in double; the sum is rounded to odd in double (TwoSum
// error tells which way the exact value lies), and rounding that to float is then exact-once.
float fma_f32(float a, float b, float c) {
  const double p = static_cast<double>(a) * b;
  const double s = p + c;
  const double bb = s - p;
  const double err = (p - (s - bb)) + (c - bb);
  double odd = s;
  if (err != 0.0) {
    uint64_t bits;
    std::memcpy(&bits, &s, sizeof bits);
    if ((bits & 1u) == 0) {
      bits += ((err > 0) == (s > 0)) ? 1 : static_cast<uint64_t>(-1);  // toward the exact value
      std::memcpy(&odd, &bits, sizeof odd);
    }
  }
  return static_cast<float>(odd);
}

void fma_loop(int64_t iterations, const float* coefficients, float* out) {
  float chain[12];
  for (int c = 0; c < 12; ++c) chain[c] = 1.0f + static_cast<float>(c) / 16.0f;
  for (int64_t i = 0; i < iterations; ++i)
    for (float& v : chain) v = fma_f32(v, coefficients[0], coefficients[1]);
  float sum = chain[0];
  for (int c = 1; c < 12; ++c) sum += chain[c];
  for (int j = 0; j < kLanes; ++j) out[j] = sum;
}

}  // namespace ref
}  // namespace magnetar::kernels
