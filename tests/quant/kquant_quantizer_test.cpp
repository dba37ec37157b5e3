// Quantizers into Q4_K / Q5_K / Q6_K (Magnetar's scale search) and Q5_0 / Q5_1 (GGML's rule):
// rows round-trip through the golden-tested dequantizers within stated RMS bounds, on random
// rows and on real weights (the tiny Gemma F32 GGUF), where the error is also compared with
// llama.cpp's own quantization of the same tensors; odd inputs (zeros, constants, huge, tiny,
// NaN / inf) stay finite and bounded.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "common/testdata.h"
#include "convert/gguf_reader.h"
#include "format/model_format.h"
#include "kernels/kquants.h"
#include "kernels/type_traits.h"

namespace magnetar::quant {
namespace {

using format::DType;

// Quantizes n values (whole blocks) with the type's record and dequantizes them back.
std::vector<float> round_trip(DType type, const std::vector<float>& x) {
  const TypeTraits& t = type_traits(type);
  const int64_t n = int64_t(x.size());
  // One extra byte in front: the quantizer and dequantizer must not need aligned blocks.
  std::vector<uint8_t> blocks(format::tensor_bytes(type, 1, uint64_t(n)) + 1);
  t.quantize_row(x.data(), blocks.data() + 1, n);
  std::vector<float> y(x.size());
  t.dequantize_row(blocks.data() + 1, y.data(), n);
  return y;
}

double rms(const std::vector<float>& x) {
  double s = 0;
  for (float v : x) s += double(v) * v;
  return std::sqrt(s / double(x.size()));
}

// RMS of (y − x) over RMS of x.
double relative_rms_error(const std::vector<float>& x, const std::vector<float>& y) {
  double s = 0;
  for (size_t i = 0; i < x.size(); ++i) s += (double(y[i]) - x[i]) * (double(y[i]) - x[i]);
  return std::sqrt(s / double(x.size())) / rms(x);
}

// Weight-like rows: normal values whose scale and offset change every 32 values (what makes
// sub-block scales and mins matter), plus a few outliers.
std::vector<float> weight_like_row(int64_t n, std::mt19937& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> uniform(0.2f, 2.0f);
  std::vector<float> x(static_cast<size_t>(n));
  for (int64_t g = 0; g < n; g += 32) {
    const float scale = 0.02f * uniform(rng), offset = 0.01f * normal(rng);
    for (int64_t i = g; i < g + 32; ++i) x[size_t(i)] = offset + scale * normal(rng);
  }
  for (int k = 0; k < 4; ++k) x[size_t(rng() % uint32_t(n))] *= 8.0f;
  return x;
}

struct Bound {
  DType type;
  double max_relative_rms;
};

// Relative RMS error measured on this data (64 rows of 1024): Q4_0 0.114, Q4_K 0.0773,
// Q5_0 0.0580, Q5_1 0.0404, Q5_K 0.0389, Q6_K 0.0220, Q8_0 0.0071. Bounds about 12% above.
const Bound kBounds[] = {{DType::Q4_K, 0.087}, {DType::Q5_K, 0.044}, {DType::Q6_K, 0.0246},
                         {DType::Q5_0, 0.065}, {DType::Q5_1, 0.046}};

TEST(KQuantQuantizer, RandomRowsRoundTripWithinTheStatedBound) {
  std::mt19937 rng(1234);
  std::vector<float> x;
  for (int r = 0; r < 64; ++r) {
    const std::vector<float> row = weight_like_row(1024, rng);
    x.insert(x.end(), row.begin(), row.end());
  }
  double error[format::kDTypeCount] = {};
  for (DType type : {DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q5_0, DType::Q5_1})
    error[uint32_t(type)] = relative_rms_error(x, round_trip(type, x));
  for (const Bound& b : kBounds) {
    SCOPED_TRACE(format::dtype_name(b.type));
    EXPECT_LT(error[uint32_t(b.type)], b.max_relative_rms);
  }
  // Each K-quant beats the block type of its size class.
  EXPECT_LT(error[uint32_t(DType::Q4_K)], 0.8 * error[uint32_t(DType::Q4_0)]);
  EXPECT_LT(error[uint32_t(DType::Q5_K)], error[uint32_t(DType::Q5_1)]);
  EXPECT_LT(error[uint32_t(DType::Q5_K)], error[uint32_t(DType::Q4_K)]);
  EXPECT_LT(error[uint32_t(DType::Q6_K)], error[uint32_t(DType::Q5_K)]);
  EXPECT_GT(error[uint32_t(DType::Q6_K)], error[uint32_t(DType::Q8_0)]);  // 6.56 vs 8.5 bits
}

// Real weights: every matrix of the tiny Gemma F32 GGUF, quantized by Magnetar and (in the
// K-quant GGUFs shipped beside it) by llama.cpp's llama-quantize from the same F32 values.
TEST(KQuantQuantizer, RealWeightsAreAsCloseAsLlamaCppQuantization) {
  const char kDir[] = "gguf-kquants";
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  const std::string f32_bytes = test::read_file(test::testdata_path(std::string(kDir) + "/tiny-gemma-f32.gguf"));
  gguf::File f32;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(f32_bytes.data()), f32_bytes.size(), &f32).is_ok());
  int compared = 0;
  for (const char* stem : {"tiny-gemma-Q4_K_M", "tiny-gemma-Q5_K_M", "tiny-gemma-Q6_K"}) {
    const std::string q_bytes = test::read_file(test::testdata_path(std::string(kDir) + "/" + stem + ".gguf"));
    gguf::File q;
    ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(q_bytes.data()), q_bytes.size(), &q).is_ok());
    for (const gguf::Tensor& t : q.tensors) {
      DType type;
      if (!format::dtype_from_ggml(t.ggml_type, &type) || !format::dtype_is_quantized(type)) continue;
      const gguf::Tensor* source = nullptr;
      for (const gguf::Tensor& s : f32.tensors) source = s.name == t.name ? &s : source;
      ASSERT_NE(source, nullptr);
      const uint64_t cols = t.ne[0], rows = t.n_elements / cols;
      std::vector<float> x(size_t(t.n_elements)), theirs(x.size());
      std::memcpy(x.data(), source->data, x.size() * 4);
      const uint64_t row_bytes = format::tensor_bytes(type, 1, cols);
      for (uint64_t r = 0; r < rows; ++r)
        type_traits(type).dequantize_row(t.data + r * row_bytes, theirs.data() + r * cols, int64_t(cols));
      const double ours_error = relative_rms_error(x, round_trip(type, x));
      const double theirs_error = relative_rms_error(x, theirs);
      SCOPED_TRACE(std::string(stem) + " " + std::string(t.name) + " " + format::dtype_name(type));
      // Measured: ours / llama.cpp's 0.996-1.005 (Q4_K), 0.990-0.998 (Q5_K), 0.956-0.964 (Q6_K).
      EXPECT_LT(ours_error, 1.02 * theirs_error);
      ++compared;
    }
  }
  EXPECT_GE(compared, 20);
}

