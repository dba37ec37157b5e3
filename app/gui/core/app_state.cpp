// AppState transitions: user actions produce engine commands; engine events update the chats
// (saved as they change) and the dashboard. See app_state.h.
#include "app_state.h"

#include <algorithm>

#include "text_util.h"

namespace magnetar::app {

const char* stop_reason_words(StopReason reason) {
  switch (reason) {
    case StopReason::EndOfGeneration: return "end of text";
    case StopReason::MaxTokens: return "token limit";
    case StopReason::Cancelled: return "stopped";
    case StopReason::ContextFull: return "context full";
    case StopReason::Error: return "error";
    case StopReason::None: break;
  }
  return "";
}

void AppState::post(Notice::Level level, std::string text, double now) {
  // The same message again (a second drop of the same folder): refresh it, do not stack it.
  if (!notices.empty() && notices.back().text == text && notices.back().level == level) {
    notices.back().time = now;
    return;
  }
  notices.push_back(Notice{level, std::move(text), now});
  constexpr size_t kMaxNotices = 50;
  if (notices.size() > kMaxNotices) notices.erase(notices.begin());
}

Status AppState::open_store(const std::string& directory) {
  Status status = store.open(directory);
  for (const std::string& problem : store.load_problems()) post(Notice::Level::Warning, problem, 0);
  if (status && !store.conversations().empty()) active_id = store.conversations().front().id;
  return status;
}

void AppState::save(const std::string& id, double now) {
  Status status = store.save(id);
  if (!status) post(Notice::Level::Error, status.message(), now);
}

Conversation* AppState::active() { return active_id.empty() ? nullptr : store.find(active_id); }

std::string AppState::new_conversation() {
  // An empty chat is already a new chat: do not pile up empty files.
  if (const Conversation* c = active(); c && c->messages.empty() && !(generation.active && generation.conversation_id == c->id))
    return active_id;
  active_id = store.create(model.present ? model.info.path : "", settings.system_prompt, settings.sampling);
  context_used = 0;
  return active_id;
}

void AppState::select(const std::string& id) {
  if (!store.find(id)) return;
  active_id = id;
  // The meter shows what the last answer in this chat left in the context.
  context_used = 0;
  const Conversation* c = store.find(id);
  for (auto it = c->messages.rbegin(); it != c->messages.rend(); ++it)
    if (it->stats.present) {
      context_used = it->stats.context_tokens;
      break;
    }
}

Status AppState::rename(const std::string& id, const std::string& title) {
  return store.rename(id, title);
}

Status AppState::remove(const std::string& id) {
  if (generation.active && generation.conversation_id == id) stop();
  MAGNETAR_TRY(store.remove(id));
  if (active_id == id) active_id = store.conversations().empty() ? "" : store.conversations().front().id;
  if (overflow && overflow->conversation_id == id) overflow.reset();
  return Status::ok();
}

bool AppState::send(const std::string& text, double now) {
  const std::string content = trim(text);
  if (content.empty()) return false;
  if (!model.present) {
    post(Notice::Level::Warning, "Load a model first: drop a model file or a Hugging Face folder "
                                 "onto the window.", now);
    return false;
  }
  if (busy()) {
    post(Notice::Level::Warning, "Wait for the current task to finish (or stop it) first.", now);
    return false;
  }
  if (!active()) new_conversation();
  Conversation& c = *active();
  if (c.messages.empty() && (c.title.empty() || c.title == "New chat")) c.title = title_from_text(content);
  if (c.model_path.empty()) c.model_path = model.info.path;
  c.messages.push_back(Message{"user", content, unix_now(), {}});
  return start_generation(c, OverflowPolicy::Ask, now);
}

bool AppState::regenerate(double now) {
  Conversation* c = active();
  if (!c || busy() || !model.present || c->messages.empty()) return false;
  if (c->messages.back().role == "assistant") c->messages.pop_back();
  if (c->messages.empty() || c->messages.back().role != "user") return false;
  return start_generation(*c, OverflowPolicy::Ask, now);
}

bool AppState::edit_and_resend(size_t message_index, const std::string& text, double now) {
  Conversation* c = active();
  const std::string content = trim(text);
  if (!c || busy() || !model.present || content.empty() || message_index >= c->messages.size() ||
      c->messages[message_index].role != "user")
    return false;
  c->messages.resize(message_index + 1);
  c->messages[message_index].content = content;
  return start_generation(*c, OverflowPolicy::Ask, now);
}

bool AppState::start_generation(Conversation& c, OverflowPolicy policy, double now) {
  EngineCommand& command = queue_command(EngineCommand::Kind::Generate);
  if (!c.system_prompt.empty()) command.messages.push_back(ChatMessage{"system", c.system_prompt});
  for (const Message& m : c.messages) command.messages.push_back(ChatMessage{m.role, m.content});
  const SamplingSettings& s = c.sampling;
  command.sampler.temperature = s.temperature;
  command.sampler.top_k = s.top_k;
  command.sampler.top_p = s.top_p;
  command.sampler.min_p = s.min_p;
  command.sampler.repeat_penalty = s.repeat_penalty;
  command.sampler.seed = s.seed != 0 ? s.seed : static_cast<uint64_t>(unix_now()) * 2654435761ull + command.request_id;
  command.max_tokens = s.max_tokens > 0 ? s.max_tokens : 512;
  command.threads = settings.threads;
  command.overflow = policy;

  c.messages.push_back(Message{"assistant", "", unix_now(), {}});
  generation = Generation{};
  generation.active = true;
  generation.request_id = outbox.back().request_id;
  generation.conversation_id = c.id;
  generation.message_index = c.messages.size() - 1;
  generation.started = generation.last_save = now;
  generation.prefilling = true;
  activity = EngineActivity::Generating;
  save(c.id, now);
  return true;
}

void AppState::stop() {
  if (generation.active) cancel_requests.push_back(generation.request_id);
}

void AppState::resolve_overflow(bool drop_oldest_turns, double now) {
  if (!overflow) return;
  const std::string id = overflow->conversation_id;
  overflow.reset();
  Conversation* c = store.find(id);
  if (!drop_oldest_turns || !c || busy() || c->messages.empty()) return;
  start_generation(*c, OverflowPolicy::DropOldest, now);
}

EngineCommand& AppState::queue_command(EngineCommand::Kind kind, const std::string& path) {
  EngineCommand& command = outbox.emplace_back();
  command.kind = kind;
  command.request_id = next_request_id_++;
  command.path = path;
  return command;
}

void AppState::request_inspect(const std::string& source) {
  inspection = SourceInspection{};
  inspection.active = true;
  inspection.request_id = queue_command(EngineCommand::Kind::Inspect, source).request_id;
  inspection.source = source;
}

void AppState::request_load(const std::string& model_path) {
  if (busy()) {
    post(Notice::Level::Warning, "Wait for the current task to finish (or stop it) first.", 0);
    return;
  }
  EngineCommand& command = queue_command(EngineCommand::Kind::Load, model_path);
  command.context_length = settings.context_length;
  command.threads = settings.threads;
  command.kv_type = settings.kv_type;
  load_job = JobProgress{};
  load_job.active = true;
  load_job.request_id = command.request_id;
  load_job.path = model_path;
  activity = EngineActivity::Loading;
}

void AppState::request_unload() {
  if (busy()) return;
  queue_command(EngineCommand::Kind::Unload);
}

void AppState::request_convert(const std::string& source, const std::string& out_path,
                               WeightType type, double now) {
  if (busy()) {
    post(Notice::Level::Warning, "Wait for the current task to finish (or stop it) first.", now);
    return;
  }
  EngineCommand& command = queue_command(EngineCommand::Kind::Convert, source);
  command.out_path = out_path;
  command.weight_type = type;
  convert_job = JobProgress{};
  convert_job.active = true;
  convert_job.request_id = command.request_id;
  convert_job.path = source;
  convert_job.out_path = out_path;
  convert_job.started = now;
  activity = EngineActivity::Converting;
}

void AppState::cancel_job() {
  if (convert_job.active) cancel_requests.push_back(convert_job.request_id);
  if (load_job.active) cancel_requests.push_back(load_job.request_id);
}

void AppState::finish_generation(StopReason stop, const GenerationStats& stats,
                                 const std::string& error, double now) {
  Conversation* c = store.find(generation.conversation_id);
  if (c && generation.message_index < c->messages.size()) {
    Message& m = c->messages[generation.message_index];
    if (m.content.empty()) {
      // Nothing was written: leave no empty answer behind.
      c->messages.erase(c->messages.begin() + static_cast<long>(generation.message_index));
    } else {
      MessageStats& s = m.stats;
      s.present = true;
      s.prompt_tokens = stats.n_prompt;
      s.generated_tokens = stats.n_generated;
      s.context_tokens = stats.n_context;
      s.prompt_tokens_per_second = stats.prompt_tokens_per_second;
      s.generate_tokens_per_second = stats.generate_tokens_per_second;
      s.time_to_first_token = stats.time_to_first_token;
      s.achieved_gbps = stats.achieved_gbps;
      s.threads = stats.threads;
      s.stop_reason = error.empty() ? stop_reason_words(stop) : "error";
      // A model that ends with trailing spaces or newlines: keep the message tidy.
      while (!m.content.empty() && (m.content.back() == ' ' || m.content.back() == '\n'))
        m.content.pop_back();
    }
    save(c->id, now);
  }
  if (generation.conversation_id == active_id && stats.n_context > 0) context_used = stats.n_context;
  if (stats.n_generated > 0 || stats.n_prompt > 0) last_stats = stats;  // the dashboard keeps the last real answer
  generation.active = false;
  activity = EngineActivity::Idle;
  if (!error.empty()) post(Notice::Level::Error, error, now);
  if (stop == StopReason::ContextFull)
    post(Notice::Level::Warning,
         "The context window is full, so the answer was cut here. Start a new chat, or send again "
         "and choose to leave out the oldest turns.", now);
}

void AppState::on_event(const EngineEvent& e, double now, const ModelInfo* info, const SourceSummary* source) {
  switch (e.kind) {
    case EventKind::LoadProgress:
      if (load_job.active && e.request_id == load_job.request_id) {
        load_job.done = static_cast<uint64_t>(e.done);
        load_job.total = static_cast<uint64_t>(e.total);
      }
      break;

    case EventKind::ModelLoaded: {
      load_job.active = false;
      activity = EngineActivity::Idle;
      if (!info) break;
      model = LoadedModel{true, from_path(to_path(info->path).filename()), *info, {}, {}};
      // "the model's own · Gemma", or the built-in one of models that ship none.
      model.chat_template = info->chat_template_origin == "model file"
                                ? std::string("the model's own")
                                : info->chat_template_origin;
      if (info->chat_template != ChatTemplate::None)
        model.chat_template += std::string(" · ") + chat_template_words(info->chat_template);
      if (!info->chat_template_error.empty()) model.chat_template += " (unusable)";
      model.chat_template_source = info->chat_template_error.empty()
                                       ? info->chat_template_source
                                       : info->chat_template_error + "\n\n" + info->chat_template_source;
      if (Conversation* c = active(); c && c->model_path.empty()) {
        c->model_path = model.info.path;
        save(c->id, now);
      }
      // The meter shows what the chat on screen will need (its last answer's context).
      if (active()) select(active_id);
      else context_used = 0;
      auto known = std::find(known_models.begin(), known_models.end(), model.info.path);
      if (known != known_models.end()) known_models.erase(known);
      known_models.insert(known_models.begin(), model.info.path);
      post(Notice::Level::Info, "Loaded " + model.name, now);
      break;
    }

    case EventKind::ModelUnloaded:
      model = LoadedModel{};
      context_used = 0;
      break;

    case EventKind::SourceInspected:
    case EventKind::InspectFailed:
      if (!inspection.active || e.request_id != inspection.request_id) break;  // a replaced one
      inspection.active = false;
      inspection.ok = e.kind == EventKind::SourceInspected && source;
      if (inspection.ok) inspection.summary = *source;
      else inspection.error = e.kind == EventKind::InspectFailed ? std::string(e.text_view()) : "no summary arrived";
      break;

    case EventKind::LoadFailed:
      load_job.active = false;
      activity = EngineActivity::Idle;
      model = LoadedModel{};  // the engine released the previous model before loading
      post(Notice::Level::Error, "Could not load the model: " + std::string(e.text_view()), now);
      break;

    case EventKind::ConvertProgress:
      if (convert_job.active && e.request_id == convert_job.request_id) {
        convert_job.done = static_cast<uint64_t>(e.done);
        convert_job.total = static_cast<uint64_t>(e.total);
        convert_job.stage.assign(e.text_view());
      }
      break;

    case EventKind::ConvertDone: {
      const std::string out = convert_job.out_path;
      convert_job.active = false;
      activity = EngineActivity::Idle;
      post(Notice::Level::Info, "Converted into " + from_path(to_path(out).filename()), now);
      request_load(out);
      break;
    }

    case EventKind::ConvertFailed:
      convert_job.active = false;
      activity = EngineActivity::Idle;
      post(Notice::Level::Error, "Conversion failed: " + std::string(e.text_view()), now);
      break;

    case EventKind::ContextOverflow: {
      if (!generation.active || e.request_id != generation.request_id) break;
      const std::string id = generation.conversation_id;
      finish_generation(StopReason::None, GenerationStats{}, "", now);  // removes the empty answer
      overflow = PendingOverflow{id, static_cast<int>(e.done), static_cast<int>(e.total)};
      break;
    }

    case EventKind::ContextTrimmed:
      if (generation.active && e.request_id == generation.request_id) {
        generation.dropped_messages = static_cast<int>(e.done);
        post(Notice::Level::Info,
             std::to_string(e.done) + " earlier messages were left out so the chat fits the context "
             "window (they stay in the chat).", now);
      }
      break;

    case EventKind::PrefillProgress:
      if (generation.active && e.request_id == generation.request_id) {
        generation.prefill_done = static_cast<int>(e.done);
        generation.prefill_total = static_cast<int>(e.total);
      }
      break;

    case EventKind::Token: {
      if (!generation.active || e.request_id != generation.request_id) break;
      generation.prefilling = false;
      generation.stats = e.stats;
      Conversation* c = store.find(generation.conversation_id);
      if (c && generation.message_index < c->messages.size()) {
        std::string& content = c->messages[generation.message_index].content;
        std::string_view piece = e.text_view();
        if (content.empty())  // the template's space before the answer is not part of it
          while (!piece.empty() && (piece.front() == ' ' || piece.front() == '\n')) piece.remove_prefix(1);
        content.append(piece);
        if (now - generation.last_save >= kSaveIntervalSeconds) {
          generation.last_save = now;
          save(c->id, now);
        }
      }
      // Bandwidth achieved = weight bytes read per token × tokens per second.
      if (generation.stats.achieved_gbps <= 0 && model.info.weight_bytes_per_token > 0)
        generation.stats.achieved_gbps = generation.stats.generate_tokens_per_second *
                                         static_cast<double>(model.info.weight_bytes_per_token) / 1e9;
      if (speed_history.empty() || now - speed_history.back().time >= 0.25) {
        speed_history.push_back(SpeedSample{now, static_cast<float>(generation.stats.generate_tokens_per_second),
                                            static_cast<float>(generation.stats.achieved_gbps)});
        while (!speed_history.empty() && now - speed_history.front().time > kHistorySeconds)
          speed_history.pop_front();
      }
      break;
    }

    case EventKind::GenerationDone:
      if (generation.active && e.request_id == generation.request_id)
        finish_generation(e.stop, e.stats, "", now);
      break;

    case EventKind::GenerationFailed:
      if (generation.active && e.request_id == generation.request_id)
        finish_generation(StopReason::Error, e.stats, std::string(e.text_view()), now);
      break;
  }
}

const char* architecture_name_words(Architecture arch) { return architecture_display_name(arch); }

const char* chat_template_words(ChatTemplate t) {
  switch (t) {
    case ChatTemplate::None: return "none (plain text)";
    case ChatTemplate::Llama2: return "Llama 2 chat";
    case ChatTemplate::Gemma: return "Gemma";
  }
  return "unknown";
}

}  // namespace magnetar::app
