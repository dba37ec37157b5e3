// Quantizers into the K-quants Q2_K..Q6_K and IQ4_NL / IQ4_XS (Magnetar's scale search) and
// Q4_1 / Q5_0 / Q5_1 (GGML's rule): rows round-trip through the golden-tested dequantizers within
// stated RMS bounds, on random rows and on real weights (the tiny Gemma F32 GGUF), where the
// error is also compared with llama.cpp's own quantization of the same tensors; odd inputs
// (zeros, constants, one outlier, huge, tiny, NaN / inf) stay finite and bounded.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <map>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "common/testdata.h"
#include "convert/gguf_reader.h"
#include "format/model_format.h"
#include "kernels/kernels.h"
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

// Every type with a quantizer in kquant_quantize.cpp.
const DType kTypes[] = {DType::Q2_K,   DType::Q3_K,   DType::Q4_K, DType::Q5_K, DType::Q6_K,
                        DType::IQ4_NL, DType::IQ4_XS, DType::Q4_1, DType::Q5_0, DType::Q5_1};
// The types whose blocks are 256-value super-blocks normalized as a whole.
const DType kSuperBlockTypes[] = {DType::Q2_K, DType::Q3_K, DType::Q4_K, DType::Q5_K, DType::Q6_K, DType::IQ4_XS};

struct Bound {
  DType type;
  double max_relative_rms;
};

// Relative RMS error measured on this data (64 rows of 1024): Q2_K 0.270, Q3_K 0.168, Q4_0 0.114,
// IQ4_XS 0.0922, IQ4_NL 0.0906, Q4_1 0.0831, Q4_K 0.0773, Q5_0 0.0580, Q5_1 0.0404, Q5_K 0.0389,
// Q6_K 0.0220, Q8_0 0.0071. Bounds about 12% above.
const Bound kBounds[] = {{DType::Q2_K, 0.30},   {DType::Q3_K, 0.19},    {DType::Q4_K, 0.087},
                         {DType::Q5_K, 0.044},  {DType::Q6_K, 0.0246},  {DType::IQ4_NL, 0.102},
                         {DType::IQ4_XS, 0.104}, {DType::Q4_1, 0.093},  {DType::Q5_0, 0.065},
                         {DType::Q5_1, 0.046}};

TEST(KQuantQuantizer, RandomRowsRoundTripWithinTheStatedBound) {
  std::mt19937 rng(1234);
  std::vector<float> x;
  for (int r = 0; r < 64; ++r) {
    const std::vector<float> row = weight_like_row(1024, rng);
    x.insert(x.end(), row.begin(), row.end());
  }
  double error[format::kDTypeCount] = {};
  for (uint32_t t = uint32_t(DType::Q8_0); t < format::kDTypeCount; ++t) {
    error[t] = relative_rms_error(x, round_trip(DType(t), x));
    std::printf("  %-7s relative RMS error %.4f\n", format::dtype_name(DType(t)), error[t]);
  }
  for (const Bound& b : kBounds) {
    SCOPED_TRACE(format::dtype_name(b.type));
    EXPECT_LT(error[uint32_t(b.type)], b.max_relative_rms);
  }
  auto err = [&](DType t) { return error[uint32_t(t)]; };
  // Fewer bits, larger error, along the K-quants: Q2_K > Q3_K > Q4_K > Q5_K > Q6_K > Q8_0.
  EXPECT_GT(err(DType::Q2_K), err(DType::Q3_K));
  EXPECT_GT(err(DType::Q3_K), err(DType::Q4_K));
  EXPECT_LT(err(DType::Q5_K), err(DType::Q4_K));
  EXPECT_LT(err(DType::Q6_K), err(DType::Q5_K));
  EXPECT_GT(err(DType::Q6_K), err(DType::Q8_0));  // 6.56 vs 8.5 bits
  // Each K-quant beats the block type of its size class; IQ4's codebook and Q4_1's min beat
  // Q4_0 at (nearly) the same size; IQ4_XS (4.25 bits) beats Q3_K (3.44) by far.
  EXPECT_LT(err(DType::Q4_K), 0.8 * err(DType::Q4_0));
  EXPECT_LT(err(DType::Q5_K), err(DType::Q5_1));
  EXPECT_LT(err(DType::IQ4_NL), err(DType::Q4_0));
  EXPECT_LT(err(DType::Q4_1), err(DType::Q4_0));
  EXPECT_LT(err(DType::IQ4_XS), 0.7 * err(DType::Q3_K));
}

