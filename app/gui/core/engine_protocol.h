// The messages between the UI thread and the engine thread.
//
//   EngineCommand: UI -> engine (load, unload, inspect, convert, generate, measure). Rare, so it may own
//                  strings and vectors.
//   EngineEvent:   engine -> UI (tokens, progress, results, errors). Frequent during
//                  generation, so it is a plain fixed-size struct: token text travels in an
//                  inline buffer and a long piece is split over several events. Nothing is
//                  allocated per event.
// Stop/cancel does not travel through the queue: it is an atomic the engine checks between
// tokens (see EngineBridge::cancel).
#pragma once
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "chat_logic.h"  // OverflowPolicy
#include "magnetar/convert.h"
#include "magnetar/engine.h"

namespace magnetar::app {

struct EngineCommand {
  enum class Kind : uint8_t { MeasureMachine, Load, Unload, Inspect, Convert, Generate, Quit };  // one at a time
  Kind kind = Kind::Quit;
  uint64_t request_id = 0;
  // Load / Inspect / Convert
  std::string path;      // model file (Load) or source folder/checkpoint (Inspect, Convert)
  std::string out_path;  // Convert: the model file to write
  WeightType weight_type = WeightType::F16;
  int context_length = 0;  // Load: 0 = the model's maximum
  KvType kv_type = KvType::F32;  // Load: the KV cache's element type
  int threads = 0;         // Load/Generate: 0 = automatic
  // Generate
  std::vector<ChatMessage> messages;  // system prompt first (if any), ends with a user message
  SamplerParams sampler;
  int max_tokens = 512;
  OverflowPolicy overflow = OverflowPolicy::Ask;
};

enum class EventKind : uint8_t {
  LoadProgress,       // done/total bytes
  ModelLoaded,        // ModelInfo is in the mailbox
  ModelUnloaded,
  SourceInspected,    // the SourceSummary is in the mailbox
  InspectFailed,      // text = message
  LoadFailed,         // text = message
  ConvertProgress,    // done/total source bytes, text = stage
  ConvertDone,        // seconds = conversion time
  ConvertFailed,      // text = message (also on cancel)
  ContextOverflow,    // done = prompt tokens needed, total = context length
  ContextTrimmed,     // done = messages left out at the front (after the system prompt)
  PrefillProgress,    // done/total prompt tokens
  Token,              // text = (part of) the piece, stats = running statistics
  GenerationDone,     // stats final, stop = StopReason
  GenerationFailed,   // text = message
};

inline constexpr size_t kEventTextBytes = 480;

struct EngineEvent {
  EventKind kind = EventKind::Token;
  StopReason stop = StopReason::None;
  uint32_t text_length = 0;
  uint64_t request_id = 0;
  int64_t done = 0, total = 0;
  double seconds = 0;
  GenerationStats stats;
  char text[kEventTextBytes];  // not NUL-terminated; text_length bytes are valid

  std::string_view text_view() const { return {text, text_length}; }
  // Copies at most kEventTextBytes (callers split longer token pieces; messages are cut).
  void set_text(std::string_view s) {
    text_length = static_cast<uint32_t>(s.size() < kEventTextBytes ? s.size() : kEventTextBytes);
    if (text_length > 0) std::memcpy(text, s.data(), text_length);  // an empty view may be null
  }
};

}  // namespace magnetar::app
