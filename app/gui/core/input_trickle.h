// Input events handed to Dear ImGui a frame at a time, so that none is lost between slow frames.
//
// ImGui 1.86 reads keys and mouse buttons as states sampled once per frame. When a frame is slow
// (software OpenGL on a busy machine), a whole key tap — Ctrl down, N down, N up, Ctrl up — or a
// click, or "typed text, Shift+Enter, more text" can arrive between two frames: ImGui then sees
// nothing, or sees the events out of order. InputTrickle queues what GLFW delivers and gives each
// frame a prefix of the queue that ImGui can read as states, with the rules of ImGui 1.87's input
// queue ("trickle fast inputs"), plus one of our own, so that a drag is seen at its last position
// with the button still down:
//   - a key or mouse button changes at most once per frame;
//   - no key changes after a key press in the same frame (ours): a chord's key is seen with its
//     modifiers down however the events fall between frames — Ctrl down | N down | N, Ctrl up;
//   - characters never share a frame with a key or button change that came before them, and a
//     key change never follows characters in the same frame;
//   - a move never follows a button change, a key change, characters or scrolling in the frame;
//   - a button change never follows a move in the same frame (ours: hover, then press);
//   - scrolling never follows a move or a button change.
// Key repeats (GLFW_REPEAT) change no state and never hold the queue. Plain logic: the frame loop
// (gui_app.cpp) feeds GLFW's callbacks in and replays each frame's events into ImGui's backend.
#pragma once
#include <bitset>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <vector>

namespace magnetar::app {

struct InputEvent {
  enum class Kind : uint8_t { Key, Char, MouseButton, MouseMove, Scroll };
  Kind kind = Kind::Key;
  int code = 0;        // Key: GLFW key (may be GLFW_KEY_UNKNOWN = -1); MouseButton: button; Char: code point
  int action = 0;      // Key, MouseButton: GLFW_RELEASE 0, GLFW_PRESS 1, GLFW_REPEAT 2
  int scancode = 0;    // Key: passed on to ImGui's backend
  int mods = 0;        // Key, MouseButton: GLFW modifier bits
  double x = 0, y = 0;  // MouseMove: cursor position; Scroll: offsets
  // Known when GLFW delivered the event, used by the frame that applies it: an Enter that confirmed
  // an input-method composition (ImeGuard), a press that completed a double-click.
  bool flag = false;
};

class InputTrickle {
 public:
  static constexpr int kRelease = 0, kPress = 1, kRepeat = 2;  // GLFW's action values
  static constexpr int kKeys = 512;                             // ImGui 1.86's io.KeysDown size
  static constexpr int kButtons = 8;                            // GLFW_MOUSE_BUTTON_LAST + 1

  void push(const InputEvent& event) { queue_.push_back(event); }
  bool pending() const { return !queue_.empty(); }

  // Moves the events of the next frame from the queue to `out` (cleared first): the longest
  // prefix the rules above allow, and at least one event when any is queued.
  void take_frame(std::vector<InputEvent>* out);

  // The state once the events taken so far are applied (what ImGui should see this frame).
  bool button_down(int button) const { return button >= 0 && button < kButtons && buttons_down_[button]; }
  bool has_position() const { return has_position_; }
  double mouse_x() const { return mouse_x_; }
  double mouse_y() const { return mouse_y_; }

 private:
  bool key_down(int key) const { return key >= 0 && key < kKeys && keys_down_[key]; }

  std::deque<InputEvent> queue_;
  std::bitset<kKeys> keys_down_;
  std::bitset<kButtons> buttons_down_;
  bool has_position_ = false;
  double mouse_x_ = 0, mouse_y_ = 0;
};

}  // namespace magnetar::app
