// Quantizers into GGUF's Q4_K / Q5_K / Q6_K (and Q5_0 / Q5_1, the types llama.cpp falls back to
// for rows that are not whole 256-value super-blocks). The block layouts are llama.cpp's (kquants.h);
// the scale search is Magnetar's own: for each sub-block, a sweep of candidate level spacings
// around the value range, each followed by a weighted least-squares refit of scale (and min) to
// the levels it chose, keeping the lowest weighted squared error; then the sub-block scales are
// themselves quantized (6 or 8 bits under an FP16 super-scale) and every value is re-rounded
// against the scale it will really be decoded with.
//
// Input rules (the converter's, for every type): values are any floats. Each super-block is
// normalized by its largest finite magnitude before the search, so huge and tiny magnitudes fit
// the same arithmetic; NaN quantizes as 0 and ±inf as the block's largest level of that sign.
// Scales that exceed FP16 saturate at 65504 (values then clip; only |x| beyond ~6e7 for Q4_K).
#include <algorithm>
#include <cassert>
#include <cmath>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/kquants.h"

namespace magnetar::quant {
namespace {

constexpr float kHalfMax = 65504.0f;

uint16_t to_half(float v) { return kernels::f32_to_f16_scalar(std::clamp(v, -kHalfMax, kHalfMax)); }
float from_half(uint16_t h) { return kernels::f16_to_f32_scalar(h); }

// Nearest level in [lo, hi] (ties up); NaN gives lo (callers pass NaN as 0 where it can occur).
// No libm call: this runs ~25 times per value in the scale search.
int nearest_level(float v, int lo, int hi) {
  if (!(v > float(lo))) return lo;
  if (v >= float(hi)) return hi;
  return lo + int(v - float(lo) + 0.5f);
}

// GGML's rounding in its Q5_0 / Q5_1 quantizers: truncate v + 0.5 (v ≥ −0.5 there), then at most hi.
int round_half_up_clamped(float v, int hi) {
  if (!(v >= 0.0f)) return 0;  // NaN, −inf
  return int(std::min(std::floor(v + 0.5f), float(hi)));
}

// A super-block (or block) of n values scaled into [-1, 1] by its largest finite magnitude
// (`scale`; 0 when every value is 0 or non-finite). NaN becomes 0, ±inf ±1.
struct Normalized {
  float v[kSuperBlock];
  float scale;
};

void normalize(const float* x, int n, Normalized* out) {
  float amax = 0.0f;
  for (int i = 0; i < n; ++i)
    if (std::isfinite(x[i])) amax = std::max(amax, std::fabs(x[i]));
  out->scale = amax;
  for (int i = 0; i < n; ++i) {
    const float v = x[i];
    if (std::isnan(v) || amax == 0.0f) out->v[i] = 0.0f;
    else if (std::isinf(v)) out->v[i] = v > 0 ? 1.0f : -1.0f;
    else out->v[i] = v / amax;  // a division: 1 / amax overflows when amax is subnormal
  }
}

// Importance of each value in the error sum: larger magnitudes count more (their error shows in
// every dot product they enter), plus the sub-block's RMS so small values are not ignored.
void importance(const float* x, int n, float* w) {
  float sum_sq = 0.0f;
  for (int i = 0; i < n; ++i) sum_sq += x[i] * x[i];
  const float rms = std::sqrt(sum_sq / float(n));
  for (int i = 0; i < n; ++i) w[i] = rms + std::fabs(x[i]);
}

constexpr int kSweepSteps = 10;        // candidate spacings on each side of the plain one
constexpr float kSweepStep = 0.1f;     // in levels
constexpr int kRefinePasses = 2;       // re-round and refit with the best fit so far

// x ≈ scale · q − min with q ∈ [0, nmax] and min ≥ 0 (Q4_K, Q5_K sub-blocks). Returns the fit
// (scale ≥ 0, min ≥ 0); q is not stored (the caller re-rounds against the quantized scales).
struct AffineFit {
  float scale = 0.0f, min = 0.0f;
};

// Weighted sums of one sub-block under one choice of levels q.
struct LevelSums {
  float w = 0, q = 0, qq = 0, x = 0, qx = 0;
};

// Σ w (s·q + b − x)² from the sums and Σ w x² (double: the terms nearly cancel).
double weighted_error(const LevelSums& t, double sxx, double s, double b) {
  return sxx - 2 * s * t.qx - 2 * b * t.x + s * s * t.qq + 2 * s * b * t.q + b * b * t.w;
}

// Weighted least squares of x ≈ s·q + b for fixed q, with b ≤ 0 (the format's −min).
void refit_affine(const LevelSums& t, double* s, double* b) {
  const double det = double(t.w) * t.qq - double(t.q) * t.q;
  *s = 0, *b = 0;
  if (det > 0) {
    *s = (double(t.w) * t.qx - double(t.q) * t.x) / det;
    *b = (double(t.qq) * t.x - double(t.q) * t.qx) / det;
  }
  if (*b > 0 || det <= 0) {
    *b = 0;
    *s = t.qq > 0 ? t.qx / double(t.qq) : 0;
  }
  if (*s < 0) {  // all levels would point the wrong way: a constant (−min) fits best
    *s = 0;
    *b = std::min(0.0, t.w > 0 ? t.x / double(t.w) : 0.0);
  }
}

AffineFit fit_affine(const float* x, const float* w, int n, int nmax) {
  float lo = 0.0f, hi = x[0], sxx = 0.0f;
  for (int i = 0; i < n; ++i) {
    lo = std::min(lo, x[i]);
    hi = std::max(hi, x[i]);
    sxx += w[i] * x[i] * x[i];
  }
  AffineFit best;
  best.min = -lo;
  if (!(hi > lo)) return best;  // every value is lo ≤ 0: scale 0, min −lo is exact
  double best_err = INFINITY, best_s = 0, best_b = lo;
  auto try_levels = [&](float inv_scale, float offset) {
    LevelSums t;
    for (int i = 0; i < n; ++i) {
      const float q = float(nearest_level((x[i] - offset) * inv_scale, 0, nmax));
      t.w += w[i], t.q += w[i] * q, t.qq += w[i] * q * q, t.x += w[i] * x[i], t.qx += w[i] * q * x[i];
    }
    double s, b;
    refit_affine(t, &s, &b);
    const double err = weighted_error(t, sxx, s, b);
    if (err < best_err) best_err = err, best_s = s, best_b = b;
  };
  for (int k = -kSweepSteps; k <= kSweepSteps; ++k)
    try_levels((float(nmax) + kSweepStep * float(k)) / (hi - lo), lo);
  for (int pass = 0; pass < kRefinePasses && best_s > 0; ++pass) try_levels(float(1 / best_s), float(best_b));
  best.scale = float(best_s);
  best.min = float(-best_b);
  return best;
}

// x ≈ scale · q with q ∈ [−nneg, npos] (Q6_K sub-blocks: −32..31). scale may be negative, so
// the extra negative level can serve the value of largest magnitude whatever its sign.
float fit_symmetric(const float* x, const float* w, int n, int nneg, int npos) {
  float amax = 0, max = 0, sxx = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) amax = std::fabs(x[i]), max = x[i];
    sxx += w[i] * x[i] * x[i];
  }
  if (amax == 0) return 0;
  double best_err = INFINITY, best_s = 0;
  auto try_levels = [&](float inv_scale) {
    LevelSums t;
    for (int i = 0; i < n; ++i) {
      const float q = float(nearest_level(x[i] * inv_scale, -nneg, npos));
      t.qq += w[i] * q * q, t.qx += w[i] * q * x[i];
    }
    if (t.qq <= 0) return;
    const double s = t.qx / double(t.qq);
    const double err = weighted_error(t, sxx, s, 0);
    if (err < best_err) best_err = err, best_s = s;
  };
  for (int k = -kSweepSteps; k <= kSweepSteps; ++k) {
    try_levels(-(float(nneg) + kSweepStep * float(k)) / max);  // largest value on the long side
    try_levels((float(npos) + kSweepStep * float(k)) / max);
  }
  for (int pass = 0; pass < kRefinePasses && best_s != 0; ++pass) try_levels(float(1 / best_s));
  return float(best_s);
}

