// Decode tuning's measuring side: the F16 stream-variant tables and stripe widths it chooses
// between compute the same products as the reference, the driver measures every candidate and
// marks a broken one failed, honours its deadline and a cancel, and applying a tuning switches
// the active tables only where no override says otherwise. No test asserts a speed.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <random>
#include <vector>

#include "core/cpu_features.h"
#include "core/thread_pool.h"
#include "format/model_format.h"
#include "kernels/kernels.h"
#include "kernels/quant.h"
#include "magnetar/tuning.h"
#include "ops/calibrate.h"
#include "ops/ops.h"

namespace magnetar::test {
namespace {

using format::DType;
namespace cal = ops::calibrate;

// Small test matrices: the driver's floor (4096 x 2048 weights) keeps them a few MiB.
constexpr uint64_t kSmallBytes = 1 << 20;

std::vector<uint16_t> random_halves(std::mt19937& rng, size_t n) {
  std::uniform_real_distribution<float> d(-1.0f, 1.0f);
  std::vector<uint16_t> h(n);
  for (auto& v : h) v = kernels::f32_to_f16_scalar(d(rng));
  return h;
}

// Every stream choice and stripe width the calibration measures gives the reference product, for
// odd row counts, column tails and widths narrower than a stripe.
TEST(CalibrationVariants, StreamTablesAndStripeWidthsMatchTheReference) {
  if (!kernels::asm_available()) GTEST_SKIP() << "no asm kernels";
  std::mt19937 rng(5);
  ThreadPool pool(2);
  const struct {
    int64_t rows, cols;
  } shapes[] = {{37, 3100}, {200, 4133}, {1001, 5000}, {16, 8192}, {333, 2048}};
  for (const auto& s : shapes) {
    const auto w = random_halves(rng, size_t(s.rows * s.cols));
    std::vector<float> x(size_t(s.cols)), expected(size_t(s.rows)), y(size_t(s.rows));
    std::uniform_real_distribution<float> d(-1.0f, 1.0f);
    for (auto& v : x) v = d(rng);
    kernels::reference_table().matvec_f16(w.data(), s.cols, x.data(), expected.data(), s.rows, s.cols);
    ops::Matrix plain{w.data(), DType::F16, s.rows, s.cols};
    for (int width : {0, 1024, 2048, 4096}) {
      std::vector<uint16_t> laid_out(w.size());
      ops::Matrix m = plain;
      if (ops::wants_stripes(plain, width)) {
        ops::stripe_into(plain, laid_out.data(), width);
        m.data = laid_out.data();
        m.stripe_cols = width;
      }
      for (int streams : {4, 8}) {
        ops::matvec(pool, m, x.data(), y.data(), *kernels::asm_table_named("", streams));
        for (int64_t r = 0; r < s.rows; ++r)
          ASSERT_NEAR(y[size_t(r)], expected[size_t(r)], 2e-3f * (1 + std::fabs(expected[size_t(r)])))
              << s.rows << "x" << s.cols << " stripes " << width << ", " << streams << " streams, row " << r;
      }
    }
  }
}

TEST(CalibrationVariants, StripeInPlaceEqualsStripeIntoForEveryWidth) {
  std::mt19937 rng(6);
  const int64_t rows = 19, cols = 4500;
  const auto w = random_halves(rng, size_t(rows * cols));
  for (int width : {1024, 2048, 4096}) {
    std::vector<uint16_t> in_place = w, copied(w.size());
    ops::Matrix m{in_place.data(), DType::F16, rows, cols};
    std::vector<uint8_t> scratch;
    ASSERT_TRUE(ops::wants_stripes(m, width));
    ops::stripe_in_place(&m, in_place.data(), &scratch, width);
    EXPECT_EQ(m.stripe_cols, width);
    ops::stripe_into(ops::Matrix{w.data(), DType::F16, rows, cols}, copied.data(), width);
    EXPECT_EQ(in_place, copied) << width;
    // The last stripe is narrower: its first row starts right after the full stripes.
    const int64_t last = cols / width * width;
    EXPECT_EQ(copied[size_t(last * rows)], w[size_t(last)]) << width;
  }
  EXPECT_FALSE(ops::wants_stripes(ops::Matrix{w.data(), DType::F16, rows, 4096}, 4096));  // one stripe: plain
  EXPECT_FALSE(ops::wants_stripes(ops::Matrix{w.data(), DType::F16, rows, cols}, 0));
}

cal::Options small_options() {
  cal::Options o;
  o.threads = 2;
  o.matrix_bytes = kSmallBytes;
  return o;
}

TEST(CalibrationDriver, MeasuresEveryCandidateAndReportsProgress) {
  const auto f16 = cal::f16_candidates();
  const auto quant = cal::quant_candidates();
  ASSERT_EQ(cal::name_of(f16[0]), "stripes 2048, 4 streams");  // the built-in choice first
  EXPECT_TRUE(quant[0].x16_tiles);
  cal::Options o = small_options();
  int calls = 0, last_total = 0;
  o.on_progress = [&](int done, int total, const std::string& step) {
    EXPECT_EQ(done, calls++);
    EXPECT_FALSE(step.empty());
    last_total = total;
  };
  cal::Measurements m;
  const Status s = cal::measure(f16, quant, o, &m);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(calls, int(f16.size() + 2 * quant.size()));
  EXPECT_EQ(last_total, calls);
  ASSERT_EQ(m.f16.size(), f16.size());
  ASSERT_EQ(m.q8_0.size(), quant.size());
  ASSERT_EQ(m.q4_0.size(), quant.size());
  const bool asm_kernels = kernels::asm_available();
  for (size_t i = 0; i < f16.size(); ++i) {
    EXPECT_EQ(m.f16[i].name, cal::name_of(f16[i]));
    EXPECT_EQ(m.f16[i].failed, !asm_kernels) << m.f16[i].name;
    if (asm_kernels) {
      EXPECT_EQ(m.f16[i].seconds.size(), size_t(cal::kTimedPasses)) << m.f16[i].name;
    }
  }
  for (const auto* list : {&m.q8_0, &m.q4_0})
    for (const auto& c : *list) {
      EXPECT_FALSE(c.failed) << c.name;
      EXPECT_EQ(c.seconds.size(), size_t(cal::kTimedPasses)) << c.name;
      for (double t : c.seconds) EXPECT_GT(t, 0.0);
    }
}

// A broken kernel table (all-zero products) fails the oracle check: marked failed, never timed.
void zero_rows(const void*, const void*, float* y, int64_t rows, int64_t) {
  for (int64_t r = 0; r < rows; ++r) y[r] = 0;
}
void zero_tokens(const void*, const void*, float* y, int64_t rows, int64_t, int64_t n_tokens, int64_t y_stride) {
  for (int64_t t = 0; t < n_tokens; ++t) zero_rows(nullptr, nullptr, y + t * y_stride, rows, 0);
}

TEST(CalibrationDriver, ACandidateWithWrongResultsIsMarkedFailed) {
  kernels::KernelTable broken = kernels::reference_table();
  for (const DType t : {DType::Q8_0, DType::Q4_0}) {
    broken.types[uint32_t(t)].decode = zero_rows;
    broken.types[uint32_t(t)].prefill_x16 = zero_tokens;
  }
  broken.isa = "broken";
  const kernels::KernelTable* good =
      kernels::asm_available() ? kernels::asm_tables().back() : &kernels::reference_table();
  const std::vector<cal::QuantVariant> quant = {{true, good}, {true, &broken}, {false, &broken}};
  cal::Measurements m;
  ASSERT_TRUE(cal::measure({}, quant, small_options(), &m).is_ok());
  for (const auto* list : {&m.q8_0, &m.q4_0}) {
    ASSERT_EQ(list->size(), 3u);
    EXPECT_FALSE((*list)[0].failed);
    EXPECT_EQ((*list)[0].seconds.size(), size_t(cal::kTimedPasses));
    for (size_t i = 1; i < 3; ++i) {
      EXPECT_TRUE((*list)[i].failed) << (*list)[i].name;
      EXPECT_TRUE((*list)[i].seconds.empty());
    }
    EXPECT_EQ(tuning::decide(*list, 0).chosen, 0);
  }
}

TEST(CalibrationDriver, PastTheDeadlineNothingIsMeasuredAndTheDefaultStays) {
  cal::Options o = small_options();
  o.deadline = 1e-9;  // long past
  cal::Measurements m;
  ASSERT_TRUE(cal::measure(cal::f16_candidates(), cal::quant_candidates(), o, &m).is_ok());
  for (const auto* list : {&m.f16, &m.q8_0, &m.q4_0})
    for (const auto& c : *list) {
      EXPECT_TRUE(c.seconds.empty()) << c.name;
      EXPECT_FALSE(c.failed) << c.name;
    }
  EXPECT_EQ(tuning::decide(m.f16, 0).chosen, -1);
}

TEST(CalibrationDriver, ACancelStopsItWithAnError) {
  std::atomic<bool> cancel{false};
  cal::Options o = small_options();
  o.cancel = &cancel;
  o.on_progress = [&](int done, int, const std::string&) {
    if (done == 2) cancel = true;
  };
  cal::Measurements m;
  const Status s = cal::measure(cal::f16_candidates(), cal::quant_candidates(), o, &m);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("cancelled"), std::string::npos);
  DecodeTuning out;
  CalibrationOptions public_options;
  public_options.matrix_bytes = kSmallBytes;
  public_options.cancel = &cancel;
  EXPECT_FALSE(calibrate_decode(public_options, &out));
  EXPECT_FALSE(out.measured());
}

TEST(CalibrationDriver, ThePublicCalibrationDecidesEveryType) {
  CalibrationOptions options;
  options.threads = 2;
  options.matrix_bytes = kSmallBytes;
  DecodeTuning t;
  const Status s = calibrate_decode(options, &t);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(t.types.size(), 3u);
  EXPECT_EQ(t.types[0].type, "f16");
  EXPECT_EQ(t.types[1].type, "q8_0");
  EXPECT_EQ(t.types[2].type, "q4_0");
  EXPECT_EQ(t.threads, 2);
  EXPECT_GT(t.seconds, 0);
  for (const TypeTuning& type : t.types) {
    EXPECT_FALSE(type.chosen.empty());
    EXPECT_FALSE(type.reason.empty());
  }
  const std::vector<int> widths = {0, 1024, 2048, 4096};
  EXPECT_NE(std::find(widths.begin(), widths.end(), t.f16_stripe_cols), widths.end());
  EXPECT_TRUE(t.f16_streams == 0 || t.f16_streams == 4 || t.f16_streams == 8);
  // The table serves every type: on a VNNI CPU the avx2 table would change the K-quants' kernels,
  // which the calibration does not measure, so it keeps the best table whatever Q8_0 / Q4_0 did.
  const std::vector<const kernels::KernelTable*> tables = kernels::asm_tables();
  if (tables.size() == 2 &&
      tables[0]->of(format::DType::Q4_K).decode != tables[1]->of(format::DType::Q4_K).decode) {
    EXPECT_NE(t.quant_isa, "avx2");
  }
}

// Applying a tuning switches the Auto tables (F16 streams, quant table) at once; an explicit
// kernel choice (bench --kernels, MAGNETAR_KERNELS) is left alone.
TEST(CalibrationApply, TuningSwitchesAutoTablesOnly) {
  if (!kernels::asm_available()) GTEST_SKIP() << "no asm kernels";
  if (kernels::choice_from_environment() != kernels::KernelChoice::Auto) GTEST_SKIP() << "MAGNETAR_KERNELS set";
  kernels::select(kernels::KernelChoice::Auto);
  DecodeTuning tuning;
  tuning.f16_streams = 8;
  tuning.quant_isa = "avx2";
  apply_decode_tuning(tuning);
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("avx2", 8));
  EXPECT_STREQ(kernels::active().isa, "avx2");
  EXPECT_EQ(active_decode_tuning().f16_streams, 8);
  kernels::select(kernels::KernelChoice::Asm);  // explicit: the best table, the built-in rule
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("", 0));
  apply_decode_tuning(tuning);
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("", 0));
  kernels::select(kernels::KernelChoice::Auto);
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("avx2", 8));
  apply_decode_tuning(DecodeTuning{});
  EXPECT_EQ(&kernels::active(), kernels::asm_table_named("", 0));
  EXPECT_EQ(&kernels::active(), kernels::asm_tables().back());
}

}  // namespace
}  // namespace magnetar::test
