// `magnetar-cli synth`: writes a model file with a known model's exact shapes and seeded random
// weights, for benchmarks without downloads (see engine/model/synth.h).
#include <cinttypes>
#include <iostream>

#include "cli.h"
#include "magnetar/tools.h"

namespace magnetar::cli {
namespace {

int run_synth(const std::vector<std::string>& argv);

const char* kUsage =
    "magnetar-cli synth --like gemma-2b|gemma-7b|llama-2-7b|tinyllama-1.1b|stories15M\n"
    "                   [--dtype f16|f32|q8_0|q4_0] [--seed S] OUT\n"
    "  Writes OUT, a model file with exactly that model's architecture, hyperparameters and\n"
    "  tensor shapes, filled with seeded uniform random weights (default f16, seed 0; q8_0/q4_0\n"
    "  quantize them with the GGML quantizers, embedding table included).\n"
    "  It produces NOISE, not a language model: it exists to measure speed (decode and prefill\n"
    "  depend only on shapes and types), e.g. `magnetar-cli bench -m OUT`.\n"
    "  Sizes: gemma-2b f16 ~5.0 GB, gemma-7b f16 ~17 GB, llama-2-7b f16 ~13.5 GB.";

const Command kSynth = {"synth", "write a random-weight model with a known model's shapes (noise)",
                        kUsage, run_synth};

int run_synth(const std::vector<std::string>& argv) {
  Args args;
  if (int bad = parse_command_line(kSynth, argv, {"--like", "--dtype", "--seed"}, {}, true, &args)) return bad;
  if (args.positional().size() != 1) return usage_error(kSynth, "give exactly one output path");
  const std::string out_path = args.positional()[0];

  const std::string like = args.get({"--like"});
  const uint64_t n_params = synthetic_parameter_count(like);
  if (n_params == 0) {
    std::string names;
    for (const auto& name : synthetic_model_names()) names += (names.empty() ? "" : ", ") + name;
    return usage_error(kSynth, (like.empty() ? std::string("--like is required") :
                                               "unknown model '" + like + "'") +
                                   " (one of: " + names + ")");
  }
  SynthOptions options;
  const std::string dtype = args.get({"--dtype"}, "f16");
  if (!parse_weight_type(dtype, &options.weight_type))
    return usage_error(kSynth, "--dtype is f16, f32, q8_0 or q4_0");
  int64_t seed = 0;
  if (std::string error; !args.get_int({"--seed"}, 0, INT64_MAX, &seed, &error))
    return usage_error(kSynth, error);
  options.seed = static_cast<uint64_t>(seed);

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
  std::cout << "wrote " << out_path << ": " << like << "-shaped, " << dtype << ", "
            << n_params << " parameters, " << bytes << " bytes in "
            << monotonic_seconds() - t0 << " s (random weights: noise, not a language model)\n";
  return 0;
}

}  // namespace

static CommandRegistration synth_registration(kSynth);

}  // namespace magnetar::cli
