// `magnetar-cli chat`: an interactive multi-turn chat in the terminal using the model's template.
// Each turn re-renders the whole conversation; the session reuses the cached common prefix, so
// only the new turn is prefilled.
#include <algorithm>
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
    "                  [--kv f32|f16|int8] [--context-shift]\n"
    "  Type a message and press Enter. /reset starts over, /quit (or end of input) leaves.\n"
    "  Ctrl+C stops the answer being generated.\n"
    "  When the conversation outgrows the context (--ctx), the turn is refused with the sizes;\n"
    "  --context-shift instead drops the oldest turns (the --system prompt stays) and says so.",
    chat_command};
const CommandRegistration kRegistration(kChat);

// Tokens kept free for the answer when a turn is checked against the context.
int reply_room(int context, int64_t max_tokens) {
  return static_cast<int>(std::max<int64_t>(1, std::min<int64_t>(max_tokens, context / 4)));
}

// Renders `messages` and fits them into the context: when the prompt plus `room` does not fit,
// either refuses (an error naming the sizes) or, with `shift`, drops the oldest turns after the
// system prompt until it does, reporting how many went. The newest user turn always stays.
Status fit_conversation(const Model& model, std::vector<ChatMessage>* messages, bool shift, int room,
                        std::vector<int>* tokens, int* dropped) {
  *dropped = 0;
  const int context = model.info().context_length;
  const size_t first_turn = !messages->empty() && (*messages)[0].role == "system" ? 1 : 0;
  while (true) {
    MAGNETAR_TRY(model.apply_chat_template(*messages, true, tokens));
    if (static_cast<int>(tokens->size()) + room <= context) return Status::ok();
    const std::string sizes = "the conversation is " + std::to_string(tokens->size()) +
                              " tokens, plus " + std::to_string(room) +
                              " kept for the answer, and the context holds " +
                              std::to_string(context);
    if (!shift)
      return Status::error(sizes + ": /reset to start over, or run with --context-shift (drops "
                           "the oldest turns) or a larger --ctx");
    if (messages->size() <= first_turn + 1)
      return Status::error(sizes + " with only the last message left: shorten it or raise --ctx");
    // A whole turn: the oldest message and the answer to it.
    const auto first = messages->begin() + static_cast<long>(first_turn);
    const bool answered = messages->size() > first_turn + 2 && first[1].role == "assistant";
    messages->erase(first, first + (answered ? 2 : 1));
    *dropped += answered ? 2 : 1;
  }
}


int chat_command(const std::vector<std::string>& argv) {
  std::vector<std::string> value_options = kModelValueOptions;
  value_options.insert(value_options.end(), kSamplerValueOptions.begin(), kSamplerValueOptions.end());
  value_options.insert(value_options.end(), {"--system", "-n"});
  Args args;
  if (int bad = parse_command_line(kChat, argv, value_options, {"--context-shift"}, false, &args)) return bad;
  int64_t n = 512;
  std::string error;
  if (!args.get_int({"-n"}, 1, kMaxContext, &n, &error)) return usage_error(kChat, error);
  const bool context_shift = args.has("--context-shift");
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
    // Checked before any tokenizer work: a multi-megabyte line costs nothing.
    const uint64_t max_bytes = uint64_t(model->info().context_length) * uint64_t(model->info().max_piece_bytes);
    if (line.size() > max_bytes) {
      std::cerr << "magnetar-cli chat: the message is " << line.size() << " bytes; a " << model->info().context_length
                << "-token context holds at most " << max_bytes << " bytes of text\n";
      continue;
    }
    messages.push_back({"user", line});
    std::vector<int> tokens;
    int dropped = 0;
    const int room = reply_room(model->info().context_length, n);
    if (Status s = fit_conversation(*model, &messages, context_shift, room, &tokens, &dropped); !s) {
      std::cerr << "magnetar-cli chat: " << s.message() << "\n";
      messages.pop_back();
      continue;
    }
    if (dropped > 0)
      std::cerr << "(context full: dropped the " << dropped << " oldest message"
                << (dropped == 1 ? "" : "s") << (system.empty() ? "" : "; the system prompt stays")
                << ")\n";
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
      std::cerr << "(the context is full: the answer was cut; "
                << (context_shift ? "the next turn drops the oldest messages" : "/reset to start over")
                << ")\n";
    std::cerr << format_stats(result.stats, result.stop) << "\n";
    messages.push_back({"assistant", answer});
  }
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
