// InputTrickle: input that arrives between two slow frames is handed to ImGui over as many frames
// as it needs to be read as states, in order — a key tap is seen down, text and keys keep their
// order, a drag is seen at its last position with the button still down.
#include <gtest/gtest.h>

#include <string>

#include "core/input_trickle.h"

namespace magnetar::app {
namespace {

constexpr int kCtrl = 341, kShift = 340, kN = 78, kEnter = 257;  // GLFW key codes
constexpr int kRelease = InputTrickle::kRelease, kPress = InputTrickle::kPress, kRepeat = InputTrickle::kRepeat;

InputEvent make(InputEvent::Kind kind, int code = 0, int action = 0, double x = 0, double y = 0) {
  InputEvent e;
  e.kind = kind, e.code = code, e.action = action, e.x = x, e.y = y;
  return e;
}
InputEvent key(int code, int action) { return make(InputEvent::Kind::Key, code, action); }
InputEvent chr(char c) { return make(InputEvent::Kind::Char, c); }
InputEvent button(int action) { return make(InputEvent::Kind::MouseButton, 0, action); }
InputEvent move(double x, double y) { return make(InputEvent::Kind::MouseMove, 0, 0, x, y); }
InputEvent scroll() { return make(InputEvent::Kind::Scroll, 0, 0, 0, -1); }

// One string per frame: "K78+" key 78 pressed, "K78-" released, "K78r" repeat, "c" a character,
// "B+"/"B-" left button, "M" a move, "S" scrolling.
std::vector<std::string> frames(InputTrickle& t) {
  std::vector<std::string> result;
  std::vector<InputEvent> frame;
  while (t.pending()) {
    t.take_frame(&frame);
    std::string s;
    for (const InputEvent& e : frame) {
      switch (e.kind) {
        case InputEvent::Kind::Key:
          s += "K" + std::to_string(e.code) + (e.action == kPress ? "+" : e.action == kRelease ? "-" : "r") + " ";
          break;
        case InputEvent::Kind::Char: s += std::string(1, char(e.code)) + " "; break;
        case InputEvent::Kind::MouseButton: s += e.action == kPress ? "B+ " : "B- "; break;
        case InputEvent::Kind::MouseMove: s += "M "; break;
        case InputEvent::Kind::Scroll: s += "S "; break;
      }
    }
    if (!s.empty()) s.pop_back();
    result.push_back(s);
  }
  return result;
}

TEST(InputTrickle, KeyTapBetweenTwoFramesIsSeenDownForOneFrame) {
  InputTrickle t;
  for (const InputEvent& e : {key(kCtrl, kPress), key(kN, kPress), key(kN, kRelease), key(kCtrl, kRelease)}) t.push(e);
  EXPECT_EQ(frames(t), (std::vector<std::string>{"K341+", "K78+", "K78- K341-"}));
}

// xdotool releases Ctrl before N. However the events split between two frames' deliveries, the
// frame that sees N pressed sees Ctrl down.
TEST(InputTrickle, ChordKeyIsSeenWithItsModifierWhereverTheEventsSplit) {
  const std::vector<InputEvent> chord = {key(kCtrl, kPress), key(kN, kPress), key(kCtrl, kRelease), key(kN, kRelease)};
  for (size_t split = 0; split <= chord.size(); ++split) {
    InputTrickle t;
    std::vector<InputEvent> frame;
    bool ctrl = false, seen = false;
    auto apply = [&](const std::vector<InputEvent>& events) {
      for (const InputEvent& e : events)
        if (e.code == kCtrl) ctrl = e.action != kRelease;
      for (const InputEvent& e : events)  // ImGui reads states after the frame's events
        if (e.code == kN && e.action == kPress) seen = seen || ctrl;
    };
    for (size_t i = 0; i < split; ++i) t.push(chord[i]);
    while (t.pending()) t.take_frame(&frame), apply(frame);
    for (size_t i = split; i < chord.size(); ++i) t.push(chord[i]);
    while (t.pending()) t.take_frame(&frame), apply(frame);
    EXPECT_TRUE(seen) << "split after " << split << " events";
  }
}

TEST(InputTrickle, TextAndKeysKeepTheirOrder) {
  // "ab", Shift+Enter, "cd", Enter — all between two frames.
  InputTrickle t;
  for (const InputEvent& e : {chr('a'), chr('b'), key(kShift, kPress), key(kEnter, kPress), key(kEnter, kRelease),
                              key(kShift, kRelease), chr('c'), chr('d'), key(kEnter, kPress), key(kEnter, kRelease)})
    t.push(e);
  EXPECT_EQ(frames(t), (std::vector<std::string>{"a b", "K340+", "K257+", "K257- K340-", "c d", "K257+", "K257-"}));
}

TEST(InputTrickle, RepeatsChangeNothingAndNeverHoldTheQueue) {
  InputTrickle t;
  for (const InputEvent& e : {key(kEnter, kPress), key(kEnter, kRepeat), key(kEnter, kRepeat), key(kEnter, kRelease)})
    t.push(e);
  EXPECT_EQ(frames(t), (std::vector<std::string>{"K257+ K257r K257r", "K257-"}));
}

TEST(InputTrickle, ClickAndDoubleClickAreSeenPressedAndReleased) {
  InputTrickle t;
  for (const InputEvent& e : {button(kPress), button(kRelease), button(kPress), button(kRelease)}) t.push(e);
  EXPECT_EQ(frames(t), (std::vector<std::string>{"B+", "B-", "B+", "B-"}));
  EXPECT_FALSE(t.button_down(0));
}

TEST(InputTrickle, DragIsSeenAtItsLastPositionWithTheButtonDown) {
  InputTrickle t;
  for (const InputEvent& e : {move(10, 10), button(kPress), move(50, 20), move(90, 30), button(kRelease)}) t.push(e);
  std::vector<InputEvent> frame;
  t.take_frame(&frame);
  ASSERT_EQ(frame.size(), 1u);  // the move: hover before the press
  EXPECT_FALSE(t.button_down(0));
  t.take_frame(&frame);
  ASSERT_EQ(frame.size(), 1u);  // the press
  EXPECT_TRUE(t.button_down(0));
  EXPECT_EQ(t.mouse_x(), 10);
  t.take_frame(&frame);
  ASSERT_EQ(frame.size(), 2u);  // both moves, the button still down
  EXPECT_TRUE(t.button_down(0));
  EXPECT_EQ(t.mouse_x(), 90);
  EXPECT_EQ(t.mouse_y(), 30);
  t.take_frame(&frame);
  ASSERT_EQ(frame.size(), 1u);  // the release
  EXPECT_FALSE(t.button_down(0));
  EXPECT_FALSE(t.pending());
}

TEST(InputTrickle, ScrollingWaitsForMovesAndTextForScrolling) {
  InputTrickle t;
  for (const InputEvent& e : {move(1, 1), scroll(), scroll(), chr('x')}) t.push(e);
  EXPECT_EQ(frames(t), (std::vector<std::string>{"M", "S S", "x"}));
}

TEST(InputTrickle, EventsOutsideTheTablesPassWithoutChangingState) {
  InputTrickle t;
  InputEvent unknown = key(-1, kPress);  // GLFW_KEY_UNKNOWN
  InputEvent high_button = button(kPress);
  high_button.code = 99;
  for (const InputEvent& e : {unknown, unknown, high_button, key(kN, kPress)}) t.push(e);
  EXPECT_EQ(frames(t), (std::vector<std::string>{"K-1+ K-1+ B+ K78+"}));
  EXPECT_FALSE(t.button_down(99));
}

TEST(InputTrickle, EveryFrameTakesAtLeastOneEvent) {
  InputTrickle t;
  for (int i = 0; i < 6; ++i) t.push(key(kN, i % 2 ? kRelease : kPress));
  EXPECT_EQ(frames(t).size(), 6u);
  std::vector<InputEvent> frame{key(kN, kPress)};
  t.take_frame(&frame);  // nothing queued: an empty frame
  EXPECT_TRUE(frame.empty());
}

}  // namespace
}  // namespace magnetar::app
