// Options shared by the commands that load a model: -m, --threads, --ctx, --load, --kv, and the
// sampling flags; parsing and the load itself with a progress line on a terminal.
#pragma once
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli.h"
#include "magnetar/engine.h"

namespace magnetar::cli {

// Bounds of --threads and --ctx (and of -n, which cannot exceed a context).
constexpr int64_t kMaxThreads = 256;
constexpr int64_t kMaxContext = 1 << 20;

// Value options understood by load_model_from_args / sampler_from_args.
extern const std::vector<std::string> kModelValueOptions;
extern const std::vector<std::string> kSamplerValueOptions;

// Loads -m MODEL (or `path` when not empty) with --threads/--ctx/--load/--kv (`kv` when set
// overrides --kv); prints the error and returns false on failure.
bool load_model_from_args(const Command& command, const Args& args, std::unique_ptr<Model>* model,
                          int* exit_code, const std::string& path = "",
                          std::optional<KvType> kv = std::nullopt);
// Fills sampler params from --temp --top-k --top-p --min-p --repeat-penalty --seed.
bool sampler_from_args(const Command& command, const Args& args, SamplerParams* params,
                       int* exit_code);
// One statistics line for stderr.
std::string format_stats(const GenerationStats& stats, StopReason stop);

}  // namespace magnetar::cli
