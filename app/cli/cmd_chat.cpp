// `magnetar-cli chat`: an interactive multi-turn chat in the terminal using the model's template.
// Each turn re-renders the whole conversation; the session reuses the cached common prefix, so
// only the new turn is prefilled.
#include <atomic>
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "model_options.h"

namespace magnetar::cli {
namespace {

int chat_command(const std::vector<std::string>& argv);

const Command kChat{
    "chat", "interactive multi-turn chat",
    "magnetar-cli chat -m MODEL [--system TEXT] [-n N] [sampling options] [--threads N] [--ctx N]\n"
    "                  [--kv f32|f16|int8]\n"
    "  Type a message and press Enter. /reset starts over, /quit (or end of input) leaves.\n"
    "  Ctrl+C stops the answer being generated.",
    chat_command};
const CommandRegistration kRegistration(kChat);


int chat_command(const std::vector<std::string>& argv) {
  std::vector<std::string> value_options = kModelValueOptions;
  value_options.insert(value_options.end(), kSamplerValueOptions.begin(), kSamplerValueOptions.end());
  value_options.insert(value_options.end(), {"--system", "-n"});
  Args args(argv, value_options);
  if (!args.ok()) return usage_error(kChat, args.error());
  if (std::string bad = args.unknown_option(value_options); !bad.empty())
    return usage_error(kChat, "unknown option " + bad);
  int64_t n = 512;
  if (!args.get_int({"-n"}, &n) || n <= 0) return usage_error(kChat, "-n needs a token count");
  int exit_code = 0;
  SamplerParams sampler;
  sampler.temperature = 0.7f;
  if (!sampler_from_args(kChat, args, &sampler, &exit_code)) return exit_code;
  std::unique_ptr<Model> model;
  if (!load_model_from_args(kChat, args, &model, &exit_code)) return exit_code;
  std::unique_ptr<Session> session;
  if (Status s = Session::create(*model, &session); !s)
    return std::cerr << "magnetar-cli chat: " << s.message() << "\n", 1;

  std::vector<ChatMessage> messages;
  const std::string system = args.get({"--system"});
  if (!system.empty()) messages.push_back({"system", system});
  install_interrupt_handler();
  std::cerr << "chatting with " << model->info().path << " ("
            << chat_template_name(model->info().chat_template) << " template). /quit to leave.\n";
  const bool tty = stdout_is_terminal();
  std::string line;
  while (true) {
    if (tty) std::fputs("\n> ", stdout), std::fflush(stdout);
    if (!std::getline(std::cin, line) || line == "/quit") break;
    if (line == "/reset") {
      messages.resize(system.empty() ? 0 : 1);
      session->reset();
      std::cerr << "(conversation cleared)\n";
      continue;
    }
    if (line.empty()) continue;
    messages.push_back({"user", line});
    std::vector<int> tokens;
    if (Status s = model->apply_chat_template(messages, true, &tokens); !s) {
      std::cerr << "magnetar-cli chat: " << s.message() << "\n";
      messages.pop_back();
      continue;
    }
    int keep = session->matching_prefix(tokens);
    if (keep == static_cast<int>(tokens.size())) --keep;  // need logits of the last token
    session->truncate(keep);
    GenerateRequest request;
    request.prompt.assign(tokens.begin() + keep, tokens.end());
    request.max_tokens = static_cast<int>(n);
    request.sampler = sampler;
    request.sampler.seed = sampler.seed + messages.size();
    request.cancel = &interrupt_flag();
    std::string answer;
    request.on_token = [&](const TokenEvent& ev) {
      answer.append(ev.piece);
      std::fwrite(ev.piece.data(), 1, ev.piece.size(), stdout);
      std::fflush(stdout);
      return true;
    };
    clear_interrupt();
    GenerateResult result;
    if (Status s = session->generate(request, &result); !s) {
      std::cerr << "\nmagnetar-cli chat: " << s.message() << "\n";
      messages.pop_back();
      continue;
    }
    std::fputs("\n", stdout);
    if (result.stop == StopReason::ContextFull)
      std::cerr << "(the context is full: /reset to start over)\n";
    std::cerr << format_stats(result.stats, result.stop) << "\n";
    messages.push_back({"assistant", answer});
  }
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
