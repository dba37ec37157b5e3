// checkasm-style tests: every NASM symbol called DIRECTLY (no wrapper) at the sizes its contract
// allows, through magnetar_checked_call (checked_call.asm), which seeds every callee-saved
// register with random values and reports any the kernel did not restore. Outputs are
// sentinel-filled around the written range; results are compared with the C++ twin.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <sstream>
#include <type_traits>
#include <vector>

#include "core/cpu_features.h"
#include "kernel_oracles.h"
#include "kernels/asm_kernels.h"
#include "kernels/kernels.h"
#include "kernels/reference.h"

extern "C" {
uint64_t magnetar_checked_call(const void* fn, const int64_t* args, const uint64_t* seeds);
void magnetar_test_clobber_gpr();
void magnetar_test_clobber_xmm();
}

namespace magnetar::test {
namespace {

constexpr float kSentinel = -31337.f;

// An F16 or F32 weight as the kernels read it.
template <class W>
float weight_value(W v) {
  if constexpr (sizeof(W) == 2)
    return kernels::f16_to_f32_scalar(v);
  else
    return v;
}

template <class T>
int64_t as_arg(T v) {
  if constexpr (std::is_pointer_v<T>)
    return static_cast<int64_t>(reinterpret_cast<intptr_t>(v));
  else
    return static_cast<int64_t>(v);
}

std::string clobber_names(uint64_t mask) {
  std::ostringstream s;
  for (int i = 0; i < 16; ++i)
    if (mask & (uint64_t{1} << i)) s << " g" << i << " (see the map in asm/abi.inc)";
  for (int x = 0; x < 16; ++x)
    if (mask & (uint64_t{1} << (16 + x))) s << " xmm" << x;
  return s.str();
}

// Calls fn(args...) through the trampoline; returns the clobber mask.
template <class... P, class... A>
uint64_t checked_call_mask(void (*fn)(P...), A... args) {
  static_assert(sizeof...(P) == sizeof...(A) && sizeof...(A) <= 10, "bad argument count");
  static std::mt19937_64 rng(0x5eed);
  int64_t packed[10] = {as_arg(static_cast<P>(args))...};
  uint64_t seeds[48];
  for (uint64_t& s : seeds) s = rng();
  return magnetar_checked_call(reinterpret_cast<const void*>(fn), packed, seeds);
}

#define CHECKED_CALL(fn, ...)                                                         \
  do {                                                                                \
    const uint64_t clobbered_ = checked_call_mask(fn, __VA_ARGS__);                   \
    ASSERT_EQ(clobbered_, 0u) << #fn << " clobbered callee-saved:" << clobber_names(clobbered_); \
  } while (0)

class CheckAsm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!cpu::features().has_avx2_kernels()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C";
  }
  std::mt19937 rng{7};
};

TEST(CheckedCall, CatchesAClobberedGpr) {
  const uint64_t mask = checked_call_mask(magnetar_test_clobber_gpr);
  EXPECT_EQ(mask, uint64_t{1} << 9) << clobber_names(mask);
}

TEST(CheckedCall, CatchesClobberedXmmWhereTheAbiSavesThem) {
  if (!cpu::features().has_avx2_kernels()) GTEST_SKIP() << "needs AVX2";
  const uint64_t mask = checked_call_mask(magnetar_test_clobber_xmm);
#if defined(_WIN32)
  EXPECT_EQ(mask, (uint64_t{1} << (16 + 6)) | (uint64_t{1} << (16 + 15))) << clobber_names(mask);
#else
  EXPECT_EQ(mask, 0u) << "System V has no callee-saved vector registers";
#endif
}

