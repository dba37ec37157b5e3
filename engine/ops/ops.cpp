// Threaded drivers over the kernel table. The rows of a weight matrix are cut into chunks of
// about kChunkBytes (a multiple of kRowGranule rows: whole cache lines, whole pages for typical
// widths); threads take chunks from a shared counter, so a thread the OS holds back (a shared
// machine, a hybrid CPU's slower cores) leaves its share to the others instead of making
// everyone wait. Small matrices stay on the caller: waking workers would cost more than the work.
#include "ops/ops.h"

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
// Weight bytes per chunk a thread takes at a time: long enough for the kernels' streams to run
// at full speed (each chunk restarts them), short enough to even out a late thread.
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
  int64_t n_tokens;  // 0 = matvec
  int64_t chunk_rows;
  alignas(64) std::atomic<int64_t> next_row{0};
};

void run_rows(const MatJob& job, int64_t begin, int64_t end) {
  if (begin >= end) return;
  const Matrix& w = *job.w;
  const int64_t rows = end - begin;
  if (w.dtype == format::DType::F16) {
    const uint16_t* base = static_cast<const uint16_t*>(w.data) + begin * w.cols;
    if (job.n_tokens == 0)
      job.k->matvec_f16(base, w.cols, job.x, job.y + begin, rows, w.cols);
    else
      job.k->matmul_f16(base, w.cols, job.x, w.cols, job.y + begin, w.rows, rows, w.cols,
                        job.n_tokens);
  } else {
    const float* base = static_cast<const float*>(w.data) + begin * w.cols;
    if (job.n_tokens == 0)
      job.k->matvec_f32(base, w.cols, job.x, job.y + begin, rows, w.cols);
    else
      job.k->matmul_f32(base, w.cols, job.x, w.cols, job.y + begin, w.rows, rows, w.cols,
                        job.n_tokens);
  }
}

void mat_job(void* ctx, int, int) {
  MatJob& job = *static_cast<MatJob*>(ctx);
  const int64_t rows = job.w->rows;
  for (;;) {
    const int64_t begin = job.next_row.fetch_add(job.chunk_rows, std::memory_order_relaxed);
    if (begin >= rows) return;
    run_rows(job, begin, begin + job.chunk_rows < rows ? begin + job.chunk_rows : rows);
  }
}

void run(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y) {
  if (w.dtype == format::DType::Q8_0 || w.dtype == format::DType::Q4_0) {
    if (n_tokens == 0) matvec_quantized(pool, w, x, y);
    else matmul_quantized(pool, w, x, n_tokens, y);
    return;
  }
  assert((w.dtype == format::DType::F16 || w.dtype == format::DType::F32) &&
         "ops: only F16 and F32 matrices are supported; the loader must reject other dtypes");
  assert(w.data != nullptr && w.rows >= 0 && w.cols >= 0);
  MatJob job{&kernels::active(), &w, x, y, n_tokens, 0};
  const int64_t bytes = w.rows * w.cols * dtype_bytes(w.dtype);
  const int64_t work = bytes * (n_tokens > 0 ? n_tokens : 1);
  if (pool.size() == 1 || work < kParallelMinBytes || w.rows <= kRowGranule) {
    run_rows(job, 0, w.rows);
    return;
  }
  // Chunks: ~kChunkBytes of weights, but at least two per thread, in whole granules.
  const int64_t row_bytes = w.cols * dtype_bytes(w.dtype) > 0 ? w.cols * dtype_bytes(w.dtype) : 1;
  int64_t chunk = kChunkBytes / row_bytes;
  const int64_t fair = w.rows / (2 * pool.size());
  if (chunk > fair) chunk = fair;
  chunk = (chunk + kRowGranule - 1) / kRowGranule * kRowGranule;
  job.chunk_rows = chunk > kRowGranule ? chunk : kRowGranule;
  pool.run_dynamic(mat_job, &job);
}

}  // namespace

void matvec(ThreadPool& pool, const Matrix& w, const float* x, float* y) {
  run(pool, w, x, 0, y);
}

void matmul(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y) {
  if (n_tokens <= 0) return;
  run(pool, w, x, n_tokens, y);
}

void embedding_row(const Matrix& w, int64_t row, float* out) {
  assert(row >= 0 && row < w.rows && "embedding_row: row out of range (validate token ids)");
  if (w.dtype == format::DType::Q8_0 || w.dtype == format::DType::Q4_0) {
    embedding_row_quantized(w, row, out);
  } else if (w.dtype == format::DType::F16) {
    kernels::active().f16_to_f32(static_cast<const uint16_t*>(w.data) + row * w.cols, out, w.cols);
  } else {
    assert(w.dtype == format::DType::F32 && "embedding_row: only F16 and F32 tables");
    std::memcpy(out, static_cast<const float*>(w.data) + row * w.cols,
                static_cast<size_t>(w.cols) * sizeof(float));
  }
}

}  // namespace magnetar::ops
