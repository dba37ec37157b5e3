// Quant kernels: the AVX2 asm against its C++ twin (many sizes, odd rows, misaligned inputs,
// sentinel-guarded outputs), the callee-saved-register check through the checked-call
// trampoline, and the twins against a double-precision product of the dequantized weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <tuple>
#include <vector>

#include "format/model_format.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "ops/ops.h"
#include "ops/quant_ops.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

const int64_t kRowCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 31, 64, 67};
const int64_t kColCounts[] = {32, 64, 96, 160, 256, 1024, 4096 + 32};

class QuantAsm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernels::asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C: only the reference twins run here";
  }
};

TEST_F(QuantAsm, QuantizeActMatchesTwinBitExact) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
  SCOPED_TRACE(table->isa);
  std::mt19937 rng(11);
  for (int64_t n : {32, 64, 96, 1024, 2048 + 32}) {
    for (int misalign = 0; misalign < 3; ++misalign) {
      std::vector<float> storage(n + 3);
      auto x = make_activation(n, rng);
      if (n == 64) std::fill(x.begin(), x.begin() + 32, 0.0f);  // an all-zero block: d = 0
      if (n == 96) for (int i = 32; i < 64; ++i) x[i] = float(i % 3) * 0.5f - 0.5f;  // ties
      std::copy(x.begin(), x.end(), storage.begin() + misalign);
      std::vector<ActBlock> want(n / 32 + 1), got(n / 32 + 1);
      std::memset(want.data(), 0x5a, want.size() * sizeof(ActBlock));
      std::memset(got.data(), 0x5a, got.size() * sizeof(ActBlock));
      quantize_act_ref(storage.data() + misalign, want.data(), n);
      table->quantize_act(storage.data() + misalign, got.data(), n);
      ASSERT_EQ(0, std::memcmp(want.data(), got.data(), got.size() * sizeof(ActBlock)))
          << "n " << n << " misalign " << misalign;  // includes the untouched guard block
    }
  }
  }
}

void check_matvec_against_twin(format::DType dtype, const Int8AsmKernels& table) {
  SCOPED_TRACE(table.isa);
  std::mt19937 rng(dtype == format::DType::Q8_0 ? 21 : 22);
  const MatvecQFn ref = dtype == format::DType::Q8_0 ? matvec_q8_0_ref : matvec_q4_0_ref;
  const MatvecQFn fast = dtype == format::DType::Q8_0 ? table.matvec_q8_0 : table.matvec_q4_0;
  for (int64_t cols : kColCounts) {
    for (int64_t rows : kRowCounts) {
      const QuantMatrix m = make_matrix(dtype, rows, cols, rng);
      std::vector<ActBlock> x(cols / 32);
      const auto xf = make_activation(cols, rng);
      quantize_act_ref(xf.data(), x.data(), cols);
      std::vector<float> want(rows + kGuard, kSentinel), got(rows + kGuard, kSentinel);
      ref(m.data, x.data(), want.data(), rows, cols);
      fast(m.data, x.data(), got.data(), rows, cols);
      expect_sentinels(got, rows);
      const auto tol = order_tolerance(dtype, m, x);
      for (int64_t r = 0; r < rows; ++r)
        ASSERT_NEAR(got[r], want[r], tol[r]) << type_name(dtype) << " rows " << rows
                                             << " cols " << cols << " row " << r;
    }
  }
}

TEST_F(QuantAsm, MatvecQ8_0MatchesTwin) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) check_matvec_against_twin(format::DType::Q8_0, *table);
}
TEST_F(QuantAsm, MatvecQ4_0MatchesTwin) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) check_matvec_against_twin(format::DType::Q4_0, *table);
}

