// Frame pacing (when frames are due), the frame statistics of a generation, the thread CPU clock
// and the IME Enter guard — all without a window.
#include "core/frame_pacing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

namespace magnetar::app {
namespace {

constexpr double kTimeTolerance = 1e-9;

TEST(FramePacer, InputIsAnsweredAtOnceEvenWhileGenerating) {
  FramePacer pacer;
  for (int i = 0; i < 16; ++i) pacer.record(0.030);  // software OpenGL: 30 ms of CPU a frame
  FrameTriggers input;
  input.input = true;
  input.engine = true;
  EXPECT_NEAR(pacer.due(input, /*engine_busy=*/true, 10.0), 10.0 + FramePacer::kFastestSeconds, kTimeTolerance);
  FrameTriggers settling;
  settling.settling = true;
  EXPECT_NEAR(pacer.due(settling, true, 10.0), 10.0 + FramePacer::kFastestSeconds, kTimeTolerance);
  // The mouse merely moving: hover feedback at 10 fps while the engine works, at once otherwise.
  FrameTriggers pointer;
  pointer.pointer = true;
  pointer.engine = true;
  EXPECT_NEAR(pacer.due(pointer, true, 10.0), 10.0 + FramePacer::kPointerBusySeconds, kTimeTolerance);
  EXPECT_NEAR(pacer.due(pointer, false, 10.0), 10.0 + FramePacer::kFastestSeconds, kTimeTolerance);
}

TEST(FramePacer, EngineFramesKeepTheUiCpuShareWhileBusy) {
  FramePacer pacer;
  FrameTriggers engine;
  engine.engine = true;
  // No history or cheap GPU frames: as fast as the display allows.
  EXPECT_NEAR(pacer.due(engine, true, 0.0), FramePacer::kFastestSeconds, kTimeTolerance);
  for (int i = 0; i < 16; ++i) pacer.record(0.0002);
  EXPECT_NEAR(pacer.busy_interval(), FramePacer::kFastestSeconds, kTimeTolerance);
  // 4 ms frames: 4 ms / 2% = 200 ms between frames.
  for (int i = 0; i < 16; ++i) pacer.record(0.004);
  EXPECT_NEAR(pacer.busy_interval(), 0.004 / FramePacer::kBusyCpuShare, 1e-6);
  // One cheap frame among expensive ones barely changes it.
  pacer.record(0.0001);
  EXPECT_GT(pacer.busy_interval(), 0.9 * 0.004 / FramePacer::kBusyCpuShare);
  // A coarse clock (Windows: 15.6 ms ticks) reading 0 for most ~1 ms frames and one tick for
  // some: the mean still comes out near the true cost.
  for (int i = 0; i < 16; ++i) pacer.record(i % 16 == 0 ? 0.0156 : 0.0);
  EXPECT_NEAR(pacer.busy_interval(), (0.0156 / 16) / FramePacer::kBusyCpuShare, 1e-6);
  // Very expensive frames: capped, the stream still moves.
  for (int i = 0; i < 16; ++i) pacer.record(0.1);
  EXPECT_NEAR(pacer.busy_interval(), FramePacer::kSlowestBusySeconds, kTimeTolerance);
  // The same events with the engine idle (a model just loaded) are shown at once.
  EXPECT_NEAR(pacer.due(engine, false, 5.0), 5.0 + FramePacer::kFastestSeconds, kTimeTolerance);
}

TEST(FramePacer, NothingHappeningMeansRareFrames) {
  FramePacer pacer;
  EXPECT_NEAR(pacer.due(FrameTriggers{}, false, 1.0), 1.0 + FramePacer::kIdleSeconds, kTimeTolerance);
  EXPECT_NEAR(pacer.due(FrameTriggers{}, true, 1.0), 1.0 + FramePacer::kIdleSeconds, kTimeTolerance);
  // While the engine works, expensive frames slow clock-only redraws down too.
  for (int i = 0; i < 16; ++i) pacer.record(0.018);
  EXPECT_NEAR(pacer.due(FrameTriggers{}, true, 1.0), 1.0 + 0.018 / FramePacer::kBusyCpuShare, 1e-6);
  EXPECT_NEAR(pacer.due(FrameTriggers{}, false, 1.0), 1.0 + FramePacer::kIdleSeconds, kTimeTolerance);
  FrameTriggers polling;
  polling.polling = true;
  EXPECT_NEAR(pacer.due(polling, false, 1.0), 1.0 + FramePacer::kPollSeconds, kTimeTolerance);
}

TEST(FrameRecorder, SummarisesTheFramesOfOneGeneration) {
  FrameRecorder recorder;
  recorder.add(0.5, 0.5);  // not recording yet: ignored
  recorder.begin(100.0, 2.0);
  for (int i = 1; i <= 20; ++i) recorder.add(i * 0.001, i * 0.002);  // 1..20 ms CPU, 2..40 ms wall
  const FrameTimeSummary s = recorder.finish(110.0, 2.25);
  EXPECT_FALSE(recorder.active());
  EXPECT_EQ(s.frames, 20);
  EXPECT_DOUBLE_EQ(s.seconds, 10.0);
  EXPECT_NEAR(s.frames_per_second(), 2.0, 1e-12);
  EXPECT_NEAR(s.ui_cpu_share(), 0.025, 1e-12);
  EXPECT_NEAR(s.cpu_p50_ms, 10.0, 1e-4);
  EXPECT_NEAR(s.cpu_p95_ms, 19.0, 1e-4);
  EXPECT_NEAR(s.cpu_max_ms, 20.0, 1e-4);
  EXPECT_NEAR(s.wall_p95_ms, 38.0, 1e-4);
  const std::string json = frame_summary_json(s, 12.5, 300);
  EXPECT_NE(json.find("\"frames\":20"), std::string::npos) << json;
  EXPECT_NE(json.find("\"p95\":19.00"), std::string::npos) << json;
  EXPECT_NE(json.find("\"generate_tokens_per_second\":12.500"), std::string::npos) << json;
  EXPECT_EQ(json.find('\n'), std::string::npos);
  EXPECT_NE(format_frame_summary(s).find("20 frames"), std::string::npos);
  // A second generation starts afresh.
  recorder.begin(200.0, 3.0);
  EXPECT_EQ(recorder.finish(201.0, 3.0).frames, 0);
}

TEST(FrameRecorder, Percentiles) {
  EXPECT_EQ(percentile({}, 50), 0);
  EXPECT_EQ(percentile({7}, 0), 7);
  EXPECT_EQ(percentile({7}, 100), 7);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 50), 2);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 75), 3);
  EXPECT_EQ(percentile({4, 1, 3, 2}, 100), 4);
}

