// Q8_0 / Q4_0 quantizers against an independent scalar re-implementation of GGML's reference
// quantizers written from the specification (bit-exact), plus dequantizer round trips.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "kernels/quant.h"

namespace magnetar::quant {
namespace {

// ---- The specification, re-implemented independently of quant.cpp ----------------------------

double spec_half_value(uint16_t h) {  // finite, non-negative halves only
  const int exponent = (h >> 10) & 0x1f;
  const int mantissa = h & 0x3ff;
  return exponent == 0 ? std::ldexp(double(mantissa), -24)
                       : std::ldexp(double(1024 + mantissa), exponent - 25);
}

// IEEE binary16 of f, round to nearest even, found by search over all finite halves.
uint16_t spec_half(float f) {
  if (std::isnan(f)) return 0x7e00;
  const uint16_t sign = std::signbit(f) ? 0x8000 : 0;
  const double a = std::fabs(double(f));
  if (a >= 65520.0) return uint16_t(sign | 0x7c00);  // max half 65504 + half an ulp (16)
  uint16_t lo = 0, hi = 0x7bff;  // largest h with value(h) <= a
  while (lo < hi) {
    const uint16_t mid = uint16_t((lo + hi + 1) / 2);
    if (spec_half_value(mid) <= a) lo = mid; else hi = uint16_t(mid - 1);
  }
  const double below = spec_half_value(lo);
  const double above = lo == 0x7bff ? 65536.0 : spec_half_value(uint16_t(lo + 1));
  uint16_t h;
  if (a - below < above - a) h = lo;
  else if (a - below > above - a) h = uint16_t(lo + 1);
  else h = (lo & 1) == 0 ? lo : uint16_t(lo + 1);
  return uint16_t(sign | h);
}

std::vector<uint8_t> spec_q8_0(const std::vector<float>& x) {
  std::vector<uint8_t> out;
  for (size_t b = 0; b < x.size() / 32; ++b) {
    float amax = 0;
    for (int i = 0; i < 32; ++i) amax = std::max(amax, std::fabs(x[b * 32 + i]));
    const float d = amax / 127;
    const float id = d == 0 ? 0.0f : 1 / d;
    const uint16_t dh = spec_half(d);
    out.push_back(uint8_t(dh & 0xff));
    out.push_back(uint8_t(dh >> 8));
    for (int i = 0; i < 32; ++i) out.push_back(uint8_t(int8_t(std::lround(x[b * 32 + i] * id))));
  }
  return out;
}

std::vector<uint8_t> spec_q4_0(const std::vector<float>& x) {
  std::vector<uint8_t> out;
  for (size_t b = 0; b < x.size() / 32; ++b) {
    int arg = 0;  // index of the first element of largest magnitude
    for (int i = 1; i < 32; ++i)
      if (std::fabs(x[b * 32 + i]) > std::fabs(x[b * 32 + arg])) arg = i;
    const float d = x[b * 32 + arg] / -8;
    const float id = d == 0 ? 0.0f : 1 / d;
    const uint16_t dh = spec_half(d);
    out.push_back(uint8_t(dh & 0xff));
    out.push_back(uint8_t(dh >> 8));
    auto nibble = [&](int i) { return std::min(15, int(std::trunc(x[b * 32 + i] * id + 8.5f))); };
    for (int j = 0; j < 16; ++j) out.push_back(uint8_t(nibble(j) | nibble(j + 16) << 4));
  }
  return out;
}

// ---- Inputs ---------------------------------------------------------------------------------

std::vector<std::vector<float>> edge_case_blocks() {
  std::vector<std::vector<float>> cases;
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  auto random_block = [&](float scale) {
    std::vector<float> v(32);
    for (float& x : v) x = normal(rng) * scale;
    return v;
  };
  cases.push_back(std::vector<float>(32, 0.0f));  // all zeros
  {
    auto v = random_block(1.0f);
    v[5] = -9.0f;  // extreme at a negative value
    cases.push_back(v);
  }
  {
    auto v = random_block(1.0f);
    v[30] = 9.0f;  // extreme at a positive value, last position
    cases.push_back(v);
  }
  {
    auto v = random_block(1.0f);
    v[3] = 4.0f;  // equal magnitudes, opposite signs: the first one wins in Q4_0
    v[9] = -4.0f;
    cases.push_back(v);
  }
  cases.push_back(random_block(1e30f));   // scale overflows the half range
  cases.push_back(random_block(70000.0f / 127.0f));  // scale near the half maximum
  cases.push_back(random_block(1e-6f));   // scale a half subnormal
  cases.push_back(random_block(1e-30f));  // scale flushes to half zero, 1/d still finite
  {
    std::vector<float> v(32, std::numeric_limits<float>::denorm_min());  // d == 0 in float
    v[0] = -v[0];
    cases.push_back(v);
  }
  {
    std::vector<float> v(32);  // exact ties for rounding: multiples of d / 2
    for (int i = 0; i < 32; ++i) v[i] = float(i - 16) * 0.5f;
    v[31] = 127.0f / 16.0f;
    cases.push_back(v);
  }
  cases.push_back(std::vector<float>(32, -1.0f));  // constant block
  for (int i = 0; i < 200; ++i) cases.push_back(random_block(std::ldexp(1.0f, i % 40 - 20)));
  return cases;
}

TEST(QuantHalf, MatchesRoundToNearestEvenSearch) {
  std::mt19937 rng(1);
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 200000; ++i) {
    uint32_t u = bits(rng);
    if (i % 2 == 0) u = (u & 0x807fffffu) | (uint32_t(100 + u % 45) << 23);  // near half range
    float f;
    std::memcpy(&f, &u, sizeof f);
    if (std::isnan(f)) continue;
    ASSERT_EQ(kernels::f32_to_f16_scalar(f), spec_half(f)) << "f = " << f;
  }
  for (uint32_t h = 0; h < 0x10000; ++h) {  // every half round-trips through float
    const float f = kernels::f16_to_f32_scalar(uint16_t(h));
    if (std::isnan(f)) continue;
    ASSERT_EQ(kernels::f32_to_f16_scalar(f), h);
  }
}

TEST(QuantQ8_0, BitExactWithSpecification) {
  for (const auto& block : edge_case_blocks()) {
    std::vector<BlockQ8_0> got(1);
    quantize_row_q8_0(block.data(), got.data(), 32);
    const auto want = spec_q8_0(block);
    ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size())) << "first value " << block[0];
  }
}