// Prefill kernels: bit for bit the twin (the matvec twin per token), on odd row counts (tails
// below and above the 4-row tile), token counts around the 4-token tile, misaligned weights,
// a y_stride wider than rows (the gaps and the end must keep their sentinels).
void check_matmul_against_twin(format::DType dtype, const Int8AsmKernels& table) {
  SCOPED_TRACE(table.isa);
  std::mt19937 rng(dtype == format::DType::Q8_0 ? 23 : 24);
  const MatmulQFn ref = dtype == format::DType::Q8_0 ? matmul_q8_0_ref : matmul_q4_0_ref;
  const MatmulQFn fast = dtype == format::DType::Q8_0 ? table.matmul_q8_0 : table.matmul_q4_0;
  const int64_t kTokenCounts[] = {1, 2, 3, 4, 5, 7, 8, 9, 13};
  for (int64_t cols : {32, 96, 256, 1024 + 32}) {
    for (int64_t rows : kRowCounts) {
      const QuantMatrix m = make_matrix(dtype, rows, cols, rng);
      for (int64_t n_tokens : kTokenCounts) {
        const int64_t blocks = cols / 32;
        std::vector<ActBlock> x(blocks * n_tokens);
        for (int64_t t = 0; t < n_tokens; ++t) {
          const auto xf = make_activation(cols, rng);
          quantize_act_ref(xf.data(), x.data() + t * blocks, cols);
        }
        const int64_t y_stride = rows + 3;
        const size_t y_size = size_t(n_tokens * y_stride + kGuard);
        std::vector<float> want(y_size, kSentinel), got(y_size, kSentinel);
        ref(m.data, x.data(), want.data(), rows, cols, n_tokens, y_stride);
        fast(m.data, x.data(), got.data(), rows, cols, n_tokens, y_stride);
        for (size_t i = 0; i < y_size; ++i) {
          const bool output = int64_t(i) < n_tokens * y_stride && int64_t(i) % y_stride < rows;
          if (!output) ASSERT_EQ(got[i], kSentinel) << "write outside the outputs at " << i << ": rows " << rows
                                                    << " cols " << cols << " tokens " << n_tokens;
          else ASSERT_EQ(got[i], want[i]) << type_name(dtype) << " rows " << rows << " cols " << cols
                                          << " tokens " << n_tokens << " token " << int64_t(i) / y_stride
                                          << " row " << int64_t(i) % y_stride;
        }
      }
    }
  }
}

TEST_F(QuantAsm, MatmulQ8_0MatchesTwinBitExact) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) check_matmul_against_twin(format::DType::Q8_0, *table);
}
TEST_F(QuantAsm, MatmulQ4_0MatchesTwinBitExact) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) check_matmul_against_twin(format::DType::Q4_0, *table);
}

// Extreme blocks: weights at +-127 (Q4_0: nibbles 0 and 15) against activations at +-127, the
// largest pair sums vpmaddubsw sees; the int32 dots must stay exact.
TEST_F(QuantAsm, MatmulExtremeBlocksExact) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
    SCOPED_TRACE(table->isa);
    const int64_t rows = 5, cols = 64, n_tokens = 6, blocks = 2;
    const ExtremeBlocks e = make_extreme_blocks(rows, blocks, n_tokens);
    const std::vector<BlockQ8_0>& w8 = e.w8;
    const std::vector<BlockQ4_0>& w4 = e.w4;
    const std::vector<ActBlock>& x = e.x;
    for (int q = 0; q < 2; ++q) {
      const void* w = q == 0 ? static_cast<const void*>(w8.data()) : static_cast<const void*>(w4.data());
      std::vector<float> want(rows * n_tokens), got(rows * n_tokens);
      (q == 0 ? matmul_q8_0_ref : matmul_q4_0_ref)(w, x.data(), want.data(), rows, cols, n_tokens, rows);
      (q == 0 ? table->matmul_q8_0 : table->matmul_q4_0)(w, x.data(), got.data(), rows, cols, n_tokens, rows);
      EXPECT_EQ(got, want) << (q == 0 ? "q8_0" : "q4_0");
    }
  }
}

