// Shared by the quant kernel tests: random quantized matrices (misaligned on purpose) and
// activations, the summation-order tolerance of a kernel against its twin, sentinel checks, and
// calls through the checkasm trampoline.
#pragma once
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "format/model_format.h"
#include "kernels/kernels.h"
#include "kernels/kquants.h"
#include "kernels/quant.h"

namespace magnetar::quant {

constexpr float kSentinel = -12345.678f;
constexpr int kGuard = 8;  // sentinel floats after each output

struct QuantMatrix {
  std::vector<uint8_t> storage;
  void* data = nullptr;  // starts 2 bytes into storage: no 4-byte (or wider) alignment
  int64_t rows = 0, cols = 0;
};

// Rows of normal values, each row scaled by a different power of two, quantized by GGML's rules.
QuantMatrix make_matrix(format::DType dtype, int64_t rows, int64_t cols, std::mt19937& rng);
std::vector<float> make_activation(int64_t cols, std::mt19937& rng);
const char* type_name(format::DType dtype);
int64_t row_bytes_of(format::DType dtype, int64_t cols);

// Per-row bound on a kernel's difference from its twin when only the order of FP32 additions
// differs: a few ulps per term of the row's sum of |term|. m is row-major.
std::vector<double> order_tolerance(format::DType dtype, const QuantMatrix& m, const std::vector<ActBlock>& x);

void expect_sentinels(const std::vector<float>& y, int64_t rows);

// Prefill outputs [n_tokens, y_stride] (+ kGuard) filled with kSentinel: a kernel writes
// y[t * y_stride + r] for r < rows only.
std::vector<float> sentinel_outputs(int64_t rows, int64_t n_tokens, int64_t y_stride);
// got == want bit for bit at every output of [n_tokens, y_stride], and kSentinel everywhere else.
void expect_outputs(const std::vector<float>& got, const std::vector<float>& want, int64_t rows, int64_t n_tokens,
                    int64_t y_stride, const std::string& what);

// Blocks at the integer extremes: weights at +-127 (Q4_0: nibbles 0 and 15) and activations at
// +-127, the largest sums the int8 / int16 steps of the kernels see. [rows, blocks] weights,
// [n_tokens, blocks] activations.
struct ExtremeBlocks {
  std::vector<BlockQ8_0> w8;
  std::vector<BlockQ4_0> w4;
  std::vector<ActBlock> x;
};
ExtremeBlocks make_extreme_blocks(int64_t rows, int64_t blocks, int64_t n_tokens);

// K-quant kernels: [rows, cols / 256] random blocks of block_bytes, 2 bytes into their storage (no
// alignment): random quants and sub-block scales, FP16 scales (at half_offsets in each block) of
// either sign in a small range (`extreme`: every byte 0xff and d = 1, the largest integer sums the
// kernels see); and an activation quantized to ActBlockK (`extreme`: q = +-127, one sign per 64 values).
std::vector<uint8_t> make_k_blocks(int64_t block_bytes, const std::vector<int>& half_offsets, int64_t rows,
                                   int64_t cols, std::mt19937& rng, bool extreme);
std::vector<ActBlockK> make_k_activation(int64_t cols, std::mt19937& rng, bool extreme);

// The raw Q8_0 / Q4_0 kernels of one asm ISA. The kernel table's entries for these types wrap
// them (activation type, token chunks: kernels.h TypeKernels); the asm checks call them directly.
struct Int8AsmKernels {
  const char* isa;
  QuantizeActFn quantize_act;
  MatvecQFn matvec_q8_0, matvec_q4_0;
  MatmulQFn matmul_q8_0, matmul_q4_0;
  MatmulQx16Fn matmul_q8_0_x16, matmul_q4_0_x16;
};
// One per table of kernels::asm_tables(), in its order (found by the table's isa name); empty
// where this CPU runs no asm.
std::vector<const Int8AsmKernels*> int8_asm_kernels();
// Whether this CPU runs the asm table of `isa` (the K-quant tests take its kernels only then).
bool cpu_runs(kernels::Isa isa);
// The cases (any struct with an `isa`) whose kernels this CPU runs.
template <class Case>
std::vector<Case> cases_this_cpu_runs(const std::vector<Case>& all) {
  std::vector<Case> runnable;
  for (const Case& c : all)
    if (cpu_runs(c.isa)) runnable.push_back(c);
  return runnable;
}

// A kernel table entry (kernels.h TypeKernels) on FP32 activations, as ops' driver runs it: x
// (n_tokens tokens of cols values) converted to the entry's format, then its prefill kernel.
void run_entry(const kernels::TypeKernels& e, const void* w, const float* x, float* y, int64_t rows, int64_t cols,
               int64_t n_tokens, int64_t y_stride);

// fn(args...) through the shared checkasm trampoline (tests/kernels/checked_call.asm) with random
// seeds in every callee-saved register (xmm6-15 too on Win64); returns the mask of those not
// restored.
uint64_t checked_call(const void* fn, const std::vector<int64_t>& args);
int64_t as_arg(const void* p);

// A K-quant kernel on w and x called directly and through checked_call: no callee-saved register
// clobbered (the mask is 0) and the same outputs (rows, or n_tokens x y_stride, floats).
void expect_callee_saved_preserved(MatvecKFn fn, const void* w, const ActBlockK* x, int64_t rows, int64_t cols);
void expect_callee_saved_preserved(MatmulKFn fn, const void* w, const ActBlockK* x, int64_t rows, int64_t cols,
                                   int64_t n_tokens, int64_t y_stride);

}  // namespace magnetar::quant
