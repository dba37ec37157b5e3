// The one threaded driver over the kernel table, for every weight type. A call converts the
// activations once into the format the type's table entry wants (kernels.h TypeKernels; the
// calling thread, into scratch every thread reads), then threads claim rows of the weight matrix
// from a shared counter (guided self-scheduling): each claim takes remaining / (2 × threads)
// rows, never less than about kChunkBytes of weights, in whole kRowGranule rows, and runs the
// entry's decode (matvec) or prefill (matmul) kernel on them — x16 tiles through the entry's tile
// kernel, F16/F32 column stripes stripe by stripe. The first claims are long (long sequential
// streams for the prefetcher), the last ones short, so a thread the OS holds back (a shared
// machine, a hybrid CPU's slower cores) delays the end by one small chunk at most and leaves the
// rest to the others. Small matrices stay on the caller: waking workers would cost more.
#include "ops/ops.h"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cstring>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "ops/quant_ops.h"

namespace magnetar::ops {
namespace {

// Rows per scheduling unit: a multiple of every asm kernel's rows-per-pass and of the x16 tile,
// so only the last claim can have a row tail and tiled rows are claimed in whole tiles.
constexpr int64_t kRowGranule = 16;
static_assert(kRowGranule % quant::kTileRows == 0, "claims must be whole x16 tiles");
// Below this many weight bytes (× tokens) the calling thread does all the work.
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

// The activations of the current call in the entry's format. Grows to the largest call seen (the
// first calls of a model), then the hot path reuses it without allocating. Cache-line aligned.
const void* converted_activations(const kernels::TypeKernels& e, const float* x, int64_t cols, int64_t n_tokens) {
  if (e.act == kernels::ActFormat::F32) return x;
  struct alignas(64) Line {
    uint8_t bytes[64];
  };
  thread_local std::vector<Line> scratch;
  const int64_t token_bytes = kernels::activation_bytes(e.act, cols);
  const auto lines = size_t((token_bytes * n_tokens + 63) / 64);
  if (scratch.size() < lines) scratch.resize(lines);
  auto* out = reinterpret_cast<uint8_t*>(scratch.data());
  for (int64_t t = 0; t < n_tokens; ++t) e.quantize_act(x + t * cols, out + t * token_bytes, cols);
  return out;
}

struct MatJob {
  const kernels::KernelTable* k;
  const kernels::TypeKernels* e;  // k's entry for the matrix's type
  const Matrix* w;
  const float* x;    // FP32 activations (column stripes read these)
  const void* act;   // the same in e->act's format
  float* y;
  int64_t ldy;       // floats between tokens' outputs
  int64_t n_tokens;  // 0 = matvec (the decode kernel)
  int64_t min_chunk_rows;
  int64_t threads;
  alignas(64) std::atomic<int64_t> next_row{0};
};

// Rows [begin, end) of a striped F16/F32 matrix, stripe after stripe.
template <class W>
void run_stripes(const MatJob& job, const W* data, int64_t begin, int64_t end) {
  const Matrix& w = *job.w;
  const int64_t rows = end - begin;
  for (int64_t c0 = 0; c0 < w.cols; c0 += w.stripe_cols) {
    const int64_t width = std::min(w.stripe_cols, w.cols - c0);
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
  const Matrix& w = *job.w;
  if (w.stripe_cols > 0) {
    if (w.dtype == format::DType::F16)
      run_stripes(job, static_cast<const uint16_t*>(w.data), begin, end);
    else
      run_stripes(job, static_cast<const float*>(w.data), begin, end);
    return;
  }
  const kernels::TypeKernels& e = *job.e;
  const int64_t bytes_per_row = row_bytes(w);
  const auto* base = static_cast<const uint8_t*>(w.data);
  const int64_t tokens = job.n_tokens > 0 ? job.n_tokens : 1;
  if (begin < tiled_rows(w)) {  // whole tiles (claims start at multiples of 16), every token count
    assert(begin % quant::kTileRows == 0 && e.prefill_x16 != nullptr && "tiled rows are claimed in whole tiles");
    const int64_t stop = std::min(end, tiled_rows(w));
    e.prefill_x16(base + begin * bytes_per_row, job.act, job.y + begin, stop - begin, w.cols, tokens, job.ldy);
    begin = stop;
    if (begin >= end) return;
  }
  if (job.n_tokens == 0)
    e.decode(base + begin * bytes_per_row, job.act, job.y + begin, end - begin, w.cols);
  else
    e.prefill(base + begin * bytes_per_row, job.act, job.y + begin, end - begin, w.cols, tokens, job.ldy);
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

// k: the kernel table to use; nullptr: the active one.
void run(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y, int64_t ldy,
         const kernels::KernelTable* k = nullptr) {
  if (w.n_parts > 0) {  // a mixed-type fused matrix: each part into its rows of y
    for (int p = 0; p < w.n_parts; ++p) {
      run(pool, part_matrix(w, p), x, n_tokens, y, ldy, k);
      y += w.parts[size_t(p)].rows;
    }
    return;
  }
  assert(format::dtype_is_valid(uint32_t(w.dtype)) && w.data != nullptr && w.rows >= 0 && w.cols >= 0);
  assert(format::dtype_fits_cols(w.dtype, uint64_t(w.cols)) && "rows are whole blocks");
  assert((w.stripe_cols == 0 || w.dtype == format::DType::F16 || w.dtype == format::DType::F32) &&
         "ops: only F16/F32 matrices are striped");
  if (!k) k = &kernels::active();
  const kernels::TypeKernels& e = k->of(w.dtype);
  const int64_t tokens = n_tokens > 0 ? n_tokens : 1;
  MatJob job{k, &e, &w, x, nullptr, y, ldy, n_tokens, 0, pool.size()};
  if (w.stripe_cols == 0) job.act = converted_activations(e, x, w.cols, tokens);
  const int64_t work = w.rows * row_bytes(w) * tokens;
  if (pool.size() == 1 || work < kParallelMinBytes || w.rows <= kRowGranule) {
    run_rows(job, 0, w.rows);
    return;
  }
  // The smallest claim: ~kChunkBytes of weights per stripe, but at least two per thread, in
  // whole granules.
  const int64_t stripe_bytes = w.stripe_cols > 0 ? std::min(w.stripe_cols, w.cols) * dtype_bytes(w.dtype) : row_bytes(w);
  int64_t chunk = kChunkBytes / std::max<int64_t>(1, stripe_bytes);
  const int64_t fair = w.rows / (2 * pool.size());
  if (chunk > fair) chunk = fair;
  chunk = (chunk + kRowGranule - 1) / kRowGranule * kRowGranule;
  job.min_chunk_rows = chunk > kRowGranule ? chunk : kRowGranule;
  pool.run_dynamic(mat_job, &job);
}

}  // namespace

int64_t row_bytes(const Matrix& w) { return int64_t(format::tensor_bytes(w.dtype, 1, uint64_t(w.cols))); }

int64_t tiled_rows(const Matrix& w) { return w.x16_tiles ? w.rows / quant::kTileRows * quant::kTileRows : 0; }

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

void matvec(ThreadPool& pool, const Matrix& w, const float* x, float* y, const kernels::KernelTable& k) {
  run(pool, w, x, 0, y, w.rows, &k);
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
