// `magnetar-cli eval`: teacher-forced logits of every position, written as raw float32.
#include <cstdio>
#include <fstream>
#include <iostream>

#include "cli.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

int eval_command(const std::vector<std::string>& argv);

const Command kEval{
    "eval", "write the logits of every prompt position (for tests and debugging)",
    "magnetar-cli eval -m MODEL --tokens ID,ID,... --logits OUT.f32 [--threads N] [--load read|map]\n"
    "  OUT.f32 holds little-endian float32, row-major [n_tokens, vocab]",
    eval_command};
const CommandRegistration kRegistration(kEval);

int eval_command(const std::vector<std::string>& argv) {
  std::vector<std::string> value_options = kModelValueOptions;
  value_options.insert(value_options.end(), {"--tokens", "--logits"});
  Args args(argv, value_options);
  if (!args.ok()) return usage_error(kEval, args.error());
  if (std::string bad = args.unknown_option(value_options); !bad.empty())
    return usage_error(kEval, "unknown option " + bad);
  std::vector<int> tokens;
  if (!parse_int_list(args.get({"--tokens"}), &tokens))
    return usage_error(kEval, "--tokens needs comma-separated token ids");
  const std::string out_path = args.get({"--logits"});
  if (out_path.empty()) return usage_error(kEval, "--logits OUT.f32 is required");

  int exit_code = 0;
  std::unique_ptr<Model> model;
  if (!load_model_from_args(kEval, args, &model, &exit_code)) return exit_code;
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, &session); !s)
    return std::cerr << "magnetar-cli eval: " << s.message() << "\n", 1;
  std::vector<float> logits;
  if (Status s = session->evaluate(tokens, &logits); !s)
    return std::cerr << "magnetar-cli eval: " << s.message() << "\n", 1;

  const std::string tmp = out_path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f.write(reinterpret_cast<const char*>(logits.data()),
            static_cast<std::streamsize>(logits.size() * sizeof(float)));
    if (!f) {
      std::remove(tmp.c_str());
      return std::cerr << "magnetar-cli eval: cannot write " << out_path << "\n", 1;
    }
  }
  if (std::rename(tmp.c_str(), out_path.c_str()) != 0) {
    std::remove(tmp.c_str());
    return std::cerr << "magnetar-cli eval: cannot write " << out_path << "\n", 1;
  }
  std::cerr << "wrote " << tokens.size() << " x " << model->info().vocab_size << " logits to "
            << out_path << "\n";
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