TEST(ThreadCpuClock, CountsWorkNotSleep) {
  const double before = thread_cpu_seconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(60));
  const double after_sleep = thread_cpu_seconds();
  EXPECT_LT(after_sleep - before, 0.03);  // sleeping costs (almost) no CPU
  // Spinning does. On a loaded machine 40 ms of wall time may hold little CPU time, so spin
  // until the clock shows 20 ms of work, within a bound a stopped clock would run into.
  volatile double sink = 0;
  const auto start = std::chrono::steady_clock::now();
  while (thread_cpu_seconds() - after_sleep < 0.02 &&
         std::chrono::steady_clock::now() - start < std::chrono::seconds(10))
    for (int i = 0; i < 100000; ++i) sink = sink + 1.0;
  EXPECT_GE(thread_cpu_seconds() - after_sleep, 0.02);
}

TEST(ImeGuard, PlainTypingSends) {
  ImeGuard guard;
  for (int i = 0; i < 3; ++i) {
    guard.on_key_press(true);
    guard.on_char();
  }
  EXPECT_FALSE(guard.composing());
  EXPECT_TRUE(guard.on_enter());
  // Non-printable keys (arrows, Backspace, Ctrl+V) never start a composition.
  guard.on_key_press(false);
  guard.on_key_press(false);
  EXPECT_TRUE(guard.on_enter());
}

TEST(ImeGuard, EnterConfirmingACompositionDoesNotSend) {
  // X11 + XIM: "nihon", Space to convert, Enter to commit; the text arrives after the Enter.
  ImeGuard guard;
  for (int i = 0; i < 5; ++i) guard.on_key_press(true);
  guard.on_key_press(true);  // Space
  EXPECT_TRUE(guard.composing());
  EXPECT_FALSE(guard.on_enter());
  guard.on_char();  // 日
  guard.on_char();  // 本
  EXPECT_TRUE(guard.on_enter());  // the next Enter sends
  // A single key held by the input method: its Enter confirms it too.
  guard.on_key_press(true);
  EXPECT_FALSE(guard.on_enter());
  EXPECT_TRUE(guard.on_enter());
}

TEST(ImeGuard, EscCancelsAComposition) {
  ImeGuard guard;
  guard.on_key_press(true);
  guard.on_key_press(true);
  guard.on_key_press(false, /*escape=*/true);
  EXPECT_FALSE(guard.composing());
  EXPECT_TRUE(guard.on_enter());
}

TEST(ImeGuard, DeadKeyComposesThenTypes) {
  ImeGuard guard;
  guard.on_key_press(true);  // dead acute: no character
  guard.on_key_press(true);  // e
  EXPECT_TRUE(guard.composing());
  guard.on_char();  // é
  EXPECT_TRUE(guard.on_enter());
}

}  // namespace
}  // namespace magnetar::app
