// Quantizers into GGUF's K-quants (Q2_K, Q3_K, Q4_K, Q5_K, Q6_K), IQ4_NL / IQ4_XS, and the
// 32-value block types Q4_1 / Q5_0 / Q5_1 (which llama.cpp also falls back to for rows that are
// not whole 256-value super-blocks). The block layouts are llama.cpp's (kquants.h); the scale
// search of the K-quants and IQ4 is Magnetar's own: for each sub-block, a sweep of candidate
// level spacings around the value range, each followed by a weighted least-squares refit of scale
// (and min) to the levels it chose, keeping the lowest weighted squared error; then the sub-block
// scales are themselves quantized (4, 6 or 8 bits under an FP16 super-scale) and every value is
// re-rounded against the scale it will really be decoded with. Q4_1 / Q5_0 / Q5_1 follow GGML's
// reference rules, bit for bit on finite input.
//
// Input rules (the converter's, for every type): values are any floats. Each super-block is
// normalized by its largest finite magnitude before the search, so huge and tiny magnitudes fit
// the same arithmetic; NaN quantizes as the level nearest 0 and ±inf as the block's extreme
// level of that sign. Scales that exceed FP16 saturate at 65504 (values then clip; only |x|
// beyond ~6e7 for Q4_K).
//
// Sections: shared search (normalize, importance, fits) · level grids · affine super-blocks
// (Q2_K, Q4_K, Q5_K) · symmetric super-blocks (Q3_K, Q6_K, IQ4_XS) · IQ4_NL · min/max blocks
// (Q4_1, Q5_1) and Q5_0.
#include <algorithm>
#include <array>
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

// GGML's rounding in its Q4_1 / Q5_0 / Q5_1 quantizers: truncate v + 0.5 (v ≥ −0.5 there), then
// at most hi.
int round_half_up_clamped(float v, int hi) {
  if (!(v >= 0.0f)) return 0;  // NaN, −inf
  return int(std::min(std::floor(v + 0.5f), float(hi)));
}

float nan_as_zero(float v) { return std::isnan(v) ? 0.0f : v; }

template <class Block>
void store(void* y, int64_t i, const Block& b) {
  std::memcpy(static_cast<uint8_t*>(y) + i * int64_t(sizeof(Block)), &b, sizeof(Block));
}

// A 32-value block's low nibbles in 16 bytes: the first 16 values low, the next 16 high.
template <class Code>
void pack_nibbles(const Code* q, uint8_t* qs) {
  for (int j = 0; j < 16; ++j) qs[j] = uint8_t((q[j] & 0xF) | ((q[j + 16] & 0xF) << 4));
}

// ---- Shared search: normalize, importance, fits ---------------------------------------------

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
constexpr int kMaxSubBlocks = 16;      // Q2_K, Q3_K, Q6_K: 16 sub-blocks of 16 values

// x ≈ scale · q − min with q ∈ [0, nmax] and min ≥ 0 (Q2_K, Q4_K, Q5_K sub-blocks). Returns the
// fit (scale ≥ 0, min ≥ 0); q is not stored (the caller re-rounds against the quantized scales).
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

// ---- Level grids of the symmetric types -----------------------------------------------------
// A grid maps v (in units of the sub-block's scale, never NaN) to the stored code of its nearest
// level (saturating) and back; its ends anchor fit_symmetric's sweep, in steps of sweep_step.

// Integer levels lo..hi, stored as level − lo (Q3_K: −4..3, Q6_K: −32..31).
struct IntegerGrid {
  int lo, hi;
  float sweep_step = kSweepStep;
  int code(float v) const { return nearest_level(v, lo, hi) - lo; }
  float value(int code) const { return float(code + lo); }
  float negative_end() const { return float(-lo); }
  float positive_end() const { return float(hi); }
};

// IQ4's non-linear codebook (kIq4Values, −127..113), stored as the index.
constexpr std::array<float, 15> kIq4Midpoints = [] {
  std::array<float, 15> m{};
  for (size_t i = 0; i < m.size(); ++i) m[i] = 0.5f * float(kIq4Values[i] + kIq4Values[i + 1]);
  return m;
}();

