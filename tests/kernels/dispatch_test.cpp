// The kernel tables: MAGNETAR_KERNELS=reference forces the twins, select() switches tables, the
// automatic choice follows the CPU's features and the tuning, and every table holds, per weight
// type, the kernels of that type's record for the table's ISA.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>
#include <string>

#include "core/cpu_features.h"
#include "kernels/kernels.h"
#include "kernels/tables.h"
#include "kernels/type_traits.h"

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

// MAGNETAR_KERNELS=avx2 / avx512vnni pick that table where the CPU runs it, else the best.
TEST_F(DispatchTest, EnvironmentNamesAnAsmTable) {
  if (!kernels::asm_available()) GTEST_SKIP() << "no asm tables on this CPU";
  for (const char* isa : {"avx2", "avx512vnni"}) {
    set_env("MAGNETAR_KERNELS", isa);
    kernels::select(kernels::KernelChoice::Auto);
    const bool runs = kernels::asm_table_named(isa, 0) != nullptr;
    EXPECT_STREQ(kernels::active().isa, runs ? isa : kernels::asm_tables().back()->isa) << isa;
  }
}

TEST_F(DispatchTest, AutoPicksAsmWhenTheCpuHasIt) {
  set_env("MAGNETAR_KERNELS", nullptr);
  kernels::select(kernels::KernelChoice::Auto);
  const bool asm_possible = cpu::features().has_avx2_kernels() && kernels::asm_float_table() != nullptr;
  EXPECT_EQ(kernels::asm_available(), asm_possible);
  if (asm_possible) {
    EXPECT_EQ(&kernels::active(), kernels::asm_tables().back());  // the best
    EXPECT_STREQ(kernels::active().float_isa, "avx2");
  } else {
    EXPECT_EQ(&kernels::active(), &kernels::reference_table());
  }
}

TEST_F(DispatchTest, SelectSwitchesTables) {
  kernels::select(kernels::KernelChoice::Reference);
  EXPECT_EQ(&kernels::active(), &kernels::reference_table());
  kernels::select(kernels::KernelChoice::Asm);
  if (kernels::asm_available()) {
    EXPECT_EQ(&kernels::active(), kernels::asm_tables().back());
    EXPECT_EQ(&kernels::active(), kernels::asm_table_named("", 0));
  } else {
    EXPECT_EQ(&kernels::active(), &kernels::reference_table());  // falls back, never crashes
  }
}

// Every table: the reference one, each ISA's, and each ISA's F16 stream variants.
std::vector<const kernels::KernelTable*> every_table() {
  std::vector<const kernels::KernelTable*> tables = {&kernels::reference_table()};
  for (const kernels::KernelTable* t : kernels::asm_tables())
    for (int streams : {0, 4, 8}) tables.push_back(kernels::asm_table_named(t->isa, streams));
  return tables;
}

TEST_F(DispatchTest, AsmTablesAreListedByIsa) {
  const std::vector<const kernels::KernelTable*> tables = kernels::asm_tables();
  if (tables.empty()) {
    EXPECT_FALSE(kernels::asm_available());
    EXPECT_EQ(kernels::asm_table_named("avx2"), nullptr);
    return;
  }
  EXPECT_STREQ(tables.front()->isa, "avx2");
  for (const kernels::KernelTable* t : tables) {
    EXPECT_EQ(kernels::asm_table_named(t->isa), t);
    EXPECT_STREQ(t->float_isa, "avx2");
  }
  const cpu::Features& f = cpu::features();
  EXPECT_EQ(tables.size(), f.has_avx512_kernels() && f.avx512vnni ? 2u : 1u);
  EXPECT_EQ(kernels::asm_table_named("no-such-isa"), nullptr);
  EXPECT_STREQ(kernels::reference_table().isa, "reference");
  EXPECT_STREQ(kernels::reference_table().float_isa, "reference");
}