TEST_F(CheckAsm, MatvecF16) {
  using Fn = void (*)(const uint16_t*, int64_t, const float*, float*, int64_t, int64_t);
  for (Fn fn : {magnetar_matvec_f16_avx2, magnetar_matvec_f16_x8_avx2})
  for (int64_t cols : {16, 32, 48, 272, 2048})
    for (int64_t rows : {0, 1, 3, 4, 5, 7, 8, 9, 13, 16, 17, 31, 35})
      for (int64_t pad : {0, 1, 7}) {
        const int64_t ldw = cols + pad;
        auto w = random_halves(rng, rows * ldw + 1, -1.f, 1.f);
        auto x = random_floats(rng, cols + 1, -1.f, 1.f);
        std::vector<float> y(static_cast<size_t>(rows + 2), kSentinel), want(static_cast<size_t>(rows));
        CHECKED_CALL(fn, w.data() + 1, ldw, x.data() + 1, y.data() + 1, rows, cols);
        kernels::ref::matvec_f16(w.data() + 1, ldw, x.data() + 1, want.data(), rows, cols);
        ASSERT_EQ(y.front(), kSentinel);
        ASSERT_EQ(y.back(), kSentinel);
        for (int64_t r = 0; r < rows; ++r) {
          double sum_abs;
          oracle_dot(w.data() + 1 + r * ldw, x.data() + 1, cols, &sum_abs);
          ASSERT_NEAR(y[static_cast<size_t>(r + 1)], want[static_cast<size_t>(r)], 2 * reduction_budget(cols, sum_abs))
              << "rows=" << rows << " cols=" << cols << " r=" << r;
        }
      }
}

TEST_F(CheckAsm, MatvecF32) {
  for (int64_t cols : {16, 32, 48, 272, 2048})
    for (int64_t rows : {0, 1, 3, 4, 5, 7, 8, 9, 13, 16, 17})
      for (int64_t pad : {0, 1, 7}) {
        const int64_t ldw = cols + pad;
        auto w = random_floats(rng, rows * ldw + 1, -1.f, 1.f);
        auto x = random_floats(rng, cols + 1, -1.f, 1.f);
        std::vector<float> y(static_cast<size_t>(rows + 2), kSentinel), want(static_cast<size_t>(rows));
        CHECKED_CALL(magnetar_matvec_f32_avx2, w.data() + 1, ldw, x.data() + 1, y.data() + 1, rows, cols);
        kernels::ref::matvec_f32(w.data() + 1, ldw, x.data() + 1, want.data(), rows, cols);
        ASSERT_EQ(y.front(), kSentinel);
        ASSERT_EQ(y.back(), kSentinel);
        for (int64_t r = 0; r < rows; ++r) {
          double sum_abs;
          oracle_dot(w.data() + 1 + r * ldw, x.data() + 1, cols, &sum_abs);
          ASSERT_NEAR(y[static_cast<size_t>(r + 1)], want[static_cast<size_t>(r)], 2 * reduction_budget(cols, sum_abs));
        }
      }
}

TEST_F(CheckAsm, Dot) {
  for (int64_t n : {0, 32, 64, 96, 1024})
    for (int64_t off : {0, 1, 3}) {
      auto a = random_floats(rng, n + off, -2.f, 2.f);
      auto b = random_floats(rng, n + off, -2.f, 2.f);
      float out = kSentinel;
      CHECKED_CALL(magnetar_dot_f32_avx2, a.data() + off, b.data() + off, n, &out);
      double sum_abs;
      oracle_dot(a.data() + off, b.data() + off, n, &sum_abs);
      ASSERT_NEAR(out, kernels::ref::dot_f32_f32(a.data() + off, b.data() + off, n), 2 * reduction_budget(n, sum_abs));
    }
}

TEST_F(CheckAsm, F16ToF32) {
  for (int64_t n : {0, 16, 32, 4096})
    for (int64_t off : {0, 1}) {
      auto src = random_halves(rng, n + off, -70000.f, 70000.f);
      std::vector<float> dst(static_cast<size_t>(n + 1), kSentinel);
      CHECKED_CALL(magnetar_f16_to_f32_avx2, src.data() + off, dst.data(), n);
      ASSERT_EQ(dst.back(), kSentinel);
      for (int64_t i = 0; i < n; ++i)
        ASSERT_EQ(dst[static_cast<size_t>(i)], kernels::f16_to_f32_scalar(src[static_cast<size_t>(i + off)]));
    }
}

