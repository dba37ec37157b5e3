// The x16 tile layout (kernels/quant.h): the tile twins against the row-major twins (bit for
// bit), every asm tile kernel against the tile twins (bit for bit, sentinels, misaligned tiles,
// token counts around each token group, extreme blocks, callee-saved registers), row lookups in
// tiles, and the threaded drivers over a tiled matrix with a row-major tail.
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "kernels/quant.h"
#include "kernels/kernels.h"
#include "ops/ops.h"
#include "ops/quant_ops.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

// A row-major matrix and the same rows tiled (whole tiles, then the row-major tail).
struct TiledPair {
  QuantMatrix plain;
  QuantMatrix tiled;
};

TiledPair make_tiled_pair(format::DType dtype, int64_t rows, int64_t cols, std::mt19937& rng) {
  TiledPair p{make_matrix(dtype, rows, cols, rng), {}};
  p.tiled = p.plain;
  p.tiled.data = p.tiled.storage.data() + 2;
  ops::Matrix w{p.tiled.data, dtype, rows, cols};
  std::vector<uint8_t> scratch;
  if (ops::wants_x16_tiles(w)) ops::tile_x16_in_place(&w, p.tiled.data, &scratch);
  return p;
}

std::vector<ActBlock> make_tokens(int64_t cols, int64_t n_tokens, std::mt19937& rng) {
  std::vector<ActBlock> x(cols / 32 * n_tokens);
  for (int64_t t = 0; t < n_tokens; ++t) {
    const auto xf = make_activation(cols, rng);
    quantize_act_ref(xf.data(), x.data() + t * (cols / 32), cols);
  }
  return x;
}

MatmulQFn row_major_twin(format::DType dtype) {
  return dtype == format::DType::Q8_0 ? matmul_q8_0_ref : matmul_q4_0_ref;
}
MatmulQx16Fn tile_kernel(const Int8AsmKernels& table, format::DType dtype) {
  return dtype == format::DType::Q8_0 ? table.matmul_q8_0_x16 : table.matmul_q4_0_x16;
}

// 128 and 336 (21 tiles): the 8-chunk decode and its 4 + 1 tile tail.
const int64_t kTileRowCounts[] = {16, 32, 48, 80, 128, 336};
const int64_t kTileColCounts[] = {32, 96, 256, 1024 + 32};
const int64_t kTokenCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 12, 13, 17};

// y_stride wider than rows: the gaps and the end must keep their sentinels.
// Fn: a raw tile kernel (MatmulQx16Fn) or a table entry (kernels::MatrixPrefillFn).
template <class Fn>
void check_tile_kernel(format::DType dtype, Fn fn, const char* what) {
  SCOPED_TRACE(what);
  std::mt19937 rng(dtype == format::DType::Q8_0 ? 71 : 72);
  for (int64_t cols : kTileColCounts) {
    for (int64_t rows : kTileRowCounts) {
      const TiledPair m = make_tiled_pair(dtype, rows, cols, rng);
      for (int64_t n_tokens : kTokenCounts) {
        const auto x = make_tokens(cols, n_tokens, rng);
        const int64_t y_stride = rows + 3;
        const size_t y_size = size_t(n_tokens * y_stride + kGuard);
        std::vector<float> want(y_size, kSentinel), got(y_size, kSentinel);
        row_major_twin(dtype)(m.plain.data, x.data(), want.data(), rows, cols, n_tokens, y_stride);
        fn(m.tiled.data, x.data(), got.data(), rows, cols, n_tokens, y_stride);
        for (size_t i = 0; i < y_size; ++i) {
          const bool output = int64_t(i) < n_tokens * y_stride && int64_t(i) % y_stride < rows;
          if (!output) {
            ASSERT_EQ(got[i], kSentinel) << "write outside the outputs at " << i << ": rows " << rows
                                         << " cols " << cols << " tokens " << n_tokens;
          } else {
            ASSERT_EQ(got[i], want[i]) << type_name(dtype) << " rows " << rows << " cols " << cols
                                       << " tokens " << n_tokens << " token " << int64_t(i) / y_stride
                                       << " row " << int64_t(i) % y_stride;
          }
        }
      }
    }
  }
}

TEST(QuantTiles, TileTwinsMatchRowMajorTwinsBitExact) {
  check_tile_kernel(format::DType::Q8_0, matmul_q8_0_x16_ref, "reference");
  check_tile_kernel(format::DType::Q4_0, matmul_q4_0_x16_ref, "reference");
}

