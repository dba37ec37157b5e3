// The threaded drivers: matvec / matmul on F16 and F32 matrices for pool sizes 1..4, row counts
// that do not divide into the granule or the thread count, and the embedding lookup. Run for
// every kernel table this CPU has, so the asm bulk + tails are covered through the drivers too.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "kernels/kernel_oracles.h"
#include "kernels/kernels.h"
#include "kernels/tables.h"
#include "ops/ops.h"

namespace magnetar::test {
namespace {

using format::DType;

std::vector<kernels::KernelChoice> choices() {
  std::vector<kernels::KernelChoice> c = {kernels::KernelChoice::Reference};
  if (kernels::asm_available()) c.push_back(kernels::KernelChoice::Asm);
  return c;
}

class OpsTest : public ::testing::TestWithParam<kernels::KernelChoice> {
 protected:
  void SetUp() override { kernels::select(GetParam()); }
  void TearDown() override { kernels::select(kernels::KernelChoice::Auto); }
  std::mt19937 rng{99};
};

struct Shape {
  int64_t rows, cols;
};
// Includes shapes big enough to be split across threads (>= 128 KiB of weights).
const Shape kShapes[] = {{1, 1}, {5, 3}, {17, 33}, {64, 64}, {100, 257}, {1000, 96},
                         {333, 512}, {4099, 17}, {2051, 100}};

// striped: the matrix is laid out in column stripes first (ops::stripe_in_place); the oracle
// reads the plain copy.
template <class W>
void check_matvec(ThreadPool& pool, std::mt19937& rng, Shape s, int64_t n_tokens,
                  bool striped = false) {
  std::vector<W> w;
  if constexpr (sizeof(W) == 2)
    w = random_halves(rng, s.rows * s.cols, -1.f, 1.f);
  else
    w = random_floats(rng, s.rows * s.cols, -1.f, 1.f);
  std::vector<W> layout = w;
  ops::Matrix m{layout.data(), sizeof(W) == 2 ? DType::F16 : DType::F32, s.rows, s.cols};
  if (striped) {
    ASSERT_TRUE(ops::wants_stripes(m)) << "cols=" << s.cols;
    std::vector<uint8_t> scratch;
    ops::stripe_in_place(&m, layout.data(), &scratch);
    ASSERT_EQ(m.stripe_cols, ops::kStripeCols);
    ASSERT_NE(layout, w) << "striping left the layout unchanged";
  }
  // Each stripe adds its own sums: at most 17 more roundings of the total per stripe.
  const int64_t stripes = striped ? (s.cols + ops::kStripeCols - 1) / ops::kStripeCols : 1;
  const int64_t tokens = n_tokens == 0 ? 1 : n_tokens;
  auto x = random_floats(rng, tokens * s.cols, -1.f, 1.f);
  std::vector<float> y(static_cast<size_t>(tokens * s.rows + 1), -3.f);
  if (n_tokens == 0)
    ops::matvec(pool, m, x.data(), y.data());
  else
    ops::matmul(pool, m, x.data(), n_tokens, y.data());
  ASSERT_EQ(y.back(), -3.f) << "wrote past y";
  for (int64_t t = 0; t < tokens; ++t)
    for (int64_t r = 0; r < s.rows; ++r) {
      double sum_abs;
      const double exact = oracle_dot(w.data() + r * s.cols, x.data() + t * s.cols, s.cols, &sum_abs);
      const double budget = (n_tokens == 0 ? reduction_budget(s.cols, sum_abs) : matmul_budget(s.cols, sum_abs)) +
                            static_cast<double>((stripes - 1) * 17) * std::ldexp(sum_abs, -24);
      ASSERT_NEAR(y[static_cast<size_t>(t * s.rows + r)], exact, budget)
          << "threads=" << pool.size() << " rows=" << s.rows << " cols=" << s.cols << " t=" << t
          << " r=" << r << " striped=" << striped;
    }
}

TEST_P(OpsTest, MatvecF16AllPoolSizes) {
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    for (Shape s : kShapes) check_matvec<uint16_t>(pool, rng, s, 0);
  }
}

TEST_P(OpsTest, MatvecF32AllPoolSizes) {
  for (int threads = 1; threads <= 4; ++threads) {
    ThreadPool pool(threads);
    for (Shape s : kShapes) check_matvec<float>(pool, rng, s, 0);
  }
}

TEST_P(OpsTest, MatmulF16AllPoolSizes) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (Shape s : kShapes)
      for (int64_t n_tokens : {1, 3, 9}) check_matvec<uint16_t>(pool, rng, s, n_tokens);
  }
}

