// Ops: shapes, tails and the split of matrix rows across the thread pool, one driver for every
// weight type (ops.cpp). No model knowledge; the numerical work happens in the kernel table's
// entry for the matrix's type (kernels::active().of(dtype), kernels/kernels.h).
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "core/thread_pool.h"
#include "format/model_format.h"

namespace magnetar::kernels {
struct KernelTable;
}

namespace magnetar::ops {

// A weight matrix [rows, cols]. Plain layout (stripe_cols == 0, as in the model file): row-major,
// rows contiguous (stride = cols). Striped layout (F16/F32 only): the columns are cut into stripes
// of stripe_cols (the last one may be narrower); stripe s is a row-major [rows, width_s] block and
// the stripes lie back to back. A decode pass over a wide matrix runs near the read ceiling only
// striped: each stripe's slice of x stays in L1 and its rows form long sequential streams
// (asm/README.md, "Wide rows").
// One part of a mixed-type fused matrix (Matrix::parts).
struct MatrixPartData {
  const void* data = nullptr;
  format::DType dtype = format::DType::F32;
  int64_t rows = 0;
  bool x16_tiles = false;
};
inline constexpr int kMaxMatrixParts = 3;

struct Matrix {
  const void* data = nullptr;
  format::DType dtype = format::DType::F32;
  int64_t rows = 0, cols = 0;
  int64_t stripe_cols = 0;  // 0: plain row-major
  // Q8_0 / Q4_0 only: the first rows / 16 * 16 rows are in x16 tiles (kernels/quant.h), the
  // rest row-major after them. Set at load by ops::tile_x16_in_place (ops/quant_ops.h).
  bool x16_tiles = false;
  // n_parts > 0: a fused matrix whose row ranges are stored in different types (a GGUF *_K_M
  // file's attn_v beside attn_q / attn_k): parts[0..n_parts) stacked along rows, each a plain
  // matrix of `cols` columns; data and dtype then describe parts[0]. The driver runs each part
  // into its rows of y.
  int n_parts = 0;
  std::array<MatrixPartData, kMaxMatrixParts> parts{};
};

// Part p of w as a matrix of its own.
Matrix part_matrix(const Matrix& w, int p);
// Bytes of one plain row of w (its type's blocks or elements).
int64_t row_bytes(const Matrix& w);
// Rows in whole x16 tiles at the front of w (0 when w is row-major).
int64_t tiled_rows(const Matrix& w);

// The built-in stripe width (decode tuning may choose another, magnetar/tuning.h), and the
// narrowest matrix the loader stripes (2048..3072 columns already run at the ceiling plain).
inline constexpr int64_t kStripeCols = 2048;
inline constexpr int64_t kStripeMinCols = 3073;
// Whether stripe_in_place() would stripe w into stripe_cols stripes: plain F16/F32 of at least
// kStripeMinCols columns and more than stripe_cols (stripe_cols <= 0: never).
bool wants_stripes(const Matrix& w, int64_t stripe_cols = kStripeCols);
// Rewrites the plain matrix w into stripe_cols stripes in place and sets w->stripe_cols.
// `writable` is w->data (memory the caller owns); scratch is reused across calls and grows to the
// matrix's size. A load-time step: the hot path never changes a layout.
void stripe_in_place(Matrix* w, void* writable, std::vector<uint8_t>* scratch,
                     int64_t stripe_cols = kStripeCols);
// The plain matrix `plain` written to dst (its byte size, no overlap) in stripe_cols stripes.
void stripe_into(const Matrix& plain, void* dst, int64_t stripe_cols);

// y[rows] = w · x[cols]   (decode: one token)
void matvec(ThreadPool& pool, const Matrix& w, const float* x, float* y);
// The same with a given kernel table instead of the active one (the calibration measures
// variants this way without touching what a running model uses).
void matvec(ThreadPool& pool, const Matrix& w, const float* x, float* y, const kernels::KernelTable& k);
// y[n_tokens, rows] = x[n_tokens, cols] · wᵀ   (prefill: a batch of tokens; each output bit for
// bit matvec's for that token)
void matmul(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y);
// out[cols] = row `row` of w, widened to FP32.
void embedding_row(const Matrix& w, int64_t row, float* out);

}  // namespace magnetar::ops
