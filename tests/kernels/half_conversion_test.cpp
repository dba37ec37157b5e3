// The scalar FP16/BF16 conversions: exhaustive over every half, with an independent check of
// round-to-nearest-even at every midpoint between neighbouring halves.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include <random>

#include "kernels/kernels.h"
#include "kernels/reference.h"

namespace magnetar::test {
namespace {

using kernels::f16_to_f32_scalar;
using kernels::f32_to_f16_scalar;

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

// Independent decoding straight from the IEEE definition.
double half_value(uint16_t h) {
  const int sign = (h >> 15) ? -1 : 1;
  const int e = (h >> 10) & 31;
  const int m = h & 1023;
  if (e == 0) return sign * std::ldexp(m, -24);
  if (e == 31) return m ? std::numeric_limits<double>::quiet_NaN() : sign * INFINITY;
  return sign * std::ldexp(1024 + m, e - 25);
}

TEST(HalfConversion, WideningMatchesDefinitionForEveryHalf) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const double want = half_value(h);
    const float got = f16_to_f32_scalar(h);
    if (std::isnan(want)) {
      ASSERT_TRUE(std::isnan(got)) << std::hex << i;
      ASSERT_EQ(bits(got) & 0x80000000u, (i & 0x8000u) << 16);
    } else {
      ASSERT_EQ(static_cast<double>(got), want) << std::hex << i;
      ASSERT_EQ(std::signbit(got), (i & 0x8000u) != 0) << std::hex << i;
    }
  }
}

TEST(HalfConversion, NarrowingRoundTripsEveryHalf) {
  for (uint32_t i = 0; i < 65536; ++i) {
    const uint16_t h = static_cast<uint16_t>(i);
    const uint16_t back = f32_to_f16_scalar(f16_to_f32_scalar(h));
    if ((i & 0x7c00u) == 0x7c00u && (i & 0x3ffu) != 0) {
      ASSERT_EQ(back & 0x7c00u, 0x7c00u);  // NaN stays NaN (made quiet)
      ASSERT_NE(back & 0x3ffu, 0u);
      ASSERT_EQ(back & 0x8000u, i & 0x8000u);
    } else {
      ASSERT_EQ(back, h) << std::hex << i;
    }
  }
}

TEST(HalfConversion, NarrowingRoundsToNearestEvenAtEveryMidpoint) {
  // For each pair of neighbouring finite halves (both signs), the midpoint is exact in FP32: it must
  // go to the even one, and the floats just beside it to the nearer one.
  for (uint32_t sign : {0u, 0x8000u}) {
    for (uint32_t m = 0; m < 0x7bffu; ++m) {
      const uint16_t lo = static_cast<uint16_t>(sign | m), hi = static_cast<uint16_t>(sign | (m + 1));
      const float a = f16_to_f32_scalar(lo), b = f16_to_f32_scalar(hi);
      const float mid = static_cast<float>((static_cast<double>(a) + b) / 2.0);
      ASSERT_EQ(static_cast<double>(mid), (static_cast<double>(a) + b) / 2.0);
      const uint16_t even = (m & 1u) ? hi : lo;
      ASSERT_EQ(f32_to_f16_scalar(mid), even) << std::hex << m;
      ASSERT_EQ(f32_to_f16_scalar(std::nextafter(mid, a)), lo) << std::hex << m;
      ASSERT_EQ(f32_to_f16_scalar(std::nextafter(mid, b)), hi) << std::hex << m;
    }
  }
}

TEST(HalfConversion, NarrowingEdges) {
  EXPECT_EQ(f32_to_f16_scalar(65504.f), 0x7bffu);
  EXPECT_EQ(f32_to_f16_scalar(65519.996f), 0x7bffu);
  EXPECT_EQ(f32_to_f16_scalar(65520.f), 0x7c00u);  // the tie above max goes to inf
  EXPECT_EQ(f32_to_f16_scalar(1e10f), 0x7c00u);
  EXPECT_EQ(f32_to_f16_scalar(-1e10f), 0xfc00u);
  EXPECT_EQ(f32_to_f16_scalar(INFINITY), 0x7c00u);
  EXPECT_EQ(f32_to_f16_scalar(-INFINITY), 0xfc00u);
  EXPECT_EQ(f32_to_f16_scalar(std::ldexp(1.f, -24)), 0x0001u);   // smallest subnormal
  EXPECT_EQ(f32_to_f16_scalar(std::ldexp(1.f, -25)), 0x0000u);   // tie to even zero
  EXPECT_EQ(f32_to_f16_scalar(std::ldexp(1.5f, -25)), 0x0001u);
  EXPECT_EQ(f32_to_f16_scalar(-std::ldexp(1.f, -26)), 0x8000u);  // signed zero survives
  EXPECT_EQ(f32_to_f16_scalar(std::ldexp(1.f, -14)), 0x0400u);   // smallest normal
  EXPECT_EQ(f32_to_f16_scalar(std::numeric_limits<float>::denorm_min()), 0x0000u);
  EXPECT_EQ(f32_to_f16_scalar(-0.f), 0x8000u);
  const uint16_t nan = f32_to_f16_scalar(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00u, 0x7c00u);
  EXPECT_NE(nan & 0x3ffu, 0u);
}

TEST(HalfConversion, Bfloat16IsTheTopHalfOfAFloat) {
  for (uint32_t i = 0; i < 65536; i += 7) {
    const float f = kernels::bf16_to_f32_scalar(static_cast<uint16_t>(i));
    EXPECT_EQ(bits(f), i << 16);
  }
  EXPECT_EQ(kernels::bf16_to_f32_scalar(0x3f80), 1.0f);
  EXPECT_EQ(kernels::bf16_to_f32_scalar(0xc040), -3.0f);
}

TEST(FmaTwin, RoundsOnceLikeTheInstruction) {
  // Rounding a*b first would lose the -u^2 below; the random cases check nearest-rounding
  // (with a deterministic seed, against the double value, exact to 2^-48 relative).
  const float one_ulp = std::ldexp(1.0f, -23);
  // (1 + u)(1 - u) = 1 - u^2: fused keeps the -u^2, so 1 - that - 1 rounds to -u^2 exactly.
  EXPECT_EQ(kernels::ref::fma_f32(1.0f + one_ulp, 1.0f - one_ulp, -1.0f), -one_ulp * one_ulp);
  std::mt19937 rng(5);
  std::uniform_real_distribution<float> d(-4.f, 4.f);
  for (int i = 0; i < 100000; ++i) {
    const float x = d(rng), y = d(rng), z = d(rng);
    const double e = static_cast<double>(x) * y + z;
    const float r = kernels::ref::fma_f32(x, y, z);
    // r must be the float nearest e: no float lies strictly closer.
    const double err = std::fabs(static_cast<double>(r) - e);
    EXPECT_LE(err, std::fabs(static_cast<double>(std::nextafter(r, INFINITY)) - e)) << x << " " << y << " " << z;
    EXPECT_LE(err, std::fabs(static_cast<double>(std::nextafter(r, -INFINITY)) - e)) << x << " " << y << " " << z;
  }
}

}  // namespace
}  // namespace magnetar::test
