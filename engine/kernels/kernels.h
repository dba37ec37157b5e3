// Kernel signatures and the dispatch table.
//
// One signature per kernel, shared by the C++ reference twin, the NASM declaration and the tests:
// extern "C", pointers and 64-bit integers only (never a float by value, never a 32-bit int:
// Win64 and System V pass them differently). Contracts (multiples, alignment) are stated per
// kernel; the table entries below accept ANY size — the ops/ drivers and the wrappers in
// dispatch.cpp handle tails and call the asm for the aligned bulk.
//
// The table is filled once at start from CPUID/XGETBV (core/cpu_features.h). Setting the
// environment variable MAGNETAR_KERNELS=reference forces the reference twins.
#pragma once
#include <cstdint>

namespace magnetar::kernels {

// y[r] = sum_c w[r*ldw + c] * x[c] for r < rows, c < cols. w is FP16 (IEEE half), x, y FP32.
using MatvecF16Fn = void (*)(const uint16_t* w, int64_t ldw, const float* x, float* y,
                             int64_t rows, int64_t cols);
using MatvecF32Fn = void (*)(const float* w, int64_t ldw, const float* x, float* y,
                             int64_t rows, int64_t cols);
// Prefill: y[t*ldy + r] = sum_c w[r*ldw + c] * x[t*ldx + c] for t < n_tokens, r < rows.
// accumulate != 0 adds the sums to y instead (one column stripe of a striped matrix, ops/ops.h).
using MatmulF16Fn = void (*)(const uint16_t* w, int64_t ldw, const float* x, int64_t ldx,
                             float* y, int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens,
                             int64_t accumulate);
using MatmulF32Fn = void (*)(const float* w, int64_t ldw, const float* x, int64_t ldx,
                             float* y, int64_t ldy, int64_t rows, int64_t cols, int64_t n_tokens,
                             int64_t accumulate);
// out[i] = x[i] / sqrt(mean(x^2) + *eps) * weight[i]. out may alias x.
using RmsNormFn = void (*)(float* out, const float* x, const float* weight, int64_t n,
                           const float* eps);
// x <- softmax(x), numerically stable (subtracts the max).
using SoftmaxFn = void (*)(float* x, int64_t n);
// gate[i] <- act(gate[i]) * up[i]; act = SiLU (Llama) or tanh-approximated GELU (Gemma).
using GatedActFn = void (*)(float* gate, const float* up, int64_t n);
// Rotate-half RoPE on n_heads consecutive heads of head_dim: for i < head_dim/2,
// (x[i], x[i+half]) <- (x[i] cos[i] - x[i+half] sin[i], x[i+half] cos[i] + x[i] sin[i]).
using RopeFn = void (*)(float* x, int64_t n_heads, int64_t head_dim, const float* cos,
                        const float* sin);
using F16ToF32Fn = void (*)(const uint16_t* src, float* dst, int64_t n);
// Dot product of two FP32 vectors (attention scores), result in *out.
using DotF32Fn = void (*)(const float* a, const float* b, int64_t n, float* out);
// y[i] += *scale * x[i] (attention value accumulation).
using AxpyF32Fn = void (*)(float* y, const float* x, int64_t n, const float* scale);

struct KernelTable {
  MatvecF16Fn matvec_f16;
  MatvecF32Fn matvec_f32;
  MatmulF16Fn matmul_f16;
  MatmulF32Fn matmul_f32;
  RmsNormFn rmsnorm;
  SoftmaxFn softmax;
  GatedActFn silu_mul;
  GatedActFn gelu_tanh_mul;
  RopeFn rope;
  F16ToF32Fn f16_to_f32;
  DotF32Fn dot_f32;
  AxpyF32Fn axpy_f32;
  const char* isa;  // "avx2" or "reference"
};

enum class KernelChoice { Auto, Reference, Asm };

// MAGNETAR_KERNELS read once for every table (float kernels here, block-quantized ones in
// quant.h): unset/"auto" -> Auto, "reference" -> Reference, "asm"/"avx2" -> Asm; anything else
// is Auto with a notice on stderr.
KernelChoice choice_from_environment();

// The table in use. Filled on first call (Auto, unless MAGNETAR_KERNELS says otherwise).
const KernelTable& active();
// Refill the table (for tests and bench --kernels). Not thread-safe against running kernels.
void select(KernelChoice choice);
const KernelTable& reference_table();
// Decode tuning (magnetar/tuning.h): the F16 matrix–vector kernel's weight streams, 4 or 8 (0 or
// anything else: the built-in rule by width), for tables chosen by Auto; takes effect at once
// when the active table is one. Not thread-safe against running kernels.
void set_tuned_f16_streams(int streams);
// The asm table with that stream choice, for the calibration to measure; nullptr when this CPU
// or build has no asm kernels.
const KernelTable* f16_streams_table(int streams);

// The streaming read the bandwidth probe times (core/bandwidth.h ReadLoop): AVX2 loads
// (magnetar_read_sum_avx2) when this CPU runs the asm kernels, else the portable loop — the
// ceiling is measured with loads as wide as the kernels' own. *name says which.
uint64_t (*streaming_read_loop(const char** name))(const uint64_t* data, uint64_t words);

// Scalar FP16 <-> FP32 conversion (IEEE binary16, round to nearest even).
float f16_to_f32_scalar(uint16_t h);
uint16_t f32_to_f16_scalar(float f);
float bf16_to_f32_scalar(uint16_t h);

}  // namespace magnetar::kernels
