// Double-precision oracles and named error budgets shared by the kernel and ops tests. Every
// kernel table (reference, asm) is held to the same budgets against these plain loops.
#pragma once
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "kernels/kernels.h"

namespace magnetar::test {

// One FP32 rounding.
inline constexpr double kUnitRoundoff = 1.0 / 16777216.0;  // 2^-24
// Reductions keep >= 8 partial sums, a tail of < 8 and a pairwise lane sum: see reference.h.
inline double reduction_budget(int64_t n, double sum_abs_products) {
  return (static_cast<double>((n + 7) / 8) + 16.0) * kUnitRoundoff * sum_abs_products;
}
// matmul (prefill): each output is one FP32 FMA chain per block of <= kMatmulBlock columns, the
// block sums added in order (asm/matmul_avx2.asm), or the matvec scheme for short batches.
inline constexpr int64_t kMatmulBlock = 256;
inline double matmul_budget(int64_t n, double sum_abs_products) {
  const int64_t in_block = n < kMatmulBlock ? n : kMatmulBlock;
  const double blocked = static_cast<double>(in_block + (n + kMatmulBlock - 1) / kMatmulBlock + 16) *
                         kUnitRoundoff * sum_abs_products;
  const double lanes = reduction_budget(n, sum_abs_products);
  return blocked > lanes ? blocked : lanes;
}
// rmsnorm: a few roundings in scale and the two products (sum of squares in double or in >= 8
// FP32 partial sums over n: the scale's relative error is then <= (n/8 + 16) u / 2).
inline double rmsnorm_budget(int64_t n, double exact) {
  return (static_cast<double>((n + 7) / 8) / 2.0 + 16.0) * kUnitRoundoff * std::fabs(exact) + 1e-30;
}
// softmax: x - max rounds by |x - max| u, which exp turns into a relative error; exp, the sum and
// the final scale add a few ulps (asm exp polynomials are held to 4 ulps).
inline constexpr double kSoftmaxExtraUlps = 16.0;
inline double softmax_budget(double x_minus_max, double exact) {
  return (std::fabs(x_minus_max) + kSoftmaxExtraUlps) * kUnitRoundoff * exact + 2e-38;  // results below FLT_MIN may flush to 0
}
// Activations (silu, gelu_tanh) times up: the asm uses polynomial exp/tanh. Relative to
// |act(g)| |up| with an absolute floor where the activation itself crosses zero
// (gelu and silu near g = 0 lose relative accuracy in any FP32 formulation).
inline constexpr double kActivationRelUlps = 64.0;
inline double activation_budget(double g, double up, double exact) {
  return kActivationRelUlps * kUnitRoundoff * (std::fabs(exact) + 1e-3 * std::fabs(up) * std::fabs(g));
}
// rope: a*c - b*s with or without FMA: <= 3 roundings of the larger product.
inline double rope_budget(double ac, double bs) {
  return 3.0 * kUnitRoundoff * (std::fabs(ac) + std::fabs(bs)) + 1e-38;
}

inline std::vector<float> random_floats(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = d(rng);
  return v;
}

inline std::vector<uint16_t> random_halves(std::mt19937& rng, int64_t n, float lo, float hi) {
  std::uniform_real_distribution<float> d(lo, hi);
  std::vector<uint16_t> v(static_cast<size_t>(n));
  for (uint16_t& h : v) h = kernels::f32_to_f16_scalar(d(rng));
  return v;
}

// Exact-ish dot: double accumulation of exact products; also returns sum |a_i b_i|.
template <class W>
double oracle_dot(const W* w, const float* x, int64_t n, double* sum_abs) {
  double s = 0.0, a = 0.0;
  for (int64_t i = 0; i < n; ++i) {
    double wi;
    if constexpr (sizeof(W) == 2)
      wi = kernels::f16_to_f32_scalar(w[i]);
    else
      wi = w[i];
    const double p = wi * static_cast<double>(x[i]);
    s += p;
    a += std::fabs(p);
  }
  *sum_abs = a;
  return s;
}

}  // namespace magnetar::test