TEST(QuantTiles, TileRowLookupIsTheDequantizedRow) {
  std::mt19937 rng(73);
  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    const int64_t rows = 37, cols = 96;  // two tiles and a 5-row tail
    const TiledPair m = make_tiled_pair(dtype, rows, cols, rng);
    const ops::Matrix w{m.tiled.data, dtype, rows, cols, 0, true};
    for (int64_t r = 0; r < rows; ++r) {
      std::vector<float> got(cols), want(cols);
      ops::embedding_row_quantized(w, r, got.data());
      const auto* row = static_cast<const uint8_t*>(m.plain.data) + r * row_bytes_of(dtype, cols);
      if (dtype == format::DType::Q8_0)
        dequantize_row_q8_0(reinterpret_cast<const BlockQ8_0*>(row), want.data(), cols);
      else
        dequantize_row_q4_0(reinterpret_cast<const BlockQ4_0*>(row), want.data(), cols);
      ASSERT_EQ(got, want) << type_name(dtype) << " row " << r;
    }
  }
}

// Tiling keeps the bytes of a matrix and changes only whole tiles: the tail rows stay as stored.
TEST(QuantTiles, TilingKeepsSizeAndTail) {
  std::mt19937 rng(74);
  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    const int64_t rows = 21, cols = 64;
    const TiledPair m = make_tiled_pair(dtype, rows, cols, rng);
    const int64_t row_bytes = row_bytes_of(dtype, cols);
    EXPECT_NE(0, std::memcmp(m.plain.data, m.tiled.data, size_t(16 * row_bytes)));
    EXPECT_EQ(0, std::memcmp(static_cast<const uint8_t*>(m.plain.data) + 16 * row_bytes,
                             static_cast<const uint8_t*>(m.tiled.data) + 16 * row_bytes,
                             size_t(5 * row_bytes + 64)))
        << "the tail rows and the bytes after the matrix are untouched";
    ops::Matrix small{m.plain.data, dtype, 15, cols};
    EXPECT_FALSE(ops::wants_x16_tiles(small)) << "fewer than 16 rows: nothing to tile";
  }
}

class QuantTilesAsm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernels::asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C: only the reference twins run here";
  }
};

// Every table's Q8_0 / Q4_0 tile entry (the reference twins, each ISA's kernels in token chunks).
TEST(QuantTiles, TableEntriesMatchTwinBitExact) {
  std::vector<const kernels::KernelTable*> tables = kernels::asm_tables();
  tables.push_back(&kernels::reference_table());
  for (const kernels::KernelTable* table : tables)
    for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0})
      check_tile_kernel(dtype, table->of(dtype).prefill_x16, table->isa);
}

TEST_F(QuantTilesAsm, MatchesTwinBitExact) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
    check_tile_kernel(format::DType::Q8_0, table->matmul_q8_0_x16, table->isa);
    check_tile_kernel(format::DType::Q4_0, table->matmul_q4_0_x16, table->isa);
  }
}

// Weights at +-127 (Q4_0: nibbles 0 and 15) against activations at +-127: the int32 dots and
// the offset corrections must stay exact.
TEST_F(QuantTilesAsm, ExtremeBlocksExact) {
  const int64_t rows = 32, cols = 64, n_tokens = 9, blocks = 2;
  const ExtremeBlocks e = make_extreme_blocks(rows, blocks, n_tokens);
  const std::vector<BlockQ8_0>& w8 = e.w8;
  const std::vector<BlockQ4_0>& w4 = e.w4;
  const std::vector<ActBlock>& x = e.x;
  std::vector<uint8_t> t8(w8.size() * sizeof(BlockQ8_0)), t4(w4.size() * sizeof(BlockQ4_0));
  for (int64_t tile = 0; tile < rows / 16; ++tile) {
    tile_rows_q8_0(w8.data() + tile * 16 * blocks, t8.data() + tile * 16 * blocks * 34, cols);
    tile_rows_q4_0(w4.data() + tile * 16 * blocks, t4.data() + tile * 16 * blocks * 18, cols);
  }
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
    SCOPED_TRACE(table->isa);
    std::vector<float> want(rows * n_tokens), got(rows * n_tokens);
    matmul_q8_0_ref(w8.data(), x.data(), want.data(), rows, cols, n_tokens, rows);
    table->matmul_q8_0_x16(t8.data(), x.data(), got.data(), rows, cols, n_tokens, rows);
    EXPECT_EQ(got, want) << "q8_0";
    matmul_q4_0_ref(w4.data(), x.data(), want.data(), rows, cols, n_tokens, rows);
    table->matmul_q4_0_x16(t4.data(), x.data(), got.data(), rows, cols, n_tokens, rows);
    EXPECT_EQ(got, want) << "q4_0";
  }
}