TEST(KQuantQuantizer, ZeroAndConstantRowsAreExactOrNearlySo) {
  for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::Q5_0, DType::Q5_1}) {
    SCOPED_TRACE(format::dtype_name(type));
    const std::vector<float> zeros(512, 0.0f);
    EXPECT_EQ(round_trip(type, zeros), zeros);
    for (float c : {0.75f, -0.3f, 0.02f, -42.0f}) {  // Q6_K: d = c / 4096 must stay a normal half
      const std::vector<float> constant(512, c);
      for (float v : round_trip(type, constant)) ASSERT_NEAR(v, c, std::fabs(c) * 4e-3f) << c;  // FP16 scales
    }
  }
}

TEST(KQuantQuantizer, HugeAndTinyMagnitudesStayFiniteAndRelativelyClose) {
  std::mt19937 rng(7);
  const std::vector<float> base = weight_like_row(512, rng);
  for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    SCOPED_TRACE(format::dtype_name(type));
    // Magnitudes the FP16 super-scale holds (values from ~1e-3 to ~1e4 here) keep the relative
    // error of ordinary weights.
    for (float factor : {0.05f, 1e3f, 1e5f}) {
      std::vector<float> x = base;
      for (float& v : x) v *= factor;
      const std::vector<float> y = round_trip(type, x);
      for (float v : y) ASSERT_TRUE(std::isfinite(v));
      EXPECT_LT(relative_rms_error(x, y), 0.1) << factor;
    }
    // Beyond FP16's range the scale saturates: values clip, nothing overflows.
    std::vector<float> huge = base;
    for (float& v : huge) v *= 1e30f;
    for (float v : round_trip(type, huge)) ASSERT_TRUE(std::isfinite(v));
    // Far below FP16's range the row decodes as zeros (an error below 1e-7 absolute).
    std::vector<float> tiny = base;
    for (float& v : tiny) v *= 1e-12f;
    for (float v : round_trip(type, tiny)) ASSERT_LE(std::fabs(v), 1e-7f);
  }
}

