// Drop classification, context fitting and speed/memory predictions (see chat_logic.h).
#include "chat_logic.h"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <system_error>

#include "text_util.h"

namespace magnetar::app {

namespace fs = std::filesystem;

namespace {

bool file_starts_with(const fs::path& path, const char* magic, size_t length) {
  // Read just the first bytes: the file may be many gigabytes.
#ifdef _WIN32
  FILE* file = _wfopen(path.c_str(), L"rb");
#else
  FILE* file = std::fopen(path.c_str(), "rb");
#endif
  if (!file) return false;
  char buffer[16] = {};
  const size_t n = std::fread(buffer, 1, length, file);
  std::fclose(file);
  return n == length && std::memcmp(buffer, magic, length) == 0;
}

DropTarget unsupported(const std::string& path, const std::string& why) {
  DropTarget target;
  target.kind = DropKind::Unsupported;
  target.path = path;
  target.message = why;
  return target;
}

}  // namespace

DropTarget classify_drop(const std::string& path) {
  std::error_code ec;
  const fs::path p = to_path(path);
  const fs::file_status status = fs::status(p, ec);
  if (ec || !fs::exists(status)) return unsupported(path, "'" + path + "' does not exist.");

  if (fs::is_directory(status)) {
    if (fs::is_regular_file(p / "config.json", ec))
      return DropTarget{DropKind::HuggingFaceFolder, path, ""};
    return unsupported(path, "The folder '" + from_path(p.filename()) +
                                 "' has no config.json, so it is not a Hugging Face model folder.");
  }
  if (!fs::is_regular_file(status)) return unsupported(path, "'" + path + "' is not a file or folder.");

  std::string extension = from_path(p.extension());
  for (char& c : extension) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  if (file_starts_with(p, "MAGNETAR", 8)) return DropTarget{DropKind::MagnetarModel, path, ""};
  // A file from inside a Hugging Face folder stands for the folder.
  const fs::path parent = p.parent_path();
  if ((extension == ".safetensors" || p.filename() == "config.json") &&
      fs::is_regular_file(parent / "config.json", ec))
    return DropTarget{DropKind::HuggingFaceFolder, from_path(parent), ""};
  if (extension == ".mgn")
    return unsupported(path, "'" + from_path(p.filename()) +
                                 "' is not a Magnetar model file (its header is missing or damaged).");
  if (extension == ".bin") return DropTarget{DropKind::Llama2cCheckpoint, path, ""};
  if (extension == ".gguf" || file_starts_with(p, "GGUF", 4)) return DropTarget{DropKind::GgufFile, path, ""};
  return unsupported(path, "'" + from_path(p.filename()) +
                               "' is not a model. Drop a Hugging Face folder (with config.json), a "
                               ".gguf file or a Magnetar .mgn file.");
}

int first_message_to_keep(const std::vector<Message>& messages,
                          const std::function<int(size_t first)>& tokens_from, int budget) {
  if (messages.empty()) return -1;
  size_t last_user = messages.size() - 1;
  while (last_user > 0 && messages[last_user].role != "user") --last_user;
  // Turn starts from oldest to newest; the first one that fits keeps the most history.
  for (size_t first = 0; first <= last_user; ++first) {
    if (first > 0 && messages[first].role != "user") continue;
    if (tokens_from(first) <= budget) return static_cast<int>(first);
  }
  return -1;
}

OverflowDecision decide_overflow(const std::vector<ChatMessage>& messages, OverflowPolicy policy,
                                 int budget,
                                 const std::function<int(const std::vector<ChatMessage>&)>& count_tokens) {
  OverflowDecision decision;
  if (policy == OverflowPolicy::Ask) return decision;
  // Leave out whole turns from the front; the system prompt always stays.
  const bool has_system = !messages.empty() && messages[0].role == "system";
  const size_t offset = has_system ? 1 : 0;
  std::vector<Message> turns;
  for (size_t i = offset; i < messages.size(); ++i) turns.push_back(Message{messages[i].role, messages[i].content, 0, {}});
  auto messages_from = [&](size_t first) {
    std::vector<ChatMessage> kept;
    if (has_system) kept.push_back(messages[0]);
    kept.insert(kept.end(), messages.begin() + static_cast<long>(offset + first), messages.end());
    return kept;
  };
  const int first = first_message_to_keep(turns, [&](size_t f) { return count_tokens(messages_from(f)); }, budget);
  if (first < 0) {
    decision.action = OverflowDecision::Action::TooLong;
    return decision;
  }
  decision.action = OverflowDecision::Action::SendTrimmed;
  decision.messages = messages_from(static_cast<size_t>(first));
  decision.left_out = first;
  return decision;
}

int reply_reserve_tokens(int context_length, int max_tokens) {
  // Room for a short answer at least; never more than a quarter of the window.
  int reserve = max_tokens < 64 ? max_tokens : 64;
  if (reserve > context_length / 4) reserve = context_length / 4;
  return reserve < 1 ? 1 : reserve;
}

double predicted_tokens_per_second(uint64_t bytes_per_token, double read_gbps) {
  if (bytes_per_token == 0 || read_gbps <= 0) return 0;
  return read_gbps * 1e9 / static_cast<double>(bytes_per_token);
}

uint64_t predicted_ram_bytes(uint64_t model_file_bytes, int n_layers, int n_kv_heads, int head_dim, int context,
                             KvType kv_type) {
  constexpr uint64_t kScratchBytes = 64ull << 20;
  return model_file_bytes + kv_cache_bytes(n_layers, n_kv_heads, head_dim, context, kv_type) + kScratchBytes;
}

double bytes_per_parameter(WeightType type) { return weight_type_bytes_per_parameter(type); }

WeightType recommended_weight_type(uint64_t n_params) {
  return n_params > kRecommendKQuantAbove ? WeightType::Q4_K_M : WeightType::F16;
}

std::string converted_model_file_name(const std::string& source_path, const std::string& type_name) {
  fs::path p = to_path(source_path);
  while (!p.empty() && p.filename().empty()) p = p.parent_path();  // trailing separator
  const std::string extension = from_path(p.extension());
  const bool checkpoint_file =
      !fs::is_directory(p) && (extension == ".bin" || extension == ".safetensors" || extension == ".gguf");
  std::string stem = from_path(checkpoint_file ? p.stem() : p.filename());
  for (char& c : stem) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '-' || c == '_' || c == '.' || u >= 0x80)) c = '_';
  }
  // Folders named only by their precision ("f32", "bf16"): the parent says which model it is.
  if (!checkpoint_file && stem.size() <= 5 && p.has_parent_path() && !p.parent_path().filename().empty())
    stem = from_path(p.parent_path().filename()) + "-" + stem;
  for (char& c : stem) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (!(std::isalnum(u) || c == '-' || c == '_' || c == '.' || u >= 0x80)) c = '_';
  }
  if (stem.empty()) stem = "model";
  return stem + "-" + type_name + ".mgn";
}

}  // namespace magnetar::app
