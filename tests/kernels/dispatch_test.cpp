// The dispatch table: MAGNETAR_KERNELS=reference forces the twins, select() switches tables, and
// the automatic choice follows the CPU's features.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>

#include "core/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/tables.h"

namespace magnetar::test {
namespace {

void set_env(const char* name, const char* value) {
#if defined(_WIN32)
  _putenv_s(name, value ? value : "");
#else
  if (value)
    setenv(name, value, 1);
  else
    unsetenv(name);
#endif
}

class DispatchTest : public ::testing::Test {
 protected:
  void TearDown() override {
    set_env("MAGNETAR_KERNELS", nullptr);
    kernels::select(kernels::KernelChoice::Auto);
  }
};

TEST_F(DispatchTest, EnvironmentForcesReference) {
  set_env("MAGNETAR_KERNELS", "reference");
  kernels::select(kernels::KernelChoice::Auto);
  EXPECT_EQ(&kernels::active(), &kernels::reference_table());
  EXPECT_STREQ(kernels::active().isa, "reference");
}

TEST_F(DispatchTest, AutoPicksAsmWhenTheCpuHasIt) {
  set_env("MAGNETAR_KERNELS", nullptr);
  kernels::select(kernels::KernelChoice::Auto);
  const bool asm_possible = cpu::features().has_avx2_kernels() && kernels::asm_table() != nullptr;
  if (asm_possible) {
    EXPECT_EQ(&kernels::active(), kernels::asm_table());
  } else {
    EXPECT_EQ(&kernels::active(), &kernels::reference_table());
  }
}

TEST_F(DispatchTest, SelectSwitchesTables) {
  kernels::select(kernels::KernelChoice::Reference);
  EXPECT_EQ(&kernels::active(), &kernels::reference_table());
  kernels::select(kernels::KernelChoice::Asm);
  if (cpu::features().has_avx2_kernels() && kernels::asm_table() != nullptr) {
    EXPECT_EQ(&kernels::active(), kernels::asm_table());
  } else {
    EXPECT_EQ(&kernels::active(), &kernels::reference_table());  // falls back, never crashes
  }
}

TEST_F(DispatchTest, EveryEntryIsFilled) {
  for (const kernels::KernelTable* t : {&kernels::reference_table(), kernels::asm_table()}) {
    if (t == nullptr) continue;
    EXPECT_NE(t->matvec_f16, nullptr);
    EXPECT_NE(t->matvec_f32, nullptr);
    EXPECT_NE(t->matmul_f16, nullptr);
    EXPECT_NE(t->matmul_f32, nullptr);
    EXPECT_NE(t->rmsnorm, nullptr);
    EXPECT_NE(t->softmax, nullptr);
    EXPECT_NE(t->silu_mul, nullptr);
    EXPECT_NE(t->gelu_tanh_mul, nullptr);
    EXPECT_NE(t->rope, nullptr);
    EXPECT_NE(t->f16_to_f32, nullptr);
    EXPECT_NE(t->dot_f32, nullptr);
    EXPECT_NE(t->axpy_f32, nullptr);
    EXPECT_NE(t->isa, nullptr);
  }
}

TEST(CpuFeatures, ConsistentWithEachOther) {
  const cpu::Features& f = cpu::features();
  EXPECT_FALSE(f.vendor.empty());
  if (f.has_avx512_kernels()) {
    EXPECT_TRUE(f.has_avx2_kernels());
  }
  if (f.os_zmm) {
    EXPECT_TRUE(f.os_ymm);
  }
  EXPECT_FALSE(cpu::describe(f).empty());
#if defined(__AVX2__) && defined(__FMA__) && defined(__F16C__)
  EXPECT_TRUE(f.has_avx2_kernels());  // the compiler was told this machine has them
#endif
}

}  // namespace
}  // namespace magnetar::test

namespace magnetar {
namespace {

// The probe's read loop reads every word: changing any one of them (a whole 64-float block, or
// the tail the portable loop reads) changes the result; AVX2 loads wherever the asm kernels run.
TEST(StreamingReadLoop, ReadsEveryWordWithTheKernelsWidth) {
  const char* name = nullptr;
  const auto loop = kernels::streaming_read_loop(&name);
  ASSERT_NE(loop, nullptr);
  ASSERT_NE(name, nullptr);
  EXPECT_EQ(std::string(name), cpu::features().has_avx2_kernels() ? "avx2" : "portable");
  const uint64_t words = 32 * 5 + 7;  // five 64-float blocks and a 7-word tail
  std::vector<uint64_t> data(words);
  for (uint64_t i = 0; i < words; ++i) {
    const float pair[2] = {0.25f * static_cast<float>(i % 13), 0.5f * static_cast<float>(i % 7)};
    std::memcpy(&data[i], pair, sizeof pair);
  }
  const uint64_t base = loop(data.data(), words);
  for (uint64_t i : {uint64_t{0}, uint64_t{33}, uint64_t{159}, uint64_t{160}, words - 1}) {
    std::vector<uint64_t> changed = data;
    const float pair[2] = {1000.0f, 2000.0f};
    std::memcpy(&changed[i], pair, sizeof pair);
    EXPECT_NE(loop(changed.data(), words), base) << "word " << i << " (" << name << ")";
  }
}

}  // namespace
}  // namespace magnetar
