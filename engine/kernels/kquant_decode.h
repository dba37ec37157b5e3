// The K-quant decode kernels (asm/kquant_decode_avx2.asm, asm/kquant_decode_avx512vnni.asm):
// row-major Q4_K / Q5_K / Q6_K / IQ4_XS / Q2_K / Q3_K matvecs that pass over four rows at a time,
// sharing each block's activation-side work and reducing the four rows' scales, mins and sums
// together.
// Contract and twins as the row-at-a-time kernels of kquants.h (matvec_q4_k_ref, matvec_q5_k_ref,
// matvec_q6_k_ref, matvec_iq4_xs_ref):
// y[r] = row r of w (GGUF blocks, any alignment) . x (ActBlockK), r < rows; cols % 256 == 0,
// cols > 0, rows >= 0; bit for bit the twins' outputs. The type records' AVX2 and AVX-512 VNNI
// entries (type_traits.cpp) decode with them, on activations from quantize_act_k_avx2. The
// _avx512vnni kernels need AVX512F/BW/VL and VNNI (the avx512vnni table's CPUs).
#pragma once
#include <cstdint>

#include "kernels/kquants.h"

namespace magnetar::quant {
// quantize_act_k_ref's blocks, bit for bit, in AVX2 (kquant_decode.cpp); n % 256 == 0. Only where
// the CPU runs the asm kernels (kernels::asm_available()): the AVX2 entries' quantizer.
void quantize_act_k_avx2(const float* x, ActBlockK* out, int64_t n);
}  // namespace magnetar::quant

extern "C" {
void magnetar_matvec_q4_k_r4_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                  int64_t cols);
void magnetar_matvec_q5_k_r4_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                  int64_t cols);
void magnetar_matvec_q6_k_r4_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                  int64_t cols);
void magnetar_matvec_iq4_xs_r4_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                    int64_t cols);
void magnetar_matvec_q4_k_r4_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                        int64_t cols);
void magnetar_matvec_q5_k_r4_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                        int64_t cols);
void magnetar_matvec_q6_k_r4_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                        int64_t cols);
void magnetar_matvec_iq4_xs_r4_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y,
                                          int64_t rows, int64_t cols);
// Q2_K / Q3_K (twins matvec_q2_k_ref, matvec_q3_k_ref, kquant_low.h)
void magnetar_matvec_q2_k_r4_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                  int64_t cols);
void magnetar_matvec_q3_k_r4_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                  int64_t cols);
void magnetar_matvec_q2_k_r4_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                        int64_t cols);
void magnetar_matvec_q3_k_r4_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                        int64_t cols);
}
