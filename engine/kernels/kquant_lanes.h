// The arithmetic every integer K-quant / low-bit twin shares (kquant_dot.cpp, kquant_low_dot.cpp),
// which their asm reproduces bit for bit (kquants.h, kquant_low.h). A type's block_sums gives a
// block's 8 exact int32 lane sums (and adds its mins term, by fma, to mins_acc); what happens to
// them is the activation layout's contract:
//   block contract (256-value types, ActBlockK): S_b = the 8 lanes' sum, one exact int32 per
//     (row, super-block); acc = fma(d_w * d_x, float(S_b), acc); y = acc - mins_acc.
//   lanes contract (32-value types, ActBlock): lane[i] = fma(d_w * d_x, float(sum_i), lane[i]);
//     y = the fixed tree sum of the 8 lanes - mins_acc (a per-32-value horizontal sum would cost
//     their decode more than the 8 float lanes do).
#pragma once
#include <cassert>
#include <cstdint>
#include <cstring>

#include "kernels/kernels.h"
#include "kernels/kquants.h"
#include "kernels/quant.h"

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

// How a row folds its blocks' int32 sums into floats (see the top of this file).
enum class Accumulation {
  kBlock,  // one int32 per (row, block), one fma per block
  kLanes,  // 8 int32 lanes per block, 8 float lanes per row and their tree sum
};

// y[r] = row r of w (blocks of Block, any alignment) . x (activation blocks of Act, one per weight
// block), r < rows. block_sums(w_block, x_block, sums, &mins_acc) adds the block's 8 exact int32
// lanes to sums (zeroed) and, where the type has one, its mins term to mins_acc.
template <Accumulation kPolicy, class Block, class Act, class BlockSums>
void matvec_accumulate_ref(const void* w, const Act* x, float* y, int64_t rows, int64_t cols, BlockSums block_sums) {
  constexpr int64_t kValues = sizeof(Act::qs);  // values per block: 256 (ActBlockK) or 32 (ActBlock)
  assert(cols % kValues == 0 && cols > 0 && "matvec: rows are whole blocks");
  const int64_t nb = cols / kValues;
  for (int64_t r = 0; r < rows; ++r) {
    float lane[8] = {}, mins_acc = 0.0f;  // the block contract uses lane[0] as acc
    for (int64_t b = 0; b < nb; ++b) {
      Block wb;
      std::memcpy(&wb, static_cast<const uint8_t*>(w) + (r * nb + b) * int64_t(sizeof wb), sizeof wb);
      int32_t sums[8] = {};
      block_sums(wb, x[b], sums, &mins_acc);
      const float d = scaled_by_act(wb.d, x[b]);
      if constexpr (kPolicy == Accumulation::kBlock) {
        int32_t block_sum = 0;  // exact: |S_b| < 2^28 for every type
        for (int i = 0; i < 8; ++i) block_sum += sums[i];
        lane[0] = fused_mul_add(d, float(block_sum), lane[0]);
      } else {
        for (int i = 0; i < 8; ++i) lane[i] = fused_mul_add(d, float(sums[i]), lane[i]);
      }
    }
    const float acc = kPolicy == Accumulation::kBlock ? lane[0] : sum_lanes(lane);
    y[r] = acc - mins_acc;
  }
}

// The 256-value K-quant families (ActBlockK activations): the block contract.
template <class Block, class BlockSums>
void matvec_block_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols, BlockSums block_sums) {
  matvec_accumulate_ref<Accumulation::kBlock, Block>(w, x, y, rows, cols, block_sums);
}

// The 32-value types (ActBlock activations): the lanes contract.
template <class Block, class BlockSums>
void matvec_lanes_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols, BlockSums block_sums) {
  matvec_accumulate_ref<Accumulation::kLanes, Block>(w, x, y, rows, cols, block_sums);
}

}  // namespace magnetar::quant
