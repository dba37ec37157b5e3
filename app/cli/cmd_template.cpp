// `magnetar-cli template`: renders a conversation with a model's chat template (from a model
// file, or straight from a tokenizer_config.json) and prints the prompt, and its token ids when a
// tokenizer is at hand: for checking a model's prompt format, and for tests
// (render_chat_template() of magnetar/tools.h does the work).
#include <cstdio>
#include <iostream>

#include "cli.h"
#include "magnetar/tools.h"

namespace magnetar::cli {
namespace {

int template_command(const std::vector<std::string>& argv);

const Command kTemplate{
    "template", "render a conversation with a model's chat template",
    "magnetar-cli template (-m MODEL | --tokenizer-config FILE) --messages CONV.json\n"
    "                      [--add-generation-prompt] [--ids]\n"
    "  CONV.json is {\"messages\": [...]}, optionally with \"tools\", \"add_generation_prompt\" and\n"
    "  \"extra_vars\" (as in the chat cases). --ids prints the token ids (needs -m, or a\n"
    "  tokenizer.json or tokenizer.model beside the tokenizer_config.json). Message contents\n"
    "  never become control tokens.",
    template_command};
const CommandRegistration kRegistration(kTemplate);

int template_command(const std::vector<std::string>& argv) {
  const std::vector<std::string> value_options = {"-m", "--model", "--tokenizer-config", "--messages"};
  Args args;
  if (int bad = parse_command_line(kTemplate, argv, value_options, {"--add-generation-prompt", "--ids"}, true, &args))
    return bad;
  TemplateRequest request;
  request.model_path = args.get({"-m", "--model"});
  request.tokenizer_config_path = args.get({"--tokenizer-config"});
  if (request.model_path.empty() == request.tokenizer_config_path.empty())
    return usage_error(kTemplate, "give either -m MODEL or --tokenizer-config FILE");
  if (!args.has("--messages")) return usage_error(kTemplate, "--messages CONV.json is required");
  request.conversation_path = args.get({"--messages"});
  request.add_generation_prompt = args.has("--add-generation-prompt");
  request.want_ids = args.has("--ids");

  TemplateResult result;
  if (Status s = render_chat_template(request, &result); !s) {
    std::cerr << "magnetar-cli template: " << s.message() << "\n";
    return 1;
  }
  std::fwrite(result.text.data(), 1, result.text.size(), stdout);
  if (request.want_ids) {
    std::printf("\n");
    for (size_t i = 0; i < result.ids.size(); ++i) std::printf("%s%d", i ? " " : "", result.ids[i]);
    std::printf("\n");
  }
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
