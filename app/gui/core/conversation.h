// Conversation: the plain data of one chat (messages, per-message statistics, the model and
// settings it uses) and its JSON form. No files and no UI here: see conversation_store.h.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

#include "magnetar/status.h"

namespace magnetar::app {

inline constexpr int kConversationFormatVersion = 1;

// Statistics kept with an assistant message after it is generated.
struct MessageStats {
  bool present = false;
  int prompt_tokens = 0;
  int generated_tokens = 0;
  int context_tokens = 0;         // tokens in the KV cache after the answer
  double prompt_tokens_per_second = 0;
  double generate_tokens_per_second = 0;
  double time_to_first_token = 0;  // seconds
  double achieved_gbps = 0;
  int threads = 0;
  std::string stop_reason;        // "end of text", "stopped", "token limit", "context full", "error"
};

struct Message {
  std::string role;     // "user" or "assistant"
  std::string content;  // markdown text as the model or the user wrote it
  int64_t created = 0;  // unix seconds
  MessageStats stats;   // assistant messages only
};

struct SamplingSettings {
  float temperature = 0.7f;  // 0 = greedy
  int top_k = 40;
  float top_p = 0.95f;
  float min_p = 0.05f;
  float repeat_penalty = 1.1f;
  int max_tokens = 512;
  uint64_t seed = 0;  // 0 = a fresh seed per answer
};

struct Conversation {
  std::string id;     // also the file name stem: "20261130-132501-7f3a"
  std::string title;  // shown in the sidebar; from the first message until renamed
  int64_t created = 0, updated = 0;
  std::string model_path;  // the model file this chat uses ("" = whatever is loaded)
  std::string system_prompt;
  SamplingSettings sampling;
  std::vector<Message> messages;
};

nlohmann::json conversation_to_json(const Conversation& conversation);
// Validates types and the format version; unknown keys are ignored (forward compatible).
Status conversation_from_json(const nlohmann::json& json, Conversation* out);

// A fresh, unique id: date, time and a random suffix.
std::string make_conversation_id();
// A sidebar title from the first user message (first line, at most ~48 characters, UTF-8 safe).
std::string title_from_text(const std::string& text);
// The whole chat as Markdown (for "Export as Markdown" and "Copy chat").
std::string conversation_to_markdown(const Conversation& conversation);
// "412 tokens · 85.3 tok/s · prompt 1204 tok/s · first token 0.12 s · end of text"
std::string format_message_stats(const MessageStats& stats);

int64_t unix_now();

}  // namespace magnetar::app
