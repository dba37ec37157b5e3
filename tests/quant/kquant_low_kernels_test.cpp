// Low-bit integer kernels (asm/kquant_low_avx2.asm: Q2_K, Q3_K, IQ4_NL, Q4_1, Q5_0, Q5_1), checkasm
// style: every asm kernel called directly through the checked-call trampoline (callee-saved
// registers, xmm6-15 on Win64) against its twin bit for bit, on odd row counts, rows of one to
// many blocks, weights at odd byte offsets, sentinels on both sides of y and blocks at the integer
// extremes; the twins against the exact product and the dequantizing reference matmul; and each
// type record's asm matmul against the twin per token and the float path within the activation
// quantization's own error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "format/model_format.h"
#include "kernels/kernels.h"
#include "kernels/kquant_low.h"
#include "kernels/type_traits.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

template <class Act>
using MatvecFn = void (*)(const void* w, const Act* x, float* y, int64_t rows, int64_t cols);

template <class Act>
struct LowCase {
  format::DType dtype;
  MatvecFn<Act> twin, fast;
  std::vector<int> half_offsets;  // byte offsets of the FP16 scales (d, dmin / m) in a block
};

std::vector<LowCase<ActBlockK>> k_cases() {
  return {{format::DType::Q2_K, matvec_q2_k_ref, magnetar_matvec_q2_k_avx2, {80, 82}},
          {format::DType::Q3_K, matvec_q3_k_ref, magnetar_matvec_q3_k_avx2, {108}}};
}
std::vector<LowCase<ActBlock>> b32_cases() {
  return {{format::DType::IQ4_NL, matvec_iq4_nl_ref, magnetar_matvec_iq4_nl_avx2, {0}},
          {format::DType::Q4_1, matvec_q4_1_ref, magnetar_matvec_q4_1_avx2, {0, 2}},
          {format::DType::Q5_0, matvec_q5_0_ref, magnetar_matvec_q5_0_avx2, {0}},
          {format::DType::Q5_1, matvec_q5_1_ref, magnetar_matvec_q5_1_avx2, {0, 2}}};
}

template <class Act>
constexpr int64_t kValues = sizeof(Act::qs);  // values per activation (and weight) block

void quantize(const float* x, ActBlockK* out, int64_t n) { quantize_act_k_ref(x, out, n); }
void quantize(const float* x, ActBlock* out, int64_t n) { quantize_act_ref(x, out, n); }

// How the blocks' bytes are chosen: random, or every byte one value (0x00 / 0xff: the smallest and
// largest quants and scales) with FP16 scales of 1, the integer extremes of each kernel.
enum class Fill { Random, Zeros, Ones };

// [rows, cols / block] blocks starting `offset` bytes into their storage.
template <class Act>
std::vector<uint8_t> make_blocks(const LowCase<Act>& c, int64_t rows, int64_t cols, int64_t offset, Fill fill,
                                 std::mt19937& rng) {
  const int64_t block_bytes = int64_t(format::dtype_layout(c.dtype).block_bytes);
  const int64_t n = rows * cols / kValues<Act>;
  std::vector<uint8_t> storage(size_t(n * block_bytes + offset));
  std::uniform_int_distribution<int> byte(0, 255);
  std::uniform_real_distribution<float> scale(-0.01f, 0.01f);
  for (size_t i = size_t(offset); i < storage.size(); ++i)
    storage[i] = fill == Fill::Random ? uint8_t(byte(rng)) : fill == Fill::Ones ? 0xff : 0x00;
  for (int64_t b = 0; b < n; ++b)
    for (int at : c.half_offsets) {
      const uint16_t h = kernels::f32_to_f16_scalar(fill == Fill::Random ? scale(rng) : 1.0f);
      std::memcpy(storage.data() + offset + b * block_bytes + at, &h, 2);
    }
  return storage;
}

// Quantized activation; at the extremes every value is +-127 (more positive than negative, so the
// sums that carry offsets and mins are far from 0).
template <class Act>
std::vector<Act> make_act(int64_t cols, Fill fill, std::mt19937& rng) {
  std::vector<float> x = make_activation(cols, rng);
  if (fill != Fill::Random)
    for (size_t i = 0; i < x.size(); ++i) x[i] = i % 3 ? 1.0f : -1.0f;
  std::vector<Act> out(size_t(cols / kValues<Act>));
  quantize(x.data(), out.data(), cols);
  return out;
}

