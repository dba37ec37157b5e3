// Frame pacing for the desktop app's loop, and what its frames cost while the engine generates.
//
//   FramePacer       when the next frame is due: at once after input, paced by the measured
//                    CPU cost of recent frames while the engine works, rarely when nothing moves.
//   FrameRecorder    the frames drawn during one generation: count, CPU and wall percentiles,
//                    and the UI thread's whole CPU share (frames, event handling and waits).
//   ImeGuard         whether an Enter confirms an input-method composition instead of sending.
//   thread_cpu_seconds()  the calling thread's CPU time: a frame's cost, not its wall time,
//                    which a busy machine inflates with waiting for a core.
// Plain logic apart from the clock; the frame loop feeds it (gui_app.cpp), tests drive it.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

namespace magnetar::app {

// CPU seconds used by the calling thread so far (CLOCK_THREAD_CPUTIME_ID; GetThreadTimes on
// Windows, which counts in scheduler ticks: exact over many frames, coarse for one).
double thread_cpu_seconds();

// Why the loop might draw a frame now.
struct FrameTriggers {
  bool input = false;     // keys, characters, clicks, scrolling, window events: answered at once
  bool pointer = false;   // the mouse only moved (hover feedback)
  bool settling = false;  // ImGui needs a frame or two after input to settle hover/key states
  bool engine = false;    // engine events wait in the queue
  bool polling = false;   // a background result (the drop inspection) is awaited
};

class FramePacer {
 public:
  static constexpr double kFastestSeconds = 1.0 / 60.0;
  // While the engine works, frames may use this share of one core: every millisecond the UI
  // takes is a millisecond a generation thread waits for (and its partners at the barrier).
  static constexpr double kBusyCpuShare = 0.02;
  // Software OpenGL frames cost ~20 ms: at most one a second then, and the text still moves.
  static constexpr double kSlowestBusySeconds = 1.0;
  static constexpr double kIdleSeconds = 0.5;         // caret blink, toasts, the "writing" pulse
  static constexpr double kPollSeconds = 0.1;
  // Hover feedback while the engine works: 10 frames a second is still immediate to the eye.
  static constexpr double kPointerBusySeconds = 0.1;
  // The cost is the mean over this many frames: steady against one odd frame, and right on
  // Windows too, whose thread clock advances in scheduler ticks (~15.6 ms), not per frame.
  static constexpr size_t kRecentFrames = 16;

  void record(double frame_cpu_seconds);  // after each frame
  // Seconds between frames that show engine progress while the engine works.
  double busy_interval() const;
  // When the next frame is due (the caller's clock), given the last frame's start.
  double due(const FrameTriggers& triggers, bool engine_busy, double last_frame) const;

 private:
  double recent_[kRecentFrames] = {};
  size_t count_ = 0;
};

struct FrameTimeSummary {
  int frames = 0;
  double seconds = 0;      // wall time covered (the generation)
  double ui_cpu_seconds = 0;  // the UI thread's CPU over that time, frames and all
  double cpu_p50_ms = 0, cpu_p95_ms = 0, cpu_max_ms = 0;    // per frame, UI thread CPU
  double wall_p50_ms = 0, wall_p95_ms = 0, wall_max_ms = 0;  // per frame, wall clock
  double frames_per_second() const { return seconds > 0 ? frames / seconds : 0; }
  double ui_cpu_share() const { return seconds > 0 ? ui_cpu_seconds / seconds : 0; }  // of one core
};

class FrameRecorder {
 public:
  void begin(double wall_now, double cpu_now);
  bool active() const { return active_; }
  void add(double frame_cpu_seconds, double frame_wall_seconds);
  FrameTimeSummary finish(double wall_now, double cpu_now);

 private:
  bool active_ = false;
  double wall_start_ = 0, cpu_start_ = 0;
  std::vector<float> cpu_ms_, wall_ms_;
};

// Nearest-rank percentile (p in [0, 100]) of `values` (sorted here); 0 when empty.
double percentile(std::vector<float> values, double p);
// One JSON object on one line, for MAGNETAR_FRAME_STATS logs and the benchmark.
std::string frame_summary_json(const FrameTimeSummary& summary, double generate_tokens_per_second,
                               int tokens_generated);
// "42 frames · 2.1 fps · CPU p50 9.8 ms, p95 12.0 ms · UI 2.0% of a core"
std::string format_frame_summary(const FrameTimeSummary& summary);

// Enter during an input-method composition must not send. Windows reports no key that the IME
// takes (GLFW 3.3 drops VK_PROCESSKEY); X11 reports every key press, also those XIM filters,
// and only the committed text arrives as characters. So: a printable key press with no
// character after it means an input method (or a dead key) holds it, and an Enter then confirms
// that composition. The composition ends with its committed characters, Esc, or that Enter.
class ImeGuard {
 public:
  // Every key press or repeat, in order with on_char(). `printable`: a key that types text
  // (no Ctrl/Alt/Super held). Call on_enter() for Enter instead.
  void on_key_press(bool printable, bool escape = false);
  void on_char();
  // An Enter press: true if it sends, false if it confirms a composition (which it ends).
  bool on_enter();
  bool composing() const { return composing_ || awaiting_char_; }

 private:
  bool awaiting_char_ = false;  // a printable key was pressed; its character has not come
  bool composing_ = false;
};

}  // namespace magnetar::app
