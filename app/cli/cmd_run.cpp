// `magnetar-cli run`: generate from a prompt (text or token ids), streaming the text.
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

int run_command(const std::vector<std::string>& argv);

const Command kRun{
    "run", "generate text from a prompt",
    "magnetar-cli run -m MODEL (-p TEXT | --tokens ID,ID,...) [-n N] [--temp T] [--top-k K]\n"
    "       [--top-p P] [--min-p P] [--repeat-penalty R] [--seed S] [--threads N] [--ctx N]\n"
    "       [--load read|map] [--kv f32|f16|int8] [--print-ids] [--no-stop] [--no-special]\n"
    "  --kv TYPE      KV cache elements: f32 (default, exact), f16, int8 (a scale per head)\n"
    "  -p TEXT        prompt text (BOS is added when the model wants it); special-token\n"
    "                 strings in it (\"<|eot_id|>\") become their ids\n"
    "  --no-special   encode special-token strings in -p as plain text\n"
    "  --tokens IDS   prompt as token ids, used as given\n"
    "  -n N           tokens to generate (default 256)\n"
    "  --temp T       0 = greedy (default)\n"
    "  --print-ids    print the generated token ids on one line instead of the text\n"
    "  --no-stop      do not stop at end-of-generation tokens",
    run_command};
const CommandRegistration kRegistration(kRun);

int run_command(const std::vector<std::string>& argv) {
  std::vector<std::string> value_options = kModelValueOptions;
  value_options.insert(value_options.end(), kSamplerValueOptions.begin(), kSamplerValueOptions.end());
  for (const char* o : {"-p", "--prompt", "--tokens", "-n"}) value_options.push_back(o);
  Args args;
  if (int bad = parse_command_line(kRun, argv, value_options, {"--print-ids", "--no-stop", "--no-special"}, false,
                                   &args))
    return bad;
  const bool has_text = args.has("-p") || args.has("--prompt");
  if (has_text == args.has("--tokens")) return usage_error(kRun, "give exactly one of -p TEXT or --tokens IDS");
  int64_t n = 256;
  std::string error;
  if (!args.get_int({"-n"}, 0, kMaxContext, &n, &error)) return usage_error(kRun, error);

  int exit_code = 0;
  GenerateRequest request;
  if (!sampler_from_args(kRun, args, &request.sampler, &exit_code)) return exit_code;
  if (!has_text && !parse_int_list(args.get({"--tokens"}), &request.prompt, 0))
    return usage_error(kRun, "--tokens needs comma-separated token ids (0 or more)");
  std::unique_ptr<Model> model;
  if (!load_model_from_args(kRun, args, &model, &exit_code)) return exit_code;

  if (has_text) {
    Status s = model->tokenize(args.get({"-p", "--prompt"}), model->info().add_bos, &request.prompt,
                               {.parse_special = !args.has("--no-special"),
                                .max_tokens = model->info().context_length});
    if (!s) return std::cerr << "magnetar-cli run: " << s.message() << "\n", 1;
    if (request.prompt.empty()) return usage_error(kRun, "the prompt is empty");
  }
  // A prompt the context cannot hold is an error the user sees, never an empty answer.
  if (const int context = model->info().context_length;
      request.prompt.size() > static_cast<size_t>(context))
    return std::cerr << "magnetar-cli run: the prompt has " << request.prompt.size()
                     << " tokens but the context holds " << context
                     << ": shorten the prompt or raise --ctx\n",
           1;
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, &session); !s)
    return std::cerr << "magnetar-cli run: " << s.message() << "\n", 1;

  const bool print_ids = args.has("--print-ids");
  request.max_tokens = static_cast<int>(n);
  request.stop_at_eog = !args.has("--no-stop");
  request.on_token = [&](const TokenEvent& ev) {
    if (!print_ids) {
      std::fwrite(ev.piece.data(), 1, ev.piece.size(), stdout);
      std::fflush(stdout);
    }
    return true;
  };
  GenerateResult result;
  if (Status s = session->generate(request, &result); !s)
    return std::cerr << "\nmagnetar-cli run: " << s.message() << "\n", 1;
  if (print_ids) {
    for (size_t i = 0; i < result.tokens.size(); ++i) std::printf("%s%d", i ? " " : "", result.tokens[i]);
  }
  std::printf("\n");
  std::fflush(stdout);
  std::cerr << format_stats(result.stats, result.stop) << "\n";
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
