// Every kernel table this CPU can run (the reference twins, and the asm table when present) against
// the double-precision oracles in kernel_oracles.h, on odd sizes, tails and unaligned starts.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "core/cpu_features.h"
#include "kernel_oracles.h"
#include "kernels/kernels.h"
#include "kernels/tables.h"

namespace magnetar::test {
namespace {

using kernels::KernelTable;

std::vector<const KernelTable*> tables_under_test() {
  std::vector<const KernelTable*> t = {&kernels::reference_table()};
  // The asm tables share their float ops: the first one stands for all.
  if (kernels::asm_available()) t.push_back(kernels::asm_tables().front());
  return t;
}

class KernelTableTest : public ::testing::TestWithParam<const KernelTable*> {
 protected:
  const KernelTable& k() const { return *GetParam(); }
  std::mt19937 rng{1234};
};

// Sizes around every vector width and unroll the asm may use.
const int64_t kColSizes[] = {0, 1, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127,
                             128, 129, 255, 256, 257, 511, 640, 1000, 2048, 2051, 3088, 4100};
const int64_t kRowSizes[] = {1, 2, 3, 4, 5, 7, 8, 9, 13, 16, 17, 33};

TEST_P(KernelTableTest, MatvecF16MatchesOracle) {
  for (int64_t cols : kColSizes)
    for (int64_t rows : kRowSizes)
      for (int64_t misalign : {0, 1, 3}) {
        const int64_t ldw = cols + misalign;  // odd strides give unaligned row starts
        auto w = random_halves(rng, rows * ldw + misalign, -1.f, 1.f);
        auto x = random_floats(rng, cols + misalign, -2.f, 2.f);
        const uint16_t* wp = w.data() + misalign;
        const float* xp = x.data() + misalign;
        std::vector<float> y(static_cast<size_t>(rows + 2), -777.f);
        k().matvec_f16(wp, ldw, xp, y.data() + 1, rows, cols);
        ASSERT_EQ(y[0], -777.f) << "wrote before y";
        ASSERT_EQ(y[static_cast<size_t>(rows + 1)], -777.f) << "wrote past y";
        for (int64_t r = 0; r < rows; ++r) {
          double sum_abs;
          const double exact = oracle_dot(wp + r * ldw, xp, cols, &sum_abs);
          ASSERT_NEAR(y[static_cast<size_t>(r + 1)], exact, reduction_budget(cols, sum_abs))
              << k().isa << " rows=" << rows << " cols=" << cols << " r=" << r
              << " misalign=" << misalign;
        }
      }
}

TEST_P(KernelTableTest, MatvecF32MatchesOracle) {
  for (int64_t cols : kColSizes)
    for (int64_t rows : kRowSizes)
      for (int64_t misalign : {0, 1}) {
        const int64_t ldw = cols + 2 * misalign;
        auto w = random_floats(rng, rows * ldw + misalign, -1.f, 1.f);
        auto x = random_floats(rng, cols + misalign, -2.f, 2.f);
        const float* wp = w.data() + misalign;
        const float* xp = x.data() + misalign;
        std::vector<float> y(static_cast<size_t>(rows + 2), -777.f);
        k().matvec_f32(wp, ldw, xp, y.data() + 1, rows, cols);
        ASSERT_EQ(y[0], -777.f);
        ASSERT_EQ(y[static_cast<size_t>(rows + 1)], -777.f);
        for (int64_t r = 0; r < rows; ++r) {
          double sum_abs;
          const double exact = oracle_dot(wp + r * ldw, xp, cols, &sum_abs);
          ASSERT_NEAR(y[static_cast<size_t>(r + 1)], exact, reduction_budget(cols, sum_abs))
              << k().isa << " rows=" << rows << " cols=" << cols << " r=" << r;
        }
      }
}

template <class W>
void check_matmul(const KernelTable& k, std::mt19937& rng, int64_t rows, int64_t cols,
                  int64_t n_tokens, int64_t misalign, int64_t accumulate = 0) {
  const int64_t ldw = cols + misalign, ldx = cols + 2 * misalign + 1, ldy = rows + 3;
  std::vector<W> w;
  if constexpr (sizeof(W) == 2)
    w = random_halves(rng, rows * ldw + misalign, -1.f, 1.f);
  else
    w = random_floats(rng, rows * ldw + misalign, -1.f, 1.f);
  auto x = random_floats(rng, n_tokens * ldx + misalign, -2.f, 2.f);
  const float kSentinel = -555.f;
  std::vector<float> y(static_cast<size_t>(n_tokens * ldy + 1), kSentinel);
  // Accumulating: y starts at a known value per output, which the sums must be added to.
  auto start_value = [](int64_t t, int64_t r) { return 0.25f * static_cast<float>((t * 7 + r) % 9) - 1.f; };
  if (accumulate)
    for (int64_t t = 0; t < n_tokens; ++t)
      for (int64_t r = 0; r < rows; ++r) y[static_cast<size_t>(t * ldy + r)] = start_value(t, r);
  const W* wp = w.data() + misalign;
  const float* xp = x.data() + misalign;
  if constexpr (sizeof(W) == 2)
    k.matmul_f16(wp, ldw, xp, ldx, y.data(), ldy, rows, cols, n_tokens, accumulate);
  else
    k.matmul_f32(wp, ldw, xp, ldx, y.data(), ldy, rows, cols, n_tokens, accumulate);
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < ldy; ++r) {
      const float got = y[static_cast<size_t>(t * ldy + r)];
      if (r >= rows) {
        ASSERT_EQ(got, kSentinel) << "wrote into the y stride gap t=" << t << " r=" << r;
        continue;
      }
      double sum_abs;
      double exact = oracle_dot(wp + r * ldw, xp + t * ldx, cols, &sum_abs);
      double budget = matmul_budget(cols, sum_abs);
      if (accumulate) {  // one more rounding, of the start value plus the sum
        exact += start_value(t, r);
        budget += std::ldexp(std::fabs(exact) + 1.0, -23);
      }
      ASSERT_NEAR(got, exact, budget)
          << k.isa << " rows=" << rows << " cols=" << cols << " tokens=" << n_tokens
          << " t=" << t << " r=" << r << " accumulate=" << accumulate;
    }
  }
  ASSERT_EQ(y.back(), kSentinel) << "wrote past y";
}

