// `magnetar-cli synth`: writes a model file with a known model's exact shapes and seeded random
// weights, for benchmarks without downloads (see engine/model/synth.h).
#include <cinttypes>
#include <iostream>

#include "cli.h"
#include "magnetar/tools.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

int run_synth(const std::vector<std::string>& argv);

const char* kUsage =
    "magnetar-cli synth --like NAME [--dtype TYPE] [--seed S] [--layers N] [--threads N] OUT\n"
    "  NAME: gemma-2b, gemma-7b, llama-2-7b, tinyllama-1.1b, llama-3.2-1b, llama-3.1-8b,\n"
    "        qwen2.5-1.5b, qwen3-1.7b, gemma-3-1b, phi-3.5-mini, stories15M\n"
    "  Writes OUT, a model file with exactly that model's architecture, hyperparameters and\n"
    "  tensor shapes, filled with seeded uniform random weights (default f16, seed 0). TYPE is\n"
    "  any type `convert --dtype` takes but auto: quantized types quantize every matrix,\n"
    "  embedding table included; q5_k_m / q4_k_m / q3_k_m / q2_k choose per tensor as\n"
    "  `convert` does.\n"
    "  It produces NOISE, not a language model: it exists to measure speed (decode and prefill\n"
    "  depend only on shapes and types), e.g. `magnetar-cli bench -m OUT`.\n"
    "  --layers N: keep only the first N layers (a small file that runs the model's shapes end to\n"
    "  end; benchmarks need every layer).\n"
    "  --threads N: threads that quantize (default: every core; the file is the same for any N).\n"
    "  Sizes (f16): gemma-2b ~5.0 GB, gemma-7b ~17 GB, llama-2-7b ~13.5 GB, llama-3.2-1b ~2.5 GB,\n"
    "  llama-3.1-8b ~16 GB, qwen2.5-1.5b ~3.1 GB, qwen3-1.7b ~3.4 GB, gemma-3-1b ~2.0 GB,\n"
    "  phi-3.5-mini ~7.6 GB.";

const Command kSynth = {"synth", "write a random-weight model with a known model's shapes (noise)",
                        kUsage, run_synth};

int run_synth(const std::vector<std::string>& argv) {
  Args args;
  if (int bad = parse_command_line(kSynth, argv, {"--like", "--dtype", "--seed", "--layers", "--threads"}, {}, true, &args)) return bad;
  if (args.positional().size() != 1) return usage_error(kSynth, "give exactly one output path");
  const std::string out_path = args.positional()[0];

  const std::string like = args.get({"--like"});
  if (synthetic_parameter_count(like) == 0) {
    std::string names;
    for (const auto& name : synthetic_model_names()) names += (names.empty() ? "" : ", ") + name;
    return usage_error(kSynth, (like.empty() ? std::string("--like is required") :
                                               "unknown model '" + like + "'") +
                                   " (one of: " + names + ")");
  }
  SynthOptions options;
  const std::string dtype = args.get({"--dtype"}, "f16");
  if (!parse_weight_type(dtype, &options.weight_type))
    return usage_error(kSynth, std::string("--dtype is one of ") + convertible_weight_type_names());
  int64_t seed = 0;
  if (std::string error; !args.get_int({"--seed"}, 0, INT64_MAX, &seed, &error))
    return usage_error(kSynth, error);
  options.seed = static_cast<uint64_t>(seed);
  int64_t layers = 0;
  if (std::string error; !args.get_int({"--layers"}, 0, 1 << 16, &layers, &error)) return usage_error(kSynth, error);
  options.n_layers = static_cast<int>(layers);
  int64_t threads = 0;
  if (std::string error; !args.get_int({"--threads"}, 0, kMaxThreads, &threads, &error)) return usage_error(kSynth, error);
  options.threads = static_cast<int>(threads);
  const uint64_t n_params = synthetic_parameter_count(like, options.n_layers);
  if (n_params == 0) return usage_error(kSynth, like + " has fewer than " + std::to_string(layers) + " layers");

  int last_percent = -1;
  options.on_progress = [&](uint64_t done, uint64_t total) {
    const int percent = total ? static_cast<int>(done * 100 / total) : 100;
    if (percent != last_percent) std::cerr << "\rwriting " << percent << "%" << std::flush;
    last_percent = percent;
  };
  options.cancel = &interrupt_flag();
  clear_interrupt();
  install_interrupt_handler();
  const double t0 = monotonic_seconds();
  uint64_t bytes = 0;
  if (Status s = write_synthetic_model(like, options, out_path, &bytes); !s) {
    std::cerr << "\nmagnetar-cli synth: " << s.message() << "\n";
    return 1;
  }
  std::cerr << "\r";
  std::cout << "wrote " << out_path << ": " << like << "-shaped"
            << (options.n_layers > 0 ? " (layers kept: " + std::to_string(options.n_layers) + ")" : std::string())
            << ", " << dtype << ", "
            << n_params << " parameters, " << bytes << " bytes in "
            << monotonic_seconds() - t0 << " s (random weights: noise, not a language model)\n";
  return 0;
}

}  // namespace

static CommandRegistration synth_registration(kSynth);

}  // namespace magnetar::cli