// ---- Q4_K / Q5_K: 8 sub-blocks of 32, 6-bit scales and mins under FP16 d and dmin ----------

struct AffineSuperBlock {
  uint16_t d, dmin;
  uint8_t scales[12];
  uint8_t levels[kSuperBlock];  // 0..nmax
};

// Packs sub-block scales sc[8] and mins m[8] (6 bits each) as k_scale_min reads them.
void pack_scale_min(const uint8_t* sc, const uint8_t* m, uint8_t* out) {
  for (int j = 0; j < 4; ++j) {
    out[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    out[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

void quantize_affine_super_block(const float* x, int nmax, AffineSuperBlock* out) {
  constexpr int kSub = 32, kSubBlocks = kSuperBlock / kSub;
  Normalized xn;
  normalize(x, kSuperBlock, &xn);
  AffineFit fits[kSubBlocks];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < kSubBlocks; ++j) {
    float w[kSub];
    importance(xn.v + j * kSub, kSub, w);
    fits[j] = fit_affine(xn.v + j * kSub, w, kSub, nmax);
    max_scale = std::max(max_scale, fits[j].scale);
    max_min = std::max(max_min, fits[j].min);
  }
  // Super-scales in the input's units (double: the product may exceed float before clamping).
  out->d = to_half(float(double(max_scale) / 63 * xn.scale));
  out->dmin = to_half(float(double(max_min) / 63 * xn.scale));
  const float d = from_half(out->d), dmin = from_half(out->dmin);
  // The sub-block scales in units of the stored super-scales, back in normalized units.
  const double unit_d = xn.scale > 0 ? double(d) / xn.scale : 0, unit_m = xn.scale > 0 ? double(dmin) / xn.scale : 0;
  uint8_t sc[kSubBlocks], mn[kSubBlocks];
  for (int j = 0; j < kSubBlocks; ++j) {
    sc[j] = uint8_t(unit_d > 0 ? nearest_level(float(fits[j].scale / unit_d), 0, 63) : 0);
    mn[j] = uint8_t(unit_m > 0 ? nearest_level(float(fits[j].min / unit_m), 0, 63) : 0);
  }
  pack_scale_min(sc, mn, out->scales);
  // Re-round every value against the scale and min the decoder will use.
  for (int j = 0; j < kSubBlocks; ++j) {
    const float step = d * float(sc[j]), offset = dmin * float(mn[j]);
    for (int i = j * kSub; i < (j + 1) * kSub; ++i) {
      const float v = std::isnan(x[i]) ? 0.0f : x[i];
      out->levels[i] = uint8_t(step > 0 ? nearest_level((v + offset) / step, 0, nmax) : 0);
    }
  }
}

// ---- Q5_0 / Q5_1 (32-value blocks; llama.cpp's rounding rules) ------------------------------

void pack_five_bits(const int* q, uint8_t* qs, uint8_t* qh_bytes) {
  uint32_t qh = 0;
  for (int j = 0; j < 16; ++j) {
    qs[j] = uint8_t((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
    qh |= uint32_t((q[j] >> 4) & 1) << j;
    qh |= uint32_t((q[j + 16] >> 4) & 1) << (j + 16);
  }
  std::memcpy(qh_bytes, &qh, 4);
}

template <class Block>
void store(void* y, int64_t i, const Block& b) {
  std::memcpy(static_cast<uint8_t*>(y) + i * int64_t(sizeof(Block)), &b, sizeof(Block));
}

}  // namespace

namespace {

// 64 values per group of 32 bytes: the first 32 in the low nibbles, the next 32 in the high ones.
void pack_q4_k_levels(const uint8_t* levels, BlockQ4_K* b) {
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) b->qs[32 * g + l] = uint8_t(levels[64 * g + l] | (levels[64 * g + 32 + l] << 4));
}

// As Q4_K's nibbles, plus the fifth bits: bit 2g (first 32) and 2g + 1 (next 32) of qh[l].
void pack_q5_k_levels(const uint8_t* levels, BlockQ5_K* b) {
  std::memset(b->qh, 0, sizeof(b->qh));
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t lo = levels[64 * g + l], hi = levels[64 * g + 32 + l];
      b->qs[32 * g + l] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
      b->qh[l] = uint8_t(b->qh[l] | ((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1)));
    }
  }
}

// Q4_K / Q5_K rows: each super-block's scale search, then the type's packing of the levels.
template <class Block, int kMaxLevel, void (*Pack)(const uint8_t*, Block*)>
void quantize_affine_row(const float* x, void* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    AffineSuperBlock s;
    quantize_affine_super_block(x + i * kSuperBlock, kMaxLevel, &s);
    Block b;
    b.d = s.d, b.dmin = s.dmin;
    std::memcpy(b.scales, s.scales, 12);
    Pack(s.levels, &b);
    store(y, i, b);
  }
}

}  // namespace