TEST_F(QuantAsm, ZeroRowsWritesNothing) {
  std::vector<ActBlock> x(1);
  std::vector<float> xf(32, 1.0f);
  quantize_act_ref(xf.data(), x.data(), 32);
  std::vector<float> y(kGuard, kSentinel);
  BlockQ8_0 w8{};
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
    table->matvec_q8_0(&w8, x.data(), y.data(), 0, 32);
    table->matvec_q4_0(&w8, x.data(), y.data(), 0, 32);
    table->matmul_q8_0(&w8, x.data(), y.data(), 0, 32, 1, 1);
    table->matmul_q4_0(&w8, x.data(), y.data(), 0, 32, 1, 1);
    table->matmul_q8_0(&w8, x.data(), y.data(), 1, 32, 0, 1);
    table->matmul_q4_0(&w8, x.data(), y.data(), 1, 32, 0, 1);
  }
  expect_sentinels(y, 0);
}

TEST_F(QuantAsm, CalleeSavedRegistersPreserved) {
  for (const Int8AsmKernels* table : int8_asm_kernels()) {
  SCOPED_TRACE(table->isa);
  std::mt19937 rng(31);
  const int64_t rows = 9, cols = 96;
  std::vector<float> xf = make_activation(cols, rng);
  std::vector<ActBlock> x(cols / 32), x_checked(cols / 32);
  EXPECT_EQ(checked_call(reinterpret_cast<const void*>(table->quantize_act),
                         {as_arg(xf.data()), as_arg(x_checked.data()), cols}),
            0u);
  table->quantize_act(xf.data(), x.data(), cols);
  EXPECT_EQ(0, std::memcmp(x.data(), x_checked.data(), x.size() * sizeof(ActBlock)));

  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    const QuantMatrix m = make_matrix(dtype, rows, cols, rng);
    const MatvecQFn fn = dtype == format::DType::Q8_0 ? table->matvec_q8_0 : table->matvec_q4_0;
    std::vector<float> direct(rows), checked(rows);
    fn(m.data, x.data(), direct.data(), rows, cols);
    EXPECT_EQ(checked_call(reinterpret_cast<const void*>(fn),
                           {as_arg(m.data), as_arg(x.data()), as_arg(checked.data()), rows, cols}),
              0u)
        << type_name(dtype) << ": bit mask of clobbered callee-saved registers";
    EXPECT_EQ(direct, checked);

    // Prefill kernel: 7 arguments (three on the stack on Win64), a stack frame of its own.
    const MatmulQFn mm = dtype == format::DType::Q8_0 ? table->matmul_q8_0 : table->matmul_q4_0;
    const int64_t n_tokens = 6;
    std::vector<ActBlock> xs(cols / 32 * n_tokens);
    for (int64_t t = 0; t < n_tokens; ++t) std::copy(x.begin(), x.end(), xs.begin() + t * (cols / 32));
    std::vector<float> mm_direct(rows * n_tokens), mm_checked(rows * n_tokens);
    mm(m.data, xs.data(), mm_direct.data(), rows, cols, n_tokens, rows);
    EXPECT_EQ(checked_call(reinterpret_cast<const void*>(mm),
                           {as_arg(m.data), as_arg(xs.data()), as_arg(mm_checked.data()), rows, cols,
                            n_tokens, rows}),
              0u)
        << type_name(dtype) << " matmul: bit mask of clobbered callee-saved registers";
    EXPECT_EQ(mm_direct, mm_checked);
  }
  }
}


