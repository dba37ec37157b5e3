// `magnetar-cli convert SRC OUT [--dtype auto|f32|f16|q8_0|q6_k|q5_k_m|q4_k_m|...] ...`: a Hugging Face folder, a
// GGUF file or a llama2.c checkpoint to a Magnetar model file. Shows a progress bar on a terminal and plain
// progress lines otherwise; Ctrl-C cancels cleanly (nothing is left behind).
#include <atomic>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "magnetar/convert.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

const char kUsage[] =
    "magnetar-cli convert SRC OUT [--dtype TYPE] [--output-dtype TYPE] [--tokenizer PATH] [--threads N]\n"
    "  SRC   a Hugging Face model folder (config.json, *.safetensors, tokenizer.model or\n"
    "        tokenizer.json), a GGUF file (.gguf), or a llama2.c checkpoint (.bin)\n"
    "  OUT   the Magnetar model file to write (replaced atomically when done)\n"
    "  --dtype TYPE       type of the weight matrices: auto (default: a GGUF file's tensors keep\n"
    "                     their types, K-quants included; f16 for other sources), one of\n"
    "                     f32, f16, q8_0, q6_k, q5_k, q5_1, q5_0, q4_k, q4_1, iq4_nl, q4_0, iq4_xs,\n"
    "                     q3_k (every matrix), or llama.cpp's mixes q5_k_m / q4_k_m / q3_k_m / q2_k\n"
    "                     (q4_k_m: Q4_K with a Q6_K LM head and Q6_K attn_v / ffn_down in some\n"
    "                     layers; docs/MODEL_FORMAT.md). Norms stay f32; rows that are not whole\n"
    "                     blocks fall back (q4_k -> q5_0, q5_k -> q5_1, q6_k -> q8_0, q2_k / q3_k /\n"
    "                     iq4_xs -> iq4_nl, then f16 when not whole 32-blocks; `info` lists them)\n"
    "  --output-dtype TYPE  type of the embedding table and LM head (tok_embeddings, output):\n"
    "                     any --dtype TYPE (default: as --dtype)\n"
    "  --tokenizer PATH   llama2.c only: tokenizer.model or tok*.bin (default: found beside SRC)\n"
    "  --threads N        threads that quantize (default: every core; the file is the same for any N)";

std::string megabytes(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f MB", static_cast<double>(bytes) / 1e6);
  return buf;
}

int run_convert(const std::vector<std::string>& raw_args);

const Command kCommand{"convert", "convert a Hugging Face folder, GGUF file or llama2.c checkpoint", kUsage,
                       run_convert};
const CommandRegistration kRegistration(kCommand);

int run_convert(const std::vector<std::string>& raw_args) {
  const std::vector<std::string> value_options = {"--dtype", "--output-dtype", "--tokenizer", "--threads"};
  Args args;
  if (int bad = parse_command_line(kCommand, raw_args, value_options, {}, true, &args)) return bad;
  if (args.positional().size() != 2) return usage_error(kCommand, "needs SRC and OUT");
  const std::string& source = args.positional()[0];
  const std::string& out = args.positional()[1];

  ConvertOptions options;
  const std::string dtype = args.get({"--dtype"}, "auto");
  if (!parse_weight_type(dtype, &options.weight_type))
    return usage_error(kCommand, std::string("--dtype must be auto or one of ") + convertible_weight_type_names() +
                                     ", not '" + dtype + "'");
  if (const std::string output_dtype = args.get({"--output-dtype"}); !output_dtype.empty()) {
    WeightType type;
    if (!parse_weight_type(output_dtype, &type))
      return usage_error(kCommand, std::string("--output-dtype must be auto or one of ") +
                                       convertible_weight_type_names() + ", not '" + output_dtype + "'");
    options.output_weight_type = type;
  }
  options.tokenizer_path = args.get({"--tokenizer"});
  int64_t threads = 0;
  if (std::string error; !args.get_int({"--threads"}, 0, kMaxThreads, &threads, &error))
    return usage_error(kCommand, error);
  options.threads = static_cast<int>(threads);

  const bool terminal = stdout_is_terminal();
  int last_step = -1;
  bool bar_drawn = false;
  options.on_progress = [&](const ConvertProgress& p) {
    if (p.bytes_total == 0) return;
    const double fraction = static_cast<double>(p.bytes_done) / static_cast<double>(p.bytes_total);
    if (terminal) {
      const int width = 40, filled = static_cast<int>(fraction * width);
      const int percent = static_cast<int>(fraction * 100);
      if (percent == last_step) return;  // redraw only when the percentage changes
      last_step = percent;
      std::printf("\r[%.*s%*s] %3d%%  %s / %s ", filled,
                  "########################################", width - filled, "", percent,
                  megabytes(p.bytes_done).c_str(), megabytes(p.bytes_total).c_str());
      std::fflush(stdout);
      bar_drawn = true;
    } else {
      const int step = static_cast<int>(fraction * 10);  // a line per 10%
      if (step == last_step) return;
      last_step = step;
      std::printf("converting: %3d%% (%s of %s)\n", step * 10, megabytes(p.bytes_done).c_str(),
                  megabytes(p.bytes_total).c_str());
      std::fflush(stdout);
    }
  };
  options.cancel = &interrupt_flag();
  clear_interrupt();
  install_interrupt_handler();

  const auto start = std::chrono::steady_clock::now();
  Status status = convert_model(source, out, options);
  if (bar_drawn) std::printf("\n");
  if (!status) {
    std::fflush(stdout);
    std::cerr << "magnetar-cli convert: " << status.message() << "\n";
    return 1;
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("wrote %s (%s weights", out.c_str(), weight_type_name(options.weight_type));
  if (options.output_weight_type)
    std::printf(", %s embeddings", weight_type_name(*options.output_weight_type));
  std::printf(") in %.2f s\n", seconds);
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