// Real weights: every matrix of the tiny Gemma F32 GGUF, quantized by Magnetar and (in the
// K-quant GGUFs shipped beside it) by llama.cpp's llama-quantize from the same F32 values.
TEST(KQuantQuantizer, RealWeightsAreAsCloseAsLlamaCppQuantization) {
  const char kDir[] = "gguf-kquants";
  MAGNETAR_REQUIRE_TESTDATA(kDir);
  const std::string f32_bytes = test::read_file(test::testdata_path(std::string(kDir) + "/tiny-gemma-f32.gguf"));
  gguf::File f32;
  ASSERT_TRUE(gguf::parse(reinterpret_cast<const uint8_t*>(f32_bytes.data()), f32_bytes.size(), &f32).is_ok());
  // Largest ratio ours / llama.cpp's of the RMS errors, per type. Measured worst: 1.005 (Q4_K),
  // 0.998 (Q5_K), 0.964 (Q6_K), 0.928 (Q2_K), 0.970 (Q3_K), 0.977 (IQ4_XS), 0.973 (IQ4_NL).
  const std::map<DType, double> kMaxRatio = {{DType::Q2_K, 1.02}, {DType::Q3_K, 1.02}, {DType::Q4_K, 1.02},
                                             {DType::Q5_K, 1.02}, {DType::Q6_K, 1.02}, {DType::IQ4_XS, 1.02},
                                             {DType::IQ4_NL, 1.02}};
  std::map<DType, double> worst_ratio;
  int compared = 0;
  for (const char* stem : {"tiny-gemma-Q4_K_M", "tiny-gemma-Q5_K_M", "tiny-gemma-Q6_K", "tiny-gemma-Q3_K_M",
                           "tiny-gemma-Q2_K", "tiny-gemma-IQ4_XS", "tiny-gemma-IQ4_NL"}) {
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
      const double ratio = relative_rms_error(x, round_trip(type, x)) / relative_rms_error(x, theirs);
      SCOPED_TRACE(std::string(stem) + " " + std::string(t.name) + " " + format::dtype_name(type));
      ASSERT_TRUE(kMaxRatio.count(type));
      EXPECT_LT(ratio, kMaxRatio.at(type));
      worst_ratio[type] = std::max(worst_ratio[type], ratio);
      ++compared;
    }
  }
  for (const auto& [type, ratio] : worst_ratio)
    std::printf("  %-7s worst ratio of RMS errors, ours / llama.cpp's: %.3f\n", format::dtype_name(type), ratio);
  EXPECT_EQ(worst_ratio.size(), kMaxRatio.size());  // every type was compared
  EXPECT_GE(compared, 50);
}

TEST(KQuantQuantizer, ZeroAndConstantRowsAreExactOrNearlySo) {
  // FP16 scales: 4e-3 relative; and where a super-scale is subnormal (c / 4096 for Q6_K, c / 4064
  // for IQ4_XS: below 6.1e-5) half its step, 2^-24 / 2, times the largest multiple of it a value
  // can be (Q6_K: 128 · 32).
  constexpr float kSubnormalScaleError = 0.5f * 0x1p-24f * 4096;
  for (DType type : kTypes) {
    SCOPED_TRACE(format::dtype_name(type));
    const std::vector<float> zeros(512, 0.0f);
    EXPECT_EQ(round_trip(type, zeros), zeros);
    for (float c : {0.75f, -0.3f, 0.02f, -42.0f}) {
      const std::vector<float> constant(512, c);
      for (float v : round_trip(type, constant))
        ASSERT_NEAR(v, c, std::max(std::fabs(c) * 4e-3f, kSubnormalScaleError)) << c;
    }
  }
}

// One outlier (100x the others) costs only its own block: it comes back within a few percent,
// and every other block's bytes are those of the row without it (blocks are independent).
TEST(KQuantQuantizer, AnOutlierCostsOnlyItsOwnBlock) {
  std::mt19937 rng(5);
  const std::vector<float> clean = weight_like_row(1024, rng);
  std::vector<float> x = clean;
  constexpr size_t kAt = 300;  // in the second 256-block, the tenth 32-block
  x[kAt] = 100.0f * std::fabs(clean[kAt]) + 1.0f;
  for (DType type : kTypes) {
    SCOPED_TRACE(format::dtype_name(type));
    const format::DTypeLayout& l = format::dtype_layout(type);
    const TypeTraits& t = type_traits(type);
    std::vector<uint8_t> a(format::tensor_bytes(type, 1, x.size())), b(a.size());
    t.quantize_row(clean.data(), a.data(), int64_t(x.size()));
    t.quantize_row(x.data(), b.data(), int64_t(x.size()));
    const size_t outlier_block = kAt / l.block_elements;
    for (size_t blk = 0; blk < x.size() / l.block_elements; ++blk) {
      const int same = std::memcmp(a.data() + blk * l.block_bytes, b.data() + blk * l.block_bytes, l.block_bytes);
      if (blk != outlier_block) {
        EXPECT_EQ(same, 0) << blk;
      }
    }
    std::vector<float> y(x.size());
    t.dequantize_row(b.data(), y.data(), int64_t(x.size()));
    EXPECT_NEAR(y[kAt], x[kAt], 0.05 * x[kAt]);
  }
}

