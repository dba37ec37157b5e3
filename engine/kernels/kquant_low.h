// Integer matrix–vector kernels of the low-bit GGUF types: Q2_K and Q3_K against activations
// quantized like GGML's Q8_K (ActBlockK, kquants.h), and the 32-value types IQ4_NL, Q4_1, Q5_0
// and Q5_1 against Q8_0-style activation blocks (ActBlock, quant.h). C++ twins (kquant_low_dot.cpp:
// the fallback and the test oracle) and their asm (asm/kquant_low_avx2.asm), bit for bit equal.
// Q2_K / Q3_K's twins are also the oracle of their four-row decode kernels (kquant_decode.h), which
// their type records run, and of their transposed prefill tiles (kquant_tile.h).
//
// Numerics (kquant_lanes.h), two contracts:
//   Q2_K, Q3_K: kquants.h's block contract: per super-block one exact int32 S_b,
//     acc = fma(d_w * d_x, float(S_b), acc); a mins term m accumulated by fma; y = acc - m.
//   IQ4_NL, Q4_1, Q5_0, Q5_1: the lanes contract: per block, 8 exact int32 lane sums (lane i:
//     values 4i..4i+3 of the block), each added as lane[i] = fma(d_w * d_x, float(sum_i), lane[i]);
//     a mins term m accumulated by fma; y = the lanes' tree sum - m.
// The integer sums per type (S_b = the sum over the runs r = 0..7 of 32 values of Q2_K / Q3_K):
//   Q2_K   S_b = sum of (sc_s & 15) * q * x;  m = fma(dmin * d_x, float(sum_s (sc_s >> 4) * bsums[s]), m)
//   Q3_K   q + 4 (0..7, the high bit set = +4) weighed by the signed scale (6-bit - 32); S_b
//          subtracts 4 * sum_s sc[s] * bsums[s]; no mins
//   IQ4_NL sum_i = sum of kIq4Values[q] * x; no mins
//   Q4_1   sum_i = sum of q * x;  m = fma(-(m_w * d_x), float(x.sum), m)   (so y = tree + m_w d_x sum)
//   Q5_0   sum_i = sum of q * x - 2 * x.sum   (q = 0..31: the eight lanes carry -16 * x.sum)
//   Q5_1   sum_i = sum of q * x;  m as Q4_1
// Why Q8_0-style activations for the 32-value types: their rows need only be whole 32-value
// blocks (a Q8_K block needs 256), one activation scale per weight block is what GGML's
// vec_dot_{iq4_nl,q5_0}_q8_0 / {q4_1,q5_1}_q8_1 use (so the results sit as close to llama.cpp's),
// and the quantizer is the Q8_0 path's (magnetar_quantize_act_avx2, bit-exact with its twin).
#pragma once
#include <cstdint>

#include "kernels/kquants.h"
#include "kernels/quant.h"

namespace magnetar::quant {

// y[r] = row r of w (blocks of the type, any alignment) . x, r < rows (>= 0); cols > 0 and a
// multiple of 256 (Q2_K, Q3_K: cols / 256 ActBlockK) or 32 (the others: cols / 32 ActBlocks).
void matvec_q2_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols);
void matvec_q3_k_ref(const void* w, const ActBlockK* x, float* y, int64_t rows, int64_t cols);
void matvec_iq4_nl_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols);
void matvec_q4_1_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols);
void matvec_q5_0_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols);
void matvec_q5_1_ref(const void* w, const ActBlock* x, float* y, int64_t rows, int64_t cols);

}  // namespace magnetar::quant

// asm/kquant_low_avx2.asm; same contracts as the twins above.
extern "C" {
void magnetar_matvec_q2_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols);
void magnetar_matvec_q3_k_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                               int64_t cols);
void magnetar_matvec_iq4_nl_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y, int64_t rows,
                                 int64_t cols);
void magnetar_matvec_q4_1_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y, int64_t rows,
                               int64_t cols);
void magnetar_matvec_q5_0_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y, int64_t rows,
                               int64_t cols);
void magnetar_matvec_q5_1_avx2(const void* w, const magnetar::quant::ActBlock* x, float* y, int64_t rows,
                               int64_t cols);
}
