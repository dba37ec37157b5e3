// K-quant integer kernels (asm/kquant_avx2.asm decode, asm/kquant_matmul_avx2.asm prefill): the
// Q8_K activation quantizer's rule, the asm against its C++ twin bit for bit (odd row counts,
// token counts around the prefill tile, several widths, misaligned weights, sentinel-guarded
// outputs and row strides, integer extremes), the callee-saved-register check through the
// checked-call trampoline (xmm6-15 too on Win64), the type record's drivers and the threaded ops
// against the per-token matvec twin, and the twins against the exact product of the dequantized
// weights.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "core/thread_pool.h"
#include "format/model_format.h"
#include "kernels/kernels.h"
#include "kernels/kquants.h"
#include "kernels/type_traits.h"
#include "ops/ops.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

struct KCase {
  format::DType dtype;
  MatvecKFn twin;
  MatvecKFn fast;
  MatmulKFn tile;  // the prefill kernel
  int64_t block_bytes;
  std::vector<int> scale_offsets;  // byte offsets of the FP16 scales inside a block
};

std::vector<KCase> cases() {
  return {{format::DType::Q4_K, matvec_q4_k_ref, magnetar_matvec_q4_k_avx2, magnetar_matmul_q4_k_avx2, 144, {0, 2}},
          {format::DType::Q5_K, matvec_q5_k_ref, magnetar_matvec_q5_k_avx2, magnetar_matmul_q5_k_avx2, 176, {0, 2}},
          {format::DType::Q6_K, matvec_q6_k_ref, magnetar_matvec_q6_k_avx2, magnetar_matmul_q6_k_avx2, 210, {208}},
          {format::DType::IQ4_XS, matvec_iq4_xs_ref, magnetar_matvec_iq4_xs_avx2, magnetar_matmul_iq4_xs_avx2, 136,
           {0}}};
}

std::vector<uint8_t> make_blocks(const KCase& c, int64_t rows, int64_t cols, std::mt19937& rng, bool extreme) {
  return make_k_blocks(c.block_bytes, c.scale_offsets, rows, cols, rng, extreme);
}

// n_tokens activations of cols values each, quantized, back to back.
std::vector<ActBlockK> quantized_activation(int64_t cols, std::mt19937& rng, bool extreme, int64_t n_tokens = 1) {
  std::vector<ActBlockK> out(size_t(n_tokens * cols / kSuperBlock));
  for (int64_t t = 0; t < n_tokens; ++t) {
    std::vector<float> x = make_activation(cols, rng);
    if (extreme)
      for (size_t i = 0; i < x.size(); ++i) x[i] = (i + size_t(t)) % 2 ? 1.0f : -1.0f;  // q = +-127 everywhere
    quantize_act_k_ref(x.data(), out.data() + t * (cols / kSuperBlock), cols);
  }
  return out;
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

// With max = -127 the scale is exactly 1, so x = k + 0.5 lands on the halves: round half to even,
// as GGML's nearest_int; and the non-finite inputs: an inf maximum (scale -0), NaN values (q = 0).
TEST(KQuantActivation, RoundsHalvesToEvenAndHandlesNonFinite) {
  std::vector<float> x(256);
  for (int i = 0; i < 256; ++i) x[size_t(i)] = float(i % 2 ? -1 : 1) * (float(i / 2 % 127) + 0.5f);  // |x| < 127
  x[0] = -127.0f;
  std::vector<ActBlockK> q(1);
  quantize_act_k_ref(x.data(), q.data(), 256);
  EXPECT_EQ(q[0].d, 1.0f);
  for (int i = 1; i < 256; ++i) {
    const float want = std::nearbyint(x[size_t(i)]);
    EXPECT_EQ(q[0].qs[i], want >= 127.0f ? 127 : want <= -127.0f ? -127 : int(want)) << x[size_t(i)];
  }
  std::fill(x.begin(), x.end(), 1.0f);
  x[7] = -INFINITY;  // scale -127 / -inf = +0: every q is 0 (inf * 0 and NaN * 0 are NaN: 0 too)
  x[9] = NAN;
  quantize_act_k_ref(x.data(), q.data(), 256);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(q[0].qs[i], 0) << i;
  std::fill(x.begin(), x.end(), 0.0f);
  x[3] = std::numeric_limits<float>::denorm_min();  // scale -inf: q = -127 there, NaN (0) elsewhere
  quantize_act_k_ref(x.data(), q.data(), 256);
  for (int i = 0; i < 256; ++i) EXPECT_EQ(q[0].qs[i], i == 3 ? -127 : 0) << i;
}

class KQuantAsm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernels::asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C: only the reference twins run here";
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
    expect_callee_saved_preserved(c.fast, w.data() + 2, x.data(), rows, cols);
  }
}

TEST_F(KQuantAsm, MatmulMatchesPerTokenTwinBitExact) {
  for (const KCase& c : cases()) {
    SCOPED_TRACE(format::dtype_name(c.dtype));
    std::mt19937 rng(59);
    for (bool extreme : {false, true})
      for (int64_t rows : {1, 2, 3, 5, 8, 17})
        for (int64_t cols : {256, 768, 1280})
          for (int64_t n_tokens = 0; n_tokens <= kKTileTokens + 3; ++n_tokens) {
            const int64_t y_stride = rows + (n_tokens % 3);  // outputs packed, or with a gap
            const std::vector<uint8_t> w = make_blocks(c, rows, cols, rng, extreme);
            const std::vector<ActBlockK> x = quantized_activation(cols, rng, extreme, std::max<int64_t>(n_tokens, 1));
            std::vector<float> want = sentinel_outputs(rows, n_tokens, y_stride), got = want;
            matmul_k_ref(c.twin, w.data() + 2, x.data(), want.data(), rows, cols, n_tokens, y_stride);
            c.tile(w.data() + 2, x.data(), got.data(), rows, cols, n_tokens, y_stride);
            expect_outputs(got, want, rows, n_tokens, y_stride,
                           "rows " + std::to_string(rows) + " cols " + std::to_string(cols) + " tokens " +
                               std::to_string(n_tokens) + (extreme ? " (extreme)" : ""));
          }
  }
}