struct Iq4Grid {
  float sweep_step = 1.0f;  // the codebook's levels are 10..24 apart
  int code(float v) const {
    int c = 0;
    for (float m : kIq4Midpoints) c += v > m ? 1 : 0;  // branch-free: 15 compares
    return c;
  }
  float value(int code) const { return float(kIq4Values[code]); }
  float negative_end() const { return float(-kIq4Values[0]); }
  float positive_end() const { return float(kIq4Values[15]); }
};

// x ≈ scale · level for the grid's levels (Q3_K, Q6_K, IQ4 sub-blocks). scale may be negative,
// so the longer negative end can serve the value of largest magnitude whatever its sign.
template <class Grid>
float fit_symmetric(const float* x, const float* w, int n, const Grid& grid) {
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
      const float q = grid.value(grid.code(x[i] * inv_scale));
      t.qq += w[i] * q * q, t.qx += w[i] * q * x[i];
    }
    if (t.qq <= 0) return;
    const double s = t.qx / double(t.qq);
    const double err = weighted_error(t, sxx, s, 0);
    if (err < best_err) best_err = err, best_s = s;
  };
  for (int k = -kSweepSteps; k <= kSweepSteps; ++k) {
    try_levels(-(grid.negative_end() + grid.sweep_step * float(k)) / max);  // largest value on the long side
    try_levels((grid.positive_end() + grid.sweep_step * float(k)) / max);
  }
  for (int pass = 0; pass < kRefinePasses && best_s != 0; ++pass) try_levels(float(1 / best_s));
  return float(best_s);
}

// ---- Affine super-blocks: Q2_K (16 x 16, 4-bit scales), Q4_K / Q5_K (8 x 32, 6-bit) ----------

struct AffineSuperBlock {
  uint16_t d, dmin;
  uint8_t scales[kMaxSubBlocks], mins[kMaxSubBlocks];  // 0..scale_max, per sub-block
  uint8_t levels[kSuperBlock];                         // 0..nmax
};

void quantize_affine_super_block(const float* x, int sub, int nmax, int scale_max, AffineSuperBlock* out) {
  const int n_sub = int(kSuperBlock) / sub;
  Normalized xn;
  normalize(x, kSuperBlock, &xn);
  AffineFit fits[kMaxSubBlocks];
  float max_scale = 0, max_min = 0;
  for (int j = 0; j < n_sub; ++j) {
    float w[32];
    importance(xn.v + j * sub, sub, w);
    fits[j] = fit_affine(xn.v + j * sub, w, sub, nmax);
    max_scale = std::max(max_scale, fits[j].scale);
    max_min = std::max(max_min, fits[j].min);
  }
  // Super-scales in the input's units (double: the product may exceed float before clamping).
  out->d = to_half(float(double(max_scale) / scale_max * xn.scale));
  out->dmin = to_half(float(double(max_min) / scale_max * xn.scale));
  const float d = from_half(out->d), dmin = from_half(out->dmin);
  // The sub-block scales in units of the stored super-scales, back in normalized units.
  const double unit_d = xn.scale > 0 ? double(d) / xn.scale : 0, unit_m = xn.scale > 0 ? double(dmin) / xn.scale : 0;
  for (int j = 0; j < n_sub; ++j) {
    out->scales[j] = uint8_t(unit_d > 0 ? nearest_level(float(fits[j].scale / unit_d), 0, scale_max) : 0);
    out->mins[j] = uint8_t(unit_m > 0 ? nearest_level(float(fits[j].min / unit_m), 0, scale_max) : 0);
  }
  // Re-round every value against the scale and min the decoder will use.
  for (int j = 0; j < n_sub; ++j) {
    const float step = d * float(out->scales[j]), offset = dmin * float(out->mins[j]);
    for (int i = j * sub; i < (j + 1) * sub; ++i)
      out->levels[i] = uint8_t(step > 0 ? nearest_level((nan_as_zero(x[i]) + offset) / step, 0, nmax) : 0);
  }
}

