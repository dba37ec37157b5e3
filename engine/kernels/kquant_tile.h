// K-quant prefill on a transposed tile (asm/kquant_tile_avx2.asm: 8 rows,
// asm/kquant_tile_avx512vnni.asm: 16 rows; skeleton asm/kquant_tile.inc): Q4_K, Q5_K, Q6_K, Q2_K
// and Q3_K (and, in AVX-512 VNNI, IQ4_XS) rows as GGUF stores them, against many Q8_K-quantized
// tokens. The kernel transposes a group of rows x one super-block into a stack tile (the rows in a
// register's dword lanes) and passes every token of the call over it, so each 32 products cost
// about one multiply-add instruction instead of the 1 x 8 tile's two (asm/kquant_matmul_avx2.asm),
// and each 64 one `vpdpbusd` in the 16-row tile.
#pragma once
#include <cstdint>

#include "kernels/kquants.h"

namespace magnetar::quant {

// From this many tokens the type records' AVX2 prefill runs the tile kernels (kernels/type_traits.cpp);
// fewer take the matvec per token. Measured with magnetar_bench_kquant --tile (asm/README.md).
inline constexpr int64_t kKTransMinTokens = 4;

}  // namespace magnetar::quant

// MatmulKFn's contract (kquants.h): y[t * y_stride + r] = row r of w . token t of x for r < rows,
// t < n_tokens; cols % 256 == 0, cols > 0; w and x at any alignment; every output bit for bit the
// per-token matvec twin's (matvec_q4_k_ref, matvec_q5_k_ref, matvec_q6_k_ref; matvec_q2_k_ref,
// matvec_q3_k_ref in kquant_low.h: the block contract).
extern "C" {
void magnetar_matmul_q4_k_tile_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                    int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q5_k_tile_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                    int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q6_k_tile_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                    int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q2_k_tile_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                    int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q3_k_tile_avx2(const void* w, const magnetar::quant::ActBlockK* x, float* y, int64_t rows,
                                    int64_t cols, int64_t n_tokens, int64_t y_stride);
// 16-row tiles passed over in ZMM registers, a k-step of all 16 rows per instruction (AVX512F/BW/VL + VNNI).
void magnetar_matmul_q4_k_tile_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y,
                                          int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q5_k_tile_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y,
                                          int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q6_k_tile_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y,
                                          int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
// IQ4_XS has a transposed tile only here (its twin: matvec_iq4_xs_ref).
void magnetar_matmul_iq4_xs_tile_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y,
                                            int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q2_k_tile_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y,
                                          int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
void magnetar_matmul_q3_k_tile_avx512vnni(const void* w, const magnetar::quant::ActBlockK* x, float* y,
                                          int64_t rows, int64_t cols, int64_t n_tokens, int64_t y_stride);
}
