// Scalar FP16/BF16 <-> FP32 conversions used by the converter (IEEE binary16 and bfloat16,
// round to nearest even, NaN kept NaN, overflow to infinity). Converting offline needs exact
// rounding, not speed.
#pragma once
#include <cstdint>

namespace magnetar::convert {

uint16_t f32_to_f16(float f);
float f16_to_f32(uint16_t h);
float bf16_to_f32(uint16_t h);

}  // namespace magnetar::convert