// Packs sub-block scales sc[8] and mins m[8] (6 bits each) as k_scale_min reads them.
void pack_scale_min(const uint8_t* sc, const uint8_t* m, uint8_t* out) {
  for (int j = 0; j < 4; ++j) {
    out[j] = uint8_t((sc[j] & 63) | ((sc[j + 4] >> 4) << 6));
    out[j + 4] = uint8_t((m[j] & 63) | ((m[j + 4] >> 4) << 6));
    out[j + 8] = uint8_t((sc[j + 4] & 0xF) | ((m[j + 4] & 0xF) << 4));
  }
}

// Q2_K: value i (of 256) lives in bits 2s..2s+1 of qs[32 h + k] (h = i / 128, s = i % 128 / 32,
// k = i % 32); sub-block j's scale in the low nibble of scales[j], its min in the high one.
void pack_q2_k(const AffineSuperBlock& s, BlockQ2_K* b) {
  b->d = s.d, b->dmin = s.dmin;
  for (int j = 0; j < 16; ++j) b->scales[j] = uint8_t(s.scales[j] | (s.mins[j] << 4));
  std::memset(b->qs, 0, sizeof(b->qs));
  for (int i = 0; i < kSuperBlock; ++i)
    b->qs[32 * (i / 128) + i % 32] = uint8_t(b->qs[32 * (i / 128) + i % 32] | (s.levels[i] << (2 * (i % 128 / 32))));
}

// Q4_K: 64 values per group of 32 bytes, the first 32 in the low nibbles, the next 32 in the high.
void pack_q4_k(const AffineSuperBlock& s, BlockQ4_K* b) {
  b->d = s.d, b->dmin = s.dmin;
  pack_scale_min(s.scales, s.mins, b->scales);
  for (int g = 0; g < 4; ++g)
    for (int l = 0; l < 32; ++l) b->qs[32 * g + l] = uint8_t(s.levels[64 * g + l] | (s.levels[64 * g + 32 + l] << 4));
}

// Q5_K: as Q4_K's nibbles, plus the fifth bits: bit 2g (first 32) and 2g + 1 (next 32) of qh[l].
void pack_q5_k(const AffineSuperBlock& s, BlockQ5_K* b) {
  b->d = s.d, b->dmin = s.dmin;
  pack_scale_min(s.scales, s.mins, b->scales);
  std::memset(b->qh, 0, sizeof(b->qh));
  for (int g = 0; g < 4; ++g) {
    for (int l = 0; l < 32; ++l) {
      const uint8_t lo = s.levels[64 * g + l], hi = s.levels[64 * g + 32 + l];
      b->qs[32 * g + l] = uint8_t((lo & 0xF) | ((hi & 0xF) << 4));
      b->qh[l] = uint8_t(b->qh[l] | ((lo >> 4) << (2 * g)) | ((hi >> 4) << (2 * g + 1)));
    }
  }
}

// One row of an affine K-quant: each super-block's search, then the type's packing.
template <class Block, int kSub, int kMaxLevel, int kScaleMax, void (*Pack)(const AffineSuperBlock&, Block*)>
void quantize_affine_row(const float* x, void* y, int64_t n) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    AffineSuperBlock s;
    quantize_affine_super_block(x + i * kSuperBlock, kSub, kMaxLevel, kScaleMax, &s);
    Block b;
    Pack(s, &b);
    store(y, i, b);
  }
}

// ---- Symmetric super-blocks: Q3_K (16 x 16), Q6_K (16 x 16), IQ4_XS (8 x 32) -----------------

struct SymmetricSuperBlock {
  uint16_t d;
  int scales[kMaxSubBlocks];    // scale_lo..scale_hi, per sub-block
  uint8_t codes[kSuperBlock];   // the grid's codes
};