// Twins: the integer kernels approximate the exact product of the dequantized weights and the
// FP32 activation; the only error is the activation's int8 rounding (half a step per element).
TEST(QuantTwin, MatvecApproximatesDequantizedProduct) {
  std::mt19937 rng(41);
  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    const int64_t rows = 13, cols = 512;
    const QuantMatrix m = make_matrix(dtype, rows, cols, rng);
    const auto xf = make_activation(cols, rng);
    std::vector<ActBlock> x(cols / 32);
    quantize_act_ref(xf.data(), x.data(), cols);
    std::vector<float> y(rows);
    (dtype == format::DType::Q8_0 ? matvec_q8_0_ref : matvec_q4_0_ref)(m.data, x.data(), y.data(), rows, cols);
    const int64_t row_bytes = dtype == format::DType::Q8_0 ? row_bytes_q8_0(cols) : row_bytes_q4_0(cols);
    std::vector<float> w(cols);
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* row = static_cast<const uint8_t*>(m.data) + r * row_bytes;
      if (dtype == format::DType::Q8_0)
        dequantize_row_q8_0(reinterpret_cast<const BlockQ8_0*>(row), w.data(), cols);
      else
        dequantize_row_q4_0(reinterpret_cast<const BlockQ4_0*>(row), w.data(), cols);
      double exact = 0, bound = 0, abs_sum = 0;
      for (int64_t c = 0; c < cols; ++c) {
        exact += double(w[c]) * xf[c];
        bound += std::fabs(double(w[c])) * x[c / 32].d * 0.5;
        abs_sum += std::fabs(double(w[c]) * xf[c]);
      }
      bound += 64 * double(FLT_EPSILON) * abs_sum;
      ASSERT_NEAR(y[r], exact, bound) << type_name(dtype) << " row " << r;
    }
  }
}

// The threaded driver (ops/ops.h) against the twin, per token, for several pool sizes, under
// each kernel choice: row claims and prefill row chunks must cover every row exactly once.
class QuantOps : public ::testing::TestWithParam<kernels::KernelChoice> {
 protected:
  void SetUp() override { kernels::select(GetParam()); }
  void TearDown() override { kernels::select(kernels::KernelChoice::Auto); }
};

TEST_P(QuantOps, MatvecAndMatmulMatchTwinAcrossThreads) {
  std::mt19937 rng(51);
  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    // 3 tokens: matvec per token; 5 and 130: the matmul kernels (130 spans two token chunks
    // at cols 2048).
    for (auto [rows, cols, n_tokens] : {std::tuple<int64_t, int64_t, int64_t>{67, 256, 5}, {67, 256, 3},
                                        {1003, 2048, 5}, {1003, 2048, 130}}) {
      const QuantMatrix m = make_matrix(dtype, rows, cols, rng);
      const ops::Matrix w{m.data, dtype, rows, cols};
      std::vector<float> x(n_tokens * cols);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const auto xt = make_activation(cols, rng);
        std::copy(xt.begin(), xt.end(), x.begin() + t * cols);
      }
      std::vector<std::vector<float>> want(n_tokens, std::vector<float>(rows));
      std::vector<std::vector<double>> tol(n_tokens);
      for (int64_t t = 0; t < n_tokens; ++t) {
        std::vector<ActBlock> xq(cols / 32);
        quantize_act_ref(x.data() + t * cols, xq.data(), cols);
        (dtype == format::DType::Q8_0 ? matvec_q8_0_ref : matvec_q4_0_ref)(m.data, xq.data(), want[t].data(), rows, cols);
        tol[t] = order_tolerance(dtype, m, xq);
      }
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        std::vector<float> y(rows + kGuard, kSentinel);
        ops::matvec(pool, w, x.data(), y.data());
        expect_sentinels(y, rows);
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_NEAR(y[r], want[0][r], tol[0][r]) << type_name(dtype) << " threads " << threads << " row " << r;
        std::vector<float> yb(n_tokens * rows + kGuard, kSentinel);
        ops::matmul(pool, w, x.data(), n_tokens, yb.data());
        expect_sentinels(yb, n_tokens * rows);
        for (int64_t t = 0; t < n_tokens; ++t)
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_NEAR(yb[t * rows + r], want[t][r], tol[t][r])
                << type_name(dtype) << " threads " << threads << " token " << t << " row " << r;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Choices, QuantOps,
                         ::testing::Values(kernels::KernelChoice::Reference, kernels::KernelChoice::Asm));