TEST_F(QuantTilesAsm, ZeroRowsOrTokensWriteNothing) {
  std::vector<ActBlock> x(1);
  std::vector<float> xf(32, 1.0f);
  quantize_act_ref(xf.data(), x.data(), 32);
  std::vector<uint8_t> w(16 * 34, 0x80);
  std::vector<float> y(kGuard, kSentinel);
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
    for (MatmulQx16Fn fn : {table->matmul_q8_0_x16, table->matmul_q4_0_x16}) {
      fn(w.data(), x.data(), y.data(), 0, 32, 1, 16);
      fn(w.data(), x.data(), y.data(), 16, 32, 0, 16);
    }
  }
  expect_sentinels(y, 0);
}

// 7 arguments (three on the stack on Win64), every token group, ZMM/YMM registers above 15.
TEST_F(QuantTilesAsm, CalleeSavedRegistersPreserved) {
  std::mt19937 rng(75);
  const int64_t rows = 32, cols = 96, n_tokens = 13;
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
    SCOPED_TRACE(table->isa);
    for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
      const TiledPair m = make_tiled_pair(dtype, rows, cols, rng);
      const auto x = make_tokens(cols, n_tokens, rng);
      const MatmulQx16Fn fn = tile_kernel(*table, dtype);
      std::vector<float> direct(rows * n_tokens), checked(rows * n_tokens);
      fn(m.tiled.data, x.data(), direct.data(), rows, cols, n_tokens, rows);
      EXPECT_EQ(checked_call(reinterpret_cast<const void*>(fn),
                             {as_arg(m.tiled.data), as_arg(x.data()), as_arg(checked.data()), rows, cols,
                              n_tokens, rows}),
                0u)
          << type_name(dtype) << ": bit mask of clobbered callee-saved registers";
      EXPECT_EQ(direct, checked);
    }
  }
}

// The drivers over a tiled matrix whose rows are not whole tiles (the tail takes the row-major
// kernels), for several pool sizes and token counts: every row exactly once, within the
// summation-order tolerance of the twin (the tiled rows match it exactly).
TEST(QuantTiles, DriversCoverTilesAndTailAcrossThreads) {
  std::mt19937 rng(76);
  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    for (auto [rows, cols, n_tokens] : {std::tuple<int64_t, int64_t, int64_t>{1003, 256, 1}, {1003, 256, 3},
                                        {67, 2048, 5}, {1003, 2048, 130}}) {
      const TiledPair m = make_tiled_pair(dtype, rows, cols, rng);
      const ops::Matrix w{m.tiled.data, dtype, rows, cols, 0, true};
      std::vector<float> x(n_tokens * cols);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const auto xt = make_activation(cols, rng);
        std::copy(xt.begin(), xt.end(), x.begin() + t * cols);
      }
      std::vector<float> want(n_tokens * rows);
      std::vector<std::vector<double>> tol(n_tokens);
      for (int64_t t = 0; t < n_tokens; ++t) {
        std::vector<ActBlock> xq(cols / 32);
        quantize_act_ref(x.data() + t * cols, xq.data(), cols);
        row_major_twin(dtype)(m.plain.data, xq.data(), want.data() + t * rows, rows, cols, 1, rows);
        tol[t] = order_tolerance(dtype, m.plain, xq);
      }
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        std::vector<float> y(n_tokens * rows + kGuard, kSentinel);
        if (n_tokens == 1) ops::matvec(pool, w, x.data(), y.data());
        else ops::matmul(pool, w, x.data(), n_tokens, y.data());
        expect_sentinels(y, n_tokens * rows);
        const int64_t tiled_rows = rows / 16 * 16;
        for (int64_t t = 0; t < n_tokens; ++t)
          for (int64_t r = 0; r < rows; ++r) {
            const float got = y[t * rows + r], expected = want[t * rows + r];
            if (r < tiled_rows) ASSERT_EQ(got, expected) << type_name(dtype) << " threads " << threads
                                                         << " token " << t << " row " << r;
            else ASSERT_NEAR(got, expected, tol[t][r]) << type_name(dtype) << " threads " << threads
                                                       << " token " << t << " row " << r;
          }
      }
    }
  }
}

}  // namespace
}  // namespace magnetar::quant
