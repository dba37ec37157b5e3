// settings.json reading and atomic writing (see settings_file.h).
#include "settings_file.h"

#include <nlohmann/json.hpp>

#include "text_util.h"

namespace magnetar::app {

using nlohmann::json;

Status load_settings(const std::string& path, Settings* settings, std::vector<std::string>* known_models) {
  std::string bytes;
  if (!read_whole_file(path, &bytes)) return Status::ok();  // first start: defaults
  const json j = json::parse(bytes, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return Status::error(path + " is damaged; using default settings");
  try {
    Settings s;
    s.threads = j.value("threads", 0);
    s.context_length = j.value("context_length", 0);
    s.system_prompt = j.value("system_prompt", std::string());
    if (const std::string kv = j.value("kv_cache_type", std::string("f32")); !parse_kv_type(kv, &s.kv_type))
      return Status::error(path + ": kv_cache_type \"" + utf8_truncate(kv, 40) + "\" is not f32, f16 or int8; using default settings");
    if (auto it = j.find("sampling"); it != j.end() && it->is_object()) {
      s.sampling.temperature = it->value("temperature", s.sampling.temperature);
      s.sampling.top_k = it->value("top_k", s.sampling.top_k);
      s.sampling.top_p = it->value("top_p", s.sampling.top_p);
      s.sampling.min_p = it->value("min_p", s.sampling.min_p);
      s.sampling.repeat_penalty = it->value("repeat_penalty", s.sampling.repeat_penalty);
      s.sampling.max_tokens = it->value("max_tokens", s.sampling.max_tokens);
    }
    std::vector<std::string> models;
    if (auto it = j.find("known_models"); it != j.end() && it->is_array())
      for (const json& m : *it)
        if (m.is_string()) models.push_back(m.get<std::string>());
    if (s.threads < 0 || s.context_length < 0) return Status::error(path + " has negative values");
    *settings = s;
    *known_models = std::move(models);
  } catch (const json::exception& e) {
    return Status::error(path + " is damaged (" + e.what() + "); using default settings");
  }
  return Status::ok();
}

Status save_settings(const std::string& path, const Settings& s, const std::vector<std::string>& known_models) {
  json j{{"format_version", 1},
         {"threads", s.threads},
         {"context_length", s.context_length},
         {"kv_cache_type", kv_type_name(s.kv_type)},
         {"system_prompt", s.system_prompt},
         {"sampling",
          {{"temperature", s.sampling.temperature},
           {"top_k", s.sampling.top_k},
           {"top_p", s.sampling.top_p},
           {"min_p", s.sampling.min_p},
           {"repeat_penalty", s.sampling.repeat_penalty},
           {"max_tokens", s.sampling.max_tokens}}},
         {"known_models", known_models}};
  return write_file_atomically(path, j.dump(1, ' ', false, nlohmann::json::error_handler_t::replace));
}

}  // namespace magnetar::app