void quantize_row_q4_k(const float* x, void* y, int64_t n) {
  quantize_affine_row<BlockQ4_K, 15, pack_q4_k_levels>(x, y, n);
}

void quantize_row_q5_k(const float* x, void* y, int64_t n) {
  quantize_affine_row<BlockQ5_K, 31, pack_q5_k_levels>(x, y, n);
}

void quantize_row_q6_k(const float* x, void* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  constexpr int kSub = 16, kSubBlocks = kSuperBlock / kSub;
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    const float* xb = x + i * kSuperBlock;
    Normalized xn;
    normalize(xb, kSuperBlock, &xn);
    float scales[kSubBlocks], widest = 0;
    for (int j = 0; j < kSubBlocks; ++j) {
      float w[kSub];
      importance(xn.v + j * kSub, kSub, w);
      scales[j] = fit_symmetric(xn.v + j * kSub, w, kSub, 32, 31);
      if (std::fabs(scales[j]) > std::fabs(widest)) widest = scales[j];
    }
    // The widest sub-block scale maps to int8 −128 (the long side of the int8 range).
    BlockQ6_K b;
    b.d = to_half(float(double(widest) / -128 * xn.scale));
    const float d = from_half(b.d);
    const double unit = xn.scale > 0 ? double(d) / xn.scale : 0;
    uint8_t levels[kSuperBlock];
    for (int j = 0; j < kSubBlocks; ++j) {
      b.scales[j] = int8_t(unit != 0 ? nearest_level(float(scales[j] / unit), -128, 127) : 0);
      const float step = d * float(b.scales[j]);
      for (int l = j * kSub; l < (j + 1) * kSub; ++l) {
        const float v = std::isnan(xb[l]) ? 0.0f : xb[l];
        levels[l] = uint8_t(32 + (step != 0 ? nearest_level(v / step, -32, 31) : 0));
      }
    }
    for (int h = 0; h < 2; ++h) {  // two halves of 128: four runs of 32 share ql / qh bytes
      const uint8_t* q = levels + 128 * h;
      for (int l = 0; l < 32; ++l) {
        b.ql[64 * h + l] = uint8_t((q[l] & 0xF) | ((q[l + 64] & 0xF) << 4));
        b.ql[64 * h + l + 32] = uint8_t((q[l + 32] & 0xF) | ((q[l + 96] & 0xF) << 4));
        b.qh[32 * h + l] =
            uint8_t((q[l] >> 4) | ((q[l + 32] >> 4) << 2) | ((q[l + 64] >> 4) << 4) | ((q[l + 96] >> 4) << 6));
      }
    }
    store(y, i, b);
  }
}

