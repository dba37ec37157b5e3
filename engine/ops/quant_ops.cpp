// Block-quantized matrix drivers. Q8_0 / Q4_0: activation quantization, row partitions, token
// chunks for the prefill kernels and cache-sized row chunks for short prompts; the other block
// types: row partitions over their type record's matmul (dequantizing, or the K-quants' integer
// kernels on activations quantized once per call; see quant_ops.h).
#include "ops/quant_ops.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <vector>

#include "kernels/kquant_decode.h"
#include "kernels/kquants.h"
#include "kernels/quant.h"
#include "kernels/type_traits.h"

namespace magnetar::ops {
namespace {

// Rows per scheduling unit: whole 4-row groups of the asm kernels, so only a thread's last
// unit can take the one-row path.
constexpr int64_t kRowGranule = 16;
static_assert(kRowGranule % quant::kTileRows == 0, "a thread's rows must be whole x16 tiles");
// Below this many weight bytes (× tokens) the calling thread does all the work.
constexpr int64_t kParallelMinBytes = 128 * 1024;
// Prefill: weight bytes per row chunk, small enough to stay in L2 while every token passes.
constexpr int64_t kChunkBytes = 64 * 1024;
// Prefill with the matmul kernels (4x4 / 8x8 row x token tiles) from this many tokens; fewer
// take the matvec kernel per token. Activation bytes per token chunk: the chunk stays in L2
// while each row tile streams it.
constexpr int64_t kMatmulMinTokens = 4;
constexpr int64_t kTokenChunkBytes = 256 * 1024;
// The x16 kernels stream each 16-row tile once per token chunk and pass all the chunk's tokens
// over it while it sits in L2, so their chunks are larger: on magnetar_bench_quant's prefill
// (64 tokens x 4096 x 8192) 1 MiB ran 16-20 % faster than 256 KiB, 4 MiB no faster than 1 MiB.
constexpr int64_t kTileTokenChunkBytes = 1024 * 1024;

// Rows in whole x16 tiles at the front of w (0 when w is row-major).
int64_t tiled_rows(const Matrix& w) { return w.x16_tiles ? w.rows / quant::kTileRows * quant::kTileRows : 0; }

int64_t row_bytes(const Matrix& w) { return int64_t(format::tensor_bytes(w.dtype, 1, uint64_t(w.cols))); }

// The quantized activations of the current call. Grows to the largest call seen (the first
// calls of a model), then the hot path reuses it without allocating.
std::vector<quant::ActBlock>& activation_scratch(int64_t blocks) {
  thread_local std::vector<quant::ActBlock> scratch;
  if (int64_t(scratch.size()) < blocks) scratch.resize(size_t(blocks));
  return scratch;
}

struct QuantJob {
  const quant::QuantKernelTable* k;
  const Matrix* w;
  const quant::ActBlock* x;  // [n_tokens, cols / 32]
  float* y;                  // [n_tokens, ldy]
  int64_t ldy;
  int64_t n_tokens;
};

void run_rows(const QuantJob& job, int64_t begin, int64_t end) {
  if (begin >= end) return;
  const Matrix& w = *job.w;
  const int64_t bytes_per_row = row_bytes(w);
  const int64_t blocks = w.cols / quant::kBlock;
  const quant::MatvecQFn fn = w.dtype == format::DType::Q8_0 ? job.k->matvec_q8_0 : job.k->matvec_q4_0;
  const auto* base = static_cast<const uint8_t*>(w.data);
  const int64_t act_bytes = blocks * int64_t(sizeof(quant::ActBlock));
  const int64_t token_chunk = std::max<int64_t>(8, kTokenChunkBytes / act_bytes / 8 * 8);
  if (begin < tiled_rows(w)) {
    // Whole tiles (begin is a multiple of kRowGranule, so of 16): each tile streams once per
    // token chunk; the kernel takes the chunk's tokens in groups while the tile is in cache.
    assert(begin % quant::kTileRows == 0 && "tiled rows are split in whole tiles");
    const int64_t stop = std::min(end, tiled_rows(w));
    const quant::MatmulQx16Fn mm = w.dtype == format::DType::Q8_0 ? job.k->matmul_q8_0_x16 : job.k->matmul_q4_0_x16;
    const int64_t tile_chunk = std::max<int64_t>(8, kTileTokenChunkBytes / act_bytes / 8 * 8);
    for (int64_t t = 0; t < job.n_tokens; t += tile_chunk)
      mm(base + begin * bytes_per_row, job.x + t * blocks, job.y + t * job.ldy + begin, stop - begin, w.cols,
         std::min(tile_chunk, job.n_tokens - t), job.ldy);
    begin = stop;
    if (begin >= end) return;
  }
  if (job.n_tokens == 1) {
    fn(base + begin * bytes_per_row, job.x, job.y + begin, end - begin, w.cols);
    return;
  }
  if (job.n_tokens >= kMatmulMinTokens) {
    // The kernels walk row tiles outermost, each tile's weights staying in L1/L2 while the
    // token chunk streams past, so the whole row range goes in one call per token chunk.
    const quant::MatmulQFn mm = w.dtype == format::DType::Q8_0 ? job.k->matmul_q8_0 : job.k->matmul_q4_0;
    for (int64_t t = 0; t < job.n_tokens; t += token_chunk)
      mm(base + begin * bytes_per_row, job.x + t * blocks, job.y + t * job.ldy + begin, end - begin, w.cols,
         std::min(token_chunk, job.n_tokens - t), job.ldy);
    return;
  }
  const int64_t chunk = std::max<int64_t>(4, kChunkBytes / bytes_per_row / 4 * 4);
  for (int64_t r = begin; r < end; r += chunk) {
    const int64_t n = std::min(chunk, end - r);
    for (int64_t t = 0; t < job.n_tokens; ++t)
      fn(base + r * bytes_per_row, job.x + t * blocks, job.y + t * job.ldy + r, n, w.cols);
  }
}

void quant_job(void* ctx, int thread_index, int n_threads) {
  const QuantJob& job = *static_cast<const QuantJob*>(ctx);
  int64_t begin = 0, end = 0;
  ThreadPool::split(job.w->rows, kRowGranule, thread_index, n_threads, &begin, &end);
  run_rows(job, begin, end);
}

// Block types without int8 kernels (type_traits.h): rows split across the pool, each thread's
// rows through the type's dequantizing matmul, or its integer K-quant kernels (matmul_k) on the
// activations quantized once by the caller (xk).
struct DequantJob {
  quant::MatmulDequantFn matmul;
  quant::MatmulKFn matmul_k;
  const Matrix* w;
  const float* x;
  const quant::ActBlockK* xk;
  float* y;
  int64_t ldy, n_tokens;
};

void dequant_rows(const DequantJob& job, int64_t begin, int64_t end) {
  if (begin >= end) return;
  const auto* base = static_cast<const uint8_t*>(job.w->data) + begin * row_bytes(*job.w);
  if (job.matmul_k != nullptr)
    job.matmul_k(base, job.xk, job.y + begin, end - begin, job.w->cols, job.n_tokens, job.ldy);
  else
    job.matmul(base, job.x, job.y + begin, end - begin, job.w->cols, job.n_tokens, job.ldy);
}

void dequant_job(void* ctx, int thread_index, int n_threads) {
  const DequantJob& job = *static_cast<const DequantJob*>(ctx);
  int64_t begin = 0, end = 0;
  ThreadPool::split(job.w->rows, kRowGranule, thread_index, n_threads, &begin, &end);
  dequant_rows(job, begin, end);
}

// The Q8_K-style activations of the current call (K-quant integer kernels, so only where the asm
// runs: the AVX2 quantizer, bit for bit the reference's), grown like activation_scratch.
const quant::ActBlockK* quantized_k_activations(const float* x, int64_t cols, int64_t n_tokens) {
  thread_local std::vector<quant::ActBlockK> scratch;
  const int64_t blocks = cols / quant::kSuperBlock;
  if (int64_t(scratch.size()) < blocks * n_tokens) scratch.resize(size_t(blocks * n_tokens));
  for (int64_t t = 0; t < n_tokens; ++t) quant::quantize_act_k_avx2(x + t * cols, scratch.data() + t * blocks, cols);
  return scratch.data();
}

bool runs_on_caller(ThreadPool& pool, const Matrix& w, int64_t n_tokens) {
  return pool.size() == 1 || w.rows * row_bytes(w) * n_tokens < kParallelMinBytes || w.rows <= kRowGranule;
}

void run(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y, int64_t ldy,
         const quant::QuantKernelTable& k = quant::active()) {
  assert(format::dtype_is_quantized(w.dtype) && "matmul_quantized: only block-quantized matrices");
  assert(w.cols > 0 && format::dtype_fits_cols(w.dtype, uint64_t(w.cols)) && "quantized rows are whole blocks");
  assert(w.data != nullptr && w.rows >= 0 && ldy >= w.rows);
  const quant::TypeTraits& traits = quant::type_traits(w.dtype);
  if (!traits.int8_activations) {
    const quant::MatmulKFn matmul_k = quant::active_matmul_k(traits);
    const quant::ActBlockK* xk = matmul_k != nullptr ? quantized_k_activations(x, w.cols, n_tokens) : nullptr;
    DequantJob job{quant::active_matmul(traits), matmul_k, &w, x, xk, y, ldy, n_tokens};
    if (runs_on_caller(pool, w, n_tokens)) dequant_rows(job, 0, w.rows);
    else pool.run(dequant_job, &job);
    return;
  }
  const int64_t blocks = w.cols / quant::kBlock;
  std::vector<quant::ActBlock>& xq = activation_scratch(blocks * n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) k.quantize_act(x + t * w.cols, xq.data() + t * blocks, w.cols);
  QuantJob job{&k, &w, xq.data(), y, ldy, n_tokens};
  if (runs_on_caller(pool, w, n_tokens)) {
    run_rows(job, 0, w.rows);
    return;
  }
  pool.run(quant_job, &job);
}

}  // namespace

void matvec_quantized(ThreadPool& pool, const Matrix& w, const float* x, float* y) {
  run(pool, w, x, 1, y, w.rows);
}

void matvec_quantized(ThreadPool& pool, const Matrix& w, const float* x, float* y,
                      const quant::QuantKernelTable& k) {
  run(pool, w, x, 1, y, w.rows, k);
}

void matmul_quantized(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y) {
  matmul_quantized(pool, w, x, n_tokens, y, w.rows);
}

void matmul_quantized(ThreadPool& pool, const Matrix& w, const float* x, int64_t n_tokens, float* y,
                      int64_t ldy) {
  if (n_tokens <= 0) return;
  run(pool, w, x, n_tokens, y, ldy);
}

void embedding_row_quantized(const Matrix& w, int64_t row, float* out) {
  assert(row >= 0 && row < w.rows && "embedding_row_quantized: row out of range (validate token ids)");
  if (row < tiled_rows(w)) {
    const int64_t first = row / quant::kTileRows * quant::kTileRows;
    const uint8_t* tile = static_cast<const uint8_t*>(w.data) + first * row_bytes(w);
    if (w.dtype == format::DType::Q8_0)
      quant::dequantize_tile_row_q8_0(tile, row - first, out, w.cols);
    else
      quant::dequantize_tile_row_q4_0(tile, row - first, out, w.cols);
    return;
  }
  const uint8_t* base = static_cast<const uint8_t*>(w.data) + row * row_bytes(w);
  quant::type_traits(w.dtype).dequantize_row(base, out, w.cols);
}

bool wants_x16_tiles(const Matrix& w) {
  return !w.x16_tiles && w.stripe_cols == 0 && w.rows >= quant::kTileRows && w.cols > 0 &&
         w.cols % quant::kBlock == 0 && (w.dtype == format::DType::Q8_0 || w.dtype == format::DType::Q4_0);
}

void tile_x16_in_place(Matrix* w, void* writable, std::vector<uint8_t>* scratch) {
  assert(wants_x16_tiles(*w) && writable == w->data && "tile_x16_in_place: check wants_x16_tiles()");
  const int64_t tile_bytes = quant::kTileRows * row_bytes(*w);
  if (int64_t(scratch->size()) < tile_bytes) scratch->resize(size_t(tile_bytes));
  auto* out = static_cast<uint8_t*>(writable);
  for (int64_t r = 0; r + quant::kTileRows <= w->rows; r += quant::kTileRows, out += tile_bytes) {
    std::memcpy(scratch->data(), out, size_t(tile_bytes));
    if (w->dtype == format::DType::Q8_0) quant::tile_rows_q8_0(scratch->data(), out, w->cols);
    else quant::tile_rows_q4_0(scratch->data(), out, w->cols);
  }
  w->x16_tiles = true;
}

}  // namespace magnetar::ops
