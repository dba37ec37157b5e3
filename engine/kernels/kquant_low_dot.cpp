// Reference twins of the low-bit integer kernels (asm/kquant_low_avx2.asm): Q2_K and Q3_K against
// Q8_K-style activations, IQ4_NL, Q4_1, Q5_0 and Q5_1 against Q8_0-style ones. The per-type lane
// sums are defined in kquant_low.h; the arithmetic around them is kquant_lanes.h's.
#include "kernels/kquant_low.h"

#include "kernels/kquant_lanes.h"

namespace magnetar::quant {
namespace {

// Q2_K / Q3_K: value l (0..31) of run r (0..7) is the 2-bit field at bit 2 (r % 4) of
// qs[32 (r / 4) + l]; its sub-block (16 values, one scale) is 2 r + l / 16.
int two_bits(const uint8_t* qs, int r, int l) { return (qs[32 * (r / 4) + l] >> (2 * (r % 4))) & 3; }

void q2_k_block_sums(const BlockQ2_K& wb, const ActBlockK& xb, int32_t* sums, float* mins_acc) {
  int32_t mins = 0;
  for (int s = 0; s < 16; ++s) mins += int32_t(wb.scales[s] >> 4) * xb.bsums[s];
  *mins_acc = fused_mul_add(scaled_by_act(wb.dmin, xb), float(mins), *mins_acc);
  for (int r = 0; r < 8; ++r)
    for (int l = 0; l < 32; ++l)
      sums[l / 4] += int32_t(wb.scales[2 * r + l / 16] & 0xF) * two_bits(wb.qs, r, l) * xb.qs[32 * r + l];
}

void q3_k_block_sums(const BlockQ3_K& wb, const ActBlockK& xb, int32_t* sums, float*) {
  int8_t packed[16];
  q3_k_scales(wb.scales, packed);
  int32_t sc[16];
  for (int s = 0; s < 16; ++s) sc[s] = packed[s] - 32;
  for (int i = 0; i < 8; ++i) sums[i] = -4 * (sc[2 * i] * xb.bsums[2 * i] + sc[2 * i + 1] * xb.bsums[2 * i + 1]);
  for (int r = 0; r < 8; ++r)
    for (int l = 0; l < 32; ++l) {
      const int q = two_bits(wb.qs, r, l) | ((wb.hmask[l] >> r) & 1) << 2;  // value + 4
      sums[l / 4] += sc[2 * r + l / 16] * q * xb.qs[32 * r + l];
    }
}

// The 32-value types: element j (0..31) is the low nibble of qs[j] (j < 16) or the high nibble
// of qs[j - 16]; Q5_0 / Q5_1 add bit j of the little-endian qh word as 16.
int nibble(const uint8_t* qs, int j) { return j < 16 ? qs[j] & 0xF : qs[j - 16] >> 4; }
int five_bits(const uint8_t* qs, const uint8_t* qh, int j) { return nibble(qs, j) | ((qh[j / 8] >> (j % 8)) & 1) << 4; }

// Q4_1 / Q5_1: y gains m_w * d_x * sum(x) per block, carried negated in the mins term.
template <class Block>
void add_min_term(const Block& wb, const ActBlock& xb, float* mins_acc) {
  *mins_acc = fused_mul_add(-scaled_by_act(wb.m, xb), float(xb.sum), *mins_acc);
}

void iq4_nl_block_sums(const BlockIQ4_NL& wb, const ActBlock& xb, int32_t* sums, float*) {
  for (int j = 0; j < 32; ++j) sums[j / 4] += kIq4Values[nibble(wb.qs, j)] * xb.qs[j];
}

void q4_1_block_sums(const BlockQ4_1& wb, const ActBlock& xb, int32_t* sums, float* mins_acc) {
  for (int j = 0; j < 32; ++j) sums[j / 4] += nibble(wb.qs, j) * xb.qs[j];
  add_min_term(wb, xb, mins_acc);
}

void q5_0_block_sums(const BlockQ5_0& wb, const ActBlock& xb, int32_t* sums, float*) {
  for (int i = 0; i < 8; ++i) sums[i] = -2 * xb.sum;
  for (int j = 0; j < 32; ++j) sums[j / 4] += five_bits(wb.qs, wb.qh, j) * xb.qs[j];
}

void q5_1_block_sums(const BlockQ5_1& wb, const ActBlock& xb, int32_t* sums, float* mins_acc) {
  for (int j = 0; j < 32; ++j) sums[j / 4] += five_bits(wb.qs, wb.qh, j) * xb.qs[j];
  add_min_term(wb, xb, mins_acc);
}

}  // namespace

void matvec_q2_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols) {
  matvec_block_ref<BlockQ2_K>(w, x, y, rows, cols, q2_k_block_sums);
}

void matvec_q3_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols) {
  matvec_block_ref<BlockQ3_K>(w, x, y, rows, cols, q3_k_block_sums);
}

void matvec_iq4_nl_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  matvec_lanes_ref<BlockIQ4_NL>(w, x, y, rows, cols, iq4_nl_block_sums);
}

void matvec_q4_1_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  matvec_lanes_ref<BlockQ4_1>(w, x, y, rows, cols, q4_1_block_sums);
}

void matvec_q5_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  matvec_lanes_ref<BlockQ5_0>(w, x, y, rows, cols, q5_0_block_sums);
}

void matvec_q5_1_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols) {
  matvec_lanes_ref<BlockQ5_1>(w, x, y, rows, cols, q5_1_block_sums);
}

}  // namespace magnetar::quant
