// Declarations of the NASM kernels (asm/*.asm). Each symbol's contract (multiples, alignment,
// C++ twin) is in asm/README.md; the wrappers in asm_table.cpp meet it and handle the tails.
// Only engine/kernels and the kernel tests include this.
#pragma once
#include <cstdint>

extern "C" {

// matvec_avx2.asm
void magnetar_matvec_f16_avx2(const uint16_t* w, int64_t ldw, const float* x, float* y,
                              int64_t rows, int64_t cols);  // cols % 16 == 0, cols > 0
void magnetar_matvec_f16_x8_avx2(const uint16_t* w, int64_t ldw, const float* x, float* y,
                                 int64_t rows, int64_t cols);  // same contract, 8 streams
void magnetar_matvec_f32_avx2(const float* w, int64_t ldw, const float* x, float* y,
                              int64_t rows, int64_t cols);  // cols % 16 == 0, cols > 0
void magnetar_dot_f32_avx2(const float* a, const float* b, int64_t n, float* out);  // n % 32 == 0
void magnetar_f16_to_f32_avx2(const uint16_t* src, float* dst, int64_t n);  // n % 16 == 0

// matmul_avx2.asm
void magnetar_pack_f16_panel16_avx2(const uint16_t* w, int64_t ldw, float* panel,
                                    int64_t kc);  // 16 rows, kc % 8 == 0
void magnetar_pack_f32_panel16_avx2(const float* w, int64_t ldw, float* panel, int64_t kc);
void magnetar_matmul_panel16_avx2(const float* panel, int64_t kc, const float* x, int64_t ldx,
                                  float* y, int64_t ldy, int64_t n_tokens,
                                  int64_t accumulate);  // kc >= 1
void magnetar_matmul_rows_f32_avx2(const float* w, int64_t ldw, const float* x, int64_t ldx, float* y,
                                   int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens,
                                   int64_t accumulate);  // cols % 8 == 0, cols > 0, 1 <= n_tokens <= 4
void magnetar_matmul_rows_f16_avx2(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, float* y,
                                   int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens,
                                   int64_t accumulate);  // same contract

// probe_avx2.asm (benchmarks only)
void magnetar_read_sum_avx2(const float* p, int64_t n, float* out);  // n % 64 == 0, out[8]
void magnetar_fma_loop_avx2(int64_t iterations, const float* coefficients /*[2]*/,
                            float* out /*[8]*/);

// vecops_avx2.asm (any n)
void magnetar_rmsnorm_avx2(float* out, const float* x, const float* weight, int64_t n,
                           const float* eps);  // n >= 1
void magnetar_softmax_avx2(float* x, int64_t n);  // n >= 1
void magnetar_silu_mul_avx2(float* gate, const float* up, int64_t n);
void magnetar_gelu_tanh_mul_avx2(float* gate, const float* up, int64_t n);
void magnetar_rope_avx2(float* x, int64_t n_heads, int64_t head_dim, const float* cos,
                        const float* sin);  // head_dim even, >= 2
}
