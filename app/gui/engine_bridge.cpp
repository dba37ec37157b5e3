// EngineBridge: the engine thread's loop and its handling of each command (see engine_bridge.h).
#include "engine_bridge.h"

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "core/chat_logic.h"
#include "core/spsc_queue.h"
#include "core/text_util.h"

namespace magnetar::app {

namespace {
constexpr size_t kCommandCapacity = 64;
constexpr size_t kEventCapacity = 4096;
constexpr double kProgressIntervalSeconds = 0.03;

double seconds_now() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}
}  // namespace

EngineBridge::EngineBridge(std::function<void()> wake)
    : wake_(std::move(wake)),
      commands_(std::make_unique<SpscQueue<EngineCommand>>(kCommandCapacity)),
      events_(std::make_unique<SpscQueue<EngineEvent>>(kEventCapacity)) {
  thread_ = std::thread([this] { run(); });
}

EngineBridge::~EngineBridge() {
  quitting_.store(true);
  cancel_upto_.store(UINT64_MAX);
  cancel_flag_.store(true);
  EngineCommand quit;
  quit.kind = EngineCommand::Kind::Quit;
  while (!commands_->try_push(quit)) std::this_thread::yield();
  {
    std::lock_guard<std::mutex> lock(doorbell_mutex_);
  }
  doorbell_.notify_one();
  thread_.join();
  calibration_cancel_.store(true);
  if (machine_thread_.joinable()) machine_thread_.join();
  if (calibration_thread_.joinable()) calibration_thread_.join();
}

void EngineBridge::send(EngineCommand command) {
  // Commands are few (one per click); a full queue means the engine is far behind: wait.
  while (!commands_->try_push(std::move(command))) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    std::lock_guard<std::mutex> lock(doorbell_mutex_);
  }
  doorbell_.notify_one();
}

void EngineBridge::cancel(uint64_t request_id) {
  uint64_t current = cancel_upto_.load();
  while (current < request_id && !cancel_upto_.compare_exchange_weak(current, request_id)) {
  }
  cancel_flag_.store(true);
}

bool EngineBridge::poll(EngineEvent* out) {
  if (events_->try_pop(out)) return true;
  // Re-arm the wake-up, then look once more: an event pushed between the failed pop and the
  // store would otherwise wait for the next timeout.
  wake_pending_.store(false);
  return events_->try_pop(out);
}

std::optional<ModelInfo> EngineBridge::take_model_info() {
  std::lock_guard<std::mutex> lock(mailbox_mutex_);
  std::optional<ModelInfo> info = std::move(loaded_info_);
  loaded_info_.reset();
  return info;
}

std::optional<SourceSummary> EngineBridge::take_source_summary() {
  std::lock_guard<std::mutex> lock(mailbox_mutex_);
  std::optional<SourceSummary> summary = std::move(inspected_);
  inspected_.reset();
  return summary;
}

MachineProfile EngineBridge::machine() const {
  std::lock_guard<std::mutex> lock(mailbox_mutex_);
  return machine_;
}

