// Conversation <-> JSON, ids, titles and the Markdown export.
#include "conversation.h"

#include <chrono>
#include <cstdio>
#include <ctime>
#include <nlohmann/json.hpp>
#include <random>

#include "text_util.h"

namespace magnetar::app {

using nlohmann::json;

int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

static json stats_to_json(const MessageStats& s) {
  return json{{"prompt_tokens", s.prompt_tokens},
              {"generated_tokens", s.generated_tokens},
              {"context_tokens", s.context_tokens},
              {"prompt_tokens_per_second", s.prompt_tokens_per_second},
              {"generate_tokens_per_second", s.generate_tokens_per_second},
              {"time_to_first_token", s.time_to_first_token},
              {"achieved_gbps", s.achieved_gbps},
              {"threads", s.threads},
              {"stop_reason", s.stop_reason}};
}

json conversation_to_json(const Conversation& c) {
  json messages = json::array();
  for (const Message& m : c.messages) {
    json jm{{"role", m.role}, {"content", m.content}, {"created", m.created}};
    if (m.stats.present) jm["stats"] = stats_to_json(m.stats);
    messages.push_back(std::move(jm));
  }
  const SamplingSettings& s = c.sampling;
  return json{{"format", "magnetar-conversation"},
              {"format_version", kConversationFormatVersion},
              {"id", c.id},
              {"title", c.title},
              {"created", c.created},
              {"updated", c.updated},
              {"model_path", c.model_path},
              {"system_prompt", c.system_prompt},
              {"sampling",
               {{"temperature", s.temperature},
                {"top_k", s.top_k},
                {"top_p", s.top_p},
                {"min_p", s.min_p},
                {"repeat_penalty", s.repeat_penalty},
                {"max_tokens", s.max_tokens},
                {"seed", s.seed}}},
              {"messages", std::move(messages)}};
}

namespace {

// Typed getters that turn a wrong type into a Status instead of an exception escaping.
template <typename T>
Status get_optional(const json& object, const char* key, T* out) {
  auto it = object.find(key);
  if (it == object.end() || it->is_null()) return Status::ok();
  try {
    *out = it->get<T>();
  } catch (const json::exception&) {
    return Status::error(std::string("field '") + key + "' has the wrong type");
  }
  return Status::ok();
}

template <typename T>
Status get_required(const json& object, const char* key, T* out) {
  if (!object.contains(key)) return Status::error(std::string("missing field '") + key + "'");
  return get_optional(object, key, out);
}

}  // namespace

Status conversation_from_json(const json& j, Conversation* out) {
  if (!j.is_object()) return Status::error("not a JSON object");
  std::string format;
  MAGNETAR_TRY(get_required(j, "format", &format));
  if (format != "magnetar-conversation") return Status::error("not a Magnetar conversation");
  int version = 0;
  MAGNETAR_TRY(get_required(j, "format_version", &version));
  if (version < 1) return Status::error("invalid format_version " + std::to_string(version));
  if (version > kConversationFormatVersion)
    return Status::error("written by a newer Magnetar (format " + std::to_string(version) + ")");

  Conversation c;
  MAGNETAR_TRY(get_required(j, "id", &c.id));
  MAGNETAR_TRY(get_optional(j, "title", &c.title));
  MAGNETAR_TRY(get_optional(j, "created", &c.created));
  MAGNETAR_TRY(get_optional(j, "updated", &c.updated));
  MAGNETAR_TRY(get_optional(j, "model_path", &c.model_path));
  MAGNETAR_TRY(get_optional(j, "system_prompt", &c.system_prompt));
  if (auto it = j.find("sampling"); it != j.end()) {
    if (!it->is_object()) return Status::error("field 'sampling' is not an object");
    SamplingSettings& s = c.sampling;
    MAGNETAR_TRY(get_optional(*it, "temperature", &s.temperature));
    MAGNETAR_TRY(get_optional(*it, "top_k", &s.top_k));
    MAGNETAR_TRY(get_optional(*it, "top_p", &s.top_p));
    MAGNETAR_TRY(get_optional(*it, "min_p", &s.min_p));
    MAGNETAR_TRY(get_optional(*it, "repeat_penalty", &s.repeat_penalty));
    MAGNETAR_TRY(get_optional(*it, "max_tokens", &s.max_tokens));
    MAGNETAR_TRY(get_optional(*it, "seed", &s.seed));
  }
  auto messages = j.find("messages");
  if (messages == j.end() || !messages->is_array())
    return Status::error("field 'messages' is missing or not an array");
  for (const json& jm : *messages) {
    if (!jm.is_object()) return Status::error("a message is not an object");
    Message m;
    MAGNETAR_TRY(get_required(jm, "role", &m.role));
    if (m.role != "user" && m.role != "assistant")
      return Status::error("unknown message role '" + m.role + "'");
    MAGNETAR_TRY(get_required(jm, "content", &m.content));
    MAGNETAR_TRY(get_optional(jm, "created", &m.created));
    if (auto st = jm.find("stats"); st != jm.end() && st->is_object()) {
      MessageStats& s = m.stats;
      s.present = true;
      MAGNETAR_TRY(get_optional(*st, "prompt_tokens", &s.prompt_tokens));
      MAGNETAR_TRY(get_optional(*st, "generated_tokens", &s.generated_tokens));
      MAGNETAR_TRY(get_optional(*st, "context_tokens", &s.context_tokens));
      MAGNETAR_TRY(get_optional(*st, "prompt_tokens_per_second", &s.prompt_tokens_per_second));
      MAGNETAR_TRY(get_optional(*st, "generate_tokens_per_second", &s.generate_tokens_per_second));
      MAGNETAR_TRY(get_optional(*st, "time_to_first_token", &s.time_to_first_token));
      MAGNETAR_TRY(get_optional(*st, "achieved_gbps", &s.achieved_gbps));
      MAGNETAR_TRY(get_optional(*st, "threads", &s.threads));
      MAGNETAR_TRY(get_optional(*st, "stop_reason", &s.stop_reason));
    }
    c.messages.push_back(std::move(m));
  }
  if (!is_safe_file_stem(c.id)) return Status::error("invalid conversation id '" + c.id + "'");
  *out = std::move(c);
  return Status::ok();
}

std::string make_conversation_id() {
  const std::time_t now = std::time(nullptr);
  std::tm tm_utc{};
#ifdef _WIN32
  gmtime_s(&tm_utc, &now);
#else
  gmtime_r(&now, &tm_utc);
#endif
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm_utc);
  static std::mt19937_64 rng(std::random_device{}() ^
                             static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  char suffix[16];
  std::snprintf(suffix, sizeof suffix, "%06x", static_cast<unsigned>(rng() & 0xffffff));
  return std::string(stamp) + "-" + suffix;
}

std::string title_from_text(const std::string& text) {
  std::string line = trim(text);
  if (size_t nl = line.find('\n'); nl != std::string::npos) line = trim(line.substr(0, nl));
  constexpr size_t kMaxTitleBytes = 48;
  if (line.size() > kMaxTitleBytes) line = utf8_truncate(line, kMaxTitleBytes) + "…";
  return line.empty() ? std::string("New chat") : line;
}

std::string format_message_stats(const MessageStats& s) {
  if (!s.present) return {};
  char buffer[256];
  std::snprintf(buffer, sizeof buffer,
                "%d tokens · %.1f tok/s · prompt %d tok at %.0f tok/s · first token %s", s.generated_tokens,
                s.generate_tokens_per_second, s.prompt_tokens, s.prompt_tokens_per_second,
                format_seconds(s.time_to_first_token).c_str());
  std::string text = buffer;
  if (s.achieved_gbps > 0) {
    std::snprintf(buffer, sizeof buffer, s.achieved_gbps < 1 ? " · %.3f GB/s" : " · %.1f GB/s", s.achieved_gbps);
    text += buffer;
  }
  if (!s.stop_reason.empty()) text += " · " + s.stop_reason;
  return text;
}

std::string conversation_to_markdown(const Conversation& c) {
  std::string md = "# " + c.title + "\n\n";
  if (!c.model_path.empty()) md += "*Model: `" + c.model_path + "`*\n\n";
  if (!c.system_prompt.empty()) md += "**System:** " + c.system_prompt + "\n\n";
  for (const Message& m : c.messages) {
    md += m.role == "user" ? "## You\n\n" : "## Assistant\n\n";
    md += m.content;
    if (md.empty() || md.back() != '\n') md += "\n";
    if (m.stats.present) md += "\n*" + format_message_stats(m.stats) + "*\n";
    md += "\n";
  }
  return md;
}

}  // namespace magnetar::app