// The super-scale d (normalized units) for sub-block scales s[n]: every s[j] / d must lie in
// [scale_lo, scale_hi]. Of the two signs of d, the one that allows the smaller |d| (finer
// sub-block scales): usually the widest scale maps to scale_lo, the long side of the range.
double super_scale(const float* s, int n, int scale_lo, int scale_hi) {
  float pos = 0, neg = 0;  // the largest positive scale, the largest magnitude of a negative one
  for (int j = 0; j < n; ++j) {
    if (s[j] > 0) pos = std::max(pos, s[j]);
    else neg = std::max(neg, -s[j]);
  }
  const double positive = std::max(double(neg) / -scale_lo, double(pos) / scale_hi);  // d > 0
  const double negative = std::max(double(pos) / -scale_lo, double(neg) / scale_hi);  // |d|, d < 0
  return positive <= negative ? positive : -negative;
}

// Each sub-block's signed scale under one FP16 super-scale d, stored as integers in
// [scale_lo, scale_hi].
template <class Grid>
void quantize_symmetric_super_block(const float* x, int sub, const Grid& grid, int scale_lo, int scale_hi,
                                    SymmetricSuperBlock* out) {
  const int n_sub = int(kSuperBlock) / sub;
  Normalized xn;
  normalize(x, kSuperBlock, &xn);
  float scales[kMaxSubBlocks];
  for (int j = 0; j < n_sub; ++j) {
    float w[32];
    importance(xn.v + j * sub, sub, w);
    scales[j] = fit_symmetric(xn.v + j * sub, w, sub, grid);
  }
  out->d = to_half(float(super_scale(scales, n_sub, scale_lo, scale_hi) * xn.scale));
  const float d = from_half(out->d);
  const double unit = xn.scale > 0 ? double(d) / xn.scale : 0;
  for (int j = 0; j < n_sub; ++j) {
    out->scales[j] = unit != 0 ? nearest_level(float(scales[j] / unit), scale_lo, scale_hi) : 0;
    const float step = d * float(out->scales[j]);
    for (int l = j * sub; l < (j + 1) * sub; ++l)
      out->codes[l] = uint8_t(grid.code(step != 0 ? nan_as_zero(x[l]) / step : 0.0f));
  }
}

// Q3_K: 6-bit scales stored + 32 (low nibbles in bytes 0..7, high bit pairs in 8..11); value i's
// code (level + 4) has its low 2 bits where Q2_K keeps them and its third bit in hmask[i % 32],
// bit 4 h + s.
void pack_q3_k(const SymmetricSuperBlock& s, BlockQ3_K* b) {
  b->d = s.d;
  uint8_t sc[16];
  for (int j = 0; j < 16; ++j) sc[j] = uint8_t(s.scales[j] + 32);
  for (int j = 0; j < 4; ++j) {
    b->scales[j] = uint8_t((sc[j] & 0xF) | ((sc[j + 8] & 0xF) << 4));
    b->scales[j + 4] = uint8_t((sc[j + 4] & 0xF) | ((sc[j + 12] & 0xF) << 4));
    b->scales[j + 8] = uint8_t((sc[j] >> 4) | ((sc[j + 4] >> 4) << 2) | ((sc[j + 8] >> 4) << 4) | ((sc[j + 12] >> 4) << 6));
  }
  std::memset(b->qs, 0, sizeof(b->qs));
  std::memset(b->hmask, 0, sizeof(b->hmask));
  for (int i = 0; i < kSuperBlock; ++i) {
    const int h = i / 128, shift = i % 128 / 32, k = i % 32;
    b->qs[32 * h + k] = uint8_t(b->qs[32 * h + k] | ((s.codes[i] & 3) << (2 * shift)));
    b->hmask[k] = uint8_t(b->hmask[k] | ((s.codes[i] >> 2) << (4 * h + shift)));
  }
}