template <class Act>
std::vector<float> dequantized(const std::vector<Act>& x) {
  std::vector<float> out(x.size() * size_t(kValues<Act>));
  for (size_t i = 0; i < out.size(); ++i) out[i] = float(x[i / kValues<Act>].qs[i % kValues<Act>]) * x[i / kValues<Act>].d;
  return out;
}

class KQuantLowAsm : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernels::asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C: only the reference twins run here";
  }
};

template <class Act>
void check_against_twin(const LowCase<Act>& c, const std::vector<int64_t>& col_counts) {
  SCOPED_TRACE(format::dtype_name(c.dtype));
  std::mt19937 rng(41);
  int64_t offset = 0;
  for (Fill fill : {Fill::Random, Fill::Zeros, Fill::Ones})
    for (int64_t rows : {0, 1, 2, 3, 5, 7, 16, 33})
      for (int64_t cols : col_counts) {
        offset = offset % 3 + 1;  // 1, 2, 3: never aligned for the block struct
        const std::vector<uint8_t> w = make_blocks(c, rows, cols, offset, fill, rng);
        const std::vector<Act> x = make_act<Act>(cols, fill, rng);
        std::vector<float> want(static_cast<size_t>(rows)), got(static_cast<size_t>(rows + 2 * kGuard), kSentinel);
        c.twin(w.data() + offset, x.data(), want.data(), rows, cols);
        float* y = got.data() + kGuard;
        ASSERT_EQ(checked_call(reinterpret_cast<const void*>(c.fast),
                               {as_arg(w.data() + offset), as_arg(x.data()), as_arg(y), rows, cols}),
                  0u)
            << "bit mask of clobbered callee-saved registers";
        for (int64_t r = 0; r < rows; ++r)
          ASSERT_EQ(std::memcmp(&y[r], &want[size_t(r)], 4), 0)
              << "rows " << rows << " cols " << cols << " row " << r << " fill " << int(fill) << ": " << y[r]
              << " vs " << want[size_t(r)];
        for (int64_t i = 0; i < kGuard; ++i) ASSERT_EQ(got[size_t(i)], kSentinel) << "write before y";
        for (int64_t i = kGuard + rows; i < int64_t(got.size()); ++i) ASSERT_EQ(got[size_t(i)], kSentinel) << "write past y";
      }
}

TEST_F(KQuantLowAsm, SuperBlockTypesMatchTwinBitExact) {
  for (const auto& c : k_cases()) check_against_twin(c, {256, 512, 1280, 2304});
}

TEST_F(KQuantLowAsm, ThirtyTwoValueTypesMatchTwinBitExact) {
  for (const auto& c : b32_cases()) check_against_twin(c, {32, 64, 96, 288, 2080});
}

// Relative bound of the twin against exact arithmetic on the same dequantized values: FP16 scale
// products, one fma per block and lane, the lane tree, and the dequantizer's own roundings, each a
// few 2^-24 of the row's sum of |terms| per block.
double twin_budget(int64_t blocks, double magnitude) { return 4.0 * double(FLT_EPSILON) * double(blocks + 16) * magnitude + 1e-30; }

// The twins' integer sums and scales against the dequantized weights times the dequantized
// activation (q * d): exactly in double, and through the type's dequantizing reference matmul.
template <class Act>
void check_twin_against_dequantized(const LowCase<Act>& c) {
  SCOPED_TRACE(format::dtype_name(c.dtype));
  std::mt19937 rng(53);
  const int64_t rows = 9, cols = 4 * 256, blocks = cols / kValues<Act>;
  const std::vector<uint8_t> w = make_blocks(c, rows, cols, 2, Fill::Random, rng);
  const std::vector<Act> x = make_act<Act>(cols, Fill::Random, rng);
  const std::vector<float> xf = dequantized(x);
  std::vector<float> y(static_cast<size_t>(rows)), via_dequant(static_cast<size_t>(rows)), row(static_cast<size_t>(cols));
  c.twin(w.data() + 2, x.data(), y.data(), rows, cols);
  const TypeTraits& traits = type_traits(c.dtype);
  traits.reference.prefill(w.data() + 2, xf.data(), via_dequant.data(), rows, cols, 1, rows);
  const int64_t row_bytes = int64_t(format::tensor_bytes(c.dtype, 1, uint64_t(cols)));
  for (int64_t r = 0; r < rows; ++r) {
    traits.dequantize_row(w.data() + 2 + r * row_bytes, row.data(), cols);
    double exact = 0, magnitude = 0;
    for (int64_t i = 0; i < cols; ++i) {
      exact += double(row[size_t(i)]) * xf[size_t(i)];
      magnitude += std::fabs(double(row[size_t(i)]) * xf[size_t(i)]);
    }
    EXPECT_NEAR(y[size_t(r)], exact, twin_budget(blocks, magnitude)) << "row " << r;
    EXPECT_NEAR(y[size_t(r)], via_dequant[size_t(r)], 2 * twin_budget(blocks, magnitude)) << "row " << r;
  }
}