template <typename Fill>
void EngineBridge::emit(Fill&& fill) {
  while (!events_->emplace_with(fill)) {
    if (quitting_.load(std::memory_order_relaxed)) return;  // nobody drains any more
    wake_();
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  if (!wake_pending_.exchange(true)) wake_();
}

void EngineBridge::emit_simple(EventKind kind, uint64_t request_id, std::string_view text,
                               int64_t done, int64_t total) {
  emit([&](EngineEvent& e) {
    e.kind = kind;
    e.request_id = request_id;
    e.stop = StopReason::None;
    e.done = done;
    e.total = total;
    e.seconds = 0;
    e.stats = GenerationStats{};
    e.set_text(text);
  });
}

void EngineBridge::run() {
  for (;;) {
    EngineCommand command;
    if (!commands_->try_pop(&command)) {
      std::unique_lock<std::mutex> lock(doorbell_mutex_);
      doorbell_.wait(lock, [&] { return !commands_->empty_approx(); });
      continue;
    }
    if (command.kind == EngineCommand::Kind::Quit) break;
    // Re-arm cancellation for this request. Order matters: clear the flag first, then read
    // cancel_upto_; a cancel() racing with us either sets the flag after our clear or has
    // already raised cancel_upto_ (sequentially consistent), so it is never lost.
    cancel_flag_.store(false);
    if (cancel_upto_.load() >= command.request_id) cancel_flag_.store(true);
    working_.store(true);
    execute(command);
    working_.store(false);
    wake_();  // the UI may be pacing this command's last events: they can be drawn now
  }
  session_.reset();
  model_.reset();
}

void EngineBridge::execute(EngineCommand& command) {
  switch (command.kind) {
    case EngineCommand::Kind::MeasureMachine:
      if (!machine_thread_.joinable()) machine_thread_ = std::thread([this] { measure_machine(); });
      break;
    case EngineCommand::Kind::Load: load(command); break;
    case EngineCommand::Kind::Unload:
      session_.reset();
      model_.reset();
      emit_simple(EventKind::ModelUnloaded, command.request_id);
      break;
    case EngineCommand::Kind::Inspect: inspect(command); break;
    case EngineCommand::Kind::Convert: convert(command); break;
    case EngineCommand::Kind::Generate: generate(command); break;
    case EngineCommand::Kind::Quit: break;
  }
}

// Not events: the event queue has exactly one producer, the engine thread.
template <typename Edit>
void EngineBridge::update_machine(Edit&& edit) {
  {
    std::lock_guard<std::mutex> lock(mailbox_mutex_);
    edit(machine_);
    machine_.generation = machine_generation_.load() + 1;
    machine_generation_.store(machine_.generation);
  }
  wake_();
}

void EngineBridge::measure_machine() {
  const BandwidthProfile bandwidth = cached_read_bandwidth();
  update_machine([&](MachineProfile& m) {
    m.cpu = cpu_info();
    m.bandwidth = bandwidth;
    m.best_gbps = bandwidth.best_gbps();
    m.ready = true;
  });
  machine_ready_.store(true);
  // Then the decode tuning: cached, or measured now (first start).
  if (!calibrating_.exchange(true)) calibrate(/*use_cache=*/true);
}

void EngineBridge::calibrate(bool use_cache) {
  DecodeTuning tuning;
  // Cached, or switched off (MAGNETAR_TUNING=off): no measuring on the user's behalf.
  if (use_cache && (read_cached_decode_tuning(&tuning) || !decode_tuning_enabled())) {
    apply_decode_tuning(tuning);
    update_machine([&](MachineProfile& m) { m.tuning = tuning; });
    calibrating_.store(false);
    return;
  }
  calibration_cancel_.store(quitting_.load());
  update_machine([&](MachineProfile& m) {
    m.calibrating = true;
    m.calibration_done = 0;
    m.calibration_error.clear();
  });
  CalibrationOptions options;
  options.cancel = &calibration_cancel_;
  options.on_progress = [&](int done, int total, const std::string& step) {
    update_machine([&](MachineProfile& m) {
      m.calibration_done = done;
      m.calibration_total = total;
      m.calibration_step = step;
    });
  };
  const Status status = calibrate_and_cache_decode_tuning(options, &tuning);
  const bool measured = tuning.measured();  // an unwritable cache still leaves a usable choice
  if (measured) apply_decode_tuning(tuning);
  update_machine([&](MachineProfile& m) {
    m.calibrating = false;
    if (measured) m.tuning = tuning;
    m.calibration_error = status ? "" : status.message();
  });
  calibrating_.store(false);
}

void EngineBridge::recalibrate() {
  if (calibrating_.exchange(true)) return;
  if (calibration_thread_.joinable()) calibration_thread_.join();  // the last re-run, finished
  calibration_thread_ = std::thread([this] { calibrate(/*use_cache=*/false); });
}

void EngineBridge::load(const EngineCommand& command) {
  // Free the old model first: two large models at once may not fit in memory.
  if (model_) {
    session_.reset();
    model_.reset();
    emit_simple(EventKind::ModelUnloaded, command.request_id);
  }
  LoadOptions options;
  options.context_length = command.context_length;
  options.threads = command.threads;
  options.kv_type = command.kv_type;
  options.cancel = &cancel_flag_;
  double last_progress = 0;
  options.on_progress = [&](uint64_t done, uint64_t total) {
    const double now = seconds_now();
    if (now - last_progress < kProgressIntervalSeconds && done < total) return;
    last_progress = now;
    emit_simple(EventKind::LoadProgress, command.request_id, {}, static_cast<int64_t>(done),
                static_cast<int64_t>(total));
  };
  std::unique_ptr<Model> model;
  Status status = Model::load(command.path, options, &model);
  std::unique_ptr<Session> session;
  if (status) status = Session::create(*model, &session);
  if (!status) {
    emit_simple(EventKind::LoadFailed, command.request_id, status.message());
    return;
  }
  model_ = std::move(model);
  session_ = std::move(session);
  {
    std::lock_guard<std::mutex> lock(mailbox_mutex_);
    loaded_info_ = model_->info();
  }
  emit_simple(EventKind::ModelLoaded, command.request_id);
}

void EngineBridge::inspect(const EngineCommand& command) {
  // Reads config.json and the tensor headers: milliseconds to a second.
  SourceSummary summary;
  if (Status status = inspect_source(command.path, &summary, &planned_); !status) {
    emit_simple(EventKind::InspectFailed, command.request_id, status.message());
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mailbox_mutex_);
    inspected_ = std::move(summary);
  }
  emit_simple(EventKind::SourceInspected, command.request_id);
}