// Q6_K: two halves of 128; four runs of 32 share ql / qh bytes.
void pack_q6_k(const SymmetricSuperBlock& s, BlockQ6_K* b) {
  b->d = s.d;
  for (int j = 0; j < 16; ++j) b->scales[j] = int8_t(s.scales[j]);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* q = s.codes + 128 * h;
    for (int l = 0; l < 32; ++l) {
      b->ql[64 * h + l] = uint8_t((q[l] & 0xF) | ((q[l + 64] & 0xF) << 4));
      b->ql[64 * h + l + 32] = uint8_t((q[l + 32] & 0xF) | ((q[l + 96] & 0xF) << 4));
      b->qh[32 * h + l] =
          uint8_t((q[l] >> 4) | ((q[l + 32] >> 4) << 2) | ((q[l + 64] >> 4) << 4) | ((q[l + 96] >> 4) << 6));
    }
  }
}

// IQ4_XS: 6-bit scales stored + 32 (low nibbles in scales_l, high bit pairs in scales_h); each
// run of 32 codes in 16 bytes, the first 16 in the low nibbles.
void pack_iq4_xs(const SymmetricSuperBlock& s, BlockIQ4_XS* b) {
  b->d = s.d;
  b->scales_h = 0;
  std::memset(b->scales_l, 0, sizeof(b->scales_l));
  for (int j = 0; j < 8; ++j) {
    const int ls = s.scales[j] + 32;
    b->scales_l[j / 2] = uint8_t(b->scales_l[j / 2] | ((ls & 0xF) << (4 * (j % 2))));
    b->scales_h = uint16_t(b->scales_h | ((ls >> 4) << (2 * j)));
    pack_nibbles(s.codes + 32 * j, b->qs + 16 * j);
  }
}

template <class Block, class Grid, int kSub, int kScaleLo, int kScaleHi, void (*Pack)(const SymmetricSuperBlock&, Block*)>
void quantize_symmetric_row(const float* x, void* y, int64_t n, const Grid& grid) {
  assert(n % kSuperBlock == 0);
  for (int64_t i = 0; i < n / kSuperBlock; ++i) {
    SymmetricSuperBlock s;
    quantize_symmetric_super_block(x + i * kSuperBlock, kSub, grid, kScaleLo, kScaleHi, &s);
    Block b;
    Pack(s, &b);
    store(y, i, b);
  }
}

// ---- Min/max blocks: Q4_1 / Q5_1 (GGML's reference rule) ------------------------------------

// d = (max − min) / nmax, m = min, q = min(nmax, trunc((x − min) / d + 0.5)) over the block's
// finite values (bit for bit GGML's on finite input).
struct MinMaxBlock {
  uint16_t d, m;
  int q[32];
};

void quantize_min_max_block(const float* xb, int nmax, MinMaxBlock* out) {
  float lo = INFINITY, hi = -INFINITY;
  for (int j = 0; j < 32; ++j)
    if (std::isfinite(xb[j])) lo = std::min(lo, xb[j]), hi = std::max(hi, xb[j]);
  if (lo > hi) lo = hi = 0;  // no finite value
  const float d = (hi - lo) / float(nmax), id = d != 0 ? 1 / d : 0;
  out->d = to_half(d);
  out->m = to_half(lo);
  for (int j = 0; j < 32; ++j) out->q[j] = round_half_up_clamped((nan_as_zero(xb[j]) - lo) * id, nmax);
}

// As pack_nibbles, plus each value's fifth bit in the 32-bit qh (bit j for value j).
void pack_five_bits(const int* q, uint8_t* qs, uint8_t* qh_bytes) {
  pack_nibbles(q, qs);
  uint32_t qh = 0;
  for (int j = 0; j < 32; ++j) qh |= uint32_t((q[j] >> 4) & 1) << j;
  std::memcpy(qh_bytes, &qh, 4);
}

void pack_q4_1(const MinMaxBlock& m, BlockQ4_1* b) {
  b->d = m.d, b->m = m.m;
  pack_nibbles(m.q, b->qs);
}

void pack_q5_1(const MinMaxBlock& m, BlockQ5_1* b) {
  b->d = m.d, b->m = m.m;
  pack_five_bits(m.q, b->qs, b->qh);
}

