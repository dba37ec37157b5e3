// Rendering of `magnetar-cli bench` results (see bench_report.h).
#include "bench_report.h"

#include <algorithm>
#include <cstdio>
#include <string>

namespace magnetar::cli {

int64_t other_resident_bytes(const BenchReport& r) {
  if (r.resident_during_generation_bytes == 0) return 0;
  return static_cast<int64_t>(r.resident_during_generation_bytes) -
         static_cast<int64_t>(r.file_bytes) - static_cast<int64_t>(r.kv_cache_bytes);
}

nlohmann::json report_to_json(const BenchReport& r) {
  using nlohmann::json;
  json ceiling = json::array();
  for (const auto& [threads, gbps] : r.ceiling)
    ceiling.push_back({{"threads", threads}, {"read_gbps", gbps}});
  json runs = json::array();
  for (const auto& run : r.runs) {
    json prompts = json::array();
    for (const auto& p : run.prompts)
      prompts.push_back({{"tokens", p.tokens},
                         {"tokens_per_second", p.tokens_per_second},
                         {"seconds", p.seconds}});
    runs.push_back({{"threads", run.threads},
                    {"ceiling_gbps", run.ceiling_gbps},
                    {"prompt", prompts},
                    {"ttft_seconds", run.ttft_seconds},
                    {"ttft_prompt_tokens", run.ttft_prompt_tokens},
                    {"generation",
                     {{"tokens", run.generated_tokens},
                      {"tokens_per_second", run.generate_tokens_per_second},
                      {"engine_tokens_per_second", run.engine_generate_tokens_per_second},
                      {"cpu_clock_tokens_per_second", run.cpu_clock_generate_tokens_per_second}}},
                    {"achieved_gbps", run.achieved_gbps},
                    {"percent_of_ceiling", run.percent_of_ceiling},
                    {"prefill_gflops", run.prefill_gflops},
                    {"pool", {{"round_trip_us", run.pool_round_trip_us},
                              {"wake_up_us", run.pool_wake_up_us}}}});
  }
  json doc = {
      {"model",
       {{"path", r.model_path},
        {"architecture", r.architecture},
        {"weight_type", r.weight_type},
        {"n_params", r.n_params},
        {"file_bytes", r.file_bytes},
        {"weight_bytes_per_token", r.weight_bytes_per_token},
        {"kv_cache_bytes", r.kv_cache_bytes},
        {"context_length", r.context_length}}},
      {"cpu",
       {{"brand", r.cpu_brand},
        {"vendor", r.cpu_vendor},
        {"family", r.cpu_family},
        {"model", r.cpu_model},
        {"stepping", r.cpu_stepping},
        {"logical_cores", r.logical_cores}}},
      {"kernels", r.kernels},
      {"quant_kernels", r.quant_kernels},
      {"tuning", {{"source", r.tuning_source},
                  {"summary", describe_decode_tuning(r.tuning)},
                  {"calibration", json::parse(decode_tuning_json(r.tuning))}}},
      {"load", {{"mode", r.load_mode}, {"striped_matrices", r.striped_matrices}, {"stripe_cols", r.stripe_cols},
                {"tiled_matrices", r.tiled_matrices}, {"seconds", r.load_seconds}}},
      {"reps", r.reps},
      {"ceiling", {{"buffer_bytes", r.probe_buffer_bytes}, {"points", ceiling},
                   {"interleaved_with_decode", r.interleaved_ceiling}}},
      {"runs", runs},
      {"memory",
       {{"peak_resident_bytes", r.peak_resident_bytes},
        {"resident_during_generation_bytes", r.resident_during_generation_bytes},
        {"other_resident_bytes", other_resident_bytes(r)}}},
  };
  if (r.idle_seconds > 0)
    doc["idle"] = {{"seconds", r.idle_seconds}, {"process_cpu_seconds", r.idle_cpu_seconds}};
  else
    doc["idle"] = nullptr;
  return doc;
}

namespace {

std::string format(const char* fmt, double a) {
  char buf[64];
  std::snprintf(buf, sizeof buf, fmt, a);
  return buf;
}

std::string pad(std::string s, size_t width) {
  if (s.size() < width) s.insert(0, width - s.size(), ' ');
  return s;
}

double gb(uint64_t bytes) { return static_cast<double>(bytes) / 1e9; }
double mib(uint64_t bytes) { return static_cast<double>(bytes) / 1048576.0; }

}  // namespace

std::string report_to_table(const BenchReport& r) {
  std::string out;
  out += "model    " + r.model_path + " (" + r.architecture + ", " + r.weight_type + ", " +
         format("%.2f", static_cast<double>(r.n_params) / 1e9) + " B params)\n";
  out += "weights  " + format("%.3f", gb(r.weight_bytes_per_token)) + " GB read per token, " +
         "KV cache " + format("%.1f", static_cast<double>(r.kv_cache_bytes) / 1048576.0) +
         " MiB for " + std::to_string(r.context_length) + " tokens\n";
  out += "cpu      " + r.cpu_brand + " (" + r.cpu_vendor + " family " + std::to_string(r.cpu_family) + " model " +
         std::to_string(r.cpu_model) + " stepping " + std::to_string(r.cpu_stepping) + "), " +
         std::to_string(r.logical_cores) + " logical cores, " + r.kernels + " kernels";
  // Block-quantized weights run the quantized types' table (which of its kernels are VNNI ones is
  // the type's record: asm/README.md).
  const bool quantized = !r.weight_type.empty() && r.weight_type != "f16" && r.weight_type != "f32" &&
                         r.weight_type != "bf16";
  if (quantized && !r.quant_kernels.empty()) out += "; " + r.weight_type + ": " + r.quant_kernels + " table";
  out += "\n";
  out += "load     " + r.load_mode + ", " + format("%.2f", r.load_seconds) + " s";
  if (r.load_seconds > 0)
    out += " (" + format("%.1f", gb(r.file_bytes) / r.load_seconds) + " GB/s)";
  if (r.striped_matrices > 0)
    out += ", " + std::to_string(r.striped_matrices) + " wide matrices striped (" + std::to_string(r.stripe_cols) +
           " columns)";
  if (r.tiled_matrices > 0) out += ", " + std::to_string(r.tiled_matrices) + " matrices in x16 tiles";
  if (r.striped_matrices == 0 && r.tiled_matrices == 0) out += ", plain layout";
  out += "\ntuning   " + describe_decode_tuning(r.tuning) + ", " + r.tuning_source;
  out += "\nreps     " + std::to_string(r.reps) + " (medians shown)";
  out += r.interleaved_ceiling ? "; ceiling probed before each decode repetition, % ceil = median "
                                 "of the per-repetition ratios\n\n"
                               : "; ceiling from the cached probe\n\n";

  // Columns: one prompt column per measured length, then decode.
  std::vector<int> lengths;
  for (const auto& run : r.runs)
    for (const auto& p : run.prompts)
      if (std::find(lengths.begin(), lengths.end(), p.tokens) == lengths.end())
        lengths.push_back(p.tokens);
  std::string header = "threads  ceiling GB/s";
  for (int n : lengths) header += pad("pp" + std::to_string(n) + " tok/s", 14);
  const int ttft_tokens = r.runs.empty() ? 0 : r.runs.front().ttft_prompt_tokens;
  header += pad("TTFT" + std::to_string(ttft_tokens) + " s", 12) +
            "   gen tok/s   GB/s  % ceil  pool rt/wake us";
  out += header + "\n" + std::string(header.size(), '-') + "\n";
  for (const auto& run : r.runs) {
    std::string line = pad(std::to_string(run.threads), 7) + pad(format("%.1f", run.ceiling_gbps), 14);
    for (int n : lengths) {
      auto it = std::find_if(run.prompts.begin(), run.prompts.end(),
                             [&](const PromptResult& p) { return p.tokens == n; });
      line += pad(it == run.prompts.end() ? "n/a" : format("%.1f", it->tokens_per_second), 14);
    }
    line += pad(format("%.3f", run.ttft_seconds), 12);
    line += pad(format("%.2f", run.generate_tokens_per_second), 12);
    line += pad(format("%.1f", run.achieved_gbps), 7);
    line += pad(format("%.1f%%", run.percent_of_ceiling), 8);
    line += pad(format("%.1f", run.pool_round_trip_us) + "/" + format("%.1f", run.pool_wake_up_us), 17);
    out += line + "\n";
  }
  out += "\n";
  for (const auto& run : r.runs)
    if (run.prefill_gflops > 0 && !run.prompts.empty())
      out += "prefill  " + std::to_string(run.threads) + " thread(s): " +
             format("%.1f", run.prefill_gflops) + " GFLOP/s on the " +
             std::to_string(run.prompts.back().tokens) + "-token prompt\n";
  for (const auto& run : r.runs)
    if (run.cpu_clock_generate_tokens_per_second > 0) {
      const double gbps = static_cast<double>(r.weight_bytes_per_token) *
                          run.cpu_clock_generate_tokens_per_second / 1e9;
      out += "cpu clk  " + std::to_string(run.threads) + " thread(s): " +
             format("%.2f", run.cpu_clock_generate_tokens_per_second) + " tok/s = " +
             format("%.1f", gbps) + " GB/s while on a CPU (wall clock above)\n";
    }
  out += "memory   peak resident " + format("%.1f", mib(r.peak_resident_bytes)) +
         " MiB; while generating " + format("%.1f", mib(r.resident_during_generation_bytes)) +
         " MiB, of which " + format("%.1f", static_cast<double>(other_resident_bytes(r)) / 1048576.0) +
         " MiB beyond the model file and KV cache\n";
  if (r.idle_seconds > 0)
    out += "idle     " + format("%.3f", r.idle_cpu_seconds) + " CPU seconds over " +
           format("%.0f", r.idle_seconds) + " idle seconds after generating\n";
  return out;
}

std::string tuning_to_table(const DecodeTuning& t) {
  std::string out = "calibration: " + std::to_string(t.threads) + " thread(s), " + format("%.1f", t.seconds) +
                    " s; medians of one decode pass over the test matrices\n";
  for (const TypeTuning& type : t.types) {
    out += "\n" + type.type + ": " + type.chosen + " (" + type.reason + ")\n";
    for (const TuningCandidate& c : type.candidates) {
      std::string line = "  " + std::string(c.name == type.chosen ? "* " : "  ") + c.name;
      line += std::string(line.size() < 32 ? 32 - line.size() : 1, ' ');
      line += c.failed ? "failed (wrong results)"
              : c.median_seconds > 0 ? format("%.2f ms", c.median_seconds * 1e3)
                                     : "not measured (time budget)";
      out += line + "\n";
    }
  }
  out += "\nin effect: " + describe_decode_tuning(t) + "\n";
  return out;
}

}  // namespace magnetar::cli
