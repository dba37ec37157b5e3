// Threaded drivers for block-quantized weight matrices. Q8_0 / Q4_0 (kernels/quant.h): the activation is quantized
// to int8 blocks once per call (once per token for prefill), then the rows are split across the
// pool. ops::matvec / ops::matmul hand quantized matrices to these.
#pragma once
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "ops/ops.h"

namespace magnetar::ops {

// y[rows] = w · x[cols]; w.dtype is Q8_0 or Q4_0, w.cols a multiple of 32.
void matvec_quantized(ThreadPool& pool, const Matrix& w, const float* x, float* y);
// The same with the given Q8_0 / Q4_0 kernel table instead of the active one (calibration).
void matvec_quantized(ThreadPool& pool, const Matrix& w, const float* x, float* y,
                      const quant::QuantKernelTable& k);
// y[n_tokens, rows] = x[n_tokens, cols] · wᵀ. Tiled rows (Matrix::x16_tiles): the x16 kernel, one
// call per thread's rows and token chunk, for any token count. Row-major rows: from 4 tokens: the prefill kernels (register
// tiles of rows × tokens), one call per thread's rows and per token chunk that fits in L2, each
// output bit-identical to the matvec twin's for that token. 2–3 tokens: the matvec per token
// over row chunks that stay in cache while every token passes over them.
void matmul_quantized(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y);
// The same with token t's outputs at y + t * ldy (ldy >= w.rows: a part of a fused matrix).
// Block types other than Q8_0 / Q4_0 run their type record's matmul (kernels/type_traits.h): the
// dequantizing one, or, where the type has integer asm (Q4_K, Q5_K, Q6_K, IQ4_XS), its kernels on
// activations quantized once per call here and shared by the threads.
void matmul_quantized(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y,
                      int64_t ldy);
// out[cols] = row `row` of a block-quantized matrix, dequantized (embedding lookups).
void embedding_row_quantized(const Matrix& w, int64_t row, float* out);

// Whether tile_x16_in_place() would tile w: a row-major Q8_0 / Q4_0 matrix of at least 16 rows.
bool wants_x16_tiles(const Matrix& w);
// Rewrites w's whole 16-row groups into x16 tiles in place (`writable` is w->data, memory the
// caller owns) and sets w->x16_tiles; scratch holds one group of rows. A load-time step.
void tile_x16_in_place(Matrix* w, void* writable, std::vector<uint8_t>* scratch);

}  // namespace magnetar::ops
