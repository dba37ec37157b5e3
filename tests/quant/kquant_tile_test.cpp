// The transposed 8-row K-quant prefill kernels (asm/kquant_tile_avx2.asm, and
// asm/kquant_tile_avx512vnni.asm where the CPU runs the avx512vnni table; kernels/kquant_tile.h),
// checkasm-style: against the per-token matvec twin bit for bit at row counts around the 8-row
// group (tails below and above it), token counts around the 4-token pass and the kernel's token
// chunk, widths of 1..9 super-blocks, weights and activations at odd addresses, integer extremes
// (the int16 sums' bounds), sentinels around every output, the callee-saved-register check
// (xmm6-15 on Win64); and the type records' prefill entries and ops::matmul over them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "format/model_format.h"
#include "kernels/kernels.h"
#include "kernels/kquant_low.h"
#include "kernels/kquant_tile.h"
#include "kernels/kquants.h"
#include "kernels/type_traits.h"
#include "ops/ops.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

struct TileCase {
  format::DType dtype;
  kernels::Isa isa;
  MatvecKFn twin;
  MatmulKFn tile;
  int64_t block_bytes;
  std::vector<int> half_offsets;  // the FP16 scales inside a block
  std::string name() const { return std::string(format::dtype_name(dtype)) + " " + kernels::isa_name(isa); }
};

// Every tile kernel this CPU runs (the VNNI ones only where the avx512vnni table exists).
std::vector<TileCase> tile_cases() {
  using format::DType;
  using kernels::Isa;
  const std::vector<TileCase> all = {
      {DType::Q4_K, Isa::Avx2, matvec_q4_k_ref, magnetar_matmul_q4_k_tile_avx2, 144, {0, 2}},
      {DType::Q5_K, Isa::Avx2, matvec_q5_k_ref, magnetar_matmul_q5_k_tile_avx2, 176, {0, 2}},
      {DType::Q6_K, Isa::Avx2, matvec_q6_k_ref, magnetar_matmul_q6_k_tile_avx2, 210, {208}},
      {DType::Q2_K, Isa::Avx2, matvec_q2_k_ref, magnetar_matmul_q2_k_tile_avx2, 84, {80, 82}},
      {DType::Q3_K, Isa::Avx2, matvec_q3_k_ref, magnetar_matmul_q3_k_tile_avx2, 110, {108}},
      {DType::Q4_K, Isa::Avx512Vnni, matvec_q4_k_ref, magnetar_matmul_q4_k_tile_avx512vnni, 144, {0, 2}},
      {DType::Q5_K, Isa::Avx512Vnni, matvec_q5_k_ref, magnetar_matmul_q5_k_tile_avx512vnni, 176, {0, 2}},
      {DType::Q6_K, Isa::Avx512Vnni, matvec_q6_k_ref, magnetar_matmul_q6_k_tile_avx512vnni, 210, {208}},
      {DType::IQ4_XS, Isa::Avx512Vnni, matvec_iq4_xs_ref, magnetar_matmul_iq4_xs_tile_avx512vnni, 136, {0}},
      {DType::Q2_K, Isa::Avx512Vnni, matvec_q2_k_ref, magnetar_matmul_q2_k_tile_avx512vnni, 84, {80, 82}},
      {DType::Q3_K, Isa::Avx512Vnni, matvec_q3_k_ref, magnetar_matmul_q3_k_tile_avx512vnni, 110, {108}}};
  return cases_this_cpu_runs(all);
}

// Bytes placed `offset` bytes into a buffer (weights or activations at an odd address).
struct Placed {
  std::vector<uint8_t> storage;
  const void* data;
};
Placed place(const void* bytes, size_t n, size_t offset) {
  Placed p{std::vector<uint8_t>(n + offset), nullptr};
  std::memcpy(p.storage.data() + offset, bytes, n);
  p.data = p.storage.data() + offset;
  return p;
}

// n_tokens quantized activations of cols values, back to back (extreme: q = +-127 everywhere).
std::vector<ActBlockK> tokens_of(int64_t cols, int64_t n_tokens, std::mt19937& rng, bool extreme) {
  std::vector<ActBlockK> x;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const std::vector<ActBlockK> one = make_k_activation(cols, rng, extreme);
    x.insert(x.end(), one.begin(), one.end());
  }
  return x;
}

// One call of the tile kernel against the twin: weights at w_offset, activations at x_offset.
void check_tile(const TileCase& c, int64_t rows, int64_t cols, int64_t n_tokens, size_t w_offset, size_t x_offset,
                std::mt19937& rng, bool extreme) {
  const std::vector<uint8_t> blocks = make_k_blocks(c.block_bytes, c.half_offsets, rows, cols, rng, extreme);
  const size_t w_bytes = size_t(rows * cols / kSuperBlock * c.block_bytes);
  const Placed w = place(blocks.data() + 2, w_bytes, w_offset);
  const std::vector<ActBlockK> xs = tokens_of(cols, std::max<int64_t>(n_tokens, 1), rng, extreme);
  const Placed x = place(xs.data(), xs.size() * sizeof(ActBlockK), x_offset);
  const int64_t y_stride = rows + (n_tokens % 3);  // packed outputs, or a gap between tokens
  std::vector<float> want = sentinel_outputs(rows, n_tokens, y_stride), got = want;
  matmul_k_ref(c.twin, w.data, xs.data(), want.data(), rows, cols, n_tokens, y_stride);
  c.tile(w.data, static_cast<const ActBlockK*>(x.data), got.data(), rows, cols, n_tokens, y_stride);
  expect_outputs(got, want, rows, n_tokens, y_stride,
              "rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " tokens " +
                  std::to_string(n_tokens) + " offsets " + std::to_string(w_offset) + "/" + std::to_string(x_offset) +
                  (extreme ? " (extreme)" : ""));
}

