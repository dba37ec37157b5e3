// The four-rows-per-pass K-quant decode kernels (asm/kquant_decode_avx2.asm, and
// asm/kquant_decode_avx512vnni.asm where the CPU runs the avx512vnni table) against the row-at-a-
// time twins, bit for bit: every row count around the 4-row group (a last group of 1..3 rows),
// several block counts, weights at every byte alignment, integer extremes, sentinels on both sides
// of the outputs, callee-saved registers (xmm6-15 on Win64) through the checked-call trampoline;
// and the type records' matmul that runs them, token by token, for 1..20 tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "format/model_format.h"
#include "kernels/kquant_decode.h"
#include "kernels/kquant_low.h"
#include "kernels/kquants.h"
#include "kernels/type_traits.h"
#include "quant_test_util.h"

namespace magnetar::quant {
namespace {

struct DecodeCase {
  format::DType dtype;
  kernels::Isa isa;
  MatvecKFn twin;
  MatvecKFn kernel;
  int64_t block_bytes;
  std::vector<int> half_offsets;  // the FP16 scales inside a block
  std::string name() const { return std::string(format::dtype_name(dtype)) + " " + kernels::isa_name(isa); }
};

// Every kernel this CPU runs (the VNNI ones only where the avx512vnni table exists).
std::vector<DecodeCase> cases() {
  using format::DType;
  using kernels::Isa;
  const std::vector<DecodeCase> all = {
      {DType::Q4_K, Isa::Avx2, matvec_q4_k_ref, magnetar_matvec_q4_k_r4_avx2, 144, {0, 2}},
      {DType::Q5_K, Isa::Avx2, matvec_q5_k_ref, magnetar_matvec_q5_k_r4_avx2, 176, {0, 2}},
      {DType::Q6_K, Isa::Avx2, matvec_q6_k_ref, magnetar_matvec_q6_k_r4_avx2, 210, {208}},
      {DType::IQ4_XS, Isa::Avx2, matvec_iq4_xs_ref, magnetar_matvec_iq4_xs_r4_avx2, 136, {0}},
      {DType::Q2_K, Isa::Avx2, matvec_q2_k_ref, magnetar_matvec_q2_k_r4_avx2, 84, {80, 82}},
      {DType::Q3_K, Isa::Avx2, matvec_q3_k_ref, magnetar_matvec_q3_k_r4_avx2, 110, {108}},
      {DType::Q4_K, Isa::Avx512Vnni, matvec_q4_k_ref, magnetar_matvec_q4_k_r4_avx512vnni, 144, {0, 2}},
      {DType::Q5_K, Isa::Avx512Vnni, matvec_q5_k_ref, magnetar_matvec_q5_k_r4_avx512vnni, 176, {0, 2}},
      {DType::Q6_K, Isa::Avx512Vnni, matvec_q6_k_ref, magnetar_matvec_q6_k_r4_avx512vnni, 210, {208}},
      {DType::IQ4_XS, Isa::Avx512Vnni, matvec_iq4_xs_ref, magnetar_matvec_iq4_xs_r4_avx512vnni, 136, {0}},
      {DType::Q2_K, Isa::Avx512Vnni, matvec_q2_k_ref, magnetar_matvec_q2_k_r4_avx512vnni, 84, {80, 82}},
      {DType::Q3_K, Isa::Avx512Vnni, matvec_q3_k_ref, magnetar_matvec_q3_k_r4_avx512vnni, 110, {108}}};
  return cases_this_cpu_runs(all);
}

class KQuantDecode : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!kernels::asm_available()) GTEST_SKIP() << "CPU lacks AVX2/FMA/F16C: only the reference twins run here";
  }
};

// y[r] for r < rows, with kGuard sentinels before and after the outputs.
struct GuardedOutput {
  std::vector<float> buffer;
  explicit GuardedOutput(int64_t rows) : buffer(size_t(rows + 2 * kGuard), kSentinel) {}
  float* y() { return buffer.data() + kGuard; }
  void expect_guards(int64_t rows) const {
    for (int64_t i = 0; i < kGuard; ++i) {
      ASSERT_EQ(buffer[size_t(i)], kSentinel) << "write before row 0";
      ASSERT_EQ(buffer[size_t(kGuard + rows + i)], kSentinel) << "write past row " << rows;
    }
  }
};