template <class W>
void check_pack(std::mt19937& rng) {
  for (int64_t kc : {8, 16, 64, 256})
    for (int64_t pad : {0, 3}) {
      const int64_t ldw = kc + pad;
      std::vector<W> w;
      if constexpr (sizeof(W) == 2)
        w = random_halves(rng, 16 * ldw + 1, -4.f, 4.f);
      else
        w = random_floats(rng, 16 * ldw + 1, -4.f, 4.f);
      std::vector<float> panel(static_cast<size_t>(16 * kc + 16), kSentinel);
      if constexpr (sizeof(W) == 2)
        CHECKED_CALL(magnetar_pack_f16_panel16_avx2, w.data() + 1, ldw, panel.data(), kc);
      else
        CHECKED_CALL(magnetar_pack_f32_panel16_avx2, w.data() + 1, ldw, panel.data(), kc);
      for (int64_t k = 0; k < kc; ++k)
        for (int64_t r = 0; r < 16; ++r) {
          const float want = weight_value(w[static_cast<size_t>(1 + r * ldw + k)]);
          ASSERT_EQ(panel[static_cast<size_t>(k * 16 + r)], want) << "kc=" << kc << " k=" << k << " r=" << r;
        }
      for (size_t i = static_cast<size_t>(16 * kc); i < panel.size(); ++i) ASSERT_EQ(panel[i], kSentinel);
    }
}

TEST_F(CheckAsm, PackPanels) {
  check_pack<uint16_t>(rng);
  check_pack<float>(rng);
}

TEST_F(CheckAsm, MatmulPanel16) {
  for (int64_t kc : {1, 2, 3, 4, 5, 7, 8, 255, 256})
    for (int64_t n_tokens : {0, 1, 2, 3, 4, 5, 6, 7, 11, 12, 13})
      for (int64_t accumulate : {0, 1}) {
        const int64_t ldx = kc + 3, ldy = 16 + 5;
        auto panel = random_floats(rng, 16 * kc, -1.f, 1.f);
        auto x = random_floats(rng, n_tokens * ldx + 1, -1.f, 1.f);
        auto y0 = random_floats(rng, n_tokens * ldy + 1, -1.f, 1.f);
        for (int64_t t = 0; t < n_tokens; ++t)
          for (int64_t r = 16; r < ldy; ++r) y0[static_cast<size_t>(t * ldy + r)] = kSentinel;
        y0.back() = kSentinel;
        std::vector<float> y(y0);
        CHECKED_CALL(magnetar_matmul_panel16_avx2, panel.data(), kc, x.data() + 1, ldx, y.data(), ldy,
                     n_tokens, accumulate);
        for (int64_t t = 0; t < n_tokens; ++t)
          for (int64_t r = 0; r < ldy; ++r) {
            const size_t i = static_cast<size_t>(t * ldy + r);
            if (r >= 16) {
              ASSERT_EQ(y[i], kSentinel) << "wrote into the ldy gap";
              continue;
            }
            double exact = accumulate ? y0[i] : 0.0, sum_abs = accumulate ? std::fabs(y0[i]) : 0.0;
            for (int64_t k = 0; k < kc; ++k) {
              const double p = static_cast<double>(panel[static_cast<size_t>(k * 16 + r)]) * x[static_cast<size_t>(1 + t * ldx + k)];
              exact += p;
              sum_abs += std::fabs(p);
            }
            ASSERT_NEAR(y[i], exact, matmul_budget(kc + 1, sum_abs))
                << "kc=" << kc << " tokens=" << n_tokens << " t=" << t << " r=" << r << " acc=" << accumulate;
          }
        ASSERT_EQ(y.back(), kSentinel);
      }
}

