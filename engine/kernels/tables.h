// Internal to engine/kernels: the float halves of the tables that dispatch.cpp completes with the
// type records' matrix kernels, and the adapters that make a float matrix kernel a type entry.
#pragma once
#include "kernels/kernels.h"

namespace magnetar::kernels {

// The AVX2 + FMA + F16C float ops (NASM kernels for the bulk, reference twins for tails) with
// their F16/F32 type entries, or nullptr when this build has no asm kernels. Call only when
// cpu::features().has_avx2_kernels(). f16_streams: the F16 matrix–vector kernel's weight streams,
// 4 or 8; 0 (or anything else): the built-in rule, 8 streams beyond kMatvecX8MinCols columns.
const KernelTable* asm_float_table(int f16_streams = 0);

// A float matrix kernel pair (W = uint16_t for F16, float for F32) as a plain-layout type entry:
// rows cols apart, tokens cols apart, nothing accumulated.
template <class W, void (*Matvec)(const W*, int64_t, const float*, float*, int64_t, int64_t),
          void (*Matmul)(const W*, int64_t, const float*, int64_t, float*, int64_t, int64_t, int64_t, int64_t,
                         int64_t)>
struct FloatEntry {
  static void decode(const void* w, const void* x, float* y, int64_t rows, int64_t cols) {
    Matvec(static_cast<const W*>(w), cols, static_cast<const float*>(x), y, rows, cols);
  }
  static void prefill(const void* w, const void* x, float* y, int64_t rows, int64_t cols, int64_t n_tokens,
                      int64_t y_stride) {
    Matmul(static_cast<const W*>(w), cols, static_cast<const float*>(x), cols, y, y_stride, rows, cols, n_tokens, 0);
  }
  static constexpr TypeKernels kernels() { return {ActFormat::F32, nullptr, decode, prefill, nullptr}; }
};

}  // namespace magnetar::kernels