TEST_F(KQuantDecode, MatchesTwinBitExact) {
  for (const DecodeCase& c : cases()) {
    SCOPED_TRACE(c.name());
    std::mt19937 rng(61);
    for (bool extreme : {false, true})
      for (int64_t rows : {1, 2, 3, 4, 5, 6, 7, 8, 9, 13, 35})
        for (int64_t cols : {256, 512, 1280, 2304}) {
          const std::vector<uint8_t> blocks = make_k_blocks(c.block_bytes, c.half_offsets, rows, cols, rng, extreme);
          const std::vector<ActBlockK> x = make_k_activation(cols, rng, extreme);
          const size_t bytes = blocks.size() - 2;
          for (int align : {0, 1, 3, 6}) {  // the weights at every offset class within a word
            std::vector<uint8_t> storage(bytes + 8);
            std::memcpy(storage.data() + align, blocks.data() + 2, bytes);
            GuardedOutput want(rows), got(rows);
            c.twin(storage.data() + align, x.data(), want.y(), rows, cols);
            c.kernel(storage.data() + align, x.data(), got.y(), rows, cols);
            ASSERT_EQ(std::memcmp(got.y(), want.y(), size_t(rows) * 4), 0)
                << "rows " << rows << " cols " << cols << " alignment " << align << (extreme ? " (extreme)" : "")
                << " y0 " << got.y()[0] << " vs " << want.y()[0];
            got.expect_guards(rows);
          }
        }
  }
}

// Every quant and scale byte 0x00, 0x80 or 0xff (FP16 scales 1.0, activations +-127): the integer
// extremes of each type (IQ4_XS 0x00: the codebook's -127 with the scale -32).
TEST_F(KQuantDecode, FillBytesMatchTwin) {
  std::mt19937 rng(83);
  for (const DecodeCase& c : cases()) {
    SCOPED_TRACE(c.name());
    const int64_t rows = 7, cols = 512;
    const std::vector<ActBlockK> x = make_k_activation(cols, rng, true);
    for (uint8_t fill : {uint8_t(0x00), uint8_t(0x80), uint8_t(0xff)}) {
      std::vector<uint8_t> w = make_k_blocks(c.block_bytes, c.half_offsets, rows, cols, rng, true);
      for (size_t i = 2; i < w.size(); ++i) {
        const int64_t at = int64_t(i - 2) % c.block_bytes;
        if (std::none_of(c.half_offsets.begin(), c.half_offsets.end(), [&](int o) { return at == o || at == o + 1; }))
          w[i] = fill;
      }
      GuardedOutput want(rows), got(rows);
      c.twin(w.data() + 2, x.data(), want.y(), rows, cols);
      c.kernel(w.data() + 2, x.data(), got.y(), rows, cols);
      ASSERT_EQ(std::memcmp(got.y(), want.y(), size_t(rows) * 4), 0) << "fill " << int(fill);
      got.expect_guards(rows);
    }
  }
}

TEST_F(KQuantDecode, ZeroRowsWritesNothing) {
  std::mt19937 rng(67);
  for (const DecodeCase& c : cases()) {
    const std::vector<uint8_t> w = make_k_blocks(c.block_bytes, c.half_offsets, 1, 256, rng, false);
    const std::vector<ActBlockK> x = make_k_activation(256, rng, false);
    GuardedOutput y(0);
    c.kernel(w.data() + 2, x.data(), y.y(), 0, 256);
    y.expect_guards(0);
  }
}

TEST_F(KQuantDecode, CalleeSavedRegistersPreserved) {
  std::mt19937 rng(71);
  for (const DecodeCase& c : cases()) {
    SCOPED_TRACE(c.name());
    for (int64_t rows : {4, 7}) {  // whole groups only, and a partial last group
      const int64_t cols = 512;
      const std::vector<uint8_t> w = make_k_blocks(c.block_bytes, c.half_offsets, rows, cols, rng, false);
      const std::vector<ActBlockK> x = make_k_activation(cols, rng, false);
      expect_callee_saved_preserved(c.kernel, w.data() + 2, x.data(), rows, cols);
    }
  }
}

