// `magnetar-cli bench`: the machine's read-bandwidth ceiling and the engine's speed on a model
// (prefill, time to first token, decode, achieved GB/s against the ceiling), plus resident
// memory, idle CPU and thread-pool latency. Results are medians over repetitions; the table and
// the --json document are rendered by bench_report.cpp.
#include <algorithm>
#include <cstdio>
#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>
#include <thread>

#include "bench_report.h"
#include "cli.h"
#include "magnetar/engine.h"
#include "magnetar/system.h"
#include "magnetar/tools.h"
#include "magnetar/tuning.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

const char* kUsage =
    "magnetar-cli bench -m MODEL [--threads 1,2] [--reps N] [--prompts 64,128,512] [--gen N]\n"
    "                   [--kernels auto|reference|asm] [--load read|map] [--kv f32|f16|int8]\n"
    "                   [--layout tuned|striped|plain] [--tune] [--json]\n"
    "                   [--json-file PATH] [--cached-ceiling] [--idle-seconds S]\n"
    "magnetar-cli bench --ceiling-only [--json]\n"
    "magnetar-cli bench --tune [--json]\n"
    "  Measures the read-bandwidth ceiling (1..cores threads) and, per thread count, prompt\n"
    "  processing tokens/s, time to first token (128-token prompt), generation tokens/s, achieved\n"
    "  GB/s and its share of the ceiling; medians over --reps (default 3). Prompts are random\n"
    "  token ids; generation is greedy and ignores end-of-generation tokens.\n"
    "  --threads: default 1..the cores available.  --gen: generated tokens (default 128).\n"
    "  --layout: tuned (default): the layouts and kernel variants the calibration chose for this\n"
    "  machine (built-in ones until it has run); striped: the built-in ones (2048-column stripes,\n"
    "  x16 tiles); plain: the file's row-major layout (to measure what the layouts gain).\n"
    "  --tune: run the decode calibration first (a few seconds; cached in the user's cache\n"
    "  folder as tuning.json, which every command then uses), print its choices, then bench\n"
    "  MODEL with them (without -m: the calibration alone).\n"
    "  The ceiling column is the read probe run right before each decode repetition at the same\n"
    "  thread count (median); % ceil is the median of the per-repetition ratios.\n"
    "  --cached-ceiling: use the cached probe for the ceiling column instead (no interleaving).\n"
    "  --json-file: also write the JSON document to PATH (the table still prints).\n"
    "  --ceiling-only: measure (and cache) the read-bandwidth ceiling alone; no model.\n"
    "  --idle-seconds: process CPU time measured over this idle time after generating (default\n"
    "  5; 0 skips).  Use a synthetic model (`magnetar-cli synth`) to measure without downloads.";

int run_bench(const std::vector<std::string>& argv);
const Command kBench = {"bench", "measure the read-bandwidth ceiling and the engine's speed",
                        kUsage, run_bench};

double seconds_since(double t0) { return monotonic_seconds() - t0; }

// Deterministic prompt: ids spread over the upper three quarters of the vocabulary, which holds
// ordinary pieces in every SentencePiece layout (specials and bytes sit at the start).
std::vector<int> make_prompt(int bos, int vocab, int n, uint64_t seed) {
  std::vector<int> ids;
  ids.reserve(static_cast<size_t>(n));
  if (bos >= 0) ids.push_back(bos);
  uint64_t x = seed * 6364136223846793005ull + 1442695040888963407ull;
  while (static_cast<int>(ids.size()) < n) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    ids.push_back(vocab / 4 + static_cast<int>((x >> 33) % static_cast<uint64_t>(vocab - vocab / 4)));
  }
  return ids;
}