void EngineBridge::convert(const EngineCommand& command) {
  std::error_code ec;
  std::filesystem::create_directories(to_path(command.out_path).parent_path(), ec);
  ConvertOptions options;
  options.weight_type = command.weight_type;
  options.cancel = &cancel_flag_;
  double last_progress = 0;
  options.on_progress = [&](const ConvertProgress& p) {
    const double now = seconds_now();
    if (now - last_progress < kProgressIntervalSeconds && p.bytes_done < p.bytes_total) return;
    last_progress = now;
    emit_simple(EventKind::ConvertProgress, command.request_id, p.stage,
                static_cast<int64_t>(p.bytes_done), static_cast<int64_t>(p.bytes_total));
  };
  const double started = seconds_now();
  // The drop dialog inspected this source just before: its plan is reused once.
  PlannedSource planned = std::move(planned_);
  planned_ = PlannedSource{};
  Status status = planned.source_path == command.path ? convert_model(planned, command.out_path, options)
                                                      : convert_model(command.path, command.out_path, options);
  if (!status) {
    emit_simple(EventKind::ConvertFailed, command.request_id,
                cancel_flag_.load() ? std::string("cancelled") : status.message());
    return;
  }
  const double seconds = seconds_now() - started;
  emit([&](EngineEvent& e) {
    e.kind = EventKind::ConvertDone;
    e.request_id = command.request_id;
    e.seconds = seconds;
    e.set_text({});
  });
}

