// The results of `magnetar-cli bench` as plain data, and their two renderings: the terminal
// table and the --json document. Kept apart from the measuring code (cmd_bench.cpp) so the
// output shapes are unit-tested without timing anything.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "magnetar/tools.h"  // median
#include "magnetar/tuning.h"

namespace magnetar::cli {

struct PromptResult {
  int tokens = 0;
  double tokens_per_second = 0;  // median over repetitions: tokens / (first token - call)
  double seconds = 0;            // median time to first token
};

struct ThreadRun {
  int threads = 0;
  double ceiling_gbps = 0;  // the read probe at this thread count
  std::vector<PromptResult> prompts;
  double ttft_seconds = 0;  // 128-token prompt (or the nearest measured length)
  int ttft_prompt_tokens = 0;
  int generated_tokens = 0;
  double generate_tokens_per_second = 0;         // median, timed between tokens by the bench
  double engine_generate_tokens_per_second = 0;  // median of GenerationStats, as a cross-check
  // threads x tokens / process CPU seconds while decoding: what a thread that is never
  // descheduled would do. Equals the wall-clock rate on a quiet machine; spinning workers count.
  double cpu_clock_generate_tokens_per_second = 0;
  double achieved_gbps = 0;                      // weight_bytes_per_token x tokens/s
  double percent_of_ceiling = 0;
  double prefill_gflops = 0;       // longest prompt: 2 x matrix parameters x tokens/s
  double pool_round_trip_us = 0;   // empty ThreadPool::run(), workers spinning
  double pool_wake_up_us = 0;      // empty ThreadPool::run() after the workers went to sleep
};

struct BenchReport {
  std::string model_path, architecture, weight_type;
  uint64_t n_params = 0, file_bytes = 0, weight_bytes_per_token = 0, kv_cache_bytes = 0;
  uint64_t matrix_params = 0;  // parameters the prefill multiplies per token
  int context_length = 0;
  std::string cpu_brand;
  std::string cpu_vendor;  // CPUID vendor, display family / model, stepping
  int cpu_family = 0, cpu_model = 0, cpu_stepping = 0;
  int logical_cores = 0;
  std::string kernels;  // kernels::active().isa during the run
  std::string quant_kernels;  // kernels::active().isa: the quantized types' table
  bool interleaved_ceiling = false;  // ceiling measured before each decode repetition
  std::string load_mode;
  int striped_matrices = 0;  // laid out in column stripes at load (0: plain layout)
  int stripe_cols = 0;       // their width
  // The decode tuning the load and the kernels used ("built-in" when not measured or overridden).
  DecodeTuning tuning;
  std::string tuning_source;  // "cached calibration", "calibrated now", "built-in", "built-in (--layout)"
  int tiled_matrices = 0;    // Q8_0/Q4_0 matrices in x16 row tiles at load
  double load_seconds = 0;
  int reps = 0;
  uint64_t probe_buffer_bytes = 0;
  std::vector<std::pair<int, double>> ceiling;  // (threads, GB/s) as the probe measured them
  std::vector<ThreadRun> runs;
  uint64_t peak_resident_bytes = 0;
  uint64_t resident_during_generation_bytes = 0;  // maximum sampled while generating
  double idle_seconds = 0;                        // 0 = idle CPU not measured
  double idle_cpu_seconds = 0;                    // process CPU time over idle_seconds
};

// Resident memory while generating minus the model file and the KV cache (target: < 64 MB).
// 0 when nothing was sampled.
int64_t other_resident_bytes(const BenchReport& report);
nlohmann::json report_to_json(const BenchReport& report);
std::string report_to_table(const BenchReport& report);
// `bench --tune`: the calibration's candidates, medians and choices, per weight type.
std::string tuning_to_table(const DecodeTuning& tuning);

}  // namespace magnetar::cli
