// The block contract of the 256-value K-quant twins (kquants.h, kquant_lanes.h), checked against an
// oracle that knows nothing of lanes: with power-of-two block scales (and dmin = 0) every
// dequantized weight is d times an exact integer, so each super-block's dot with the int8
// activation is one exact integer S_b, and the row must be acc = fma(d * x.d, float(S_b), acc)
// over the blocks in order, bit for bit. This is the oracle a kernel that forms S_b in any layout
// (rows in a register's lanes, int16 sums across sub-blocks) is written against.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/kernels.h"
#include "kernels/kquant_lanes.h"
#include "kernels/kquant_low.h"
#include "kernels/kquants.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

struct BlockType {
  const char* name;
  MatvecKFn twin;
  void (*dequantize)(const void*, float*, int64_t);
  int64_t block_bytes;
  int d_offset;
  int dmin_offset;  // -1: no mins
};

const BlockType kTypes[] = {
    {"q2_k", matvec_q2_k_ref, dequantize_row_q2_k, 84, 80, 82},
    {"q3_k", matvec_q3_k_ref, dequantize_row_q3_k, 110, 108, -1},
    {"q4_k", matvec_q4_k_ref, dequantize_row_q4_k, 144, 0, 2},
    {"q5_k", matvec_q5_k_ref, dequantize_row_q5_k, 176, 0, 2},
    {"q6_k", matvec_q6_k_ref, dequantize_row_q6_k, 210, 208, -1},
    {"iq4_xs", matvec_iq4_xs_ref, dequantize_row_iq4_xs, 136, 0, -1},
};

void put_half(uint8_t* at, float v) {
  const uint16_t h = kernels::f32_to_f16_scalar(v);
  std::memcpy(at, &h, 2);
}

uint32_t bits_of(float v) {
  uint32_t b;
  std::memcpy(&b, &v, 4);
  return b;
}

TEST(KQuantBlockContract, TwinIsOneExactInt32PerRowAndSuperBlock) {
  std::mt19937 rng(1313);
  std::uniform_int_distribution<int> byte(0, 255), exponent(-14, -4), sign(0, 1);
  const int64_t rows = 5, cols = 1024, nb = cols / kSuperBlock;
  for (const BlockType& t : kTypes) {
    SCOPED_TRACE(t.name);
    std::vector<uint8_t> w(static_cast<size_t>(rows * nb * t.block_bytes));
    for (uint8_t& b : w) b = uint8_t(byte(rng));
    std::vector<float> d(static_cast<size_t>(rows * nb));
    for (int64_t i = 0; i < rows * nb; ++i) {
      uint8_t* block = w.data() + i * t.block_bytes;
      d[size_t(i)] = std::ldexp(sign(rng) ? -1.0f : 1.0f, exponent(rng));  // exact in FP16
      put_half(block + t.d_offset, d[size_t(i)]);
      if (t.dmin_offset >= 0) put_half(block + t.dmin_offset, 0.0f);
    }
    const std::vector<ActBlockK> x = make_k_activation(cols, rng, false);

    std::vector<float> want(static_cast<size_t>(rows)), values(static_cast<size_t>(cols));
    for (int64_t r = 0; r < rows; ++r) {
      t.dequantize(w.data() + r * nb * t.block_bytes, values.data(), cols);
      float acc = 0.0f;
      for (int64_t b = 0; b < nb; ++b) {
        const float scale = d[size_t(r * nb + b)];
        int64_t s = 0;
        for (int64_t i = 0; i < kSuperBlock; ++i) {
          const float v = values[size_t(b * kSuperBlock + i)];
          const int64_t q = std::llround(v / scale);
          ASSERT_EQ(float(q) * scale, v) << "the weight is not d times an integer";
          s += q * x[size_t(b)].qs[i];
        }
        ASSERT_EQ(s, int64_t(int32_t(s))) << "S_b must fit an int32";
        acc = fused_mul_add(scale * x[size_t(b)].d, float(s), acc);
      }
      want[size_t(r)] = acc;
    }
    std::vector<float> got(static_cast<size_t>(rows));
    t.twin(w.data(), x.data(), got.data(), rows, cols);
    for (int64_t r = 0; r < rows; ++r)
      EXPECT_EQ(bits_of(got[size_t(r)]), bits_of(want[size_t(r)])) << "row " << r << ": " << got[size_t(r)]
                                                                    << " vs " << want[size_t(r)];
  }
}

}  // namespace
}  // namespace magnetar::quant
