// The bench report's renderings: the --json document's shape (what scripts rely on) and the
// terminal table's rows. Built from fixed numbers; nothing is timed.
#include <gtest/gtest.h>

#include "bench_report.h"

namespace magnetar::cli {
namespace {

BenchReport sample_report() {
  BenchReport r;
  r.model_path = "/tmp/gemma-2b.mgn";
  r.architecture = "gemma";
  r.weight_type = "f16";
  r.n_params = 2506172416;
  r.file_bytes = 5013000000;
  r.weight_bytes_per_token = 5012344832;
  r.kv_cache_bytes = 1 << 20;
  r.context_length = 513;
  r.cpu_brand = "Test CPU";
  r.logical_cores = 2;
  r.kernels = "avx2";
  r.load_mode = "read";
  r.load_seconds = 2.5;
  r.reps = 3;
  r.probe_buffer_bytes = 1ull << 30;
  r.ceiling = {{1, 32.0}, {2, 64.0}};
  for (int t : {1, 2}) {
    ThreadRun run;
    run.threads = t;
    run.ceiling_gbps = 32.0 * t;
    run.prompts = {{64, 20.0 * t, 3.2 / t}, {128, 21.0 * t, 6.1 / t}, {512, 22.0 * t, 23.3 / t}};
    run.ttft_seconds = 6.1 / t;
    run.ttft_prompt_tokens = 128;
    run.generated_tokens = 128;
    run.generate_tokens_per_second = 6.0 * t;
    run.engine_generate_tokens_per_second = 5.9 * t;
    run.cpu_clock_generate_tokens_per_second = 6.2 * t;
    run.achieved_gbps = 30.07 * t;
    run.percent_of_ceiling = 93.97;
    run.prefill_gflops = 87.0 * t;
    run.pool_round_trip_us = 0.5;
    run.pool_wake_up_us = 40.0;
    r.runs.push_back(run);
  }
  r.peak_resident_bytes = 5200000000;
  r.resident_during_generation_bytes = 5100000000;
  r.idle_seconds = 5;
  r.idle_cpu_seconds = 0.002;
  return r;
}

TEST(BenchReport, MedianOfOddEvenAndEmpty) {
  EXPECT_DOUBLE_EQ(median({}), 0.0);
  EXPECT_DOUBLE_EQ(median({3.0}), 3.0);
  EXPECT_DOUBLE_EQ(median({5.0, 1.0, 3.0}), 3.0);
  EXPECT_DOUBLE_EQ(median({4.0, 1.0, 3.0, 2.0}), 2.5);
}

TEST(BenchReport, OtherResidentIsWhatTheWeightsAndCacheDoNotExplain) {
  BenchReport r = sample_report();
  EXPECT_EQ(other_resident_bytes(r), 5100000000ll - 5013000000ll - (1 << 20));
  r.resident_during_generation_bytes = 0;
  EXPECT_EQ(other_resident_bytes(r), 0);
}

TEST(BenchReport, JsonHasEveryFieldScriptsReadWithItsValue) {
  const nlohmann::json j = report_to_json(sample_report());
  EXPECT_EQ(j["model"]["path"], "/tmp/gemma-2b.mgn");
  EXPECT_EQ(j["model"]["weight_bytes_per_token"], 5012344832ull);
  EXPECT_EQ(j["model"]["context_length"], 513);
  EXPECT_EQ(j["cpu"]["logical_cores"], 2);
  EXPECT_EQ(j["kernels"], "avx2");
  EXPECT_EQ(j["load"]["mode"], "read");
  EXPECT_DOUBLE_EQ(j["load"]["seconds"].get<double>(), 2.5);
  EXPECT_EQ(j["reps"], 3);
  ASSERT_EQ(j["ceiling"]["points"].size(), 2u);
  EXPECT_EQ(j["ceiling"]["points"][1]["threads"], 2);
  EXPECT_DOUBLE_EQ(j["ceiling"]["points"][1]["read_gbps"].get<double>(), 64.0);
  ASSERT_EQ(j["runs"].size(), 2u);
  const auto& run = j["runs"][1];
  EXPECT_EQ(run["threads"], 2);
  ASSERT_EQ(run["prompt"].size(), 3u);
  EXPECT_EQ(run["prompt"][2]["tokens"], 512);
  EXPECT_DOUBLE_EQ(run["prompt"][2]["tokens_per_second"].get<double>(), 44.0);
  EXPECT_DOUBLE_EQ(run["ttft_seconds"].get<double>(), 3.05);
  EXPECT_EQ(run["generation"]["tokens"], 128);
  EXPECT_DOUBLE_EQ(run["generation"]["tokens_per_second"].get<double>(), 12.0);
  EXPECT_DOUBLE_EQ(run["generation"]["cpu_clock_tokens_per_second"].get<double>(), 12.4);
  EXPECT_DOUBLE_EQ(run["achieved_gbps"].get<double>(), 60.14);
  EXPECT_DOUBLE_EQ(run["percent_of_ceiling"].get<double>(), 93.97);
  EXPECT_DOUBLE_EQ(run["pool"]["wake_up_us"].get<double>(), 40.0);
  EXPECT_EQ(j["memory"]["peak_resident_bytes"], 5200000000ull);
  EXPECT_TRUE(j["memory"].contains("other_resident_bytes"));
  EXPECT_DOUBLE_EQ(j["idle"]["process_cpu_seconds"].get<double>(), 0.002);
}

TEST(BenchReport, IdleIsNullWhenNotMeasured) {
  BenchReport r = sample_report();
  r.idle_seconds = 0;
  EXPECT_TRUE(report_to_json(r)["idle"].is_null());
  EXPECT_EQ(report_to_table(r).find("idle "), std::string::npos);
}

TEST(BenchReport, TableHasOneRowPerThreadCountAndEveryPromptColumn) {
  const std::string table = report_to_table(sample_report());
  for (const char* text : {"pp64 tok/s", "pp128 tok/s", "pp512 tok/s", "gen tok/s", "% ceil",
                           "94.0%", "12.00", "60.1", "12.40 tok/s", "Test CPU", "avx2 kernels", "idle"})
    EXPECT_NE(table.find(text), std::string::npos) << text << "\n" << table;
}

TEST(BenchReport, QuantizedModelsNameTheirKernelTable) {
  BenchReport r = sample_report();
  r.quant_kernels = "avx512vnni";
  EXPECT_EQ(report_to_table(r).find("avx512vnni"), std::string::npos) << "an f16 model uses no quant kernels";
  EXPECT_EQ(report_to_json(r)["quant_kernels"], "avx512vnni");
  r.weight_type = "q4_0";
  EXPECT_NE(report_to_table(r).find("avx2 kernels; q4_0: avx512vnni table"), std::string::npos) << report_to_table(r);
  r.weight_type = "q4_k_m";  // the K-quants run the same table
  EXPECT_NE(report_to_table(r).find("avx2 kernels; q4_k_m: avx512vnni table"), std::string::npos)
      << report_to_table(r);
}

TEST(BenchReport, TableMarksPromptLengthsAThreadCountSkipped) {
  BenchReport r = sample_report();
  r.runs[1].prompts.pop_back();  // e.g. 512 tokens did not fit the context
  EXPECT_NE(report_to_table(r).find("n/a"), std::string::npos);
}

}  // namespace
}  // namespace magnetar::cli