TEST(KQuantQuantizer, NonFiniteValuesEncodeAsZeroOrTheExtremeLevel) {
  std::mt19937 rng(99);
  for (DType type : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
    SCOPED_TRACE(format::dtype_name(type));
    std::vector<float> x = weight_like_row(256, rng);
    float amax = 0;
    for (float v : x) amax = std::max(amax, std::fabs(v));
    x[3] = std::numeric_limits<float>::quiet_NaN();
    x[100] = std::numeric_limits<float>::infinity();
    x[200] = -std::numeric_limits<float>::infinity();
    const std::vector<float> y = round_trip(type, x);
    for (float v : y) ASSERT_TRUE(std::isfinite(v));
    // NaN: the level nearest 0 of its sub-block; ±inf: the sub-block's extreme level of that sign.
    EXPECT_LE(std::fabs(y[3]), 0.2f * amax);
    EXPECT_GE(y[100], 0.5f * amax);
    EXPECT_LE(y[200], -0.5f * amax);
  }
}

TEST(KQuantQuantizer, Q5RowsFollowGgmlsReferenceRule) {
  // Q5_0: d = max / −16 (max: the value of largest magnitude); q = min(31, trunc(x / d + 16.5)).
  std::vector<float> x(32);
  for (int i = 0; i < 32; ++i) x[size_t(i)] = float(i - 15) * 0.25f;  // max = 4: d = −0.25
  std::vector<uint8_t> blocks(sizeof(BlockQ5_0));
  type_traits(DType::Q5_0).quantize_row(x.data(), blocks.data(), 32);
  BlockQ5_0 b;
  std::memcpy(&b, blocks.data(), sizeof b);
  uint32_t qh;
  std::memcpy(&qh, b.qh, 4);
  for (int i = 0; i < 16; ++i) {
    // x / d + 16.5 = 31.5 − i for value i: q = 31 − i (low half), 15 − i (high half) + ...
    const int lo = (b.qs[i] & 0xF) | int(((qh >> i) & 1) << 4);
    const int hi = (b.qs[i] >> 4) | int(((qh >> (i + 16)) & 1) << 4);
    EXPECT_EQ(lo, std::min(31, int((x[size_t(i)] / -0.25f) + 16.5f))) << i;
    EXPECT_EQ(hi, std::min(31, int((x[size_t(i + 16)] / -0.25f) + 16.5f))) << i;
  }
  // Q5_1: a uniform ramp over 31 steps is exact.
  for (int i = 0; i < 32; ++i) x[size_t(i)] = -1.0f + float(std::min(i, 31)) * 0.0625f;
  const std::vector<float> y = round_trip(DType::Q5_1, x);
  for (int i = 0; i < 32; ++i) EXPECT_NEAR(y[size_t(i)], x[size_t(i)], 1e-3f) << i;
}

}  // namespace
}  // namespace magnetar::quant
