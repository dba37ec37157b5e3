// Pure decisions the app makes, kept apart from the window so tests can call them directly:
// what a dropped path is, which turns still fit in the context window, and what speed and
// memory to expect from a model on this machine.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "conversation.h"
#include "magnetar/convert.h"
#include "magnetar/engine.h"

namespace magnetar::app {

enum class DropKind { HuggingFaceFolder, GgufFile, Llama2cCheckpoint, MagnetarModel, Unsupported };

struct DropTarget {
  DropKind kind = DropKind::Unsupported;
  std::string path;     // the folder or file to act on (a dropped config.json means its folder)
  std::string message;  // for Unsupported: why, in words for the user
};

// Looks at the file system only (never converts or loads).
DropTarget classify_drop(const std::string& path);

// Index of the first message to send so that the prompt fits in `budget` tokens, dropping
// whole turns from the front (a turn starts at a user message); the last user message is
// always kept. tokens_from(first) is the prompt size when sending messages[first..].
// Returns -1 when even the last turn alone does not fit.
int first_message_to_keep(const std::vector<Message>& messages,
                          const std::function<int(size_t first)>& tokens_from, int budget);

// Tokens the context window must keep free for an answer when a prompt is checked for overflow.
int reply_reserve_tokens(int context_length, int max_tokens);

// What to do when a prompt does not fit in the context window.
enum class OverflowPolicy : uint8_t {
  Ask,         // answer with EventKind::ContextOverflow and generate nothing
  DropOldest,  // leave out the oldest turns (never the system prompt or the last message)
};

// The context-overflow policy, for a prompt (`messages`: system prompt first, if any) that does
// not fit in `budget` tokens. The engine thread only measures: count_tokens(messages) is the
// size of the rendered prompt (anything over the budget when it cannot be rendered).
struct OverflowDecision {
  enum class Action { Ask, SendTrimmed, TooLong } action = Action::Ask;
  std::vector<ChatMessage> messages;  // SendTrimmed: the system prompt and the turns kept
  int left_out = 0;                   // SendTrimmed: messages left out after the system prompt
};
OverflowDecision decide_overflow(const std::vector<ChatMessage>& messages, OverflowPolicy policy,
                                 int budget,
                                 const std::function<int(const std::vector<ChatMessage>&)>& count_tokens);

// Decode speed is bound by reading the weights once per token.
double predicted_tokens_per_second(uint64_t bytes_per_token, double read_gbps);
// Model file + KV cache (n_layers × n_kv_heads × head_dim keys and values per token, in the KV
// type's element size) + a little scratch.
uint64_t predicted_ram_bytes(uint64_t model_file_bytes, int n_layers, int n_kv_heads, int head_dim, int context,
                             KvType kv_type);

// Bytes per parameter of each weight type in the model file (the engine's type records; a mix
// at its typical share of Q6_K tensors).
double bytes_per_parameter(WeightType type);

// The type the drop dialog pre-selects: Q4_K_M above 1B parameters (a quarter of F16's bytes,
// so about 3x the decode speed, for a small loss), F16 (the same answers) for smaller models.
inline constexpr uint64_t kRecommendKQuantAbove = 1000000000;
WeightType recommended_weight_type(uint64_t n_params);

// A default file name for a converted model: "<folder or file name>-<type>.mgn" (a file's name
// without its .bin/.safetensors/.gguf extension), made file-system safe.
std::string converted_model_file_name(const std::string& source_path, const std::string& type_name);

}  // namespace magnetar::app