TEST(QuantQ4_0, BitExactWithSpecification) {
  for (const auto& block : edge_case_blocks()) {
    std::vector<BlockQ4_0> got(1);
    quantize_row_q4_0(block.data(), got.data(), 32);
    const auto want = spec_q4_0(block);
    ASSERT_EQ(0, std::memcmp(got.data(), want.data(), want.size())) << "first value " << block[0];
  }
}

TEST(QuantQ8_0, KnownBlocks) {
  std::vector<float> zeros(32, 0.0f);
  BlockQ8_0 b;
  quantize_row_q8_0(zeros.data(), &b, 32);
  EXPECT_EQ(b.d, 0);
  for (int8_t q : b.qs) EXPECT_EQ(q, 0);

  std::vector<float> ramp(32);
  for (int i = 0; i < 32; ++i) ramp[i] = float(i - 16);  // amax 16 at a negative value
  quantize_row_q8_0(ramp.data(), &b, 32);
  EXPECT_EQ(b.d, kernels::f32_to_f16_scalar(16.0f / 127.0f));
  EXPECT_EQ(b.qs[0], -127);
  EXPECT_EQ(b.qs[16], 0);
  EXPECT_EQ(b.qs[24], 64);  // 8 * 127 / 16 = 63.5 rounds away from zero
}

TEST(QuantQ4_0, KnownBlocks) {
  std::vector<float> zeros(32, 0.0f);
  BlockQ4_0 b;
  quantize_row_q4_0(zeros.data(), &b, 32);
  EXPECT_EQ(b.d, 0x8000);  // 0 / -8 is -0, as in GGML
  for (uint8_t q : b.qs) EXPECT_EQ(q, 0x88);  // zero is stored as 8 in both nibbles

  std::vector<float> v(32, 0.0f);
  v[0] = -8.0f;  // max at a negative value: d = 1, so q = x + 8
  v[1] = 7.0f;
  v[16] = 3.0f;  // high nibble of qs[0]
  quantize_row_q4_0(v.data(), &b, 32);
  EXPECT_EQ(kernels::f16_to_f32_scalar(b.d), 1.0f);
  EXPECT_EQ(b.qs[0], uint8_t(0 | (11 << 4)));
  EXPECT_EQ(b.qs[1] & 0x0f, 15);

  v[0] = 8.0f;  // max at a positive value: d = -1, so -8 maps to 16, clamped to 15
  v[1] = -8.0f;
  quantize_row_q4_0(v.data(), &b, 32);
  EXPECT_EQ(kernels::f16_to_f32_scalar(b.d), -1.0f);
  EXPECT_EQ(b.qs[0] & 0x0f, 0);
  EXPECT_EQ(b.qs[1] & 0x0f, 15);
}

// Dequantized values are within half a step of the input (plus the half rounding of d).
TEST(QuantRoundTrip, ErrorWithinHalfStep) {
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const int64_t n = 32 * 64;
  std::vector<float> x(n), y(n);
  for (float& v : x) v = normal(rng);
  std::vector<BlockQ8_0> q8(n / 32);
  std::vector<BlockQ4_0> q4(n / 32);
  quantize_row_q8_0(x.data(), q8.data(), n);
  dequantize_row_q8_0(q8.data(), y.data(), n);
  constexpr double kHalfScaleRelError = 1.0 / 1024;  // d is rounded to 11 significant bits
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(kernels::f16_to_f32_scalar(q8[i / 32].d));
    ASSERT_LE(std::fabs(double(y[i]) - x[i]), d * 0.5 + 127 * d * kHalfScaleRelError) << i;
  }
  quantize_row_q4_0(x.data(), q4.data(), n);
  dequantize_row_q4_0(q4.data(), y.data(), n);
  for (int64_t i = 0; i < n; ++i) {
    const double d = std::fabs(kernels::f16_to_f32_scalar(q4[i / 32].d));
    // The clamp of +8 d to 7 d costs up to a whole step at the block's opposite extreme.
    ASSERT_LE(std::fabs(double(y[i]) - x[i]), d * 1.0 + 8 * d * kHalfScaleRelError) << i;
  }
}

}  // namespace
}  // namespace magnetar::quant