// Parameters the prefill multiplies per token: the layers' matrices (the LM head runs on the
// last position only).
uint64_t layer_matrix_params(const ModelInfo& m) {
  const uint64_t dim = m.dim, hidden = m.hidden_dim, q = uint64_t(m.n_heads) * m.head_dim;
  const uint64_t kv = uint64_t(m.n_kv_heads) * m.head_dim;
  return uint64_t(m.n_layers) * (dim * (q + 2 * kv) + q * dim + 3 * hidden * dim);
}

struct Timeline {
  std::vector<double> token_times;  // reserved before generating: the callback never allocates
  uint64_t max_resident = 0;
  bool sample_rss = false;
  // Process CPU seconds at the first and the last token: decode time on the CPU clock, which a
  // busy machine's scheduler does not stretch (for one thread; see docs/PERFORMANCE.md).
  double cpu_first = 0, cpu_last = 0;
  size_t last_index = 0;  // token index whose CPU time is cpu_last
};

// One generate() call on a fresh context; token_times[i] = seconds from the call to token i.
Status timed_generate(Session& session, const std::vector<int>& prompt, int max_tokens,
                      Timeline* timeline, GenerateResult* result) {
  session.reset();
  timeline->token_times.clear();
  timeline->token_times.reserve(static_cast<size_t>(max_tokens) + 1);
  timeline->last_index = static_cast<size_t>(max_tokens) - 1;
  GenerateRequest request;
  request.prompt = prompt;
  request.max_tokens = max_tokens;
  request.stop_at_eog = false;
  request.sampler.temperature = 0.0f;
  const double t0 = monotonic_seconds();
  request.on_token = [&](const TokenEvent&) {
    timeline->token_times.push_back(seconds_since(t0));
    const size_t n = timeline->token_times.size();
    if (n == 1) timeline->cpu_first = process_cpu_seconds();
    if (n == timeline->last_index + 1) timeline->cpu_last = process_cpu_seconds();
    if (timeline->sample_rss && timeline->token_times.size() % 32 == 1)
      timeline->max_resident = std::max(timeline->max_resident, current_resident_bytes());
    return true;
  };
  MAGNETAR_TRY(session.generate(request, result));
  if (timeline->token_times.size() < static_cast<size_t>(max_tokens))
    return Status::error("generation stopped after " +
                         std::to_string(timeline->token_times.size()) + " of " +
                         std::to_string(max_tokens) + " tokens (" +
                         stop_reason_name(result->stop) + ")");
  return Status::ok();
}

// The decode calibration (bench --tune): measured, cached, applied; its table or JSON printed
// to `out` (stderr when a bench follows, so that --json stays one document on stdout).
bool run_tune(bool json, std::ostream& out, DecodeTuning* tuning) {
  CalibrationOptions options;
  options.on_progress = [](int done, int total, const std::string& step) {
    std::cerr << "\rcalibrating " << done + 1 << "/" << total << ": " << step << "          " << std::flush;
  };
  const Status s = calibrate_and_cache_decode_tuning(options, tuning);
  std::cerr << "\r" << std::string(72, ' ') << "\r";
  if (!s && tuning->types.empty()) {
    std::cerr << "magnetar-cli bench: calibration failed: " << s.message() << "\n";
    return false;
  }
  if (!s) std::cerr << "magnetar-cli bench: the calibration was not cached: " << s.message() << "\n";
  apply_decode_tuning(*tuning);
  if (json)
    out << nlohmann::json::parse(decode_tuning_json(*tuning)).dump(2) << "\n";
  else
    out << tuning_to_table(*tuning);
  return true;
}

