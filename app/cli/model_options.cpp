// Shared model-loading and sampling options of the CLI commands.
#include "model_options.h"

#include <cstdio>
#include <iostream>
#include <sstream>

namespace magnetar::cli {

const std::vector<std::string> kModelValueOptions = {"-m", "--model", "--threads", "-t", "--ctx",
                                                     "--load", "--kv"};
const std::vector<std::string> kSamplerValueOptions = {"--temp", "--top-k", "--top-p", "--min-p",
                                                       "--repeat-penalty", "--seed"};

bool load_model_from_args(const Command& command, const Args& args, std::unique_ptr<Model>* model,
                          int* exit_code, const std::string& path_override, std::optional<KvType> kv) {
  const std::string path = path_override.empty() ? args.get({"-m", "--model"}) : path_override;
  if (path.empty()) {
    *exit_code = usage_error(command, "a model is required (-m MODEL)");
    return false;
  }
  LoadOptions options;
  int64_t threads = 0, ctx = 0;
  std::string error;
  if (!args.get_int({"--threads", "-t"}, 0, kMaxThreads, &threads, &error) ||
      !args.get_int({"--ctx"}, 0, kMaxContext, &ctx, &error)) {
    *exit_code = usage_error(command, error + " (0 = automatic)");
    return false;
  }
  options.threads = static_cast<int>(threads);
  options.context_length = static_cast<int>(ctx);
  const std::string load = args.get({"--load"}, "read");
  if (load == "map") {
    options.mode = LoadMode::Map;
  } else if (load != "read") {
    *exit_code = usage_error(command, "--load is 'read' or 'map'");
    return false;
  }
  if (kv) {
    options.kv_type = *kv;
  } else if (const std::string name = args.get({"--kv"}, "f32"); !parse_kv_type(name, &options.kv_type)) {
    *exit_code = usage_error(command, "--kv is 'f32', 'f16' or 'int8'");
    return false;
  }
  const bool tty = stdout_is_terminal();
  if (tty) {
    options.on_progress = [](uint64_t done, uint64_t total) {
      std::fprintf(stderr, "\rloading %3d%%", total ? int(done * 100 / total) : 100);
    };
  }
  Status s = Model::load(path, options, model);
  if (tty) std::fprintf(stderr, "\r            \r");
  if (!s) {
    std::cerr << "magnetar-cli " << command.name << ": " << s.message() << "\n";
    *exit_code = 1;
    return false;
  }
  if (ctx > (*model)->info().max_context)
    std::cerr << "magnetar-cli " << command.name << ": warning: --ctx " << ctx
              << " is above the " << (*model)->info().max_context
              << " tokens the model was trained on; output past that length degrades\n";
  return true;
}

bool sampler_from_args(const Command& command, const Args& args, SamplerParams* p, int* exit_code) {
  double temp = p->temperature, top_p = p->top_p, min_p = p->min_p, penalty = p->repeat_penalty;
  int64_t top_k = p->top_k, seed = static_cast<int64_t>(p->seed);
  std::string error;
  if (!args.get_number({"--temp"}, 0, 100, false, &temp, &error) ||
      !args.get_number({"--top-p"}, 0, 1, true, &top_p, &error) ||
      !args.get_number({"--min-p"}, 0, 1, false, &min_p, &error) ||
      !args.get_number({"--repeat-penalty"}, 0, 100, true, &penalty, &error) ||
      !args.get_int({"--top-k"}, 0, 1 << 24, &top_k, &error) ||
      !args.get_int({"--seed"}, 0, INT64_MAX, &seed, &error)) {
    *exit_code = usage_error(command, error);
    return false;
  }
  p->temperature = static_cast<float>(temp);
  p->top_p = static_cast<float>(top_p);
  p->min_p = static_cast<float>(min_p);
  p->repeat_penalty = static_cast<float>(penalty);
  p->top_k = static_cast<int>(top_k);
  p->seed = static_cast<uint64_t>(seed);
  return true;
}

std::string format_stats(const GenerationStats& s, StopReason stop) {
  char line[512];
  std::snprintf(line, sizeof(line),
                "[prompt %d tok, %.1f tok/s | generated %d tok, %.2f tok/s, %.2f GB/s | "
                "first token %.3f s | context %d | %d threads | stop: %s]",
                s.n_prompt, s.prompt_tokens_per_second, s.n_generated,
                s.generate_tokens_per_second, s.achieved_gbps, s.time_to_first_token, s.n_context,
                s.threads, stop_reason_name(stop));
  return line;
}

}  // namespace magnetar::cli
