// render_chat_template() of magnetar/tools.h (`magnetar-cli template`): a conversation file
// rendered by a model file's chat template, or by a tokenizer_config.json's, and optionally its
// token ids (message contents never become control tokens).
#include <nlohmann/json.hpp>

#include "convert/input_file.h"
#include "magnetar/tools.h"
#include "model/model_impl.h"
#include "tokenizer/chat_template.h"

namespace magnetar {
namespace {

constexpr uint64_t kMaxJsonBytes = 64ull << 20;

// {"messages": [...], optional "tools", "extra_vars", "add_generation_prompt"} (the chat cases).
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
    *add_generation_prompt = *add_generation_prompt || j["add_generation_prompt"].get<bool>();
  return Status::ok();
}

// The tokenizer.json (else tokenizer.model) in the folder of `config_path`.
Status load_folder_tokenizer(const std::string& config_path, const std::string& config_text,
                             Tokenizer* out) {
  const size_t slash = config_path.find_last_of("/\\");
  const std::string folder = slash == std::string::npos ? std::string() : config_path.substr(0, slash + 1);
  std::string bytes;
  if (convert::read_small_file(folder + "tokenizer.json", kMaxJsonBytes, &bytes))
    return out->load_tokenizer_json(bytes, config_text).with_context(folder + "tokenizer.json");
  if (convert::read_small_file(folder + "tokenizer.model", kMaxJsonBytes, &bytes))
    return out->load(bytes).with_context(folder + "tokenizer.model");
  return Status::error("token ids need a tokenizer.json or tokenizer.model beside " + config_path);
}

}  // namespace

Status render_chat_template(const TemplateRequest& request, TemplateResult* out) {
  *out = TemplateResult{};
  if (request.model_path.empty() == request.tokenizer_config_path.empty())
    return Status::error("give either a model file or a tokenizer_config.json");
  jinja::Value messages;
  jinja::Dict variables;
  bool add_generation_prompt = request.add_generation_prompt;
  MAGNETAR_TRY(read_conversation(request.conversation_path, &messages, &variables, &add_generation_prompt));

  std::unique_ptr<Model> model;
  std::unique_ptr<PromptTemplate> owned_template;
  const PromptTemplate* prompt_template = nullptr;
  SpecialTokenText special;
  Tokenizer folder_tokenizer;
  const Tokenizer* tokenizer = nullptr;
  if (!request.model_path.empty()) {
    LoadOptions options;
    options.mode = LoadMode::Map;  // the template and tokenizer only: no weights are read
    MAGNETAR_TRY(Model::load(request.model_path, options, &model));
    const Model::Impl& impl = ModelInternals::impl(*model);
    if (!impl.prompt_template) return impl.template_status;
    prompt_template = impl.prompt_template.get();
    special = impl.template_special_tokens();
    tokenizer = &impl.tokenizer;
  } else {
    const std::string& config_path = request.tokenizer_config_path;
    std::string text, source;
    jinja::Dict config_variables;
    MAGNETAR_TRY(convert::read_small_file(config_path, kMaxJsonBytes, &text));
    MAGNETAR_TRY(read_template_config(text, &source, &config_variables).with_context(config_path));
    if (source.empty()) return Status::error(config_path + ": no chat_template");
    MAGNETAR_TRY(PromptTemplate::create(source, config_path, &owned_template));
    prompt_template = owned_template.get();
    for (auto& [k, v] : config_variables.entries)
      if (k == "bos_token") special.bos = v.text.bytes();
      else if (k == "eos_token") special.eos = v.text.bytes();
      else if (!variables.find(k)) variables.set(k, v);
    if (request.want_ids) {
      MAGNETAR_TRY(load_folder_tokenizer(config_path, text, &folder_tokenizer));
      tokenizer = &folder_tokenizer;
    }
  }
  jinja::RenderResult rendered;
  MAGNETAR_TRY(prompt_template->render(messages, add_generation_prompt, special, variables, &rendered));
  out->text = rendered.text;
  if (request.want_ids)
    MAGNETAR_TRY(tokenizer->encode_chat_prompt(rendered.text, content_ranges(rendered), &out->ids));
  return Status::ok();
}

}  // namespace magnetar
