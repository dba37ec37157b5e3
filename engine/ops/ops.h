// Ops: shapes, tails and the split of matrix rows across the thread pool. No model knowledge;
// the numerical work happens in kernels::active().
#pragma once
#include <cstdint>

#include "core/thread_pool.h"
#include "format/model_format.h"

namespace magnetar::ops {

// A row-major weight matrix in the model file: [rows, cols], rows contiguous (stride = cols).
struct Matrix {
  const void* data = nullptr;
  format::DType dtype = format::DType::F32;
  int64_t rows = 0, cols = 0;
};

// y[rows] = w · x[cols]   (decode: one token)
void matvec(ThreadPool& pool, const Matrix& w, const float* x, float* y);
// y[n_tokens, rows] = x[n_tokens, cols] · wᵀ   (prefill: a batch of tokens)
void matmul(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y);
// out[cols] = row `row` of w, widened to FP32.
void embedding_row(const Matrix& w, int64_t row, float* out);

}  // namespace magnetar::ops
