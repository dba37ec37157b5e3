// AppState: everything the desktop app knows, as plain data, and every transition of it.
// Panels read it and call its actions; engine events are applied with on_event(). It owns no
// window and no thread: commands for the engine collect in `outbox` and the frame loop hands
// them to the EngineBridge, so tests drive the whole UI logic with function calls.
#pragma once
#include <cstdint>
#include <deque>
#include <optional>
#include <string>
#include <vector>

#include "chat_logic.h"
#include "conversation_store.h"
#include "engine_protocol.h"

namespace magnetar::app {

enum class EngineActivity { Idle, Loading, Converting, Generating };

// The loaded model: the engine's ModelInfo as it arrived, and its file name for titles.
struct LoadedModel {
  bool present = false;
  std::string name;
  ModelInfo info;
  std::string chat_template;         // for the model panel: "the model's own · Gemma", "built-in"
  std::string chat_template_source;  // the Jinja text (after the error, if unusable), on request
};

struct Notice {
  enum class Level { Info, Warning, Error } level = Level::Info;
  std::string text;
  double time = 0;  // when it was posted (seconds, the caller's clock)
};

// A prompt that did not fit: the user chooses to drop the oldest turns or to stop.
struct PendingOverflow {
  std::string conversation_id;
  int needed = 0, available = 0;
};

struct JobProgress {
  bool active = false;
  uint64_t request_id = 0;
  std::string path;       // model file (load) or source (convert)
  std::string out_path;   // convert: the file being written
  uint64_t done = 0, total = 0;
  std::string stage;
  double started = 0;
};

// A look at a dropped folder or checkpoint before converting it (EngineCommand::Inspect): what it
// holds and what each weight type would cost. Read by the drop dialog.
struct SourceInspection {
  bool active = false;  // waiting for the engine thread
  uint64_t request_id = 0;
  std::string source;
  bool ok = false;
  std::string error;  // when !ok
  SourceSummary summary;
};

struct SpeedSample {
  double time = 0;
  float tokens_per_second = 0;
  float gbps = 0;
};

struct Settings {
  int threads = 0;          // 0 = automatic
  int context_length = 0;   // 0 = the model's maximum
  KvType kv_type = KvType::F32;  // the KV cache's element type; applies at the next load
  SamplingSettings sampling;  // defaults for new chats
  std::string system_prompt;  // default for new chats
};

class AppState {
 public:
  ConversationStore store;
  Settings settings;
  std::string active_id;  // the chat on screen ("" = none)
  LoadedModel model;
  EngineActivity activity = EngineActivity::Idle;

  JobProgress load_job, convert_job;
  SourceInspection inspection;
  std::optional<PendingOverflow> overflow;
  std::vector<Notice> notices;
  std::vector<EngineCommand> outbox;
  std::vector<uint64_t> cancel_requests;  // request ids to stop (the bridge sets its atomic)
  std::vector<std::string> known_models;  // model files loaded before, most recent first

  // Generation in flight.
  struct Generation {
    bool active = false;
    uint64_t request_id = 0;
    std::string conversation_id;
    size_t message_index = 0;  // the assistant message being written
    double started = 0, last_save = 0;
    bool prefilling = false;
    int prefill_done = 0, prefill_total = 0;
    GenerationStats stats;     // running
    int dropped_messages = 0;  // turns left out to fit the context
  } generation;

  // Dashboard: samples over the last minute, plus the last answer's statistics.
  std::deque<SpeedSample> speed_history;
  GenerationStats last_stats;
  int context_used = 0;  // tokens in the KV cache after the last answer in the active chat

  // ---- setup ----
  Status open_store(const std::string& directory);  // load problems become notices

  // ---- chats ----
  Conversation* active();
  std::string new_conversation();
  void select(const std::string& id);
  Status rename(const std::string& id, const std::string& title);
  Status remove(const std::string& id);
  // Sends a user message in the active chat (creating one if none). False (with a notice)
  // when it cannot: no model, empty text, or the engine is busy.
  bool send(const std::string& text, double now);
  bool regenerate(double now);                                    // redo the last answer
  bool edit_and_resend(size_t message_index, const std::string& text, double now);
  void stop();
  // The user's answer to PendingOverflow.
  void resolve_overflow(bool drop_oldest_turns, double now);

  // ---- models ----
  void request_load(const std::string& model_path);
  void request_unload();
  void request_inspect(const std::string& source);  // replaces any inspection in flight
  void request_convert(const std::string& source, const std::string& out_path, WeightType type,
                       double now);
  void cancel_job();
  bool busy() const { return activity != EngineActivity::Idle; }

  // ---- engine events ----
  // `model_info` is the mailbox's ModelInfo for ModelLoaded, `source` its SourceSummary for
  // SourceInspected (nullptr otherwise).
  void on_event(const EngineEvent& event, double now, const ModelInfo* model_info = nullptr,
                const SourceSummary* source = nullptr);

  void post(Notice::Level level, std::string text, double now);

  static constexpr double kSaveIntervalSeconds = 1.0;     // while streaming
  static constexpr double kHistorySeconds = 60.0;

 private:
  // Appends a command with the next request id to the outbox (valid until the next append).
  EngineCommand& queue_command(EngineCommand::Kind kind, const std::string& path = {});
  bool start_generation(Conversation& conversation, OverflowPolicy policy, double now);
  void finish_generation(StopReason stop, const GenerationStats& stats, const std::string& error,
                         double now);
  void save(const std::string& id, double now);
  uint64_t next_request_id_ = 1;
};

// Words for the user: "end of text", "stopped", ...
const char* stop_reason_words(StopReason reason);
const char* architecture_name_words(Architecture arch);
const char* chat_template_words(ChatTemplate t);

}  // namespace magnetar::app
