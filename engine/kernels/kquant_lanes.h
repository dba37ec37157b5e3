// The arithmetic every integer K-quant / low-bit twin shares (kquant_dot.cpp, kquant_low_dot.cpp),
// which their asm reproduces bit for bit (kquants.h, kquant_low.h): per block, 8 exact int32 lane
// sums, each added as lane[i] = fma(d_w * d_x, float(sum_i), lane[i]); a mins term accumulated by
// fma beside them; y = the fixed tree sum of the lanes minus the mins term.
#pragma once
#include <cassert>
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"

namespace magnetar::quant {

// The fixed tree in which asm and twin add a row's 8 lanes (reduce.inc's HSUM_YMM0).
inline float sum_lanes(const float* l) {
  const float t0 = l[0] + l[4], t1 = l[1] + l[5], t2 = l[2] + l[6], t3 = l[3] + l[7];
  return (t0 + t2) + (t1 + t3);
}

// fma(a, b, c) rounded once, as vfmadd rounds it (kquant_dot.cpp: the instruction where the CPU
// has it, since mingw-w64's fmaf is not fused).
float fused_mul_add(float a, float b, float c);

// A block's FP16 scale times the activation block's scale (x.d, both activation layouts).
template <class Act>
float scaled_by_act(uint16_t half, const Act& x) {
  return kernels::f16_to_f32_scalar(half) * x.d;
}

// y[r] = row r of w (blocks of Block, any alignment) . x (activation blocks of Act, one per weight
// block), r < rows. block_sums(w_block, x_block, sums, &mins_acc) adds the block's 8 exact int32
// lanes to sums (zeroed) and, where the type has one, its mins term to mins_acc.
template <class Block, class Act, class BlockSums>
void matvec_lanes_ref(const void* w, const Act* x, float* y, int64_t rows, int64_t cols, BlockSums block_sums) {
  constexpr int64_t kValues = sizeof(Act::qs);  // values per block: 256 (ActBlockK) or 32 (ActBlock)
  assert(cols % kValues == 0 && cols > 0 && "matvec: rows are whole blocks");
  const int64_t nb = cols / kValues;
  for (int64_t r = 0; r < rows; ++r) {
    float lane[8] = {}, mins_acc = 0.0f;
    for (int64_t b = 0; b < nb; ++b) {
      Block wb;
      std::memcpy(&wb, static_cast<const uint8_t*>(w) + (r * nb + b) * int64_t(sizeof wb), sizeof wb);
      int32_t sums[8] = {};
      block_sums(wb, x[b], sums, &mins_acc);
      const float d = scaled_by_act(wb.d, x[b]);
      for (int i = 0; i < 8; ++i) lane[i] = fused_mul_add(d, float(sums[i]), lane[i]);
    }
    y[r] = sum_lanes(lane) - mins_acc;
  }
}

}  // namespace magnetar::quant
