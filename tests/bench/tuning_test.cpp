// Decode tuning's pure logic with made-up timings and files (core/tuning.h): the decision (ties,
// noise, failed and missing candidates), the cache file (round trip, stale, damaged, other
// machines kept), the CPU signature decoding, and the bench's rendering of a tuning.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>

#include "bench_report.h"
#include "common/testdata.h"
#include "core/cpu_features.h"
#include "core/tuning.h"
#include "magnetar/engine.h"
#include "model/synth.h"

namespace magnetar {
namespace {

using tuning::decide;
using tuning::Measured;

Measured timed(const std::string& name, std::vector<double> seconds) { return {name, std::move(seconds), false}; }

TEST(TuningDecision, AClearlyFasterCandidateReplacesTheDefault) {
  const auto d = decide({timed("default", {10, 10.1, 9.9, 10, 10}), timed("fast", {8, 8.05, 7.95, 8, 8})}, 0);
  EXPECT_EQ(d.chosen, 1);
  EXPECT_NEAR(d.gain, 1.25, 1e-9);
  EXPECT_NE(d.reason.find("faster than the default"), std::string::npos) << d.reason;
  ASSERT_EQ(d.summary.size(), 2u);
  EXPECT_DOUBLE_EQ(d.summary[1].median_seconds, 8);
}

TEST(TuningDecision, TiesAndSmallGainsKeepTheDefault) {
  EXPECT_EQ(decide({timed("default", {10, 10, 10}), timed("same", {10, 10, 10})}, 0).chosen, 0);
  // 2 % faster: under kMinGain (3 %), even with no noise at all.
  const auto d = decide({timed("default", {10, 10, 10}), timed("slightly", {9.8, 9.8, 9.8})}, 0);
  EXPECT_EQ(d.chosen, 0);
  EXPECT_DOUBLE_EQ(d.gain, 1.0);
  EXPECT_NE(d.reason.find("within noise"), std::string::npos) << d.reason;
  // A tie between two challengers that both clearly win goes to the lower index.
  EXPECT_EQ(decide({timed("default", {10}), timed("a", {5}), timed("b", {5})}, 0).chosen, 1);
}

TEST(TuningDecision, NoisyTimingsRaiseTheGainNeeded) {
  // 10 % faster by the medians, but the default's passes scatter by ~8 % (MAD): not enough.
  const Measured noisy_default = timed("default", {10, 9.2, 10.8, 10, 9.2, 10.8, 10});
  const auto d = decide({noisy_default, timed("challenger", {9.09, 9.09, 9.09, 9.09, 9.09})}, 0);
  EXPECT_EQ(d.chosen, 0) << d.reason;
  // The same gain with quiet timings wins.
  EXPECT_EQ(decide({timed("default", {10, 10, 10}), timed("challenger", {9.09, 9.09, 9.09})}, 0).chosen, 1);
  // One descheduled pass (an outlier) moves neither median nor MAD much: still a clear win.
  EXPECT_EQ(decide({timed("default", {10, 10, 10, 10, 40}), timed("challenger", {8, 8, 8, 30, 8})}, 0).chosen, 1);
}

TEST(TuningDecision, AFailedCandidateIsNeverChosenHoweverFast) {
  Measured broken = timed("broken", {1, 1, 1});
  broken.failed = true;
  const auto d = decide({timed("default", {10, 10, 10}), broken, timed("ok", {9, 9, 9})}, 0);
  EXPECT_EQ(d.chosen, 2);
  EXPECT_TRUE(d.summary[1].failed);
  EXPECT_EQ(d.summary[1].median_seconds, 0);
}

TEST(TuningDecision, AFailedDefaultGivesWayToTheFastestMeasured) {
  Measured broken_default = timed("default", {5, 5, 5});
  broken_default.failed = true;
  const auto d = decide({broken_default, timed("a", {9, 9}), timed("b", {8, 8})}, 0);
  EXPECT_EQ(d.chosen, 2);
  EXPECT_NE(d.reason.find("failed"), std::string::npos);
}

TEST(TuningDecision, MissingEntriesAreSkippedAndAnUnmeasuredDefaultIsKept) {
  // Unmeasured challengers (the time budget ran out) are skipped.
  EXPECT_EQ(decide({timed("default", {10, 10}), timed("late", {})}, 0).chosen, 0);
  // An unmeasured default is kept: no evidence against it.
  const auto d = decide({timed("default", {}), timed("measured", {5, 5})}, 0);
  EXPECT_EQ(d.chosen, 0);
  EXPECT_NE(d.reason.find("not measured"), std::string::npos);
  // Nothing measured at all: no choice (the caller keeps the built-in values).
  EXPECT_EQ(decide({timed("default", {}), timed("other", {})}, 0).chosen, -1);
  EXPECT_EQ(decide({}, 0).chosen, -1);
  // A default index outside the list: the fastest measured.
  EXPECT_EQ(decide({timed("a", {3}), timed("b", {2})}, 7).chosen, 1);
}

TEST(TuningDecision, NonFiniteAndNonPositiveSamplesAreDropped) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  const auto d = decide({timed("default", {10, nan, 10}), timed("bogus", {0, -1, nan, inf})}, 0);
  EXPECT_EQ(d.chosen, 0);
  EXPECT_EQ(d.summary[1].median_seconds, 0);
  EXPECT_DOUBLE_EQ(d.summary[0].median_seconds, 10);
}

// ---- Cache ----------------------------------------------------------------------------------

DecodeTuning sample_tuning() {
  DecodeTuning t;
  t.f16_stripe_cols = 1024;
  t.f16_streams = 8;
  t.q8_0_x16_tiles = true;
  t.q4_0_x16_tiles = false;
  t.quant_isa = "avx2";
  t.threads = 2;
  t.seconds = 2.5;
  t.measured_unix = 1796000000;
  TypeTuning f16;
  f16.type = "f16";
  f16.chosen = "stripes 1024, 8 streams";
  f16.reason = "5.0 % faster than the default (needed 3.0 %)";
  f16.gain = 1.05;
  f16.candidates = {{"stripes 2048, 4 streams", 0.0105, false}, {"stripes 1024, 8 streams", 0.01, false},
                    {"plain, 4 streams", 0, true}};
  t.types = {f16};
  return t;
}

TEST(TuningCache, RoundTripsEveryValue) {
  const std::string text = tuning::update_cache("", "machine", "v1", sample_tuning());
  DecodeTuning back;
  const Status s = tuning::parse_cache(text, "machine", "v1", &back);
  ASSERT_TRUE(s.is_ok()) << s.message();
  EXPECT_EQ(back.f16_stripe_cols, 1024);
  EXPECT_EQ(back.f16_streams, 8);
  EXPECT_TRUE(back.q8_0_x16_tiles);
  EXPECT_FALSE(back.q4_0_x16_tiles);
  EXPECT_EQ(back.quant_isa, "avx2");
  EXPECT_EQ(back.threads, 2);
  EXPECT_EQ(back.measured_unix, 1796000000);
  ASSERT_EQ(back.types.size(), 1u);
  EXPECT_EQ(back.types[0].chosen, "stripes 1024, 8 streams");
  ASSERT_EQ(back.types[0].candidates.size(), 3u);
  EXPECT_TRUE(back.types[0].candidates[2].failed);
  EXPECT_DOUBLE_EQ(back.types[0].candidates[0].median_seconds, 0.0105);
}

TEST(TuningCache, AnotherEngineVersionIsStale) {
  const std::string text = tuning::update_cache("", "machine", "v1", sample_tuning());
  DecodeTuning back;
  const Status s = tuning::parse_cache(text, "machine", "v2", &back);
  EXPECT_FALSE(s);
  EXPECT_NE(s.message().find("stale"), std::string::npos) << s.message();
  EXPECT_FALSE(tuning::parse_cache(text, "other machine", "v1", &back));
}

TEST(TuningCache, DamagedOrHostileFilesReadAsNotCached) {
  DecodeTuning back;
  const std::string good = tuning::update_cache("", "m", "v", sample_tuning());
  auto with = [&](const std::function<void(nlohmann::json&)>& edit) {
    nlohmann::json doc = nlohmann::json::parse(good);
    edit(doc["machines"]["m"]);
    return doc.dump();
  };
  const std::string cases[] = {
      "", "{", "[]", "null", "{\"version\":2,\"machines\":{}}", good.substr(0, good.size() / 2),
      with([](nlohmann::json& e) { e["values"]["f16_stripe_cols"] = 1000; }),
      with([](nlohmann::json& e) { e["values"]["f16_stripe_cols"] = 1024.5; }),
      with([](nlohmann::json& e) { e["values"]["f16_streams"] = 6; }),
      with([](nlohmann::json& e) { e["values"]["quant_isa"] = "avx1024"; }),
      with([](nlohmann::json& e) { e["values"]["q8_0_x16_tiles"] = "yes"; }),
      with([](nlohmann::json& e) { e["values"].erase("q4_0_x16_tiles"); }),
      with([](nlohmann::json& e) { e["threads"] = 0; }),
      with([](nlohmann::json& e) { e["types"] = nlohmann::json::array(); }),
      with([](nlohmann::json& e) { e["types"][0]["candidates"][0]["median_seconds"] = -1; }),
      with([](nlohmann::json& e) { e["types"][0]["chosen"] = std::string(10000, 'x'); }),
      with([](nlohmann::json& e) { e["engine_version"] = 3; }),
  };
  for (const std::string& text : cases)
    EXPECT_FALSE(tuning::parse_cache(text, "m", "v", &back)) << text.substr(0, 200);
}

TEST(TuningCache, UpdateKeepsOtherMachinesAndReplacesDamagedFiles) {
  const std::string first = tuning::update_cache("", "a", "v", sample_tuning());
  DecodeTuning other = sample_tuning();
  other.f16_stripe_cols = 4096;
  const std::string both = tuning::update_cache(first, "b", "v", other);
  DecodeTuning a, b;
  ASSERT_TRUE(tuning::parse_cache(both, "a", "v", &a));
  ASSERT_TRUE(tuning::parse_cache(both, "b", "v", &b));
  EXPECT_EQ(a.f16_stripe_cols, 1024);
  EXPECT_EQ(b.f16_stripe_cols, 4096);
  const std::string replaced = tuning::update_cache("{not json", "b", "v", other);
  EXPECT_TRUE(tuning::parse_cache(replaced, "b", "v", &b));
}

TEST(TuningCache, FileRoundTripAndDamagedFile) {
  const std::string dir = test::make_temp_dir("tuning-cache");
  const std::string path = dir + "/tuning.json";
  DecodeTuning back;
  EXPECT_FALSE(tuning::read_cache_file(path, "m", "v", &back));  // absent
  ASSERT_TRUE(tuning::write_cache_file(path, "m", "v", sample_tuning()));
  ASSERT_TRUE(tuning::read_cache_file(path, "m", "v", &back));
  EXPECT_EQ(back.f16_streams, 8);
  {
    std::ofstream damaged(path, std::ios::binary | std::ios::trunc);
    damaged << "{\"version\": 1, \"machines\": {\"m\": {\"values\": [";
  }
  EXPECT_FALSE(tuning::read_cache_file(path, "m", "v", &back));
  ASSERT_TRUE(tuning::write_cache_file(path, "m", "v", sample_tuning()));  // replaced
  EXPECT_TRUE(tuning::read_cache_file(path, "m", "v", &back));
  test::remove_tree(dir);
}

TEST(TuningCache, KeyNamesTheCpuIdentityAndVersionTheCalibration) {
  CpuInfo cpu;
  cpu.vendor = "AuthenticAMD";
  cpu.family = 25;
  cpu.model = 1;
  cpu.stepping = 1;
  cpu.brand = "AMD EPYC 7R13";
  cpu.logical_cores = 2;
  const std::string key = tuning::cache_key(cpu);
  EXPECT_NE(key.find("AuthenticAMD family 25 model 1 stepping 1"), std::string::npos) << key;
  EXPECT_NE(key.find("AMD EPYC 7R13"), std::string::npos);
  cpu.stepping = 2;
  EXPECT_NE(tuning::cache_key(cpu), key);
  EXPECT_NE(tuning::engine_version().find(MAGNETAR_VERSION), std::string::npos);
}

TEST(CpuSignature, DecodesFamilyModelAndSteppingAsVendorsDocument) {
  // AMD Zen 3 EPYC (family 19h = 25, model 01h), Intel Emerald Rapids (family 6, model CFh = 207),
  // an old family-15 Pentium 4 (no extended family added), a family-5 Pentium (no extended model).
  const struct {
    uint32_t eax;
    int family, model, stepping;
  } cases[] = {{0x00A00F11, 25, 1, 1}, {0x000C06F2, 6, 207, 2}, {0x00000F29, 15, 2, 9}, {0x000F0543, 5, 4, 3}};
  for (const auto& c : cases) {
    const cpu::Signature s = cpu::decode_signature(c.eax);
    EXPECT_EQ(s.family, c.family) << std::hex << c.eax;
    EXPECT_EQ(s.model, c.model) << std::hex << c.eax;
    EXPECT_EQ(s.stepping, c.stepping) << std::hex << c.eax;
  }
  const CpuInfo& here = cpu_info();
  EXPECT_EQ(here.vendor, cpu::features().vendor);
  if (here.vendor == "AuthenticAMD" || here.vendor == "GenuineIntel") {
    EXPECT_GT(here.family, 0);
  }
}

// ---- Rendering --------------------------------------------------------------------------------

TEST(TuningReport, DescribesTheValuesInEffect) {
  EXPECT_EQ(describe_decode_tuning(DecodeTuning{}),
            "f16 stripes 2048, streams by width; q8_0 x16 tiles; q4_0 x16 tiles; quant kernels best (built-in)");
  EXPECT_EQ(describe_decode_tuning(sample_tuning()),
            "f16 stripes 1024, 8 streams; q8_0 x16 tiles; q4_0 rows; quant kernels avx2 (measured)");
}

TEST(TuningReport, TableMarksTheChoiceAndFailedOrUnmeasuredCandidates) {
  DecodeTuning t = sample_tuning();
  t.types[0].candidates.push_back({"stripes 4096, 8 streams", 0, false});
  const std::string table = cli::tuning_to_table(t);
  EXPECT_NE(table.find("* stripes 1024, 8 streams"), std::string::npos) << table;
  EXPECT_NE(table.find("10.50 ms"), std::string::npos) << table;
  EXPECT_NE(table.find("plain, 4 streams"), std::string::npos);
  EXPECT_NE(table.find("failed (wrong results)"), std::string::npos);
  EXPECT_NE(table.find("not measured (time budget)"), std::string::npos);
}

TEST(TuningReport, BenchJsonCarriesTheCpuIdentityAndTheTuning) {
  cli::BenchReport r;
  r.cpu_brand = "AMD EPYC 7R13";
  r.cpu_vendor = "AuthenticAMD";
  r.cpu_family = 25;
  r.cpu_model = 1;
  r.cpu_stepping = 1;
  r.tuning = sample_tuning();
  r.tuning_source = "cached calibration";
  r.stripe_cols = 1024;
  const nlohmann::json j = cli::report_to_json(r);
  EXPECT_EQ(j["cpu"]["vendor"], "AuthenticAMD");
  EXPECT_EQ(j["cpu"]["family"], 25);
  EXPECT_EQ(j["cpu"]["model"], 1);
  EXPECT_EQ(j["cpu"]["stepping"], 1);
  EXPECT_EQ(j["tuning"]["source"], "cached calibration");
  EXPECT_EQ(j["tuning"]["calibration"]["values"]["f16_stripe_cols"], 1024);
  EXPECT_EQ(j["tuning"]["calibration"]["types"][0]["chosen"], "stripes 1024, 8 streams");
  EXPECT_EQ(j["load"]["stripe_cols"], 1024);
  const std::string table = cli::report_to_table(r);
  EXPECT_NE(table.find("AuthenticAMD family 25 model 1 stepping 1"), std::string::npos) << table;
  EXPECT_NE(table.find("tuning   f16 stripes 1024, 8 streams"), std::string::npos) << table;
}

// ---- The loader follows the tuning ------------------------------------------------------------

// Restores the built-in tuning however a test ends.
struct BuiltInTuningAfterwards {
  ~BuiltInTuningAfterwards() { apply_decode_tuning(DecodeTuning{}); }
};

// A tuned stripe width (and stream count) changes the layout, not the numbers: every variant
// gives the built-in layout's logits, for prefill and decode; LoadOptions::use_tuning = false
// (the CLI's explicit --layout) keeps the built-in width.
TEST(TuningLoader, TunedStripeWidthsAndStreamsGiveTheBuiltInLogits) {
  const std::string dir = test::make_temp_dir("tuning-load");
  synth::Spec spec = *synth::find_spec("stories15M");
  spec.name = "wide-ffn";
  spec.dim = 64, spec.n_layers = 2, spec.n_heads = 4, spec.n_kv_heads = 2, spec.head_dim = 16;
  spec.hidden_dim = 4200;  // w_down: 4200 columns, wider than every candidate stripe width
  spec.vocab_size = 600, spec.max_context = 64;
  const std::string path = dir + "/wide.mgn";
  synth::Options options;
  options.dtype = format::DType::F16;
  options.seed = 3;
  ASSERT_TRUE(synth::write_model(spec, options, path).is_ok());
  BuiltInTuningAfterwards restore;
  auto logits_with = [&](const DecodeTuning& tuning, bool use_tuning, ModelInfo* info) {
    apply_decode_tuning(tuning);
    LoadOptions load;
    load.threads = 2;
    load.use_tuning = use_tuning;
    std::unique_ptr<Model> model;
    std::vector<float> logits, step;
    EXPECT_TRUE(Model::load(path, load, &model).is_ok());
    if (!model) return logits;
    *info = model->info();
    std::unique_ptr<Session> session;
    EXPECT_TRUE(Session::create(*model, &session).is_ok());
    EXPECT_TRUE(session->evaluate({1, 200, 201, 202, 203, 204}, &logits).is_ok());
    EXPECT_TRUE(session->evaluate({205}, &step).is_ok());
    logits.insert(logits.end(), step.begin(), step.end());
    return logits;
  };
  ModelInfo info;
  const std::vector<float> built_in = logits_with(DecodeTuning{}, true, &info);
  EXPECT_EQ(info.stripe_cols, 2048);
  EXPECT_EQ(info.striped_matrices, spec.n_layers);
  struct Case {
    int stripe_cols, streams;
  };
  for (const Case c : {Case{1024, 8}, Case{4096, 4}, Case{0, 8}, Case{2048, 8}}) {
    DecodeTuning tuning;
    tuning.f16_stripe_cols = c.stripe_cols;
    tuning.f16_streams = c.streams;
    const std::vector<float> tuned = logits_with(tuning, true, &info);
    EXPECT_EQ(info.stripe_cols, c.stripe_cols);
    EXPECT_EQ(info.striped_matrices, c.stripe_cols > 0 ? spec.n_layers : 0);
    ASSERT_EQ(tuned.size(), built_in.size());
    double max_abs = 0, max_diff = 0;
    for (size_t k = 0; k < tuned.size(); ++k) {
      max_abs = std::max(max_abs, double(std::fabs(built_in[k])));
      max_diff = std::max(max_diff, double(std::fabs(tuned[k] - built_in[k])));
    }
    EXPECT_GT(max_abs, 0.0);
    EXPECT_LE(max_diff, 1e-4 * max_abs + 1e-6) << "stripes " << c.stripe_cols << ", " << c.streams << " streams";
    // Told to ignore the tuning, the loader keeps the built-in width.
    logits_with(tuning, false, &info);
    EXPECT_EQ(info.stripe_cols, 2048);
  }
  test::remove_tree(dir);
}

}  // namespace
}  // namespace magnetar