// The stream variants differ from their ISA's table in the F16 kernels only.
TEST_F(DispatchTest, StreamVariantsDifferInTheF16KernelsOnly) {
  for (const kernels::KernelTable* t : kernels::asm_tables()) {
    const kernels::KernelTable* s4 = kernels::asm_table_named(t->isa, 4);
    const kernels::KernelTable* s8 = kernels::asm_table_named(t->isa, 8);
    ASSERT_NE(s4, nullptr);
    ASSERT_NE(s8, nullptr);
    EXPECT_NE(s4->matvec_f16, s8->matvec_f16);
    EXPECT_NE(s4->of(format::DType::F16).decode, s8->of(format::DType::F16).decode);
    EXPECT_EQ(s4->matvec_f32, t->matvec_f32);
    EXPECT_STREQ(s4->isa, t->isa);
    for (uint32_t d = 2; d < format::kDTypeCount; ++d)
      EXPECT_EQ(s8->types[d].decode, t->types[d].decode) << format::dtype_layout(format::DType(d)).name;
  }
}

// The tuning's choice reaches Auto selections only, and at once.
TEST_F(DispatchTest, TunedKernelsApplyToAutoChoices) {
  if (!kernels::asm_available()) GTEST_SKIP() << "no asm kernels";
  set_env("MAGNETAR_KERNELS", nullptr);
  kernels::select(kernels::KernelChoice::Auto);
  kernels::set_tuned_kernels("avx2", 8);
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("avx2", 8));
  kernels::select(kernels::KernelChoice::Asm);  // explicit: the best, built-in F16 rule
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("", 0));
  kernels::set_tuned_kernels("", 4);
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("", 0));
  kernels::select(kernels::KernelChoice::Auto);
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("", 4));
  kernels::set_tuned_kernels("no-such-isa", 0);  // an isa this CPU lacks: the best
  EXPECT_EQ(&kernels::active(), kernels::asm_tables().back());
  kernels::set_tuned_kernels("", 0);
}

// Each block type's entry is its record's kernels for the table's ISA (or the nearest lower
// one's); every valid type has a decode and a prefill kernel, and a quantizer for its
// activations unless it takes FP32; Q8_0 / Q4_0 have tile kernels.
TEST_F(DispatchTest, TypeEntriesComeFromTheRecords) {
  for (const kernels::KernelTable* t : every_table()) {
    SCOPED_TRACE(t->isa);
    const kernels::Isa isa = std::string(t->isa) == "avx512vnni" ? kernels::Isa::Avx512Vnni
                             : std::string(t->isa) == "avx2"     ? kernels::Isa::Avx2
                                                                 : kernels::Isa::Reference;
    EXPECT_STREQ(kernels::isa_name(isa), t->isa);
    for (uint32_t d = 0; d < format::kDTypeCount; ++d) {
      const auto dtype = format::DType(d);
      SCOPED_TRACE(format::dtype_layout(dtype).name);
      const kernels::TypeKernels& e = t->of(dtype);
      ASSERT_NE(e.decode, nullptr);
      ASSERT_NE(e.prefill, nullptr);
      EXPECT_EQ(e.quantize_act == nullptr, e.act == kernels::ActFormat::F32);
      const bool tiles = dtype == format::DType::Q8_0 || dtype == format::DType::Q4_0;
      EXPECT_EQ(e.prefill_x16 != nullptr, tiles);
      if (format::dtype_is_quantized(dtype) || isa == kernels::Isa::Reference) {
        const kernels::TypeKernels& want = quant::type_kernels(quant::type_traits(dtype), isa);
        EXPECT_EQ(e.decode, want.decode);
        EXPECT_EQ(e.prefill, want.prefill);
        EXPECT_EQ(e.act, want.act);
      } else {
        EXPECT_EQ(e.act, kernels::ActFormat::F32);  // the asm table's own float kernels
      }
      if (isa != kernels::Isa::Reference && format::dtype_is_quantized(dtype)) {
        EXPECT_NE(e.decode, kernels::reference_table().of(dtype).decode) << "every block type has AVX2 kernels";
      }
    }
  }
}

TEST_F(DispatchTest, EveryEntryIsFilled) {
  for (const kernels::KernelTable* t : every_table()) {
    ASSERT_NE(t, nullptr);
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
    EXPECT_NE(t->isa, nullptr);
    EXPECT_NE(t->float_isa, nullptr);
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