void EngineBridge::generate(EngineCommand& command) {
  const uint64_t id = command.request_id;
  if (!session_) {
    emit_simple(EventKind::GenerationFailed, id, "No model is loaded.");
    return;
  }
  if (command.threads != model_->threads() && command.threads > 0) model_->set_threads(command.threads);

  // A message with more bytes than the whole context can hold as tokens is refused before any
  // tokenizer work (a pasted multi-megabyte text would otherwise cost hundreds of MB to tokenize,
  // on every turn it stays in the chat).
  const uint64_t max_message_bytes =
      uint64_t(model_->info().context_length) * uint64_t(model_->info().max_piece_bytes);
  for (const ChatMessage& m : command.messages)
    if (m.content.size() > max_message_bytes) {
      emit_simple(EventKind::GenerationFailed, id,
                  "A message of " + std::to_string(m.content.size()) + " bytes does not fit in the " +
                      std::to_string(model_->info().context_length) +
                      "-token context window. Shorten or delete it, or raise the context length in "
                      "Settings.");
      return;
    }

  std::vector<int> prompt;
  Status status = model_->apply_chat_template(command.messages, true, &prompt);
  if (!status) {
    emit_simple(EventKind::GenerationFailed, id, status.message());
    return;
  }
  const int context = model_->info().context_length;
  const int reserve = reply_reserve_tokens(context, command.max_tokens);
  if (static_cast<int>(prompt.size()) + reserve > context) {
    const OverflowDecision decision = decide_overflow(
        command.messages, command.overflow, context - reserve, [&](const std::vector<ChatMessage>& messages) {
          std::vector<int> tokens;
          return model_->apply_chat_template(messages, true, &tokens) ? static_cast<int>(tokens.size()) : context + 1;
        });
    switch (decision.action) {
      case OverflowDecision::Action::Ask:
        emit_simple(EventKind::ContextOverflow, id, {}, static_cast<int64_t>(prompt.size()) + reserve, context);
        return;
      case OverflowDecision::Action::TooLong:
        emit_simple(EventKind::GenerationFailed, id,
                    "The last message alone does not fit in the context window (" + std::to_string(context) +
                        " tokens). Shorten it, or raise the context length in Settings.");
        return;
      case OverflowDecision::Action::SendTrimmed:
        status = model_->apply_chat_template(decision.messages, true, &prompt);
        if (!status) {
          emit_simple(EventKind::GenerationFailed, id, status.message());
          return;
        }
        emit_simple(EventKind::ContextTrimmed, id, {}, decision.left_out, 0);
        break;
    }
  }

  // Reuse the cached prefix (the previous turns of this chat): only the new tokens are prefilled.
  size_t common = static_cast<size_t>(session_->matching_prefix(prompt));
  if (common == prompt.size() && common > 0) --common;  // at least one token must be fed
  session_->truncate(static_cast<int>(common));

  GenerateRequest request;
  request.prompt.assign(prompt.begin() + static_cast<long>(common), prompt.end());
  request.max_tokens = std::max(1, std::min(command.max_tokens, context - static_cast<int>(prompt.size())));
  request.sampler = command.sampler;
  request.cancel = &cancel_flag_;
  request.on_prefill = [&](int done, int total) {
    emit_simple(EventKind::PrefillProgress, id, {}, done, total);
  };
  request.on_token = [&](const TokenEvent& token) {
    std::string_view piece = token.piece;
    do {  // pieces longer than the inline buffer travel as several events
      const std::string_view chunk = piece.substr(0, kEventTextBytes);
      piece.remove_prefix(chunk.size());
      emit([&](EngineEvent& e) {
        e.kind = EventKind::Token;
        e.request_id = id;
        e.stop = StopReason::None;
        e.stats = token.stats ? *token.stats : GenerationStats{};
        e.set_text(chunk);
      });
    } while (!piece.empty());
    return !cancel_flag_.load(std::memory_order_relaxed);
  };
  GenerateResult result;
  status = session_->generate(request, &result);
  if (!status) {
    emit([&](EngineEvent& e) {
      e.kind = EventKind::GenerationFailed;
      e.request_id = id;
      e.stats = result.stats;
      e.set_text(status.message());
    });
    return;
  }
  emit([&](EngineEvent& e) {
    e.kind = EventKind::GenerationDone;
    e.request_id = id;
    e.stop = cancel_flag_.load() && result.stop != StopReason::EndOfGeneration ? StopReason::Cancelled
                                                                                 : result.stop;
    e.stats = result.stats;
    e.set_text({});
  });
}

}  // namespace magnetar::app
