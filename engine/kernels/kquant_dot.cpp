// Reference twins of the K-quant integer kernels (asm/kquant_avx2.asm) and GGML's Q8_K activation
// quantizer; see kquants.h for the numerics both follow (the shared arithmetic: kquant_lanes.h).
#include <cassert>
#include <cmath>
#include <cstring>

#include "core/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/kquant_lanes.h"
#include "kernels/kquants.h"

namespace magnetar::quant {

// mingw-w64's fmaf is not fused (it rounds the product first), so where the CPU has FMA the
// instruction is used directly; elsewhere the C library's (exact on glibc and MSVC).
#if defined(__GNUC__)
namespace {
__attribute__((target("fma"))) float fma_instruction(float a, float b, float c) {
  return __builtin_fmaf(a, b, c);
}
}  // namespace
float fused_mul_add(float a, float b, float c) {
  static const bool has_fma = cpu::features().fma;
  return has_fma ? fma_instruction(a, b, c) : std::fma(a, b, c);
}
#else
float fused_mul_add(float a, float b, float c) { return std::fma(a, b, c); }
#endif

namespace {

// std::nearbyint (round half to even, the default rounding mode) of |v| < 2^22, inf or NaN, without
// the library call (the engine is built for baseline x86-64, without SSE4.1's roundss): adding
// 1.5 * 2^23 leaves no fraction bits, so the addition rounds; subtracting it back is exact.
float round_half_even(float v) {
  constexpr float kShift = 12582912.0f;  // 1.5 * 2^23
  return (v + kShift) - kShift;
}

}  // namespace

void quantize_act_k_ref(const float* x, ActBlockK* out, int64_t n) {
  assert(n % kSuperBlock == 0 && "quantize_act_k: n must be a multiple of 256");
  for (int64_t b = 0; b < n / kSuperBlock; ++b, x += kSuperBlock) {
    ActBlockK& y = out[b];
    std::memset(&y, 0, sizeof y);
    float amax = 0.0f, max = 0.0f;
    for (int64_t j = 0; j < kSuperBlock; ++j) {
      const float ax = std::fabs(x[j]);
      if (ax > amax) {
        amax = ax;
        max = x[j];
      }
    }
    if (amax == 0.0f) continue;  // all zero (or NaN): d = 0, q = 0
    const float iscale = -127.0f / max;
    for (int64_t j = 0; j < kSuperBlock; ++j) {
      // round half even, as GGML's nearest_int; |iscale * x| <= 127 (or inf / NaN when max is
      // subnormal / inf), in round_half_even's range
      const float v = round_half_even(iscale * x[j]);
      y.qs[j] = int8_t(v >= 127.0f ? 127 : v <= -127.0f ? -127 : v == v ? int(v) : 0);
    }
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += y.qs[16 * j + i];
      y.bsums[j] = int16_t(sum);
    }
    y.d = 1.0f / iscale;
  }
}

namespace {

// Q4_K and Q5_K: the same scales, mins and lanes; Q5_K adds 16 where its fifth bit is set.
template <class Block, bool kFifthBit>
void k_scaled_block_sums(const Block& wb, const ActBlockK& xb, int32_t* sums, float* mins_acc) {
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) k_scale_min(j, wb.scales, &sc[j], &m[j]);
  int32_t mins = 0;
  for (int j = 0; j < 8; ++j) mins += int32_t(m[j]) * (xb.bsums[2 * j] + xb.bsums[2 * j + 1]);
  *mins_acc = fused_mul_add(scaled_by_act(wb.dmin, xb), float(mins), *mins_acc);
  for (int k = 0; k < 4; ++k)
    for (int l = 0; l < 32; ++l) {
      int lo = wb.qs[32 * k + l] & 0xF, hi = wb.qs[32 * k + l] >> 4;
      if constexpr (kFifthBit) {
        lo += (wb.qh[l] >> (2 * k)) & 1 ? 16 : 0;
        hi += (wb.qh[l] >> (2 * k + 1)) & 1 ? 16 : 0;
      }
      sums[l / 4] += int32_t(sc[2 * k]) * lo * xb.qs[64 * k + l] + int32_t(sc[2 * k + 1]) * hi * xb.qs[64 * k + 32 + l];
    }
}

void q6_k_block_sums(const BlockQ6_K& wb, const ActBlockK& xb, int32_t* sums, float*) {
  for (int i = 0; i < 8; ++i)
    sums[i] = -32 * (int32_t(wb.scales[2 * i]) * xb.bsums[2 * i] + int32_t(wb.scales[2 * i + 1]) * xb.bsums[2 * i + 1]);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* ql = wb.ql + 64 * h;
    const uint8_t* qh = wb.qh + 32 * h;
    const int8_t* sc = wb.scales + 8 * h;
    for (int l = 0; l < 32; ++l) {
      const int q[4] = {(ql[l] & 0xF) | ((qh[l] & 3) << 4), (ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4),
                        (ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4), (ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)};
      for (int k = 0; k < 4; ++k) sums[l / 4] += int32_t(sc[2 * k + l / 16]) * q[k] * xb.qs[128 * h + 32 * k + l];
    }
  }
}

void iq4_xs_block_sums(const BlockIQ4_XS& wb, const ActBlockK& xb, int32_t* sums, float*) {
  for (int j = 0; j < 8; ++j) {
    const int scale = (((wb.scales_l[j / 2] >> 4 * (j % 2)) & 0xF) | (((wb.scales_h >> 2 * j) & 3) << 4)) - 32;
    for (int l = 0; l < 32; ++l) {
      const uint8_t q = wb.qs[16 * j + l % 16];
      sums[l / 4] += scale * kIq4Values[l < 16 ? q & 0xF : q >> 4] * xb.qs[32 * j + l];
    }
  }
}

}  // namespace

void matvec_q4_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols) {
  matvec_block_ref<BlockQ4_K>(w, x, y, rows, cols, k_scaled_block_sums<BlockQ4_K, false>);
}

void matvec_q5_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols) {
  matvec_block_ref<BlockQ5_K>(w, x, y, rows, cols, k_scaled_block_sums<BlockQ5_K, true>);
}

void matvec_q6_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols) {
  matvec_block_ref<BlockQ6_K>(w, x, y, rows, cols, q6_k_block_sums);
}

void matvec_iq4_xs_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols) {
  matvec_block_ref<BlockIQ4_XS>(w, x, y, rows, cols, iq4_xs_block_sums);
}

void matmul_k_ref(MatvecKFn matvec, const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols,
                  int64_t n_tokens, int64_t y_stride) {
  assert(cols % kSuperBlock == 0 && cols > 0 && n_tokens >= 0 && y_stride >= rows);
  for (int64_t t = 0; t < n_tokens; ++t) matvec(w, x + t * (cols / kSuperBlock), y + t * y_stride, rows, cols);
}

}  // namespace magnetar::quant