template <class Block, int kMaxLevel, void (*Pack)(const MinMaxBlock&, Block*)>
void quantize_min_max_row(const float* x, void* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i) {
    MinMaxBlock m;
    quantize_min_max_block(x + i * 32, kMaxLevel, &m);
    Block b;
    Pack(m, &b);
    store(y, i, b);
  }
}

}  // namespace

// ---- The row quantizers (kquants.h) ---------------------------------------------------------

void quantize_row_q2_k(const float* x, void* y, int64_t n) {
  quantize_affine_row<BlockQ2_K, 16, 3, 15, pack_q2_k>(x, y, n);
}

void quantize_row_q4_k(const float* x, void* y, int64_t n) {
  quantize_affine_row<BlockQ4_K, 32, 15, 63, pack_q4_k>(x, y, n);
}

void quantize_row_q5_k(const float* x, void* y, int64_t n) {
  quantize_affine_row<BlockQ5_K, 32, 31, 63, pack_q5_k>(x, y, n);
}

void quantize_row_q3_k(const float* x, void* y, int64_t n) {
  quantize_symmetric_row<BlockQ3_K, IntegerGrid, 16, -32, 31, pack_q3_k>(x, y, n, IntegerGrid{-4, 3});
}

// Q6_K's sub-block scales are int8.
void quantize_row_q6_k(const float* x, void* y, int64_t n) {
  quantize_symmetric_row<BlockQ6_K, IntegerGrid, 16, -128, 127, pack_q6_k>(x, y, n, IntegerGrid{-32, 31});
}

void quantize_row_iq4_xs(const float* x, void* y, int64_t n) {
  quantize_symmetric_row<BlockIQ4_XS, Iq4Grid, 32, -32, 31, pack_iq4_xs>(x, y, n, Iq4Grid{});
}

// IQ4_NL: one FP16 scale per 32 values, fitted as an IQ4_XS sub-block's (without the 6-bit
// sub-scale step).
void quantize_row_iq4_nl(const float* x, void* y, int64_t n) {
  assert(n % 32 == 0);
  const Iq4Grid grid;
  for (int64_t i = 0; i < n / 32; ++i) {
    const float* xb = x + i * 32;
    Normalized xn;
    normalize(xb, 32, &xn);
    float w[32];
    importance(xn.v, 32, w);
    BlockIQ4_NL b;
    b.d = to_half(float(double(fit_symmetric(xn.v, w, 32, grid)) * xn.scale));
    const float d = from_half(b.d);
    uint8_t codes[32];
    for (int j = 0; j < 32; ++j) codes[j] = uint8_t(grid.code(d != 0 ? nan_as_zero(xb[j]) / d : 0.0f));
    pack_nibbles(codes, b.qs);
    store(y, i, b);
  }
}

void quantize_row_q4_1(const float* x, void* y, int64_t n) { quantize_min_max_row<BlockQ4_1, 15, pack_q4_1>(x, y, n); }

void quantize_row_q5_1(const float* x, void* y, int64_t n) { quantize_min_max_row<BlockQ5_1, 31, pack_q5_1>(x, y, n); }

// Q5_0 (GGML's reference rule, bit for bit on finite input): d = (finite value of largest
// magnitude) / −16, q = min(31, trunc(x / d + 16.5)).
void quantize_row_q5_0(const float* x, void* y, int64_t n) {
  assert(n % 32 == 0);
  for (int64_t i = 0; i < n / 32; ++i) {
    const float* xb = x + i * 32;
    float amax = 0, max = 0;
    for (int j = 0; j < 32; ++j)
      if (std::isfinite(xb[j]) && amax < std::fabs(xb[j])) amax = std::fabs(xb[j]), max = xb[j];
    BlockQ5_0 b;
    b.d = to_half(max / -16);
    const float d = max / -16, id = d != 0 ? 1 / d : 0;
    int q[32];
    for (int j = 0; j < 32; ++j) q[j] = round_half_up_clamped(nan_as_zero(xb[j]) * id + 16, 31);
    pack_five_bits(q, b.qs, b.qh);
    store(y, i, b);
  }
}

}  // namespace magnetar::quant
