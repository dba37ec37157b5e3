// `magnetar-cli template`: renders a conversation with a model's chat template (from a model
// file, or straight from a tokenizer_config.json) and prints the prompt, and its token ids when a
// tokenizer is at hand: for checking a model's prompt format, and for tests. Like `info`, it
// reaches into the engine's internals (the template and tokenizer of a loaded model).
#include <cstdio>
#include <iostream>

#include <nlohmann/json.hpp>

#include "cli.h"
#include "convert/input_file.h"
#include "model/model_impl.h"
#include "model_options.h"
#include "tokenizer/chat_template.h"

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

constexpr uint64_t kMaxJsonBytes = 64ull << 20;

int fail(const std::string& message) {
  std::cerr << "magnetar-cli template: " << message << "\n";
  return 1;
}

// The conversation file: messages, tools, extra_vars and add_generation_prompt as variables.
Status read_conversation(const std::string& path, jinja::Value* messages, jinja::Dict* variables,
                         bool* add_generation_prompt) {
  std::string text;
  MAGNETAR_TRY(convert::read_small_file(path, kMaxJsonBytes, &text));
  const auto j = nlohmann::ordered_json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object() || !j.contains("messages"))
    return Status::error(path + ": expected a JSON object with \"messages\"");
  MAGNETAR_TRY(messages_value(j["messages"], messages).with_context(path));
  if (j.contains("tools")) {
    jinja::Value tools;
    MAGNETAR_TRY(jinja::value_from_json(j["tools"], false, &tools).with_context(path));
    variables->set("tools", tools);
  }
  if (j.contains("extra_vars") && j["extra_vars"].is_object())
    for (auto it = j["extra_vars"].begin(); it != j["extra_vars"].end(); ++it) {
      jinja::Value v;
      MAGNETAR_TRY(jinja::value_from_json(it.value(), false, &v).with_context(path));
      variables->set(it.key(), v);
    }
  if (j.contains("add_generation_prompt") && j["add_generation_prompt"].is_boolean())
    *add_generation_prompt = j["add_generation_prompt"].get<bool>();
  return Status::ok();
}

int template_command(const std::vector<std::string>& argv) {
  std::vector<std::string> value_options = kModelValueOptions;
  value_options.insert(value_options.end(), {"--tokenizer-config", "--messages"});
  std::vector<std::string> known = value_options;
  known.insert(known.end(), {"--add-generation-prompt", "--ids"});
  Args args(argv, value_options);
  if (!args.ok()) return usage_error(kTemplate, args.error());
  if (std::string bad = args.unknown_option(known); !bad.empty()) return usage_error(kTemplate, "unknown option " + bad);
  const std::string config_path = args.get({"--tokenizer-config"});
  const std::string model_path = args.get({"-m", "--model"});
  if (config_path.empty() == model_path.empty())
    return usage_error(kTemplate, "give either -m MODEL or --tokenizer-config FILE");
  if (!args.has("--messages")) return usage_error(kTemplate, "--messages CONV.json is required");

  jinja::Value messages;
  jinja::Dict variables;
  bool add_generation_prompt = false;
  if (Status s = read_conversation(args.get({"--messages"}), &messages, &variables, &add_generation_prompt); !s)
    return fail(s.message());
  if (args.has("--add-generation-prompt")) add_generation_prompt = true;

  std::unique_ptr<Model> model;
  std::unique_ptr<PromptTemplate> owned_template;
  const PromptTemplate* prompt_template = nullptr;
  SpecialTokenText special;
  Tokenizer folder_tokenizer;
  const Tokenizer* tokenizer = nullptr;
  if (!model_path.empty()) {
    int exit_code = 0;
    if (!load_model_from_args(kTemplate, args, &model, &exit_code)) return exit_code;
    const Model::Impl& impl = model->impl();
    if (!impl.prompt_template) return fail(impl.template_status.message());
    prompt_template = impl.prompt_template.get();
    special = impl.template_special_tokens();
    tokenizer = &impl.tokenizer;
  } else {
    std::string text, source;
    jinja::Dict config_variables;
    if (Status s = convert::read_small_file(config_path, kMaxJsonBytes, &text); !s) return fail(s.message());
    if (Status s = read_template_config(text, &source, &config_variables); !s) return fail(config_path + ": " + s.message());
    if (source.empty()) return fail(config_path + ": no chat_template");
    if (Status s = PromptTemplate::create(source, config_path, &owned_template); !s) return fail(s.message());
    prompt_template = owned_template.get();
    for (auto& [k, v] : config_variables.entries)
      if (k == "bos_token") special.bos = v.text.bytes();
      else if (k == "eos_token") special.eos = v.text.bytes();
      else if (!variables.find(k)) variables.set(k, v);
    if (args.has("--ids")) {  // tokenizer.json, else tokenizer.model, beside the config
      const size_t slash = config_path.find_last_of("/\\");
      const std::string folder = slash == std::string::npos ? std::string() : config_path.substr(0, slash + 1);
      std::string bytes;
      if (convert::read_small_file(folder + "tokenizer.json", kMaxJsonBytes, &bytes)) {
        if (Status s = folder_tokenizer.load_tokenizer_json(bytes, text); !s) return fail(folder + "tokenizer.json: " + s.message());
      } else if (convert::read_small_file(folder + "tokenizer.model", kMaxJsonBytes, &bytes)) {
        if (Status s = folder_tokenizer.load(bytes); !s) return fail(folder + "tokenizer.model: " + s.message());
      } else {
        return fail("--ids needs a tokenizer.json or tokenizer.model beside " + config_path);
      }
      tokenizer = &folder_tokenizer;
    }
  }
  jinja::RenderResult rendered;
  if (Status s = prompt_template->render(messages, add_generation_prompt, special, variables, &rendered); !s)
    return fail(s.message());
  std::fwrite(rendered.text.data(), 1, rendered.text.size(), stdout);
  if (args.has("--ids")) {
    std::vector<int> ids;
    if (Status s = tokenizer->encode_chat_prompt(rendered.text, content_ranges(rendered), &ids); !s)
      return fail(s.message());
    std::printf("\n");
    for (size_t i = 0; i < ids.size(); ++i) std::printf("%s%d", i ? " " : "", ids[i]);
    std::printf("\n");
  }
  return 0;
}

}  // namespace
}  // namespace magnetar::cli
