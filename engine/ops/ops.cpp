// Threaded drivers over the kernel table. Threads claim rows of a weight matrix from a shared
// counter (guided self-scheduling): each claim takes remaining / (2 × threads) rows, never less
// than about kChunkBytes, in whole kRowGranule rows. The first claims are long (long sequential
// streams for the prefetcher), the last ones short, so a thread the OS holds back (a shared
// machine, a hybrid CPU's slower cores) delays the end by one small chunk at most and leaves the
// rest to the others. Small matrices stay on the caller: waking workers would cost more.
#include "ops/ops.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>

#include "kernels/kernels.h"
#include "ops/quant_ops.h"

namespace magnetar::ops {
namespace {

// Rows per scheduling unit: a multiple of every asm kernel's rows-per-pass, so only the last
// thread's slab can have a row tail.
constexpr int64_t kRowGranule = 16;
// Below this many weight bytes a matvec runs on the calling thread alone.
constexpr int64_t kParallelMinBytes = 128 * 1024;
// Weight bytes of the smallest claim: long enough for the kernels' streams to run at full speed
// (each claim restarts them), short enough to even out a late thread at the end.
constexpr int64_t kChunkBytes = 1 << 20;

int64_t dtype_bytes(format::DType t) {
  switch (t) {
    case format::DType::F32: return 4;
    case format::DType::F16: return 2;
    default: return 0;
  }
}

struct MatJob {
  const kernels::KernelTable* k;
  const Matrix* w;
  const float* x;
  float* y;
  int64_t ldy;       // floats between tokens' outputs
  int64_t n_tokens;  // 0 = matvec
  int64_t min_chunk_rows;
  int64_t threads;
  alignas(64) std::atomic<int64_t> next_row{0};
};

// Rows [begin, end) of y, stripe after stripe (a plain matrix is one stripe of all columns).
template <class W>
void run_rows_of(const MatJob& job, const W* data, int64_t begin, int64_t end) {
  const Matrix& w = *job.w;
  const int64_t rows = end - begin;
  const int64_t stripe = w.stripe_cols > 0 ? w.stripe_cols : w.cols;
  for (int64_t c0 = 0; c0 < w.cols; c0 += stripe) {
    const int64_t width = std::min(stripe, w.cols - c0);
    const W* base = data + c0 * w.rows + begin * width;  // stripes before this one: rows x c0
    const float* x = job.x + c0;
    float* y = job.y + begin;
    if (job.n_tokens == 0 && c0 == 0) {  // decode, first stripe: the matvec kernel stores y
      if constexpr (sizeof(W) == 2)
        job.k->matvec_f16(base, width, x, y, rows, width);
      else
        job.k->matvec_f32(base, width, x, y, rows, width);
      continue;
    }
    // Prefill, or a later stripe of a decode step: the matmul kernel, adding to y after the
    // first stripe (decode is a matmul of one token).
    const int64_t tokens = job.n_tokens > 0 ? job.n_tokens : 1;
    if constexpr (sizeof(W) == 2)
      job.k->matmul_f16(base, width, x, w.cols, y, job.ldy, rows, width, tokens, c0 > 0);
    else
      job.k->matmul_f32(base, width, x, w.cols, y, job.ldy, rows, width, tokens, c0 > 0);
  }
}

void run_rows(const MatJob& job, int64_t begin, int64_t end) {
  if (begin >= end) return;
  if (job.w->dtype == format::DType::F16)
    run_rows_of(job, static_cast<const uint16_t*>(job.w->data), begin, end);
  else
    run_rows_of(job, static_cast<const float*>(job.w->data), begin, end);
}

// The next claim of rows [*begin, *end); false when none are left.
bool claim_rows(MatJob& job, int64_t* begin, int64_t* end) {
  const int64_t rows = job.w->rows;
  int64_t next = job.next_row.load(std::memory_order_relaxed);
  for (;;) {
    if (next >= rows) return false;
    int64_t size = (rows - next) / (2 * job.threads);
    size = (size + kRowGranule - 1) / kRowGranule * kRowGranule;
    size = std::max(size, job.min_chunk_rows);
    const int64_t stop = std::min(rows, next + size);
    if (job.next_row.compare_exchange_weak(next, stop, std::memory_order_relaxed)) {
      *begin = next;
      *end = stop;
      return true;
    }
  }
}

void mat_job(void* ctx, int, int) {
  MatJob& job = *static_cast<MatJob*>(ctx);
  for (int64_t begin, end; claim_rows(job, &begin, &end);) run_rows(job, begin, end);
}

// k / qk: the kernel tables to use; nullptr: the active ones.
void run(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y, int64_t ldy,
         const kernels::KernelTable* k = nullptr, const quant::QuantKernelTable* qk = nullptr) {
  if (w.n_parts > 0) {  // a mixed-type fused matrix: each part into its rows of y
    for (int p = 0; p < w.n_parts; ++p) {
      run(pool, part_matrix(w, p), x, n_tokens, y, ldy, k, qk);
      y += w.parts[size_t(p)].rows;
    }
    return;
  }
  if (format::dtype_is_quantized(w.dtype)) {
    assert(w.stripe_cols == 0 && "ops: quantized matrices are never striped");
    if (qk && n_tokens <= 1)
      matvec_quantized(pool, w, x, y, *qk);
    else
      matmul_quantized(pool, w, x, n_tokens > 0 ? n_tokens : 1, y, ldy);
    return;
  }
  assert((w.dtype == format::DType::F16 || w.dtype == format::DType::F32) &&
         "ops: only F16, F32 and block-quantized matrices");
  assert(w.data != nullptr && w.rows >= 0 && w.cols >= 0);
  MatJob job{k ? k : &kernels::active(), &w, x, y, ldy, n_tokens, 0, pool.size()};
  const int64_t bytes = w.rows * w.cols * dtype_bytes(w.dtype);
  const int64_t work = bytes * (n_tokens > 0 ? n_tokens : 1);
  if (pool.size() == 1 || work < kParallelMinBytes || w.rows <= kRowGranule) {
    run_rows(job, 0, w.rows);
    return;
  }
  // The smallest claim: ~kChunkBytes of weights per stripe, but at least two per thread, in
  // whole granules.
  const int64_t stripe = w.stripe_cols > 0 ? std::min(w.stripe_cols, w.cols) : w.cols;
  const int64_t row_bytes = stripe * dtype_bytes(w.dtype) > 0 ? stripe * dtype_bytes(w.dtype) : 1;
  int64_t chunk = kChunkBytes / row_bytes;
  const int64_t fair = w.rows / (2 * pool.size());
  if (chunk > fair) chunk = fair;
  chunk = (chunk + kRowGranule - 1) / kRowGranule * kRowGranule;
  job.min_chunk_rows = chunk > kRowGranule ? chunk : kRowGranule;
  pool.run_dynamic(mat_job, &job);
}

}  // namespace

Matrix part_matrix(const Matrix& w, int p) {
  assert(p >= 0 && p < w.n_parts);
  const MatrixPartData& part = w.parts[size_t(p)];
  Matrix m;
  m.data = part.data;
  m.dtype = part.dtype;
  m.rows = part.rows;
  m.cols = w.cols;
  m.x16_tiles = part.x16_tiles;
  return m;
}

void matvec(ThreadPool& pool, const Matrix& w, const float* x, float* y) {
  run(pool, w, x, 0, y, w.rows);
}

void matvec(ThreadPool& pool, const Matrix& w, const float* x, float* y, const kernels::KernelTable& k,
            const quant::QuantKernelTable& qk) {
  run(pool, w, x, 0, y, w.rows, &k, &qk);
}

void matmul(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y) {
  if (n_tokens <= 0) return;
  run(pool, w, x, n_tokens, y, w.rows);
}

void embedding_row(const Matrix& w, int64_t row, float* out) {
  assert(row >= 0 && row < w.rows && "embedding_row: row out of range (validate token ids)");
  for (int p = 0; p < w.n_parts; ++p) {
    const Matrix m = part_matrix(w, p);
    if (row < m.rows) return embedding_row(m, row, out);
    row -= m.rows;
  }
  if (format::dtype_is_quantized(w.dtype)) {
    embedding_row_quantized(w, row, out);
    return;
  }
  assert((w.dtype == format::DType::F16 || w.dtype == format::DType::F32) &&
         "embedding_row: only F16, F32 and quantized tables");
  const int64_t stripe = w.stripe_cols > 0 ? w.stripe_cols : w.cols;
  for (int64_t c0 = 0; c0 < w.cols; c0 += stripe) {  // a plain table is one stripe
    const int64_t width = std::min(stripe, w.cols - c0);
    const int64_t at = c0 * w.rows + row * width;
    if (w.dtype == format::DType::F16)
      kernels::active().f16_to_f32(static_cast<const uint16_t*>(w.data) + at, out + c0, width);
    else
      std::memcpy(out + c0, static_cast<const float*>(w.data) + at,
                  static_cast<size_t>(width) * sizeof(float));
  }
}

bool wants_stripes(const Matrix& w, int64_t stripe_cols) {
  return w.stripe_cols == 0 && stripe_cols > 0 && w.cols >= kStripeMinCols && w.cols > stripe_cols &&
         (w.dtype == format::DType::F16 || w.dtype == format::DType::F32);
}

void stripe_into(const Matrix& plain, void* dst, int64_t stripe_cols) {
  assert(plain.stripe_cols == 0 && stripe_cols > 0 && plain.data != dst);
  const int64_t element = dtype_bytes(plain.dtype);
  const auto* src = static_cast<const uint8_t*>(plain.data);
  auto* out = static_cast<uint8_t*>(dst);
  for (int64_t c0 = 0; c0 < plain.cols; c0 += stripe_cols) {
    const int64_t width = std::min(stripe_cols, plain.cols - c0);
    for (int64_t r = 0; r < plain.rows; ++r, out += width * element)
      std::memcpy(out, src + (r * plain.cols + c0) * element, static_cast<size_t>(width * element));
  }
}

void stripe_in_place(Matrix* w, void* writable, std::vector<uint8_t>* scratch, int64_t stripe_cols) {
  assert(wants_stripes(*w, stripe_cols) && writable == w->data && "stripe_in_place: check wants_stripes()");
  const size_t bytes = static_cast<size_t>(w->rows * w->cols * dtype_bytes(w->dtype));
  if (scratch->size() < bytes) scratch->resize(bytes);
  std::memcpy(scratch->data(), writable, bytes);
  Matrix plain = *w;
  plain.data = scratch->data();
  stripe_into(plain, writable, stripe_cols);
  w->stripe_cols = stripe_cols;
}

}  // namespace magnetar::ops