TEST_P(KernelTableTest, MatmulF16MatchesOracle) {
  for (int64_t n_tokens : {1, 2, 3, 5, 8, 13, 17})
    for (int64_t rows : {1, 3, 4, 8, 9, 17, 33})
      for (int64_t cols : {1, 7, 8, 9, 31, 64, 65, 257, 600})
        check_matmul<uint16_t>(k(), rng, rows, cols, n_tokens, (rows + cols) % 2);
}

TEST_P(KernelTableTest, MatmulAccumulatesIntoY) {
  // The column stripes of a striped matrix (ops/ops.h) add their sums to y; every path of the
  // driver: matvec (1 token), row pairs (a few tokens: asm_table.cpp kFewTokens), panels, row
  // tails, column tails.
  for (int64_t n_tokens : {1, 3, 4, 7, 13})
    for (int64_t rows : {1, 9, 16, 33})
      for (int64_t cols : {5, 64, 257}) {
        check_matmul<uint16_t>(k(), rng, rows, cols, n_tokens, (rows + cols) % 2, 1);
        check_matmul<float>(k(), rng, rows, cols, n_tokens, (rows + cols + 1) % 2, 1);
      }
  check_matmul<uint16_t>(k(), rng, 1300, 40, 2, 0, 1);  // > 1024 rows: the on-stack sums in blocks
}

TEST_P(KernelTableTest, MatmulF16LargeBatches) {
  // Batches the asm driver splits into token blocks: > 510 tokens, and x wider than 8 MiB
  // (16390 columns: 126-token blocks), both with row and column tails.
  check_matmul<uint16_t>(k(), rng, 33, 16, 1100, 1);
  check_matmul<uint16_t>(k(), rng, 17, 16390, 260, 0);
}

TEST_P(KernelTableTest, MatmulF32MatchesOracle) {
  for (int64_t n_tokens : {1, 2, 3, 5, 8, 13, 17})
    for (int64_t rows : {1, 3, 4, 8, 9, 17, 33})
      for (int64_t cols : {1, 7, 8, 9, 31, 64, 65, 257, 600})
        check_matmul<float>(k(), rng, rows, cols, n_tokens, (rows + cols) % 2);
}