// The type record's entry of the kernel's ISA (what ops runs for these types): token t's outputs
// are the twin's on token t's quantized activation, bit for bit, for every token count 1..20 and a
// strided y.
TEST_F(KQuantDecode, TypeRecordMatmulIsTheTwinPerToken) {
  std::mt19937 rng(73);
  for (const DecodeCase& c : cases()) {
    SCOPED_TRACE(c.name());
    const TypeTraits& traits = type_traits(c.dtype);
    const kernels::TypeKernels& entry = c.isa == kernels::Isa::Avx2 ? traits.avx2 : traits.avx512vnni;
    ASSERT_EQ(entry.decode, type_kernels(traits, c.isa).decode) << "the record's entry of the ISA is its own";
    ASSERT_NE(entry.prefill, nullptr);
    const int64_t rows = 37, cols = 768, stride = rows + 3;
    const std::vector<uint8_t> w = make_k_blocks(c.block_bytes, c.half_offsets, rows, cols, rng, false);
    for (int64_t tokens = 1; tokens <= 20; ++tokens) {
      std::vector<float> x;
      for (int64_t t = 0; t < tokens; ++t) {
        const std::vector<float> xt = make_activation(cols, rng);
        x.insert(x.end(), xt.begin(), xt.end());
      }
      std::vector<float> got(size_t(tokens * stride), kSentinel);
      run_entry(entry, w.data() + 2, x.data(), got.data(), rows, cols, tokens, stride);
      std::vector<ActBlockK> xq(static_cast<size_t>(cols / kSuperBlock));
      std::vector<float> want(static_cast<size_t>(rows));
      for (int64_t t = 0; t < tokens; ++t) {
        quantize_act_k_ref(x.data() + t * cols, xq.data(), cols);
        c.twin(w.data() + 2, xq.data(), want.data(), rows, cols);
        ASSERT_EQ(std::memcmp(got.data() + t * stride, want.data(), size_t(rows) * 4), 0)
            << "tokens " << tokens << " token " << t;
        for (int64_t r = rows; r < stride; ++r) ASSERT_EQ(got[size_t(t * stride + r)], kSentinel);
      }
    }
  }
}

// quantize_act_k_avx2 against quantize_act_k_ref, every byte of the blocks: random blocks, ties of
// magnitude with either sign first, all-zero blocks, NaN and infinities, one nonzero value,
// inputs at every float offset.
TEST_F(KQuantDecode, ActivationQuantizerMatchesReferenceBitExact) {
  std::mt19937 rng(79);
  const int64_t blocks = 12, n = blocks * kSuperBlock;
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  std::vector<float> storage(static_cast<size_t>(n + 8));
  for (int trial = 0; trial < 40; ++trial) {
    float* x = storage.data() + trial % 8;
    const std::vector<float> values = make_activation(n, rng);
    std::copy(values.begin(), values.end(), x);
    std::fill(x + kSuperBlock, x + 2 * kSuperBlock, 0.0f);  // block 1: zero (d = 0)
    x[2 * kSuperBlock + 17] = 3.0f;                          // block 2: a tie, the positive one first
    x[2 * kSuperBlock + 200] = -3.0f;
    x[3 * kSuperBlock + 5] = -3.0f;                           // block 3: a tie, the negative one first
    x[3 * kSuperBlock + 90] = 3.0f;
    x[4 * kSuperBlock + trial] = nan;                         // block 4: NaN among values
    x[5 * kSuperBlock + 3] = inf;                             // block 5: an infinity (NaN products)
    x[6 * kSuperBlock + 7] = -inf;
    std::fill(x + 7 * kSuperBlock, x + 8 * kSuperBlock, nan);  // block 7: NaN only
    std::fill(x + 8 * kSuperBlock, x + 9 * kSuperBlock, 0.0f);  // block 8: one value
    x[8 * kSuperBlock + 255] = -1e-30f;
    for (int64_t i = 9 * kSuperBlock; i < 10 * kSuperBlock; ++i)  // block 9: scale 1, ties to even
      x[i] = float(int(i % 254) - 127) + 0.5f;
    x[9 * kSuperBlock] = -127.0f;
    std::vector<ActBlockK> want(static_cast<size_t>(blocks)), got(static_cast<size_t>(blocks));
    std::memset(got.data(), 0x5a, got.size() * sizeof(ActBlockK));
    quantize_act_k_ref(x, want.data(), n);
    quantize_act_k_avx2(x, got.data(), n);
    for (int64_t b = 0; b < blocks; ++b)
      ASSERT_EQ(std::memcmp(&got[size_t(b)], &want[size_t(b)], sizeof(ActBlockK)), 0)
          << "trial " << trial << " block " << b;
  }
}

}  // namespace
}  // namespace magnetar::quant