TEST(QuantEmbedding, EmbeddingRowIsTheDequantizedRow) {
  std::mt19937 rng(61);
  for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
    const QuantMatrix m = make_matrix(dtype, 9, 96, rng);
    const ops::Matrix w{m.data, dtype, 9, 96};
    std::vector<float> got(96), want(96);
    ops::embedding_row_quantized(w, 7, got.data());
    const uint8_t* row = static_cast<const uint8_t*>(m.data) + 7 * (dtype == format::DType::Q8_0 ? row_bytes_q8_0(96) : row_bytes_q4_0(96));
    if (dtype == format::DType::Q8_0)
      dequantize_row_q8_0(reinterpret_cast<const BlockQ8_0*>(row), want.data(), 96);
    else
      dequantize_row_q4_0(reinterpret_cast<const BlockQ4_0*>(row), want.data(), 96);
    EXPECT_EQ(got, want);
  }
}

// The tables' Q8_0 / Q4_0 entries: the reference table's are the twins (activations quantized by
// quantize_act_ref); each asm table's wrap its ISA's kernels: the quantizer and decode are them
// bit for bit, prefill is the matvec per token below 4 tokens and the matmul kernel from there
// (bit for bit the twin), at any token count, with a y_stride wider than rows.
TEST(QuantEntries, TablesWrapTheirIsasKernels) {
  std::mt19937 rng(81);
  const int64_t rows = 67, cols = 1024 + 32, blocks = cols / 32;
  std::vector<std::pair<const kernels::KernelTable*, const Int8AsmKernels*>> pairs = {
      {&kernels::reference_table(), nullptr}};
  const auto raw = int8_asm_kernels();
  for (size_t i = 0; i < raw.size(); ++i) pairs.push_back({kernels::asm_tables()[i], raw[i]});
  for (const auto& [table, kernels_of_isa] : pairs) {
    SCOPED_TRACE(table->isa);
    for (format::DType dtype : {format::DType::Q8_0, format::DType::Q4_0}) {
      const kernels::TypeKernels& e = table->of(dtype);
      ASSERT_EQ(e.act, kernels::ActFormat::Q8_0);
      const bool q8 = dtype == format::DType::Q8_0;
      const MatvecQFn matvec = kernels_of_isa == nullptr ? (q8 ? matvec_q8_0_ref : matvec_q4_0_ref)
                                                         : (q8 ? kernels_of_isa->matvec_q8_0 : kernels_of_isa->matvec_q4_0);
      const MatmulQFn twin = q8 ? matmul_q8_0_ref : matmul_q4_0_ref;
      const QuantMatrix m = make_matrix(dtype, rows, cols, rng);
      for (int64_t n_tokens : {1, 2, 3, 4, 5, 130}) {
        const auto xf = make_activation(cols * n_tokens, rng);
        std::vector<ActBlock> x(size_t(blocks * n_tokens)), x_twin(x.size());
        e.quantize_act(xf.data(), x.data(), cols * n_tokens);
        quantize_act_ref(xf.data(), x_twin.data(), cols * n_tokens);
        ASSERT_EQ(0, std::memcmp(x.data(), x_twin.data(), x.size() * sizeof(ActBlock)));
        const int64_t y_stride = rows + 3;
        std::vector<float> want(size_t(n_tokens * y_stride + kGuard), kSentinel), got(want.size(), kSentinel);
        if (n_tokens < 4)
          for (int64_t t = 0; t < n_tokens; ++t) matvec(m.data, x.data() + t * blocks, want.data() + t * y_stride, rows, cols);
        else
          twin(m.data, x.data(), want.data(), rows, cols, n_tokens, y_stride);
        e.prefill(m.data, x.data(), got.data(), rows, cols, n_tokens, y_stride);
        ASSERT_EQ(got, want) << type_name(dtype) << " prefill, " << n_tokens << " tokens";
        if (n_tokens == 1) {
          std::vector<float> decoded(size_t(rows + kGuard), kSentinel);
          e.decode(m.data, x.data(), decoded.data(), rows, cols);
          expect_sentinels(decoded, rows);
          for (int64_t r = 0; r < rows; ++r) ASSERT_EQ(decoded[size_t(r)], want[size_t(r)]) << "decode row " << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace magnetar::quant