TEST_P(KernelTableTest, DotMatchesOracle) {
  for (int64_t n : kColSizes)
    for (int64_t misalign : {0, 1, 2}) {
      auto a = random_floats(rng, n + misalign, -3.f, 3.f);
      auto b = random_floats(rng, n + misalign, -3.f, 3.f);
      float out = -1.f;
      k().dot_f32(a.data() + misalign, b.data() + misalign, n, &out);
      double sum_abs;
      const double exact = oracle_dot(a.data() + misalign, b.data() + misalign, n, &sum_abs);
      ASSERT_NEAR(out, exact, reduction_budget(n, sum_abs)) << k().isa << " n=" << n;
    }
}

TEST_P(KernelTableTest, RmsNormMatchesOracle) {
  const float eps = 1e-6f;
  for (int64_t n : kColSizes) {
    if (n == 0) continue;
    for (int64_t misalign : {0, 1}) {
      auto x = random_floats(rng, n + misalign + 1, -4.f, 4.f);
      auto weight = random_floats(rng, n + misalign, 0.5f, 1.5f);
      const float* xp = x.data() + misalign;
      double ss = 0.0;
      for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(xp[i]) * xp[i];
      const double scale = 1.0 / std::sqrt(ss / static_cast<double>(n) + eps);
      std::vector<float> out(static_cast<size_t>(n + 1), -9.f);
      k().rmsnorm(out.data(), xp, weight.data() + misalign, n, &eps);
      ASSERT_EQ(out.back(), -9.f) << "wrote past out";
      for (int64_t i = 0; i < n; ++i) {
        const double exact = xp[i] * scale * weight[static_cast<size_t>(i + misalign)];
        ASSERT_NEAR(out[static_cast<size_t>(i)], exact, rmsnorm_budget(n, exact))
            << k().isa << " n=" << n << " i=" << i;
      }
      // In place (out aliases x), as the forward pass uses it.
      std::vector<float> inplace(xp, xp + n);
      k().rmsnorm(inplace.data(), inplace.data(), weight.data() + misalign, n, &eps);
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(inplace[static_cast<size_t>(i)], out[static_cast<size_t>(i)]);
    }
  }
}

TEST_P(KernelTableTest, SoftmaxMatchesOracle) {
  for (int64_t n : kColSizes) {
    if (n == 0) continue;
    for (float spread : {1.f, 30.f}) {
      auto x = random_floats(rng, n + 2, -spread, spread);
      x[0] = -1234.f;                                   // sentinel before
      x[static_cast<size_t>(n + 1)] = -4321.f;          // sentinel after
      if (n > 2) x[2] = -INFINITY;                      // a masked position
      std::vector<double> in(x.begin() + 1, x.begin() + 1 + n);
      const double max_value = *std::max_element(in.begin(), in.end());
      double sum = 0.0;
      for (double v : in) sum += std::exp(v - max_value);
      k().softmax(x.data() + 1, n);
      ASSERT_EQ(x[0], -1234.f);
      ASSERT_EQ(x[static_cast<size_t>(n + 1)], -4321.f);
      for (int64_t i = 0; i < n; ++i) {
        const double exact = std::exp(in[static_cast<size_t>(i)] - max_value) / sum;
        if (std::isinf(in[static_cast<size_t>(i)])) {
          ASSERT_EQ(x[static_cast<size_t>(i + 1)], 0.f) << k().isa << " masked position";
          continue;
        }
        ASSERT_NEAR(x[static_cast<size_t>(i + 1)], exact,
                    softmax_budget(in[static_cast<size_t>(i)] - max_value, exact))
            << k().isa << " n=" << n << " i=" << i << " in=" << in[static_cast<size_t>(i)];
      }
    }
  }
}