TEST_F(KQuantAsm, MatmulZeroRowsWritesNothing) {
  std::mt19937 rng(61);
  for (const KCase& c : cases()) {
    const std::vector<uint8_t> w = make_blocks(c, 1, 256, rng, false);
    const std::vector<ActBlockK> x = quantized_activation(256, rng, false, 3);
    std::vector<float> y(kGuard, kSentinel);
    c.tile(w.data() + 2, x.data(), y.data(), 0, 256, 3, 1);
    expect_sentinels(y, 0);
  }
}

TEST_F(KQuantAsm, MatmulCalleeSavedRegistersPreserved) {
  std::mt19937 rng(67);
  for (const KCase& c : cases()) {
    SCOPED_TRACE(format::dtype_name(c.dtype));
    const int64_t rows = 3, cols = 512;
    for (int64_t n_tokens : {int64_t{5}, kKTileTokens + 3}) {
      const std::vector<uint8_t> w = make_blocks(c, rows, cols, rng, false);
      const std::vector<ActBlockK> x = quantized_activation(cols, rng, false, n_tokens);
      expect_callee_saved_preserved(c.tile, w.data() + 2, x.data(), rows, cols, n_tokens, rows);
    }
  }
}

// The type record's AVX2 entry (FP32 activations converted by its quantizer, and pre-quantized
// ones; decode for one token) and the threaded ops: row
// chunks, token groups of the tile, the matvec for the tokens left; each output the per-token
// twin's bit for bit.
TEST_F(KQuantAsm, DriversMatchPerTokenTwinBitExact) {
  std::mt19937 rng(71);
  for (const KCase& c : cases()) {
    SCOPED_TRACE(format::dtype_name(c.dtype));
    const TypeTraits& traits = type_traits(c.dtype);
    ASSERT_NE(traits.avx2.prefill, nullptr);
    ASSERT_EQ(traits.avx2.act, kernels::ActFormat::Q8_K);
    const int64_t rows = 83, cols = 2304;  // 2304-column rows: several row chunks of the driver
    const std::vector<uint8_t> w = make_blocks(c, rows, cols, rng, false);
    for (int64_t n_tokens : {int64_t{1}, int64_t{3}, kKTileTokens - 1, kKTileTokens, kKTileTokens + 3,
                             kKTileTokens + 4, 3 * kKTileTokens + 5}) {
      std::vector<float> x(size_t(n_tokens * cols));
      for (int64_t t = 0; t < n_tokens; ++t) {
        const std::vector<float> token = make_activation(cols, rng);
        std::copy(token.begin(), token.end(), x.begin() + t * cols);
      }
      std::vector<ActBlockK> xq(size_t(n_tokens * cols / kSuperBlock));
      for (int64_t t = 0; t < n_tokens; ++t) quantize_act_k_ref(&x[size_t(t * cols)], &xq[size_t(t * cols / kSuperBlock)], cols);
      const int64_t y_stride = rows + 5;
      std::vector<float> want = sentinel_outputs(rows, n_tokens, y_stride);
      matmul_k_ref(c.twin, w.data() + 2, xq.data(), want.data(), rows, cols, n_tokens, y_stride);
      const std::string what = "tokens " + std::to_string(n_tokens);
      std::vector<float> got = sentinel_outputs(rows, n_tokens, y_stride);
      run_entry(traits.avx2, w.data() + 2, x.data(), got.data(), rows, cols, n_tokens, y_stride);
      expect_outputs(got, want, rows, n_tokens, y_stride, "avx2 entry on FP32 " + what);
      got = sentinel_outputs(rows, n_tokens, y_stride);
      traits.avx2.prefill(w.data() + 2, xq.data(), got.data(), rows, cols, n_tokens, y_stride);
      expect_outputs(got, want, rows, n_tokens, y_stride, "avx2 prefill " + what);
      if (n_tokens == 1) {
        got = sentinel_outputs(rows, n_tokens, y_stride);
        traits.avx2.decode(w.data() + 2, xq.data(), got.data(), rows, cols);
        expect_outputs(got, want, rows, n_tokens, y_stride, "avx2 decode " + what);
      }
      const ops::Matrix m{w.data() + 2, c.dtype, rows, cols};
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        std::vector<float> y = sentinel_outputs(rows, n_tokens, rows);
        std::vector<float> packed = sentinel_outputs(rows, n_tokens, rows);
        for (int64_t t = 0; t < n_tokens; ++t)
          std::memcpy(&packed[size_t(t * rows)], &want[size_t(t * y_stride)], size_t(rows) * sizeof(float));
        ops::matmul(pool, m, x.data(), n_tokens, y.data());
        expect_outputs(y, packed, rows, n_tokens, rows, "ops::matmul, threads " + std::to_string(threads) + ", " + what);
      }
    }
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