class KQuantTile : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernels::asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C: only the reference twins run here";
  }
};

TEST_F(KQuantTile, MatchesTwinBitExact) {
  const int64_t widths[] = {256, 512, 768, 1280, 2304};
  for (const TileCase& c : tile_cases()) {
    SCOPED_TRACE(c.name());
    std::mt19937 rng(83);
    int n = 0;
    for (int64_t rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 15, 16, 17, 24, 31, 33, 35})
      for (int64_t n_tokens : {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 17}) {
        check_tile(c, rows, widths[n % 5], n_tokens, n % 2 ? 3 : 1, size_t(n % 3 == 0 ? 0 : n % 3 == 1 ? 1 : 3), rng,
                   false);
        ++n;
      }
  }
}

// More tokens than one chunk of the kernel (64) with a partial last chunk and pass.
TEST_F(KQuantTile, ManyTokensMatchTwinBitExact) {
  for (const TileCase& c : tile_cases()) {
    SCOPED_TRACE(c.name());
    std::mt19937 rng(89);
    for (int64_t n_tokens : {64, 70, 131, 261}) check_tile(c, 11, 512, n_tokens, 1, 3, rng, false);
    check_tile(c, 37, 512, 77, 3, 1, rng, false);
  }
}

// Every quant and scale at its largest and the activations at +-127: the int16 sums' bounds.
TEST_F(KQuantTile, IntegerExtremesMatchTwinBitExact) {
  for (const TileCase& c : tile_cases()) {
    SCOPED_TRACE(c.name());
    std::mt19937 rng(97);
    for (int64_t rows : {3, 8, 10, 16, 19})
      for (int64_t n_tokens : {1, 5, 13}) check_tile(c, rows, 768, n_tokens, 1, 0, rng, true);
  }
}

TEST_F(KQuantTile, NoRowsOrTokensWritesNothing) {
  std::mt19937 rng(101);
  for (const TileCase& c : tile_cases()) {
    const std::vector<uint8_t> w = make_k_blocks(c.block_bytes, c.half_offsets, 1, 256, rng, false);
    const std::vector<ActBlockK> x = tokens_of(256, 3, rng, false);
    std::vector<float> y(kGuard, kSentinel);
    c.tile(w.data() + 2, x.data(), y.data(), 0, 256, 3, 1);
    c.tile(w.data() + 2, x.data(), y.data(), 1, 256, 0, 1);
    expect_sentinels(y, 0);
  }
}

TEST_F(KQuantTile, CalleeSavedRegistersPreserved) {
  std::mt19937 rng(103);
  for (const TileCase& c : tile_cases()) {
    SCOPED_TRACE(c.name());
    const int64_t rows = 11, cols = 512;
    for (int64_t n_tokens : {5, 9}) {
      const std::vector<uint8_t> w = make_k_blocks(c.block_bytes, c.half_offsets, rows, cols, rng, false);
      const std::vector<ActBlockK> x = tokens_of(cols, n_tokens, rng, false);
      expect_callee_saved_preserved(c.tile, w.data() + 2, x.data(), rows, cols, n_tokens, rows);
    }
  }
}

// The type record's prefill entry of the kernel's ISA (the tile from kKTransMinTokens tokens, the
// matvec below) and ops::matmul on 1 and 2 threads over the active table, against the per-token
// twin.
TEST_F(KQuantTile, EntryAndOpsMatchTwinBitExact) {
  std::mt19937 rng(107);
  for (const TileCase& c : tile_cases()) {
    SCOPED_TRACE(c.name());
    const TypeTraits& traits = type_traits(c.dtype);
    const int64_t rows = 77, cols = 1024;
    const std::vector<uint8_t> w = make_k_blocks(c.block_bytes, c.half_offsets, rows, cols, rng, false);
    for (int64_t n_tokens : {kKTransMinTokens - 1, kKTransMinTokens, int64_t{21}, int64_t{100}}) {
      std::vector<float> x(size_t(n_tokens * cols));
      for (float& v : x) v = std::uniform_real_distribution<float>(-1, 1)(rng);
      std::vector<ActBlockK> xq(size_t(n_tokens * cols / kSuperBlock));
      quantize_act_k_ref(x.data(), xq.data(), n_tokens * cols);
      std::vector<float> want = sentinel_outputs(rows, n_tokens, rows);
      matmul_k_ref(c.twin, w.data() + 2, xq.data(), want.data(), rows, cols, n_tokens, rows);
      const std::string what = "tokens " + std::to_string(n_tokens);
      std::vector<float> got = sentinel_outputs(rows, n_tokens, rows);
      const kernels::TypeKernels& entry = c.isa == kernels::Isa::Avx2 ? traits.avx2 : traits.avx512vnni;
      entry.prefill(w.data() + 2, xq.data(), got.data(), rows, cols, n_tokens, rows);
      expect_outputs(got, want, rows, n_tokens, rows, c.name() + " prefill entry, " + what);
      const ops::Matrix m{w.data() + 2, c.dtype, rows, cols};
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        std::vector<float> y = sentinel_outputs(rows, n_tokens, rows);
        ops::matmul(pool, m, x.data(), n_tokens, y.data());
        expect_outputs(y, want, rows, n_tokens, rows, "ops::matmul, threads " + std::to_string(threads) + ", " + what);
      }
    }
  }
}

}  // namespace
}  // namespace magnetar::quant