// The probe alone: what the app's dashboard shows, refreshed in the cache.
int run_ceiling_only(bool json) {
  const double t0 = monotonic_seconds();
  const BandwidthProfile ceiling = cached_read_bandwidth(/*force_remeasure=*/true);
  const double seconds = seconds_since(t0);
  if (ceiling.points.empty()) {
    std::cerr << "magnetar-cli bench: not enough memory for the bandwidth probe's buffer\n";
    return 1;
  }
  const CpuInfo& cpu = cpu_info();
  if (json) {
    nlohmann::json points = nlohmann::json::array();
    for (const auto& p : ceiling.points)
      points.push_back({{"threads", p.threads}, {"read_gbps", p.read_gbps}});
    std::cout << nlohmann::json{{"cpu", {{"brand", cpu.brand},
                                         {"vendor", cpu.vendor},
                                         {"family", cpu.family},
                                         {"model", cpu.model},
                                         {"stepping", cpu.stepping},
                                         {"logical_cores", cpu.logical_cores}}},
                                {"ceiling", {{"buffer_bytes", ceiling.buffer_bytes},
                                             {"points", points}}},
                                {"seconds", seconds}}
                     .dump(2)
              << "\n";
    return 0;
  }
  std::cout << "cpu      " << cpu.brand << ", " << cpu.logical_cores << " logical cores\n"
            << "probe    " << ceiling.buffer_bytes / 1048576 << " MiB buffer, median of "
            << kBandwidthTimedPasses << " passes per thread count, " << seconds << " s in all\n\n"
            << "threads  read GB/s\n";
  for (const auto& p : ceiling.points) {
    char line[64];
    std::snprintf(line, sizeof line, "%7d  %9.1f\n", p.threads, p.read_gbps);
    std::cout << line;
  }
  return 0;
}