void check_gated(const KernelTable& k, kernels::GatedActFn fn, bool gelu, std::mt19937& rng) {
  for (int64_t n : kColSizes) {
    for (float range : {1.f, 12.f, 90.f}) {
      auto gate = random_floats(rng, n + 1, -range, range);
      auto up = random_floats(rng, n, -2.f, 2.f);
      if (n > 3) {
        gate[0] = 0.f;
        gate[1] = -0.f;
        gate[2] = 1e-30f;
      }
      gate[static_cast<size_t>(n)] = 77.f;  // sentinel
      std::vector<float> in(gate.begin(), gate.begin() + n);
      fn(gate.data(), up.data(), n);
      ASSERT_EQ(gate[static_cast<size_t>(n)], 77.f) << "wrote past gate";
      for (int64_t i = 0; i < n; ++i) {
        const double g = in[static_cast<size_t>(i)], u = up[static_cast<size_t>(i)];
        const double act = gelu ? 0.5 * g * (1.0 + std::tanh(0.7978845608028654 * (g + 0.044715 * g * g * g)))
                                : g / (1.0 + std::exp(-g));
        const double exact = act * u;
        ASSERT_NEAR(gate[static_cast<size_t>(i)], exact, activation_budget(g, u, exact))
            << k.isa << (gelu ? " gelu" : " silu") << " n=" << n << " g=" << g;
      }
    }
  }
}

TEST_P(KernelTableTest, SiluMulMatchesOracle) { check_gated(k(), k().silu_mul, false, rng); }
TEST_P(KernelTableTest, GeluTanhMulMatchesOracle) { check_gated(k(), k().gelu_tanh_mul, true, rng); }

TEST_P(KernelTableTest, RopeMatchesOracle) {
  for (int64_t head_dim : {2, 4, 8, 16, 18, 32, 64, 128, 256})
    for (int64_t n_heads : {1, 3, 8}) {
      const int64_t half = head_dim / 2;
      auto x = random_floats(rng, n_heads * head_dim + 1, -3.f, 3.f);
      x.back() = 4242.f;
      std::vector<float> cs(static_cast<size_t>(half)), sn(static_cast<size_t>(half));
      for (int64_t i = 0; i < half; ++i) {
        const double angle = 17.0 * std::pow(10000.0, -2.0 * static_cast<double>(i) / static_cast<double>(head_dim));
        cs[static_cast<size_t>(i)] = static_cast<float>(std::cos(angle));
        sn[static_cast<size_t>(i)] = static_cast<float>(std::sin(angle));
      }
      std::vector<float> in(x);
      k().rope(x.data(), n_heads, head_dim, cs.data(), sn.data());
      ASSERT_EQ(x.back(), 4242.f);
      for (int64_t h = 0; h < n_heads; ++h)
        for (int64_t i = 0; i < half; ++i) {
          const size_t lo = static_cast<size_t>(h * head_dim + i), hi = lo + static_cast<size_t>(half);
          const double a = in[lo], b = in[hi], c = cs[static_cast<size_t>(i)], s = sn[static_cast<size_t>(i)];
          ASSERT_NEAR(x[lo], a * c - b * s, rope_budget(a * c, b * s)) << k().isa << " hd=" << head_dim;
          ASSERT_NEAR(x[hi], b * c + a * s, rope_budget(b * c, a * s)) << k().isa << " hd=" << head_dim;
        }
    }
}

TEST_P(KernelTableTest, F16ToF32IsExactForEveryHalf) {
  // All 65536 halves, at several alignments and lengths: widening is exact (NaN stays NaN).
  std::vector<uint16_t> all(65536 + 8);
  for (uint32_t i = 0; i < 65536; ++i) all[i + 3] = static_cast<uint16_t>(i);
  for (int64_t n : {int64_t{65536}, int64_t{65533}, int64_t{7}, int64_t{0}}) {
    std::vector<float> out(static_cast<size_t>(n + 1), 99.f);
    k().f16_to_f32(all.data() + 3, out.data(), n);
    ASSERT_EQ(out.back(), 99.f);
    for (int64_t i = 0; i < n; ++i) {
      const float want = kernels::f16_to_f32_scalar(static_cast<uint16_t>(i));
      if (std::isnan(want)) {
        ASSERT_TRUE(std::isnan(out[static_cast<size_t>(i)])) << i;
      } else {
        ASSERT_EQ(std::memcmp(&want, &out[static_cast<size_t>(i)], 4), 0) << k().isa << " half " << i;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Tables, KernelTableTest, ::testing::ValuesIn(tables_under_test()),
                         [](const ::testing::TestParamInfo<const KernelTable*>& info) {
                           return std::string(info.param->isa);
                         });

}  // namespace
}  // namespace magnetar::test
