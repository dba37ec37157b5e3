// The C++ reference twins of every kernel in kernels.h: the fallback on CPUs without AVX2/F16C/FMA,
// the path MAGNETAR_KERNELS=reference forces, and the oracle the asm tests compare against.
// Plain scalar code, no intrinsics; any size, any alignment.
//
// Numerics (the error budget every faster kernel must also meet):
// - Reductions (matvec, matmul, dot) accumulate in FP32 in 8 interleaved partial sums, lane
//   j taking elements j, j+8, ... and the lanes summed pairwise; a tail (n % 8) is added last.
//   Rigorous bound vs the exact sum: |err| <= (ceil(n/8) + 16) * 2^-24 * sum|w_i x_i|.
//   The asm matvec and dot kernels keep >= 8 partial sums, so the same bound holds for them.
//   The asm matmul (prefill) runs one FMA chain per output over blocks of <= 256 columns and
//   adds the block sums in order: |err| <= (min(n, 256) + ceil(n/256) + 16) * 2^-24 * sum|w x|.
// - rmsnorm and softmax accumulate their sums in double; activations (silu, gelu_tanh) are
//   evaluated in double and rounded once. F16/BF16 widening is exact.
#pragma once
#include <cstdint>

namespace magnetar::kernels::ref {

void matvec_f16(const uint16_t* w, int64_t ldw, const float* x, float* y, int64_t rows,
                int64_t cols);
void matvec_f32(const float* w, int64_t ldw, const float* x, float* y, int64_t rows,
                int64_t cols);
void matmul_f16(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx, float* y,
                int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate);
void matmul_f32(const float* w, int64_t ldw, const float* x, int64_t ldx, float* y, int64_t ldy,
                int64_t rows, int64_t cols, int64_t n_tokens, int64_t accumulate);
void rmsnorm(float* out, const float* x, const float* weight, int64_t n, const float* eps);
void softmax(float* x, int64_t n);
void silu_mul(float* gate, const float* up, int64_t n);
void gelu_tanh_mul(float* gate, const float* up, int64_t n);
void rope(float* x, int64_t n_heads, int64_t head_dim, const float* cos, const float* sin);
void f16_to_f32(const uint16_t* src, float* dst, int64_t n);
void dot_f32(const float* a, const float* b, int64_t n, float* out);

// Dot product of an FP16 row with an FP32 vector in the 8-lane scheme above (shared with the
// asm wrappers, which use it for column tails).
float dot_f16_f32(const uint16_t* w, const float* x, int64_t n);
float dot_f32_f32(const float* a, const float* b, int64_t n);

// a * b + c with a single rounding (what vfmadd does), independent of the C library's fmaf.
float fma_f32(float a, float b, float c);

// Twins of the benchmark probes in asm/probe_avx2.asm (bit-exact: same order of operations).
void read_sum_f32(const float* p, int64_t n, float* out /*[8]*/);
void fma_loop(int64_t iterations, const float* coefficients /*[2]*/, float* out /*[8]*/);

}  // namespace magnetar::kernels::ref