int run_bench(const std::vector<std::string>& argv) {
  const std::vector<std::string> value_options = {"-m", "--model", "--threads", "--reps",
                                                  "--prompts", "--gen", "--kernels", "--load", "--kv",
                                                  "--layout", "--idle-seconds", "--json-file"};
  Args args;
  if (int bad = parse_command_line(kBench, argv, value_options,
                                   {"--json", "--cached-ceiling", "--ceiling-only", "--tune"}, false, &args))
    return bad;
  const std::string model_path = args.get({"-m", "--model"});
  if (args.has("--ceiling-only")) return run_ceiling_only(args.has("--json"));
  if (args.has("--tune") && args.has("--layout"))
    return usage_error(kBench, "--tune measures layouts itself: leave --layout out");
  DecodeTuning tuning = active_decode_tuning();
  std::string tuning_source = tuning.measured() ? "cached calibration" : "built-in (not calibrated)";
  if (args.has("--tune")) {
    if (!run_tune(args.has("--json") && model_path.empty(), model_path.empty() ? std::cout : std::cerr, &tuning))
      return 1;
    if (model_path.empty()) return 0;
    tuning_source = "calibrated now";
  }
  if (model_path.empty()) return usage_error(kBench, "no model given (-m MODEL)");

  std::vector<int> thread_counts;
  if (args.has("--threads")) {
    if (!parse_int_list(args.get({"--threads"}), &thread_counts, 1, kMaxThreads))
      return usage_error(kBench, "--threads takes integers from 1 to " + std::to_string(kMaxThreads) +
                                     ", e.g. 1,2");
  } else {
    for (int t = 1; t <= physical_cores(); ++t) thread_counts.push_back(t);
  }
  std::vector<int> prompt_lengths = {64, 128, 512};
  if (args.has("--prompts") && !parse_int_list(args.get({"--prompts"}), &prompt_lengths, 2, kMaxContext))
    return usage_error(kBench, "--prompts takes integers from 2 to " + std::to_string(kMaxContext) +
                                   ", e.g. 64,128,512");
  std::sort(prompt_lengths.begin(), prompt_lengths.end());
  int64_t reps = 3, gen = 128;
  double idle_seconds = 5;
  std::string error;
  if (!args.get_int({"--reps"}, 1, 1000, &reps, &error) ||
      !args.get_int({"--gen"}, 2, 100000, &gen, &error) ||
      !args.get_number({"--idle-seconds"}, 0, 600, false, &idle_seconds, &error))
    return usage_error(kBench, error);
  const std::string kernel_choice = args.get({"--kernels"}, "auto");
  if (kernel_choice != "auto" && kernel_choice != "reference" && kernel_choice != "asm")
    return usage_error(kBench, "--kernels is auto, reference or asm");
  if (kernel_choice != "auto")
    select_kernels(kernel_choice == "reference" ? KernelChoice::Reference : KernelChoice::Asm);
  const std::string load_choice = args.get({"--load"}, "read");
  if (load_choice != "read" && load_choice != "map")
    return usage_error(kBench, "--load is read or map");
  const std::string layout_choice = args.get({"--layout"}, "tuned");
  if (layout_choice != "tuned" && layout_choice != "striped" && layout_choice != "plain")
    return usage_error(kBench, "--layout is tuned, striped or plain");
  if (layout_choice != "tuned") {  // explicit: the built-in layouts and kernel variants
    tuning = DecodeTuning{};
    apply_decode_tuning(tuning);
    tuning_source = "built-in (--layout " + layout_choice + ")";
  }
  KvType kv_type = KvType::F32;
  if (!parse_kv_type(args.get({"--kv"}, "f32"), &kv_type))
    return usage_error(kBench, "--kv is f32, f16 or int8");
  const bool json = args.has("--json");

  // ---- Load -----------------------------------------------------------------------------------
  int max_context = 0;
  if (Status s = read_model_max_context(model_path, &max_context); !s) {
    std::cerr << "magnetar-cli bench: " << s.message() << "\n";
    return 1;
  }
  const int needed = std::max(prompt_lengths.back() + 1, static_cast<int>(gen) + 3);  // 2-token prompt + gen + 1
  LoadOptions load;
  load.mode = load_choice == "map" ? LoadMode::Map : LoadMode::Read;
  load.context_length = std::min(max_context, needed);
  load.threads = thread_counts.front();
  load.kv_type = kv_type;
  load.decode_layouts = layout_choice != "plain";
  load.use_tuning = layout_choice == "tuned";
  int last_percent = -1;
  load.on_progress = [&](uint64_t done, uint64_t total) {
    const int percent = total ? static_cast<int>(done * 100 / total) : 100;
    if (percent / 10 != last_percent / 10) std::cerr << "\rloading " << percent << "%" << std::flush;
    last_percent = percent;
  };
  std::unique_ptr<Model> model;
  const double load_t0 = monotonic_seconds();
  if (Status s = Model::load(model_path, load, &model); !s) {
    std::cerr << "\nmagnetar-cli bench: " << s.message() << "\n";
    return 1;
  }
  const double load_wall = seconds_since(load_t0);
  std::cerr << "\rloaded in " << load_wall << " s\n";
  const ModelInfo& info = model->info();

  BenchReport report;
  report.model_path = model_path;
  report.architecture = architecture_name(info.arch);
  report.weight_type = info.weight_type;
  report.n_params = info.n_params;
  report.file_bytes = info.file_bytes;
  report.weight_bytes_per_token = info.weight_bytes_per_token;
  report.kv_cache_bytes = info.kv_cache_bytes;
  report.matrix_params = layer_matrix_params(info);
  report.context_length = info.context_length;
  report.cpu_brand = cpu_info().brand;
  report.cpu_vendor = cpu_info().vendor;
  report.cpu_family = cpu_info().family;
  report.cpu_model = cpu_info().model;
  report.cpu_stepping = cpu_info().stepping;
  report.tuning = tuning;
  report.tuning_source = tuning_source;
  report.logical_cores = cpu_info().logical_cores;
  report.kernels = active_kernel_isa();
  report.quant_kernels = active_quant_kernel_isa();
  report.load_mode = load_choice;
  report.striped_matrices = info.striped_matrices;
  report.stripe_cols = info.stripe_cols;
  report.tiled_matrices = info.tiled_matrices;
  report.load_seconds = info.load_seconds > 0 ? info.load_seconds : load_wall;
  report.reps = static_cast<int>(reps);

  std::unique_ptr<Session> session;
  // The ceiling is measured again right before every decode repetition, at its thread count, so
  // each repetition's share of the ceiling compares numbers taken under the same conditions.
  std::unique_ptr<ReadBandwidthProbe> probe;
  if (!args.has("--cached-ceiling")) probe = std::make_unique<ReadBandwidthProbe>();
  report.interleaved_ceiling = probe && probe->ok();

  // ---- Engine runs, per thread count ----------------------------------------------------------
  Timeline timeline;
  GenerateResult result;
  const int gen_tokens = static_cast<int>(gen);
  const std::vector<int> gen_prompt = make_prompt(info.bos_id, info.vocab_size, 2, 7);
  for (int threads : thread_counts) {
    model->set_threads(threads);
    session.reset();  // a session's scratch is sized for the model's thread count at creation
    if (Status s = Session::create(*model, &session); !s) {
      std::cerr << "magnetar-cli bench: " << s.message() << "\n";
      return 1;
    }
    ThreadRun run;
    run.threads = threads;
    run.generated_tokens = gen_tokens;
    std::cerr << "threads " << threads << ": warming up" << std::flush;
    if (Status s = timed_generate(*session, gen_prompt, 4, &timeline, &result); !s) {
      std::cerr << "\nmagnetar-cli bench: " << s.message() << "\n";
      return 1;
    }
    std::vector<std::vector<double>> prompt_tps(prompt_lengths.size()), prompt_secs(prompt_lengths.size());
    std::vector<double> gen_tps, engine_gen_tps, gen_cpu_tps, rep_ceiling, rep_share;
    for (int rep = 0; rep < reps; ++rep) {
      std::cerr << "\rthreads " << threads << ": repetition " << rep + 1 << "/" << reps
                << "   " << std::flush;
      for (size_t i = 0; i < prompt_lengths.size(); ++i) {
        const int n = prompt_lengths[i];
        if (n + 1 > info.context_length) continue;
        const auto prompt = make_prompt(info.bos_id, info.vocab_size, n, 100 + rep);
        timeline.sample_rss = false;
        if (Status s = timed_generate(*session, prompt, 1, &timeline, &result); !s) {
          std::cerr << "\nmagnetar-cli bench: " << s.message() << "\n";
          return 1;
        }
        prompt_secs[i].push_back(timeline.token_times[0]);
        prompt_tps[i].push_back(n / timeline.token_times[0]);
      }
      if (report.interleaved_ceiling) rep_ceiling.push_back(probe->measure(threads));
      // Decode: gen_tokens intervals after the first token (which the prefill produced).
      timeline.sample_rss = true;
      if (Status s = timed_generate(*session, gen_prompt, gen_tokens + 1, &timeline, &result); !s) {
        std::cerr << "\nmagnetar-cli bench: " << s.message() << "\n";
        return 1;
      }
      const auto& t = timeline.token_times;
      gen_tps.push_back(gen_tokens / (t[static_cast<size_t>(gen_tokens)] - t[0]));
      if (report.interleaved_ceiling && rep_ceiling.back() > 0)
        rep_share.push_back(static_cast<double>(info.weight_bytes_per_token) * gen_tps.back() / 1e9 /
                            rep_ceiling.back());
      // (Windows counts CPU time in 15.6 ms ticks: a very short decode can show none.)
      if (timeline.cpu_last > timeline.cpu_first)
        gen_cpu_tps.push_back(gen_tokens * threads / (timeline.cpu_last - timeline.cpu_first));
      engine_gen_tps.push_back(result.stats.generate_tokens_per_second);
    }
    for (size_t i = 0; i < prompt_lengths.size(); ++i) {
      if (prompt_tps[i].empty()) continue;
      PromptResult p;
      p.tokens = prompt_lengths[i];
      p.tokens_per_second = median(prompt_tps[i]);
      p.seconds = median(prompt_secs[i]);
      run.prompts.push_back(p);
    }
    // TTFT: the 128-token prompt, else the measured length nearest to it.
    for (const auto& p : run.prompts)
      if (run.ttft_prompt_tokens == 0 ||
          std::abs(p.tokens - 128) < std::abs(run.ttft_prompt_tokens - 128)) {
        run.ttft_prompt_tokens = p.tokens;
        run.ttft_seconds = p.seconds;
      }
    if (!run.prompts.empty())
      run.prefill_gflops =
          2.0 * static_cast<double>(report.matrix_params) * run.prompts.back().tokens_per_second / 1e9;
    run.generate_tokens_per_second = median(gen_tps);
    run.engine_generate_tokens_per_second = median(engine_gen_tps);
    run.cpu_clock_generate_tokens_per_second = median(gen_cpu_tps);
    run.achieved_gbps =
        static_cast<double>(info.weight_bytes_per_token) * run.generate_tokens_per_second / 1e9;
    if (!rep_share.empty()) {
      run.ceiling_gbps = median(rep_ceiling);
      run.percent_of_ceiling = 100.0 * median(rep_share);
    }
    std::cerr << "\rthreads " << threads << ": thread-pool latency      " << std::flush;
    const ThreadPoolLatency latency = measure_thread_pool_latency(threads);
    run.pool_round_trip_us = latency.round_trip_us;
    run.pool_wake_up_us = latency.wake_up_us;
    std::cerr << "\r" << std::string(40, ' ') << "\r";
    report.runs.push_back(run);
  }
  // The probe's buffer is written in full, so it is resident in full: not the engine's memory.
  const uint64_t probe_bytes = report.interleaved_ceiling ? probe->buffer_bytes() : 0;
  report.resident_during_generation_bytes = timeline.max_resident - std::min(timeline.max_resident, probe_bytes);
  probe.reset();

  if (idle_seconds > 0) {
    std::cerr << "measuring idle CPU for " << idle_seconds << " s\n";
    const double cpu0 = process_cpu_seconds();
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_seconds));
    report.idle_cpu_seconds = process_cpu_seconds() - cpu0;
    report.idle_seconds = idle_seconds;
  }
  report.peak_resident_bytes = peak_resident_bytes() - std::min(peak_resident_bytes(), probe_bytes);
  session.reset();
  model.reset();

  // ---- The ceiling: measured after the model is gone (no competition for memory) -------------
  std::cerr << (args.has("--cached-ceiling") ? "reading" : "measuring")
            << " the read-bandwidth ceiling\n";
  const BandwidthProfile ceiling = cached_read_bandwidth(!args.has("--cached-ceiling"));
  report.probe_buffer_bytes = ceiling.buffer_bytes;
  for (const auto& p : ceiling.points) report.ceiling.emplace_back(p.threads, p.read_gbps);
  for (auto& run : report.runs) {
    if (report.interleaved_ceiling) continue;
    run.ceiling_gbps = ceiling.at_threads(run.threads);
    run.percent_of_ceiling = run.ceiling_gbps > 0 ? 100.0 * run.achieved_gbps / run.ceiling_gbps : 0;
  }

  if (json)
    std::cout << report_to_json(report).dump(2) << "\n";
  else
    std::cout << report_to_table(report);
  if (const std::string json_file = args.get({"--json-file"}); !json_file.empty()) {
    std::ofstream out(std::filesystem::path(std::u8string(
                          reinterpret_cast<const char8_t*>(json_file.data()), json_file.size())),
                      std::ios::binary | std::ios::trunc);
    out << report_to_json(report).dump(2) << "\n";
    if (!out.flush()) {
      std::cerr << "magnetar-cli bench: cannot write " << json_file << "\n";
      return 1;
    }
  }
  return 0;
}

}  // namespace

static CommandRegistration bench_registration(kBench);

}  // namespace magnetar::cli