// Blocks are written with memcpy and read as floats: any output byte offset, and input that is
// not 32-byte aligned, give the same bytes.
TEST(KQuantQuantizer, AnyAlignmentGivesTheSameBytes) {
  std::mt19937 rng(8);
  const std::vector<float> x = weight_like_row(512, rng);
  std::vector<float> shifted(x.size() + 1);
  std::copy(x.begin(), x.end(), shifted.begin() + 1);
  for (DType type : kTypes) {
    SCOPED_TRACE(format::dtype_name(type));
    const size_t bytes = format::tensor_bytes(type, 1, x.size());
    std::vector<uint8_t> aligned(bytes), out(bytes + 8);
    type_traits(type).quantize_row(x.data(), aligned.data(), int64_t(x.size()));
    for (size_t offset = 1; offset < 8; ++offset) {
      type_traits(type).quantize_row(shifted.data() + 1, out.data() + offset, int64_t(x.size()));
      EXPECT_EQ(0, std::memcmp(out.data() + offset, aligned.data(), bytes)) << offset;
    }
  }
}

TEST(KQuantQuantizer, HugeAndTinyMagnitudesStayFiniteAndRelativelyClose) {
  std::mt19937 rng(7);
  const std::vector<float> base = weight_like_row(512, rng);
  for (DType type : kSuperBlockTypes) {
    SCOPED_TRACE(format::dtype_name(type));
    // Magnitudes the FP16 super-scale holds (values from ~1e-3 to ~1e4 here) keep the relative
    // error of ordinary weights.
    const double ordinary = relative_rms_error(base, round_trip(type, base));
    for (float factor : {0.05f, 1e3f, 1e5f}) {
      std::vector<float> x = base;
      for (float& v : x) v *= factor;
      const std::vector<float> y = round_trip(type, x);
      for (float v : y) ASSERT_TRUE(std::isfinite(v));
      EXPECT_LT(relative_rms_error(x, y), 1.3 * ordinary) << factor;
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
  for (DType type : kSuperBlockTypes) {
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

// The 32-value block types: a block spanning [-1, 1] with a NaN and both infinities.
TEST(KQuantQuantizer, NonFiniteValuesInSmallBlocksEncodeAsZeroOrTheExtremeLevel) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> x(64);
  for (float& v : x) v = uniform(rng);
  x[0] = -1.0f, x[1] = 1.0f, x[32] = -1.0f, x[33] = 1.0f;
  x[3] = std::numeric_limits<float>::quiet_NaN();
  x[5] = std::numeric_limits<float>::infinity();
  x[7] = -std::numeric_limits<float>::infinity();
  x[40] = std::numeric_limits<float>::infinity();  // the second block: ±inf alone
  for (DType type : {DType::IQ4_NL, DType::Q4_1, DType::Q5_0, DType::Q5_1}) {
    SCOPED_TRACE(format::dtype_name(type));
    const std::vector<float> y = round_trip(type, x);
    for (float v : y) ASSERT_TRUE(std::isfinite(v));
    EXPECT_LE(std::fabs(y[3]), 0.1f);  // the level nearest 0 (levels are at most 2/15 apart)
    EXPECT_GE(y[5], 0.85f);            // the largest level (IQ4's positive end is 113/127)
    EXPECT_LE(y[7], -0.85f);
    EXPECT_GE(y[40], 0.85f);
    for (int i = 32; i < 64; ++i) {
      if (i != 40) {
        EXPECT_NEAR(y[size_t(i)], x[size_t(i)], 0.12f) << i;  // the infinity costs no range
      }
    }
  }
}

TEST(KQuantQuantizer, SmallBlockRowsFollowGgmlsReferenceRule) {
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
  // Q4_1: d = (max − min) / 15, m = min, q = min(15, trunc((x − min) / d + 0.5)), on random data.
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.1f, 1.0f);
  for (float& v : x) v = normal(rng);
  blocks.resize(sizeof(BlockQ4_1));
  type_traits(DType::Q4_1).quantize_row(x.data(), blocks.data(), 32);
  BlockQ4_1 b1;
  std::memcpy(&b1, blocks.data(), sizeof b1);
  const float lo = *std::min_element(x.begin(), x.end()), hi = *std::max_element(x.begin(), x.end());
  const float d = (hi - lo) / 15, id = 1 / d;
  EXPECT_EQ(b1.d, kernels::f32_to_f16_scalar(d));
  EXPECT_EQ(b1.m, kernels::f32_to_f16_scalar(lo));
  for (int i = 0; i < 16; ++i) {
    EXPECT_EQ(b1.qs[i] & 0xF, std::min(15, int((x[size_t(i)] - lo) * id + 0.5f))) << i;
    EXPECT_EQ(b1.qs[i] >> 4, std::min(15, int((x[size_t(i + 16)] - lo) * id + 0.5f))) << i;
  }
  // Q5_1 and Q4_1: a uniform ramp over their steps is exact.
  for (const auto& [type, steps, step] : {std::tuple{DType::Q5_1, 31, 0.0625f}, std::tuple{DType::Q4_1, 15, 0.125f}}) {
    for (int i = 0; i < 32; ++i) x[size_t(i)] = -1.0f + float(std::min(i, steps)) * step;
    const std::vector<float> y = round_trip(type, x);
    for (int i = 0; i < 32; ++i) EXPECT_NEAR(y[size_t(i)], x[size_t(i)], 1e-3f) << format::dtype_name(type) << " " << i;
  }
}

}  // namespace
}  // namespace magnetar::quant
