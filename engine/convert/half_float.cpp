// FP16/BF16 conversions: see half_float.h.
#include "convert/half_float.h"

#include <cstring>

namespace magnetar::convert {

namespace {
uint32_t bits_of(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
float float_of(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}
}  // namespace

uint16_t f32_to_f16(float f) {
  const uint32_t x = bits_of(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000);
  const uint32_t a = x & 0x7fffffffu;
  if (a > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00 | ((a >> 13) & 0x3ff));  // NaN
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);  // >= 65520: rounds to inf
  if (a >= 0x38800000u) {  // normal half (>= 2^-14): drop 13 bits, round to nearest even
    const uint32_t rounded = a + 0x0fffu + ((a >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  // Subnormal half (or zero): value = m × 2^-24, m = round_even(|f| × 2^24). Adding 0.5 (as the
  // float 2^-1 scaled) lets the FPU round: |f| + 0.5 has its units of 2^-24 in the low bits.
  const float scaled = float_of(a) + float_of(0x3f000000u);  // |f| + 0.5 when |f| < 2^-14
  return static_cast<uint16_t>(sign | (bits_of(scaled) - 0x3f000000u));
}

float f16_to_f32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exp = (h >> 10) & 0x1f, mant = h & 0x3ffu;
  if (exp == 0) {  // zero or subnormal: mant × 2^-24
    float v = static_cast<float>(mant) * float_of(0x33800000u);
    return float_of(bits_of(v) | sign);
  }
  if (exp == 31) return float_of(sign | 0x7f800000u | (mant << 13));
  return float_of(sign | ((exp + 112) << 23) | (mant << 13));
}

float bf16_to_f32(uint16_t h) { return float_of(static_cast<uint32_t>(h) << 16); }

}  // namespace magnetar::convert