TEST_P(OpsTest, MatmulF32AllPoolSizes) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (Shape s : kShapes)
      for (int64_t n_tokens : {1, 3, 9}) check_matvec<float>(pool, rng, s, n_tokens);
  }
}

// Wide matrices in column stripes (what Model::load makes of them in read mode): a last stripe
// narrower than the rest, one with a column tail, row counts split across threads.
const Shape kStripedShapes[] = {{17, 3073}, {40, 4100}, {129, 6144}, {300, 5632}, {33, 11008}};

TEST_P(OpsTest, StripedMatricesMatchTheOracle) {
  for (int threads : {1, 2, 3}) {
    ThreadPool pool(threads);
    for (Shape s : kStripedShapes)
      for (int64_t n_tokens : {0, 1, 3, 9}) {
        check_matvec<uint16_t>(pool, rng, s, n_tokens, /*striped=*/true);
        check_matvec<float>(pool, rng, s, n_tokens, /*striped=*/true);
      }
  }
}

TEST_P(OpsTest, OnlyWidePlainF16AndF32MatricesAreStriped) {
  std::vector<uint16_t> w(10);
  EXPECT_FALSE(ops::wants_stripes(ops::Matrix{w.data(), DType::F16, 4, 3072}));
  EXPECT_TRUE(ops::wants_stripes(ops::Matrix{w.data(), DType::F16, 4, 3073}));
  EXPECT_TRUE(ops::wants_stripes(ops::Matrix{w.data(), DType::F32, 4, 16384}));
  EXPECT_FALSE(ops::wants_stripes(ops::Matrix{w.data(), DType::Q8_0, 4, 16384}));
  EXPECT_FALSE(ops::wants_stripes(ops::Matrix{w.data(), DType::F16, 4, 16384, ops::kStripeCols}));
}

TEST_P(OpsTest, MatmulOfZeroTokensWritesNothing) {
  ThreadPool pool(2);
  std::vector<float> w(16, 1.f), x(4, 1.f), y(4, -1.f);
  ops::matmul(pool, ops::Matrix{w.data(), DType::F32, 4, 4}, x.data(), 0, y.data());
  for (float v : y) EXPECT_EQ(v, -1.f);
}

TEST_P(OpsTest, EmbeddingRowWidensExactly) {
  const int64_t rows = 7, cols = 45;
  auto halves = random_halves(rng, rows * cols, -5.f, 5.f);
  auto floats = random_floats(rng, rows * cols, -5.f, 5.f);
  std::vector<float> out(static_cast<size_t>(cols + 1), 8.f);
  for (int64_t r : {int64_t{0}, int64_t{3}, rows - 1}) {
    ops::embedding_row(ops::Matrix{halves.data(), DType::F16, rows, cols}, r, out.data());
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(out[static_cast<size_t>(c)], kernels::f16_to_f32_scalar(halves[static_cast<size_t>(r * cols + c)]));
    ops::embedding_row(ops::Matrix{floats.data(), DType::F32, rows, cols}, r, out.data());
    ASSERT_EQ(std::memcmp(out.data(), floats.data() + r * cols, static_cast<size_t>(cols) * 4), 0);
    ASSERT_EQ(out.back(), 8.f);
  }
}

TEST_P(OpsTest, EmbeddingRowOfAStripedTableIsTheRow) {
  const int64_t rows = 5, cols = 4100;  // stripes of 2048, 2048 and 4 columns
  const auto halves = random_halves(rng, rows * cols, -5.f, 5.f);
  auto striped = halves;
  ops::Matrix m{striped.data(), DType::F16, rows, cols};
  std::vector<uint8_t> scratch;
  ops::stripe_in_place(&m, striped.data(), &scratch);
  std::vector<float> out(static_cast<size_t>(cols + 1), 8.f);
  for (int64_t r = 0; r < rows; ++r) {
    ops::embedding_row(m, r, out.data());
    for (int64_t c = 0; c < cols; ++c)
      ASSERT_EQ(out[static_cast<size_t>(c)], kernels::f16_to_f32_scalar(halves[static_cast<size_t>(r * cols + c)]))
          << "r=" << r << " c=" << c;
    ASSERT_EQ(out.back(), 8.f);
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, OpsTest, ::testing::ValuesIn(choices()),
                         [](const ::testing::TestParamInfo<kernels::KernelChoice>& info) {
                           return std::string(info.param == kernels::KernelChoice::Reference ? "reference" : "asm");
                         });

}  // namespace
}  // namespace magnetar::test