// The few-token products: every row count's pairs and odd last row, 1..4 tokens, padded strides,
// odd (unaligned) bases; y's gaps between tokens and around the call stay sentinels.
template <class W>
void check_matmul_rows(std::mt19937& rng) {
  for (int64_t cols : {8, 16, 64, 72, 264})
    for (int64_t rows : {0, 1, 2, 3, 4, 5, 9, 17})
      for (int64_t n_tokens : {1, 2, 3, 4})
        for (int64_t accumulate : {0, 1}) {
          const int64_t ldw = cols + 3, ldx = cols + 5, ldy = rows + 2;
          std::vector<W> w;
          if constexpr (sizeof(W) == 2)
            w = random_halves(rng, rows * ldw + 1, -1.f, 1.f);
          else
            w = random_floats(rng, rows * ldw + 1, -1.f, 1.f);
          auto x = random_floats(rng, n_tokens * ldx + 1, -1.f, 1.f);
          auto y0 = random_floats(rng, n_tokens * ldy + 2, -1.f, 1.f);
          for (int64_t t = 0; t < n_tokens; ++t)
            for (int64_t r = rows; r < ldy; ++r) y0[static_cast<size_t>(1 + t * ldy + r)] = kSentinel;
          y0.front() = kSentinel;
          y0.back() = kSentinel;
          std::vector<float> y(y0);
          if constexpr (sizeof(W) == 2)
            CHECKED_CALL(magnetar_matmul_rows_f16_avx2, w.data() + 1, ldw, x.data() + 1, ldx, y.data() + 1, ldy, rows,
                         cols, n_tokens, accumulate);
          else
            CHECKED_CALL(magnetar_matmul_rows_f32_avx2, w.data() + 1, ldw, x.data() + 1, ldx, y.data() + 1, ldy, rows,
                         cols, n_tokens, accumulate);
          ASSERT_EQ(y.front(), kSentinel);
          ASSERT_EQ(y.back(), kSentinel);
          for (int64_t t = 0; t < n_tokens; ++t)
            for (int64_t r = 0; r < ldy; ++r) {
              const size_t i = static_cast<size_t>(1 + t * ldy + r);
              if (r >= rows) {
                ASSERT_EQ(y[i], kSentinel) << "wrote into the ldy gap";
                continue;
              }
              double exact = accumulate ? y0[i] : 0.0, sum_abs = accumulate ? std::fabs(y0[i]) : 0.0;
              for (int64_t k = 0; k < cols; ++k) {
                const double p = static_cast<double>(weight_value(w[static_cast<size_t>(1 + r * ldw + k)])) *
                                  x[static_cast<size_t>(1 + t * ldx + k)];
                exact += p;
                sum_abs += std::fabs(p);
              }
              ASSERT_NEAR(y[i], exact, matmul_budget(cols + 1, sum_abs))
                  << "cols=" << cols << " rows=" << rows << " tokens=" << n_tokens << " t=" << t << " r=" << r
                  << " acc=" << accumulate;
            }
        }
}

TEST_F(CheckAsm, MatmulRows) {
  check_matmul_rows<float>(rng);
  check_matmul_rows<uint16_t>(rng);
}

