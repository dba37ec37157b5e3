// Frame pacing, frame statistics and the IME Enter guard (see frame_pacing.h).
#include "frame_pacing.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

#ifdef _WIN32
#include <windows.h>
#else
#include <time.h>
#endif

namespace magnetar::app {

double thread_cpu_seconds() {
#ifdef _WIN32
  FILETIME created, exited, kernel, user;
  if (!GetThreadTimes(GetCurrentThread(), &created, &exited, &kernel, &user)) return 0;
  auto ticks = [](const FILETIME& t) { return (uint64_t(t.dwHighDateTime) << 32) | t.dwLowDateTime; };
  return static_cast<double>(ticks(kernel) + ticks(user)) * 1e-7;  // 100 ns units
#else
  timespec t{};
  if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t) != 0) return 0;
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
#endif
}

// ---- FramePacer ----

void FramePacer::record(double frame_cpu_seconds) {
  recent_[count_ % kRecentFrames] = std::max(0.0, frame_cpu_seconds);
  ++count_;
}

double FramePacer::busy_interval() const {
  const size_t n = std::min(count_, kRecentFrames);
  double total = 0;
  for (size_t i = 0; i < n; ++i) total += recent_[i];
  const double cost = n > 0 ? total / static_cast<double>(n) : 0;
  return std::clamp(cost / kBusyCpuShare, kFastestSeconds, kSlowestBusySeconds);
}

double FramePacer::due(const FrameTriggers& t, bool engine_busy, double last_frame) const {
  if (t.input || t.settling) return last_frame + kFastestSeconds;
  if (t.pointer) return last_frame + (engine_busy ? kPointerBusySeconds : kFastestSeconds);
  if (t.engine) return last_frame + (engine_busy ? busy_interval() : kFastestSeconds);
  if (t.polling) return last_frame + kPollSeconds;
  // Clock-only changes (caret blink, toasts, the "writing" pulse) never outpace the pacing.
  return last_frame + (engine_busy ? std::max(kIdleSeconds, busy_interval()) : kIdleSeconds);
}

// ---- FrameRecorder ----

void FrameRecorder::begin(double wall_now, double cpu_now) {
  active_ = true;
  wall_start_ = wall_now;
  cpu_start_ = cpu_now;
  cpu_ms_.clear();
  wall_ms_.clear();
}

void FrameRecorder::add(double frame_cpu_seconds, double frame_wall_seconds) {
  if (!active_) return;
  cpu_ms_.push_back(static_cast<float>(frame_cpu_seconds * 1000.0));
  wall_ms_.push_back(static_cast<float>(frame_wall_seconds * 1000.0));
}

FrameTimeSummary FrameRecorder::finish(double wall_now, double cpu_now) {
  FrameTimeSummary s;
  if (!active_) return s;
  active_ = false;
  s.frames = static_cast<int>(cpu_ms_.size());
  s.seconds = std::max(0.0, wall_now - wall_start_);
  s.ui_cpu_seconds = std::max(0.0, cpu_now - cpu_start_);
  s.cpu_p50_ms = percentile(cpu_ms_, 50);
  s.cpu_p95_ms = percentile(cpu_ms_, 95);
  s.cpu_max_ms = percentile(cpu_ms_, 100);
  s.wall_p50_ms = percentile(wall_ms_, 50);
  s.wall_p95_ms = percentile(wall_ms_, 95);
  s.wall_max_ms = percentile(wall_ms_, 100);
  return s;
}

double percentile(std::vector<float> values, double p) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const double rank = std::ceil(std::clamp(p, 0.0, 100.0) / 100.0 * static_cast<double>(values.size()));
  const size_t index = rank < 1 ? 0 : static_cast<size_t>(rank) - 1;
  return values[std::min(index, values.size() - 1)];
}

std::string frame_summary_json(const FrameTimeSummary& s, double tokens_per_second, int tokens) {
  char line[512];
  std::snprintf(line, sizeof line,
                "{\"frames\":%d,\"seconds\":%.3f,\"fps\":%.2f,\"ui_cpu_seconds\":%.4f,"
                "\"ui_cpu_share\":%.4f,\"cpu_ms\":{\"p50\":%.2f,\"p95\":%.2f,\"max\":%.2f},"
                "\"wall_ms\":{\"p50\":%.2f,\"p95\":%.2f,\"max\":%.2f},"
                "\"generate_tokens_per_second\":%.3f,\"tokens\":%d}",
                s.frames, s.seconds, s.frames_per_second(), s.ui_cpu_seconds, s.ui_cpu_share(),
                s.cpu_p50_ms, s.cpu_p95_ms, s.cpu_max_ms, s.wall_p50_ms, s.wall_p95_ms, s.wall_max_ms,
                tokens_per_second, tokens);
  return line;
}

std::string format_frame_summary(const FrameTimeSummary& s) {
  char line[200];
  std::snprintf(line, sizeof line, "%d frames · %.1f fps · CPU p50 %.1f ms, p95 %.1f ms · UI %.1f%% of a core",
                s.frames, s.frames_per_second(), s.cpu_p50_ms, s.cpu_p95_ms, 100.0 * s.ui_cpu_share());
  return line;
}

// ---- ImeGuard ----

void ImeGuard::on_key_press(bool printable, bool escape) {
  if (escape) {  // cancels a composition (the input method takes the Esc)
    composing_ = awaiting_char_ = false;
    return;
  }
  if (awaiting_char_) composing_ = true;  // the previous printable key typed nothing
  awaiting_char_ = printable;
}

void ImeGuard::on_char() { composing_ = awaiting_char_ = false; }

bool ImeGuard::on_enter() {
  const bool confirms = composing();
  composing_ = awaiting_char_ = false;
  return !confirms;
}

}  // namespace magnetar::app
