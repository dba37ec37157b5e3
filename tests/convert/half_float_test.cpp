// The FP16/BF16 conversions the converter uses (kernels::*_scalar) against an independent oracle: exhaustive over every
// half value, ties to even at every midpoint of a sample, overflow, NaN and subnormals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "kernels/kernels.h"
#include "convert_test_util.h"

namespace magnetar::test {
namespace {

using kernels::bf16_to_f32_scalar;
using kernels::f16_to_f32_scalar;
using kernels::f32_to_f16_scalar;
constexpr auto bf16_to_f32 = bf16_to_f32_scalar;
constexpr auto f16_to_f32 = f16_to_f32_scalar;
constexpr auto f32_to_f16 = f32_to_f16_scalar;

float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

TEST(HalfFloat, EveryHalfWidensExactlyAndRoundTrips) {
  for (uint32_t h = 0; h < 0x10000; ++h) {
    const float f = f16_to_f32(static_cast<uint16_t>(h));
    const float oracle = half_to_float(static_cast<uint16_t>(h));
    if (std::isnan(oracle)) {
      EXPECT_TRUE(std::isnan(f)) << h;
      EXPECT_TRUE(std::isnan(f16_to_f32(f32_to_f16(f)))) << h;
      continue;
    }
    ASSERT_EQ(std::memcmp(&f, &oracle, 4), 0) << std::hex << h;
    ASSERT_EQ(f32_to_f16(f), h) << std::hex << h;
  }
}

// Between two neighbouring halves a < b: values below the midpoint go to a, above to b, and the
// midpoint itself to the one with an even mantissa.
TEST(HalfFloat, RoundsToNearestEven) {
  for (uint32_t h = 0; h < 0x7bff; h += 7) {  // positive finite halves with a finite successor
    const double a = half_to_float(static_cast<uint16_t>(h));
    const double b = half_to_float(static_cast<uint16_t>(h + 1));
    const double mid = (a + b) / 2;
    const float mid_f = static_cast<float>(mid);  // exact: halves have 11 significant bits
    const uint16_t even = (h % 2 == 0) ? static_cast<uint16_t>(h) : static_cast<uint16_t>(h + 1);
    EXPECT_EQ(f32_to_f16(mid_f), even) << std::hex << h;
    EXPECT_EQ(f32_to_f16(std::nextafter(mid_f, 0.0f)), h) << std::hex << h;
    EXPECT_EQ(f32_to_f16(std::nextafter(mid_f, 1e9f)), h + 1) << std::hex << h;
    EXPECT_EQ(f32_to_f16(-mid_f), even | 0x8000) << std::hex << h;
  }
}

TEST(HalfFloat, OverflowNanAndTinyValues) {
  EXPECT_EQ(f32_to_f16(65504.0f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65519.996f), 0x7bff);
  EXPECT_EQ(f32_to_f16(65520.0f), 0x7c00);  // the midpoint to "65536" rounds to infinity
  EXPECT_EQ(f32_to_f16(1e10f), 0x7c00);
  EXPECT_EQ(f32_to_f16(-1e10f), 0xfc00);
  EXPECT_EQ(f32_to_f16(std::numeric_limits<float>::infinity()), 0x7c00);
  const uint16_t nan = f32_to_f16(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan & 0x7c00, 0x7c00);
  EXPECT_NE(nan & 0x03ff, 0);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -24)), 0x0001);
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -25)), 0x0000);  // tie to even (zero)
  EXPECT_EQ(f32_to_f16(std::ldexp(3.0f, -25)), 0x0002);  // tie to even (2)
  EXPECT_EQ(f32_to_f16(std::ldexp(1.0f, -30)), 0x0000);
  EXPECT_EQ(f32_to_f16(-0.0f), 0x8000);
  EXPECT_EQ(f32_to_f16(from_bits(0x00000001)), 0x0000);  // float subnormal
}

TEST(BFloat16, WidensByShifting) {
  EXPECT_EQ(bf16_to_f32(0x3f80), 1.0f);
  EXPECT_EQ(bf16_to_f32(0xc000), -2.0f);
  EXPECT_EQ(bf16_to_f32(0x0000), 0.0f);
  EXPECT_TRUE(std::isinf(bf16_to_f32(0x7f80)));
  EXPECT_TRUE(std::isnan(bf16_to_f32(0x7fc0)));
  EXPECT_EQ(bf16_to_f32(0x3e2a), from_bits(0x3e2a0000));
}

}  // namespace
}  // namespace magnetar::test