TEST_F(CheckAsm, VectorOpsAgainstTwins) {
  const float eps = 1e-5f;
  for (int64_t n = 1; n <= 70; ++n)
    for (int64_t off : {0, 1, 3}) {
      auto x = random_floats(rng, n + off + 1, -5.f, 5.f);
      auto weight = random_floats(rng, n + off, 0.5f, 1.5f);
      x.back() = kSentinel;
      {  // rmsnorm
        std::vector<float> out(static_cast<size_t>(n + 1), kSentinel), want(static_cast<size_t>(n));
        CHECKED_CALL(magnetar_rmsnorm_avx2, out.data(), x.data() + off, weight.data() + off, n, &eps);
        kernels::ref::rmsnorm(want.data(), x.data() + off, weight.data() + off, n, &eps);
        ASSERT_EQ(out.back(), kSentinel);
        for (int64_t i = 0; i < n; ++i)
          ASSERT_NEAR(out[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 2 * rmsnorm_budget(n, want[static_cast<size_t>(i)]));
      }
      {  // softmax (in place)
        std::vector<float> s(x), want(x);
        CHECKED_CALL(magnetar_softmax_avx2, s.data() + off, n);
        kernels::ref::softmax(want.data() + off, n);
        ASSERT_EQ(s.back(), kSentinel);
        for (int64_t i = 0; i < off; ++i) ASSERT_EQ(s[static_cast<size_t>(i)], x[static_cast<size_t>(i)]);
        for (int64_t i = off; i < off + n; ++i)
          ASSERT_NEAR(s[static_cast<size_t>(i)], want[static_cast<size_t>(i)], 2 * softmax_budget(10.0, want[static_cast<size_t>(i)]));
      }
      for (int gelu = 0; gelu < 2; ++gelu) {  // gated activations (in place)
        std::vector<float> g(x), want(x);
        auto up = random_floats(rng, n + off, -2.f, 2.f);
        if (gelu) {
          CHECKED_CALL(magnetar_gelu_tanh_mul_avx2, g.data() + off, up.data() + off, n);
          kernels::ref::gelu_tanh_mul(want.data() + off, up.data() + off, n);
        } else {
          CHECKED_CALL(magnetar_silu_mul_avx2, g.data() + off, up.data() + off, n);
          kernels::ref::silu_mul(want.data() + off, up.data() + off, n);
        }
        ASSERT_EQ(g.back(), kSentinel);
        for (int64_t i = off; i < off + n; ++i) {
          const size_t j = static_cast<size_t>(i);
          ASSERT_NEAR(g[j], want[j], 2 * activation_budget(x[j], up[j], want[j])) << (gelu ? "gelu" : "silu");
        }
      }
    }
  for (int64_t head_dim : {2, 4, 6, 16, 18, 64, 128, 256})
    for (int64_t n_heads : {0, 1, 3}) {
      const int64_t half = head_dim / 2;
      auto q = random_floats(rng, n_heads * head_dim + 1, -3.f, 3.f);
      q.back() = kSentinel;
      auto cs = random_floats(rng, half, -1.f, 1.f), sn = random_floats(rng, half, -1.f, 1.f);
      std::vector<float> want(q);
      CHECKED_CALL(magnetar_rope_avx2, q.data(), n_heads, head_dim, cs.data(), sn.data());
      kernels::ref::rope(want.data(), n_heads, head_dim, cs.data(), sn.data());
      ASSERT_EQ(q.back(), kSentinel);
      for (size_t i = 0; i + 1 < q.size(); ++i) ASSERT_NEAR(q[i], want[i], rope_budget(3 * 1, 3 * 1)) << "hd=" << head_dim;
    }
}

TEST_F(CheckAsm, BenchmarkProbesMatchTwinsExactly) {
  for (int64_t n : {0, 64, 128, 4096}) {
    auto p = random_floats(rng, n + 1, -1.f, 1.f);
    float got[9], want[8];
    got[8] = kSentinel;
    CHECKED_CALL(magnetar_read_sum_avx2, p.data() + 1, n, got);
    kernels::ref::read_sum_f32(p.data() + 1, n, want);
    ASSERT_EQ(std::memcmp(got, want, sizeof want), 0) << "n=" << n;
    ASSERT_EQ(got[8], kSentinel);
  }
  const float coefficients[2] = {0.99f, 0.011f};
  for (int64_t iterations : {0, 1, 7, 1000}) {
    float got[9], want[8];
    got[8] = kSentinel;
    CHECKED_CALL(magnetar_fma_loop_avx2, iterations, coefficients, got);
    kernels::ref::fma_loop(iterations, coefficients, want);
    ASSERT_EQ(std::memcmp(got, want, sizeof want), 0) << "iterations=" << iterations;
    ASSERT_EQ(got[8], kSentinel);
  }
}

}  // namespace
}  // namespace magnetar::test
