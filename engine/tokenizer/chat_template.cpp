// Chat templates through the Jinja interpreter: see chat_template.h.
#include "tokenizer/chat_template.h"

#include <ctime>
#include <mutex>

#include <nlohmann/json.hpp>

namespace magnetar {

const char* const kPlainCompletionTemplate =
    "{{ bos_token }}{% for message in messages %}{% if not loop.first %}{{ '\\n' }}{% endif %}"
    "{{ message['content'] }}{% endfor %}";

Status PromptTemplate::create(const std::string& source, std::string origin, std::unique_ptr<PromptTemplate>* out) {
  auto t = std::make_unique<PromptTemplate>();
  t->builtin_ = source.empty();
  t->source_ = t->builtin_ ? kPlainCompletionTemplate : source;
  t->origin_ = t->builtin_ ? "built-in (plain completion)" : std::move(origin);
  MAGNETAR_TRY(jinja::Template::parse(t->source_, &t->template_));
  *out = std::move(t);
  return Status::ok();
}

namespace {

// "26 Jul 2024": what Llama 3.1's template expects in date_string.
std::string today() {
  static std::mutex mutex;  // std::localtime shares one buffer
  std::lock_guard<std::mutex> lock(mutex);
  const std::time_t now = std::time(nullptr);
  const std::tm* t = std::localtime(&now);
  char buf[32];
  if (!t || std::strftime(buf, sizeof buf, "%d %b %Y", t) == 0) return "26 Jul 2024";
  return buf;
}

}  // namespace

Status PromptTemplate::render(const jinja::Value& messages, bool add_generation_prompt,
                              const SpecialTokenText& special, const jinja::Dict& extra_variables,
                              jinja::RenderResult* out) const {
  jinja::Dict vars;
  vars.set("messages", messages);
  vars.set("add_generation_prompt", jinja::Value::boolean(add_generation_prompt));
  vars.set("bos_token", jinja::Value::string(special.bos));
  vars.set("eos_token", jinja::Value::string(special.eos));
  vars.set("tools", jinja::Value::none());
  vars.set("documents", jinja::Value::none());
  vars.set("date_string", jinja::Value::string(today()));
  for (const auto& [k, v] : extra_variables.entries) vars.set(k, v);
  return template_->render(vars, jinja::RenderLimits{}, out);
}

Status PromptTemplate::render(const std::vector<ChatMessage>& messages, bool add_generation_prompt,
                              const SpecialTokenText& special, jinja::RenderResult* out) const {
  return render(messages_value(messages), add_generation_prompt, special, jinja::Dict{}, out);
}

Status messages_value(const nlohmann::ordered_json& messages, jinja::Value* out) {
  if (!messages.is_array()) return Status::error("messages must be a JSON list");
  jinja::List list;
  for (const auto& m : messages) {
    if (!m.is_object()) return Status::error("each message must be a JSON object");
    jinja::Dict d;
    for (auto it = m.begin(); it != m.end(); ++it) {
      jinja::Value v;
      MAGNETAR_TRY(jinja::value_from_json(it.value(), it.key() != "role", &v));
      d.set(it.key(), std::move(v));
    }
    list.push_back(jinja::Value::from_dict(std::move(d)));
  }
  *out = jinja::Value::from_list(std::move(list));
  return Status::ok();
}

jinja::Value messages_value(const std::vector<ChatMessage>& messages) {
  jinja::List list;
  for (const ChatMessage& m : messages) {
    jinja::Dict d;
    d.set("role", jinja::Value::string(m.role));
    d.set("content", jinja::Value::string(jinja::Text(m.content, true)));
    list.push_back(jinja::Value::from_dict(std::move(d)));
  }
  return jinja::Value::from_list(std::move(list));
}

Status read_template_config(const std::string& json_text, std::string* source, jinja::Dict* special_variables) {
  using ojson = nlohmann::ordered_json;
  const ojson j = ojson::parse(json_text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return Status::error("malformed JSON");
  source->clear();
  if (const auto t = j.find("chat_template"); t != j.end()) {
    if (t->is_string()) {
      *source = t->get<std::string>();
    } else if (t->is_array()) {
      for (const ojson& e : *t)
        if (e.is_object() && e.value("name", "") == "default" && e.contains("template") && e["template"].is_string())
          *source = e["template"].get<std::string>();
    } else if (!t->is_null()) {
      return Status::error("chat_template must be a string or a list of named templates");
    }
  }
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& key = it.key();
    const bool token_key = key.size() > 6 && key.compare(key.size() - 6, 6, "_token") == 0;
    jinja::Value v;
    if (token_key && it->is_string()) {
      v = jinja::Value::string(it->get<std::string>());
    } else if (token_key && it->is_object() && it->contains("content") && (*it)["content"].is_string()) {
      v = jinja::Value::string((*it)["content"].get<std::string>());
    } else if (key == "additional_special_tokens" && it->is_array()) {
      MAGNETAR_TRY(jinja::value_from_json(*it, false, &v));
    } else {
      continue;
    }
    special_variables->set(key, std::move(v));
  }
  return Status::ok();
}

ContentRanges content_ranges(const jinja::RenderResult& rendered) {
  ContentRanges ranges;
  ranges.reserve(rendered.content_ranges.size());
  for (const jinja::ByteRange& r : rendered.content_ranges) ranges.emplace_back(r.begin, r.end);
  return ranges;
}

Status check_chat_template(const std::string& source) {
  std::unique_ptr<PromptTemplate> t;
  MAGNETAR_TRY(PromptTemplate::create(source, "check", &t));
  const std::vector<ChatMessage> sample = {
      {"user", "Hello"}, {"assistant", "Hi there."}, {"user", "Tell me a story."}};
  jinja::RenderResult result;
  const Status s = t->render(sample, true, SpecialTokenText{"<s>", "</s>"}, &result);
  if (!s && !result.raised_by_template) return s;
  return Status::ok();
}

std::vector<std::string> end_of_turn_markers(const std::string& source) {
  static const char* const kMarkers[] = {"<|eot_id|>", "<|im_end|>", "<end_of_turn>", "<|end|>",
                                         "<|eom_id|>", "<|endoftext|>", "<|END_OF_TURN_TOKEN|>"};
  std::vector<std::string> found;
  for (const char* m : kMarkers)
    if (source.find(m) != std::string::npos) found.emplace_back(m);
  return found;
}

}  // namespace magnetar