TEST(KQuantLowTwin, MatchesTheDequantizedProduct) {
  for (const auto& c : k_cases()) check_twin_against_dequantized(c);
  for (const auto& c : b32_cases()) check_twin_against_dequantized(c);
}

// The record's AVX2 entry (activations quantized per call, rows in L2-sized chunks, every token):
// each output bit for bit the twin's on that token's quantized activation, nothing written
// between the rows of y_stride, and within the activation rounding (|x - q d| <= |d| / 2 per
// value) of the float path on the same weights.
template <class Act>
void check_record(const LowCase<Act>& c, int64_t cols) {
  SCOPED_TRACE(format::dtype_name(c.dtype));
  std::mt19937 rng(59);
  const int64_t rows = 200, tokens = 3, stride = rows + 5, blocks = cols / kValues<Act>;
  const TypeTraits& traits = type_traits(c.dtype);
  ASSERT_NE(traits.avx2.prefill, nullptr);
  const std::vector<uint8_t> w = make_blocks(c, rows, cols, 1, Fill::Random, rng);
  std::vector<float> x(size_t(tokens * cols));
  for (int64_t t = 0; t < tokens; ++t) {
    const std::vector<float> xt = make_activation(cols, rng);
    std::copy(xt.begin(), xt.end(), x.begin() + t * cols);
  }
  std::vector<float> y(size_t(tokens * stride), kSentinel), y_float(size_t(tokens * stride));
  run_entry(traits.avx2, w.data() + 1, x.data(), y.data(), rows, cols, tokens, stride);
  traits.reference.prefill(w.data() + 1, x.data(), y_float.data(), rows, cols, tokens, stride);
  const int64_t row_bytes = int64_t(format::tensor_bytes(c.dtype, 1, uint64_t(cols)));
  std::vector<float> row(static_cast<size_t>(cols)), want(static_cast<size_t>(rows));
  for (int64_t t = 0; t < tokens; ++t) {
    std::vector<Act> xq(static_cast<size_t>(blocks));
    quantize(x.data() + t * cols, xq.data(), cols);
    c.twin(w.data() + 1, xq.data(), want.data(), rows, cols);
    for (int64_t r = 0; r < rows; ++r) {
      const float got = y[size_t(t * stride + r)];
      ASSERT_EQ(std::memcmp(&got, &want[size_t(r)], 4), 0) << "token " << t << " row " << r;
      traits.dequantize_row(w.data() + 1 + r * row_bytes, row.data(), cols);
      double rounding = 0, magnitude = 0;
      for (int64_t i = 0; i < cols; ++i) {
        rounding += 0.5 * std::fabs(double(row[size_t(i)]) * xq[size_t(i / kValues<Act>)].d);
        magnitude += std::fabs(double(row[size_t(i)]) * x[size_t(t * cols + i)]);
      }
      EXPECT_NEAR(got, y_float[size_t(t * stride + r)], rounding * (1 + 1e-3) + 2 * twin_budget(blocks, magnitude))
          << "token " << t << " row " << r;
    }
    for (int64_t r = rows; r < stride; ++r) ASSERT_EQ(y[size_t(t * stride + r)], kSentinel) << "wrote into the stride gap";
  }
}

TEST_F(KQuantLowAsm, TypeRecordsRunTheAsmPerToken) {
  for (const auto& c : k_cases()) check_record(c, 2304);
  for (const auto& c : b32_cases()) check_record(c, 2080);
}

}  // namespace
}  // namespace magnetar::quant