// Q5_0 (GGML's reference rule, bit for bit on finite input): d = (value of largest magnitude) / −16,
// q = min(31, trunc(x / d + 16.5)).
void quantize_row_q5_0(const float* x, void* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i) {
    const float* xb = x + i * 32;
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j)
      if (amax < std::fabs(xb[j])) amax = std::fabs(xb[j]), max = xb[j];
    BlockQ5_0 b;
    b.d = to_half(max / -16);
    const float d = max / -16, id = d != 0 ? 1 / d : 0;
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = round_half_up_clamped(xb[j] * id + 16, 31);
    pack_five_bits(q, b.qs, b.qh);
    store(y, i, b);
  }
}

// Q5_1 (GGML's reference rule on finite input): d = (max − min) / 31, m = min,
// q = min(31, trunc((x − min) / d + 0.5)).
void quantize_row_q5_1(const float* x, void* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i) {
    const float* xb = x + i * 32;
    float lo = INFINITY, hi = -INFINITY;
    for (int j = 0; j < 32; ++j)
      if (std::isfinite(xb[j])) lo = std::min(lo, xb[j]), hi = std::max(hi, xb[j]);
    if (lo > hi) lo = hi = 0;  // no finite value
    BlockQ5_1 b;
    const float d = (hi - lo) / 31, id = d != 0 ? 1 / d : 0;
    b.d = to_half(d);
    b.m = to_half(lo);
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = round_half_up_clamped((xb[j] - lo) * id, 31);
    pack_five_bits(q, b.qs, b.qh);
    store(y, i, b);
  }
}

}  // namespace magnetar::quant
