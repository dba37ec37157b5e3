// EngineBridge: the engine thread and the two channels to it.
//
//   UI thread --send(EngineCommand)--> command queue --> engine thread (runs one at a time)
//   UI thread <--poll(EngineEvent)--- event queue  <--- engine thread (tokens, progress, results)
//
// Both queues are SpscQueue (lock-free, fixed capacity). The engine thread sleeps on a condition
// variable while it has no command; the UI sleeps in glfwWaitEventsTimeout and is woken through
// the `wake` callback (glfwPostEmptyEvent) at most once per drain. Stopping is an atomic the
// engine checks between tokens and prefill batches, so it never waits behind queued events.
// Large, rare results (ModelInfo, a source's SourceSummary, the machine profile) go through a
// mutex-guarded mailbox.
#pragma once
#include <atomic>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

#include "core/engine_protocol.h"
#include "magnetar/system.h"
#include "magnetar/tuning.h"

namespace magnetar::app {

template <typename T>
class SpscQueue;

struct MachineProfile {
  bool ready = false;  // cpu and bandwidth measured
  CpuInfo cpu;
  BandwidthProfile bandwidth;
  double best_gbps = 0;
  // Decode tuning (magnetar/tuning.h): the one in effect, and the calibration's progress while it
  // runs (first start without a cached one, or Settings → Calibrate again).
  DecodeTuning tuning;
  bool calibrating = false;
  int calibration_done = 0, calibration_total = 0;
  std::string calibration_step;   // the candidate being measured
  std::string calibration_error;  // the last run's failure ("cancelled", ...), empty when none
  uint64_t generation = 0;        // bumped at every change: the UI copies it when it moves
};

class EngineBridge {
 public:
  // `wake` is called from the engine thread when events wait and the UI may be asleep.
  explicit EngineBridge(std::function<void()> wake);
  ~EngineBridge();  // cancels what runs, stops the thread
  EngineBridge(const EngineBridge&) = delete;
  EngineBridge& operator=(const EngineBridge&) = delete;

  // UI thread only. MeasureMachine runs on a thread of its own; machine_ready() says when
  // machine() holds the result.
  void send(EngineCommand command);
  void cancel(uint64_t request_id);  // stops that request if it runs or is queued
  bool poll(EngineEvent* out);
  std::optional<ModelInfo> take_model_info();
  std::optional<SourceSummary> take_source_summary();
  MachineProfile machine() const;
  bool machine_ready() const { return machine_ready_.load(); }
  uint64_t machine_generation() const { return machine_generation_.load(); }
  // Runs the decode calibration again (a few seconds, on a thread of its own) and caches and
  // applies its choice; models loaded afterwards use it. Ignored while one runs.
  void recalibrate();
  void cancel_calibration() { calibration_cancel_.store(true); }
  // True while the engine thread runs a command. When it is false, the events still queued are
  // the last of their command and the UI draws them without pacing.
  bool working() const { return working_.load(); }

 private:
  void run();  // the engine thread
  void execute(EngineCommand& command);
  void generate(EngineCommand& command);
  void load(const EngineCommand& command);
  void inspect(const EngineCommand& command);
  void convert(const EngineCommand& command);
  void measure_machine();
  void calibrate(bool use_cache);  // machine or calibration thread; needs calibrating_ claimed
  template <typename Edit>
  void update_machine(Edit&& edit);
  template <typename Fill>
  void emit(Fill&& fill);
  void emit_simple(EventKind kind, uint64_t request_id, std::string_view text = {},
                   int64_t done = 0, int64_t total = 0);

  std::function<void()> wake_;
  std::unique_ptr<SpscQueue<EngineCommand>> commands_;
  std::unique_ptr<SpscQueue<EngineEvent>> events_;
  std::mutex doorbell_mutex_;
  std::condition_variable doorbell_;
  std::atomic<bool> wake_pending_{false};
  std::atomic<bool> quitting_{false};
  std::atomic<bool> machine_ready_{false};
  std::atomic<uint64_t> machine_generation_{0};
  std::atomic<bool> calibrating_{false};
  std::atomic<bool> calibration_cancel_{false};
  std::atomic<bool> working_{false};

  // Cancellation: the UI raises cancel_upto_ and the flag; the engine re-arms the flag for
  // each request from cancel_upto_ (see EngineBridge::run in the .cpp for the ordering argument).
  std::atomic<uint64_t> cancel_upto_{0};
  std::atomic<bool> cancel_flag_{false};

  mutable std::mutex mailbox_mutex_;
  std::optional<ModelInfo> loaded_info_;
  std::optional<SourceSummary> inspected_;
  MachineProfile machine_;

  // Engine thread only.
  std::unique_ptr<Model> model_;
  std::unique_ptr<Session> session_;
  // The last inspected source's plan: converting that source right after reuses it instead of
  // reading and planning the folder or GGUF file again (convert_model replans if a file changed).
  PlannedSource planned_;
  std::thread thread_;
  // The bandwidth probe (seconds on first start, then cached) runs beside the engine thread so
  // it never delays loading a model.
  std::thread machine_thread_;
  std::thread calibration_thread_;  // UI thread only: Settings' re-runs
};

}  // namespace magnetar::app
