// K-quant integer kernels (asm/kquant_avx2.asm): the Q8_K activation quantizer's rule, the asm
// against its C++ twin bit for bit (odd row counts, several widths, misaligned weights, sentinel-
// guarded outputs, integer extremes), the callee-saved-register check through the checked-call
// trampoline, and the twins against the exact product of the dequantized weights.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "format/model_format.h"
#include "kernels/kernels.h"
#include "kernels/kquants.h"
#include "kernels/type_traits.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

struct KCase {
  format::DType dtype;
  MatvecKFn twin;
  MatvecKFn fast;
  int64_t block_bytes;
  std::vector<int> scale_offsets;  // byte offsets of the FP16 scales inside a block
};

std::vector<KCase> cases() {
  return {{format::DType::Q4_K, matvec_q4_k_ref, magnetar_matvec_q4_k_avx2, 144, {0, 2}},
          {format::DType::Q5_K, matvec_q5_k_ref, magnetar_matvec_q5_k_avx2, 176, {0, 2}},
          {format::DType::Q6_K, matvec_q6_k_ref, magnetar_matvec_q6_k_avx2, 210, {208}},
          {format::DType::IQ4_XS, matvec_iq4_xs_ref, magnetar_matvec_iq4_xs_avx2, 136, {0}}};
}

std::vector<uint8_t> make_blocks(const KCase& c, int64_t rows, int64_t cols, std::mt19937& rng, bool extreme) {
  return make_k_blocks(c.block_bytes, c.scale_offsets, rows, cols, rng, extreme);
}

std::vector<ActBlockK> quantized_activation(int64_t cols, std::mt19937& rng, bool extreme) {
  return make_k_activation(cols, rng, extreme);
}

TEST(KQuantActivation, FollowsGgmlQ8KRule) {
  std::mt19937 rng(5);
  std::vector<float> x = make_activation(512, rng);
  std::fill(x.begin() + 256, x.end(), 0.0f);
  x[300] = -2.5f;  // the extreme is -127 whatever its sign: here d > 0 (a positive one gives d < 0)
  std::vector<ActBlockK> q(2);
  quantize_act_k_ref(x.data(), q.data(), 512);
  for (int b = 0; b < 2; ++b) {
    float max = 0;
    for (int i = 0; i < 256; ++i)
      if (std::fabs(x[b * 256 + i]) > std::fabs(max)) max = x[b * 256 + i];
    EXPECT_EQ(q[b].d, 1.0f / (-127.0f / max));
    for (int i = 0; i < 256; ++i) {
      EXPECT_EQ(q[b].qs[i], int(std::nearbyint(x[b * 256 + i] * (-127.0f / max)))) << b << " " << i;
    }
    for (int j = 0; j < 16; ++j) {
      int sum = 0;
      for (int i = 0; i < 16; ++i) sum += q[b].qs[16 * j + i];
      EXPECT_EQ(q[b].bsums[j], sum);
    }
  }
  EXPECT_EQ(q[1].qs[300 - 256], -127);
  EXPECT_GT(q[1].d, 0.0f);
}

class KQuantAsm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C: only the reference twins run here";
  }
};

TEST_F(KQuantAsm, MatvecMatchesTwinBitExact) {
  for (const KCase& c : cases()) {
    SCOPED_TRACE(format::dtype_name(c.dtype));
    std::mt19937 rng(41);
    for (bool extreme : {false, true})
      for (int64_t rows : {1, 2, 3, 7, 16, 33})
        for (int64_t cols : {256, 512, 2304}) {
          const std::vector<uint8_t> w = make_blocks(c, rows, cols, rng, extreme);
          const std::vector<ActBlockK> x = quantized_activation(cols, rng, extreme);
          std::vector<float> want(size_t(rows + kGuard), kSentinel), got(size_t(rows + kGuard), kSentinel);
          c.twin(w.data() + 2, x.data(), want.data(), rows, cols);
          c.fast(w.data() + 2, x.data(), got.data(), rows, cols);
          for (int64_t r = 0; r < rows; ++r)
            ASSERT_EQ(std::memcmp(&got[size_t(r)], &want[size_t(r)], 4), 0)
                << "rows " << rows << " cols " << cols << " row " << r << ": " << got[size_t(r)] << " vs "
                << want[size_t(r)] << (extreme ? " (extreme)" : "");
          expect_sentinels(got, rows);
        }
  }
}

TEST_F(KQuantAsm, ZeroRowsWritesNothing) {
  std::mt19937 rng(43);
  for (const KCase& c : cases()) {
    const std::vector<uint8_t> w = make_blocks(c, 1, 256, rng, false);
    const std::vector<ActBlockK> x = quantized_activation(256, rng, false);
    std::vector<float> y(kGuard, kSentinel);
    c.fast(w.data() + 2, x.data(), y.data(), 0, 256);
    expect_sentinels(y, 0);
  }
}

TEST_F(KQuantAsm, CalleeSavedRegistersPreserved) {
  std::mt19937 rng(47);
  for (const KCase& c : cases()) {
    SCOPED_TRACE(format::dtype_name(c.dtype));
    const int64_t rows = 5, cols = 512;
    const std::vector<uint8_t> w = make_blocks(c, rows, cols, rng, false);
    const std::vector<ActBlockK> x = quantized_activation(cols, rng, false);
    std::vector<float> direct(rows), checked(rows);
    c.fast(w.data() + 2, x.data(), direct.data(), rows, cols);
    EXPECT_EQ(checked_call(reinterpret_cast<const void*>(c.fast),
                           {as_arg(w.data() + 2), as_arg(x.data()), as_arg(checked.data()), rows, cols}),
              0u)
        << "bit mask of clobbered callee-saved registers";
    EXPECT_EQ(direct, checked);
  }
}

// The twin's integer sums and scales against the exact product of the dequantized weights and the
// dequantized activation (q * d): only float rounding separates them.
TEST(KQuantTwin, MatchesTheDequantizedProduct) {
  std::mt19937 rng(53);
  for (const KCase& c : cases()) {
    SCOPED_TRACE(format::dtype_name(c.dtype));
    const int64_t rows = 9, cols = 1024;
    const std::vector<uint8_t> w = make_blocks(c, rows, cols, rng, false);
    const std::vector<ActBlockK> x = quantized_activation(cols, rng, false);
    std::vector<float> y(static_cast<size_t>(rows)), row(static_cast<size_t>(cols));
    c.twin(w.data() + 2, x.data(), y.data(), rows, cols);
    const int64_t row_bytes = cols / kSuperBlock * c.block_bytes;
    for (int64_t r = 0; r < rows; ++r) {
      type_traits(c.dtype).dequantize_row(w.data() + 2 + r * row_bytes, row.data(), cols);
      double exact = 0, magnitude = 0;
      for (int64_t i = 0; i < cols; ++i) {
        const double term = double(row[size_t(i)]) * x[size_t(i / 256)].qs[i % 256] * x[size_t(i / 256)].d;
        exact += term;
        magnitude += std::fabs(term);
      }
      EXPECT_NEAR(y[size_t(r)], exact, 1e-5 * magnitude + 1e-12) << "row " << r;
    }
  }
}

}  // namespace
}  // namespace magnetar::quant
